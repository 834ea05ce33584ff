"""Warm search latency per question kind, learned ranking against tuned, source trees side by side.

    python -m bench.speed search [--checkouts DIR] [--index-cache DIR] [--data DIR]
        [--tree NAME=SRC ...] [--rounds 3] [--input query|title|both] [--only REGEX] [--limit N]
    python -m bench.speed search --corpus DIR [--index-cache DIR] [--tree NAME=SRC ...] [--rounds 3]

What a server pays per question once it has answered one (the steady state
an agent's loop sees): ``service.search_code`` in a long-lived process that
has loaded numpy, as ``repolens serve`` does (see
:mod:`repolens.store.history_rank`). Each ``--tree`` (a ``src`` folder; by
default this checkout's) runs in a worker process of its own through
``PYTHONPATH``; the workers take turns checkout by checkout (the order
alternating), so the machine's load falls on every tree alike. In each
worker every question is asked once per ranking untimed, then ``--rounds``
times per ranking, ``learned`` and ``tuned`` alternating: the learned
ranking's own cost is the difference of the two in the same run.

Indexes: the development checkouts' (``--checkouts``, by default the
history checkouts under ``$REPOLENS_BENCH_DATA``) are built or reused in
``--index-cache`` as ``bench.devset`` keys them (by this checkout's code:
the trees must read the same index format); ``--corpus`` indexes one folder
(corpus-1m) into ``--index-cache``/corpus and asks it the issue and commit
questions' full texts (they were written for other checkouts: the latency
of a large index, not its quality).

Prints the command, a table of wall p50/p90 and CPU p50 (ms) per tree,
ranking and question kind (issues, commits, identifiers), the learned
ranking's added p50, and each tree's p50 over the first tree's.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import devsets
from bench.common.paths import REPO_ROOT, SRC
from bench.common.stats import pct
from bench.common.trees import env_for

RANKINGS = ("learned", "tuned")
KINDS = {"swebench": "issues", "commits": "commits", "identifiers": "identifiers"}


# -- the worker: one process per tree ------------------------------------------------


def _asked(root: Path, index_dir: Path, text: str, ranking: str) -> tuple[float, float]:
    """(wall ms, CPU ms) of one search with ``ranking``."""
    from repolens import service

    os.environ["REPOLENS_RANKING"] = ranking
    wall, cpu = time.perf_counter(), time.process_time()
    service.search_code(text, root, index_dir=index_dir, auto_index=False)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def worker() -> None:
    """Answer one request per stdin line: {root, index_dir, texts, rounds} ->
    {ranking: [[wall ms, CPU ms] per asking, question by question]}."""
    import numpy  # noqa: F401  (a server loads it: see repolens.store.history_rank)
    import orjson  # noqa: F401  (and this: see repolens.search.remembered)

    from repolens.store.handles import readers

    for line in sys.stdin:
        job = json.loads(line)
        root, index_dir, texts = Path(job["root"]), Path(job["index_dir"]), job["texts"]
        for text in texts:
            for ranking in RANKINGS:
                _asked(root, index_dir, text, ranking)
        out: dict[str, list[list[tuple[float, float]]]] = {r: [[] for _ in texts] for r in RANKINGS}
        for i, text in enumerate(texts):
            for n in range(job["rounds"]):
                for ranking in RANKINGS if n % 2 == 0 else RANKINGS[::-1]:
                    out[ranking][i].append(_asked(root, index_dir, text, ranking))
        readers.clear()
        print(json.dumps(out), flush=True)


class Worker:
    """A worker process running the repolens of ``src`` (this module, ``--worker``)."""

    def __init__(self, src: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.speed", "search", "--worker"],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env_for(src),
            text=True,
        )

    def ask(self, root: Path, index_dir: Path, texts: list[str], rounds: int) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(
            json.dumps({"root": str(root), "index_dir": str(index_dir), "texts": texts, "rounds": rounds})
            + "\n"
        )
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a worker died (exit {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


# -- the driver --------------------------------------------------------------------


def jobs(args: argparse.Namespace) -> list[tuple[Path, Path, list[tuple[str, str]]]]:
    """(root, index dir, [(kind, text)]) per checkout or corpus, indexes built first."""
    from repolens.settings import load_settings

    inputs = ("query", "title") if args.input == "both" else (args.input,)
    if args.corpus:
        corpus = args.corpus.resolve()
        index_dir = args.index_cache / "corpus" / corpus.name
        identity = devsets.index_identity(load_settings(corpus), history=(corpus / ".git").exists())
        status = devsets.ensure_index(corpus, index_dir, identity, reindex=False)
        if not status.ok:
            raise SystemExit(f"{corpus}: index {status.state}: {status.error}")
        asked = devsets.load_queries(args.data, args.only, args.limit, ["swebench", "commits"])
        return [(corpus, index_dir, [(KINDS[q["set"]], q[inp]) for q in asked for inp in inputs])]
    asked = devsets.load_queries(args.data, args.only, args.limit)
    build = argparse.Namespace(checkouts=args.checkouts, index_cache=args.index_cache, reindex=False)
    dirs, status = devsets.build_indexes(asked, devsets.parse_variants("default", []), build)
    out: dict[str, list[tuple[str, str]]] = {}
    for q in asked:
        ck = devsets.checkout_name(q)
        if status[ck, "default"].ok:
            texts = dict.fromkeys(q[inp] for inp in inputs)
            out.setdefault(ck, []).extend((KINDS[q["set"]], text) for text in texts)
    return [(args.checkouts / ck, dirs[ck, "default"], asked_here) for ck, asked_here in out.items()]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    devsets.add_checkout_options(ap)
    ap.add_argument(
        "--corpus", type=Path, help="one folder to index and ask instead of the checkouts (corpus-1m)"
    )
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=SRC")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--input", choices=["query", "title", "both"], default="query")
    ap.add_argument("--only", help="regex on question ids")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args(argv)
    if args.worker:
        worker()
        return
    if args.corpus:
        if args.index_cache is None:
            ap.error("give --index-cache DIR (or set $REPOLENS_BENCH_DATA)")
        args.index_cache = args.index_cache.expanduser().resolve()
    else:
        devsets.checked_folders(args)
    trees = {name: Path(src).resolve() for name, src in (t.split("=", 1) for t in args.tree)} or {"this": SRC}
    todo = jobs(args)
    workers = {name: Worker(src) for name, src in trees.items()}
    # (tree, ranking, kind) -> [(wall, cpu)] over every timed asking
    times: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    started = time.monotonic()
    try:
        for n, (root, index_dir, asked) in enumerate(todo, 1):
            order = list(workers) if n % 2 else list(workers)[::-1]
            for name in order:
                got = workers[name].ask(root, index_dir, [text for _, text in asked], args.rounds)
                for ranking, per_question in got.items():
                    for (kind, _), timings in zip(asked, per_question, strict=True):
                        for wall, cpu in timings:
                            times.setdefault((name, ranking, kind), []).append((wall, cpu))
                            times.setdefault((name, ranking, "all"), []).append((wall, cpu))
            print(f"[{n}/{len(todo)}] {root.name}: {len(asked)} questions", file=sys.stderr, flush=True)
    finally:
        for w in workers.values():
            w.close()
    report(args, trees, times, time.monotonic() - started)


def report(args: argparse.Namespace, trees: dict[str, Path], times: dict, seconds: float) -> None:
    load = os.getloadavg()
    print(f"command: {shlex.join(['python', '-m', 'bench.speed', 'search', *sys.argv[1:]])}")
    print(
        f"{args.rounds} timed askings per question and ranking; machine: {os.cpu_count()} CPUs, "
        f"load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; {seconds:.0f} s"
    )
    for name, src in trees.items():
        print(f"tree {name}: {src}")
    kinds = [k for k in ("issues", "commits", "identifiers", "all") if any(key[2] == k for key in times)]
    first = next(iter(trees))
    print("\n| tree | ranking | kind | n | wall p50 ms | wall p90 ms | CPU p50 ms | p50 over " + first + " |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        for ranking in RANKINGS:
            for name in trees:
                got = times.get((name, ranking, kind), [])
                if not got:
                    continue
                wall = [w for w, _ in got]
                base = [w for w, _ in times[(first, ranking, kind)]]
                cpu = statistics.median(c for _, c in got)
                figures = f"{pct(wall, 0.5):.1f} | {pct(wall, 0.9):.1f} | {cpu:.1f}"
                ratio = pct(wall, 0.5) / pct(base, 0.5)
                print(f"| {name} | {ranking} | {kind} | {len(got)} | {figures} | {ratio:.2f}x |")
    print("\nThe learned ranking's own cost (learned p50 - tuned p50, wall / CPU ms):\n")
    print("| tree | kind | wall | CPU |")
    print("|---|---|---|---|")
    for kind in kinds:
        for name in trees:
            learned, tuned = times.get((name, "learned", kind)), times.get((name, "tuned", kind))
            if learned and tuned:
                wall = pct([w for w, _ in learned], 0.5) - pct([w for w, _ in tuned], 0.5)
                cpu = statistics.median(c for _, c in learned) - statistics.median(c for _, c in tuned)
                print(f"| {name} | {kind} | {wall:+.1f} | {cpu:+.1f} |")


if __name__ == "__main__":
    main()
