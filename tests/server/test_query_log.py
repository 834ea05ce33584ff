"""The optional query log: one JSON line per tool call, never failing a call."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from repolens.server.tools import build_server

FIELDS = {"time", "tool", "arguments", "latency_ms", "hits", "chars", "error"}


def call_all(server, calls: list[tuple[str, dict]]) -> list:
    async def session():
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(session())


def test_log_is_off_by_default(sample_repo: Path, tmp_path: Path, monkeypatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    server = build_server({"s": sample_repo})
    assert server.query_log is None
    call_all(server, [("search_code", {"query": "session"})])
    assert list(cwd.iterdir()) == []


def test_every_call_is_one_json_line(sample_repo: Path, tmp_path: Path):
    log = tmp_path / "q.jsonl"
    server = build_server({"s": sample_repo}, query_log=log)
    results = call_all(
        server,
        [
            ("search_code", {"query": "where do sessions expire?", "top_k": 2}),
            ("find_symbol", {"name": "SessionStore"}),
            ("read_snippet", {"path": "src/web/forms.py", "start": 1, "end": 3}),
            ("read_snippet", {"path": "../secret", "start": 1, "end": 3}),
            ("search_code", {"query": "y" * 5000}),
            ("no_such_tool", {}),
        ],
    )
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 6
    assert all(set(r) == FIELDS for r in records)
    search, symbol, read, refused, long_query, unknown = records
    assert search["tool"] == "search_code" and search["error"] is None
    assert search["arguments"] == {"query": "where do sessions expire?", "top_k": 2}
    assert search["hits"] == 2 and search["chars"] == len(results[0].content[0].text)
    assert symbol["hits"] >= 1 and read["hits"] == 3
    assert refused["hits"] is None and refused["error"].startswith("path '../secret' contains '..'")
    assert long_query["arguments"]["query"].endswith("... (5000 chars)")  # the log stays small
    assert len(long_query["arguments"]["query"]) < 400
    assert unknown["tool"] == "no_such_tool" and unknown["error"].startswith("unknown tool")
    assert all(r["latency_ms"] >= 0 and r["time"].endswith("+00:00") for r in records)


def test_an_unwritable_log_warns_once_and_calls_still_succeed(sample_repo: Path, tmp_path: Path, capfd):
    server = build_server({"s": sample_repo}, query_log=tmp_path / "missing-folder" / "q.jsonl")
    results = call_all(
        server, [("search_code", {"query": "session"}), ("find_symbol", {"name": "parse_url"})]
    )
    assert not any(r.is_error for r in results)
    err = capfd.readouterr().err
    assert err.count("cannot write the query log") == 1


def test_stdio_server_logs_to_the_file_named_by_the_environment(sample_repo: Path, tmp_path: Path):
    log = tmp_path / "stdio.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    env["REPOLENS_QUERY_LOG"] = str(log)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "repolens", "serve", "--root", str(sample_repo)], env=env
    )

    async def session():
        async with Client(params, read_timeout_seconds=60) as client:
            await client.call_tool("search_code", {"query": "parse_url"})

    asyncio.run(session())
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["tool"] == "search_code" and record["hits"] >= 1


def test_arguments_that_are_not_utf8_are_refused_in_one_line_and_logged(sample_repo: Path, tmp_path: Path):
    log = tmp_path / "q.jsonl"
    results = call_all(
        build_server({"s": sample_repo}, query_log=log),
        [
            ("search_code", {"query": "url_for \ud800"}),  # JSON can carry a lone surrogate
            ("search_code", {"query": "url_for", "include": ["src/**", "\udcff"]}),
        ],
    )
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert texts == [
        "argument 'query' of search_code is not valid UTF-8 ('url_for \\ud800'): send UTF-8 text",
        "argument 'include' of search_code is not valid UTF-8 ('\\xff'): send UTF-8 text",
    ]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["error"] for r in records] == texts
    assert not (sample_repo / ".repolens" / "queries").exists(), "nothing was searched or remembered"
