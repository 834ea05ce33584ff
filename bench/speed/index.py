"""``repolens index`` of a fresh repository in a new process: wall time, CPU, peak RSS.

    python -m bench.speed index CORPUS [CORPUS ...] [--runs 3] [--tree NAME=SRC ...]

What a user waits for the first time they index: interpreter start, imports,
discovery, chunking (in process, or in worker processes for big jobs), the
store's writes. Each run indexes CORPUS from scratch into a new temporary
folder, without vectors, in a new process; the trees (``src`` folders, run
with this interpreter through ``PYTHONPATH``, copied and compiled first as in
``bench.speed cli``) alternate run by run so load changes hit them alike.
Peak RSS is the largest process of the run (the indexer or one worker).

``--naive`` adds a row per corpus for ``bench.speed.naive_index`` (a naive
single-process Python BM25 indexer, what issue 15 set repolens against),
alternating with the trees: the machine's speed moves by half within a day,
and that row shows how fast it was in this run.

Prints the command line and a markdown table: files and MB per corpus, then
p50 wall seconds, p50 CPU seconds (the indexer and its workers) and the
largest peak RSS per tree. ``--summary`` adds, per tree, the median over all
corpora and over the small ones (at most ``--small-files`` files: issue 15's
"small repository"), with how many of those were within ``--target``
seconds: given many checkouts (``$REPOLENS_BENCH_DATA/checkouts/*``), that is
issue 15's own measure ("the median first index on 196 real checkouts").
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.trees import HERE_SRC, compiled_copy, env_for

NAIVE = Path(__file__).resolve().with_name("naive_index.py")


def run_once(src: Path | None, corpus: Path, index_dir: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one ``repolens index`` in a new process
    (of ``bench.speed.naive_index`` when ``src`` is None)."""
    if src is None:
        cmd = [sys.executable, str(NAIVE), str(corpus), str(index_dir)]
        env = None
    else:
        cmd = [sys.executable, "-m", "repolens", "index", str(corpus), "--index-dir", str(index_dir)]
        cmd.append("--no-vectors")
        env = env_for(src)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{shlex.join(cmd)} failed: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def corpus_size(corpus: Path) -> tuple[int, float]:
    files = [p for p in corpus.rglob("*") if p.is_file() and ".git" not in p.parts]
    return len(files), sum(p.stat().st_size for p in files) / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=SRC")
    parser.add_argument("--naive", action="store_true", help="add a row for bench.speed.naive_index")
    parser.add_argument("--summary", action="store_true", help="medians over the corpora, small ones apart")
    parser.add_argument("--small-files", type=int, default=300, metavar="N")
    parser.add_argument("--target", type=float, default=0.6, metavar="SECONDS")
    args = parser.parse_args(argv)
    given = {n: Path(s).resolve() for n, s in (t.split("=", 1) for t in args.tree)} or {"this": HERE_SRC}
    rows = []
    with tempfile.TemporaryDirectory(prefix="repolens-index-start-") as tmp:
        trees: dict[str, Path | None] = {
            name: compiled_copy(src, Path(tmp) / "trees" / name) for name, src in given.items()
        }
        if args.naive:
            trees["naive"] = None
        for n, corpus in enumerate(args.corpora):
            corpus = corpus.resolve()
            runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
            for i in range(args.runs):
                for name, src in trees.items():
                    # a new folder for every run: an index left by another corpus is not a first index
                    runs[name].append(run_once(src, corpus, Path(tmp) / f"index-{n}-{name}-{i}"))
            rows.append((corpus, corpus_size(corpus), runs))

    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}")
    print(f"machine: {os.cpu_count()} CPUs; {args.runs} runs per cell, trees alternating")
    for name, src in given.items():
        print(f"tree {name}: {src}")
    print("\n| corpus | files | MB | tree | wall s p50 | CPU s p50 | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for corpus, (files, mb), runs in rows:
        for name, values in runs.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            rss = max(v[2] for v in values)
            print(f"| {corpus.name} | {files} | {mb:.1f} | {name} | {wall:.2f} | {cpu:.2f} | {rss:.0f} |")
    if args.summary:
        print_summary(rows, args.small_files, args.target)
    return 0


def print_summary(rows: list, small_files: int, target: float) -> None:
    """Per tree: the median wall time over every corpus, and over the small
    ones (median, 90th percentile, slowest, how many within ``target``)."""
    small = [r for r in rows if r[1][0] <= small_files]
    head = f"corpora <= {small_files} files | median | p90 | slowest | within {target} s"
    print(f"\n| tree | corpora | median wall s | {head} |")
    print("|---|---|---|---|---|---|---|---|")
    for name in rows[0][2]:
        every = [statistics.median(v[0] for v in r[2][name]) for r in rows]
        few = sorted(statistics.median(v[0] for v in r[2][name]) for r in small)
        if few:
            p90 = few[min(len(few) - 1, round(0.9 * (len(few) - 1)))]
            within = sum(w <= target for w in few)
            median = statistics.median(few)
            cells = f"{len(few)} | {median:.2f} | {p90:.2f} | {few[-1]:.2f} | {within} of {len(few)}"
        else:
            cells = "0 | - | - | - | -"
        print(f"| {name} | {len(every)} | {statistics.median(every):.2f} | {cells} |")


if __name__ == "__main__":
    raise SystemExit(main())
