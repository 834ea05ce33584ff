"""How fresh the index stays: no-change refresh, save-to-searchable, compaction, branch switch.

    python -m bench.indexing freshness CORPUS_DIR [--saves 20] [--tree NAME=SRC ...] [--rounds 1]

CORPUS_DIR is copied into a temporary git repository (the copy is what
gets edited). Measured in one run:

1. a full first build, then a no-change refresh (``repolens index`` when
   nothing changed: discovery + a stat per file), in process, then the
   first edit after the build refreshed by ``repolens index`` in a new
   process (it rewrites the lexical segment that held the file: how the
   build laid its segments out decides how much);
2. save -> searchable on a warm server: the watcher runs in a thread, one
   file gets a new unique identifier, and search is polled until it returns
   it; reported against the baseline of an explicit ``repolens index`` CLI
   run after the same kind of edit (a fresh process, as an agent without a
   watcher would do it);
3. the watcher's compaction once the saves pause (trees that have one):
   three saves that land just after a pause, when a compaction may be
   running, then the compaction after the last one (the first after a
   build: it cuts the build's large segments), then three saves in other
   files and the compaction after them;
4. a branch switch that changes 200 files: ``git checkout`` then a refresh.

With ``--tree NAME=SRC`` (repeatable) each tree (a ``src`` folder, copied
and compiled as in ``bench.speed index``) is measured in a process of its
own, the trees alternating ``--rounds`` times, and the table has a column
per tree; else this checkout's tree is measured in this process. Prints one
markdown table and the command line.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.paths import REPO_ROOT
from bench.common.stats import pct

GIT = ["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench", "-c", "commit.gpgsign=false"]
PAUSE_S = 3.3  # just past the watcher's COMPACT_IDLE_S (3 s): a compaction has started, where there is one
COMPACTION_WAIT_S = 120.0


def git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)


def measure(corpus: Path, saves: int) -> dict:
    """Every measure of one tree (the ``repolens`` this process imports), raw."""
    from repolens import service
    from repolens.index.build import build_index
    from repolens.index.watch import WatchEvent, start_watcher
    from repolens.store.handles import readers

    compacts = "compacted" in WatchEvent.__dataclass_fields__
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="repolens-fresh-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(corpus, root, symlinks=True)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
        py_files = sorted(p for p in root.rglob("*.py") if ".git" not in p.parts)

        t = time.perf_counter()
        first = build_index(root)
        out["build_s"] = time.perf_counter() - t
        out["corpus"] = (first.files, first.lines, first.chunks)
        out["nochange"] = []
        for _ in range(5):
            t = time.perf_counter()
            report = build_index(root)
            out["nochange"].append(time.perf_counter() - t)
            assert report.added == report.changed == report.deleted == 0
        out["first_cli"] = cli_refresh(root, py_files[len(py_files) // 2], "first")

        # 2. save -> searchable, with the watcher running in this process
        events: list = []
        thread, stop = start_watcher(root, on_event=events.append)
        while not events:
            time.sleep(0.05)
        service.search_code("warm up the handle", root)

        def save(i: int, target: Path) -> float:
            token = f"freshly_saved_marker_{i}_{int(time.time() * 1000)}"
            t = time.perf_counter()
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {token}():\n    return {i}\n")
            while token not in service.search_code(token, root, top_k=1).text:
                if time.perf_counter() - t > 30:
                    raise SystemExit(f"save {i} never became searchable")
                time.sleep(0.01)
            return time.perf_counter() - t

        def compaction() -> tuple[float, int] | None:
            """(seconds, chunks rewritten) of the watcher's next compaction."""
            seen = len(events)
            deadline = time.monotonic() + COMPACTION_WAIT_S
            while compacts and time.monotonic() < deadline:
                done = [e for e in events[seen:] if getattr(e, "compacted", None) is not None]
                if done:
                    return done[0].seconds, done[0].compacted
                time.sleep(0.05)
            return None

        out["latencies"] = [save(i, py_files[(i * 7919) % len(py_files)]) for i in range(saves)]
        # 3. saves that land when a compaction has just started, then compactions
        out["after_pause"] = []
        for i in range(3):
            time.sleep(PAUSE_S)
            out["after_pause"].append(save(1000 + i, py_files[(i * 7919) % len(py_files)]))
        out["compaction_first"] = compaction()
        for i in range(3):
            save(2000 + i, py_files[(i * 6007 + 31) % len(py_files)])
        out["compaction_next"] = compaction()
        stop.set()
        thread.join(timeout=10)

        # baseline: an explicit CLI refresh after an edit, in a new process
        out["cli"] = [cli_refresh(root, py_files[(i * 104729) % len(py_files)], str(i)) for i in range(5)]

        # 4. branch switch touching 200 files
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "edits")
        git(root, "checkout", "-q", "-b", "other")
        for i, path in enumerate(py_files[:200]):
            path.write_text(path.read_text(encoding="utf-8") + f"\n# branch edit {i}\n", encoding="utf-8")
        git(root, "commit", "-q", "-am", "other")
        git(root, "checkout", "-q", "main")
        build_index(root)
        t = time.perf_counter()
        git(root, "checkout", "-q", "other")
        out["checkout_s"] = time.perf_counter() - t
        t = time.perf_counter()
        out["switched"] = moved(build_index(root))
        out["switch_s"] = time.perf_counter() - t
        t = time.perf_counter()
        git(root, "checkout", "-q", "main")
        out["back"] = moved(build_index(root))
        out["back_s"] = time.perf_counter() - t
        readers.clear()
    return out


def cli_refresh(root: Path, target: Path, tag: str) -> float:
    """Seconds of ``repolens index`` in a new process after a function is appended to ``target``."""
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(f"\n\ndef cli_saved_marker_{tag}():\n    return 1\n")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "repolens", "index", str(root)], check=True, capture_output=True)
    return time.perf_counter() - t


def moved(report) -> str:
    """Files a refresh re-read: an empty file that gains a line is new to the index."""
    return f"{report.changed} changed, {report.added} new, {report.deleted} dropped"


def pooled(runs: list[dict]) -> dict:
    """The runs of one tree as one: lists joined, times by their median."""
    out = dict(runs[0])
    for key in ("nochange", "latencies", "after_pause", "cli"):
        out[key] = [v for run in runs for v in run[key]]
    for key in ("build_s", "first_cli", "checkout_s", "switch_s", "back_s"):
        out[key] = statistics.median(run[key] for run in runs)
    for key in ("compaction_first", "compaction_next"):
        done = [run[key] for run in runs if run[key]]
        out[key] = (
            (statistics.median(s for s, _ in done), statistics.median(n for _, n in done)) if done else None
        )
    return out


def table(results: dict[str, dict]) -> list[str]:
    def row(name: str, cell) -> str:
        return f"| {name} | " + " | ".join(cell(r) for r in results.values()) + " |"

    def ms(values: list[float], q: float) -> str:
        return f"{pct(values, q) * 1000:.0f}"

    def compaction(key: str):
        return lambda r: f"{r[key][0]:.2f} s ({r[key][1]:,.0f} chunks)" if r[key] else "-"

    return [
        "| measure | " + " | ".join(results) + " |",
        "|---|" + "---|" * len(results),
        row("first build", lambda r: f"{r['build_s']:.1f} s"),
        row("no-change refresh, median", lambda r: f"{statistics.median(r['nochange']):.2f} s"),
        row("the first edit after the build: `repolens index` CLI", lambda r: f"{r['first_cli']:.2f} s"),
        row(
            "save -> searchable, watcher, p50 / p95",
            lambda r: f"{ms(r['latencies'], 0.5)} / {ms(r['latencies'], 0.95)} ms (n={len(r['latencies'])})",
        ),
        row(
            "save 3.3 s after the last (a compaction started), p50 / max",
            lambda r: (
                f"{ms(r['after_pause'], 0.5)} / {ms(r['after_pause'], 1.0)} ms (n={len(r['after_pause'])})"
            ),
        ),
        row("compaction after those saves (the first after a build)", compaction("compaction_first")),
        row("compaction after 3 saves elsewhere", compaction("compaction_next")),
        row(
            "baseline: edit then `repolens index` CLI, median",
            lambda r: f"{statistics.median(r['cli']) * 1000:.0f} ms",
        ),
        row(
            "watcher p50 / CLI baseline",
            lambda r: f"{pct(r['latencies'], 0.5) / statistics.median(r['cli']):.2f}x",
        ),
        row(
            "branch switch, 200 files: refresh after checkout",
            lambda r: f"{r['switch_s']:.2f} s ({r['switched']}; git checkout itself {r['checkout_s']:.2f} s)",
        ),
        row("switch back: checkout + refresh", lambda r: f"{r['back_s']:.2f} s ({r['back']})"),
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--saves", type=int, default=20)
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=SRC")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one tree's raw measures
    args = ap.parse_args(argv)
    corpus = args.corpus.resolve()
    if args.json:
        print(json.dumps(measure(corpus, args.saves)))
        return
    print("$ python " + shlex.join(sys.argv))
    if not args.tree:
        results = {"this tree": measure(corpus, args.saves)}
    else:
        from bench.common.trees import compiled_copy, env_for

        given = {n: Path(s).resolve() for n, s in (t.split("=", 1) for t in args.tree)}
        runs: dict[str, list[dict]] = {name: [] for name in given}
        with tempfile.TemporaryDirectory(prefix="repolens-fresh-trees-") as tmp:
            trees = {name: compiled_copy(src, Path(tmp) / name) for name, src in given.items()}
            for _ in range(args.rounds):
                for name, src in trees.items():
                    cmd = [sys.executable, "-m", "bench.indexing", "freshness", str(corpus)]
                    cmd += ["--saves", str(args.saves), "--json"]
                    env = env_for(src)
                    proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
                    if proc.returncode != 0:
                        raise SystemExit(f"tree {name} failed: {proc.stderr[-2000:]}")
                    runs[name].append(json.loads(proc.stdout.splitlines()[-1]))
        results = {name: pooled(values) for name, values in runs.items()}
        for name, src in given.items():
            print(f"tree {name}: {src}")
    files, lines, chunks = next(iter(results.values()))["corpus"]
    print()
    print(f"corpus: {args.corpus} ({files} files, {lines:,} lines, {chunks:,} chunks)")
    print()
    print("\n".join(table(results)))


if __name__ == "__main__":
    main()
