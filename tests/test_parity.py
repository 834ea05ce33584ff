"""One request, one reply: the same question asked through the library
(``repolens.service``), the command line (a real subprocess), MCP over stdio
(the SDK's client and a real server process) and MCP over streamable HTTP
(a real server, a bearer token) gets the same text, byte for byte.

Every tool is asked, in each of its modes, of two repositories: one with no
config file (every bound is the default all fronts share) and one whose
``.repolens.toml`` sets ``top_k``, ``max_chars`` and ``context_lines``
(what a call leaves out, the repository's settings decide, on every front).
Two differences are by design and applied, written out, before comparing:
a remote (HTTP) caller sees a repository's name, ``<name>``, where the
others see its folder (:meth:`repolens.server.repos.Repos.redact`), and an
index report's duration is a measurement, not part of the answer.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import SAMPLE_FILES, run_git, run_repolens, write_tree_files
from repolens import service, testrun
from repolens.branches.registry import EMPTY
from repolens.budget import READ_MAX_CHARS
from server.test_http import TOKEN, connect, free_port, running_server, server_env

CONFIG = "top_k = 2\nmax_chars = 1500\ncontext_lines = 1\n"
QUESTION = "where do sessions expire and how is the submitted form checked?"
# A test the run_tests questions run (with this interpreter's pytest: REPOLENS_TEST_PYTHON).
TESTS = {"tests/test_forms.py": "def test_a_form_needs_an_email():\n    assert 'email'\n"}
HISTORY = {
    "src/auth/session.py": SAMPLE_FILES["src/auth/session.py"].replace("3600", "7200"),
    "src/web/forms.py": SAMPLE_FILES["src/web/forms.py"] + "\n\ndef reset(form):\n    form.clear()\n",
}


@dataclass
class Repo:
    """A served repository: its name (as MCP callers name it) and folder."""

    name: str
    root: Path


@dataclass
class Question:
    """One request on every front: the MCP tool and its arguments, the
    command line's arguments, and the library's call."""

    label: str
    tool: str
    arguments: dict[str, object]
    command: list[str]
    library: Callable[[Path], str]


def questions(chunk_id: str) -> list[Question]:
    """Every tool, each mode; ``chunk_id`` is one the repository holds."""
    read = ("src/web/forms.py", 1, 9)
    return [
        Question("search", "search_code", {"query": QUESTION}, ["search", QUESTION], _search()),
        Question(
            "search files",
            "search_code",
            {"query": QUESTION, "mode": "files"},
            ["search", QUESTION, "--files"],
            _search(mode="files"),
        ),
        Question(
            "search json",
            "search_code",
            {"query": QUESTION, "mode": "json"},
            ["search", QUESTION, "--json"],
            _search(mode="json"),
        ),
        Question(
            "search with top_k and max_chars",
            "search_code",
            {"query": QUESTION, "top_k": 3, "max_chars": 900},
            ["search", QUESTION, "-k", "3", "--max-chars", "900"],
            _search(top_k=3, max_chars=900),
        ),
        Question(
            "find_symbol",
            "find_symbol",
            {"name": "SessionStore"},
            ["symbols", "SessionStore"],
            lambda root: service.find_symbol("SessionStore", root).render(),
        ),
        Question(
            "find_symbol bounded",
            "find_symbol",
            {"name": "handle*", "limit": 1, "max_chars": 300},
            ["symbols", "handle*", "--limit", "1", "--max-chars", "300"],
            lambda root: service.find_symbol("handle*", root, limit=1, max_chars=300).render(),
        ),
        Question(
            "get_focused_context",
            "get_focused_context",
            {"query": "email is required"},
            ["focus", "email is required"],
            lambda root: service.focus("email is required", root).render(),
        ),
        Question(
            "get_focused_context bounded",
            "get_focused_context",
            {"query": "session", "max_files": 1, "max_blocks": 2, "max_chars": 700},
            ["focus", "session", "--max-files", "1", "--max-blocks", "2", "--max-chars", "700"],
            lambda root: service.focus("session", root, max_files=1, max_blocks=2, max_chars=700).render(),
        ),
        Question(
            "find_references",
            "find_references",
            {"target": "SessionStore"},
            ["refs", "SessionStore"],
            lambda root: service.find_references("SessionStore", root).render(),
        ),
        Question(
            "find_references callers",
            "find_references",
            {"target": "SessionStore.save", "direction": "callers", "depth": 2, "max_chars": 800},
            ["refs", "SessionStore.save", "--callers", "--depth", "2", "--max-chars", "800"],
            lambda root: service.find_references(
                "SessionStore.save", root, direction="callers", depth=2, max_chars=800
            ).render(),
        ),
        Question(
            "impact",
            "impact",
            {"target": "src/auth/session.py:11-15"},
            ["impact", "src/auth/session.py:11-15"],
            lambda root: service.impact("src/auth/session.py:11-15", root).render(),
        ),
        Question(
            "impact bounded",
            "impact",
            {"target": "SessionStore", "depth": 1, "max_chars": 300},
            ["impact", "SessionStore", "--depth", "1", "--max-chars", "300"],
            lambda root: service.impact("SessionStore", root, depth=1, max_chars=300).render(),
        ),
        Question(
            "search_history",
            "search_history",
            {"query": "session lifetime"},
            ["history", "session lifetime"],
            lambda root: service.search_history("session lifetime", root).render(),
        ),
        Question(
            "search_history of a file",
            "search_history",
            {"path": "src/web/forms.py", "top_k": 1},
            ["history", "--path", "src/web/forms.py", "-k", "1"],
            lambda root: service.search_history(None, root, path="src/web/forms.py", top_k=1).render(),
        ),
        Question(
            "read_snippet",
            "read_snippet",
            {"path": read[0], "start": read[1], "end": read[2]},
            ["read", *map(str, read)],
            lambda root: service.read_snippet(root, *read).render(READ_MAX_CHARS),
        ),
        Question(
            "get_chunk",
            "get_chunk",
            {"chunk_id": chunk_id},
            ["chunk", chunk_id],
            lambda root: service.get_chunk(chunk_id, root).render(),
        ),
        Question(
            "index_status",
            "index_status",
            {},
            ["status"],
            lambda root: service.index_status(root).render(),
        ),
        Question(
            "run_tests",
            "run_tests",
            {"runner": "pytest", "args": ["tests"]},
            ["test", "pytest", "tests"],
            lambda root: testrun.render(testrun.run_tests(root, "pytest", ["tests"])),
        ),
        Question(
            "refresh_index",
            "refresh_index",
            {},
            ["index"],
            lambda root: service.index_repo(root).summary(),
        ),
    ]


def _search(**given: object) -> Callable[[Path], str]:
    return lambda root: service.search_code(QUESTION, root, **given).text  # type: ignore[arg-type]


@dataclass
class Served:
    """The repositories, and each question's reply on each front."""

    repos: list[Repo]
    replies: dict[tuple[str, str, str], str]  # (repository, question, front) -> text


FRONTS = ("library", "cli", "stdio", "http")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("parity")
    gitconfig = base / "gitconfig"
    gitconfig.write_text("")
    with pytest.MonkeyPatch.context() as mp:
        for name in [n for n in os.environ if n.startswith("REPOLENS_")]:
            mp.delenv(name)
        mp.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        mp.setenv("REPOLENS_TEST_PYTHON", sys.executable)
        repos = [Repo("plain", _repository(base / "plain")), Repo("configured", _repository(base / "cfg"))]
        (repos[1].root / ".repolens.toml").write_text(CONFIG)
        for repo in repos:
            service.index_repo(repo.root)
        hit = service.search_code("SessionStore", repos[0].root, mode="json").to_json()["hits"][0]
        asked = questions(hit["chunk_ids"][0])
        env = server_env({"REPOLENS_TEST_PYTHON": sys.executable})
        roots = [arg for repo in repos for arg in ("--root", f"{repo.name}={repo.root}")]
        with running_server(
            [*roots, "--no-watch", "--allow-tests"],
            {**env, "REPOLENS_TOKEN": TOKEN},
            base / "http.err",
            free_port(),
        ) as server:
            replies = asyncio.run(_every_front(repos, asked, roots, env, base, server.url))
        yield Served(repos, replies)


def _repository(root: Path) -> Path:
    """SAMPLE_FILES and two commits after them: a history to search."""
    root.mkdir()
    run_git(root, "init", "-q", "-b", "main")
    write_tree_files(root, {**SAMPLE_FILES, **TESTS})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "Sessions and forms")
    for message, (path, text) in zip(
        ["Double the session lifetime to two hours", "Forms can be reset"], HISTORY.items(), strict=True
    ):
        write_tree_files(root, {path: text})
        run_git(root, "commit", "-q", "-am", message)
    return root


def _cli(command: list[str], root: Path, cwd: Path) -> str:
    """``repolens COMMAND`` for ``root`` (``test`` takes its options before the runner)."""
    where = [root.as_posix()] if command[0] == "index" else ["--root", root.as_posix()]
    words = [command[0], *where, *command[1:]] if command[0] == "test" else [*command, *where]
    done = run_repolens(*words, env={"REPOLENS_TEST_PYTHON": sys.executable}, cwd=cwd)
    assert done.returncode == 0, f"repolens {' '.join(command)}: {done.stderr}"
    assert done.stdout.endswith("\n")
    return done.stdout[:-1]


def _text(result) -> str:
    assert not result.is_error, result.content
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def _every_front(
    repos: list[Repo], asked: list[Question], roots: list[str], env: dict[str, str], cwd: Path, url: str
) -> dict[tuple[str, str, str], str]:
    """Each question of each repository on the four fronts, one question
    after the other (a refresh changes what a later status says)."""
    args = ["-m", "repolens", "serve", *roots, "--no-watch"]
    stdio = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=cwd)
    replies: dict[tuple[str, str, str], str] = {}
    async with Client(stdio, read_timeout_seconds=120) as local, connect(url) as remote:
        for repo in repos:
            for q in asked:
                arguments = {**q.arguments, "repo": repo.name}
                replies[repo.name, q.label, "library"] = q.library(repo.root)
                replies[repo.name, q.label, "cli"] = _cli(q.command, repo.root, cwd)
                replies[repo.name, q.label, "stdio"] = _text(await local.call_tool(q.tool, arguments))
                replies[repo.name, q.label, "http"] = _text(await remote.call_tool(q.tool, arguments))
    return replies


def _as_remote(text: str, repos: list[Repo]) -> str:
    """``text`` as a remote caller reads it: a repository's name for its folder."""
    for repo in repos:
        text = text.replace(str(repo.root), f"<{repo.name}>")
    return text


def _undated(text: str) -> str:
    """A report less its durations (``in 0.04s``, ``0.31s``)."""
    return re.sub(r"\b\d+(\.\d+)?s\b", "Ns", text)


def _as_remote_run(text: str, root: Path) -> str:
    """A test run's reply as a remote caller reads it: the folder of the
    runner, outside the repository, as ``<server>`` (repolens.testrun.render)."""
    folder = testrun.run_tests(root, "pytest", ["tests"]).server_folder
    return re.sub(re.escape(folder) + r"(?![\w-]|\.\w)", "<server>", text)


QUESTIONS = [q.label for q in questions("0" * 16)]


@pytest.mark.parametrize("repository", ["plain", "configured"])
@pytest.mark.parametrize("label", QUESTIONS)
def test_every_front_gives_the_same_reply(served: Served, repository: str, label: str) -> None:
    library = served.replies[repository, label, "library"]
    assert library.strip()
    for front in FRONTS[1:]:
        text = served.replies[repository, label, front]
        expected = _as_remote(library, served.repos) if front == "http" else library
        if front == "http" and label == "run_tests":
            expected = _as_remote_run(expected, served.repos[0].root)
        if label in ("refresh_index", "run_tests"):
            text, expected = _undated(text), _undated(expected)
        assert text == expected, f"{front} differs from the library for {label!r} of {repository}"


def test_a_repository_config_decides_what_a_call_leaves_out(served: Served) -> None:
    """The configured repository's replies keep to its settings on every front
    (``top_k = 2``: two hits, ``max_chars = 1500``), and a call's own
    arguments win over them."""
    for front in FRONTS:
        configured = served.replies["configured", "search files", front]
        plain = served.replies["plain", "search files", front]
        assert len(re.findall(r"^\d+\. ", configured, re.M)) == 2, configured
        assert len(re.findall(r"^\d+\. ", plain, re.M)) > 2, plain
        assert len(served.replies["configured", "search", front]) <= 1500
        given = served.replies["configured", "search with top_k and max_chars", front]
        assert len(given) <= 900


def test_compare_and_the_list_of_repositories_are_the_same_everywhere(tmp_path: Path, served: Served) -> None:
    """compare_branches (library, CLI, MCP) and list_repositories (MCP) over
    two branches of one repository."""
    main = served.repos[0].root
    dev = tmp_path / "dev"
    run_git(main, "worktree", "add", "-q", "-b", "dev", str(dev))
    write_tree_files(dev, {"src/web/forms.py": HISTORY["src/web/forms.py"] + "\n# dev\n"})
    service.index_repo(dev)
    roots = {"app@main": main, "app@dev": dev}
    config = tmp_path / "roots.toml"
    config.write_text("[roots]\n" + "".join(f'"{k}" = "{p}"\n' for k, p in roots.items()))
    paths = ["src/web", "src/auth/session.py"]
    library = service.compare_branches("app", roots, EMPTY, paths=paths).render()
    where = [arg for path in paths for arg in ("--path", path)]
    cli = run_repolens("compare", "--repo", "app", "--config", str(config), *where, cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout == library + "\n"
    server_roots = [arg for key, root in roots.items() for arg in ("--root", f"{key}={root}")]
    env = server_env()
    calls = [("compare_branches", {"repo": "app", "paths": paths}), ("list_repositories", {})]

    async def ask(client: Client) -> list[str]:
        return [_text(await client.call_tool(tool, arguments)) for tool, arguments in calls]

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "repolens", "serve", *server_roots, "--no-watch"], env=env
    )

    async def over_stdio() -> list[str]:
        async with Client(params, read_timeout_seconds=120) as client:
            return await ask(client)

    async def over_http(url: str) -> list[str]:
        async with connect(url) as client:
            return await ask(client)

    stdio = asyncio.run(over_stdio())
    http_env = {**env, "REPOLENS_TOKEN": TOKEN}
    with running_server(
        [*server_roots, "--no-watch"], http_env, tmp_path / "http.err", free_port()
    ) as server:
        http = asyncio.run(over_http(server.url))
    assert stdio[0] == library
    remote = [Repo(key, root) for key, root in roots.items()]
    assert http[0] == _as_remote(library, remote)
    assert http[1] == _as_remote(stdio[1], remote)
