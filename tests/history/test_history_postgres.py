"""The history over the PostgreSQL store, end to end on a real git repository:
`repolens history`, a search's history vote (`--explain`) and the MCP tool
`search_history` answer exactly as they do over the local store."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import UPLOAD_FILES, Git, MakeRepo, commit_upload_history
from conftest import UPLOAD_QUESTION as QUESTION
from conftest import commit_files as commit

FILES = {
    **UPLOAD_FILES,
    "store.py": "".join(f"value_{i} = {i}\n" for i in range(30)),
    "docs/notes.md": "# Notes\n\nNothing about uploads here.\n",
}


@pytest.fixture
def repo(make_repo: MakeRepo, git: Git) -> Path:
    root = make_repo(FILES)
    commit_upload_history(git, root)
    commit(git, root, "Expire sessions after an hour", {"store.py": "TTL = 3600\n" + FILES["store.py"]})
    (root / "session").mkdir()
    git(root, "mv", "store.py", "session/store.py")
    commit(git, root, "Move the store into session")
    commit(git, root, "Retry the transfer once more", {"net/upload.py": FILES["net/upload.py"] + "\n\n"})
    return root


def run(*args: str, env: dict[str, str] | None = None) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REPOLENS_INDEX", "REPOLENS_STORE"))}
    done = subprocess.run(
        [sys.executable, "-m", "repolens.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **(env or {})},
        check=False,
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def test_history_and_the_vote_over_postgresql_equal_the_local_store(pg_db, repo: Path, tmp_path: Path):
    local = ("--index-dir", str(tmp_path / "local-index"))
    pg = ("--store", pg_db.url)
    for where in (local, pg):
        assert "history: 6 commits up to" in run("index", str(repo), *where)
    asks = [
        ("history", QUESTION, "--root", str(repo)),
        ("history", "sessions expire", "--root", str(repo), "--json"),
        ("history", "--path", "session/store.py", "--root", str(repo)),
        ("history", "--path", "store.py", "--root", str(repo)),  # its name before the move
        ("history", "transfer", "--path", "net/upload.py", "--root", str(repo), "--top-k", "1"),
        ("search", QUESTION, "--root", str(repo), "--explain"),
        ("search", QUESTION, "--root", str(repo), "--files"),
    ]
    for ask in asks:
        assert run(*ask, *pg) == run(*ask, *local), ask
    explained = run("search", QUESTION, "--root", str(repo), "--explain", *pg)
    assert (
        "history: 2 similar commits, e.g." in explained and "'Retry the transfer when it fails'" in explained
    )
    assert "history leg off" not in explained
    listed = run("history", "--path", "session/store.py", "--root", str(repo), *pg)
    assert "Move the store into session" in listed and "Expire sessions after an hour" in listed
    assert "note: store.py is named session/store.py since a rename" in run(
        "history", "--path", "store.py", "--root", str(repo), *pg
    )


def test_the_mcp_history_tool_reads_postgresql(pg_db, repo: Path):
    run("index", str(repo), "--store", pg_db.url)
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}
    args = ["-m", "repolens", "serve", "--root", str(repo), "--no-watch"]
    env["REPOLENS_STORE"] = pg_db.url
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def session() -> tuple:
        async with Client(params, read_timeout_seconds=60) as client:
            return (
                await client.call_tool("search_history", {"query": "sessions expire", "top_k": 1}),
                await client.call_tool("search_code", {"query": QUESTION, "explain": True}),
            )

    history, search = asyncio.run(session())
    assert not history.is_error and not search.is_error
    assert "Expire sessions after an hour\n  files: session/store.py" in history.content[0].text
    assert "history: 2 similar commits" in search.content[0].text
    assert not (repo / ".repolens").exists()
