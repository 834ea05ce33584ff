"""The server's own cost of one MCP call, tool by tool: one client, one server process.

    python -m bench.serving calls [ROOT] [--calls 200] [--rounds 2] [--tree NAME=PATHS ...] [--callgrind]

Each tree (``--tree NAME=PATHS``: folders put first on the server's
PYTHONPATH, as another checkout's ``src``; default: this checkout, named
``this``) indexes ROOT (default: this checkout) into a temporary folder of
its own; then, round after round and the trees in turn, ``repolens serve
--http --workers 1`` of that tree answers --calls calls of each of
search_code, find_symbol and read_snippet, one after another, from one
client over the SDK's streamable HTTP client (the same calls for every
tree, drawn as ``bench.serving load`` draws them; ten of each first, not
counted). Prints the command line and one markdown table: the server's CPU
milliseconds a call (user + system, ``/proc``; the median of the rounds)
for each tool and for ``bench.serving load``'s mix (50/25/25), and each
tree's ratio to the first tree's; then, for each two trees, how many calls'
whole replies (the ``CallToolResult``) differ.

``--callgrind``: each server runs under valgrind's callgrind, counting only
while a tool's calls run, and the table gives the instructions a call as
well: a count other sessions on the machine do not move (the CPU
milliseconds are valgrind's then, not comparable). One round is enough.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.common.paths import REPO_ROOT
from bench.common.stats import table
from bench.serving.load import (
    WEIGHTS,
    clean_env,
    cpu_seconds,
    free_port,
    next_call,
    server_pids,
    start_server,
    stop_server,
    text_files,
)

TOOLS = [tool for tool, _ in WEIGHTS]
WARM = 10


def calls_of(tool: str, files: list[tuple[str, int]], n: int, seed: int) -> list[dict]:
    """``n`` arguments of ``tool`` as ``bench.serving load`` draws them (the same for every tree)."""
    rng, out = random.Random(seed), []
    while len(out) < n:
        name, arguments = next_call(rng, files)
        if name == tool:
            out.append(arguments)
    return out


async def ask(url: str, token: str, tool: str, calls: list[dict]) -> list[dict]:
    """Every call of ``calls`` in turn, from one client: the replies as JSON."""
    replies = []
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=600) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=600) as client,
    ):
        for arguments in calls:
            result = await client.call_tool(tool, arguments)
            replies.append(result.model_dump(mode="json"))
    return replies


def callgrind(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], capture_output=True, check=True)


def instructions(dump_prefix: Path, pid: int) -> int:
    """The instructions of the newest callgrind dump of ``pid``."""
    newest = max(dump_prefix.parent.glob(f"{dump_prefix.name}.{pid}.*"), key=os.path.getmtime)
    for line in newest.read_text(errors="replace").splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {newest}")


def index(root: Path, env: dict[str, str], folder: Path) -> None:
    cmd = [sys.executable, "-m", "repolens", "index", str(root), "--index-dir", str(folder)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"indexing failed: {done.stderr[-2000:]}")


def run_tree(
    root: Path, env: dict[str, str], folder: Path, plan: dict[str, list[dict]], tmp: Path, grind: bool
) -> dict[str, tuple[float, float | None, list[dict]]]:
    """One server of one tree: per tool, (CPU ms a call, instructions a call or None, replies)."""
    token, port = secrets.token_urlsafe(32), free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    dumps = tmp / "callgrind"
    prefix = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={dumps}.%p"]
    log = tmp / "server.err"
    proc = start_server(
        root, port, token, ["--index-dir", str(folder)], log, 1, env=env, prefix=prefix if grind else None
    )
    out = {}
    try:
        pids = server_pids(proc, port, token)
        for tool, calls in plan.items():
            asyncio.run(ask(url, token, tool, calls[:WARM]))
            measured = calls[WARM:]
            if grind:
                callgrind(proc.pid, "-i", "on")
                callgrind(proc.pid, "-z")  # (counting from here: the dump after this one is this tool's)
            before = sum(map(cpu_seconds, pids))
            replies = asyncio.run(ask(url, token, tool, measured))
            cpu = (sum(map(cpu_seconds, pids)) - before) * 1000 / len(measured)
            count = None
            if grind:
                callgrind(proc.pid, "-d", tool)
                callgrind(proc.pid, "-i", "off")
                count = instructions(dumps, proc.pid) / len(measured)
            out[tool] = (cpu, count, replies)
    finally:
        stop_server(proc, timeout=60)  # (valgrind writes its last dump)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("root", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--calls", type=int, default=200, help="calls of each tool a round (after ten)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=PATHS",
        help="a tree to serve from: folders first on PYTHONPATH (repeat; the first is the baseline)",
    )
    parser.add_argument("--callgrind", action="store_true", help="count instructions (valgrind)")
    args = parser.parse_args(argv)
    if args.callgrind and not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        raise SystemExit("--callgrind needs valgrind and callgrind_control on PATH")
    root = Path(args.root).resolve()
    files = text_files(root)
    if not files:
        raise SystemExit(f"no text files in {root}")
    trees = [tuple(spec.split("=", 1)) for spec in args.tree] or [("this", "")]
    if any(len(tree) != 2 or not tree[0] for tree in trees):
        raise SystemExit("--tree takes NAME=PATHS")
    plan = {tool: calls_of(tool, files, WARM + args.calls, seed) for seed, tool in enumerate(TOOLS)}
    cpu: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, dict[str, float]] = defaultdict(dict)
    replies: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    with tempfile.TemporaryDirectory(prefix="repolens-calls-") as tmp:
        envs = {}
        for name, paths in trees:
            env = clean_env()
            if paths:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [paths, env.get("PYTHONPATH", "")]))
            envs[name] = env
            index(root, env, Path(tmp) / name / "index")
        for _ in range(args.rounds):
            for name, _ in trees:
                measured = run_tree(
                    root, envs[name], Path(tmp) / name / "index", plan, Path(tmp) / name, args.callgrind
                )
                for tool, (ms, count, said) in measured.items():
                    cpu[name][tool].append(ms)
                    if count is not None:
                        counts[name][tool] = count
                    replies[name].setdefault(tool, said)

    base = trees[0][0]
    weights = dict(WEIGHTS)

    def mix(values: dict[str, float]) -> float:
        return sum(weights[tool] * values[tool] for tool in TOOLS)

    medians = {name: {tool: statistics.median(cpu[name][tool]) for tool in TOOLS} for name, _ in trees}
    headers = ["tree", *(f"{tool} CPU ms" for tool in TOOLS), "mix CPU ms", "mix / first"]
    if args.callgrind:
        headers += [*(f"{tool} Minstr" for tool in TOOLS), "mix Minstr", "mix / first"]
    rows = []
    for name, _ in trees:
        row = [name, *(f"{medians[name][tool]:.2f}" for tool in TOOLS)]
        row += [f"{mix(medians[name]):.2f}", f"{mix(medians[name]) / mix(medians[base]):.2f}"]
        if args.callgrind:
            row += [f"{counts[name][tool] / 1e6:.2f}" for tool in TOOLS]
            row += [f"{mix(counts[name]) / 1e6:.2f}", f"{mix(counts[name]) / mix(counts[base]):.2f}"]
        rows.append(row)
    print(f"command: {sys.argv[0]} {shlex.join(sys.argv[1:])}")
    print(f"repository: {root}; {args.calls} calls of each tool a round, {args.rounds} round(s), one client")
    print(f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print()
    print(table(headers, rows))
    print()
    names = [name for name, _ in trees]
    for i, name in enumerate(names):
        for other in names[:i]:
            differ = {
                tool: sum(a != b for a, b in zip(replies[other][tool], replies[name][tool], strict=True))
                for tool in TOOLS
            }
            shown = ", ".join(f"{tool} {n} of {args.calls}" for tool, n in differ.items() if n)
            print(f"replies of {name} against {other}: {'identical' if not shown else 'differ: ' + shown}")
    said = [r for name in names for tool_replies in replies[name].values() for r in tool_replies]
    errors = sum(bool(r.get("is_error")) for r in said)
    if errors:
        print(f"error replies: {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
