"""The dense leg's costs: embedding throughput, time to a fully embedded index,
and warm hybrid query latency at scale.

    python -m bench.probes.dense_perf --repo MID_SIZED_REPO --large LARGE_CORPUS [--queries N]

1. Throughput of the bundled model (all-MiniLM-L6-v2 int8 on onnxruntime)
   on the texts repolens embeds (style header+idents) of MID_SIZED_REPO.
2. Time to a fully embedded index of MID_SIZED_REPO: the lexical build,
   then the vectors, from nothing.
3. Warm query latency on LARGE_CORPUS (aim: >= 100k chunks), lexical only
   against hybrid (BM25 + dense, boost fusion) in the same run. Filling 100k
   vectors with the real model takes over half an hour on 2 cores, so the
   vectors there come from the deterministic fake embedder at the real
   model's dimension (384): the dense leg's search cost depends on the
   matrix size, not on the numbers in it. The real model's query embedding
   time is measured separately and added to the hybrid figures. Hybrid
   with rrf fusion is timed too (the same top-k search as boost).
4. Exact search against the HNSW graph (repolens.store.local.ann's settings) at the
   sizes of --ann-sizes: latency, memory, build time and recall@10, on real
   vectors from an embedding cache (--real-vectors) or synthetic ones.

Prints markdown tables and the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common.paths import SHARED
from bench.common.stats import pct


def questions(limit: int) -> list[str]:
    out: list[str] = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        path = SHARED / name
        if path.exists():
            out += [q["title"] for q in json.loads(path.read_text())]
    return out[:limit] or ["where is the session expired", "parse url scheme host"]


def exact_vs_ann(sizes: str, real: Path | None, query_vectors) -> list[tuple[str, str]]:
    """Exact search against repolens's HNSW graph settings (usearch, if
    installed): the evidence for ``ann_min_vectors``. Vectors are real
    embeddings from an embedding cache (``--real-vectors``) with real query
    embeddings, or else synthetic clustered unit vectors."""

    from repolens.store.local import ann

    rng = np.random.default_rng(0)
    rows = []
    pool = None
    if real is not None:
        import sqlite3

        db = sqlite3.connect(real)
        blobs = [r[0] for r in db.execute("SELECT vec FROM cache")]
        pool = np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)
        pool /= np.linalg.norm(pool, axis=1, keepdims=True) + 1e-9
    for n in (int(s) for s in sizes.split(",") if s):
        if pool is not None:
            if n > len(pool):
                continue
            x, qs, kind = pool[:n], query_vectors, "real MiniLM vectors, real queries"
        else:
            centers = rng.standard_normal((500, 384)).astype(np.float32)
            x = centers[rng.integers(0, 500, n)] + 0.6 * rng.standard_normal((n, 384)).astype(np.float32)
            x /= np.linalg.norm(x, axis=1, keepdims=True)
            qs = x[rng.integers(0, n, 50)] + 0.3 * rng.standard_normal((50, 384)).astype(np.float32)
            qs /= np.linalg.norm(qs, axis=1, keepdims=True)
            kind = "synthetic clustered vectors"
        exact, truth = [], []
        for q in qs:
            t = time.perf_counter()
            sims = x @ q
            top = np.argpartition(-sims, 50)[:50]
            exact.append((time.perf_counter() - t) * 1000)
            truth.append(set(top[np.argsort(-sims[top])][:10].tolist()))
        line = f"exact {pct(exact, 0.5):.1f} ms, {n * 384 * 4 / 1e6:.0f} MB float32 in memory"
        if ann.available():
            index = ann.new_graph(x.shape[1])
            t = time.perf_counter()
            index.add(np.arange(n), x)
            build_s = time.perf_counter() - t
            found_ms, recall = [], []
            for q, want in zip(qs, truth, strict=True):
                t = time.perf_counter()
                found = index.search(q, 50)
                found_ms.append((time.perf_counter() - t) * 1000)
                recall.append(len(set(found.keys[:10].tolist()) & want) / 10)
            line += (
                f"; HNSW graph: build {build_s:.0f} s, query {pct(found_ms, 0.5):.2f} ms, "
                f"recall@10 {statistics.mean(recall):.2f}"
            )
        rows.append((f"top-50 of {n:,} vectors ({kind}, p50 of {len(qs)})", line))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="a mid-sized repository (about 5k chunks)")
    ap.add_argument("--large", type=Path, required=True, help="a large corpus (about 100k chunks)")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--ann-sizes", default="100000,400000", help="sizes for the exact-vs-graph probe")
    ap.add_argument(
        "--real-vectors", type=Path, help="an embedding cache (vectors.db) to probe the graph on real vectors"
    )
    args = ap.parse_args(argv)
    print("$ python " + " ".join(sys.argv))

    from repolens import service
    from repolens.index.build import build_index
    from repolens.models import make_embedder
    from repolens.models.document import embedding_text
    from repolens.store import open_store
    from repolens.store.handles import readers

    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="repolens-dense-") as tmp:
        # 2. from nothing to a fully embedded index
        os.environ["REPOLENS_VECTORS"] = "1"
        idx = Path(tmp) / "mid"
        t = time.perf_counter()
        report = build_index(args.repo, index_dir=idx)
        total_s = time.perf_counter() - t
        vec = report.vectors
        assert vec is not None and vec.done == vec.total
        lexical_s = total_s - vec.seconds
        rows += [
            ("mid-sized repo", f"{args.repo.name}: {report.files} files, {report.chunks} chunks"),
            ("lexical index (searchable)", f"{lexical_s:.1f} s"),
            ("vectors, all chunks", f"{vec.seconds:.1f} s ({vec.done / vec.seconds:.1f} chunks/s)"),
            ("fully embedded index", f"{total_s:.1f} s"),
        ]

        # 1. throughput on the texts repolens embeds
        embedder = make_embedder({})
        reader = open_store(args.repo, idx).open_reader()
        # the first 512 chunks: a fresh build numbers them from 1
        texts = [embedding_text(s.chunk) for s in reader.chunks(range(1, 513)).values()]
        reader.close()
        t = time.perf_counter()
        embedder.embed_documents(texts)
        rate = len(texts) / (time.perf_counter() - t)
        q = []
        for text in questions(50):
            t = time.perf_counter()
            embedder.embed_query(text)
            q.append((time.perf_counter() - t) * 1000)
        query_embed_ms = statistics.median(q)
        rows += [
            ("embedding throughput (512 chunk texts, header+idents)", f"{rate:.1f} texts/s"),
            ("query embedding, median of 50 titles", f"{query_embed_ms:.1f} ms"),
        ]

        # 3. latency at scale: lexical vs hybrid in one run
        os.environ["REPOLENS_EMBED_PROVIDER"] = "fake"
        os.environ["REPOLENS_EMBED_DIM"] = "384"
        big = Path(tmp) / "large"
        t = time.perf_counter()
        large = build_index(args.large, index_dir=big)
        large_s = time.perf_counter() - t
        qs = questions(args.queries)
        results = {}
        for mode in ("lexical", "hybrid", "hybrid-rrf"):
            os.environ["REPOLENS_DENSE"] = "0" if mode == "lexical" else "1"
            os.environ["REPOLENS_FUSION"] = "rrf" if mode == "hybrid-rrf" else "boost"
            readers.clear()
            service.search_code(qs[0], args.large, index_dir=big)  # warm: index and matrix in memory
            lat = []
            for text in qs:
                t = time.perf_counter()
                service.search_code(text, args.large, index_dir=big)
                lat.append((time.perf_counter() - t) * 1000)
            results[mode] = lat
        lex, hyb, rrf = results["lexical"], results["hybrid"], results["hybrid-rrf"]
        rows += [
            (
                "large corpus",
                f"{args.large}: {large.files} files, {large.chunks:,} chunks (built in {large_s:.0f} s)",
            ),
            ("warm query p50 / p95, lexical", f"{pct(lex, 0.5):.1f} / {pct(lex, 0.95):.1f} ms"),
            (
                "warm query p50 / p95, hybrid (+ real query embedding)",
                f"{pct(hyb, 0.5) + query_embed_ms:.1f} / {pct(hyb, 0.95) + query_embed_ms:.1f} ms",
            ),
            ("hybrid p50 / lexical p50", f"{(pct(hyb, 0.5) + query_embed_ms) / pct(lex, 0.5):.2f}x"),
            (
                "warm query p50 / p95, hybrid rrf (exact search of every vector)",
                f"{pct(rrf, 0.5) + query_embed_ms:.1f} / {pct(rrf, 0.95) + query_embed_ms:.1f} ms",
            ),
        ]
        readers.clear()
        query_vectors = np.stack([embedder.embed_query(text) for text in questions(100)]).astype(np.float32)
        rows += exact_vs_ann(args.ann_sizes, args.real_vectors, query_vectors)

    print()
    print("| measure | value |")
    print("|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
