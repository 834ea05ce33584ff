"""An index on a read-only disk (a mounted volume, a CI cache, another user's
checkout) is searched without writing a byte; writers get one line with the fix.

The folder is made read-only for real: by removing the write permission, or,
where that does not stop writes (root), by a read-only bind mount in a private
mount namespace. Each command runs as a subprocess inside that view.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from repolens import service
from repolens.index.build import build_index
from repolens.search.remembered import NOT_REMEMBERED
from repolens.store import open_store
from repolens.store.handles import readers

RunReadOnly = Callable[..., subprocess.CompletedProcess]
# The read-only shadow of a tantivy folder is made under TMPDIR: each test gives
# the commands a TMPDIR of its own and checks that nothing is left in it.
_MOUNT = 'mount --bind -o ro "$0" "$0" && exec "$@"'


def _with_read_only_mount(folder: Path, argv: list[str]) -> list[str]:
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", _MOUNT, str(folder), *argv]


def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, timeout=30
    )
    return probe.returncode == 0


def _set_writable(folder: Path, writable: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        path.chmod(mode | 0o200 if writable else mode & ~0o222)


def _permissions_stop_writes(folder: Path) -> bool:
    """False for root (with CAP_DAC_OVERRIDE), who writes whatever the mode."""
    folder.mkdir()
    _set_writable(folder, False)
    try:
        (folder / "x").write_text("x")
    except PermissionError:
        return True
    finally:
        _set_writable(folder, True)
    return False


@pytest.fixture
def read_only(tmp_path: Path) -> RunReadOnly:
    """``read_only(folder, *args)``: run ``repolens *args`` (``python *args``
    with ``python=True``) while ``folder`` is read-only."""
    mount = not _permissions_stop_writes(tmp_path / "probe")
    if mount and not _can_mount():
        pytest.skip("permissions do not stop this user's writes, and a read-only bind mount is not allowed")
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()

    def run(folder: Path, *args: str, python: bool = False) -> subprocess.CompletedProcess:
        argv = [sys.executable, *args] if python else [sys.executable, "-m", "repolens", *args]
        env = {**os.environ, "TMPDIR": str(tmp)}
        env.pop("REPOLENS_INDEX_DIR", None)
        if mount:
            return subprocess.run(
                _with_read_only_mount(folder, argv), env=env, capture_output=True, text=True, timeout=120
            )
        _set_writable(folder, False)
        try:
            return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        finally:
            _set_writable(folder, True)

    # The harness itself: a write inside the folder must fail.
    attempt = run(tmp_path / "probe", "-c", f"open({str(tmp_path / 'probe' / 'y')!r}, 'w')", python=True)
    assert attempt.returncode != 0 and "Error" in attempt.stderr, "the folder was not read-only"
    yield run
    assert list(tmp.iterdir()) == [], "a command left files in TMPDIR"


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` with its size and mtime: any write shows."""
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture
def indexed(sample_repo: Path) -> Path:
    build_index(sample_repo)
    service.search_code("session expired", sample_repo)  # a remembered search
    readers.clear()
    return sample_repo


def test_search_status_and_symbols_answer_from_a_read_only_index(indexed: Path, read_only: RunReadOnly):
    before = _tree(indexed)
    search = read_only(indexed, "search", "SessionStore load", "--root", str(indexed))
    assert search.returncode == 0, search.stderr
    assert "src/auth/session.py" in search.stdout
    assert search.stdout.startswith(f"note: {NOT_REMEMBERED}\n")
    status = read_only(indexed, "status", "--root", str(indexed))
    assert status.returncode == 0, status.stderr
    assert "; up to date" in status.stdout
    symbols = read_only(indexed, "symbols", "SessionStore", "--root", str(indexed))
    assert (symbols.returncode, symbols.stdout.splitlines()[1]) == (
        0,
        "src/auth/session.py:8-22 class SessionStore [python, exact]",
    )
    doctor = read_only(indexed, "doctor", "--root", str(indexed))
    assert doctor.returncode == 0, doctor.stdout
    assert _tree(indexed) == before, "a reader wrote into the read-only folder"


def test_a_search_remembered_before_re_renders_from_a_read_only_index(indexed: Path, read_only: RunReadOnly):
    query_id = service.search_code("session expired", indexed).query_id
    readers.clear()
    out = read_only(indexed, "search", "--query-id", query_id, "--files", "--root", str(indexed))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("1. src/auth/session.py (score ")


def _commit_left_in_the_log(indexed: Path) -> Path:
    """The database of ``indexed``'s index, with a commit its writer, killed,
    left in the write-ahead log (``-wal`` and ``-shm`` beside it)."""
    store = open_store(indexed)
    db = store.local_folder / store.current() / "index.db"
    crash = (
        "import os, sqlite3\n"
        f"db = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "db.execute(\"INSERT INTO meta(key, value) VALUES('probe', 'in the log')\")\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", crash], check=True, timeout=60)
    return db


def test_a_commit_left_in_the_write_ahead_log_is_read(indexed: Path, read_only: RunReadOnly):
    """A writer killed after a commit leaves it in index.db-wal: a read-only
    reader must read the log, not the main file alone."""
    db = _commit_left_in_the_log(indexed)
    assert Path(f"{db}-wal").stat().st_size > 0
    show = "import sys; from pathlib import Path; from repolens.store.local import sqlite as sq; "
    show += "print(sq.read_meta(sq.open_reader(Path(sys.argv[1])))['probe'])"
    out = read_only(indexed, "-c", show, str(db), python=True)
    assert (out.returncode, out.stdout) == (0, "in the log\n"), out.stderr


def test_index_on_a_read_only_folder_is_one_line_with_the_fix(indexed: Path, read_only: RunReadOnly):
    out = read_only(indexed, "index", str(indexed))
    assert out.returncode == 1
    assert re.fullmatch(
        rf"error: cannot write index folder {re.escape(str(indexed / '.repolens'))} "
        r"\((Read-only file system|Permission denied)\): pass --index-dir with a folder on a writable disk\n",
        out.stderr,
    ), out.stderr


@pytest.mark.parametrize("command", ["status", "doctor"])
def test_no_index_on_a_read_only_root_points_to_index_dir(
    sample_repo: Path, read_only: RunReadOnly, tmp_path: Path, command: str
):
    out = read_only(sample_repo, command, "--root", str(sample_repo))
    assert out.returncode == 1
    message = (
        f"no index for {sample_repo}, and its index folder {sample_repo / '.repolens'} cannot be written: "
        f"run `repolens index {sample_repo} --index-dir DIR` with DIR on a writable disk, "
        "then pass the same --index-dir"
    )
    assert message in out.stdout + out.stderr
    elsewhere = tmp_path / "elsewhere"
    assert read_only(sample_repo, "index", str(sample_repo), "--index-dir", str(elsewhere)).returncode == 0
    again = read_only(sample_repo, command, "--root", str(sample_repo), "--index-dir", str(elsewhere))
    assert again.returncode == 0, again.stdout + again.stderr


def test_every_index_file_is_readable_by_whoever_may_read_its_folder(indexed: Path):
    """Another user's checkout: tantivy writes meta.json owner-only, which
    would lock every other reader out of an index they may read."""
    index_dir = indexed / ".repolens"
    for folder in [index_dir, *(p for p in index_dir.rglob("*") if p.is_dir())]:
        readable = folder.stat().st_mode & 0o444
        for path in folder.iterdir():
            if path.is_file() and not path.is_symlink():
                mode = path.stat().st_mode
                assert mode & readable == readable, f"{path} is {mode & 0o777:o}"


# A tool called over MCP in a process of its own (run by ``read_only``): the
# server in that process, the SDK's client; prints isError, then the text.
_MCP_CALL = """
import asyncio, json, sys
from pathlib import Path
from mcp import Client
from repolens.server.tools import build_server

async def call():
    async with Client(build_server(Path(sys.argv[1]))) as client:
        result = await client.call_tool(sys.argv[2], json.loads(sys.argv[3]))
    print(result.is_error)
    print("\\n".join(c.text for c in result.content))

asyncio.run(call())
"""


def _mcp(tool: str, root: Path, index_dir: Path | None = None, **args: object) -> str:
    """``tool``'s error over MCP (the SDK's client, the server in this process)."""
    import asyncio

    from mcp import Client

    from repolens.server.tools import build_server

    async def call() -> str:
        async with Client(build_server(root, index_dir=index_dir)) as client:
            result = await client.call_tool(tool, args)
        assert result.is_error, result
        return "\n".join(c.text for c in result.content)

    return asyncio.run(call())


def test_over_mcp_an_index_on_a_read_only_folder_asks_the_servers_operator(
    indexed: Path, read_only: RunReadOnly
):
    """An MCP caller cannot pass --index-dir nor run `repolens index`: where
    the index lives is the operator's to change."""
    refresh = read_only(indexed, "-c", _MCP_CALL, str(indexed), "index_repo", "{}", python=True)
    assert refresh.stdout.startswith("True\n"), refresh.stdout + refresh.stderr
    assert re.fullmatch(
        rf"cannot write index folder {re.escape(str(indexed / '.repolens'))} "
        r"\((Read-only file system|Permission denied)\): "
        r"ask the server's operator to serve it with an index folder on a writable disk \(--index-dir\)\n",
        refresh.stdout.removeprefix("True\n"),
    ), refresh.stdout
    # A writer's log left beside the database, without the shared memory a
    # reader in a read-only folder would need to create to read it.
    db = _commit_left_in_the_log(indexed)
    Path(f"{db}-shm").unlink()
    symbols = read_only(
        indexed, "-c", _MCP_CALL, str(indexed), "find_symbol", '{"name": "SessionStore"}', python=True
    )
    assert symbols.stdout.startswith("True\n"), symbols.stdout + symbols.stderr
    assert symbols.stdout.endswith(
        "with the write-ahead log of an unfinished write beside it: ask the server's operator to run "
        "`repolens index` where the folder is writable, or to serve a copy indexed with --index-dir\n"
    ), symbols.stdout


def test_an_index_folder_under_a_file_cannot_be_made_and_says_so(sample_repo: Path, tmp_path: Path):
    """No folder can be made under a regular file, whoever the user (root
    writes any folder): no index there is told as one that cannot be
    written, with the command line's fix on the command line and the
    operator asked over MCP."""
    (tmp_path / "a-file").write_text("not a folder")
    index_dir = tmp_path / "a-file" / "index"
    args = ["status", "--root", str(sample_repo), "--index-dir", str(index_dir)]
    status = subprocess.run(
        [sys.executable, "-m", "repolens", *args], capture_output=True, text=True, timeout=120
    )
    missing = f"no index for {sample_repo}, and its index folder {index_dir} cannot be written: "
    assert status.returncode == 1
    assert status.stderr == (
        f"error: {missing}run `repolens index {sample_repo} --index-dir DIR` with DIR on a writable disk, "
        "then pass the same --index-dir\n"
    )
    assert _mcp("index_status", sample_repo, index_dir) == (
        f"{missing}ask the server's operator to index it into a folder on a writable disk (--index-dir) "
        "and serve that"
    )
    assert _mcp("index_repo", sample_repo, index_dir) == (
        f"cannot write index folder {index_dir} (Not a directory): "
        "ask the server's operator to serve it with an index folder on a writable disk (--index-dir)"
    )
