"""The index, status, repository, test-run and guide tools, through the SDK client."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from repolens.server.tools import build_server
from repolens.store.handles import readers
from repolens.validate import shown_path
from venvs import make_venv


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_refresh_reports_progress_and_status_reports_freshness(make_repo):
    root = make_repo({f"pkg/m{i:03d}.py": f"def f{i}():\n    return {i}\n" for i in range(300)})
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def session() -> dict:
        out: dict = {}
        async with Client(build_server({"app": root})) as client:
            out["index"] = await client.call_tool("index_repo", {}, progress_callback=on_progress)
            (root / "pkg/new.py").write_text("def brand_new():\n    pass\n")
            out["status_before"] = await client.call_tool("index_status", {})
            out["refresh"] = await client.call_tool("refresh_index", {})
            out["status_after"] = await client.call_tool("index_status", {})
        return out

    out = asyncio.run(session())
    assert _text(out["index"]).startswith("indexed 300 files")
    assert progress and progress[-1] == (300, 300), "the last notification says the work is done"
    assert "1 file changed on disk since (1 new, 0 modified, 0 deleted)" in _text(out["status_before"])
    assert _text(out["refresh"]).startswith("refreshed ") and "1 new, 0 changed, 0 deleted" in _text(
        out["refresh"]
    )
    assert "; up to date" in _text(out["status_after"])


def test_list_repositories_pages_with_a_cursor(make_repo):
    roots = {f"repo{i}": make_repo({"a.py": f"X = {i}\n"}, name=f"r{i}") for i in range(3)}

    async def session() -> list[str]:
        async with Client(build_server(roots)) as client:
            first = await client.call_tool("list_repositories", {"limit": 2})
            second = await client.call_tool("list_repositories", {"cursor": 2, "limit": 2})
            bad = await client.call_tool("list_repositories", {"cursor": -1})
            return [_text(first), _text(second), _text(bad)]

    first, second, bad = asyncio.run(session())
    lines = first.splitlines()
    assert lines[0] == "3 repositories served; showing 1-2"
    assert lines[1].startswith("repo0: ") and lines[2].startswith("repo1: ")
    assert lines[-1] == "next_cursor 2"
    assert second.splitlines()[1].startswith("repo2: ") and "next_cursor" not in second
    assert bad.startswith("cursor must be a whole number")


def test_remote_listing_hides_server_folders_and_tests_are_off_unless_allowed(
    make_repo, tmp_path: Path, monkeypatch
):
    root = make_repo({"a.py": "X = 1\n", "test_a.py": "def test_x():\n    assert False\n"})
    server_env = tmp_path / "srv-python"  # the operator's interpreter for test runs, a server folder
    monkeypatch.setenv("REPOLENS_TEST_PYTHON", str(make_venv(server_env, with_pytest=True)))

    async def session(allow: bool) -> list:
        async with Client(build_server({"app": root}, remote=True, allow_tests=allow)) as client:
            listing = await client.call_tool("list_repositories", {})
            run = await client.call_tool("run_tests", {"runner": "pytest", "repo": "app"})
            return [listing, run]

    listing, refused = asyncio.run(session(False))
    assert str(root) not in _text(listing) and _text(listing).splitlines()[1].startswith("app: <app> - ")
    assert refused.is_error and "--allow-tests" in _text(refused)
    _, allowed = asyncio.run(session(True))
    assert not allowed.is_error
    assert " ->  exit 1 in " in _text(allowed) and "assert False" in _text(allowed)
    assert str(server_env) not in _text(allowed) and str(root) not in _text(allowed)
    assert _text(allowed).startswith("$ <server>/bin/python -m pytest  ->  exit 1 in ")
    assert _text(allowed).splitlines()[1] == (
        "[tests run under <server>/bin/python: test_python (.repolens.toml or REPOLENS_TEST_PYTHON)]"
    )


def test_remote_replies_hide_an_index_folder_outside_the_root(make_repo, tmp_path: Path, monkeypatch):
    """--index-dir or REPOLENS_INDEX_DIR name server folders too: a remote
    caller reads them as ``<NAME index>``, never their path."""
    root = make_repo({"a.py": "def alpha():\n    return 1\n"})
    flag = tmp_path / "idx" / "secret-place"
    shared = tmp_path / "shared-indexes"

    async def session(**given) -> str:
        async with Client(build_server({"app": root}, remote=True, **given)) as client:
            await client.call_tool("index_repo", {"repo": "app"})
            return _text(await client.call_tool("index_status", {"repo": "app"}))

    by_flag = asyncio.run(session(index_dir=flag))
    assert str(flag) not in by_flag and "<app index>" in by_flag, by_flag
    monkeypatch.setenv("REPOLENS_INDEX_DIR", str(shared))
    by_env = asyncio.run(session())
    assert str(shared) not in by_env and "<app index>" in by_env, by_env


def test_a_remote_compare_refuses_an_absolute_path(make_repo):
    """QA: compare_branches checked its paths more weakly than the other
    tools: ``~/...`` and a secret by name (``.env``) passed, and a refusal
    was a UsageError where theirs is a PathError. Now each path is checked
    as a path filter is, refused in the same words as search_code's."""
    from repolens import service
    from repolens.branches.registry import EMPTY
    from repolens.errors import PathError
    from repolens.server.repos import Repos

    root = make_repo({"a.py": "X = 1\n"})
    wrong = ["/etc/passwd", "~/.ssh/id_rsa", ".env", "src\\a.py"]

    async def session() -> list:
        async with Client(build_server({"app": root}, remote=True)) as client:
            return [
                await client.call_tool("compare_branches", {"repo": "app", "paths": ["/etc/passwd"]}),
                await client.call_tool("compare_branches", {"repo": "nope", "paths": ["/etc/passwd"]}),
                await client.call_tool("compare_branches", {"paths": ["/etc/passwd"], "max_chars": 5}),
                *[
                    await client.call_tool(tool, {"repo": "app", **args, "path" + s: [path] if s else path})
                    for path in wrong
                    for tool, args, s in (("compare_branches", {}, "s"), ("search_code", {"query": "X"}, ""))
                ],
            ]

    refused, unknown, budget, *pairs = asyncio.run(session())
    assert refused.is_error
    assert _text(refused) == "path '/etc/passwd' is absolute: pass a path relative to the repository root"
    for path, compared, searched in zip(wrong, pairs[::2], pairs[1::2], strict=True):
        assert compared.is_error and searched.is_error, path
        assert _text(compared) == _text(searched), path
    repos = Repos({"app": root}, remote=True)
    with pytest.raises(PathError, match=r"^path '~/\.ssh/id_rsa' is absolute"):
        service.compare_branches(
            "app", repos.roots, EMPTY, paths=["~/.ssh/id_rsa"], check_path=repos.check_filter
        )
    # the repository, the first argument, is checked first (it was after the paths)
    assert unknown.is_error and _text(unknown) == "unknown repository 'nope': known repositories are app"
    assert budget.is_error and _text(budget) == _text(refused), "paths come before max_chars"


def test_a_remote_refs_or_impact_target_is_never_an_absolute_path(sample_repo: Path):
    """A remote caller's paths are relative (the server's folders are not
    its to know): an absolute place is refused, inside the root or not, so
    that trying one tells nothing of where the repository is."""

    async def session() -> list:
        async with Client(build_server({"app": sample_repo}, remote=True)) as client:
            return [
                await client.call_tool(
                    tool, {"repo": "app", "target": f"{folder}/src/auth/session.py{lines}"}
                )
                for tool, lines in (("find_references", ":8"), ("impact", ":8-10"), ("impact", ""))
                for folder in (str(sample_repo), "/elsewhere")
            ]

    replies = asyncio.run(session())
    assert all(r.is_error for r in replies)
    for text, folder in zip([_text(r) for r in replies], ["<app>", "/elsewhere"] * 3, strict=True):
        assert (
            text == f"path '{folder}/src/auth/session.py' is absolute: pass a path relative to the repository"
        )


def test_usage_guide_prompt(sample_repo: Path):
    async def session():
        async with Client(build_server({"app": sample_repo})) as client:
            prompts = await client.list_prompts()
            guide = await client.get_prompt("repolens_guide", {})
            return prompts, guide, await client.list_tools()

    prompts, guide, tools = asyncio.run(session())
    assert [p.name for p in prompts.prompts] == ["repolens_guide"]
    text = guide.messages[0].content.text
    # what it says of max_chars is so of the tool list
    unbudgeted = [t.name for t in tools.tools if "max_chars" not in t.input_schema["properties"]]
    assert f"every tool but {', '.join(unbudgeted[:-1])} and {unbudgeted[-1]} takes" in " ".join(text.split())
    assert "search_code" in text and "find_symbol" in text and "read_snippet" in text
    # what the tool list leaves out is here
    assert all(word in text for word in ("query_id", "keyword", "min_score", "-k EXPR", "root"))
    assert len(text) < 4000  # fetched on demand: the details the tool list leaves out


def test_tool_list_stays_small(sample_repo: Path, tmp_path: Path):
    """The whole tools/list reply is what every agent pays for up front: the
    list as sent (JSON without spaces), with one repository served and with
    many (whose names the ``repo`` argument of every tool would repeat)."""
    import json

    many = {f"team-service-{i:02d}": tmp_path / f"service-{i:02d}" for i in range(30)}

    async def session(roots, remote: bool = False):
        async with Client(build_server(roots, remote=remote)) as client:
            return await client.list_tools()

    for roots, remote in (({"app": sample_repo}, False), (many, False), (many, True)):
        tools = asyncio.run(session(roots, remote))
        sent = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]
        size = len(json.dumps(sent, ensure_ascii=False, separators=(",", ":")))
        assert len(tools.tools) == 14
        assert size <= 8_000, f"tools/list is {size} chars with {len(roots)} repositories served"
        schemas = [t.input_schema for t in tools.tools]  # titles repeat the names: left out
        titled = [s for s in schemas if "title" in s or any("title" in p for p in s["properties"].values())]
        assert titled == []
    described = tools.tools[0].input_schema["properties"]["repo"]["description"]
    assert described == "A served name (list_repositories lists them)."


def test_language_and_kind_arguments_take_aliases_and_refuse_unknown_names(sample_repo: Path):
    async def session() -> list:
        async with Client(build_server(sample_repo)) as client:
            return [
                await client.call_tool("search_code", {"query": "handle submit", "language": "py"}),
                await client.call_tool("find_symbol", {"name": "handle_submit", "kind": "fn"}),
                await client.call_tool("search_code", {"query": "x", "language": "klingon"}),
                await client.call_tool("find_symbol", {"name": "x", "kind": "spell"}),
                await client.call_tool("search_code", {"query": "x", "kind": ""}),
                await client.call_tool("search_code", {"query": "x", "language": "  "}),
                await client.call_tool("find_symbol", {"name": "x", "kind": " "}),
                await client.call_tool("find_symbol", {"name": "x", "language": ""}),
            ]

    by_alias, symbol, language, kind, *blank = asyncio.run(session())
    assert not by_alias.is_error and _text(by_alias).startswith("src/web/forms.py:")
    assert not symbol.is_error and "src/web/forms.py:4-9 function handle_submit" in _text(symbol)
    assert language.is_error and _text(language).startswith("unknown language 'klingon': use one of ")
    assert kind.is_error and _text(kind).startswith("unknown kind 'spell': use one of ")
    # a blank filter filtered nothing, silently: it is refused with the names it may take
    for result, what in zip(blank, ("kind", "language", "kind", "language"), strict=True):
        assert result.is_error and _text(result).startswith(f"{what} is empty: use one of "), _text(result)
        assert _text(result).endswith(f", or leave it out for every {what}")


def test_an_error_names_a_huge_value_in_a_few_characters(sample_repo: Path):
    """A megabyte passed as a mode or a direction came back in the error line,
    cut only at the reply's 1,000 characters."""
    huge = "x" * 1_000_000

    async def session() -> list:
        async with Client(build_server(sample_repo)) as client:
            return [
                await client.call_tool("search_code", {"query": "submit", "mode": huge}),
                await client.call_tool("find_references", {"target": "handle_submit", "direction": huge}),
                await client.call_tool("find_symbol", {"name": "x", "kind": huge}),
            ]

    for result in asyncio.run(session()):
        text = _text(result)
        assert result.is_error and "\n" not in text and len(text) < 400, text[:200]
        assert "... (1000000 chars)" in text


def test_a_path_filter_naming_nothing_indexed_is_an_error_naming_the_nearest_path(sample_repo: Path):
    async def session() -> list:
        async with Client(build_server(sample_repo)) as client:
            return [
                await client.call_tool("search_code", {"query": "session", "path": "src/aut"}),
                await client.call_tool("find_symbol", {"name": "save", "path": "src/aut"}),
                await client.call_tool("get_focused_context", {"query": "save", "paths": ["src/aut"]}),
                await client.call_tool("search_history", {"path": "src/aut"}),
            ]

    results = asyncio.run(session())
    assert all(r.is_error for r in results)
    line = "no indexed file is under 'src/aut'; the nearest indexed path is 'src/auth': pass a folder or file"
    assert [_text(r) for r in results] == [
        f"{line} the index holds as `{arg}`" for arg in ("path", "path", "paths", "path")
    ]


def test_errors_name_the_tool_arguments_not_command_line_flags(sample_repo: Path, tmp_path: Path):
    missing = tmp_path / "nope"

    async def session() -> list:
        async with Client(build_server(sample_repo)) as client:
            first = await client.call_tool("search_code", {"query": "session expire"})
            query_id = _text(first).splitlines()[-1].split()[-1]
            return [
                await client.call_tool("search_code", {"query": "x", "root": str(missing)}),
                await client.call_tool("run_tests", {"runner": "pytest", "root": str(missing)}),
                await client.call_tool(
                    "search_code", {"query": "other", "query_id": query_id, "language": "go"}
                ),
            ]

    search, tests, rerender = asyncio.run(session())
    assert search.is_error and tests.is_error and rerender.is_error
    no_root = (
        f"repository root {shown_path(str(missing))} does not exist: pass an existing directory as `repo`"
    )
    assert _text(search) == _text(tests) == no_root
    assert _text(rerender) == (
        "a remembered search is shown with its own question and filters: pass `query_id` alone "
        "(without `query`, `language`), or leave `query_id` out to search anew"
    )


def test_read_only_tools_share_a_few_threads_and_indexing_is_never_held_behind_them(make_repo):
    """A read-only tool runs on one of the event loop's READ_THREADS threads
    (more would only wait for the GIL); a tool that indexes takes another
    thread, so it is not kept waiting by reads, nor reads by it."""
    import anyio

    from repolens.server.calls import READ_THREADS, read_limiter

    root = make_repo({"pkg/a.py": "def alpha():\n    return 1\n"})
    order: list[str] = []

    async def scenario() -> None:
        async with Client(build_server({"app": root})) as client:
            await client.call_tool("index_repo", {})
            limiter = read_limiter()
            assert limiter.total_tokens == READ_THREADS
            holders = [object() for _ in range(READ_THREADS)]
            for holder in holders:  # every read thread taken
                await limiter.acquire_on_behalf_of(holder)

            async def read() -> None:
                result = await client.call_tool("read_snippet", {"path": "pkg/a.py", "start": 1, "end": 2})
                order.append("read: " + _text(result).splitlines()[1])

            with anyio.fail_after(120):  # (a read thread shared with indexing would deadlock here)
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(read)
                    await anyio.wait_all_tasks_blocked()
                    refreshed = await client.call_tool("refresh_index", {})
                    order.append("refresh: " + _text(refreshed).split(" ", 1)[0])
                    await anyio.wait_all_tasks_blocked()
                    order.append("a read thread freed")
                    limiter.release_on_behalf_of(holders[0])

    anyio.run(scenario)
    assert order == ["refresh: refreshed", "a read thread freed", "read: 1: def alpha():"]


def test_what_to_run_is_a_tool_over_mcp_and_a_command_in_the_cli(make_repo):
    """A note or a fix telling the caller what to run names the caller's
    front: a tool to an MCP caller, which cannot run `repolens index`; the
    command to a shell user, whose text is as it always was."""
    root = make_repo({"auth.py": "def expire_session(s):\n    return s.close()\n"})
    bare = make_repo({"b.py": "X = 1\n"}, name="bare")

    async def session() -> list[str]:
        async with Client(build_server({"app": root, "bare": bare})) as client:
            await client.call_tool("index_repo", {"repo": "app"})
            (root / "auth.py").write_text("# moved\n\ndef expire_session(s):\n    return s.close()\n")
            calls = (
                ("search_code", {"query": "expire session", "repo": "app"}),
                ("index_status", {"repo": "app"}),
                ("find_references", {"target": "no_such_name", "repo": "app"}),
                ("index_status", {"repo": "bare"}),
                ("find_references", {"target": "X", "repo": ["bare", "bare"]}),
                ("get_chunk", {"chunk_id": "0123456789abcdef", "repo": "app"}),
            )
            return [_text(await client.call_tool(tool, args)) for tool, args in calls]

    search, status, refs, missing, unanswered, chunk = asyncio.run(session())
    assert "1 cited file changed since indexing; refresh_index refreshes the index" in search, search
    assert "(0 new, 1 modified, 0 deleted): call refresh_index to refresh" in status, status
    assert refs.endswith(": find_symbol lists near names; pass one, or a place path:line, as `target`"), refs
    assert missing.startswith("no index for ") and missing.endswith(": call index_repo"), missing
    assert unanswered.startswith("no repository could answer: bare did not answer: no index for ")
    assert unanswered.endswith(": call index_repo"), unanswered  # (its own fix, said once)
    assert "ids come from JSON replies (search_code mode=json); the index may" in chunk, chunk
    commands = ("repolens index", "repolens symbols", "refresh --all", "repolens search")
    replies = (search, status, refs, missing, unanswered, chunk)
    assert not [reply for reply in replies if any(c in reply for c in commands)]

    def cli(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "repolens", *args], capture_output=True, text=True, timeout=120
        )
        return out.stdout + out.stderr

    assert "1 cited file changed since indexing; `repolens index` refreshes the index" in cli(
        "search", "expire session", "--root", str(root)
    )
    assert "modified, 0 deleted): run `repolens index` to refresh" in cli("status", "--root", str(root))
    assert "find_symbol (repolens symbols) lists near names" in cli(
        "refs", "no_such_name", "--root", str(root)
    )
    assert f"no index for {bare}: run `repolens index {bare}`" in cli("status", "--root", str(bare))
    assert "ids come from JSON replies (search_code mode=json; repolens search or focus --json)" in cli(
        "chunk", "0123456789abcdef", "--root", str(root)
    )
