"""Wall time of one ``repolens`` command in a new process, against ``rg`` and ``python -c pass``.

    python -m bench.speed cli [ROOT] [--runs 20] [--tree NAME=SRC ...]

An agent that calls ``repolens search`` from a shell pays for a whole
process per question: interpreter start, imports, opening the index, the
search itself. This runs ``search``, ``symbols`` and ``read`` on ROOT
(default: this checkout) ``--runs`` times each in new processes, and ``rg``
on the same words and ``python -c pass`` (this interpreter starting and
doing nothing: what no Python command can beat) as the references, all
interleaved in one run so the machine's load falls on every row alike. Each ``--tree`` is a source folder
(``src`` of a checkout) run with this interpreter through ``PYTHONPATH``:
pass the baseline's and this checkout's to compare them in one run (default:
this checkout only). Each tree is copied to a temporary folder and compiled
to bytecode first (as ``pip install`` does; this also holds when
``PYTHONDONTWRITEBYTECODE`` is set), so no run pays for compiling and the
given folders are not written to. The index is built once, in a temporary
folder, by the first tree. Commands run through the environment's
``repolens`` console script (what a shell runs; ``python -m repolens``
where there is none). Also prints the import time of ``repolens.cli`` per tree
(``python -X importtime``, median of 5).

Prints the command line and a markdown table: p50/p95 wall ms and p50 CPU ms
per command and tree, and each p50 over ``python -c pass``'s p50 in the same
run (issue 36's target for ``search``: at most 4x).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.stats import pct
from bench.common.trees import HERE_SRC, compiled_copy, env_for

QUERY = "how is the session cookie signed"
SYMBOL = "Flask"


def first_file(root: Path) -> str:
    """A root-relative source file of at least 40 lines, for ``read``."""
    for path in sorted(root.rglob("*.py")) or sorted(root.rglob("*")):
        if path.is_file() and ".git" not in path.parts:
            try:
                if path.read_text(encoding="utf-8").count("\n") >= 40:
                    return path.relative_to(root).as_posix()
            except (OSError, UnicodeDecodeError):
                continue
    raise SystemExit(f"no text file of 40 lines under {root}")


def commands(root: Path, index_dir: Path, query: str, symbol: str) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (repolens arguments, the rg command on the same words)."""
    where = ["--root", str(root), "--index-dir", str(index_dir)]
    path = first_file(root)
    words = "|".join(re.findall(r"\w+", query))
    return {
        "search": (["search", query, *where], ["rg", "-n", "-i", "-e", words, str(root)]),
        "symbols": (["symbols", symbol, *where], ["rg", "-n", "-w", symbol, str(root)]),
        "read": (
            ["read", path, "1", "40", "--root", str(root)],
            ["rg", "-n", "-m", "40", "", str(root / path)],
        ),
    }


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall ms, CPU ms) of one run; CPU time (user + system of the child)
    moves less than wall time when other work shares the machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # rg: 1 is "no match"
        raise SystemExit(f"{shlex.join(cmd)} failed: {done.stderr.decode(errors='replace')[-500:]}")
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return elapsed, cpu


def import_ms(src: Path) -> float:
    """Median of 5 ``-X importtime`` totals for ``import repolens.cli``, in ms."""
    totals = []
    for _ in range(5):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import repolens.cli"],
            env=env_for(src),
            capture_output=True,
            text=True,
            check=True,
        ).stderr
        line = next(x for x in err.splitlines() if x.rstrip().endswith("| repolens.cli"))
        totals.append(int(line.split("|")[1]) / 1000)
    return statistics.median(totals)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE_SRC.parent))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=SRC")
    parser.add_argument("--query", default=QUERY)
    parser.add_argument("--symbol", default=SYMBOL)
    args = parser.parse_args(argv)
    if shutil.which("rg") is None:
        parser.error("rg (ripgrep) is not on PATH: it is timed on the same words (apt-get install ripgrep)")
    root = Path(args.root).resolve()
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(HERE_SRC)}
    given = {name: Path(src).resolve() for name, src in trees.items()}
    # The ``repolens`` console script, as a shell runs it (``python -m``
    # would add runpy and importlib.util, ~5 ms no user pays); -m without one.
    script = Path(sys.executable).parent / "repolens"
    py = [sys.executable, str(script)] if script.is_file() else [sys.executable, "-m", "repolens"]
    with tempfile.TemporaryDirectory(prefix="repolens-startup-") as tmp:
        trees = {name: compiled_copy(src, Path(tmp) / "trees" / name) for name, src in given.items()}
        index_dir = Path(tmp) / "index"
        first = next(iter(trees.values()))
        build = [*py, "index", str(root), "--index-dir", str(index_dir)]
        subprocess.run(build, env=env_for(first), check=True)
        cmds = commands(root, index_dir, args.query, args.symbol)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        bare = [sys.executable, "-c", "pass"]
        for name, (ours, rg) in cmds.items():
            for src in trees.values():
                timed([*py, *ours], env_for(src))  # warm the disk cache and the .pyc files
            for _ in range(args.runs):  # interleaved: load changes hit every row alike
                times.setdefault((name, "rg"), []).append(timed(rg))
                times.setdefault((name, "python"), []).append(timed(bare))
                for tree, src in trees.items():
                    times.setdefault((name, tree), []).append(timed([*py, *ours], env_for(src)))
        imports = {tree: import_ms(src) for tree, src in trees.items()}

    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}")
    print(f"repository: {root}; {args.runs} runs per row, interleaved; machine: {os.cpu_count()} CPUs")
    for tree, src in given.items():
        print(f"tree {tree}: {src}; `import repolens.cli` {imports[tree]:.0f} ms (importtime, median of 5)")
    print("\n| command | run by | p50 ms | p95 ms | CPU p50 ms | p50 / `python -c pass` p50 |")
    print("|---|---|---|---|---|---|")
    for name, (ours, rg) in cmds.items():
        bare_p50 = pct([w for w, _ in times[(name, "python")]], 0.5)
        for who in ["python", "rg", *trees]:
            wall = [w for w, _ in times[(name, who)]]
            cpu = [c for _, c in times[(name, who)]]
            if who in ("python", "rg"):
                shown = "python -c pass" if who == "python" else shlex.join(rg)
            else:
                shown = f"repolens {shlex.join(ours[:2])} ({who})"
            figures = f"{pct(wall, 0.5):.0f} | {pct(wall, 0.95):.0f} | {pct(cpu, 0.5):.0f}"
            print(f"| {name} | {shown} | {figures} | {pct(wall, 0.5) / bare_p50:.1f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
