"""Where an index lives is never ambiguous: a flag wins over the environment
and config files, two places named at one level are refused before anything
is written, and replies name the place used. Every combination, on local
folders and the real PostgreSQL the suite starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client

from conftest import SAMPLE_FILES
from conftest import run_repolens as run
from repolens.server.tools import build_server
from repolens.store.handles import readers
from repolens.store.postgres.connect import close_pools


@pytest.fixture(autouse=True)
def _fresh_connections():
    yield
    readers.clear()
    close_pools()


def _keys(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        if not conn.execute("SELECT to_regclass('repos') IS NOT NULL").fetchone()[0]:
            return []
        return [row[0] for row in conn.execute("SELECT key FROM repos ORDER BY key")]


def test_two_flags_are_refused_before_anything_is_written(sample_repo: Path, tmp_path: Path, pg_db):
    folder = tmp_path / "idx"
    for command in (["index", str(sample_repo)], ["search", "session", "--root", str(sample_repo)]):
        both = run(*command, "--index-dir", str(folder), "--store", pg_db.url)
        assert both.returncode == 2
        assert both.stderr == (
            f"error: --index-dir {folder} and --store {pg_db.url} both say where the index lives: "
            "pass only one of them\n"
        )
    assert not folder.exists() and not (sample_repo / ".repolens").exists() and _keys(pg_db.url) == []
    served = run("serve", "--root", str(sample_repo), "--index-dir", str(folder), "--store", pg_db.url)
    assert served.returncode == 2 and "both say where the index lives" in served.stderr


def test_a_flag_wins_over_the_environment_and_the_reply_names_it(sample_repo: Path, tmp_path: Path, pg_db):
    folder = tmp_path / "idx"
    local = run("index", str(sample_repo), "--index-dir", str(folder), env={"REPOLENS_STORE": pg_db.url})
    assert local.returncode == 0, local.stderr
    assert f"-> {folder}" in local.stdout and _keys(pg_db.url) == []
    status = run("status", "--root", str(sample_repo), "--index-dir", str(folder))
    assert status.stdout.splitlines()[0] == (
        f"index of {sample_repo} in {folder} (gen-000001; named by --index-dir)"
    )

    shared = tmp_path / "shared"
    stored = run("index", str(sample_repo), "--store", pg_db.url, env={"REPOLENS_INDEX_DIR": str(shared)})
    assert stored.returncode == 0, stored.stderr
    assert f"-> {pg_db.url}#repo" in stored.stdout and not shared.exists()
    status = run("status", "--root", str(sample_repo), "--store", pg_db.url)
    assert status.stdout.splitlines()[0] == (
        f"index of {sample_repo} in {pg_db.url}#repo (gen-000001; named by --store)"
    )
    by_env = run("status", "--root", str(sample_repo), env={"REPOLENS_STORE": pg_db.url})
    assert by_env.stdout.splitlines()[0].endswith("(gen-000001; named by REPOLENS_STORE)")


def test_two_variables_are_refused(sample_repo: Path, tmp_path: Path, pg_db):
    env = {"REPOLENS_INDEX_DIR": str(tmp_path / "shared"), "REPOLENS_STORE": pg_db.url}
    both = run("index", str(sample_repo), env=env)
    assert both.returncode == 1
    assert both.stderr == (
        f"error: REPOLENS_INDEX_DIR={tmp_path / 'shared'} and REPOLENS_STORE={pg_db.url} both say where "
        "indexes live: unset one of them (or pass --index-dir or --store, which win over both)\n"
    )
    assert run("index", str(sample_repo), "--index-dir", str(tmp_path / "x"), env=env).returncode == 0


def test_a_config_file_and_a_flag_or_variable(make_repo, tmp_path: Path, pg_db):
    root = make_repo({**SAMPLE_FILES, ".repolens.toml": f'[store]\nurl = "{pg_db.url}"\n'})
    folder = tmp_path / "idx"
    flagged = run("index", str(root), "--index-dir", str(folder))  # the flag wins over the file
    assert flagged.returncode == 0 and f"-> {folder}" in flagged.stdout and _keys(pg_db.url) == []

    by_file = run("index", str(root))
    assert by_file.returncode == 0 and f"-> {pg_db.url}#repo" in by_file.stdout
    status = run("status", "--root", str(root))
    assert status.stdout.splitlines()[0].endswith(f"(gen-000001; named by {root}/.repolens.toml [store] url)")

    refused = run("index", str(root), env={"REPOLENS_INDEX_DIR": str(tmp_path / "shared")})
    assert refused.returncode == 1 and refused.stderr == (
        f"error: REPOLENS_INDEX_DIR={tmp_path / 'shared'} names a local folder but {root}/.repolens.toml "
        f"[store] url names the store {pg_db.url}: unset REPOLENS_INDEX_DIR (or pass --index-dir or "
        "--store, which win)\n"
    )
    other = pg_db.url.rsplit("/", 1)[0] + "/elsewhere"
    refused = run("index", str(root), env={"REPOLENS_STORE": other})
    assert refused.returncode == 1 and refused.stderr.startswith(
        f"error: REPOLENS_STORE={other} and {root}/.repolens.toml [store] url ({pg_db.url}) name two stores"
    )
    assert run("status", "--root", str(root), env={"REPOLENS_STORE": pg_db.url}).returncode == 0


def test_a_server_with_a_store_never_touches_a_local_folder_and_says_so(
    sample_repo: Path, pg_db, monkeypatch
):
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)

    async def ask() -> str:
        async with Client(build_server({"app": sample_repo})) as client:
            await client.call_tool("search_code", {"query": "session expiry"})
            result = await client.call_tool("index_status", {})
            return result.content[0].text

    status = asyncio.run(ask())
    assert status.splitlines()[0] == (
        f"index of {sample_repo} in {pg_db.url}#repo (gen-000001; named by REPOLENS_STORE)"
    )
    assert not (sample_repo / ".repolens").exists()


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("postgresql://[::1", "Invalid IPv6 URL"),
        ("postgresql://u:secret@db:port/code", "Port could not be cast to integer value as 'port'"),
    ],
)
def test_a_store_url_that_cannot_be_parsed_is_one_line(sample_repo: Path, url: str, why: str):
    """Refused where it enters (a usage error for the flag, a configuration
    error for the variable), never 'unexpected ValueError (a bug)', and no
    password shown."""
    shown = url.replace(":secret@", ":***@")
    flag = run("status", "--root", str(sample_repo), "--store", url)
    assert (flag.returncode, flag.stdout) == (2, "")
    assert flag.stderr == (
        f"error: --store {shown!r} is not a valid URL ({why}): use postgresql://[user@]host[:port]/database\n"
    )
    variable = run("status", "--root", str(sample_repo), env={"REPOLENS_STORE": url})
    assert (variable.returncode, variable.stdout) == (1, "")
    assert variable.stderr == flag.stderr.replace("--store", "REPOLENS_STORE")


def test_a_libpq_keyword_string_is_no_url_and_its_password_is_not_shown(sample_repo: Path):
    """``host=... password=...`` (libpq's other form) was quoted whole in the
    error, the password with it; URLs' passwords were already masked."""
    flag = run("status", "--root", str(sample_repo), "--store", "host=127.0.0.1 port=1 password=s3cretQ")
    assert (flag.returncode, flag.stdout) == (2, "")
    assert flag.stderr == (
        "error: --store 'host=127.0.0.1 port=1 password=***' is not a PostgreSQL URL: "
        "use postgresql://[user@]host[:port]/database\n"
    )
