"""Tool arguments are taken at their word, in process and over stdio: a
string is the string sent (never decoded as JSON), an integer is an integer
and a boolean a boolean (never ``true`` for 1 or ``"yes"`` for true)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from repolens.server.tools import build_server

FILES = {
    "null/notes.py": "def session_notes():\n    return 'session'\n",
    "src/session.py": "def open_session():\n    return 'session'\n",
    "docs/words.md": "# words\n\nnull and void\n",
    "test_ok.py": "def test_ok():\n    assert True\n",
}

# A valid call of each tool, to which one argument of the wrong type is added.
VALID: dict[str, dict[str, Any]] = {
    "index_repo": {},
    "refresh_index": {},
    "index_status": {},
    "list_repositories": {},
    "run_tests": {"runner": "pytest"},
    "search_code": {"query": "session"},
    "read_snippet": {"path": "src/session.py", "start": 1, "end": 2},
    "find_symbol": {"name": "open_session"},
    "get_focused_context": {"query": "session"},
    "compare_branches": {"paths": ["src"]},
    "search_history": {"query": "session"},
    "get_chunk": {"chunk_id": "x"},
    "find_references": {"target": "open_session"},
    "impact": {"target": "src/session.py:1-2"},
}
# JSON values of another type than the schema's, and how the error names what came.
WRONG: dict[str, list[tuple[Any, str]]] = {
    "integer": [(True, "a boolean"), ("3", "a string"), (3.5, "a decimal number")],
    "number": [(True, "a boolean"), ("3", "a string")],
    "boolean": [("yes", "a string"), (1, "a number"), ("true", "a string")],
    "string": [(5, "a number"), (False, "a boolean")],
}
EXPECTED = {"integer": "an integer", "number": "a number", "boolean": "true or false", "string": "a string"}


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _type(prop: dict[str, Any]) -> str | None:
    """The JSON type a schema property takes (null aside)."""
    kinds = [p.get("type") for p in prop.get("anyOf", [prop])] if "anyOf" in prop else [prop.get("type")]
    kinds = [k for k in kinds if k != "null"]
    return kinds[0] if len(kinds) == 1 else None


@pytest.fixture
def repo(make_repo) -> Path:
    return make_repo(FILES)


@pytest.mark.parametrize("remote", [False, True], ids=["local", "remote"])
def test_json_looking_strings_stay_strings(repo: Path, remote: bool):
    async def session() -> dict[str, Any]:
        async with Client(build_server({"app": repo}, remote=remote)) as client:
            await client.call_tool("index_repo", {})
            return {
                "null_path": await client.call_tool("search_code", {"query": "session", "path": "null"}),
                "null_query": await client.call_tool("search_code", {"query": "null", "path": "docs"}),
                "list_query": await client.call_tool("search_code", {"query": "[]"}),
                "list_as_text": await client.call_tool(
                    "search_code", {"query": "session", "include": '["src/*"]', "mode": "files"}
                ),
            }

    out = asyncio.run(session())
    hits = _text(out["null_path"])
    assert not out["null_path"].is_error and "null/notes.py" in hits and "src/session.py" not in hits
    assert not out["null_query"].is_error and _text(out["null_query"]).startswith("docs/words.md:")
    assert not out["list_query"].is_error  # searched for; nothing found is an answer
    # a list parameter still takes a list written as JSON text (no string is a list)
    assert _text(out["list_as_text"]).splitlines()[0].startswith("1. src/session.py")


@pytest.mark.parametrize("remote", [False, True], ids=["local", "remote"])
def test_every_parameter_refuses_values_of_another_type(repo: Path, remote: bool):
    async def session() -> tuple[list[str], list[tuple[str, str, str, str]]]:
        calls = []
        async with Client(build_server({"app": repo}, remote=remote, allow_tests=True)) as client:
            tools = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
            for tool, props in tools.items():
                for param, prop in props.items():
                    for value, sent in WRONG.get(_type(prop) or "", []):
                        result = await client.call_tool(tool, {**VALID[tool], param: value})
                        expected = f"{param}: expected {EXPECTED[_type(prop)]}, got {sent}"
                        text = _text(result) if result.is_error else "(no error)"
                        calls.append((tool, param, expected, text))
        return sorted(tools), calls

    tools, calls = asyncio.run(session())
    assert tools == sorted(VALID)
    wrong = [(tool, param, text) for tool, param, expected, text in calls if expected not in text]
    assert wrong == []
    checked = {(tool, param) for tool, param, _, _ in calls}
    assert {("read_snippet", "start"), ("index_repo", "rebuild"), ("run_tests", "timeout_s")} <= checked
    assert len(checked) >= 40, "every typed parameter of every tool"


def test_the_issues_calls_are_refused_in_one_line(repo: Path):
    async def session() -> list[Any]:
        async with Client(build_server({"app": repo}, allow_tests=True)) as client:
            await client.call_tool("index_repo", {})
            return [
                await client.call_tool("read_snippet", {"path": "src/session.py", "start": True, "end": 300}),
                await client.call_tool("search_history", {"query": "session", "max_chars": "300"}),
                await client.call_tool("index_repo", {"rebuild": "yes"}),
                await client.call_tool("run_tests", {"runner": "pytest", "timeout_s": 60}),
            ]

    start, budget, rebuild, run = asyncio.run(session())
    assert _text(start) == "invalid arguments for read_snippet: start: expected an integer, got a boolean"
    assert _text(budget) == (
        "invalid arguments for search_history: max_chars: expected an integer, got a string"
    )
    assert _text(rebuild) == "invalid arguments for index_repo: rebuild: expected true or false, got a string"
    assert not run.is_error and "exit 0" in _text(run)  # a number may be written as an integer


def test_strict_where_it_should_be_and_lax_where_json_schema_is(repo: Path):
    """A path ending in a carriage return, a blank ``repo`` or one with a line
    break around it are refused (they were read as README.md and as the served
    repository); ``top_k: 5.0`` is an integer, as JSON Schema counts it."""

    async def session() -> list[Any]:
        async with Client(build_server({"app": repo})) as client:
            await client.call_tool("index_repo", {})
            return [
                await client.call_tool("search_history", {"query": "ok", "path": "test_ok.py\r"}),
                await client.call_tool("search_code", {"query": "session", "path": "src\t"}),
                await client.call_tool("index_repo", {"repo": "\n"}),
                await client.call_tool("index_repo", {"repo": "app\n"}),
                await client.call_tool("search_code", {"query": "session", "top_k": 1.0, "mode": "files"}),
                await client.call_tool("search_code", {"query": "session", "top_k": 1.5}),
            ]

    cr, tab, blank, newline, whole, half = asyncio.run(session())
    assert _text(cr) == "path 'test_ok.py\\r' holds a control character: pass the path alone"
    assert _text(tab) == "path 'src\\t' holds a control character: pass the path alone"
    assert _text(blank) == "`repo` '\\n' has spaces or a line break around it: pass the name alone"
    assert _text(newline) == "`repo` 'app\\n' has spaces or a line break around it: pass the name alone"
    assert not whole.is_error and _text(whole).count("\n1. ") + _text(whole).startswith("1. ") == 1
    assert (
        _text(half) == "invalid arguments for search_code: top_k: expected an integer, got a decimal number"
    )


def test_arguments_are_taken_at_their_word_over_stdio(repo: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    args = ["-m", "repolens", "serve", "--root", str(repo), "--no-watch"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def session() -> list[Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            await client.call_tool("index_repo", {})
            return [
                await client.call_tool("search_code", {"query": "session", "path": "null"}),
                await client.call_tool("read_snippet", {"path": "src/session.py", "start": True, "end": 2}),
            ]

    null_path, start = asyncio.run(session())
    assert "null/notes.py" in _text(null_path) and "src/session.py" not in _text(null_path)
    assert _text(start) == "invalid arguments for read_snippet: start: expected an integer, got a boolean"


# -- the repository argument ---------------------------------------------------------


def test_repo_names_the_repository_on_every_transport_and_root_is_its_alias(make_repo):
    """stdio servers took ``root``, HTTP servers ``repo``: one name now, the other accepted."""
    app = make_repo({"app.py": "def apple_pie():\n    return 1\n"}, name="app")
    lib = make_repo({"lib.py": "def lemon_tart():\n    return 2\n"}, name="lib")

    async def session(remote: bool) -> dict[str, Any]:
        async with Client(build_server({"app": app, "lib": lib}, remote=remote)) as client:
            tools = (await client.list_tools()).tools
            find = "find_symbol"
            return {
                "params": {t.name: set(t.input_schema["properties"]) for t in tools},
                "described": tools[0].input_schema["properties"]["repo"]["description"],
                "repo": await client.call_tool(find, {"name": "lemon_tart", "repo": "lib"}),
                "root": await client.call_tool(find, {"name": "lemon_tart", "root": "lib"}),
                "both": await client.call_tool(find, {"name": "lemon_tart", "root": "lib", "repo": "lib"}),
                "clash": await client.call_tool(find, {"name": "lemon_tart", "root": "lib", "repo": "app"}),
                "none": await client.call_tool(find, {"name": "lemon_tart"}),
                "path": await client.call_tool(find, {"name": "lemon_tart", "repo": str(lib)}),
                "guess": await client.call_tool(find, {"name": "lemon_tart", "repo": "pastry"}),
                "every": await client.call_tool("index_status", {"repo": "*"}),
            }

    for remote in (False, True):
        out = asyncio.run(session(remote))
        assert {name for name, params in out["params"].items() if "root" in params} == set()
        assert {name for name, params in out["params"].items() if "repo" not in params} == {
            "list_repositories"
        }
        assert out["described"] == ("One of: app, lib." if remote else "One of: app, lib; or a path.")
        for key in ("repo", "root", "both"):
            assert _text(out[key]).splitlines()[1].startswith("lib.py:1-2 function lemon_tart"), key
        assert _text(out["clash"]) == "`root` is another name for `repo`: pass one of them"
        assert _text(out["none"]) == "several repositories are served: pass `repo`, one of app, lib"
        if remote:  # a remote caller names a repository, never a folder
            assert (
                _text(out["path"]) == "`repo` names a served repository, not a folder: pass one of app, lib"
            )
        else:  # a local caller may name a folder
            assert not out["path"].is_error and "lemon_tart" in _text(out["path"])
        # a guess at a name (the tool list names no repository when one is served) gets the names
        assert _text(out["guess"]) == (
            "unknown repository 'pastry': known repositories are app, lib"
            if remote
            else "unknown repository 'pastry': none of that name is served (app, lib) and no folder "
            "has that path: pass a served name or a folder's path as `repo`"
        )
        # * means every repository, which a tool answering for one cannot take
        assert out["every"].is_error and _text(out["every"]) == (
            "this tool answers for one repository: pass `repo` as one name or path, not *"
        )


def test_branches_of_one_repository_need_no_name(make_repo):
    main = make_repo({"a.py": "def on_main():\n    return 1\n"}, name="main")
    develop = make_repo({"a.py": "def on_develop():\n    return 1\n"}, name="develop")

    async def session() -> str:
        async with Client(build_server({"app@main": main, "app@develop": develop})) as client:
            await client.call_tool("index_repo", {"repo": "app@develop"})
            return _text(await client.call_tool("find_symbol", {"name": "on_develop"}))

    # several served roots, but one repository: its only indexed branch, as for repo="app"
    assert "a.py:1-2 function on_develop" in asyncio.run(session())


def test_repo_and_its_alias_over_stdio(make_repo):
    app = make_repo({"app.py": "def apple_pie():\n    return 1\n"}, name="app")
    lib = make_repo({"lib.py": "def lemon_tart():\n    return 2\n"}, name="lib")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    args = ["-m", "repolens", "serve", "--root", f"app={app}", "--root", f"lib={lib}", "--no-watch"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def session() -> list[str]:
        async with Client(params, read_timeout_seconds=60) as client:
            calls = [{"repo": "lib"}, {"root": "lib"}, {"repo": str(lib)}, {}]
            return [_text(await client.call_tool("find_symbol", {"name": "lemon_tart", **c})) for c in calls]

    by_name, by_alias, by_path, unnamed = asyncio.run(session())
    assert "lib.py:1-2 function lemon_tart" in by_name and by_name == by_alias == by_path
    assert unnamed == "several repositories are served: pass `repo`, one of app, lib"


def test_a_repo_path_that_can_name_no_folder_is_one_line(repo: Path, caplog: pytest.LogCaptureFixture):
    """Over MCP these were "internal error ... (RuntimeError)" / (OSError), a traceback in the log."""

    async def session() -> list[str]:
        async with Client(build_server({"app": repo})) as client:
            calls = ["~repolens-no-such-user", "x" * 300, "~repolens-no-such-user/src"]
            return [_text(await client.call_tool("index_status", {"repo": where})) for where in calls]

    unknown_user, long_name, under_unknown = asyncio.run(session())
    fix = "pass an existing directory as `repo`"
    assert unknown_user == (
        "repository root ~repolens-no-such-user starts with the home folder of user "
        f"'repolens-no-such-user', who is unknown here: {fix}"
    )
    assert long_name == (
        f"repository root {'x' * 80!r}... (300 chars) holds a name of 300 bytes; the limit is 255: {fix}"
    )
    assert under_unknown.startswith("repository root ~repolens-no-such-user/src starts with the home folder")
    assert "Traceback" not in caplog.text and "failed unexpectedly" not in caplog.text
