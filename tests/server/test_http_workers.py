"""``serve --http --workers N``: a supervisor and N worker processes.

Behaviour only (no timings): the workers start and ``/health`` lists them,
the real SDK client works against them (MCP is served stateless, so any
worker can answer any request), a killed worker is replaced, and stopping
the server leaves no process behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_http import (
    INIT,
    MCP_HEADERS,
    TOKEN,
    Running,
    connect,
    free_port,
    raw,
    running_server,
    server_env,
    text_of,
)

from conftest import SAMPLE_FILES, write_tree_files


def health(server: Running, token: str | None = TOKEN) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"{server.base}/health", headers=headers)
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else int(fields[1])


def alive(pid: int) -> bool:
    return parent_of(pid) is not None


def wait_for(predicate, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"not within {timeout} s: {what}")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    write_tree_files(root, SAMPLE_FILES)
    return root


@pytest.fixture
def two_workers(repo: Path, tmp_path: Path) -> Iterator[Running]:
    args = ["--workers", "2", "--root", f"app={repo}", "--index-dir", str(tmp_path / "index")]
    env = server_env({"REPOLENS_TOKEN": TOKEN})
    with running_server(args, env, tmp_path / "server.err", free_port()) as server:
        # /health answers as soon as one worker does; wait for both.
        wait_for(lambda: health(server)["workers"] == 2, "two workers listed")
        yield server


def test_workers_start_as_children_and_health_lists_them(two_workers: Running):
    body = health(two_workers)
    assert body["workers"] == 2
    assert len(set(body["worker_pids"])) == 2
    assert body["pid"] in body["worker_pids"]
    assert all(parent_of(pid) == two_workers.proc.pid for pid in body["worker_pids"])
    # Without the token: how many, not which.
    open_body = health(two_workers, token=None)
    assert open_body["workers"] == 2 and "worker_pids" not in open_body
    assert "2 worker processes" in two_workers.stderr()


def test_mcp_is_stateless_so_any_worker_answers(two_workers: Running):
    status, headers, _ = raw(
        "POST", two_workers.url, {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}, INIT
    )
    assert status == 200
    assert "mcp-session-id" not in {k.lower() for k in headers}

    async def calls():
        async with connect(two_workers.url) as client:
            out = []
            search = {"query": "where do sessions expire?", "repo": "app"}
            for _ in range(6):
                out.append(await client.call_tool("find_symbol", {"name": "SessionStore", "repo": "app"}))
                out.append(await client.call_tool("search_code", search))
            return out

    results = asyncio.run(calls())
    assert [r.is_error for r in results] == [False] * 12
    # (a "note:" paragraph may come first: the fixture is not a git repository)
    assert all("\nsrc/auth/session.py:" in "\n" + text_of(r) for r in results[1::2])


def test_killed_worker_is_replaced_and_stop_leaves_no_process(two_workers: Running):
    before = health(two_workers)["worker_pids"]
    victim = before[0]
    os.kill(victim, signal.SIGKILL)
    after = wait_for(
        lambda: (p := health(two_workers)["worker_pids"]) and victim not in p and len(p) == 2 and p,
        "the killed worker replaced",
    )
    assert before[1] in after
    replacement = next(p for p in after if p != victim)
    assert parent_of(replacement) == two_workers.proc.pid
    wait_for(lambda: f"worker {victim} ended; started worker {replacement}" in two_workers.stderr(), "log")

    async def call():
        async with connect(two_workers.url) as client:
            args = {"name": "parse_url", "repo": "app"}
            return [await client.call_tool("find_symbol", args) for _ in range(4)]

    assert [r.is_error for r in asyncio.run(call())] == [False] * 4

    two_workers.proc.send_signal(signal.SIGTERM)
    assert two_workers.proc.wait(timeout=30) == 0
    wait_for(lambda: not any(alive(pid) for pid in after), "every worker gone", timeout=15)


def test_workers_option_needs_http(repo: Path):
    from test_http import run_serve

    out = run_serve("--workers", "2", "--root", str(repo))
    assert out.returncode == 2
    assert out.stderr.strip() == "error: --workers only applies with --http (see `repolens serve --help`)"
