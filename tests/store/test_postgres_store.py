"""The PostgreSQL store end to end, on a real server (tests/pgserver.py): the CLI over
it, parity with the local store, a reader during a rebuild, kill -9 and resume,
a server that goes away and comes back, and a streaming replica that lags."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repolens import service
from repolens.errors import StoreUnavailableError
from repolens.index.build import BATCH_FILES
from repolens.search.query import parse_query
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.store.postgres.connect import close_pools

QUERIES = (
    "session expiry store",
    "validate submitted form email",
    "parse url host path",
    "HandleSubmit fetch",
)


@pytest.fixture(autouse=True)
def _fresh_connections():
    yield
    readers.clear()
    close_pools()


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repolens.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_the_cli_indexes_searches_refreshes_and_reports_on_postgresql(pg_db, sample_repo: Path):
    url = pg_db.url
    built = cli("index", str(sample_repo), "--store", url)
    assert built.returncode == 0, built.stderr
    assert f"{url}#repo" in built.stdout and not (sample_repo / ".repolens").exists()

    found = cli("search", "session expiry", "--root", str(sample_repo), "--store", url)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("src/auth/session.py:")

    symbols = cli("symbols", "handle_submit", "--root", str(sample_repo), "--store", url)
    assert "src/web/forms.py" in symbols.stdout and "web/app.js" in symbols.stdout

    focus = cli("focus", "SessionStore load", "--root", str(sample_repo), "--store", url)
    assert focus.returncode == 0 and "def load(self, session_id):" in focus.stdout

    (sample_repo / "src" / "auth" / "tokens.py").write_text(
        "def rotate_refresh_token(old):\n    return old[::-1]\n"
    )
    refreshed = cli("index", str(sample_repo), "--store", url)
    assert refreshed.returncode == 0 and "1 new" in refreshed.stdout
    found = cli("search", "rotate refresh token", "--root", str(sample_repo), env={"REPOLENS_STORE": url})
    assert found.stdout.startswith("src/auth/tokens.py:1-2")

    status = cli("status", "--root", str(sample_repo), "--store", url)
    assert status.returncode == 0, status.stderr
    assert "files 6," in status.stdout and url in status.stdout
    assert "\nhistory: 1 commit up to " in status.stdout


def test_an_unreachable_server_is_one_line_without_the_password(sample_repo: Path):
    from pgserver import free_port

    url = f"postgresql://alice:s3cret-pw@127.0.0.1:{free_port()}/code"
    for args in (("index", str(sample_repo)), ("search", "session", "--root", str(sample_repo))):
        done = cli(*args, "--store", url)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr and "s3cret" not in done.stderr + done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "postgresql://alice@127.0.0.1" in lines[0], done.stderr
        assert "PGPASSWORD" in lines[0]


def test_a_role_refused_the_tables_is_one_line_naming_the_grant(pg_db, sample_repo: Path):
    """A role without the privileges ended ``status`` and ``index`` as
    "unexpected InsufficientPrivilege ... (a bug)", exit 70."""
    assert cli("index", str(sample_repo), "--store", pg_db.url).returncode == 0
    with pg_db.connect() as conn:
        conn.execute("CREATE ROLE repolens_no_grants LOGIN")
    try:
        url = pg_db.url.replace("://postgres@", "://repolens_no_grants@", 1)
        assert url != pg_db.url
        for args in (("status", "--root", str(sample_repo)), ("index", str(sample_repo))):
            done = cli(*args, "--store", url)
            lines = done.stderr.strip().splitlines()
            assert done.returncode == 1 and len(lines) == 1, done.stderr
            assert lines[0].startswith("error: PostgreSQL store postgresql://repolens_no_grants@")
            assert "refused this role: permission denied for " in lines[0] and "grant the role" in lines[0]
        with pg_db.connect() as conn:  # a reader's grants: it searches, and cannot remember what it found
            conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO repolens_no_grants")
        found = cli("search", "session expiry", "--root", str(sample_repo), "--store", url)
        assert found.returncode == 0 and found.stdout.startswith("note: this search is not remembered"), found
        assert "a read-only disk or database role" in found.stdout.splitlines()[0]
    finally:
        close_pools()
        with pg_db.connect() as conn:
            conn.execute("DROP OWNED BY repolens_no_grants")
            conn.execute("DROP ROLE repolens_no_grants")


# What `pip install .` leaves out: the `postgres` extra (pyproject.toml).
_NO_POSTGRES_EXTRA = ("psycopg", "psycopg_pool", "pgvector")
_INSTALL_THE_EXTRA = "pip install 'repolens[postgres]'"


def test_without_the_postgres_extra_a_store_is_a_usage_error_naming_the_extra(sample_repo: Path):
    from pgserver import free_port
    from without_modules import repolens_without

    url = f"postgresql://alice@127.0.0.1:{free_port()}/code"
    root = str(sample_repo)
    for args in (
        ("index", root, "--store", url),
        ("search", "session", "--root", root, "--store", url),
        ("status", "--root", root, "--store", url),
        ("serve", "--http", "--no-auth", "--port", str(free_port()), "--root", root, "--store", url),
    ):
        done = subprocess.run(
            [*repolens_without(*_NO_POSTGRES_EXTRA), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr == (
            "error: a PostgreSQL store needs repolens's `postgres` extra, which is not installed"
            f" (No module named 'psycopg'): install it with `{_INSTALL_THE_EXTRA}`"
            " (in a checkout: `pip install '.[postgres]'`)\n"
        ), args


def test_without_the_postgres_extra_an_mcp_call_on_a_store_is_a_tool_error_naming_the_extra(
    sample_repo: Path,
):
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from pgserver import free_port
    from without_modules import repolens_without

    command, *prefix = repolens_without(*_NO_POSTGRES_EXTRA)
    env = {**os.environ, "REPOLENS_STORE": f"postgresql://alice@127.0.0.1:{free_port()}/code"}
    params = StdioServerParameters(
        command=command, args=[*prefix, "serve", "--root", str(sample_repo), "--no-watch"], env=env
    )

    async def call() -> tuple[bool, str]:
        async with Client(params, read_timeout_seconds=60) as client:
            result = await client.call_tool("search_code", {"query": "session"})
            return result.is_error, "\n".join(c.text for c in result.content)

    is_error, text = asyncio.run(call())
    assert is_error and text.startswith("a PostgreSQL store needs repolens's `postgres` extra"), text
    assert _INSTALL_THE_EXTRA in text and "\n" not in text


def _build_both(tmp_path: Path, root: Path, url: str):
    local = open_store(root, tmp_path / "local-index")
    pg = open_store(root, url=url)
    service.build_index(root, store=local)
    service.build_index(root, store=pg)
    return local.open_reader(), pg.open_reader()


def test_lexical_ranking_equals_the_local_store(pg_db, sample_repo: Path, tmp_path: Path):
    from repolens.search.legs import FIELD_WEIGHTS
    from repolens.store.base import LexFilters

    local, pg = _build_both(tmp_path, sample_repo, pg_db.url)

    def ranked(reader, terms, filters=None):
        hits = reader.lexical(terms, FIELD_WEIGHTS, 20, filters)
        ids = reader.chunks(c for c, _ in hits)
        # tantivy scores in float32, PostgreSQL's lists in float64
        return [(ids[c].chunk.id, pytest.approx(s, rel=1e-5)) for c, s in hits]

    for q in QUERIES:
        terms = parse_query(q).weighted()
        assert ranked(pg, terms) == ranked(local, terms), q
        for f in (
            LexFilters(subpath="src"),
            LexFilters(languages=("python",)),
            LexFilters(kinds=("function",)),
        ):
            assert ranked(pg, terms, f) == ranked(local, terms, f), (q, f)
    local.close()


def test_a_folder_named_with_a_backslash_and_a_tab_filters_as_on_the_local_store(
    pg_db, sample_repo: Path, tmp_path: Path
):
    """Postings go to PostgreSQL as COPY text, where a backslash or a tab in a
    token (a folder name in ``dirs``) must be escaped to arrive unchanged."""
    from repolens.search.legs import FIELD_WEIGHTS
    from repolens.store.base import LexFilters

    odd = sample_repo / "we\\ird\tdir"
    odd.mkdir()
    (odd / "expiry.py").write_text("def session_expiry(store):\n    return store.expired\n")
    local, pg = _build_both(tmp_path, sample_repo, pg_db.url)
    terms = parse_query("session expiry").weighted()
    inside = LexFilters(subpath=odd.name)

    def paths(reader, filters):
        hits = reader.lexical(terms, FIELD_WEIGHTS, 20, filters)
        stored = reader.chunks(c for c, _ in hits)
        return [(stored[c].chunk.path, pytest.approx(s, rel=1e-5)) for c, s in hits]

    assert [p for p, _ in paths(pg, inside)] == [f"{odd.name}/expiry.py"]
    assert paths(pg, inside) == paths(local, inside)
    assert paths(pg, None) == paths(local, None)
    local.close()


def _ranked(store) -> list[list[tuple[str, object]]]:
    """The lexical top 20 of a few questions: (chunk id, score to 1e-5) each."""
    from repolens.search.legs import FIELD_WEIGHTS

    reader = store.open_reader()
    out = []
    for q in (*QUERIES, "session timed out ttl", "audit session store", "forms validated"):
        hits = reader.lexical(parse_query(q).weighted(), FIELD_WEIGHTS, 20)
        ids = reader.chunks(c for c, _ in hits)
        # tantivy scores in float32, PostgreSQL's lists in float64
        out.append([(ids[c].chunk.id, pytest.approx(s, rel=1e-5)) for c, s in hits])
    reader.close()
    return out


def _rows(db, table: str) -> int:
    with db.connect() as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _edit(root: Path) -> None:
    """A change to each kind of file a refresh meets: edited, deleted, added."""
    session = root / "src" / "auth" / "session.py"
    session.write_text(session.read_text().replace("expired", "timed out after the session ttl"))
    (root / "docs" / "guide.md").unlink()
    (root / "src" / "auth" / "audit.py").write_text("def audit_session(store):\n    return store.load\n")


def test_refreshed_ranking_equals_a_fresh_local_build_before_and_after_folding(
    pg_db, sample_repo: Path, tmp_path: Path, monkeypatch
):
    from repolens.store.postgres import packing

    pg = open_store(sample_repo, url=pg_db.url)
    service.build_index(sample_repo, store=pg)
    monkeypatch.setattr(packing, "FOLD_SHARE", 1e9)  # keep the refresh's rows apart from the lists
    _edit(sample_repo)
    service.build_index(sample_repo, store=pg)
    local = open_store(sample_repo, tmp_path / "fresh")
    service.build_index(sample_repo, store=local)
    assert _rows(pg_db, "lex_postings") > 0 and _rows(pg_db, "lex_deleted") > 0
    assert _ranked(pg) == _ranked(local)
    monkeypatch.setattr(packing, "FOLD_SHARE", 0.05)
    service.build_index(sample_repo, store=pg)  # nothing changed; the writer folds
    assert _rows(pg_db, "lex_postings") == 0 and _rows(pg_db, "lex_deleted") == 0
    assert _ranked(pg) == _ranked(local)


def test_a_reader_keeps_the_old_generation_through_a_rebuild(pg_db, sample_repo: Path, git):
    store = open_store(sample_repo, url=pg_db.url)
    service.build_index(sample_repo, store=store)
    old = store.open_reader()
    before = sorted(old.paths())
    (sample_repo / "extra.py").write_text("def extra():\n    pass\n")
    git(sample_repo, "add", "-A")
    git(sample_repo, "commit", "-q", "-m", "Add the extra function")
    service.build_index(sample_repo, store=store, rebuild=True)
    assert store.current() != old.generation
    assert sorted(old.paths()) == before  # the replaced generation is still whole, its history too
    assert old.history_state().commits == 1 and old.history_search([("extra", 1.0)], 5) == []
    new = store.open_reader()
    assert "extra.py" in new.paths()
    [(newest, _)] = new.history_search([("extra", 1.0)], 5)
    assert new.history_state().commits == 2 and new.history_commits([newest])[newest].paths == ("extra.py",)


def test_an_index_killed_mid_build_resumes(pg_db, make_repo):
    # More files than one batch holds (BATCH_FILES): the indexer is killed
    # once the first batch is committed, with two batches still to write. With
    # a single batch, a fast machine published the index between two polls.
    n = BATCH_FILES * 2 + 200
    files = {f"pkg/mod_{i:04d}.py": f"def handler_{i}(x):\n    return x + {i}\n" * 10 for i in range(n)}
    root = make_repo(files)
    env = {**os.environ, "REPOLENS_STORE": pg_db.url}
    proc = subprocess.Popen(
        [sys.executable, "-m", "repolens.cli", "index", str(root)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        with pg_db.connect() as conn:
            while time.monotonic() < deadline:
                ready = conn.execute("SELECT to_regclass('files') IS NOT NULL").fetchone()[0]
                if ready and conn.execute("SELECT count(*) FROM files").fetchone()[0] > 0:
                    break
                time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    store = open_store(root, url=pg_db.url)
    assert store.current() is None and len(store.building()) == 1
    done = cli("index", str(root), env={"REPOLENS_STORE": pg_db.url})
    assert done.returncode == 0, done.stderr
    assert store.current() is not None and store.building() == []
    assert store.open_reader().counts()["files"] == n


@pytest.fixture
def on_private_server(pg_private_server, sample_repo, monkeypatch):
    """``sample_repo`` indexed on the private server, which searches use."""
    url = pg_private_server.url()
    service.build_index(sample_repo, store=open_store(sample_repo, url=url))
    monkeypatch.setenv("REPOLENS_STORE", url)
    return pg_private_server


def _finds_the_session(root: Path) -> bool:
    return service.search_code("session expiry", root).text.startswith("src/auth/session.py")


def test_a_search_fails_cleanly_while_the_server_is_down_and_works_once_it_is_back(
    on_private_server, sample_repo
):
    assert _finds_the_session(sample_repo)
    on_private_server.stop()
    with pytest.raises(StoreUnavailableError, match="is unavailable"):
        service.search_code("session expiry", sample_repo)
    on_private_server.start()
    assert _finds_the_session(sample_repo)


def test_the_first_search_after_an_outage_of_many_failed_calls_answers(on_private_server, sample_repo):
    """After several calls failed while the server was down, the pool was
    still backing off when it came back: the next call waited for it and
    said "unavailable (no connection became free in time)", the one after
    answered."""
    assert _finds_the_session(sample_repo)
    on_private_server.stop()
    for _ in range(5):  # over ~10 s: the pool's reconnection backs off past its wait (5 s)
        with pytest.raises(StoreUnavailableError, match="is unavailable"):
            service.search_code("session expiry", sample_repo)
        time.sleep(2)
    on_private_server.start()
    assert _finds_the_session(sample_repo)


def test_a_restart_nobody_saw_costs_no_search(on_private_server, sample_repo):
    """No call failed while the server was down and the pooled connections
    were used a moment ago: the search's first statement checks its
    connection, finds it dead, and every older one is checked before use."""
    assert _finds_the_session(sample_repo)
    on_private_server.stop()
    on_private_server.start()
    assert _finds_the_session(sample_repo)
    assert _finds_the_session(sample_repo)


def test_remembered_results_are_pruned_in_batches_to_the_newest(pg_db, sample_repo):
    from repolens.store.postgres import REMEMBER_KEEP, REMEMBER_PRUNE_AT

    store = open_store(sample_repo, url=pg_db.url)
    service.build_index(sample_repo, store=store)
    ids = [format(i, "x") for i in range(REMEMBER_PRUNE_AT + 1)]
    for i, query_id in enumerate(ids):
        assert store.remember(query_id, f'{{"n": {i}}}')
    with pg_db.connect() as conn:
        held = conn.execute("SELECT count(*) FROM remembered").fetchone()[0]
    assert held == REMEMBER_KEEP  # pruned at the last one, not at every one (see below)
    assert store.recall(ids[-1]) == f'{{"n": {REMEMBER_PRUNE_AT}}}'
    assert store.recall(ids[-REMEMBER_KEEP]) is not None
    assert store.recall(ids[-REMEMBER_KEEP - 1]) is None
    assert store.remember("ffff", "{}")
    with pg_db.connect() as conn:
        assert conn.execute("SELECT count(*) FROM remembered").fetchone()[0] == REMEMBER_KEEP + 1


def test_a_replica_serves_searches_and_says_when_it_lags(
    pg_db, pg_replica, pg_server, sample_repo, monkeypatch
):
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)
    monkeypatch.setenv("REPOLENS_STORE_READ_URL", pg_replica.url(pg_db.name))
    service.index_repo(sample_repo)
    pg_replica.wait_replayed(pg_server.current_lsn())
    reply = service.search_code("session expiry", sample_repo)
    assert reply.text.startswith("src/auth/session.py")
    assert not reply.notes

    with pg_replica.connect() as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
    (sample_repo / "src" / "auth" / "tokens.py").write_text(
        "def rotate_refresh_token(old):\n    return old\n"
    )
    service.index_repo(sample_repo)
    lagging = service.search_code("rotate refresh token", sample_repo)
    assert any("lags behind the last published index" in n for n in lagging.notes)
    assert "note: read from replica" in lagging.text
    # status says so too: the file the replica misses is no "run repolens index" (it was run)
    status = service.index_status(sample_repo).render()
    assert (
        "changed on disk since (1 new, 0 modified, 0 deleted): the replica read lags (see the note)" in status
    )
    assert status.splitlines()[-1].startswith("note: read from replica ")

    with pg_replica.connect() as conn:
        conn.execute("SELECT pg_wal_replay_resume()")
    pg_replica.wait_replayed(pg_server.current_lsn())
    caught_up = service.search_code("rotate refresh token", sample_repo)
    assert caught_up.text.startswith("src/auth/tokens.py")
    assert not caught_up.notes


def test_a_replica_that_has_not_replayed_the_first_index_yet_is_read_through_the_primary(
    pg_db, pg_replica, pg_server, sample_repo, monkeypatch
):
    """It said "no index for ...: run `repolens index`", which was done:
    the index is published, the replica only behind."""
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)
    monkeypatch.setenv("REPOLENS_STORE_READ_URL", pg_replica.url(pg_db.name))
    pg_replica.wait_replayed(pg_server.current_lsn())  # the database is there, its tables not yet
    with pg_replica.connect() as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
    try:
        service.index_repo(sample_repo)
        reply = service.search_code("session expiry", sample_repo, auto_index=False)
        assert reply.text.startswith("src/auth/session.py")
    finally:
        with pg_replica.connect() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")


def test_an_http_search_while_the_primary_restarts_is_a_tool_error_and_then_works(
    pg_private_server, sample_repo: Path, tmp_path: Path
):
    import asyncio

    from server.test_http import connect, free_port, running_server, server_env, text_of

    url = pg_private_server.url()
    service.build_index(sample_repo, store=open_store(sample_repo, url=url))
    args = ["--no-auth", "--no-watch", "--root", str(sample_repo)]
    with running_server(args, server_env({"REPOLENS_STORE": url}), tmp_path / "err", free_port()) as server:

        async def search():
            async with connect(server.url, token=None) as client:
                return await client.call_tool("search_code", {"query": "session expiry"})

        assert not asyncio.run(search()).is_error
        pg_private_server.stop()
        down = asyncio.run(search())
        assert down.is_error and "is unavailable" in text_of(down) and "Traceback" not in text_of(down)
        pg_private_server.start()
        back = asyncio.run(search())
        assert not back.is_error and text_of(back).startswith("src/auth/session.py")


def test_tables_of_another_schema_version_are_refused_with_the_fix(pg_db, sample_repo: Path):
    assert cli("index", str(sample_repo), "--store", pg_db.url).returncode == 0
    with pg_db.connect() as conn:
        conn.execute("UPDATE repolens_schema SET version = 99")
    for args in (("search", "session", "--root", str(sample_repo)), ("index", str(sample_repo))):
        done = cli(*args, "--store", pg_db.url)
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert "schema version 99, newer than this repolens reads" in done.stderr
        assert "upgrade repolens" in done.stderr


def _back_to_version_2(conn) -> None:
    """The tables as version 2 made them: one list per term in ``lex_blobs``
    (a published index has one part per term), and no references (version 4)."""
    conn.execute("DROP TABLE ref_names")
    conn.execute("DROP TABLE refs")
    conn.execute("DROP AGGREGATE repolens_concat(int8[])")
    conn.execute("ALTER TABLE lex_blobs DROP CONSTRAINT lex_blobs_pkey")
    conn.execute("ALTER TABLE lex_blobs DROP COLUMN part")
    conn.execute("ALTER TABLE lex_blobs ADD PRIMARY KEY (gen, token, field)")
    conn.execute("UPDATE repolens_schema SET version = 2")


def test_an_index_of_schema_version_2_is_migrated_then_ranks_refreshes_and_folds_as_before(
    pg_db, sample_repo: Path, tmp_path: Path, monkeypatch
):
    from repolens.store.postgres import packing

    pg = open_store(sample_repo, url=pg_db.url)
    service.build_index(sample_repo, store=pg)
    before = _ranked(pg)
    with pg_db.connect() as conn:
        _back_to_version_2(conn)
    refused = cli("search", "session expiry", "--root", str(sample_repo), "--store", pg_db.url)
    assert (
        refused.returncode != 0 and "has schema version 2 but this repolens reads version 4" in refused.stderr
    )
    migrated = service.build_index(sample_repo, store=pg)  # nothing changed: the tables only
    assert (migrated.mode, migrated.added, migrated.changed, migrated.deleted) == ("refresh", 0, 0, 0)
    assert _ranked(pg) == before  # each list is its term's one part
    monkeypatch.setattr(packing, "FOLD_SHARE", 0.0)  # the next refresh is folded into the lists at once
    _edit(sample_repo)
    service.build_index(sample_repo, store=pg)
    assert _rows(pg_db, "lex_postings") == 0 and _rows(pg_db, "lex_deleted") == 0
    with pg_db.connect() as conn:
        assert conn.execute(
            "SELECT count(*) FROM lex_blobs GROUP BY token, field ORDER BY 1 DESC"
        ).fetchone() == (1,)
    local = open_store(sample_repo, tmp_path / "fresh")
    service.build_index(sample_repo, store=local)
    assert _ranked(pg) == _ranked(local)


def test_an_older_schema_is_refused_until_index_migrates_it(pg_db, make_repo, git):
    root = make_repo({"app.py": "def start():\n    return 1\n"})
    git(root, "commit", "-q", "--allow-empty", "-m", "Tune the start timeout")
    assert cli("index", str(root), "--store", pg_db.url).returncode == 0
    with pg_db.connect() as conn:  # back to version 1: the tables before the history
        _back_to_version_2(conn)
        for table in ("history_state", "history_postings", "history_files", "history_commits"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("UPDATE repolens_schema SET version = 1")
    refused = cli("history", "start timeout", "--root", str(root), "--store", pg_db.url)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "has schema version 1 but this repolens reads version 4" in refused.stderr
    assert "run `repolens index` with this store once (it migrates the tables)" in refused.stderr
    migrated = cli("index", str(root), "--store", pg_db.url)
    assert migrated.returncode == 0, migrated.stderr
    assert "history: 2 commits up to" in migrated.stdout  # the old generation had none: read now
    found = cli("history", "start timeout", "--root", str(root), "--store", pg_db.url)
    assert found.returncode == 0 and "Tune the start timeout" in found.stdout


def test_a_connection_lost_mid_index_fails_in_one_line_and_the_next_run_resumes(pg_private_server, make_repo):
    # Two batches still to write when the server stops (as in the test above):
    # with its 300 files in one batch, a fast machine published the index first.
    n = BATCH_FILES * 2 + 200
    files = {f"pkg/mod_{i:04d}.py": f"def handler_{i}(x):\n    return x + {i}\n" * 10 for i in range(n)}
    root = make_repo(files)
    url = pg_private_server.url()
    proc = subprocess.Popen(
        [sys.executable, "-m", "repolens.cli", "index", str(root), "--store", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        with pg_private_server.connect() as conn:
            while time.monotonic() < deadline:
                ready = conn.execute("SELECT to_regclass('files') IS NOT NULL").fetchone()[0]
                if ready and conn.execute("SELECT count(*) FROM files").fetchone()[0] > 0:
                    break
                time.sleep(0.05)
        pg_private_server.stop("immediate")  # like a crash: every connection drops
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"PostgreSQL store {url} is unavailable" in err
    pg_private_server.start()
    done = cli("index", str(root), "--store", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"resumed and indexed {n} files")


def test_a_server_config_names_a_store_per_root_and_one_for_the_rest(tmp_path: Path):
    from repolens.server.config import load_serve_config

    for name in ("app", "lib", "docs"):
        (tmp_path / name).mkdir()
    config = tmp_path / "serve.toml"
    config.write_text(
        "[store]\n"
        'url = "postgresql://indexer:pw@pg0/code"\n'
        'read_url = ["postgresql://pg0-replica/code"]\n'
        "[roots]\n"
        'app = { path = "app", store = "postgresql://pg1/code" }\n'
        'lib = { path = "lib", store = "postgresql://pg2/code", read_url = "postgresql://pg2-r/code" }\n'
        'docs = "docs"\n'
    )
    roots = load_serve_config(config_file=str(config), read_token=False).roots
    stores = {name: open_store(root) for name, root in roots.items()}
    assert {n: (s.url, s.key, s.read_urls) for n, s in stores.items()} == {
        "app": ("postgresql://pg1/code", "app", ()),
        "lib": ("postgresql://pg2/code", "lib", ("postgresql://pg2-r/code",)),
        "docs": ("postgresql://indexer:pw@pg0/code", "docs", ("postgresql://pg0-replica/code",)),
    }
    assert stores["docs"].location == "postgresql://indexer@pg0/code#docs"  # no password


def test_from_ann_min_vectors_the_dense_leg_uses_an_hnsw_index(pg_db, tmp_path: Path):
    import numpy as np
    from store_helpers import CART, GUIDE, PAY, build, vec

    root = tmp_path / "repo"
    root.mkdir()
    store = open_store(root, url=pg_db.url)
    build(store, CART, PAY, GUIDE)
    rows = [vec(1, 0, 0, 0), vec(0.9, 0.1, 0, 0), vec(0, 1, 0, 0), vec(0, 0, 1, 0), vec(0, 0, 0, 1)]
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            cids = writer.chunks_missing_vectors(10)
            writer.write_meta({"embed_identity": "test:4", "embed_style": "plain", "embed_dim": 4})
            writer.begin()
            writer.put_vectors(zip(cids, rows, strict=True))
            writer.commit()
            assert writer.sync_dense_index(100) == ""  # below the threshold: exact
            reader = store.open_reader()
            assert reader.dense_state(100) == "exact search (5 vectors, graph from 100)"
            assert writer.sync_dense_index(5) == "pgvector HNSW index built over 5 vectors"
        finally:
            writer.close()
    assert reader.dense_state(5) == "pgvector HNSW index over 5 vectors (current)"
    top = reader.dense_top(np.asarray([1, 0, 0, 0], dtype=np.float32), 2)
    assert [c for c, _ in top] == cids[:2] and top[0][1] == pytest.approx(1.0, abs=1e-3)


def test_a_second_writer_gets_the_locked_message_naming_the_first(pg_db, sample_repo: Path):
    store = open_store(sample_repo, url=pg_db.url)
    with store.write_lock():
        done = cli("index", str(sample_repo), "--store", pg_db.url)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"error: another process (pid {os.getpid()}) is writing the index in {pg_db.url}#repo: "
        "wait for it to finish and try again"
    )


def test_over_mcp_a_missing_index_and_older_tables_name_the_tool_that_fixes_them(
    pg_db, make_repo, monkeypatch
):
    """An MCP caller cannot run `repolens index`: the fix names the tool that
    builds the index, or migrates the tables; the command line's words stay."""
    import asyncio

    from mcp import Client

    from repolens.server.tools import build_server

    root = make_repo({"app.py": "def start():\n    return 1\n"})
    monkeypatch.setenv("REPOLENS_STORE", pg_db.url)

    def call(tool: str, args: dict) -> tuple[bool, str]:
        async def session() -> tuple[bool, str]:
            async with Client(build_server({"app": root})) as client:
                result = await client.call_tool(tool, args)
                return result.is_error, "\n".join(c.text for c in result.content)

        return asyncio.run(session())

    missing = call("index_status", {})
    assert missing[1].startswith(f"no index for {root} in "), missing
    assert missing[1].endswith(": call index_repo"), missing
    refused = cli("status", "--root", str(root))
    assert refused.stderr.endswith(f": run `repolens index {root}` with the same store\n"), refused.stderr

    assert not call("index_repo", {})[0]
    with pg_db.connect() as conn:
        _back_to_version_2(conn)
    readers.clear()
    close_pools()
    older = call("search_code", {"query": "start"})
    assert older[0] and older[1].endswith(
        "has schema version 2 but this repolens reads version 4: "
        "call refresh_index once (it migrates the tables)"
    ), older
    refused = cli("search", "start", "--root", str(root))
    assert refused.stderr.endswith(": run `repolens index` with this store once (it migrates the tables)\n")
    assert not call("refresh_index", {})[0]  # as the fix said
    found = call("search_code", {"query": "start"})
    assert not found[0] and found[1].startswith("app.py:1-2"), found
