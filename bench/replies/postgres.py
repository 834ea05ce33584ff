"""Parity of the PostgreSQL store with the local store on the development set.

    REPOLENS_BENCH_DATA=<bench data> \\
        python -m bench.replies postgres [--limit N] [--only REGEX] [--out FILE.json]

For each of the 120 development questions: the local index is the shared
cache's fresh build for the default settings (built by ``bench.devset``
when missing); the PostgreSQL index of the same checkout is written through
``IndexWriter`` from the same chunks and symbols (the chunker is the
indexer's; what differs is the store), every checkout as its own repository
in one database of a throw-away PostgreSQL 18 (``tests/pgserver.py``). Both
answer the question with ``search_code`` (default settings); the script
prints how many questions get identical top-5 (path, start, end) and the
file Acc@5 of each store (``bench.common.metrics``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from bench.common.devsets import (
    DATA_FILES,
    add_checkout_options,
    checked_folders,
    checkout_name,
    ensure_index,
    identity_key,
    index_identity,
    repolens_answer,
)
from bench.common.metrics import score
from repolens.chunking import Symbol
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.base import Store
from repolens.store.document import document_fields
from repolens.store.handles import readers


def copy_index(local: Store, pg: Store) -> None:
    """Write ``local``'s published index into ``pg`` as one new generation, file by file in cid order."""
    reader = local.open_reader()
    try:
        with pg.write_lock():
            gen = pg.new_generation()
            writer = pg.open_writer(gen, create=True)
            try:
                writer.write_meta(reader.meta())
                records = reader.files()
                by_first = []
                for path, rec in records.items():
                    stored = reader.chunks_of_file(path)
                    by_first.append((min((s.cid for s in stored), default=0), rec, stored))
                for n, (_, rec, stored) in enumerate(sorted(by_first, key=lambda x: x[0])):
                    if n % 200 == 0:
                        if writer.in_batch:
                            writer.commit()
                        writer.begin()
                    chunks = [s.chunk for s in sorted(stored, key=lambda s: s.cid)]
                    symbols = [Symbol(*row[:9]) for row in reader.symbols_of_file(rec.path)]
                    writer.add_file(
                        path=rec.path, hash=rec.hash, size=rec.size, mtime_ns=rec.mtime_ns,
                        language=rec.language, lines=rec.lines, flags=rec.flags, chunks=chunks,
                        symbols=symbols, fields=[document_fields(c) for c in chunks],
                    )  # fmt: skip
                if writer.in_batch:
                    writer.commit()
            finally:
                writer.close()
            pg.publish(gen)
    finally:
        reader.close()


def top5(answer) -> list[tuple[str, tuple]]:
    return [(h.path, h.ranges) for h in answer.hits if not h.pointer][:5]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_checkout_options(ap, "checkouts")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--only")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    checked_folders(args)
    checkouts, cache = args.checkouts, args.index_cache
    queries = [q for name in DATA_FILES for q in json.loads((args.data / name).read_text())]
    if args.only:
        queries = [q for q in queries if re.search(args.only, q["id"])]
    queries = queries[: args.limit] if args.limit else queries
    from repolens.store.postgres.connect import close_pools
    from tests.pgserver import PgHarness

    harness = PgHarness()
    rows = []
    started = time.perf_counter()
    try:
        db = harness.create_database(harness.primary({"shared_buffers": "256MB", "jit": "off"}))
        for i, q in enumerate(queries):
            root = checkouts / checkout_name(q)
            identity = index_identity(load_settings(root))
            index_dir = cache / checkout_name(q) / identity_key(identity)
            ensure_index(root, index_dir, identity, reindex=False)
            pg = open_store(root, url=db.url)
            copy_s = 0.0
            if pg.current() is None:
                copied = time.perf_counter()
                copy_index(open_store(root, index_dir), pg)
                copy_s = time.perf_counter() - copied
            local_answer = repolens_answer(q["query"], root, index_dir, None)
            os.environ["REPOLENS_STORE"] = db.url
            try:
                pg_answer = repolens_answer(q["query"], root, None, None)
            finally:
                del os.environ["REPOLENS_STORE"]
            same = top5(local_answer) == top5(pg_answer)
            rows.append({
                "id": q["id"], "same_top5": same,
                "local_acc5": score(local_answer, q)["acc5"], "pg_acc5": score(pg_answer, q)["acc5"],
                "local_ms": local_answer.latency_ms, "pg_ms": pg_answer.latency_ms, "copy_s": copy_s,
            })  # fmt: skip
            copied = f", copied in {copy_s:.1f} s" if copy_s else ""
            verdict = "same" if same else "DIFFERENT"
            print(f"{i + 1}/{len(queries)} {q['id']}: {verdict}{copied}", file=sys.stderr)
            if args.out:  # after every question: a run stopped early keeps what it measured
                args.out.write_text(json.dumps({"rows": rows}, indent=1))
            readers.clear()
    finally:
        readers.clear()
        close_pools()
        harness.close()
    n = len(rows)
    same = sum(r["same_top5"] for r in rows)
    acc = {s: 100 * sum(r[f"{s}_acc5"] for r in rows) / max(n, 1) for s in ("local", "pg")}
    command = "python -m bench.replies postgres " + " ".join(sys.argv[1:])
    print(f"\n`{command}` ({time.perf_counter() - started:.0f} s)\n")
    print("| questions | top-5 identical | file Acc@5 local | file Acc@5 PostgreSQL |")
    print("|---|---|---|---|")
    print(f"| {n} | {same}/{n} ({100 * same / max(n, 1):.1f}%) | {acc['local']:.1f} | {acc['pg']:.1f} |")
    differing = [r["id"] for r in rows if not r["same_top5"]]
    if differing:
        print("\ndifferent top 5: " + ", ".join(differing))
    if args.out:
        args.out.write_text(json.dumps({"command": command, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
