"""MCP over streamable HTTP: the real server (uvicorn in a subprocess), driven by
the SDK's client and by raw HTTP requests."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import SAMPLE_FILES, run_git, wait_for, write_tree_files
from repolens.branches.roots import parse_root_spec
from repolens.errors import ConfigError, RootError
from repolens.server.config import load_serve_config
from repolens.server.web import UVICORN_OPTIONS, check_auth_policy, is_loopback

TOKEN = "test-token-0123456789abcdef"
SECRET = "TOP-SECRET-VALUE-42"
ENV_SECRET = "ENV-SECRET-VALUE-17"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    env.update(extra or {})
    return env


@dataclass
class Running:
    proc: subprocess.Popen
    base: str
    log: Path

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def running_server(args: list[str], env: dict[str, str], log: Path, port: int) -> Iterator[Running]:
    """``repolens serve --http ARGS`` on ``port``: ready when /health answers; always stopped."""
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "repolens", "serve", "--http", "--port", str(port), *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    server = Running(proc, f"http://127.0.0.1:{port}", log)
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"server exited with {proc.returncode}: {server.stderr()}")
            try:
                with urllib.request.urlopen(f"{server.base}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"server not ready after 90 s: {server.stderr()}")
            time.sleep(0.2)
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


def raw(method: str, url: str, headers: dict[str, str] | None = None, body: bytes | None = None):
    """(status, headers, body) of one plain HTTP request."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@asynccontextmanager
async def connect(url: str, token: str | None = TOKEN) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
    ):
        yield client


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def sample_repos(base: Path, names: tuple[str, ...]) -> dict[str, Path]:
    """A git repository of the sample files under ``base`` for each name, by name."""
    gitconfig = base / "gitconfig"
    gitconfig.write_text("")
    repos = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for name in names:
            root = base / name
            root.mkdir()
            run_git(root, "init", "-q", "-b", "main")
            write_tree_files(root, SAMPLE_FILES)
            run_git(root, "add", "-A")
            run_git(root, "commit", "-q", "-m", "initial")
            repos[name] = root
    return repos


@dataclass
class Served:
    server: Running
    root: Path
    other: Path
    outside: Path
    query_log: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Two repositories (app, other) behind a token; a secret outside app, and
    symlinks inside app that point at it."""
    base = tmp_path_factory.mktemp("http")
    repos = sample_repos(base, ("app", "other"))
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    root = repos["app"]
    (root / "link_to_secret").symlink_to(outside / "secret.txt")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    (root / "src" / "link_up").symlink_to(outside / "secret.txt")
    write_tree_files(root, {".env": f"TOKEN={ENV_SECRET}\n", "config/id_rsa": f"{ENV_SECRET}\n"})
    log = base / "queries.jsonl"
    env = server_env({"REPOLENS_TOKEN": TOKEN})
    args = ["--root", f"app={root}", "--root", f"other={repos['other']}", "--query-log", str(log)]
    with running_server(args, env, base / "server.err", free_port()) as server:
        yield Served(server, root, repos["other"], outside, log)


# -- auth -------------------------------------------------------------------------


INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
).encode()
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_health_is_open_and_names_repositories_only_with_the_token(served: Served):
    status, _, body = raw("GET", f"{served.server.base}/health")
    assert status == 200
    data = json.loads(body)
    # Workers: one per core by default (tests/server/test_http_workers.py).
    assert data == {"status": "ok", "version": data["version"], "repositories": 2, "workers": data["workers"]}
    assert data["workers"] >= 1
    status, _, body = raw("GET", f"{served.server.base}/health", {"Authorization": f"Bearer {TOKEN}"})
    assert json.loads(body)["names"] == ["app", "other"]


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer wrong-token-0123456789abc",
        f"Bearer {TOKEN}x",
        f"Bearer {TOKEN[:-1]}",
        f"Basic {TOKEN}",
        TOKEN,
        f"Bearer  {TOKEN[::-1]}",
    ],
)
def test_missing_or_wrong_token_gets_a_bare_401(served: Served, authorization: str | None):
    headers = dict(MCP_HEADERS)
    if authorization is not None:
        headers["Authorization"] = authorization
    for method, path, body in (("POST", "/mcp", INIT), ("GET", "/mcp", None), ("GET", "/elsewhere", None)):
        status, reply_headers, reply = raw(method, served.server.base + path, headers, body)
        assert status == 401, (method, path)
        assert reply == b""
        assert {k.lower(): v for k, v in reply_headers.items()}["www-authenticate"] == "Bearer"


def test_right_token_reaches_mcp_and_the_scheme_is_case_insensitive(served: Served):
    for scheme in ("Bearer", "bearer"):
        headers = {**MCP_HEADERS, "Authorization": f"{scheme} {TOKEN}"}
        status, _, body = raw("POST", served.server.url, headers, INIT)
        assert status == 200, body
        assert b'"serverInfo"' in body


def test_a_body_the_sdk_cannot_read_gets_the_json_rpc_error_stdio_gives(served: Served):
    """Not a multi-line -32602 naming pydantic's models, nor no answer at all
    (a boolean id); the same error lines as over stdio (tests/server/test_stdio_lines.py)."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    surrogate = (
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
        b'"params":{"name":"search_code","arguments":{"query":"\\ud800","repo":"app"}}}'
    )
    not_rpc = "is no JSON-RPC 2.0 request, notification or response"
    for body, (request_id, code, message) in (
        (b"{not json", (None, -32700, "Parse error")),
        (b"[]", (None, -32600, f"Invalid Request: an array {not_rpc}")),
        (b'{"a": 1}', (None, -32600, f"Invalid Request: an object {not_rpc}")),
        (
            b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
            (None, -32600, "Invalid Request: id must be a string or an integer"),
        ),
        (
            surrogate,
            (2, -32602, "argument 'query' of search_code is not valid UTF-8 ('\\ud800'): send UTF-8 text"),
        ),
    ):
        status, _, reply = raw("POST", served.server.url, headers, body)
        assert status == 400, body
        assert json.loads(reply) == {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": code, "message": message},
        }
    status, _, reply = raw("POST", served.server.url, headers, INIT)  # a readable body reaches the SDK whole
    assert status == 200 and b'"serverInfo"' in reply


def test_dns_rebinding_host_is_refused_on_loopback(served: Served):
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"}
    status, _, _ = raw("POST", served.server.url, headers, INIT)
    assert status == 421
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}
    status, _, _ = raw("POST", served.server.url, headers, INIT)
    assert status == 403
    # a loopback name without a port (a client of port 80 sends one) is loopback still, as the page says
    for name in ("localhost", "127.0.0.1"):
        headers = {
            **MCP_HEADERS,
            "Authorization": f"Bearer {TOKEN}",
            "Host": name,
            "Origin": f"http://{name}",
        }
        assert raw("POST", served.server.url, headers, INIT)[0] == 200, name


def test_a_host_name_in_capitals_is_the_same_name_to_mcp_and_the_page(served: Served):
    """Host names are case-insensitive (RFC 9110): ``/mcp`` (the SDK's check,
    exact) refused ``LOCALHOST:PORT`` with 421 where the page answered it."""
    port = urlsplit(served.server.base).port
    auth = {"Authorization": f"Bearer {TOKEN}"}
    page = f"{served.server.base}/search?q=session&repo=app"
    for host, expected in (
        (f"LOCALHOST:{port}", 200),
        ("Localhost", 200),
        (f"127.0.0.1:{port}", 200),
        ("EVIL.example", 421),
        (f"LOCALHOST.evil.example:{port}", 421),
    ):
        headers = {**MCP_HEADERS, **auth, "Host": host, "Origin": f"http://{host}"}
        assert raw("POST", served.server.url, headers, INIT)[0] == expected, host
        assert raw("GET", page, {**auth, "Host": host})[0] == expected, host


def test_sdk_client_with_the_token_lists_searches_and_reads(served: Served):
    async def session():
        async with connect(served.server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            search = await client.call_tool(
                "search_code", {"query": "where do sessions expire?", "repo": "app"}
            )
            read = await client.call_tool(
                "read_snippet", {"path": "src/web/forms.py", "start": 4, "end": 4, "repo": "other"}
            )
            symbol = await client.call_tool("find_symbol", {"name": "SessionStore", "repo": "app"})
            return tools, search, read, symbol

    tools, search, read, symbol = asyncio.run(session())
    props = tools["read_snippet"].input_schema["properties"]
    assert "repo" in props and "root" not in props
    assert "app, other" in props["repo"]["description"]
    assert not search.is_error and text_of(search).startswith("src/auth/session.py:")
    assert text_of(read).splitlines()[1] == "4: def handle_submit(form, store: SessionStore):"
    assert "class SessionStore" in text_of(symbol)


def test_arguments_are_taken_at_their_word_over_http(served: Served):
    """A JSON-looking string stays a string (``path="null"`` names a path, it
    does not drop the filter); a boolean is no integer, a digit string no budget."""

    async def session():
        async with connect(served.server.url) as client:
            return (
                await client.call_tool("search_code", {"query": "session", "repo": "app", "path": "null"}),
                await client.call_tool("search_code", {"query": "null", "repo": "app"}),
                await client.call_tool(
                    "read_snippet", {"path": "src/web/forms.py", "start": True, "end": 4, "repo": "app"}
                ),
                await client.call_tool("search_history", {"query": "x", "repo": "app", "max_chars": "300"}),
            )

    null_path, null_query, start, budget = asyncio.run(session())
    assert null_path.is_error and text_of(null_path).startswith("no indexed file is under 'null'")
    assert "query is empty" not in text_of(null_query)
    assert text_of(start) == "invalid arguments for read_snippet: start: expected an integer, got a boolean"
    assert text_of(budget) == (
        "invalid arguments for search_history: max_chars: expected an integer, got a string"
    )


def test_sdk_client_without_the_token_cannot_connect(served: Served):
    async def session():
        async with connect(served.server.url, token="not-the-token-0123456789"):
            pass

    with pytest.raises(BaseException):  # noqa: B017 - the SDK raises an exception group
        asyncio.run(asyncio.wait_for(session(), 60))


# -- roots and paths ------------------------------------------------------------


def hostile_paths(served: Served) -> list[str]:
    root, secret = served.root, served.outside / "secret.txt"
    return [
        "..",
        "../",
        "../secret.txt",
        "../../secret.txt",
        "../outside/secret.txt",
        "./../outside/secret.txt",
        "src/../../outside/secret.txt",
        "src/../../../../../../etc/passwd",
        "../" * 40 + "etc/passwd",
        "/etc/passwd",
        "//etc/passwd",
        "/",
        str(secret),
        str(root / "src/auth/session.py"),
        str(root / ".." / "outside" / "secret.txt"),
        "%2e%2e/outside/secret.txt",
        "%2E%2E/outside/secret.txt",
        "..%2foutside%2fsecret.txt",
        "..%2Foutside/secret.txt",
        "%2e%2e%2foutside%2fsecret.txt",
        "%252e%252e/outside/secret.txt",
        "%252e%252e%252foutside%252fsecret.txt",
        "%25252e%25252e/outside/secret.txt",
        "..%252foutside/secret.txt",
        "%2fetc%2fpasswd",
        "%252fetc%252fpasswd",
        "..\\outside\\secret.txt",
        "..\\..\\etc\\passwd",
        "src\\..\\..\\outside\\secret.txt",
        "%5c..%5coutside%5csecret.txt",
        "..%5coutside%5csecret.txt",
        "src\\auth\\session.py",
        "\\\\server\\share\\secret.txt",
        "src/auth/session.py\x00",
        "\x00",
        "src/auth/session.py%00.txt",
        "%00../outside/secret.txt",
        "src/auth/session.py\n../outside/secret.txt",
        "\t../outside/secret.txt",
        "src/auth/session.py\r",
        "link_to_secret",
        "./link_to_secret",
        "src/link_up",
        "src/../link_to_secret",
        "linked_dir/secret.txt",
        "linked_dir",
        "~/.ssh/id_rsa",
        "~",
        "C:\\Windows\\win.ini",
        "C:/Windows/win.ini",
        "file:///etc/passwd",
        "....//....//outside/secret.txt",
        "..././outside/secret.txt",
        "\uff0e\uff0e/outside/secret.txt",
        "%c0%ae%c0%ae/outside/secret.txt",
        "%uff0e%uff0e/outside/secret.txt",
        " ../outside/secret.txt",
        ".env",
        "./.env",
        "config/id_rsa",
        ".git/config",
        ".git/HEAD",
        ".repolens/current",
        "a" * 5000,
        "/" * 300,
    ]


def test_hostile_paths_are_refused_in_one_line_without_leaking(served: Served):
    paths = hostile_paths(served)
    assert len(paths) >= 50

    async def session():
        out = []
        async with connect(served.server.url) as client:
            for p in paths:
                for tool, args in (
                    ("read_snippet", {"path": p, "start": 1, "end": 300}),
                    ("search_code", {"query": "secret value token", "path": p}),
                    ("get_focused_context", {"query": "secret value token", "paths": ["src", p]}),
                    ("find_symbol", {"name": "SessionStore", "path": p}),
                ):
                    out.append((tool, p, await client.call_tool(tool, {"repo": "app", **args})))
            out.append(
                ("sanity", "", await client.call_tool("search_code", {"query": "session", "repo": "app"}))
            )
        return out

    results = asyncio.run(session())
    for tool, p, result in results[:-1]:
        text = text_of(result)
        assert result.is_error, (tool, p, text)
        assert "\n" not in text and "Traceback" not in text, (tool, p, text)
        assert len(text) <= 1000
        assert SECRET not in text and ENV_SECRET not in text, (tool, p)
        assert str(served.root) not in text, (tool, p, text)  # server folders are not named
    assert not results[-1][2].is_error  # the session survived every refusal


def test_a_path_filter_need_not_exist_on_disk_over_http(served: Served):
    """A filter is looked up in the index and the history, never read: over
    HTTP it had to exist on disk, so a deleted file's history was refused and
    a mistyped folder lost the nearest indexed path stdio and the CLI name."""

    async def session():
        async with connect(served.server.url) as client:
            return (
                await client.call_tool(
                    "search_code", {"query": "session", "repo": "app", "path": "src/atuh"}
                ),
                await client.call_tool("search_history", {"repo": "app", "path": "src/gone.py"}),
            )

    mistyped, gone = asyncio.run(session())
    assert mistyped.is_error
    assert text_of(mistyped).startswith(
        "no indexed file is under 'src/atuh'; the nearest indexed path is 'src/auth'"
    )
    # as the CLI and stdio answer it: the index and the history are asked (a deleted file's commits
    # are found so, tests/history), not the disk
    assert text_of(gone).startswith(
        "no indexed file is under 'src/gone.py'; the nearest indexed path is 'src'"
    )


def test_unknown_repository_is_refused_with_the_known_names(served: Served):
    async def session():
        async with connect(served.server.url) as client:
            return (
                await client.call_tool("search_code", {"query": "session", "repo": "nope"}),
                await client.call_tool("search_code", {"query": "session"}),
                await client.call_tool("search_code", {"query": "session", "repo": str(served.root)}),
                await client.call_tool("search_code", {"query": "session", "root": str(served.root)}),
                await client.call_tool("search_code", {"query": "session", "root": "app"}),
            )

    unknown, missing, by_path, root_arg, root_name = asyncio.run(session())
    assert text_of(unknown) == "unknown repository 'nope': known repositories are app, other"
    assert text_of(missing) == "several repositories are served: pass `repo`, one of app, other"
    named = "`repo` names a served repository, not a folder: pass one of app, other"
    assert text_of(by_path) == text_of(root_arg) == named  # root: repo's other name
    assert text_of(root_name).startswith("src/auth/session.py:")


def test_a_repository_name_with_spaces_or_a_line_break_around_it_is_refused(served: Served):
    """``"app "`` and ``"app\\n"`` were taken as ``app``."""

    async def session():
        async with connect(served.server.url) as client:
            return [
                await client.call_tool("search_code", {"query": "session", "repo": name})
                for name in ("app ", "app\n", " app", "\n")
            ]

    replies = asyncio.run(session())
    assert [text_of(r) for r in replies] == [
        f"`repo` {name!r} has spaces or a line break around it: pass the name alone"
        for name in ("app ", "app\n", " app", "\n")
    ]
    assert all(r.is_error for r in replies)


def _with_headers(served: Served, headers: list[tuple[str, str]]) -> int:
    """The status of an initialize POSTed with exactly ``headers`` (repeats kept)."""
    import http.client

    url = urlsplit(served.server.url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.putrequest("POST", url.path)
        for name, value in [*MCP_HEADERS.items(), ("Content-Length", str(len(INIT))), *headers]:
            conn.putheader(name, value)
        conn.endheaders(INIT)
        return conn.getresponse().status
    finally:
        conn.close()


def test_two_authorization_headers_are_refused(served: Served):
    right, wrong = f"Bearer {TOKEN}", "Bearer wrong-token-0123456789abc"
    assert _with_headers(served, [("Authorization", right)]) == 200
    for pair in ((right, wrong), (wrong, right), (right, right)):
        assert _with_headers(served, [("Authorization", value) for value in pair]) == 401, pair


def test_full_rebuild_is_refused_for_remote_callers(served: Served):
    async def session():
        async with connect(served.server.url) as client:
            return (
                await client.call_tool("index_repo", {"repo": "app", "rebuild": True}),
                await client.call_tool("index_repo", {"repo": "app"}),
            )

    rebuild, refresh = asyncio.run(session())
    assert rebuild.is_error
    assert "--allow-rebuild" in text_of(rebuild) and "\n" not in text_of(rebuild)
    assert not refresh.is_error
    assert str(served.root) not in text_of(refresh)


def test_ten_concurrent_clients_all_succeed(served: Served):
    queries = ["where do sessions expire?", "parse url scheme host", "email is required", "HandleSubmit"]

    async def one(i: int) -> list[str]:
        async with connect(served.server.url) as client:
            out = []
            for j in range(5):
                repo = "app" if (i + j) % 2 else "other"
                result = await client.call_tool("search_code", {"query": queries[(i + j) % 4], "repo": repo})
                assert not result.is_error, text_of(result)
                out.append(text_of(result))
            symbol = await client.call_tool("find_symbol", {"name": "parse_url", "repo": "app"})
            assert not symbol.is_error
            return out

    async def main():
        return await asyncio.gather(*(one(i) for i in range(10)))

    replies = asyncio.run(main())
    assert len(replies) == 10 and all(len(r) == 5 for r in replies)
    assert all("query_id" in text for r in replies for text in r)


def test_query_log_records_http_calls(served: Served):
    async def session():
        async with connect(served.server.url) as client:
            await client.call_tool("search_code", {"query": "log marker session", "repo": "app", "top_k": 2})
            await client.call_tool("read_snippet", {"path": "../x", "start": 1, "end": 1, "repo": "app"})

    asyncio.run(session())
    lines = [json.loads(line) for line in served.query_log.read_text().splitlines()]
    search = next(r for r in lines if r["arguments"].get("query") == "log marker session")
    assert set(search) == {"time", "tool", "arguments", "latency_ms", "hits", "chars", "error"}
    assert search["tool"] == "search_code" and search["error"] is None and search["hits"] >= 1
    assert search["chars"] > 0 and search["latency_ms"] >= 0
    refused = next(r for r in lines if r["arguments"].get("path") == "../x")
    assert refused["error"].startswith("path '../x' contains '..'") and refused["hits"] is None


# -- starting up ------------------------------------------------------------------


def run_serve(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "repolens", "serve", *args],
        env=server_env(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--http", "--host", "0.0.0.0"], {}, "no bearer token"),
        (["--http"], {}, "no bearer token"),
        (["--http", "--host", "0.0.0.0", "--no-auth"], {}, "--no-auth is only allowed on a loopback host"),
        (["--http", "--host", "192.168.1.5", "--no-auth"], {"REPOLENS_TOKEN": TOKEN}, "loopback"),
        (["--http"], {"REPOLENS_TOKEN": "short"}, "at least 16"),
        (["--http", "--token-file", "/definitely/not/here"], {}, "does not exist"),
        (["--no-auth"], {}, "--no-auth only applies with --http"),
        (
            ["--http", "--no-auth", "--token-file", "t"],
            {},
            "--no-auth and --token-file contradict each other",
        ),
        (["--port", "9999"], {}, "--port only applies with --http"),
    ],
)
def test_refuses_to_start_without_safe_auth(sample_repo: Path, args, env, needle):
    out = run_serve(*args, "--root", str(sample_repo), env=env)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert needle in lines[0]


def test_http_needs_a_repository(tmp_path: Path):
    out = run_serve("--http", "--no-auth", cwd=tmp_path)
    assert out.returncode == 2 and "no repository to serve" in out.stderr


def test_a_configured_root_gone_from_disk_is_named_and_the_others_served(tmp_path: Path):
    """One [roots] folder missing (unmounted, deleted) refused to serve every
    other repository of the file. Now the server says so on stderr, serves
    the others, and list_repositories and a call naming it say it is missing
    (without the server's folder); a --root typo, or every root gone, is
    still refused in one line. A search over several (``*``, a list naming
    it) passed over it without a word, and /status and /health did not list
    it: now the reply's note names it, /status has its row and /health
    counts it (still "ok")."""
    roots = sample_repos(tmp_path, ("app",))
    gone = tmp_path / "unmounted"
    config = tmp_path / "server.toml"
    config.write_text(f'[roots]\napp = "{roots["app"]}"\ngone = "{gone}"\n')
    env = server_env({"REPOLENS_TOKEN": TOKEN})
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with running_server(
        ["--workers", "1", "--config", str(config)], env, tmp_path / "err", free_port()
    ) as server:

        async def session():
            async with connect(server.url) as client:
                listing = await client.call_tool("list_repositories", {})
                asked = await client.call_tool("search_code", {"query": "session", "repo": "gone"})
                served = await client.call_tool("search_code", {"query": "session", "repo": "app"})
                every = [
                    await client.call_tool("search_code", {"query": "session", "repo": repo})
                    for repo in ("*", ["app", "gone"])
                ]
                return listing, asked, served, every

        listing, asked, served, every = asyncio.run(session())
        health = json.loads(raw("GET", f"{server.base}/health")[2])
        named = json.loads(raw("GET", f"{server.base}/health", auth)[2])
        status, _, page = raw("GET", f"{server.base}/status", auth)
        # (the root's path is shortened in the line when it is long: a temporary folder's may be)
        warning = re.search(r"^repolens: warning: gone is not served: (.*)$", server.stderr(), re.M)
        assert warning is not None and warning[1].startswith(f"{config} [roots]: repository root ")
        assert "does not exist" in warning[1] and warning[1].endswith(
            "; serving app (and it, once its folder is back)"
        )
    for reply in every:
        assert not reply.is_error and text_of(reply).startswith(
            "note: gone did not answer: not served: its configured folder is missing on the server "
        )
        assert "app:" in text_of(reply) and str(gone) not in text_of(reply)
    assert (health["status"], health["repositories"], health["missing"]) == ("ok", 1, 1)
    assert "missing_names" not in health and named["missing_names"] == ["gone"]
    row = re.search(rb'<tr data-repo="gone">(.*?)</tr>', page, re.S)
    assert status == 200 and row is not None and b"its configured folder is missing" in row[1]
    assert str(gone).encode() not in page
    assert text_of(listing).startswith("1 repository served, 1 missing; showing 1-1\napp: <app> - ")
    assert text_of(listing).splitlines()[-1] == (
        "gone: not served: its configured folder is missing on the server (served once it is back)"
    )
    assert asked.is_error and text_of(asked) == (
        "repository 'gone' is not served: its configured folder is missing on the server "
        "(served once it is back); served: app"
    )
    assert not served.is_error and str(gone) not in text_of(listing) + text_of(asked)

    async def over_stdio():  # the stdio server's tools, as serve without --http builds them
        from repolens.server.tools import build_server

        async with Client(build_server(roots, missing={"gone": gone})) as client:
            listing = await client.call_tool("list_repositories", {})
            return listing, await client.call_tool("search_code", {"query": "session", "repo": "gone"})

    listing, asked = asyncio.run(over_stdio())
    assert text_of(listing).startswith("1 repository served, 1 missing")
    # its target has no folder (it had its name as one: Path("gone"), a folder of the server's
    # working directory): nothing can open one, and asking for it says why
    from repolens.server.repos import Repos

    unserved = Repos(roots, remote=True, missing={"gone": gone}).targets("*")[-1]
    assert (unserved.key, unserved.folder) == ("gone", None)
    with pytest.raises(
        RootError, match=r"^repository 'gone' is not served: its configured folder is missing"
    ):
        _ = unserved.root
    assert asked.is_error and text_of(asked).startswith("repository 'gone' is not served: its configured")
    typo = run_serve("--http", "--no-auth", "--root", str(gone), "--config", str(config))
    assert typo.returncode == 1 and typo.stderr.startswith("error: ") and "does not exist" in typo.stderr
    config.write_text(f'[roots]\ngone = "{gone}"\n')
    nothing = run_serve("--http", "--no-auth", "--config", str(config))
    assert nothing.returncode == 1 and nothing.stderr.count("\n") == 1
    assert nothing.stderr.startswith(f"error: {config} [roots]: repository root ")
    assert nothing.stderr.endswith(" does not exist: pass an existing directory\n")


def test_a_configured_root_back_on_disk_is_served_without_a_restart(tmp_path: Path):
    """QA: a [roots] folder missing when ``serve`` started stayed "missing"
    until the server restarted, however long it had been back (re-mounted,
    re-cloned), and the reply over several stood for it with a made-up
    folder (its name as a path). Now each call naming it looks again, and
    from the first that finds it back it is served at its configured folder:
    listed, indexed, searched, by name and in ``*``; over stdio, the real
    client driving ``repolens serve``, and over HTTP, where /health counts it."""
    from mcp.client.stdio import StdioServerParameters

    roots = sample_repos(tmp_path, ("app",))
    gone = tmp_path / "unmounted"
    config = tmp_path / "server.toml"
    config.write_text(f'[roots]\napp = "{roots["app"]}"\ngone = "{gone}"\n')
    args = ["-m", "repolens", "serve", "--config", str(config), "--no-watch"]

    async def session() -> list:
        params = StdioServerParameters(command=sys.executable, args=args, env=server_env(), cwd=str(tmp_path))
        async with Client(params) as client:
            await client.call_tool("index_repo", {"repo": "app"})  # (no watcher: --no-watch)
            before = [
                await client.call_tool("search_code", {"query": "session", "repo": "gone"}),
                await client.call_tool("search_code", {"query": "session", "repo": "*"}),
            ]
            sample_repos(tmp_path, ("unmounted",))  # the folder is back
            return [
                *before,
                await client.call_tool("index_repo", {"repo": "gone"}),
                await client.call_tool("search_code", {"query": "session", "repo": "gone"}),
                await client.call_tool("search_code", {"query": "session", "repo": "*"}),
                await client.call_tool("list_repositories", {}),
            ]

    missing, every_before, indexed, found, every, listing = asyncio.run(session())
    assert missing.is_error and "its configured folder is missing" in text_of(missing)
    assert text_of(every_before).startswith("note: gone did not answer: not served")
    assert not indexed.is_error and (gone / ".repolens").is_dir(), text_of(indexed)
    assert not found.is_error and "src/auth/session.py" in text_of(found), text_of(found)
    assert not every.is_error and "did not answer" not in text_of(every)
    assert "gone:src/auth/session.py" in text_of(every) and "app:src/auth/session.py" in text_of(every)
    assert text_of(listing).startswith("2 repositories served; showing 1-2\n")
    assert "missing" not in text_of(listing)

    shutil.rmtree(gone)
    env = server_env({"REPOLENS_TOKEN": TOKEN})
    with running_server(
        ["--workers", "1", "--config", str(config)], env, tmp_path / "err", free_port()
    ) as server:
        health = json.loads(raw("GET", f"{server.base}/health")[2])
        sample_repos(tmp_path, ("unmounted",))
        back = json.loads(raw("GET", f"{server.base}/health")[2])

        async def over_http():
            async with connect(server.url) as client:
                return await client.call_tool("index_repo", {"repo": "gone"})

        indexed = asyncio.run(over_http())
    assert (health["repositories"], health["missing"]) == (1, 1)
    assert (back["repositories"], "missing" in back) == (2, False)
    assert not indexed.is_error and str(gone) not in text_of(indexed), text_of(indexed)


def test_a_configured_root_back_on_disk_is_watched_as_the_others(tmp_path: Path):
    """QA: a [roots] folder that came back was served but not watched until
    the server restarted: its changes waited for a refresh_index. Now the
    server's watcher takes it from when it is back, with no call naming it:
    its first index, then a file saved in it; the real client driving
    ``repolens serve`` over stdio."""
    from mcp.client.stdio import StdioServerParameters

    roots = sample_repos(tmp_path, ("app",))
    gone = tmp_path / "unmounted"
    config = tmp_path / "server.toml"
    config.write_text(f'[roots]\napp = "{roots["app"]}"\ngone = "{gone}"\n')
    args = ["-m", "repolens", "serve", "--config", str(config)]

    async def session():
        params = StdioServerParameters(command=sys.executable, args=args, env=server_env(), cwd=str(tmp_path))
        async with Client(params) as client:
            await client.call_tool("list_repositories", {})  # (the watchers start after the handshake)
            sample_repos(tmp_path, ("unmounted",))  # the folder is back
            await asyncio.to_thread(wait_for, lambda: (gone / ".repolens" / "current").exists(), "its index")
            (gone / "src" / "ledger.py").write_text("def reconcile_ledger_totals():\n    return 0\n")

            async def found() -> bool:
                hits = await client.call_tool(
                    "search_code", {"query": "reconcile_ledger_totals", "repo": "gone"}
                )
                return "src/ledger.py" in text_of(hits)

            deadline = time.monotonic() + 30
            while not await found():
                assert time.monotonic() < deadline, "the saved file was never indexed"
                await asyncio.sleep(0.5)

    asyncio.run(session())


def test_no_auth_on_loopback_serves_without_a_token(sample_repo: Path, tmp_path: Path):
    port = free_port()
    with running_server(
        ["--no-auth", "--root", str(sample_repo)], server_env(), tmp_path / "err", port
    ) as server:

        async def session():
            async with connect(server.url, token=None) as client:
                return await client.call_tool("search_code", {"query": "parse_url"})

        result = asyncio.run(session())
        assert not result.is_error  # one repository: repo may be left out
        assert "no auth" in server.stderr()


def test_token_file_is_read_and_trimmed(sample_repo: Path, tmp_path: Path):
    token_file = tmp_path / "token"
    token_file.write_text(f"  {TOKEN}\n")
    token_file.chmod(0o644)  # readable by others: served, with a warning on stderr
    port = free_port()
    args = ["--token-file", str(token_file), "--root", f"sample={sample_repo}"]
    with running_server(args, server_env(), tmp_path / "err", port) as server:
        status, _, _ = raw("POST", server.url, {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}, INIT)
        assert status == 200
        status, _, _ = raw("POST", server.url, {**MCP_HEADERS, "Authorization": "Bearer x" * 3}, INIT)
        assert status == 401
        said = f"repolens: warning: token file {token_file} is readable by other users (mode 644): chmod 600"
        assert said in server.stderr()
    token_file.chmod(0o600)
    with running_server(args, server_env(), tmp_path / "err2", free_port()) as server:
        assert "readable by other users" not in server.stderr()


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop has no Windows build")
def test_served_by_the_c_http_parser_on_uvloop():
    """`serve --http` serves on httptools (a protocol of its own, saying why
    it refuses a long address) and leaves the loop to "auto", which picks
    uvloop: both are dependencies, so an install without one (serving on the
    pure-Python parser or asyncio's loop) fails here."""
    import uvicorn
    import uvloop
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    async def app(scope, receive, send) -> None:
        raise AssertionError("never called")

    config = uvicorn.Config(app, **UVICORN_OPTIONS)
    config.load()
    assert issubclass(config.http_protocol_class, HttpToolsProtocol)
    factory = config.get_loop_factory()
    assert factory is not None
    loop = factory()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()


# -- configuration ------------------------------------------------------------------


def test_roots_from_flags_env_and_config_file(tmp_path: Path):
    a, b, c = (tmp_path / n for n in ("alpha", "beta dir", "gamma"))
    for d in (a, b, c):
        d.mkdir()
    assert parse_root_spec("web=/srv/web") == ("web", "/srv/web")
    assert parse_root_spec("/data/a=b") == (None, "/data/a=b")
    cfg = load_serve_config(root_specs=[str(a), f"b={b}"], env={})
    assert cfg.roots == {"alpha": a.resolve(), "b": b.resolve()}
    cfg = load_serve_config(root_specs=[str(b)], env={})
    assert list(cfg.roots) == ["beta-dir"]
    cfg = load_serve_config(env={"REPOLENS_ROOTS": f"one={a}, two={c}"})
    assert cfg.roots == {"one": a.resolve(), "two": c.resolve()}
    config = tmp_path / "server.toml"
    config.write_text(
        '[roots]\nx = "alpha"\ny = "gamma"\n[serve]\nquery_log = "q.jsonl"\nallow_rebuild = true\n'
        'token_file = "tok"\n'
    )
    (tmp_path / "tok").write_text(TOKEN)
    cfg = load_serve_config(config_file=config, env={})
    assert cfg.roots == {"x": a.resolve(), "y": c.resolve()}
    assert cfg.query_log == tmp_path / "q.jsonl" and cfg.allow_rebuild and cfg.token == TOKEN
    # the command line wins over the environment, which wins over the file
    cfg = load_serve_config(config_file=config, root_specs=[str(c)], env={"REPOLENS_ROOTS": str(a)})
    assert list(cfg.roots) == ["gamma"]
    cfg = load_serve_config(config_file=config, env={"REPOLENS_TOKEN": "env-token-0123456789"})
    assert cfg.token == "env-token-0123456789" and cfg.token_source == "REPOLENS_TOKEN"
    cfg = load_serve_config(config_file=config, env={}, read_token=False)
    assert cfg.token is None


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"root_specs": ["/definitely/not/here"]}, RootError, "does not exist"),
        ({"root_specs": ["a=/tmp", "a=/tmp"]}, ConfigError, "/tmp is given twice as 'a': give it once"),
        ({"root_specs": ["a=/tmp", "a=/var"]}, ConfigError, r"'a' \(/tmp and /var\): give each its own NAME"),
        ({"root_specs": ["/tmp", "/var/../tmp"]}, ConfigError, "/tmp is given twice as 'tmp'"),
        ({"root_specs": ["app=/tmp", "app@dev=/var"]}, ConfigError, "'app' and 'app@dev' name branches"),
        ({"env": {"REPOLENS_TOKEN": "has space in it 0123456789"}}, ConfigError, "without spaces"),
    ],
)
def test_bad_serve_configuration_is_refused(kwargs, error, needle):
    kwargs.setdefault("env", {})
    with pytest.raises(error, match=needle):
        load_serve_config(**kwargs)


def test_config_file_tables_do_not_disturb_repository_settings(sample_repo: Path):
    from repolens.settings import load_settings

    (sample_repo / ".repolens.toml").write_text(
        'top_k = 7\n[roots]\nme = "."\n[serve]\nallow_rebuild = true\n'
    )
    assert load_settings(sample_repo).top_k == 7


def test_loopback_policy():
    assert is_loopback("127.0.0.1") and is_loopback("127.1.2.3") and is_loopback("::1")
    assert is_loopback("[::1]") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("example.com")
    check_auth_policy("127.0.0.1", None, no_auth=True)
    check_auth_policy("0.0.0.0", TOKEN, no_auth=False)


def test_a_port_in_use_is_one_error_line_before_anything_starts(sample_repo: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = run_serve("--http", "--no-auth", "--root", str(sample_repo), "--port", str(port))
    assert out.returncode == 1
    assert out.stderr == (
        f"error: cannot serve at 127.0.0.1:{port}: Address already in use: "
        "stop the program that uses it, or pass another --port\n"
    )
    assert not (sample_repo / ".repolens").exists(), "refused before indexing"
