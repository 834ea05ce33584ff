"""Read, chunk and tokenize files, in parallel worker processes for big jobs.

This is the CPU-bound half of indexing (tree-sitter parsing, tokenizing
for BM25); the other half (writing the store) stays in the indexing
process, which owns the store's writer. A :class:`Job` carries everything a worker needs, so
workers share nothing and results come back in job order, while the indexing
process writes the results before them (a pipeline). Small jobs (a refresh of
a few files, the watcher, a small repository) run in process: starting
workers would cost more than it saves.

Workers come two ways. A fresh build forks them (:func:`forked_workers`,
:mod:`repolens.index.forked`) before the store's writer opens, while the
indexing process still has one thread and no open writer: a forked worker
starts in ~10 ms with every module already loaded. Any other job big enough
spawns them (:func:`prepare_all`, ``ProcessPoolExecutor``):
a spawned worker imports the chunkers and grammars itself (~0.3 s of CPU), but
inherits nothing of the writer's threads and database connections.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING

from repolens.chunking import Chunk, Symbol
from repolens.chunking.dispatch import chunk_file
from repolens.chunking.languages import language_of
from repolens.discover import LoadedText, file_hash, load_text
from repolens.errors import WorkerDiedError
from repolens.index.forked import become_worker, sigint_blocked
from repolens.record import Record
from repolens.store.document import document_fields
from repolens.store.records import PackedRefs
from repolens.store.ref_rows import pack

if TYPE_CHECKING:
    from repolens.index.forked import ForkedPool

# Below this many bytes to read, a job runs in the indexing process: each
# spawned worker first imports the chunkers and every grammar (about half a
# second of CPU), which a small repository's whole indexing does not repay.
# Measured (bench.speed index, docs/benchmarks.md): up to pytest (451
# files, 3.3 MB) in process is faster and costs a CPU second less; at xarray
# (5.8 MB) the two tie on this 2-core machine.
PARALLEL_MIN_BYTES = 4_000_000
# From this many bytes a fresh build prepares in forked workers (started in
# ~10 ms each, see forked_workers); below it, in process. Measured on 2 cores
# (docs/benchmarks.md): forked workers cost 20-30% more CPU than preparing in
# process (each warms its own caches and grammars, pages are copied on
# write, results are pickled); at 0.4 MB (fd) they lose, at 0.6 MB (cobra)
# they tie, at 1.1 MB (flask) they save 0.15-0.3 s when a core is idle.
FORK_MIN_BYTES = 800_000
_CHUNKSIZE = 8
_FILE_WEIGHT = 2_000  # a file's cost beyond its bytes (open, read, dispatch), in bytes
_TASKS_PER_WORKER = 4


# The records below are named tuples: a worker receives and sends them
# pickled, and a tuple is made and pickled in half the time of a frozen
# dataclass.


class Job(Record):
    path: str
    abs_path: str
    known_hash: str  # the indexed file's hash ("" when new): equal content needs no chunking
    max_file_bytes: int
    mode: str
    merge_lines: int
    size: int = 0  # bytes on disk when discovered: decides in or out of process


class Prepared(Record):
    path: str
    digest: str
    lines: int
    replaced: bool
    language: str
    parse_error: bool
    chunks: list[Chunk]
    symbols: list[Symbol]
    fields: list[dict[str, str | list[str]]]  # lexical documents, one per chunk
    refs: PackedRefs | None = None  # uses of names (repolens.chunking.refs), packed


class Skipped(Record):
    reason: str  # binary, empty, too_large, unreadable, ...


class Unchanged(Record):
    digest: str


def prepare(job: Job) -> Prepared | Skipped | Unchanged:
    loaded = load_text(job.abs_path, max_file_bytes=job.max_file_bytes)
    if not isinstance(loaded, LoadedText):
        return Skipped(str(loaded))
    digest = file_hash(loaded.data)
    if digest == job.known_hash:
        return Unchanged(digest)
    language = language_of(job.path, loaded.text)
    chunked = chunk_file(job.path, loaded.text, language, mode=job.mode, merge_lines=job.merge_lines)
    return Prepared(
        path=job.path,
        digest=digest,
        lines=loaded.lines,
        replaced=loaded.replaced,
        language=language,
        parse_error=chunked.parse_error,
        chunks=chunked.chunks,
        symbols=chunked.symbols,
        fields=[document_fields(c) for c in chunked.chunks],
        refs=pack(chunked.refs),
    )


def workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


@contextlib.contextmanager
def forked_workers(expected_bytes: int, idle_sockets: Collection[int] = ()) -> Iterator[ForkedPool | None]:
    """Worker processes forked now for a job of about ``expected_bytes``, or
    None when it is too small (below ``FORK_MIN_BYTES``), there is one core,
    or forking is not safe here.

    Call it before the store's writer opens: a fork copies the process as it
    is, and a copy of a thread-holding lock or of a database connection in
    use is unsafe. So the workers are forked only on Linux, only while this
    process has a single thread (of any kind: tantivy's are not Python's)
    and no socket open but ``idle_sockets`` (the store's write lock, see
    :meth:`repolens.store.base.Store.lock_sockets`: a worker never touches
    it and leaves with ``os._exit``, which closes nothing in its name; a
    local store's SQLite files are not open yet); otherwise the caller gets
    None and :func:`prepare_all` works as without it. On leaving, pending
    jobs are cancelled and the workers are joined.
    """
    if expected_bytes < FORK_MIN_BYTES or workers() < 2 or not _safe_to_fork(idle_sockets):
        yield None
        return
    from repolens.index.forked import ForkedPool

    pool = ForkedPool(workers())
    try:
        yield pool
    finally:
        pool.close()


def _safe_to_fork(idle_sockets: Collection[int] = ()) -> bool:
    """One thread and no socket but ``idle_sockets`` in this process (read from /proc: Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        if len(os.listdir("/proc/self/task")) != 1:
            return False
        for fd in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):  # the listing's own descriptor is gone
                if int(fd) not in idle_sockets and os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                    return False
    except OSError:
        return False
    return True


def prepare_all(
    jobs: Sequence[Job], pool: ForkedPool | None = None
) -> Iterator[Prepared | Skipped | Unchanged]:
    """Results in job order: in ``pool`` (see :func:`forked_workers`) when
    the jobs hold ``FORK_MIN_BYTES``, else in spawned workers when they hold
    ``PARALLEL_MIN_BYTES``, else in process.

    Spawned workers, not forked ones, because by then the indexing process
    holds the store writer's threads and database connections, which a fork
    must not copy. Workers die with the indexing process, however it ends
    (see :func:`_die_with_parent`); one that dies first (killed, out of
    memory) raises :class:`~repolens.errors.WorkerDiedError`. A spawned pool
    is started, used and shut down by the calling thread.
    """
    size = sum(job.size for job in jobs)
    if pool is not None and size >= FORK_MIN_BYTES:
        yield from pool.map(prepare, _tasks(jobs))
    elif size >= PARALLEL_MIN_BYTES and workers() >= 2:
        yield from _spawned(jobs)
    else:
        yield from map(prepare, jobs)


def _chunksize(jobs: int) -> int:
    # Files per task for spawned workers (forked ones get as many tasks, cut
    # by work: _tasks): up to _CHUNKSIZE, and at least _TASKS_PER_WORKER
    # tasks per worker so the writer's tail after the last results stays short. Smaller
    # tasks cost more than they save: each is a message each way, pickled
    # (measured with the executor, flask, 237 files: tasks of 3 files against
    # 8, 0.83 against 0.77 s wall, 1.14 against 1.08 s CPU;
    # bench.speed index, docs/benchmarks.md).
    return max(1, min(_CHUNKSIZE, jobs // (_TASKS_PER_WORKER * workers())))


def _tasks(jobs: Sequence[Job]) -> list[Sequence[Job]]:
    """``jobs`` cut into tasks of consecutive jobs holding about the same
    work (bytes to read, plus a constant per file), about as many as tasks
    of :func:`_chunksize` files would be. Eight files in a row can hold a
    sixth of a repository (xarray's tests: 672 KB of 4.1 MB), and the worker
    that gets them late finishes alone; by work, a big file is a task of its
    own and small ones share one (measured, docs/benchmarks.md: xarray 0.68
    -> 0.66 s, seaborn 0.48 -> 0.45 s, corpus-1m 8.91 -> 8.78 s)."""
    weights = [job.size + _FILE_WEIGHT for job in jobs]
    target = sum(weights) * _chunksize(len(jobs)) / len(jobs) if jobs else 0
    tasks: list[Sequence[Job]] = []
    start = 0
    held = 0
    for i, weight in enumerate(weights):
        if held and held + weight > target:
            tasks.append(jobs[start:i])
            start, held = i, 0
        held += weight
    if start < len(jobs):
        tasks.append(jobs[start:])
    return tasks


def _spawned(jobs: Sequence[Job]) -> Iterator[Prepared | Skipped | Unchanged]:
    """``jobs`` prepared in spawned workers, in order; the pool is told to
    shut down with the last result in, so its workers exit while the caller
    writes it, and stopped early (an error, Ctrl-C), what is not started
    never runs."""
    import multiprocessing  # here, not above: a small job never loads the pool machinery
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(
        max_workers=workers(),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    )
    try:
        with sigint_blocked():  # a spawning pool starts its workers as jobs are submitted
            results = pool.map(prepare, jobs, chunksize=_chunksize(len(jobs)))
        for done, result in enumerate(results, 1):
            if done == len(jobs):
                pool.shutdown(wait=False)
            yield result
    except BrokenProcessPool as exc:
        raise WorkerDiedError() from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# -- workers never outlive the indexing process, and leave Ctrl-C to it -------
#
# A pool worker waits on a pipe it also holds the writing end of, so when the
# indexing process is killed (SIGKILL, the OOM killer, a closed terminal) the
# worker would wait forever, and keep multiprocessing's resource tracker alive
# with it (the tracker exits once every holder of its pipe is gone).


def _die_with_parent(parent_pid: int) -> None:
    """Pool initializer: end this worker as soon as ``parent_pid`` is gone.

    Two guards: on Linux the kernel sends SIGKILL when the parent dies
    (``PR_SET_PDEATHSIG``); everywhere a watchdog thread exits the worker
    when the pipe from the parent closes, which happens when the parent ends.

    Ctrl-C reaches every process of the terminal's foreground group, workers
    included; the indexing process answers it (it stops, cancels the jobs
    not started and ends its workers), so a worker ignores it, else one
    waiting for a job prints a traceback. The worker was started with SIGINT
    blocked (:func:`~repolens.index.forked.sigint_blocked`): one pressed
    since is discarded (:func:`~repolens.index.forked.become_worker`).
    """
    import multiprocessing

    become_worker(parent_pid)
    parent = multiprocessing.parent_process()
    watch = threading.Thread(
        target=_exit_when_parent_ends,
        args=(parent_pid, parent.sentinel if parent is not None else None),
        name="repolens-parent-watchdog",
        daemon=True,
    )
    watch.start()


def _exit_when_parent_ends(parent_pid: int, sentinel: int | None) -> None:
    if sentinel is not None:
        import multiprocessing.connection

        multiprocessing.connection.wait([sentinel])
    else:  # no pipe to watch: poll
        while os.getppid() == parent_pid:
            time.sleep(1.0)
    os._exit(1)
