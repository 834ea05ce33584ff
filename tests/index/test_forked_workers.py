"""A fresh build of a mid-sized repository prepares its files in worker
processes forked before the store's writer opens, into either store: the
same index as in process, a clear error when a worker dies, and no process
left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import as_from_a_shell, kill_survivors, running_processes, tagged_env, wait_for
from repolens.index import prepare
from repolens.index.build import build_index
from repolens.store import open_store

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or prepare.workers() < 2,
    reason="workers are forked on Linux with two cores or more",
)


def _module(i: int) -> str:
    body = "".join(f"    step_{k} = value * {k} + {i}\n" for k in range(30))
    return "".join(
        f'def func_{i}_{j}(value):\n    """Step {j} of {i}."""\n{body}    return step_3\n\n\n'
        for j in range(8)
    )


def _repo(root: Path, size: int) -> Path:
    """A folder of Python files holding about ``size`` bytes."""
    root.mkdir()
    body = _module(0)
    for i in range(size // len(body) + 1):
        (root / f"m{i:04d}.py").write_text(_module(i))
    return root


# Builds ROOT into INDEX_DIR (or a store URL) in a new process (one thread, as `repolens index`)
# and prints a first line, then how many child processes it had while it wrote the files.
_BUILD = """
import json, os, sys
from repolens.index.build import build_index
from repolens.store import open_store

def children():
    me = str(os.getpid())
    out = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me:
            out.add(pid)
    return out

print("building", sys.argv[1])  # left in stdout's buffer (a pipe) when the workers fork
seen = set()
where = sys.argv[2]
store = open_store(sys.argv[1], url=where) if "://" in where else open_store(sys.argv[1], where)
report = build_index(sys.argv[1], store=store, progress=lambda done, total: seen.update(children()))
print(json.dumps({"workers": len(seen), "files": report.files}))
"""


def _content(root: Path, index_dir: Path) -> dict:
    reader = open_store(root, index_dir).open_reader()
    try:
        db = reader.db
        return {
            "files": sorted(db.execute("SELECT path, hash, lines FROM files").fetchall()),
            "chunks": sorted(
                db.execute("SELECT id, path, start_line, end_line, text FROM chunks").fetchall()
            ),
            "symbols": sorted(db.execute("SELECT path, qualname, start_line FROM symbols").fetchall()),
            "lexical_docs": reader.lex.num_docs,
        }
    finally:
        reader.close()


def test_a_fresh_build_forks_workers_and_indexes_as_in_process(tmp_path: Path, monkeypatch):
    root = _repo(tmp_path / "repo", prepare.FORK_MIN_BYTES * 3 // 2)
    forked = subprocess.run(
        [sys.executable, "-c", _BUILD, str(root), str(tmp_path / "forked")],
        capture_output=True,
        text=True,
        check=True,
    )
    first, last = forked.stdout.splitlines()  # the first line was printed once, not once per worker
    assert first == f"building {root}"
    got = json.loads(last)
    assert got["workers"] == prepare.workers()
    monkeypatch.setattr(prepare, "FORK_MIN_BYTES", 1 << 62)  # this process: prepared in process
    here = build_index(root, index_dir=tmp_path / "here")
    assert got["files"] == here.files
    assert _content(root, tmp_path / "forked") == _content(root, tmp_path / "here")


def _pg_content(db, key: str) -> dict:
    """The published index of ``key`` in ``db``: its rows, and its lexical lists as stored."""
    tables = {
        "files": "SELECT path, hash, lines FROM files",
        "chunks": "SELECT cid, id, path, start_line, end_line, text FROM chunks",
        "symbols": "SELECT path, qualname, start_line FROM symbols",
        "lists": "SELECT token, field, postings FROM lex_blobs",
        "stats": "SELECT num_docs, totals FROM lex_stats",
    }
    with db.connect() as conn:
        (gen,) = conn.execute("SELECT current_gen FROM repos WHERE key = %s", (key,)).fetchone()
        return {
            name: sorted(conn.execute(f"{sql} WHERE gen = %s", (gen,)).fetchall())
            for name, sql in tables.items()
        }


def test_a_fresh_build_into_postgresql_forks_workers_and_indexes_as_in_process(
    tmp_path: Path, pg_db, monkeypatch
):
    root = _repo(tmp_path / "forked", prepare.FORK_MIN_BYTES * 3 // 2)
    twin = shutil.copytree(root, tmp_path / "here")
    forked = subprocess.run(
        [sys.executable, "-c", _BUILD, str(root), pg_db.url], capture_output=True, text=True, check=True
    )
    assert json.loads(forked.stdout.splitlines()[-1])["workers"] == prepare.workers()
    monkeypatch.setattr(prepare, "FORK_MIN_BYTES", 1 << 62)  # this process: prepared in process
    build_index(twin, store=open_store(twin, url=pg_db.url))
    assert _pg_content(pg_db, "forked") == _pg_content(pg_db, "here")


def test_a_small_fresh_build_forks_no_worker(tmp_path: Path):
    root = _repo(tmp_path / "repo", prepare.FORK_MIN_BYTES // 2)
    out = subprocess.run(
        [sys.executable, "-c", _BUILD, str(root), str(tmp_path / "index")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout.splitlines()[-1])["workers"] == 0


def test_a_worker_killed_mid_build_stops_it_with_a_clear_error_and_no_index(tmp_path: Path):
    root = _repo(tmp_path / "repo", prepare.PARALLEL_MIN_BYTES * 3 // 4)  # forked, not spawned
    index_dir = tmp_path / "index"
    env, tag = tagged_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "repolens", "index", str(root), "--index-dir", str(index_dir), "--no-vectors"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        killed = False
        while not killed and proc.poll() is None and time.monotonic() < deadline:
            workers = [
                p for p in running_processes("REPOLENS_TEST_TAG") if p.mark == tag and p.ppid == proc.pid
            ]
            if len(workers) >= 2:
                os.kill(workers[0].pid, signal.SIGKILL)
                killed = True
            time.sleep(0.01)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert killed, "the indexer ended before its workers were seen"
    assert proc.returncode == 1
    assert err.splitlines() == [
        "error: a worker process preparing files ended unexpectedly (killed, or out of memory?); "
        "indexing stopped, keeping no half-written file: run the command again to finish the index"
    ]
    store = open_store(root, index_dir)
    assert (store.current(), store.building()) == (None, [])
    assert kill_survivors(tag) == []


def test_ctrl_c_during_a_build_with_workers_prints_one_line_and_ends_every_process(tmp_path: Path):
    """Ctrl-C reaches the whole foreground process group, workers included:
    only the indexing process answers it."""
    root = _repo(tmp_path / "repo", prepare.PARALLEL_MIN_BYTES * 3 // 4)
    env, tag = tagged_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "repolens", "index", str(root), "--index-dir", str(tmp_path / "index")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, as a terminal gives a command
        preexec_fn=as_from_a_shell,
    )
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            procs = running_processes("REPOLENS_TEST_TAG")
            if len([p for p in procs if p.mark == tag and p.ppid == proc.pid]) >= 2:
                break
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGINT)  # the workers wait for their first jobs
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err.strip()) == (130, "error: interrupted")  # click ends its line first
    assert kill_survivors(tag) == []


# In a new process: is a pool forked for a big job, with nothing else held,
# then with the process holding a second thread or a socket (a database
# connection), or a socket the store says its write lock holds idle?
_FORKS = """
import json, socket, sys, threading
from repolens.index.prepare import forked_workers

def forks(idle=()):
    with forked_workers(1 << 40, idle) as pool:
        return pool is not None

got = {"alone": forks()}
with socket.socket() as conn:
    got["socket"] = forks()
    got["idle socket"] = forks({conn.fileno()})
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
got["thread"] = forks()
stop.set()
thread.join()
print(json.dumps(got))
"""


def test_workers_are_not_forked_by_a_process_holding_a_thread_or_a_connection():
    out = subprocess.run([sys.executable, "-c", _FORKS], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == {"alone": True, "socket": False, "idle socket": True, "thread": False}


def _cut(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _slow_square(n: int) -> int:
    time.sleep(0.02 if n % 5 == 0 else 0)  # some tasks finish after later ones
    return n * n


def _slow_last(n: int) -> int:
    time.sleep(0.3 if n == 9 else 0)  # the other worker is done and gone before it
    return n


def _fails_at_seven(n: int) -> int:
    if n == 7:
        raise ValueError(f"no {n}")
    return n


def test_a_forked_pool_returns_results_in_order_and_raises_a_task_error_here():
    from repolens.index.forked import ForkedPool

    def children() -> set[int]:
        return {p.pid for p in running_processes("") if p.ppid == os.getpid()}

    before = children()
    pool = ForkedPool(2)
    try:
        assert len(children() - before) == 2
        assert list(pool.map(_slow_square, _cut(list(range(40)), 3))) == [n * n for n in range(40)]
    finally:
        pool.close()
    pool = ForkedPool(2)
    try:
        assert list(pool.map(_slow_last, _cut(list(range(10)), 1))) == list(range(10))
        with pytest.raises(RuntimeError, match="maps once"):  # its workers are gone
            list(pool.map(_slow_last, [[1]]))
    finally:
        pool.close()
    pool = ForkedPool(2)
    try:
        with pytest.raises(ValueError, match="no 7"):
            list(pool.map(_fails_at_seven, _cut(list(range(20)), 2)))
    finally:
        pool.close()  # the workers still busy are ended and reaped
    assert children() == before


def _mark(job: tuple[str, int]) -> int:
    Path(job[0], str(job[1])).touch()
    return job[1]


def test_a_forked_pool_runs_no_more_than_ahead_tasks_beyond_what_was_taken(tmp_path: Path):
    """Results the caller has not taken wait in memory: a slow writer holds
    the workers back instead of letting them pile up."""
    from repolens.index.forked import ForkedPool

    def markers() -> int:
        return len(list(tmp_path.iterdir()))

    jobs = [(str(tmp_path), n) for n in range(40)]
    pool = ForkedPool(2, ahead=3)
    try:
        results = pool.map(_mark, _cut(jobs, 1))
        assert next(results) == 0
        # The courier stops at the bound and says so: one result taken, three ahead of it.
        wait_for(lambda: pool.holding_back() is not None, "the courier to hold tasks back")
        assert pool.holding_back() == 1 + 3
        wait_for(lambda: markers() == 1 + 3, "the tasks handed out to run")
        assert list(results) == list(range(1, 40))
    finally:
        pool.close()
    for marker in tmp_path.iterdir():
        marker.unlink()
    pool = ForkedPool(2, ahead=1)
    results = pool.map(_mark, _cut(jobs, 1))
    assert next(results) == 0
    wait_for(lambda: pool.holding_back() == 2, "the courier to hold tasks back")
    pool.close()  # the courier, holding tasks back, ends too; nothing hangs
    assert markers() <= 2


def test_a_fresh_build_cuts_its_jobs_into_tasks_of_even_work_in_order():
    """A task holds consecutive files of about the same bytes: a big file
    goes alone, small ones together, and the order is the jobs' order."""
    sizes = [300_000, 1_000, 2_000, 250_000, *[4_000] * 60, 500_000, 3_000, *[8_000] * 40]
    jobs = [prepare.Job(f"f{i}.py", f"/r/f{i}.py", "", 1 << 20, "syntax", 0, n) for i, n in enumerate(sizes)]
    tasks = prepare._tasks(jobs)
    assert [job for task in tasks for job in task] == jobs
    weights = [sum(job.size + prepare._FILE_WEIGHT for job in task) for task in tasks]
    target = (sum(sizes) + len(sizes) * prepare._FILE_WEIGHT) * prepare._chunksize(len(jobs)) / len(jobs)
    assert all(w <= target or len(t) == 1 for w, t in zip(weights, tasks, strict=True))
    assert [len(t) for t in tasks if t[0].size >= 250_000] == [1, 1, 1]  # each big file alone
    assert max(len(t) for t in tasks) > prepare._CHUNKSIZE  # small files share a task
    assert prepare._tasks([]) == []


class _Stop(Exception):
    """What a cancelled MCP call raises from the progress callback."""


def test_a_build_stopped_midway_ends_its_spawned_workers_before_the_error_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A build stopped by its progress callback (an MCP client that cancels
    ``index_repo``) shuts its pool down in its own thread, as the error
    leaves: left to the garbage collector, the pool's generator was closed in
    whatever thread collected it, the pool's own included ("Exception ignored
    in generator prepare_all ... RuntimeError: cannot join current thread")."""
    import multiprocessing

    root = _repo(tmp_path / "repo", 60_000)
    monkeypatch.setattr(prepare, "FORK_MIN_BYTES", 1 << 62)  # as in a server: spawned, not forked
    monkeypatch.setattr(prepare, "PARALLEL_MIN_BYTES", 1)

    def progress(done: int, total: int) -> None:
        if done == 2:
            raise _Stop

    with pytest.raises(_Stop) as stopped:  # held, as the server's event loop holds it
        build_index(root, index_dir=tmp_path / "index", progress=progress)
    left = multiprocessing.active_children()
    del stopped
    for child in left:  # (else the suite would wait for them at its end)
        child.kill()
    assert left == []
