"""The stdio front: ``initialize`` answered before the MCP SDK loads, the
session handed to the SDK after, and the reply exactly the SDK's."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS

from repolens.errors import ServerStartError
from repolens.server.handshake import Reply, initialize_reply, sdk_versions
from repolens.server.lines import refusal
from repolens.server.record_tools import sdk_replies
from repolens.server.stdio import FRONT_ENV, _OneReply
from repolens.server.tool_list import RECORD_COMMAND, location_description, tools_list_reply
from repolens.server.tools import build_server


def _initialize(version: str = "2025-06-18", request_id: int | str = 1, **params: object) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
            **params,
        },
    }


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
# What the ``repo`` argument says with one repository served (nothing: no choice to make).
ONE = location_description(["app"], remote=False)


def _line(message: dict) -> str:
    return json.dumps(message) + "\n"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    return {**env, **extra}


def _serve(root: Path, env: dict[str, str], *, text: bool = True) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "repolens", "serve", "--root", str(root), "--no-watch"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
    )


def _exchange(
    root: Path, messages: list[dict] | bytes, until_id: object, env: dict[str, str]
) -> tuple[list[str], str]:
    """The server's stdout lines up to its reply to ``until_id`` (then stdin is
    closed and the server exits), and its stderr. ``messages`` go as JSON
    lines, or as the very bytes given."""
    stdin = messages if isinstance(messages, bytes) else "".join(_line(m) for m in messages).encode()
    proc = _serve(root, env, text=False)
    lines: list[str] = []
    try:
        proc.stdin.write(stdin)
        proc.stdin.flush()
        while not lines or json.loads(lines[-1]).get("id") != until_id:
            line = proc.stdout.readline().decode()
            if not line:
                break
            lines.append(line)
    finally:
        proc.stdin.close()
        lines += proc.stdout.read().decode().splitlines(keepends=True)
        err = proc.stderr.read().decode(errors="replace")
        proc.wait(timeout=60)
    assert proc.returncode == 0, err
    return lines, err


# Client shapes the front answers: what Claude Code, Codex, VS Code and the SDK send.
CLIENTS = [
    {},
    {"capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}},
    {"capabilities": {"elicitation": {}}, "clientInfo": {"name": "codex", "title": "Codex", "version": "1"}},
    {"capabilities": {"tasks": {"list": {}, "requests": {"sampling": {"createMessage": {}}}}}},
    {"capabilities": {"experimental": {"x": {}}, "extensions": {"y": {}}}},
]
VERSIONS = [*KNOWN_PROTOCOL_VERSIONS, "1999-01-01", "draft"]


def _sdk_replies(requests: list[bytes], root: Path) -> list[str]:
    """What the SDK's own stdio server writes for each request, alone on a
    fresh connection (the server as ``repolens serve`` builds it)."""
    replies = [sdk_replies(build_server(root), [request.decode()]) for request in requests]
    assert all(len(written) == 1 for written in replies), replies
    return [written[0] for written in replies]


def test_the_front_replies_exactly_as_the_sdk_for_every_protocol_version(tmp_path: Path):
    """An SDK upgrade that changes versions, capabilities or server info fails here."""
    requests = [_line(_initialize(v, **c)).encode() for v in VERSIONS for c in CLIENTS]
    requests.append(_line(_initialize(request_id="a-string id")).encode())
    front = [initialize_reply(r) for r in requests]
    assert all(front), "the front answers every plain initialize"
    assert [f.line for f in front] == _sdk_replies(requests, tmp_path)
    assert {json.loads(f.line)["result"]["protocolVersion"] for f in front} == set(
        HANDSHAKE_PROTOCOL_VERSIONS
    )


def test_the_front_reads_the_sdks_version_table():
    from mcp_types import version

    assert sdk_versions() == (version.HANDSHAKE_PROTOCOL_VERSIONS, version.LATEST_HANDSHAKE_VERSION)


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"\n",
        b"{not json\n",
        b"\xff\xfe\n",
        _line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),
        _line({**_initialize(), "id": True}).encode(),
        _line({**_initialize(), "id": 1.5}).encode(),
        _line({**_initialize(), "extra": 1}).encode(),
        _line(_initialize(_meta={"progressToken": 1})).encode(),
        _line(_initialize(capabilities={"roots": {"listChanged": "yes"}})).encode(),
        _line(_initialize(capabilities={"sampling": {"context": 1}})).encode(),
        _line(_initialize(clientInfo={"name": "t"})).encode(),
        _line(_initialize(clientInfo={"name": "t", "version": "0", "icons": []})).encode(),
        _line(_initialize(version=None)).encode(),  # type: ignore[arg-type]
    ],
)
def test_anything_but_a_plain_initialize_is_left_to_the_sdk(line: bytes):
    assert initialize_reply(line) is None


def test_a_client_sees_one_initialize_reply_and_the_session_works(indexed_sample):
    root, index_dir = indexed_sample
    search = {"name": "search_code", "arguments": {"query": "where do sessions expire?"}}
    messages = [
        _initialize(),
        INITIALIZED,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": search},
    ]
    lines, err = _exchange(root, messages, 3, _env(REPOLENS_INDEX_DIR=str(index_dir)))
    replies = [json.loads(line) for line in lines]  # stdout carries protocol JSON only
    assert [r.get("id") for r in replies] == [1, 2, 3]
    assert lines[0] == initialize_reply(_line(_initialize()).encode()).line
    assert "search_code" in {t["name"] for t in replies[1]["result"]["tools"]}
    assert not replies[2]["result"].get("isError")
    # outside git the reply starts with its best hit (status says the history leg is off)
    assert replies[2]["result"]["content"][0]["text"].startswith("src/auth/session.py:")
    assert "differs" not in err and "Traceback" not in err


def test_with_the_front_off_the_sdk_gives_the_same_reply(sample_repo: Path):
    on, _ = _exchange(sample_repo, [_initialize("2024-11-05")], 1, _env())
    off, _ = _exchange(sample_repo, [_initialize("2024-11-05")], 1, _env(**{FRONT_ENV: "0"}))
    assert on == off and len(on) == 1


@pytest.mark.parametrize(
    "first",
    [
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
        _initialize(clientInfo={"name": "t"}),  # refused by the SDK
    ],
    ids=["tools-list", "ping", "bad-initialize"],
)
def test_a_first_message_other_than_initialize_gets_the_sdks_answer(sample_repo: Path, first: dict):
    with_front, _ = _exchange(sample_repo, [first], first["id"], _env())
    without, _ = _exchange(sample_repo, [first], first["id"], _env(**{FRONT_ENV: "0"}))
    assert with_front == without and len(with_front) == 1


def test_bad_json_first_and_eof_get_the_same_answer_with_the_front_off(sample_repo: Path):
    for stdin in ("{not json\n" + _line(_initialize()), ""):
        runs = []
        for env in (_env(), _env(**{FRONT_ENV: "0"})):
            proc = subprocess.run(
                [sys.executable, "-m", "repolens", "serve", "--root", str(sample_repo), "--no-watch"],
                input=stdin,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            runs.append((proc.returncode, proc.stdout))
        assert runs[0] == runs[1], stdin


@pytest.fixture
def broken_sdk(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``mcp`` package fails to import (``mcp_types``,
    where the front reads the protocol versions, is intact)."""
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "__init__.py").write_text(
        "import sys\n"  # what the server has loaded when it first imports the SDK
        f"open({str(tmp_path / 'loaded.txt')!r}, 'w').write('\\n'.join(sorted(sys.modules)))\n"
        "raise ImportError('mcp is broken here')\n"
    )
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    return _env(PYTHONPATH=path)


def test_the_real_client_is_answered_before_the_sdk_loads(sample_repo: Path, broken_sdk: dict[str, str]):
    """The handshake succeeds and the tools are listed though the SDK never
    loads; then the server ends with one line on stderr and a non-zero exit."""
    args = ["-m", "repolens", "serve", "--root", str(sample_repo), "--no-watch"]
    params = StdioServerParameters(command=sys.executable, args=args, env=broken_sdk)
    seen: dict = {}

    async def session() -> None:
        async with Client(params, read_timeout_seconds=60, mode="legacy") as client:
            seen["server"] = client.server_info.name
            seen["version"] = client.protocol_version
            seen["tools"] = (await client.list_tools()).tools
            await client.call_tool("index_status", {})

    async def in_process() -> list:
        async with Client(build_server(sample_repo)) as client:
            return (await client.list_tools()).tools

    with pytest.raises(ExceptionGroup) as raised:
        asyncio.run(session())
    assert raised.group_contains(MCPError, match="Connection closed", depth=None)
    assert seen.pop("tools") == asyncio.run(in_process())
    assert seen == {"server": "repolens", "version": "2025-11-25"}


def test_an_sdk_failing_to_load_after_the_reply_ends_the_server_with_one_line(
    sample_repo: Path, broken_sdk: dict[str, str], tmp_path: Path
):
    proc = _serve(sample_repo, broken_sdk)
    try:
        proc.stdin.write(_line(_initialize()) + _line(INITIALIZED))
        proc.stdin.flush()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert out == initialize_reply(_line(_initialize()).encode()).line
    loaded = set((tmp_path / "loaded.txt").read_text().split())
    assert {"repolens.server.handshake", "repolens.server.stdio"} <= loaded
    assert not loaded & {"mcp_types", "pydantic", "starlette"}, "the front loads nothing of the SDK's"
    assert proc.returncode == 1
    assert err.splitlines() == [
        "error: the MCP server cannot start: ImportError: mcp is broken here: "
        "reinstall repolens with its dependencies (pip install repolens)"
    ]


def _through(lines: list[str], *answered: Reply) -> list[str]:
    """What the SDK's stdout writes ``lines`` as, after the front answered."""
    read, write = os.pipe()

    async def run() -> None:
        with open(write, "wb") as wire:
            out = _OneReply(wire, {reply.request_id: reply for reply in answered})
            for line in lines:
                await out.write(line)
                await out.flush()

    with open(read, encoding="utf-8") as got:
        anyio.run(run)
        return got.read().splitlines(keepends=True)


def test_the_sdks_reply_to_the_replayed_request_is_dropped_and_checked(caplog: pytest.LogCaptureFixture):
    answered = initialize_reply(_line(_initialize()).encode())
    note = '{"jsonrpc":"2.0","method":"notifications/message","params":{}}\n'
    other = '{"jsonrpc":"2.0","id":"1","result":{}}\n'  # not the same id: a string
    assert _through([note, answered.line, other, answered.line], answered) == [note, other, answered.line]

    with caplog.at_level(logging.WARNING, logger="repolens"):
        assert _through(['{"jsonrpc":"2.0","id":1,"result":{}}\n'], answered) == []
    assert "differs from the MCP SDK's" in caplog.text

    refusal = '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}\n'
    with pytest.raises(ServerStartError, match=r"refused the initialize request .*\(Invalid params\)"):
        _through([refusal], answered)

    listed = tools_list_reply(_bytes(TOOLS_LIST), ONE, "2025-11-25")
    assert _through([listed.line, answered.line, note], answered, listed) == [note]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="repolens"):  # the client has its list: the server goes on
        assert _through([refusal.replace('"id":1', '"id":2')], answered, listed) == []
    assert "reply to tools/list differs from the MCP SDK's" in caplog.text


def test_a_legacy_client_session_works_after_the_front(indexed_sample):
    """The real SDK client in the initialize handshake (as Claude Code, Codex
    and Cursor speak it): the front answers, the SDK serves the rest."""
    root, index_dir = indexed_sample
    args = ["-m", "repolens", "serve", "--root", str(root), "--no-watch"]
    env = _env(REPOLENS_INDEX_DIR=str(index_dir))
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def session() -> tuple[set[str], str]:
        async with Client(params, read_timeout_seconds=60, mode="legacy") as client:
            tools = await client.list_tools()
            found = await client.call_tool("search_code", {"query": "where do sessions expire?"})
        return {t.name for t in tools.tools}, found.content[0].text

    names, text = asyncio.run(session())
    assert {"search_code", "read_snippet", "index_repo"} <= names
    assert text.startswith("src/auth/session.py:")


# -- every line gets an answer ---------------------------------------------------
# A line the MCP SDK cannot read (not UTF-8, not JSON, no JSON-RPC message, a
# lone surrogate) gets a JSON-RPC error instead of silence, before the SDK
# loads (the first line, read by the front) and after the handover alike.

PING = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
NOT_RPC = "is no JSON-RPC 2.0 request, notification or response"
SURROGATE_CALL = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"search_code","arguments":{"query":"\\ud800"}}}\n'
)

DEEP = "Parse error: the JSON nests too deeply"


def _nested(request_id: int, depth: int) -> bytes:
    """A search whose query is a list nested ``depth`` deep."""
    query = "[" * depth + "]" * depth
    return (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"search_code","arguments":{{"query":{query}}}}}}}\n'
    ).encode()


# A line the SDK cannot read, and the reply it gets: (id, code, message).
BAD_LINES: list[tuple[bytes, tuple[object, int, str]]] = [
    (b"{not json\n", (None, -32700, "Parse error")),
    (b"\xff\xfe{}\n", (None, -32700, "Parse error: the line is not UTF-8 (byte 0)")),
    (b"   \n", (None, -32700, "Parse error")),
    (b"\n", (None, -32700, "Parse error")),
    (b"[]\n", (None, -32600, f"Invalid Request: an array {NOT_RPC}")),
    (b"5\n", (None, -32600, f"Invalid Request: a number {NOT_RPC}")),
    (b'{"a": 1}\n', (None, -32600, f"Invalid Request: an object {NOT_RPC}")),
    (b'{"jsonrpc":"2.0","id":7,"method":5}\n', (7, -32600, f"Invalid Request: an object {NOT_RPC}")),
    (
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
        (None, -32600, "Invalid Request: id must be a string or an integer"),
    ),
    (
        b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n',
        (None, -32600, "Invalid Request: id must be a string or an integer"),
    ),
    (
        SURROGATE_CALL,
        (2, -32602, "argument 'query' of search_code is not valid UTF-8 ('\\ud800'): send UTF-8 text"),
    ),
    # bytes that are not UTF-8 in a string: the id is read with them replaced
    (
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_snippet",'
        b'"arguments":{"path":"bad\xffname.py","start":1,"end":3}}}\n',
        (4, -32700, "Parse error: the line is not UTF-8 (byte 102)"),
    ),
    (
        b'{"id":"w\xffrd","jsonrpc":"2.0","method":"ping"}\n',
        (None, -32700, "Parse error: the line is not UTF-8 (byte 8)"),
    ),
    # deeper than the SDK reads (its id read where Python's JSON can), and deeper than that
    (_nested(5, 400), (5, -32700, DEEP)),
    (_nested(6, 900), (6, -32700, DEEP)),
    (_nested(7, 5000), (None, -32700, DEEP)),
]


def _bytes(message: dict) -> bytes:
    return _line(message).encode()


def _reply(request_id: object, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _replies(stdin: bytes, root: Path, env: dict[str, str]) -> tuple[list[dict], str]:
    """Every reply (parsed) up to the one to ``PING``, and stderr."""
    lines, err = _exchange(root, stdin, PING["id"], env)
    return [json.loads(line) for line in lines], err


@pytest.mark.parametrize("line,reply", BAD_LINES, ids=[repr(line[:24]) for line, _ in BAD_LINES])
def test_a_line_the_sdk_cannot_read_is_refused_in_json_rpc_terms(line: bytes, reply: tuple):
    refused = refusal(line)
    assert refused is not None and json.loads(refused.reply) == _reply(*reply)


def test_lines_the_sdk_reads_pass_and_a_bad_notification_has_nobody_to_answer():
    for message in (_initialize(), INITIALIZED, PING, {"jsonrpc": "2.0", "id": "a", "result": {}}):
        assert refusal(_bytes(message)) is None
    refused = refusal(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\udfff"}}\n')
    assert refused is not None and refused.notification
    assert refused.reason == "a string in the request is not valid UTF-8 ('\\udfff'): send UTF-8 text"


@pytest.mark.parametrize("front", ["1", "0"], ids=["front", "front-off"])
def test_every_bad_line_is_answered_before_the_handshake(sample_repo: Path, front: str):
    """The first line is read by the front, before the SDK loads; the rest after."""
    bad = b"".join(line for line, _ in BAD_LINES)
    stdin = bad + _bytes(_initialize()) + _bytes(INITIALIZED) + _bytes(PING)
    replies, _ = _replies(stdin, sample_repo, _env(**{FRONT_ENV: front}))
    assert replies[: len(BAD_LINES)] == [_reply(*reply) for _, reply in BAD_LINES]
    assert [r.get("id") for r in replies[len(BAD_LINES) :]] == [1, 99]
    assert "result" in replies[-2] and replies[-1]["result"] == {}


def test_every_bad_line_is_answered_after_the_handover(sample_repo: Path):
    bad = b"".join(line for line, _ in BAD_LINES)
    notification = b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\udfff"}}\n'
    stdin = _bytes(_initialize()) + _bytes(INITIALIZED) + bad + notification + _bytes(PING)
    replies, err = _replies(stdin, sample_repo, _env())
    assert replies[0]["id"] == 1 and "result" in replies[0]
    assert replies[1:-1] == [_reply(*reply) for _, reply in BAD_LINES]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert (
        "repolens: a notification the MCP SDK cannot read was dropped: "
        "a string in the request is not valid UTF-8 ('\\udfff'): send UTF-8 text"
    ) in err.splitlines()


# -- tools/list answered by the front ----------------------------------------------
# The recorded tool list (repolens.server.tool_list) answers a plain tools/list
# after the front's initialize, before the SDK loads: byte for byte the SDK's.

TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
TOOLS_LISTS = [TOOLS_LIST, {**TOOLS_LIST, "params": {}}, {**TOOLS_LIST, "id": "list-7"}]


@pytest.mark.parametrize("served", [["app"], ["app", "lib@develop"], []], ids=["one", "several", "none"])
def test_the_front_lists_the_tools_exactly_as_the_sdk(make_repo, served: list[str]):
    """For every protocol version and the shapes clients send; the ``repo``
    argument described for the repositories served (or none). A tool changed
    without recording the list again fails here."""
    roots = {name: make_repo(name=name.replace("@", "-")) for name in served} or None
    for version in [*HANDSHAKE_PROTOCOL_VERSIONS, "1999-01-01"]:
        for request in TOOLS_LISTS:
            messages = [_initialize(version), INITIALIZED, request]
            sdk = sdk_replies(build_server(roots), [_line(m) for m in messages])[-1]
            front = initialize_reply(_bytes(_initialize(version)))
            listed = tools_list_reply(
                _bytes(request), location_description(served, remote=False), front.protocol_version
            )
            assert listed is not None, f"no answer to {request} in {version}: run {RECORD_COMMAND}"
            assert listed.line == sdk, f"the recorded tool list is not the SDK's: run {RECORD_COMMAND}"


def test_the_repo_description_names_a_root_missing_at_start(make_repo, tmp_path: Path):
    """QA: the ``repo`` argument's description named the roots served at start;
    one whose folder was missing then (served once it is back) was left out
    for good, while list_repositories named it: with one other served, the
    tool list described no choice at all. It names every configured root,
    the missing one marked, over stdio (the real client, the front's list and
    the SDK's alike) and before and after the folder is back."""
    app = make_repo(name="app")
    gone = tmp_path / "gone"
    config = tmp_path / "server.toml"
    config.write_text(f'[roots]\napp = "{app}"\ngone = "{gone}"\n')
    args = ["-m", "repolens", "serve", "--config", str(config), "--no-watch"]
    params = StdioServerParameters(command=sys.executable, args=args, env=_env(), cwd=str(tmp_path))

    async def session() -> tuple[list[str], str]:
        async with Client(params, read_timeout_seconds=60) as client:
            before = await client.list_tools()  # (the front answers it while the SDK loads)
            make_repo(name="gone")  # the folder is back
            listing = await client.call_tool("list_repositories", {})
            after = await client.list_tools()  # (the SDK answers it)
        tools = [t.input_schema["properties"] for t in (*before.tools, *after.tools)]
        said = [p["repo"].get("description", "") for p in tools if "repo" in p]
        return said, "\n".join(c.text for c in listing.content)

    said, listing = asyncio.run(session())
    assert listing.startswith("2 repositories served; showing 1-2\n")
    assert set(said) == {"One of: app, gone (missing at start); or a path."}
    request = [_line(m) for m in (_initialize(), INITIALIZED, TOOLS_LIST)]
    sdk = sdk_replies(build_server({"app": app}, missing={"gone": gone}), request)[-1]
    listed = tools_list_reply(
        _bytes(TOOLS_LIST), location_description(["app"], remote=False, missing=["gone"]), "2025-06-18"
    )
    assert listed is not None and listed.line == sdk


@pytest.mark.parametrize(
    "line",
    [
        _bytes({**TOOLS_LIST, "params": {"cursor": "x"}}),
        _bytes({**TOOLS_LIST, "params": {"_meta": {"progressToken": 1}}}),
        _bytes({**TOOLS_LIST, "params": []}),
        _bytes({**TOOLS_LIST, "id": True}),
        _bytes({**TOOLS_LIST, "id": 1.5}),
        _bytes({**TOOLS_LIST, "id": None}),
        _bytes({**TOOLS_LIST, "extra": 1}),
        _bytes({**TOOLS_LIST, "jsonrpc": "1.0"}),
        _bytes({"jsonrpc": "2.0", "method": "tools/list"}),
        _bytes({**TOOLS_LIST, "method": "prompts/list"}),
        b"{not json\n",
        b"",
    ],
)
def test_anything_but_a_plain_tools_list_is_left_to_the_sdk(line: bytes):
    assert tools_list_reply(line, ONE, "2025-11-25") is None


def test_a_protocol_version_the_recording_was_not_made_for_is_left_to_the_sdk():
    assert tools_list_reply(_bytes(TOOLS_LIST), ONE, "2026-07-28") is None


def test_over_stdio_the_tool_list_is_the_same_with_the_front_on_and_off(sample_repo: Path):
    messages = [_initialize(), INITIALIZED, TOOLS_LIST, {**TOOLS_LIST, "id": 3}]
    on, err = _exchange(sample_repo, messages, 3, _env())
    off, _ = _exchange(sample_repo, messages, 3, _env(**{FRONT_ENV: "0"}))
    assert on == off and [json.loads(line)["id"] for line in on] == [1, 2, 3]
    assert "differs" not in err


# -- a line that nests deeply, at every moment of start-up ---------------------
# Before the SDK loads (the first line, read by the front), while it loads
# (the front keeps the lines and answers tools/list), after (the SDK's event
# loop takes each line): the line is refused, and the next call answered.


@pytest.fixture
def gated_sdk(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment where importing ``mcp`` waits until the returned file
    exists: the moment the SDK loads is the test's to choose."""
    gate = tmp_path / "open"
    (tmp_path / "sitecustomize.py").write_text(
        "import os, sys, time\n"
        "class _Gate:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp':\n"
        f"            while not os.path.exists({str(gate)!r}):\n"
        "                time.sleep(0.01)\n"
        "            sys.meta_path.remove(self)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _Gate())\n"
    )
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    return _env(PYTHONPATH=path), gate


class _Session:
    """A ``repolens serve`` process spoken to line by line; each reply
    awaited for at most a minute (a deaf server fails the test, not hangs it)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        import queue
        import threading

        self.proc = _serve(root, env, text=False)
        self.replies: queue.Queue[bytes] = queue.Queue()
        self.err: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.err_reader = threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True)
        self.err_reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.replies.put(line)
        self.replies.put(b"")

    def send(self, *lines: bytes) -> None:
        self.proc.stdin.write(b"".join(lines))
        self.proc.stdin.flush()

    def reply(self) -> dict:
        import queue

        try:
            line = self.replies.get(timeout=60)
        except queue.Empty:
            pytest.fail("the server stopped answering")
        assert line, "the server ended"
        return json.loads(line)

    def close(self) -> str:
        """Close stdin; the server must end (a deaf one never sees the EOF); its stderr."""
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("the server did not end at the end of its input")
        self.err_reader.join(timeout=30)
        err = b"".join(self.err).decode(errors="replace")
        assert self.proc.returncode == 0, err
        return err


DEEP_LINES = [_nested(5, 400), _nested(6, 900), _nested(7, 5000)]
STATUS = {
    "jsonrpc": "2.0",
    "id": 50,
    "method": "tools/call",
    "params": {"name": "index_status", "arguments": {}},
}


def _refused(session: _Session, lines: list[bytes]) -> None:
    """Each of ``lines`` refused in turn (as BAD_LINES says), then the next call answered."""
    expected = dict(BAD_LINES)
    for line in lines:
        assert session.reply() == _reply(*expected[line])
    answered = session.reply()
    assert answered["id"] == STATUS["id"] and "result" in answered, answered


@pytest.mark.parametrize("moment", ["before", "during", "after"])
def test_a_deeply_nested_line_never_makes_the_server_deaf(
    indexed_sample, gated_sdk: tuple[dict[str, str], Path], moment: str
):
    root, _ = indexed_sample
    env, gate = gated_sdk
    session = _Session(root, env)
    try:
        if moment == "before":  # the front reads it as the first line
            session.send(DEEP_LINES[-1], _bytes(_initialize()))
            gate.touch()
            assert session.reply() == _reply(*dict(BAD_LINES)[DEEP_LINES[-1]])
            assert session.reply()["id"] == 1
            session.send(_bytes(INITIALIZED), _bytes(STATUS))
            _refused(session, [])
        elif moment == "during":  # while the SDK loads: the front still lists the tools
            session.send(_bytes(_initialize()), *DEEP_LINES, _bytes(TOOLS_LIST))
            assert session.reply()["id"] == 1
            assert session.reply()["id"] == TOOLS_LIST["id"]
            gate.touch()
            session.send(_bytes(INITIALIZED), _bytes(STATUS))
            _refused(session, DEEP_LINES)
        else:  # after: the SDK's event loop has answered a call
            gate.touch()
            session.send(_bytes(_initialize()), _bytes(INITIALIZED), _bytes(PING))
            assert session.reply()["id"] == 1
            assert session.reply() == {"jsonrpc": "2.0", "id": PING["id"], "result": {}}
            session.send(*DEEP_LINES, _bytes(STATUS))
            _refused(session, DEEP_LINES)
    finally:
        err = session.close()
    assert "Traceback" not in err


def test_after_any_bad_line_the_next_call_is_answered(indexed_sample, gated_sdk: tuple[dict[str, str], Path]):
    root, _ = indexed_sample
    env, gate = gated_sdk
    gate.touch()
    session = _Session(root, env)
    try:
        session.send(_bytes(_initialize()), _bytes(INITIALIZED), _bytes(PING))
        assert [session.reply()["id"], session.reply()["id"]] == [1, PING["id"]]
        for line, _ in BAD_LINES:
            session.send(line, _bytes(STATUS))
            _refused(session, [line])
    finally:
        err = session.close()
    assert "Traceback" not in err
