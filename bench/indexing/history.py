"""What the history leg costs: reading a branch's history, keeping it current, asking it.

    python -m bench.indexing history CHECKOUT [CHECKOUT ...] [--limit 5000] [--back 50] [--data DIR]
        [--index-cache DIR] [--weight 0.5] [--postgresql]

For each git work tree (e.g. ``$REPOLENS_BENCH_DATA/checkouts-git/<repo>@<commit>``):

* **read**: a first sync of ``--limit`` commits into a fresh, empty index
  generation (through the store's writer, as ``repolens index`` does): wall
  time, and CPU time of the Python side and of git (they overlap: commits are
  tokenized while git still writes);
* **unchanged**: a second sync with HEAD where it was (what every refresh pays);
* **incremental**: a shared clone (objects borrowed, nothing copied; the
  checkout itself is only read) is moved ``--back`` commits back, synced, moved
  forward again, and synced: the time to take in the new commits;
* with ``--index-cache DIR`` (the cache of ``devsets.py`` for these checkouts):
  **vote**, the leg's time per question (BM25 over the commits and the file
  vote), and the CPU time of a whole warm search (``service.search_code``)
  with the leg off and at ``--weight``, over the development set's titles and
  full questions of the checkout's repository, same run.

With ``--postgresql`` the same is measured on a throw-away PostgreSQL 18
(tests/pgserver.py, loopback) in the same run: the three syncs into the
PostgreSQL store (one row per store), and the vote on a PostgreSQL index
holding the cached local index's file list (no chunks: the vote reads paths
only) and the same history, timed question by question alternately with the
local one.

Prints markdown tables and the command line that produced them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.common.devsets import identity_key, index_identity, settings_env
from bench.common.paths import SHARED
from bench.common.stats import pct
from repolens import service
from repolens.history.sync import sync_history
from repolens.search.history_leg import vote_files
from repolens.search.query import parse_query
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.base import IndexReader, IndexWriter, Store
from repolens.store.handles import readers
from repolens.store.versions import format_versions


def open_bench_store(root: Path, folder: Path, url: str | None) -> Store:
    """The PostgreSQL store at ``url``, else the local store in ``folder``."""
    return open_store(root, url=url) if url else open_store(root, folder)


def cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def empty_generation(store: Store) -> IndexWriter:
    """A writer of a new, empty generation (never published): where a sync is timed."""
    writer = store.open_writer(store.new_generation(), create=True)
    writer.write_meta({**format_versions(), "root": str(store.root), "state": "building"})
    return writer


def questions(data: Path, repo_dir: str) -> list[str]:
    """Titles and full questions of the development set for this repository."""
    out = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        path = data / name
        if path.exists():
            for q in json.loads(path.read_text()):
                if repo_dir.startswith(q["repo"].replace("/", "__")):
                    out += [q["title"], q["query"]]
    return out


def measure_sync(root: Path, limit: int, back: int, tmp: Path, url: str | None) -> list[str]:
    store = open_bench_store(root, tmp / "index", url)
    with store.write_lock():
        writer = empty_generation(store)
        c0, t0 = cpu(), time.perf_counter()
        first = sync_history(writer, root, limit)
        t1, c1 = time.perf_counter(), cpu()
        sync_history(writer, root, limit)
        t2 = time.perf_counter()
        writer.close()
        store.discard(writer.generation)

    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(root), str(clone)], check=True)
    head = git(clone, "rev-parse", "HEAD").strip()
    git(clone, "update-ref", "HEAD", f"HEAD~{back}")
    moved = open_bench_store(clone, tmp / "clone-index", url)
    with moved.write_lock():
        writer = empty_generation(moved)
        sync_history(writer, clone, limit)
        git(clone, "update-ref", "HEAD", head)
        t3 = time.perf_counter()
        step = sync_history(writer, clone, limit)
        t4 = time.perf_counter()
        writer.close()
        moved.discard(writer.generation)
    return [
        root.name,
        "postgresql" if url else "local",
        str(first.commits),
        f"{t1 - t0:.2f}",
        f"{c1[0] - c0[0]:.2f}",
        f"{c1[1] - c0[1]:.2f}",
        f"{(t2 - t1) * 1000:.0f}",
        f"{step.added} in {(t4 - t3) * 1000:.0f}",
    ]


def postgresql_copy(local: IndexReader, root: Path, limit: int, url: str) -> IndexReader:
    """A published PostgreSQL index of ``root`` with ``local``'s file list
    (no chunks) and the history synced afresh: what the vote reads."""
    store = open_store(root, url=url)
    with store.write_lock():
        writer = empty_generation(store)
        writer.begin()
        for f in local.files().values():
            fields = {"lines": f.lines, "flags": f.flags, "language": f.language}
            writer.add_file(
                path=f.path,
                hash=f.hash,
                size=f.size,
                mtime_ns=f.mtime_ns,
                **fields,
                chunks=(),
                symbols=(),
                fields=(),
            )
        writer.commit()
        sync_history(writer, root, limit)
        writer.write_meta({"files": local.meta().get("files", "0"), "state": "ready"})
        writer.close()
        store.publish(writer.generation)
    return store.open_reader()


def measure_queries(
    root: Path, index_cache: Path, weight: str, data: Path, limit: int, url: str | None
) -> tuple[list, list, list, list]:
    """Per question: the vote's ms (and on PostgreSQL, timed alternately), and
    the CPU ms of warm searches with the leg off and at ``weight``."""
    index_dir = index_cache / root.name / identity_key(index_identity(load_settings(root), history=True))
    reader = open_store(root, index_dir).open_reader()
    pg = postgresql_copy(reader, root, limit, url) if url else None
    votes, pg_votes, off, on = [], [], [], []
    try:
        for text in questions(data, root.name):
            terms = parse_query(text).weighted()
            for r, out in ((reader, votes), (pg, pg_votes)):
                if r is not None:
                    start = time.perf_counter()
                    vote_files(r, terms)
                    out.append((time.perf_counter() - start) * 1000)
            for value, out in (("0", off), (weight, on)):
                with settings_env({"history_weight": value}):
                    service.search_code(text, root, index_dir=index_dir, auto_index=False)  # warm
                    start = time.process_time()
                    service.search_code(text, root, index_dir=index_dir, auto_index=False)
                    out.append((time.process_time() - start) * 1000)
    finally:
        reader.close()
        if pg is not None:
            pg.close()
        readers.clear()
    return votes, pg_votes, off, on


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("checkouts", nargs="+", type=Path)
    ap.add_argument("--limit", type=int, default=5000)
    ap.add_argument("--back", type=int, default=50)
    ap.add_argument("--data", type=Path, default=SHARED)
    ap.add_argument("--index-cache", type=Path, help="devsets.py's index cache for these checkouts")
    ap.add_argument("--weight", default="0.5", help="history_weight for the search timing")
    ap.add_argument("--postgresql", action="store_true", help="the same on a throw-away PostgreSQL, same run")
    args = ap.parse_args(argv)
    with contextlib.ExitStack() as stack:
        pg_url = stack.enter_context(throwaway_postgresql()) if args.postgresql else None
        rows = []
        for root in args.checkouts:
            for url in (None, pg_url) if pg_url else (None,):
                with tempfile.TemporaryDirectory(prefix="history-perf-") as tmp:
                    rows.append(measure_sync(root.resolve(), args.limit, args.back, Path(tmp), url))
        votes: dict[str, tuple[list[float], list[float]]] = {}
        off: list[float] = []
        on: list[float] = []
        if args.index_cache:
            for root in args.checkouts:
                where = (args.index_cache.resolve(), args.weight, args.data, args.limit, pg_url)
                v, pv, a, b = measure_queries(root.resolve(), *where)
                votes[root.resolve().name] = (v, pv)
                off += a
                on += b
    print(f"$ {shlex.join(['python', *sys.argv])}\n")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    head = ["checkout", "store", "commits", "read s", "CPU Python s", "CPU git s", "unchanged ms"]
    head += [f"HEAD~{args.back} -> HEAD: commits in ms", "vote p50 ms", "vote p90 ms"]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for row in rows:
        v = votes.get(row[0], ([], []))[row[1] == "postgresql"]
        cells = [f"{pct(v, 0.5):.1f}", f"{pct(v, 0.9):.1f}"] if v else ["", ""]
        print("| " + " | ".join(row + cells) + " |")
    if on:
        print("\n| history_weight | searches | CPU ms p50 | p90 | mean |\n|---|---|---|---|---|")
        for weight, values in (("0", off), (args.weight, on)):
            p50, p90 = pct(values, 0.5), pct(values, 0.9)
            print(f"| {weight} | {len(values)} | {p50:.1f} | {p90:.1f} | {statistics.mean(values):.1f} |")


@contextlib.contextmanager
def throwaway_postgresql() -> Iterator[str]:
    """The URL of a fresh database on a PostgreSQL started for this run (removed after)."""
    from bench.postgres.perf import BENCH_SETTINGS
    from repolens.store.postgres.connect import close_pools
    from tests.pgserver import PgHarness

    harness = PgHarness()
    try:
        yield harness.create_database(harness.primary(BENCH_SETTINGS)).url
    finally:
        readers.clear()
        close_pools()
        harness.close()


if __name__ == "__main__":
    main()
