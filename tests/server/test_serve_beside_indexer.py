"""A server started while an indexer builds a repository's first index (as
deploy/compose.yaml starts both on an empty database): it serves at once,
says the index is being built, and answers from it once it is published.
On local folders and the real PostgreSQL the suite starts."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from conftest import write_lock_held
from repolens import service
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.store.postgres.connect import close_pools
from server.test_http import connect, free_port, running_server, server_env, text_of


def test_a_server_serves_while_another_process_builds_the_first_index(
    sample_repo: Path, tmp_path: Path, store_url
):
    store = open_store(sample_repo)  # the store the server opens (REPOLENS_STORE or local)
    extra = {"REPOLENS_INDEX_WAIT": "1"}
    if store_url:
        extra["REPOLENS_STORE"] = store_url
    args = ["--no-auth", "--no-watch", "--root", str(sample_repo)]  # named (and keyed) "repo"
    try:
        with contextlib.ExitStack() as indexer:
            indexer.enter_context(write_lock_held(store))  # an indexer building the first index
            with running_server(args, server_env(extra), tmp_path / "err", free_port()) as server:
                assert "repo is being indexed by another process" in server.stderr()

                async def ask() -> tuple[bool, str]:
                    async with connect(server.url, token=None) as client:
                        result = await client.call_tool("search_code", {"query": "session expiry"})
                        return bool(result.is_error), text_of(result)

                is_error, text = asyncio.run(ask())
                assert is_error and text.startswith("the index of <repo> in ")  # folders redacted
                assert "is still being built by another process (pid " in text
                assert text.endswith(
                    "it is answered from as soon as that build is published; try again shortly"
                )

                indexer.close()
                service.index_repo(sample_repo)  # the indexer publishes
                is_error, text = asyncio.run(ask())
                assert not is_error and text.startswith("src/auth/session.py:")
    finally:
        readers.clear()
        close_pools()
