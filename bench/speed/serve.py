"""How soon ``repolens serve`` (stdio) answers ``initialize``, and then
``tools/list``, in a new process.

    python -m bench.speed serve [ROOT] [--runs 10] [--tree NAME=SRC ...]

An MCP client starts the server and waits for its reply to ``initialize``
before it can list or call a tool; every agent session pays for it. This
starts ``python -m repolens serve --root ROOT`` (default: this checkout)
``--runs`` times per tree, sends ``initialize`` on stdin and times the reply
line from the start of the process; then sends ``notifications/initialized``
and ``tools/list``, as a client does, and times that reply too (what a
client waits for before its first tool call); then closes stdin (the server
exits). With ``--no-watch``: the watcher would start indexing ROOT (writing
``ROOT/.repolens``) once the client has sent ``notifications/initialized``;
what is measured is the server's start, not an index build.
Trees as in ``cli_startup.py`` (copied and compiled first, interleaved).
Also prints the largest imports of the first tree's server (``-X
importtime``, median of 5; a module's figure includes what it imports).

Prints the command line, the load average and a markdown table per tree
and reply: p50/p95 wall ms, and the server's CPU ms until the reply (from
/proc: steadier than wall time on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common.stats import pct
from bench.common.trees import HERE_SRC, compiled_copy, env_for

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "serve_start", "version": "0"},
    },
}


@dataclass(frozen=True)
class Run:
    """One server start: milliseconds from the start of ``serve`` to its reply
    to ``initialize``, and to its reply to the ``tools/list`` sent after it,
    wall and the server's CPU (None without /proc); its stderr."""

    initialize_ms: float
    initialize_cpu_ms: float | None
    tools_ms: float
    tools_cpu_ms: float | None
    err: str


def cpu_ms(pid: int) -> float | None:
    """CPU time (user + system) a live process has used so far, in ms."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def answer_ms(root: Path, src: Path, importtime: bool = False) -> Run:
    """Start ``serve``, send ``initialize``, then ``notifications/initialized``
    and ``tools/list``, and time both replies."""
    flags = ["-X", "importtime"] if importtime else []
    serve = [sys.executable, *flags, "-m", "repolens", "serve", "--root", str(root), "--no-watch"]
    # stderr to a file: a pipe could fill up with the import profile and stall the server
    with tempfile.TemporaryFile(mode="w+") as err_file:
        started = time.perf_counter()
        proc = subprocess.Popen(
            serve,
            env=env_for(src),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        initialized = (time.perf_counter() - started) * 1000
        initialized_cpu = cpu_ms(proc.pid)
        proc.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n")
        proc.stdin.flush()
        listed_line = proc.stdout.readline()
        listed = (time.perf_counter() - started) * 1000
        listed_cpu = cpu_ms(proc.pid)
        proc.stdin.close()
        proc.wait(timeout=60)
        err_file.seek(0)
        err = err_file.read()
    for got, want in ((line, 1), (listed_line, 2)):
        if json.loads(got or "{}").get("id") != want:
            raise SystemExit(f"no reply to request {want}: {got[:300]!r} {err[-500:]}")
    return Run(initialized, initialized_cpu, listed, listed_cpu, err)


def import_profile(root: Path, src: Path) -> list[tuple[str, float]]:
    """Every import of a server run to its reply: (name indented by depth,
    cumulative ms, median of 5), largest first."""
    runs: dict[str, list[float]] = {}
    for _ in range(5):
        for line in answer_ms(root, src, importtime=True).err.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                _, cum, name = line.split("|")
                runs.setdefault(name.rstrip(), []).append(int(cum) / 1000)
    return sorted(((n, statistics.median(v)) for n, v in runs.items()), key=lambda x: -x[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(HERE_SRC.parent))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=SRC")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    given = {n: Path(s).resolve() for n, s in (t.split("=", 1) for t in args.tree)} or {"this": HERE_SRC}
    with tempfile.TemporaryDirectory(prefix="repolens-serve-") as tmp:
        trees = {name: compiled_copy(src, Path(tmp) / name) for name, src in given.items()}
        for src in trees.values():
            answer_ms(root, src)  # warm the disk cache
        load_before = os.getloadavg()[0]
        runs: dict[str, list[Run]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, src in trees.items():
                runs[name].append(answer_ms(root, src))
        load_after = os.getloadavg()[0]
        profile = import_profile(root, next(iter(trees.values())))

    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}")
    print(f"repository: {root}; {args.runs} runs per tree, interleaved; machine: {os.cpu_count()} CPUs")
    print(f"load average (1 min): {load_before:.1f} at the start, {load_after:.1f} at the end")
    print()
    print("| tree | reply to | p50 ms | p95 ms | server CPU p50 ms |")
    print("|---|---|---|---|---|")
    for name, done in runs.items():
        for label, wall, cpu in (
            ("initialize", [r.initialize_ms for r in done], [r.initialize_cpu_ms for r in done]),
            ("tools/list", [r.tools_ms for r in done], [r.tools_cpu_ms for r in done]),
        ):
            known = [c for c in cpu if c is not None]
            cpu_p50 = f"{pct(known, 0.5):,.0f}" if known else "-"
            print(f"| {name} | {label} | {pct(wall, 0.5):,.0f} | {pct(wall, 0.95):,.0f} | {cpu_p50} |")
    print(
        f"\nlargest imports of a server ({next(iter(given))}; cumulative ms with -X importtime, median of 5):"
    )
    for name, ms in profile[:20]:
        print(f"  {ms:7.1f} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
