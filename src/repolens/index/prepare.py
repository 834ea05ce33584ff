"""Read, chunk and tokenize files, in parallel worker processes for big jobs.

This is the CPU-bound half of indexing (tree-sitter parsing, tokenizing
for BM25); the other half (writing the store) stays in the indexing
process, which owns the store's writer. A :class:`Job` carries everything a worker needs, so
workers share nothing and results come back in job order. Small jobs (a
refresh of a few files, the watcher) run in process: starting workers
would cost more than it saves.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from repolens.chunk import Chunk, Symbol, chunk_file
from repolens.chunk.languages import language_for
from repolens.discover import LoadedText, file_hash, load_text
from repolens.store.document import document_fields

# Below this many bytes to read, a job runs in the indexing process: each
# spawned worker first imports the chunkers and every grammar (about half a
# second of CPU), which a small repository's whole indexing does not repay.
# Measured (bench/index_start.py, docs/benchmarks.md): up to pytest (451
# files, 3.3 MB) in process is faster and costs a CPU second less; at xarray
# (5.8 MB) the two tie on this 2-core machine.
PARALLEL_MIN_BYTES = 4_000_000
_CHUNKSIZE = 8


@dataclass(frozen=True, slots=True)
class Job:
    path: str
    abs_path: str
    known_hash: str  # the indexed file's hash ("" when new): equal content needs no chunking
    max_file_bytes: int
    mode: str
    merge_lines: int
    size: int = 0  # bytes on disk when discovered: decides in or out of process


@dataclass(frozen=True, slots=True)
class Prepared:
    path: str
    digest: str
    lines: int
    replaced: bool
    language: str
    parse_error: bool
    chunks: list[Chunk]
    symbols: list[Symbol]
    fields: list[dict[str, str | list[str]]]  # lexical documents, one per chunk


@dataclass(frozen=True, slots=True)
class Skipped:
    reason: str  # binary, empty, too_large, unreadable, ...


@dataclass(frozen=True, slots=True)
class Unchanged:
    digest: str


def prepare(job: Job) -> Prepared | Skipped | Unchanged:
    loaded = load_text(job.abs_path, max_file_bytes=job.max_file_bytes)
    if not isinstance(loaded, LoadedText):
        return Skipped(str(loaded))
    digest = file_hash(loaded.data)
    if digest == job.known_hash:
        return Unchanged(digest)
    language = language_for(job.path)
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
    )


def workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def prepare_all(jobs: Sequence[Job]) -> Iterator[Prepared | Skipped | Unchanged]:
    """Results in job order; in worker processes when the job is big.

    Workers are spawned, not forked: the indexing process holds the store
    writer's threads and database connections, which a fork must not copy. They
    die with the indexing process, however it ends (see :func:`_die_with_parent`);
    the pool is started, used and shut down by the calling thread.
    """
    if sum(job.size for job in jobs) < PARALLEL_MIN_BYTES or workers() < 2:
        yield from map(prepare, jobs)
        return
    import multiprocessing  # here, not above: a small job never loads the pool machinery
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers(), mp_context=context, initializer=_die_with_parent, initargs=(os.getpid(),)
    ) as pool:
        yield from pool.map(prepare, jobs, chunksize=_CHUNKSIZE)


# -- workers never outlive the indexing process --------------------------------
#
# A pool worker waits on a pipe it also holds the writing end of, so when the
# indexing process is killed (SIGKILL, the OOM killer, a closed terminal) the
# worker would wait forever, and keep multiprocessing's resource tracker alive
# with it (the tracker exits once every holder of its pipe is gone).

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _die_with_parent(parent_pid: int) -> None:
    """Pool initializer: end this worker as soon as ``parent_pid`` is gone.

    Two guards: on Linux the kernel sends SIGKILL when the parent dies
    (``PR_SET_PDEATHSIG``); everywhere a watchdog thread exits the worker
    when the pipe from the parent closes, which happens when the parent ends.
    """
    import multiprocessing

    if sys.platform.startswith("linux"):
        _parent_death_signal(signal.SIGKILL)
    parent = multiprocessing.parent_process()
    watch = threading.Thread(
        target=_exit_when_parent_ends,
        args=(parent_pid, parent.sentinel if parent is not None else None),
        name="repolens-parent-watchdog",
        daemon=True,
    )
    watch.start()
    if os.getppid() != parent_pid:  # the parent died before the guards were up
        os._exit(1)


def _parent_death_signal(signum: int) -> None:
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)


def _exit_when_parent_ends(parent_pid: int, sentinel: int | None) -> None:
    if sentinel is not None:
        import multiprocessing.connection

        multiprocessing.connection.wait([sentinel])
    else:  # no pipe to watch: poll
        while os.getppid() == parent_pid:
            time.sleep(1.0)
    os._exit(1)
