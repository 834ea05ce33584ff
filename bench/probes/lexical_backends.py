"""Why the lexical index is tantivy: FTS5 and tantivy on the same tokens.

    python -m bench.probes.lexical_backends CORPUS_DIR [--queries FILE.json ...]

Chunks every text file of CORPUS_DIR with repolens's line windows, tokenizes
them with repolens's tokenizer, and builds (a) a SQLite FTS5 table and (b) a
tantivy index over the same pre-tokenized fields (path, body). Then it runs
the same OR-of-terms BM25 queries (top 50) against both: the development-set
questions by default, which are long and have many terms.
Prints build time, size on disk and query latency p50/p95 for each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import tantivy

from bench.common.paths import SHARED
from bench.common.stats import pct
from repolens.chunking.text import WindowChunker
from repolens.search.query import parse_query
from repolens.tokens import tokenize, tokenize_path

EXTS = {".py", ".js", ".ts", ".go", ".rs", ".java", ".html", ".txt", ".css", ".md", ".rst"}


def load_docs(root: Path) -> list[tuple[str, str]]:
    chunker = WindowChunker()
    docs = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = Path(dirpath, name)
            if p.suffix not in EXTS:
                continue
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            rel = p.relative_to(root).as_posix()
            for c in chunker.chunk(rel, text, "text").chunks:
                docs.append((" ".join(tokenize_path(rel)), " ".join(tokenize(c.text))))
    return docs


def bench_fts(docs, queries, work: Path) -> dict:
    db_path = work / "fts.db"
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE VIRTUAL TABLE f USING fts5(path, body, content='', "
        "tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\")"
    )
    t = time.perf_counter()
    db.executemany(
        "INSERT INTO f(rowid, path, body) VALUES(?,?,?)", ((i, p, b) for i, (p, b) in enumerate(docs))
    )
    db.commit()
    db.execute("INSERT INTO f(f) VALUES('optimize')")
    db.commit()
    build = time.perf_counter() - t
    lat = []
    for terms in queries:
        expr = " OR ".join(f'"{tok}"' for tok, _ in terms)
        t = time.perf_counter()
        db.execute(
            "SELECT rowid, bm25(f, 1.0, 1.0) AS s FROM f WHERE f MATCH ? ORDER BY s LIMIT 50", (expr,)
        ).fetchall()
        lat.append(time.perf_counter() - t)
    db.close()
    size = sum(f.stat().st_size for f in work.glob("fts.db*"))
    return {"build_s": build, "size_mb": size / 1e6, "p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95)}


def bench_tantivy(docs, queries, work: Path) -> dict:
    d = work / "tantivy"
    d.mkdir()
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("id", indexed=True, fast=True)
    sb.add_text_field("path", tokenizer_name="ws", index_option="freq")
    sb.add_text_field("body", tokenizer_name="ws", index_option="freq")
    schema = sb.build()
    index = tantivy.Index(schema, path=str(d))
    index.register_tokenizer("ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
    t = time.perf_counter()
    w = index.writer(heap_size=128_000_000, num_threads=2)
    for i, (p, b) in enumerate(docs):
        w.add_document(tantivy.Document(id=i, path=p, body=b))
    w.commit()
    w.wait_merging_threads()
    build = time.perf_counter() - t
    index.reload()
    searcher = index.searcher()
    lat = []
    for terms in queries:
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, field, tok, index_option="freq"))
            for tok, _ in terms
            for field in ("path", "body")
        ]
        t = time.perf_counter()
        hits = searcher.search(tantivy.Query.boolean_query(clauses), 50, count=False).hits
        searcher.fast_field_values("id", [a for _, a in hits])
        lat.append(time.perf_counter() - t)
    size = sum(f.stat().st_size for f in d.iterdir())
    return {"build_s": build, "size_mb": size / 1e6, "p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument(
        "--queries", nargs="*", type=Path, default=[SHARED / "swebench-dev.json", SHARED / "commits-dev.json"]
    )
    args = ap.parse_args(argv)
    print("$ python " + " ".join(sys.argv))
    docs = load_docs(args.corpus)
    queries = []
    for f in args.queries:
        for q in json.loads(f.read_text()):
            terms = parse_query(q["query"]).weighted()
            if terms:
                queries.append(terms)
    print(
        f"corpus {args.corpus}: {len(docs)} chunks; {len(queries)} queries, "
        f"median {statistics.median(len(q) for q in queries)} terms"
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = {"sqlite fts5": bench_fts(docs, queries, work), "tantivy": bench_tantivy(docs, queries, work)}
    print("| backend | build s | size MB | query p50 ms | query p95 ms |\n|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['build_s']:.2f} | {r['size_mb']:.1f} | {r['p50_ms']:.2f} | {r['p95_ms']:.2f} |")
    f, t = rows["sqlite fts5"], rows["tantivy"]
    print(
        f"tantivy vs fts5: query p50 {f['p50_ms'] / t['p50_ms']:.0f}x faster, "
        f"size {t['size_mb'] / f['size_mb']:.2f}x"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
