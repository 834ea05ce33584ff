"""Shared fixtures: real git repositories and file trees in tmp dirs (no mocks)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from repolens.store.base import Store
# A real PostgreSQL: pg_server, pg_db, pg_replica, ... (absent where this file is copied alone).
pytest_plugins = ("pgserver",) if Path(__file__).with_name("pgserver.py").is_file() else ()

# A small application in two languages plus docs: the default repository of
# the end-to-end tests (CLI, MCP).
SAMPLE_FILES: dict[str, str] = {
    "src/auth/session.py": '''"""Session storage for logged-in users."""

import time

SESSION_TTL = 3600


class SessionStore:
    """Keeps sessions in memory and expires them after SESSION_TTL seconds."""

    def __init__(self):
        self._sessions = {}

    def save(self, session_id, data):
        self._sessions[session_id] = (time.time(), data)

    def load(self, session_id):
        created, data = self._sessions[session_id]
        if time.time() - created > SESSION_TTL:
            del self._sessions[session_id]
            raise KeyError("session expired")
        return data
''',
    "src/web/forms.py": '''from src.auth.session import SessionStore


def handle_submit(form, store: SessionStore):
    """Validate a submitted form and remember it in the session."""
    if not form.get("email"):
        raise ValueError("email is required")
    store.save(form["session_id"], form)
    return True


def parse_url(url):
    scheme, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    return scheme, host, "/" + path
''',
    "web/app.js": """import { parseURL } from "./url.js";

export function HandleSubmit(event) {
  event.preventDefault();
  const target = parseURL(event.target.action);
  return fetch(target.href, { method: "POST" });
}
""",
    "docs/guide.md": """# Guide

Sessions expire after one hour. See the session store for details.

## Forms

Forms are validated before they are stored.
""",
    "README.md": "# Sample\n\nA sample application used by the repolens tests.\n",
}


GIT_IDENTITY = ("-c", "user.email=tests@repolens.invalid", "-c", "user.name=repolens tests")

WriteTree = Callable[[Path, Mapping[str, str | bytes]], None]
Git = Callable[..., str]


def write_tree_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create ``files`` (relative POSIX path -> text or bytes) under ``root``, making folders."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def age_files(root: Path, *paths: str, seconds: int = 3600) -> int:
    """Date ``paths`` under ``root`` (none given: every file outside .git)
    ``seconds`` back, and return that mtime: files as a user's are, not
    written the instant before an index reads them (such a file is read
    again by the next run, and hashed by a search citing it until then:
    ``Discovery.kept_mtime``)."""
    then = time.time_ns() - seconds * 1_000_000_000
    files = [root / p for p in paths] or [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]
    for p in files:
        os.utime(p, ns=(then, then))
    return then


def run_repolens(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``repolens ARGS`` in a new process whose only REPOLENS_* variables are
    ``env``'s (never the developer's)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    return subprocess.run(
        [sys.executable, "-m", "repolens", *args],
        capture_output=True,
        text=True,
        env={**clean, **(env or {})},
        cwd=cwd,
        timeout=300,
        check=False,
    )


def lexical_segments(root: Path) -> list[dict]:
    """The segments in tantivy's meta.json of the published local index of ``root``."""
    from repolens.store import open_store
    from repolens.store.local.segments import read_meta

    reader = open_store(root).open_reader()
    try:
        return read_meta(reader.lex.directory)["segments"]
    finally:
        reader.close()


def run_git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; returns stdout, raises on failure."""
    proc = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


@pytest.fixture(autouse=True)
def _no_store_bindings_left() -> Iterator[None]:
    """What a test's in-process server config or ``--store`` bound (the
    process's store flag, its roots' names and stores) ends with the test."""
    import repolens.store as stores

    yield
    stores.use_store_flag(None)
    stores._bound.clear()


def relay_source(forward_steps: int = 130) -> str:
    """A module with one long class shaped like many real ones: fields and a
    stub first, a method long enough to be split (``forward``), then short
    methods. ``refresh_credentials`` (short) follows the long method, so its
    chunk starts with the blank line after it; ``refresh_route`` is long
    enough to stand alone."""
    steps = "".join(f"            hops += self.step({i}, message)\n" for i in range(forward_steps))
    credentials = "".join(f"        headers.pop('X-Trace-{i}', None)\n" for i in range(14))
    routes = "".join(f"        self.forget(message, {i})\n" for i in range(30))
    return (
        '"""Hops a message through a chain of relays."""\n\nimport logging\n\n'
        "log = logging.getLogger(__name__)\n\n\n"
        "class Relay:\n    hops: int\n    strict: bool\n\n"
        "    def send(self, message) -> None: ...\n\n"
        "    def next_target(self, reply):\n"
        '        """The address a reply points to, or None."""\n'
        "        if reply.redirect:\n            return reply.location\n        return None\n\n"
        "    def forward(self, message, reply):\n"
        '        """Follow every hop until the message arrives."""\n'
        "        hops = 0\n        while reply.redirect:\n"
        f"{steps}"
        "            reply = self.send(message)\n        return hops\n\n"
        "    def refresh_credentials(\n        self, message, reply\n    ) -> None:\n"
        '        """Drop the credentials when a hop leaves the origin."""\n'
        "        headers = message.headers\n"
        "        if 'Credentials' in headers and reply.origin != message.origin:\n"
        "            del headers['Credentials']\n"
        f"{credentials}"
        "        log.debug('credentials refreshed for %s', message.origin)\n\n"
        "    def refresh_route(self, message):\n"
        '        """Pick the route again after a hop."""\n'
        f"{routes}"
        "        message.route = self.route_for(message.origin)\n        return message.route\n"
    )


def as_from_a_shell() -> None:
    """``preexec_fn`` for a command whose Ctrl-C a test checks: a shell starts a
    command with SIGINT at its default and unblocked, whatever the test process
    holds. (In some full runs the children of two such tests never saw SIGINT,
    though no test was found leaving the pytest process with it blocked or
    ignored; what repolens does with Ctrl-C is what these tests check.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait until ``condition()`` holds, else fail naming ``what``. Generous:
    it waits for something to happen (a watcher's refresh), it measures
    nothing (the benchmarks do)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def isolated_git_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's global and system git config (global excludes, hooks) out of tests."""
    empty = tmp_path_factory.mktemp("gitconfig") / "config"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def write_tree() -> WriteTree:
    return write_tree_files


@pytest.fixture
def git(isolated_git_config: None) -> Git:
    """``git(root, *args)``: run git in a repository made by ``git_repo``."""
    return run_git


@pytest.fixture
def git_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """``git_calls()``: the arguments of each git process started since the
    last call, one string each (a wrapper first on PATH logs them and runs
    git): how a test proves that a path runs no git."""
    log, wrapper = tmp_path / "git-calls.log", tmp_path / "git-wrapper"
    wrapper.mkdir()
    log.write_text("")
    real = shutil.which("git")
    (wrapper / "git").write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    (wrapper / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}{os.pathsep}{os.environ['PATH']}")

    def calls() -> list[str]:
        ran = log.read_text().splitlines()
        log.write_text("")
        return ran

    return calls


@pytest.fixture
def git_repo(tmp_path: Path, isolated_git_config: None) -> Path:
    """An empty git work tree at ``tmp_path / "repo"`` (no commits yet)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def plain_dir(tmp_path: Path) -> Path:
    """An empty directory outside any git work tree (``tmp_path`` is not inside one)."""
    path = tmp_path / "plain"
    path.mkdir()
    return path


MakeRepo = Callable[..., Path]


def commit_files(git: Git, root: Path, message: str, files: Mapping[str, str] | None = None) -> str:
    """Write ``files`` under ``root``, commit everything (an empty commit too)
    with ``message``; the new commit's hash."""
    write_tree_files(root, files or {})
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


# The history leg's case: the code of net/upload.py shares no word with the
# question, the commit that changed it does.
UPLOAD_FILES: dict[str, str] = {
    "net/upload.py": (
        "def backoff_schedule(attempt):\n"
        '    """Delay before sending the file again; the server fails fast."""\n'
        "    return min(2 ** attempt, 60)\n"
    ),
    "cli/options.py": (
        "RETRY_HELP = 'how often to retry a transfer'\n"
        "TRANSFER_HELP = 'transfer options: retry count, transfer size'\n"
    ),
}
UPLOAD_QUESTION = "retry when a transfer fails"


def commit_upload_history(git: Git, root: Path) -> None:
    """Two commits over ``UPLOAD_FILES``: the one worded like the question changed net/upload.py."""
    commit_files(
        git, root, "Retry the transfer when it fails", {"net/upload.py": UPLOAD_FILES["net/upload.py"] + "\n"}
    )
    commit_files(
        git, root, "Add command line options", {"cli/options.py": UPLOAD_FILES["cli/options.py"] + "\n"}
    )


@pytest.fixture
def make_repo(tmp_path: Path, isolated_git_config: None) -> MakeRepo:
    """``make_repo(files=SAMPLE_FILES, name="repo", commit=True)``: a git work tree with ``files``."""

    def make(files: Mapping[str, str | bytes] | None = None, name: str = "repo", commit: bool = True) -> Path:
        root = tmp_path / name
        root.mkdir()
        run_git(root, "init", "-q", "-b", "main")
        write_tree_files(root, SAMPLE_FILES if files is None else files)
        if commit:
            run_git(root, "add", "-A")
            run_git(root, "commit", "-q", "-m", "initial")
        return root

    return make


@pytest.fixture
def sample_repo(make_repo: MakeRepo) -> Path:
    """``SAMPLE_FILES`` committed in a fresh git repository."""
    return make_repo()


@pytest.fixture(scope="module")
def indexed_sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(root, index folder) of SAMPLE_FILES, indexed once per test module by
    ``repolens index`` in a subprocess (no REPOLENS_* variable)."""
    root = tmp_path_factory.mktemp("repo")
    write_tree_files(root, SAMPLE_FILES)
    age_files(root)  # a search then reads no file to check it is fresh (tests/test_cli_imports.py)
    index_dir = tmp_path_factory.mktemp("index")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    subprocess.run(
        [sys.executable, "-m", "repolens", "index", str(root), "--index-dir", str(index_dir)],
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    return root, index_dir


# -- stores ------------------------------------------------------------------------
#
# ``store_factory`` is the one place a store backend joins the store tests
# (tests/store/test_contract.py, test_handles.py): each parameter makes the
# store of a repository folder, empty at first. A second backend (PostgreSQL)
# runs the same tests by adding its entry to STORE_BACKENDS.

StoreFactory = Callable[[Path], "Store"]


def _local_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    from repolens.store import open_store

    return lambda root: open_store(root, tmp_path / "index" / root.name)


def _postgres_url(request: pytest.FixtureRequest) -> str:
    """A fresh database of the test PostgreSQL (never skipped: the server must start)."""
    return request.getfixturevalue("pg_db").url


def _postgres_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    from repolens.store import open_store

    url = _postgres_url(request)
    return lambda root: open_store(root, url=url)


STORE_BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], StoreFactory]] = {
    "local": _local_store,
    "postgres": _postgres_store,
}
# The URL of each backend's store, for code that opens stores by itself
# (``REPOLENS_STORE``, ``[store] url``); None: the local store.
STORE_URLS: dict[str, Callable[[pytest.FixtureRequest], str | None]] = {
    "local": lambda request: None,
    "postgres": _postgres_url,
}


@pytest.fixture(params=sorted(STORE_BACKENDS))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """``store_factory(root)``: the store of the repository at ``root`` in each
    backend (the same store whenever it is called for the same root)."""
    return STORE_BACKENDS[request.param](request, tmp_path)


@pytest.fixture(params=sorted(STORE_URLS))
def store_url(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str | None]:
    """Every index the code under test opens without naming a store lives in
    each backend: local files (``REPOLENS_STORE`` unset) or one fresh
    PostgreSQL database that ``REPOLENS_STORE`` names (subprocesses inherit
    it). Yields that URL, None for the local store; open readers and
    connections are closed after the test."""
    from repolens.store import STORE_ENV
    from repolens.store.handles import readers

    url = STORE_URLS[request.param](request)
    if url is None:
        monkeypatch.delenv(STORE_ENV, raising=False)
    else:
        monkeypatch.setenv(STORE_ENV, url)
    yield url
    readers.clear()
    if url is not None:
        from repolens.store.postgres.connect import close_pools

        close_pools()


# -- no process outlives the suite ------------------------------------------------
#
# Every process the suite starts carries SESSION_ENV in its environment (it
# is inherited unless a test builds an environment from scratch). At the end
# of the session, any process that is still running and is a descendant of
# pytest, or carries this session's mark, or (started with a scrubbed
# environment, as the MCP SDK does, and orphaned since) was started during
# the session from this checkout or its temporary folders, fails the run.

SESSION_ENV = "REPOLENS_TEST_SESSION"
# How long processes get to exit on their own once their parent is gone:
# a resource tracker needs a moment to see its pipe close.
EXIT_GRACE_S = float(os.environ.get("REPOLENS_TEST_EXIT_GRACE", "15"))


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    started: int  # clock ticks after boot
    args: str
    cwd: str
    mark: str | None  # the SESSION_ENV / tag value in its environment, if any

    def line(self) -> str:
        return f"pid {self.pid} (ppid {self.ppid}): {self.args[:200]}"


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _env_value(environ: bytes, key: str) -> str | None:
    prefix = key.encode() + b"="
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode(errors="replace")
    return None


def running_processes(key: str = SESSION_ENV) -> list[Proc]:
    """Live processes (zombies excluded) read from /proc; ``mark`` holds the
    value of ``key``. Without /proc (not Linux) there is nothing to check: []."""
    if not os.path.isdir("/proc/self"):
        return []
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        stat = _read(f"/proc/{entry.name}/stat").decode(errors="replace")
        if not stat:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):
            continue
        try:
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
        except OSError:
            cwd = ""
        args = _read(f"/proc/{entry.name}/cmdline").replace(b"\0", b" ").decode(errors="replace").strip()
        mark = _env_value(_read(f"/proc/{entry.name}/environ"), key)
        out.append(Proc(int(entry.name), int(fields[1]), int(fields[19]), args, cwd, mark))
    return out


def uptime_ticks() -> int:
    seconds = float(_read("/proc/uptime").split()[0])
    return int(seconds * os.sysconf("SC_CLK_TCK"))


def descendants(procs: list[Proc], pid: int) -> list[Proc]:
    children: dict[int, list[Proc]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child.pid)
    return out


def kill(procs: list[Proc]) -> None:
    """SIGKILL each of ``procs`` by pid (all started by this suite)."""
    for p in procs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p.pid, signal.SIGKILL)


def tagged_env(key: str = "REPOLENS_TEST_TAG") -> tuple[dict[str, str], str]:
    """An environment for a subprocess whose whole process tree is marked by
    a fresh tag (children inherit it), for :func:`kill_survivors`."""
    tag = uuid.uuid4().hex
    return {**os.environ, key: tag}, tag


def kill_survivors(tag: str, key: str = "REPOLENS_TEST_TAG", grace: float = EXIT_GRACE_S) -> list[str]:
    """Wait up to ``grace`` seconds for every process marked ``tag`` to exit;
    kill (SIGKILL, by pid) those still running and describe them. ``[]``
    means the tree ended by itself."""
    deadline = time.monotonic() + grace
    while True:
        left = [p for p in running_processes(key) if p.mark == tag]
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    kill(left)
    return [p.line() for p in left]


def _ours(procs: list[Proc], session: str, since: int, homes: tuple[str, ...]) -> list[Proc]:
    me = os.getpid()
    family = {p.pid for p in descendants(procs, me)}
    return [
        p
        for p in procs
        if p.pid != me
        and (
            p.pid in family
            or p.mark == session
            or (
                p.mark is None
                and p.started >= since
                and any(p.cwd == home or p.cwd.startswith(home + os.sep) for home in homes)
                and ("repolens" in p.args or "multiprocessing" in p.args)
            )
        )
    ]


def pytest_sessionstart(session: pytest.Session) -> None:
    if not os.path.isdir("/proc/self"):
        return
    session.config.stash[_SESSION_KEY] = (uuid.uuid4().hex, uptime_ticks())
    os.environ[SESSION_ENV] = session.config.stash[_SESSION_KEY][0]


@pytest.fixture(scope="session", autouse=True)
def _remember_basetemp(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Processes started in the session's temporary folders are the suite's too."""
    request.config.stash[_BASETEMP_KEY] = (str(tmp_path_factory.getbasetemp()),)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run when a process the suite started is still running."""
    if _SESSION_KEY not in session.config.stash:
        return
    import multiprocessing.resource_tracker as tracker

    # This process's own resource tracker (started by an in-process index
    # build) is meant to live as long as pytest, and ends when pytest's end of
    # its pipe closes: stop it now, so that whatever is left is a leak.
    getattr(tracker._resource_tracker, "_stop", lambda: None)()
    mark, since = session.config.stash[_SESSION_KEY]
    homes = (str(session.config.rootpath), *session.config.stash.get(_BASETEMP_KEY, ()))
    deadline = time.monotonic() + EXIT_GRACE_S
    while (left := _ours(running_processes(), mark, since, homes)) and time.monotonic() < deadline:
        time.sleep(0.2)
    if not left:
        return
    kill(left)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    many = len(left) > 1
    head = f"{len(left)} process{'es' if many else ''} started by the test suite "
    lines = [head + f"{'were' if many else 'was'} still running (now killed):"]
    lines += [f"  {p.line()}" for p in left]
    if reporter is not None:
        reporter.write_line("\n".join(lines), red=True, bold=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_SESSION_KEY = pytest.StashKey[tuple[str, int]]()
_BASETEMP_KEY = pytest.StashKey[tuple[str, ...]]()


@contextlib.contextmanager
def write_lock_held(store) -> Iterator[None]:
    """``store``'s write lock held by a thread for the block, as another
    process building the first index holds it."""
    holding, released = threading.Event(), threading.Event()

    def indexer() -> None:
        with store.write_lock():
            holding.set()
            released.wait(120)

    thread = threading.Thread(target=indexer)
    thread.start()
    try:
        assert holding.wait(30), "the write lock was not taken"
        yield
    finally:
        released.set()
        thread.join(30)
