"""The MCP server over stdio, driven by the SDK's own client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters


def _params(root: Path, *, watch: bool = False) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}
    args = ["-m", "repolens", "serve", "--root", str(root), *([] if watch else ["--no-watch"])]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_stdio_session_lists_indexes_searches_reads_and_reports_errors(sample_repo: Path):
    root = sample_repo

    async def session() -> dict:
        out: dict = {}
        async with Client(_params(root), read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            out["tools"] = {t.name: t for t in tools.tools}
            out["index"] = await client.call_tool("index_repo", {})
            out["search"] = await client.call_tool("search_code", {"query": "where do sessions expire?"})
            out["read"] = await client.call_tool(
                "read_snippet", {"path": "src/web/forms.py", "start": 4, "end": 4}
            )
            out["bad_path"] = await client.call_tool(
                "read_snippet", {"path": "../../etc/passwd", "start": 1, "end": 2}
            )
            out["bad_query"] = await client.call_tool("search_code", {"query": ""})
            out["after_errors"] = await client.call_tool("search_code", {"query": "parseURL", "top_k": 2})
            out["symbol"] = await client.call_tool("find_symbol", {"name": "SessionStore"})
            out["focus"] = await client.call_tool("get_focused_context", {"query": "email is required"})
            out["files"] = await client.call_tool("search_code", {"query": "session expire", "mode": "files"})
        return out

    out = asyncio.run(session())
    tools = out["tools"]
    assert {
        "index_repo",
        "search_code",
        "read_snippet",
        "find_symbol",
        "get_focused_context",
        "get_chunk",
    } <= set(tools)
    assert "grep" in tools["search_code"].description
    props = tools["search_code"].input_schema["properties"]
    assert {"query", "mode", "top_k", "max_chars", "query_id", "include", "exclude"} <= set(props)

    assert not out["index"].is_error
    assert _text(out["index"]).startswith("indexed 5 files")
    assert not out["search"].is_error
    assert _text(out["search"]).startswith("src/auth/session.py:")
    assert _text(out["read"]).splitlines()[1] == "4: def handle_submit(form, store: SessionStore):"

    for key, needle in (("bad_path", "contains '..'"), ("bad_query", "query is empty")):
        result = out[key]
        assert result.is_error
        text = _text(result)
        assert needle in text and "\n" not in text and "Traceback" not in text

    assert not out["after_errors"].is_error  # the server survived the bad calls
    assert _text(out["symbol"]).splitlines()[1].startswith("src/auth/session.py:8-22 class SessionStore")
    assert "def handle_submit" in _text(out["focus"])
    assert _text(out["files"]).startswith("1. src/auth/session.py (score ")
    assert "parseURL" in _text(out["after_errors"]) or "parse_url" in _text(out["after_errors"])


def test_stdout_carries_protocol_json_only(sample_repo: Path):
    """Raw JSON-RPC over the pipes: every stdout line must parse as JSON."""
    import json
    import subprocess

    root = sample_repo
    msgs = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search_code", "arguments": {"query": "session"}},
        },
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "repolens", "serve", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in msgs))
        proc.stdin.flush()
        replies = []
        while not any(r.get("id") == 2 for r in replies):
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            replies.append(json.loads(line))  # every stdout line is protocol JSON
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    for line in proc.stdout.read().splitlines():
        json.loads(line)
    assert any(r.get("id") == 2 and not r["result"].get("isError") for r in replies)


def test_the_server_keeps_the_index_fresh_by_itself(sample_repo: Path):
    """With the watcher on (the default), a file saved while the server runs
    is found without anyone calling refresh_index."""
    import time

    async def session() -> str:
        async with Client(_params(sample_repo, watch=True), read_timeout_seconds=60) as client:
            await client.call_tool("search_code", {"query": "session"})
            (sample_repo / "src/web/late.py").write_text("def saved_while_serving():\n    return 1\n")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                text = _text(await client.call_tool("search_code", {"query": "saved_while_serving"}))
                if "src/web/late.py" in text:
                    return text
                await asyncio.sleep(0.2)
            return text

    assert "src/web/late.py" in asyncio.run(session())
