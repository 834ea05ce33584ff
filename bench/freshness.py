"""How fresh the index stays: no-change refresh, save-to-searchable, branch switch.

    python bench/freshness.py CORPUS_DIR [--saves 20]

CORPUS_DIR is copied into a temporary git repository (the copy is what
gets edited). Measured in one run:

1. a full first build, then a no-change refresh (``repolens index`` when
   nothing changed: discovery + a stat per file), in process;
2. save -> searchable on a warm server: the watcher runs in a thread, one
   file gets a new unique identifier, and search is polled until it returns
   it; reported against the baseline of an explicit ``repolens index`` CLI
   run after the same kind of edit (a fresh process, as an agent without a
   watcher would do it);
3. a branch switch that changes 200 files: ``git checkout`` then a refresh.

Prints one markdown table and the command line.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT = ["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench", "-c", "commit.gpgsign=false"]


def git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--saves", type=int, default=20)
    args = ap.parse_args()
    print("$ python " + " ".join(sys.argv))

    from repolens import service
    from repolens.index.build import build_index
    from repolens.index.watch import start_watcher
    from repolens.store.handles import readers

    with tempfile.TemporaryDirectory(prefix="repolens-fresh-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(args.corpus, root, symlinks=True)
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
        py_files = sorted(p for p in root.rglob("*.py") if ".git" not in p.parts)

        t = time.perf_counter()
        first = build_index(root)
        build_s = time.perf_counter() - t
        nochange = []
        for _ in range(5):
            t = time.perf_counter()
            report = build_index(root)
            nochange.append(time.perf_counter() - t)
            assert report.added == report.changed == report.deleted == 0

        # 2. save -> searchable, with the watcher running in this process
        events = []
        thread, stop = start_watcher(root, on_event=events.append)
        while not events:
            time.sleep(0.05)
        service.search_code("warm up the handle", root)
        latencies = []
        for i in range(args.saves):
            target = py_files[(i * 7919) % len(py_files)]
            token = f"freshly_saved_marker_{i}_{int(time.time() * 1000)}"
            t = time.perf_counter()
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {token}():\n    return {i}\n")
            while token not in service.search_code(token, root, top_k=1).text:
                if time.perf_counter() - t > 30:
                    raise SystemExit(f"save {i} never became searchable")
                time.sleep(0.01)
            latencies.append(time.perf_counter() - t)
        stop.set()
        thread.join(timeout=10)

        # baseline: an explicit CLI refresh after an edit, in a new process
        cli = []
        for i in range(5):
            target = py_files[(i * 104729) % len(py_files)]
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef cli_saved_marker_{i}():\n    return {i}\n")
            t = time.perf_counter()
            cmd = [sys.executable, "-m", "repolens", "index", str(root)]
            subprocess.run(cmd, check=True, capture_output=True)

            cli.append(time.perf_counter() - t)

        # 3. branch switch touching 200 files
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
        checkout_s = time.perf_counter() - t
        t = time.perf_counter()
        switched = build_index(root)
        switch_s = time.perf_counter() - t
        t = time.perf_counter()
        git(root, "checkout", "-q", "main")
        back = build_index(root)
        back_s = time.perf_counter() - t
        readers.clear()

    print()
    print(f"corpus: {args.corpus} ({first.files} files, {first.lines:,} lines, {first.chunks:,} chunks)")
    print()
    print("| measure | value |")
    print("|---|---|")
    print(f"| first build | {build_s:.1f} s |")
    print(f"| no-change refresh, median of 5 | {statistics.median(nochange):.2f} s |")
    print(
        f"| save -> searchable, watcher (n={len(latencies)}) p50 / p95 | "
        f"{pct(latencies, 0.5) * 1000:.0f} / {pct(latencies, 0.95) * 1000:.0f} ms |"
    )
    cli_ms = statistics.median(cli) * 1000
    print(f"| baseline: edit then `repolens index` CLI, median of 5 | {cli_ms:.0f} ms |")

    print(f"| watcher p50 / CLI baseline | {pct(latencies, 0.5) / statistics.median(cli):.2f}x |")
    print(
        f"| branch switch, 200 files: refresh after checkout | {switch_s:.2f} s "
        f"({moved(switched)}; git checkout itself {checkout_s:.2f} s) |"
    )
    print(f"| switch back: checkout + refresh | {back_s:.2f} s ({moved(back)}) |")


def moved(report) -> str:
    """Files a refresh re-read: an empty file that gains a line is new to the index."""
    return f"{report.changed} changed, {report.added} new, {report.deleted} dropped"


if __name__ == "__main__":
    main()
