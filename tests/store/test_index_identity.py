"""One repository, one index: keys that do not depend on how the store is
named, indexes that record what they hold and refuse another repository,
and the listing and dropping of a store's indexes. On the real PostgreSQL the
suite starts (tests/pgserver.py), and on local index folders."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from conftest import run_repolens as run
from repolens import service
from repolens.errors import ConfigError, IndexIdentityError
from repolens.server.config import load_serve_config
from repolens.server.tools import build_server
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.store.local.layout import shared_key
from repolens.store.postgres.connect import close_pools

ALPHA = {"app/alpha.py": "def alpha_only_handler(request):\n    return request.alpha\n"}
BETA = {"app/beta.py": "def beta_only_handler(request):\n    return request.beta\n"}


@pytest.fixture(autouse=True)
def _fresh_connections():
    yield
    readers.clear()
    close_pools()


def _repo(make_repo, path: str, files: dict[str, str]) -> Path:
    """A git repository of its own (its own root commit) at ``tmp_path/path``."""
    root = make_repo(files, name=path.replace("/", "_"))
    target = root.parent / path
    target.parent.mkdir(parents=True, exist_ok=True)
    root.rename(target)
    return target


@pytest.mark.parametrize("given", ["flag", "environment", "config"])
def test_configured_roots_are_keyed_by_their_names_however_the_store_is_given(
    make_repo, tmp_path: Path, pg_db, given: str, monkeypatch
):
    a = _repo(make_repo, "x/a/main", ALPHA)
    b = _repo(make_repo, "x/b/main", BETA)
    config = tmp_path / "k.toml"
    store_table = f'\n[store]\nurl = "{pg_db.url}"\n' if given == "config" else ""
    config.write_text(f'[roots]\na = {{ main = "{a}" }}\nb = {{ main = "{b}" }}\n{store_table}')
    flag = ["--store", pg_db.url] if given == "flag" else []
    env = {"REPOLENS_STORE": pg_db.url} if given == "environment" else {}

    done = run("refresh", "--all", "--config", str(config), *flag, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [json.loads(line)["repo"] for line in done.stdout.splitlines()] == ["a@main", "b@main"]

    listed = run("indexes", "--store", pg_db.url, "--json")
    assert [i["key"] for i in json.loads(listed.stdout)["indexes"]] == ["a@main", "b@main"]

    # A server of that config answers a's questions from a's index, b's from b's.
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)
    roots = load_serve_config(config_file=str(config), read_token=False, env={}).roots

    async def ask() -> list[str]:
        async with Client(build_server(roots, remote=True)) as client:
            calls = [("alpha_only_handler", "a"), ("beta_only_handler", "a"), ("beta_only_handler", "b")]
            return [
                "\n".join(
                    c.text for c in (await client.call_tool("find_symbol", {"name": n, "repo": r})).content
                )
                for n, r in calls
            ]

    in_a, beta_in_a, in_b = asyncio.run(ask())
    assert "app/alpha.py:1" in in_a
    assert "beta.py" not in beta_in_a
    assert "app/beta.py:1" in in_b


def test_an_index_holding_another_repository_is_refused_for_writing_and_reading(
    make_repo, pg_db, monkeypatch
):
    shared = {".repolens.toml": '[store]\nkey = "shared"\n'}
    first = _repo(make_repo, "first", {**ALPHA, **shared})
    other = _repo(make_repo, "other", {**BETA, **shared})
    env = {"REPOLENS_STORE": pg_db.url}
    assert run("index", str(first), env=env).returncode == 0

    refused = run("index", str(other), env=env)
    assert refused.returncode == 1
    line = refused.stderr.strip()
    assert "\n" not in line and line.startswith(
        f"error: the index {pg_db.url}#shared holds another repository (git root "
    )
    assert f"at {first}), not {other} (git root " in line
    assert "give " + str(other) + " a key of its own with [store] key in its .repolens.toml" in line
    assert line.endswith("or remove the old index with `repolens drop shared` and the same store")

    searched = run("search", "beta handler", "--root", str(other), env=env)
    assert searched.returncode == 1 and searched.stderr.strip() == line
    assert run("search", "alpha handler", "--root", str(first), env=env).returncode == 0

    # Over MCP: the same line, as a tool error, but for the drop only the operator can do.
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)

    async def ask():
        async with Client(build_server({"other": other})) as client:
            return await client.call_tool("search_code", {"query": "beta handler"})

    result = asyncio.run(ask())
    assert result.is_error and result.content[0].text == line.removeprefix("error: ").replace(
        "remove the old index with `repolens drop shared` and the same store",
        "ask the server's operator to remove the old index shared",
    )

    # The same repository elsewhere (a clone: the same root commit) reads and writes it.
    clone = first.parent / "clone"
    subprocess.run(["git", "clone", "-q", str(first), str(clone)], check=True, capture_output=True)
    assert run("search", "alpha handler", "--root", str(clone), env=env).returncode == 0
    assert run("index", str(clone), env=env).returncode == 0

    # After `repolens drop`, the other repository gets the key.
    dropped = run("drop", "shared", "--store", pg_db.url)
    assert dropped.returncode == 0, dropped.stderr
    assert dropped.stdout.startswith(f"dropped shared from {pg_db.url} (was shared: gen-")
    assert run("index", str(other), env=env).returncode == 0


def test_an_index_folder_given_to_two_repositories_is_refused(make_repo, tmp_path: Path):
    first = _repo(make_repo, "first", ALPHA)
    other = _repo(make_repo, "other", BETA)
    folder = tmp_path / "one-index"
    assert run("index", str(first), "--index-dir", str(folder)).returncode == 0
    refused = run("index", str(other), "--index-dir", str(folder))
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith(
        f"pass another --index-dir for {other}, or delete {folder} to index it anew"
    )

    # Over MCP the folder is the server's: its operator is asked, not the caller told to pass a flag.
    async def ask():
        async with Client(build_server(other, index_dir=folder)) as client:
            return await client.call_tool("search_code", {"query": "beta handler"})

    result = asyncio.run(ask())
    assert result.is_error and result.content[0].text == refused.stderr.strip().removeprefix(
        "error: "
    ).replace(
        f"pass another --index-dir for {other}, or delete {folder} to index it anew",
        f"ask the server's operator to serve {other} with another --index-dir, "
        f"or to delete {folder} to index it anew",
    )
    found = run("search", "alpha handler", "--root", str(first), "--index-dir", str(folder))
    assert found.returncode == 0 and found.stdout.startswith("app/alpha.py:1-2")
    # An index inside the repository moves with it: no identity to check there.
    assert run("index", str(other)).returncode == 0
    moved = other.parent / "moved"
    other.rename(moved)
    assert run("search", "beta handler", "--root", str(moved)).stdout.startswith("app/beta.py:1-2")


def test_two_configured_roots_that_would_share_an_index_are_refused(make_repo, tmp_path: Path, pg_db):
    one = _repo(make_repo, "one", ALPHA)
    config = tmp_path / "k.toml"
    config.write_text(f'[roots]\nfirst = "{one}"\nsecond = "{one}"\n[store]\nurl = "{pg_db.url}"\n')
    with pytest.raises(ConfigError) as caught:
        load_serve_config(config_file=str(config), read_token=False, env={})
    assert str(caught.value) == (
        f"{config}: repositories first and second would share one index ({pg_db.url}#second), "
        f"both being {one}: name each folder once"
    )
    served = run("serve", "--http", "--no-auth", "--config", str(config))
    assert served.returncode == 1 and "repositories first and second would share one index" in served.stderr

    # Two repositories whose .repolens.toml name one key.
    other = _repo(make_repo, "other", BETA)
    for root in (one, other):
        (root / ".repolens.toml").write_text('[store]\nkey = "same"\n')
    config.write_text(f'[roots]\none = "{one}"\nother = "{other}"\n[store]\nurl = "{pg_db.url}"\n')
    roots = load_serve_config(config_file=str(config), read_token=False, env={}).roots
    assert list(roots) == ["one", "other"]  # the [roots] names win over [store] key: no clash


def test_indexes_lists_a_store_and_drop_removes_an_orphan(make_repo, pg_db):
    app = _repo(make_repo, "app", ALPHA)
    env = {"REPOLENS_STORE": pg_db.url}
    assert run("index", str(app), env=env).returncode == 0

    listed = run("indexes", env=env)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"1 index in {pg_db.url}"
    assert lines[1].startswith("app: gen-000001, 1 file, 1 chunk, updated ")
    assert lines[1].endswith(f", at {app} on branch main") and "; holds git root " in lines[1]

    unknown = run("drop", "nope", env=env)
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == f"error: no index 'nope' in {pg_db.url}: its indexes are app"

    store = open_store(app, url=pg_db.url)
    with store.write_lock():  # a writer at work: drop waits for nothing and says so
        busy = run("drop", "app", env=env)
    assert busy.returncode == 1 and "is writing the index in" in busy.stderr

    assert run("drop", "app", env=env).returncode == 0
    assert run("indexes", env=env).stdout.strip() == f"0 indexes in {pg_db.url}"
    missing = run("search", "alpha", "--root", str(app), env=env)  # built anew on first use
    assert missing.returncode == 0 and missing.stdout.startswith("app/alpha.py:1-2")


def test_indexes_and_drop_in_a_shared_index_folder(make_repo, tmp_path: Path):
    app = _repo(make_repo, "app", ALPHA)
    shared = tmp_path / "indexes"
    env = {"REPOLENS_INDEX_DIR": str(shared)}
    assert run("index", str(app), env=env).returncode == 0
    listed = run("indexes", "--json", env=env)
    (entry,) = json.loads(listed.stdout)["indexes"]
    assert entry["state"] == "published" and entry["files"] == 1 and str(app) in entry["holds"]
    dropped = run("drop", entry["key"], env=env)
    assert dropped.returncode == 0, dropped.stderr
    assert list(shared.iterdir()) == []

    nothing = run("indexes", cwd=tmp_path)
    assert nothing.returncode == 2
    assert nothing.stderr.startswith("error: no store holding many indexes is named: pass --store URL")


def test_a_folder_a_failed_first_build_left_is_listed_with_its_fix_and_dropped(tmp_path: Path):
    """Earlier versions left a folder holding only write.lock and .gitignore
    where a first build failed; `indexes` did not list it and `drop` said no
    such index. A folder that is no index stays unlisted."""
    shared = tmp_path / "indexes"
    leftover = shared / "tmp_gone"
    leftover.mkdir(parents=True)
    (leftover / ".gitignore").write_text("*\n")
    (leftover / "write.lock").write_text("4242")
    (shared / "notes").mkdir()
    env = {"REPOLENS_INDEX_DIR": str(shared)}
    listed = run("indexes", env=env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        f"1 index in {shared}",
        "tmp_gone: empty (no generation): remove it with `repolens drop tmp_gone`",
    ]
    assert json.loads(run("indexes", "--json", env=env).stdout)["indexes"][0]["state"] == "empty"
    dropped = run("drop", "tmp_gone", env=env)
    assert (dropped.returncode, dropped.stdout) == (
        0,
        f"dropped tmp_gone from {shared} (was tmp_gone: empty (no generation))\n",
    )
    assert list(shared.iterdir()) == [shared / "notes"]


def test_an_index_built_before_identities_gets_one_at_its_next_refresh(make_repo, pg_db, monkeypatch):
    app = _repo(make_repo, "app", ALPHA)
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)
    service.index_repo(app)
    store = open_store(app)
    import psycopg

    with psycopg.connect(pg_db.url, autocommit=True) as conn:  # as an index of the previous version
        conn.execute("DELETE FROM meta WHERE key IN ('repo_git_root', 'repo_remote')")
    assert "repo_git_root" not in store.generation_meta(store.current())
    service.index_repo(app)
    meta = store.generation_meta(store.current())
    assert len(meta["repo_git_root"]) == 40 and meta["root"] == str(app)
    with pytest.raises(IndexIdentityError):  # and a repository elsewhere is now refused by it
        other = _repo(make_repo, "elsewhere/app", BETA)
        service.index_repo(other)


def test_roots_whose_paths_differ_only_by_a_slash_or_an_underscore_get_indexes_of_their_own(
    make_repo, tmp_path: Path
):
    """``x/a/b`` and ``x/a_b`` once shared the key ``x_a_b`` in a shared index
    folder, so the second was refused ("holds another repository"); keys are
    one per root now, and an index made under the earlier key is kept by the
    root it records."""
    nested, flat = _repo(make_repo, "x/a/b", ALPHA), _repo(make_repo, "x/a_b", BETA)
    shared = tmp_path / "indexes"
    env = {"REPOLENS_INDEX_DIR": str(shared)}
    for root in (nested, flat):
        done = run("index", str(root), env=env)
        assert done.returncode == 0, done.stderr
    assert len(list(shared.iterdir())) == 2
    assert "alpha_only_handler" in run("search", "alpha only handler", "--root", str(nested), env=env).stdout
    assert "beta_only_handler" in run("search", "beta only handler", "--root", str(flat), env=env).stdout

    # the index of a root keyed as earlier versions keyed it is the root's still
    key = shared / shared_key(flat)
    legacy = shared / re.sub(r"[^A-Za-z0-9._-]+", "_", str(flat).strip("/"))
    key.rename(legacy)
    again = run("index", str(flat), env=env)
    assert again.returncode == 0 and again.stdout.startswith("refreshed"), again.stdout
    assert sorted(shared.iterdir()) == sorted([legacy, shared / shared_key(nested)])
