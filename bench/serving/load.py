"""Load on the streamable HTTP server: many concurrent MCP clients, one server.

    python -m bench.serving load [ROOT] [--clients 50] [--seconds 60] [--baseline-seconds 10] [--workers 1,2]
                              [--postgres]

For each count in --workers (0: start the server without the option, for
a build that has none), starts ``repolens serve --http --workers N`` (a
random bearer token, a free port, the index in a temporary folder, built by
the first server and reused) on ROOT (default: this checkout), then runs two
phases with the SDK's client over real HTTP, each client holding one session
and calling in a loop: search_code (50%), find_symbol (25%) and read_snippet
(25%). The baseline phase is one client (latency without contention); the
load phase is --clients clients at once. Prints the command line and one
markdown table: requests, requests/s, p50/p99 latency, errors and the CPU
seconds the server (supervisor and workers) and the client process used per
phase, then per tool under load. Clients and server share the machine.

``--postgres``: the index lives in one database of a throw-away PostgreSQL
18 + pgvector (``tests/pgserver.py``, loopback) instead of a folder: ROOT is
indexed there first (``repolens index --store URL``, timed), and every
server reads it with ``--store URL``, so ``--workers 2`` is two server
processes reading the same database.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench.common.paths import REPO_ROOT
from bench.common.stats import pct

QUERIES = [
    "where is the bearer token checked",
    "how are search results trimmed to the character budget",
    "which files are skipped when indexing",
    "how does the index swap generations atomically",
    "parse a query into weighted terms",
    "symlink outside the repository root",
    "tree-sitter chunk boundaries for functions",
    "what happens when the index is missing",
    "rank fusion of lexical and dense legs",
    "omission markers in evidence packets",
]
SYMBOLS = [
    "search_code",
    "build_index",
    "Settings",
    "read_snippet",
    "tokenize",
    "parse",
    "main",
    "render",
    "Hit",
]
WEIGHTS = (("search_code", 0.5), ("find_symbol", 0.25), ("read_snippet", 0.25))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def text_files(root: Path, limit: int = 400) -> list[tuple[str, int]]:
    """(path, line count) of tracked text files, for read_snippet calls."""
    try:
        names = subprocess.run(
            ["git", "-C", str(root), "ls-files"], capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        names = [str(p.relative_to(root)) for p in root.rglob("*.py")]
    out = []
    for name in names:
        if not name.endswith((".py", ".md", ".rs", ".go", ".js", ".ts", ".toml", ".txt")):
            continue
        try:
            lines = (root / name).read_text(encoding="utf-8").count("\n")
        except (OSError, UnicodeDecodeError):
            continue
        if lines:
            out.append((name, lines))
        if len(out) >= limit:
            break
    return out


@dataclass
class Phase:
    name: str
    clients: int
    seconds: float
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    cpu: tuple[float, float] = (0.0, 0.0)  # CPU seconds: server process, this client process
    database_cpu: float = 0.0  # CPU seconds of the PostgreSQL server's processes (--postgres)

    @property
    def all_latencies(self) -> list[float]:
        return [x for values in self.latencies.values() for x in values]


def next_call(rng: random.Random, files: list[tuple[str, int]]) -> tuple[str, dict]:
    roll, tool = rng.random(), "search_code"
    for name, weight in WEIGHTS:
        if roll < weight:
            tool = name
            break
        roll -= weight
    if tool == "search_code":
        return tool, {"query": rng.choice(QUERIES), "top_k": 5}
    if tool == "find_symbol":
        return tool, {"name": rng.choice(SYMBOLS)}
    path, lines = rng.choice(files)
    start = rng.randint(1, max(1, lines - 40))
    return tool, {"path": path, "start": start, "end": start + rng.randint(5, 80)}


async def client_loop(url: str, token: str, phase: Phase, deadline: float, seed: int, files) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=300)) as http,
            Client(streamable_http_client(url, http_client=http), read_timeout_seconds=300) as client,
        ):
            while time.monotonic() < deadline:
                tool, args = next_call(rng, files)
                started = time.perf_counter()
                try:
                    result = await client.call_tool(tool, args)
                except Exception as exc:
                    phase.errors.append(f"{tool}: {type(exc).__name__}: {exc}"[:200])
                    continue
                phase.latencies[tool].append((time.perf_counter() - started) * 1000)
                if result.is_error:
                    phase.errors.append(f"{tool} {args}: {result.content[0].text}"[:200])
    except Exception as exc:  # a session that could not start or broke
        phase.errors.append(f"session: {type(exc).__name__}: {exc}"[:200])


async def run_phase(url: str, token: str, phase: Phase, files) -> None:
    started = time.monotonic()
    deadline = started + phase.seconds
    await asyncio.gather(*(client_loop(url, token, phase, deadline, i, files) for i in range(phase.clients)))
    phase.elapsed = time.monotonic() - started


def clean_env() -> dict[str, str]:
    """This environment without repolens settings: the servers get theirs on the command line."""
    return {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}


def start_server(
    root: Path,
    port: int,
    token: str,
    where: list[str],
    log: Path,
    workers: int,
    *,
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
) -> subprocess.Popen:
    """``where``: the index option (``--index-dir DIR`` or ``--store URL``);
    ``env``: the server's environment (default :func:`clean_env`); ``prefix``:
    what runs the server (``valgrind --tool=callgrind ...``), if anything."""
    env = dict(clean_env() if env is None else env)
    env["REPOLENS_TOKEN"] = token
    cmd = [
        *(prefix or []),
        sys.executable,
        "-m",
        "repolens",
        "serve",
        "--http",
        "--port",
        str(port),
        "--root",
        f"bench={root}",
    ]
    cmd += where
    if workers:
        cmd += ["--workers", str(workers)]
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 600  # the first start indexes ROOT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {log.read_text()}")
        try:
            server_pids(proc, port, token)  # one worker answers; the baseline phase warms the others
            return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit("server not ready after 600 s")


def stop_server(proc: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM, as Ctrl-C would (every worker stops), then kill after ``timeout`` seconds."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def server_pids(proc: subprocess.Popen, port: int, token: str) -> list[int]:
    """The server's processes: the one started, and the workers ``/health`` lists."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/health", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=2) as reply:
        body = json.loads(reply.read())
    return [proc.pid, *(pid for pid in body.get("worker_pids", []) if pid != proc.pid)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc), or nan."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


@contextlib.contextmanager
def postgres_index(root: Path) -> Iterator[tuple[str, Callable[[], list[int]], dict]]:
    """A throw-away PostgreSQL holding ROOT's index: (store URL, its processes, facts).

    Indexed with ``repolens index --store URL`` in a child process, like an
    indexer on another machine would; the server and its folder are removed
    on exit."""
    from tests.pgserver import PgHarness, processes_using

    harness = PgHarness()
    try:
        primary = harness.primary({"shared_buffers": "256MB", "jit": "off"})
        db = harness.create_database(primary)
        started = time.monotonic()
        cmd = [sys.executable, "-m", "repolens", "index", str(root), "--store", db.url]
        done = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"indexing into PostgreSQL failed: {done.stderr[-2000:]}")
        with db.connect() as conn:
            version = conn.execute("SHOW server_version").fetchone()[0]
        facts = {"index_s": time.monotonic() - started, "version": version}
        yield db.url, lambda: processes_using(primary.data_dir), facts
    finally:
        harness.close()


def row(phase: Phase) -> str:
    lat = phase.all_latencies
    n = len(lat)
    return (
        f"| {phase.name} | {phase.clients} | {phase.elapsed:.1f} | {n} | {n / phase.elapsed:.1f} | "
        f"{pct(lat, 0.5):.1f} | {pct(lat, 0.99):.1f} | {len(phase.errors)} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serving load", description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--baseline-seconds", type=float, default=10.0)
    parser.add_argument(
        "--workers",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[1, 2],
        help="worker counts to compare, comma-separated (0: no --workers option)",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="keep the index in a throw-away PostgreSQL, read by every server",
    )
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    files = text_files(root)
    if not files:
        raise SystemExit(f"no text files in {root}")
    token = secrets.token_urlsafe(32)
    runs: list[tuple[int, float, list[Phase]]] = []
    server_log = ""
    database: dict = {}
    with tempfile.TemporaryDirectory(prefix="repolens-load-") as tmp, contextlib.ExitStack() as stack:
        where, database_pids = ["--index-dir", str(Path(tmp) / "index")], list
        if args.postgres:
            store_url, database_pids, database = stack.enter_context(postgres_index(root))
            where = ["--store", store_url]
        for workers in args.workers:
            port = free_port()
            url = f"http://127.0.0.1:{port}/mcp"
            log = Path(tmp) / f"server-{workers}.err"
            t0 = time.monotonic()
            proc = start_server(root, port, token, where, log, workers)
            ready = time.monotonic() - t0
            try:
                phases = [
                    Phase("baseline", 1, args.baseline_seconds),
                    Phase("load", args.clients, args.seconds),
                ]
                for phase in phases:
                    pids = server_pids(proc, port, token)
                    db0 = {pid: cpu_seconds(pid) for pid in database_pids()}
                    server0, client0 = sum(map(cpu_seconds, pids)), time.process_time()
                    asyncio.run(run_phase(url, token, phase, files))
                    phase.cpu = (sum(map(cpu_seconds, pids)) - server0, time.process_time() - client0)
                    # Backends that ended during the phase are missed; the pools keep theirs open.
                    used = [cpu_seconds(pid) - db0.get(pid, 0.0) for pid in database_pids()]
                    phase.database_cpu = sum(x for x in used if x == x)
            finally:
                stop_server(proc)
            runs.append((workers, ready, phases))
            server_log += log.read_text(errors="replace")

    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}")
    print(f"repository: {root} ({len(files)} files sampled for read_snippet)")
    print(f"machine: {os.cpu_count()} CPUs; clients and server on the same machine, one client process")
    if database:
        print(
            f"index: PostgreSQL {database['version']} (loopback, one database), `repolens index --store`"
            f" {database['index_s']:.1f} s; CPU s database = its server processes"
        )
    print()
    cpu_head = "server/database/client" if database else "server/client"
    print(
        "| workers | phase | clients | seconds | requests | req/s | p50 ms | p99 ms | errors "
        f"| CPU s {cpu_head} |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for workers, _, phases in runs:
        for phase in phases:
            cpu = [phase.cpu[0], phase.database_cpu, phase.cpu[1]] if database else phase.cpu
            print(f"| {workers or 'no option'} {row(phase)} {' / '.join(f'{x:.1f}' for x in cpu)} |")
    print("\n| workers | tool (load) | requests | p50 ms | p99 ms |")
    print("|---|---|---|---|---|")
    for workers, _, phases in runs:
        load = phases[-1]
        for tool, _ in WEIGHTS:
            lat = load.latencies.get(tool, [])
            figures = f"{len(lat)} | {pct(lat, 0.5):.1f} | {pct(lat, 0.99):.1f}"
            print(f"| {workers or 'no option'} | {tool} | {figures} |")
    print("\nserver ready in " + ", ".join(f"{ready:.1f} s ({w or 'no option'})" for w, ready, _ in runs))
    phases = [phase for _, _, run in runs for phase in run]
    errors = [e for p in phases for e in p.errors]
    for error in errors[:10]:
        print(f"error: {error}")
    if "Traceback" in server_log or "ERROR" in server_log:
        print(f"server log:\n{server_log[-2000:]}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
