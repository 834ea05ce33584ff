"""halfvec against vector for the dense leg on pgvector: size, latency, recall.

    python -m bench.probes.pg_halfvec [--vectors EMBED_CACHE.db] [--synthetic N] [--queries N]

The PostgreSQL store keeps vectors as ``halfvec`` (float16, 2 bytes a
dimension, what the local store and the embedder's output already are);
``vector`` is float32. For each vector set, this loads the same vectors
into a ``halfvec(dim)`` table and a ``vector(dim)`` table of a throw-away
PostgreSQL 18 + pgvector (``tests/pgserver.py``, loopback) and measures:

* table size (with TOAST and the primary key);
* exact top 10 (``ORDER BY v <=> q LIMIT 10``, a scan) p50/p95;
* the HNSW index the store builds (``m`` 16, ``ef_construction`` 128,
  cosine): build time, size, p50/p95 at ``ef_search`` 256;
* recall@10 of each against the exact float32 top 10 computed in numpy on
  the same (float16-born) vectors.

Vector sets: real MiniLM vectors from an embedding cache (``--vectors``,
the devset's ``embed_cache``: 14k unique chunk texts) with the development
questions embedded by the bundled model as queries; and ``--synthetic N``
clustered unit vectors at dimension 384 (queries: perturbed members), for
a size where the HNSW index matters.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from bench.common.paths import SHARED, data_default
from bench.common.stats import pct

EMBED_CACHE = data_default("embed-cache", "vectors.db")
K = 10
M, EF_CONSTRUCTION, EF_SEARCH = 16, 128, 256  # repolens.store.postgres.dense


def real_set(path: Path, limit: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The cache's float16 vectors and the development questions embedded by the bundled model."""
    from repolens.models import make_embedder

    db = sqlite3.connect(path)
    blobs = [r[0] for r in db.execute("SELECT vec FROM cache ORDER BY rowid")]
    db.close()
    x = np.frombuffer(b"".join(blobs), dtype="<f2").reshape(len(blobs), -1).astype(np.float32)
    texts = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        texts += [q["query"] for q in json.loads((SHARED / name).read_text())]
    embedder = make_embedder({})
    qs = np.stack([embedder.embed_query(t[:1200]) for t in texts[:limit]]).astype(np.float32)
    return x, qs, f"real: {len(x):,} MiniLM vectors ({path.name}), {len(qs)} question embeddings"


def synthetic_set(n: int, queries: int, dim: int = 384) -> tuple[np.ndarray, np.ndarray, str]:
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((max(n // 200, 10), dim)).astype(np.float32)
    x = centers[rng.integers(0, len(centers), n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)
    qs = x[rng.integers(0, n, queries)] + 0.3 * rng.standard_normal((queries, dim)).astype(np.float32)
    return x, qs, f"synthetic: {n:,} clustered unit vectors, {queries} perturbed members as queries"


def exact_truth(x: np.ndarray, qs: np.ndarray) -> list[set[int]]:
    xn = x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-12)
    truth = []
    for q in qs:
        sims = xn @ (q / np.linalg.norm(q))
        top = np.argpartition(-sims, K)[:K]
        truth.append(set(top.tolist()))
    return truth


def text(v: np.ndarray) -> str:
    return "[" + ",".join(f"{float(a):.6g}" for a in v) + "]"


def timed_topk(
    conn, table: str, kind: str, qs: np.ndarray, truth: list[set[int]]
) -> tuple[list[float], float]:
    """Latencies (ms) and mean recall@K of ``SELECT id ... ORDER BY v <=> q LIMIT K``."""
    dim = qs.shape[1]
    sql = f"SELECT id FROM {table} ORDER BY v <=> %s::{kind}({dim}) LIMIT {K}"
    conn.execute(sql, (text(qs[0]),)).fetchall()  # warm: table and index in shared buffers
    times, recall = [], []
    for q, want in zip(qs, truth, strict=True):
        started = time.perf_counter()
        found = conn.execute(sql, (text(q),)).fetchall()
        times.append((time.perf_counter() - started) * 1000)
        recall.append(len({r[0] for r in found} & want) / K)
    return times, float(np.mean(recall))


def measure(conn, x: np.ndarray, qs: np.ndarray) -> list[dict]:
    truth = exact_truth(x, qs)
    dim = x.shape[1]
    out = []
    for kind in ("halfvec", "vector"):
        table = f"bench_{kind}"
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, v {kind}({dim}) NOT NULL)")
        with conn.cursor().copy(f"COPY {table} (id, v) FROM STDIN") as copy:
            for i, v in enumerate(x):
                copy.write_row((i, text(v)))
        conn.execute(f"VACUUM ANALYZE {table}")
        row: dict = {"kind": kind, "table_mb": conn.execute(
            "SELECT pg_total_relation_size(%s)", (table,)).fetchone()[0] / 1e6}  # fmt: skip
        exact_ms, row["exact_recall"] = timed_topk(conn, table, kind, qs, truth)
        row["exact_p50"], row["exact_p95"] = pct(exact_ms, 0.5), pct(exact_ms, 0.95)
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '512MB'")
        conn.execute(
            f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (v {kind}_cosine_ops)"
            f" WITH (m = {M}, ef_construction = {EF_CONSTRUCTION})"
        )
        row["build_s"] = time.perf_counter() - started
        row["index_mb"] = conn.execute("SELECT pg_relation_size(%s)", (f"{table}_hnsw",)).fetchone()[0] / 1e6
        conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
        ann_ms, row["ann_recall"] = timed_topk(conn, table, kind, qs, truth)
        row["ann_p50"], row["ann_p95"] = pct(ann_ms, 0.5), pct(ann_ms, 0.95)
        conn.execute("RESET hnsw.ef_search")
        conn.execute(f"DROP TABLE {table}")
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--vectors", type=Path, default=EMBED_CACHE, help="an embedding cache (vectors.db)")
    ap.add_argument("--synthetic", type=int, default=100_000, help="size of the synthetic set (0: none)")
    ap.add_argument("--queries", type=int, default=120)
    args = ap.parse_args(argv)
    from tests.pgserver import PgHarness

    sets = []
    if args.vectors and args.vectors.exists():
        sets.append(real_set(args.vectors, args.queries))
    if args.synthetic:
        sets.append(synthetic_set(args.synthetic, args.queries))
    harness = PgHarness()
    results = []
    try:
        primary = harness.primary({"shared_buffers": "512MB", "work_mem": "64MB", "jit": "off"})
        db = harness.create_database(primary)
        with db.connect() as conn:
            for x, qs, label in sets:
                results.append((label, measure(conn, x, qs)))
    finally:
        harness.close()
    print(f"\n`python -m bench.probes.pg_halfvec {' '.join(sys.argv[1:])}`\n")
    print(
        "| vectors | type | table MB | exact p50 / p95 ms | exact recall@10 | HNSW build s | HNSW MB"
        " | HNSW p50 / p95 ms | HNSW recall@10 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, rows in results:
        for r in rows:
            print(
                f"| {label} | {r['kind']} | {r['table_mb']:.1f} | {r['exact_p50']:.1f} / {r['exact_p95']:.1f}"
                f" | {r['exact_recall']:.3f} | {r['build_s']:.1f} | {r['index_mb']:.1f}"
                f" | {r['ann_p50']:.2f} / {r['ann_p95']:.2f} | {r['ann_recall']:.3f} |"
            )


if __name__ == "__main__":
    main()
