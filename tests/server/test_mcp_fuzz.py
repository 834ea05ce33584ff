"""Generated tool calls through the SDK client, in-process: the server never
crashes, every error is one line, and no reply exceeds its budget."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

from mcp import Client

from repolens.server.calls import DEFAULT_BUDGETS, ERROR_MAX_CHARS, MAX_BUDGET, MIN_BUDGET
from repolens.server.tools import build_server

SEED = 20260601
CALLS_PER_SESSION = 600  # two sessions (local and remote): 1,200 calls
MEGABYTE = "x" * 1_000_000

STRINGS: list[Any] = [
    "",
    " ",
    "session",
    "where do sessions expire?",
    "SessionStore",
    "handle_submit",
    "parseURL",
    "src/auth/session.py",
    "src",
    "src/",
    "./src/web",
    "docs/guide.md",
    "../etc/passwd",
    "/etc/passwd",
    "%2e%2e%2f%2e%2e%2fetc",
    "..\\..\\windows",
    "src/auth/session.py\x00.txt",
    "a\nb\r\nc",
    "\t",
    "ünïcödé façade",
    "日本語のテキスト",
    "🙂" * 50,
    "\u202eevil\u202c",
    "e\u0301\u0301\u0301",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "' OR 1=1 --",
    "$(rm -rf /)",
    "{}",
    "[]",
    "null",
    "*",
    "**/*.py",
    "[",
    "~",
    "packet",
    "files",
    "json",
    "PACKET",
    "function",
    "class",
    "python",
    "0123456789abcdef",
    "x" * 10_000,
    "\ud800",  # a lone surrogate: JSON can carry it
    "\udfff lone low",
]
NUMBERS: list[Any] = [
    0,
    1,
    -1,
    2,
    5,
    20,
    50,
    51,
    199,
    200,
    201,
    300,
    301,
    4000,
    12000,
    MAX_BUDGET,
    MAX_BUDGET + 1,
    2**31,
    2**63,
    -(2**63),
    10**30,
    -(10**30),
    1.5,
    -0.0,
    1e308,
    float("inf"),
    float("nan"),
]
OTHERS: list[Any] = [
    None,
    True,
    False,
    [],
    {},
    ["src"],
    ["a", 1, None],
    {"a": 1},
    [["nested"]],
    ["x" * 5000] * 30,
]
GARBAGE_TOOLS = [
    "",
    "SEARCH_CODE",
    "search_code ",
    "search_code\n",
    "x" * 1000,
    "../index_repo",
    "🙂",
    "__init__",
]


def random_value(rng: random.Random) -> Any:
    pool = rng.choice((STRINGS, STRINGS, NUMBERS, NUMBERS, OTHERS))
    return rng.choice(pool)


def base_arguments(tool: str, chunk_id: str, rng: random.Random) -> dict[str, Any]:
    """A valid call to start from, so that mutations hit real code paths."""
    return {
        "search_code": {"query": rng.choice(["session expire", "parse url", "email is required"])},
        "read_snippet": {"path": "src/auth/session.py", "start": 1, "end": rng.choice([5, 24, 300])},
        "find_symbol": {"name": rng.choice(["SessionStore", "handle_submit", "parse"])},
        "get_focused_context": {"query": "session"},
        "get_chunk": {"chunk_id": chunk_id},
        "index_repo": {},
        "refresh_index": {},
        "index_status": {},
        "list_repositories": {},
        "compare_branches": {"paths": rng.choice([["src"], ["."], ["src/auth/session.py"]])},
        "run_tests": {"runner": "pytest", "args": rng.choice([[], ["-k", "nothing"], ["src"]])},
        "search_history": rng.choice([{"query": "session expire"}, {"path": "src/auth/session.py"}]),
        "find_references": {"target": rng.choice(["SessionStore", "src/auth/session.py:5", "parse"])},
        "impact": {
            "target": rng.choice(["src/auth/session.py:11-15", "src/auth/session.py", "SessionStore"])
        },
    }[tool]


# Tools that do heavy work (index, run a test suite) are called now and then,
# not at the rate of the cheap ones.
HEAVY = ("index_repo", "refresh_index", "run_tests")


def generate(
    rng: random.Random, tools: dict[str, list[str]], chunk_id: str, n: int
) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    names = [t for t in tools if t not in HEAVY]
    for i in range(n):
        roll = rng.random()
        if roll < 0.05:
            calls.append((rng.choice(GARBAGE_TOOLS), {"query": "x"}))
            continue
        tool = rng.choice(HEAVY) if roll < 0.08 else rng.choice(names)
        args = base_arguments(tool, chunk_id, rng)
        params = tools[tool]
        for _ in range(rng.choice((0, 1, 1, 2, 3))):
            args[rng.choice(params)] = random_value(rng)
        if rng.random() < 0.08 and args:
            args.pop(rng.choice(list(args)))  # a missing (maybe required) argument
        if rng.random() < 0.05:
            args[rng.choice(["extra", "ROOT", "max_char", "query "])] = random_value(rng)
        if i % 40 == 7:  # about 30 one-megabyte strings
            args[rng.choice(params) if params else "query"] = MEGABYTE
        if rng.random() < 0.15:
            args["max_chars"] = rng.choice([200, 201, 250, 500, 1000, 3000])
        calls.append((tool, args))
    return calls


def budget_of(tool: str, args: dict[str, Any]) -> int:
    """The budget a call asked for, or the tool's default when it asked for none (or an invalid one)."""
    value = args.get("max_chars")
    if isinstance(value, int) and not isinstance(value, bool) and MIN_BUDGET <= value <= MAX_BUDGET:
        return value
    return DEFAULT_BUDGETS.get(tool, 4000)


def fits_budget(tool: str, args: dict[str, Any], result: Any) -> bool:
    """A reply within the budget its call asked for. A JSON search reply is
    valid JSON whose budget is its evidence (the hits' text), not its keys."""
    text = result.content[0].text
    budget = budget_of(tool, args)
    if tool == "search_code" and args.get("mode") == "json" and not result.is_error:
        return sum(len(h["text"]) for h in json.loads(text)["hits"]) <= budget
    return len(text) <= budget


def describe(tool: str, args: dict[str, Any]) -> str:
    shown = {k: (v[:60] + "..." if isinstance(v, str) and len(v) > 60 else v) for k, v in args.items()}
    return f"{tool} {json.dumps(shown, default=repr)[:300]}"


async def fuzz_session(server, rng: random.Random) -> dict[str, int]:
    stats = {"calls": 0, "errors": 0, "ok": 0}
    async with Client(server) as client:
        listed = (await client.list_tools()).tools
        tools = {t.name: sorted(t.input_schema.get("properties", {})) for t in listed}
        where = "repo" if "repo" in tools["search_code"] else "root"
        first = await client.call_tool("search_code", {"query": "session", "mode": "json"})
        chunk_id = json.loads(first.content[0].text)["hits"][0]["chunk_ids"][0]
        for tool, args in generate(rng, tools, chunk_id, CALLS_PER_SESSION):
            label = describe(tool, args)
            try:
                result = await client.call_tool(tool, args)
            except Exception as exc:  # the session must answer every call with a result
                raise AssertionError(f"call raised {exc!r}: {label}") from exc
            stats["calls"] += 1
            assert len(result.content) == 1, label
            text = result.content[0].text
            assert fits_budget(tool, args, result), f"{len(text)} > {budget_of(tool, args)}: {label}"
            if result.is_error:
                stats["errors"] += 1
                assert "\n" not in text and "\r" not in text, f"{text!r}: {label}"
                assert "Traceback" not in text and "Error executing tool" not in text, f"{text!r}: {label}"
                assert text.strip() and len(text) <= ERROR_MAX_CHARS, label
            else:
                stats["ok"] += 1
        after = await client.call_tool("search_code", {"query": "where do sessions expire?", where: None})
        assert not after.is_error and after.content[0].text.startswith("src/auth/session.py:")
    return stats


def test_a_thousand_generated_calls_never_crash_the_server(sample_repo: Path, tmp_path: Path, monkeypatch):
    # "~" is among the generated roots, and a local caller may name any folder:
    # it must be an empty home here, not the developer's (which would be indexed).
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    local = build_server({"sample": sample_repo})
    remote = build_server({"sample": sample_repo}, remote=True)
    rng = random.Random(SEED)
    stats = [asyncio.run(fuzz_session(server, rng)) for server in (local, remote)]
    calls = sum(s["calls"] for s in stats)
    assert calls >= 1000
    # both outcomes are exercised in earnest
    assert all(s["ok"] > 100 and s["errors"] > 100 for s in stats), stats


def test_validation_errors_are_one_line_and_name_the_fields(sample_repo: Path):
    async def session():
        async with Client(build_server({"sample": sample_repo})) as client:
            return (
                await client.call_tool("read_snippet", {"path": "x", "start": "one", "end": [1]}),
                await client.call_tool("read_snippet", {"path": "src/auth/session.py"}),
                await client.call_tool("search_code", {"query": "x", "top_k": "many", "max_chars": "lots"}),
                await client.call_tool("nope", {}),
                await client.call_tool("search_code", {"query": "x", "max_char": 300}),
            )

    wrong_types, missing, two, unknown, typo = (r.content[0].text for r in asyncio.run(session()))
    assert wrong_types == (
        "invalid arguments for read_snippet: start: expected an integer, got a string; "
        "end: expected an integer, got an array"
    )
    assert missing == "invalid arguments for read_snippet: start: missing; end: missing"
    assert two.startswith("invalid arguments for search_code: top_k: ") and "max_chars: " in two
    assert unknown.startswith("unknown tool 'nope': known tools are index_repo, refresh_index, index_status")
    assert typo.startswith("unknown argument 'max_char' for search_code: known arguments are ")


def test_read_snippet_reply_budget_names_the_follow_up_read(make_repo):
    lines = [f"line {i} " + "y" * 80 for i in range(1, 301)]
    root = make_repo({"big.txt": "\n".join(lines) + "\n"})

    async def session():
        async with Client(build_server({"r": root})) as client:
            return (
                await client.call_tool("read_snippet", {"path": "big.txt", "start": 1, "end": 300}),
                await client.call_tool(
                    "read_snippet", {"path": "big.txt", "start": 1, "end": 300, "max_chars": 500}
                ),
                await client.call_tool(
                    "read_snippet", {"path": "big.txt", "start": 1, "end": 2, "max_chars": 50}
                ),
            )

    default, small, invalid = asyncio.run(session())
    text = default.content[0].text
    assert len(text) <= 12000
    assert text.splitlines()[-1].startswith("... (truncated at 12000 chars; use read_snippet big.txt ")
    small_lines = small.content[0].text.splitlines()
    assert len(small.content[0].text) <= 500
    assert small_lines[0] == "big.txt:1-300 (of 300 lines)"
    assert small_lines[-1] == "... (truncated at 500 chars; use read_snippet big.txt 5 300 to expand)"
    assert small_lines[-2].startswith("4: line 4 ")
    assert invalid.is_error
    assert invalid.content[0].text == "max_chars must be between 200 and 1000000, got 50"


def test_a_first_line_cut_at_a_small_budget_names_a_read_that_works(make_repo):
    """The marker of a first line that does not fit a read of many lines
    names the budget that shows it: never one under the smallest a call may
    ask for (200), which the named read would refuse."""
    lines = ["x = '" + "a" * 120 + "'"] + [f"y{i} = {i}" for i in range(2, 301)]
    root = make_repo({"wide.py": "\n".join(lines) + "\n"})

    async def session():
        async with Client(build_server({"r": root})) as client:
            cut = await client.call_tool(
                "read_snippet", {"path": "wide.py", "start": 1, "end": 300, "max_chars": 200}
            )
            marker = cut.content[0].text.splitlines()[-1]
            read = re.fullmatch(
                r"... \(line 1 is 126 chars; read_snippet (\S+) (\d+) (\d+) with max_chars=(\d+) shows it\)",
                marker,
            )
            assert read, marker
            path, start, end, budget = read.groups()
            follow = {"path": path, "start": int(start), "end": int(end), "max_chars": int(budget)}
            return await client.call_tool("read_snippet", follow)

    shown = asyncio.run(session())
    assert not shown.is_error, shown.content[0].text
    assert shown.content[0].text.splitlines() == ["wide.py:1-1 (of 300 lines)", "1: " + lines[0]]


def test_json_search_reply_is_the_packet_as_valid_json_at_any_budget(sample_repo: Path):
    budgets = (200, 400, 1000, 3000)
    query = "session store expire form"

    async def session():
        async with Client(build_server({"s": sample_repo})) as client:
            return [
                [
                    await client.call_tool("search_code", {"query": query, "mode": mode, "max_chars": n})
                    for mode in ("packet", "json")
                ]
                for n in budgets
            ]

    for n, (packet, as_json) in zip(budgets, asyncio.run(session()), strict=True):
        assert not packet.is_error and not as_json.is_error
        data = json.loads(as_json.content[0].text)  # never cut: cut JSON is no JSON
        assert "query_id" in data
        texts = [h["text"] for h in data["hits"]]
        assert texts and sum(map(len, texts)) <= n
        assert packet.content[0].text.startswith("\n\n".join(texts))


def sendable(args: dict[str, Any]) -> bool:
    try:
        json.dumps(args, allow_nan=False).encode("utf-8")
        json.dumps(args, ensure_ascii=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True


def test_generated_calls_over_stdio_keep_one_session_alive(sample_repo: Path, tmp_path: Path):
    """The same generator over the real transport (JSON framing, one subprocess)."""
    import os
    import sys

    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    (tmp_path / "home").mkdir()
    env["HOME"] = str(tmp_path / "home")  # "~" is among the roots: an empty home, not the developer's
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "repolens", "serve", "--root", str(sample_repo)], env=env
    )
    rng = random.Random(SEED + 1)

    async def session() -> int:
        calls = 0
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name: sorted(t.input_schema["properties"]) for t in (await client.list_tools()).tools}
            first = await client.call_tool("search_code", {"query": "session", "mode": "json"})
            chunk_id = json.loads(first.content[0].text)["hits"][0]["chunk_ids"][0]
            for tool, args in generate(rng, tools, chunk_id, 300):
                if not sendable(args):
                    continue  # the client cannot encode it (NaN, infinity, lone surrogates)
                label = describe(tool, args)
                result = await client.call_tool(tool, args)
                text = result.content[0].text
                assert fits_budget(tool, args, result), label
                if result.is_error:
                    assert "\n" not in text and "Error executing tool" not in text, f"{text!r}: {label}"
                calls += 1
            assert not (await client.call_tool("search_code", {"query": "parse_url"})).is_error
        return calls

    assert asyncio.run(session()) >= 250
