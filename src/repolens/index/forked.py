"""Worker processes forked by the indexing process, and the little protocol
that feeds them: a pool of our own rather than ``ProcessPoolExecutor``.

Each worker is a fork of the indexing process with two pipes: tasks in,
results out, each message a length and a pickle. The indexing process keeps
``_QUEUED`` tasks waiting at each worker, reads results when it needs the
next one (and whatever else is ready by then), and hands that worker its next
task. The executor did the same through a manager thread and a queue feeder
thread of the indexing process, which took the GIL from the writer at every
task, and through ``multiprocessing`` and ``concurrent.futures``, whose
imports (``logging``, ``socket``, ``tempfile`` ...) cost ~20 ms of a small
index.

What the executor guaranteed, this keeps: results in task order; a worker
that dies (killed, out of memory) raises :class:`WorkerDiedError` instead of
a hang; an exception in a task is raised in the indexing process; workers
ignore Ctrl-C (the indexing process answers it and ends them), and die with
the indexing process however it ends (``PR_SET_PDEATHSIG`` on Linux, and the
task pipe's end of file everywhere).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from repolens.errors import WorkerDiedError

_HEADER = struct.Struct("<Q")
# Tasks waiting at each worker: one to work on while the indexing process,
# busy writing, has not yet read the result before it.
_QUEUED = 2
# A result pipe holds this much (Linux lets any process raise a pipe to 1 MiB):
# a worker writes a few tasks' results without waiting for the writer to read.
_PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031  # from <linux/fcntl.h>
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class _Worker:
    __slots__ = ("pid", "queued", "results", "tasks")

    def __init__(self, pid: int, tasks: int, results: int) -> None:
        self.pid = pid
        self.tasks = tasks  # write end: tasks to the worker
        self.results = results  # read end: results from it
        self.queued = 0


class ForkedPool:
    """``size`` workers, forked now. Fork only from a process with one
    thread and no open database connection (see
    :func:`repolens.index.prepare.forked_workers`)."""

    def __init__(self, size: int) -> None:
        self._workers: list[_Worker] = []
        try:
            with sigint_blocked():  # a worker starts with Ctrl-C held back until it ignores it
                for _ in range(size):
                    self._workers.append(self._fork())
        except BaseException:
            self.close()
            raise

    def _fork(self) -> _Worker:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError):
                import fcntl

                fcntl.fcntl(result_w, _F_SETPIPE_SZ, _PIPE_BYTES)
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:  # no process to be had: the pipes go with it
            for fd in (task_r, task_w, result_r, result_w):
                os.close(fd)
            raise
        if pid == 0:  # the worker: never returns
            code = 1
            try:
                for w in self._workers:  # the other workers' ends: theirs and the indexing process's only
                    os.close(w.tasks)
                    os.close(w.results)
                os.close(task_w)
                os.close(result_r)
                _become_worker(parent)
                code = _serve(task_r, result_w)
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        return _Worker(pid, task_w, result_r)

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], chunksize: int) -> Iterator[Any]:
        """``fn`` of each of ``items``, in order, computed by the workers in
        tasks of ``chunksize`` items. Raises :class:`WorkerDiedError` when a
        worker ends before its tasks are done."""
        import pickle  # here, not above: an index prepared in process never pickles

        tasks = [items[i : i + chunksize] for i in range(0, len(items), chunksize)]
        done: dict[int, list[Any]] = {}
        by_fd = {w.results: w for w in self._workers}
        sent = 0

        def feed(worker: _Worker) -> None:
            nonlocal sent
            while worker.queued < _QUEUED and sent < len(tasks):
                _send(worker.tasks, pickle.dumps((sent, fn, tasks[sent]), pickle.HIGHEST_PROTOCOL))
                worker.queued += 1
                sent += 1

        def receive(timeout: float | None) -> None:
            ready, _, _ = select.select(list(by_fd), [], [], timeout)
            for fd in ready:
                worker = by_fd[fd]
                message = _receive(fd)
                if message is None:
                    raise WorkerDiedError()
                task, ok, value = message
                if not ok:
                    raise value
                done[task] = value
                worker.queued -= 1
                feed(worker)

        try:
            for worker in self._workers:
                feed(worker)
            for task in range(len(tasks)):
                while task not in done:
                    receive(None)
                receive(0)  # what else is ready: its worker gets its next task now
                if task == len(tasks) - 1:
                    self._finish()  # the workers exit while the caller writes the last results
                yield from done.pop(task)
        except BrokenPipeError as exc:  # a task sent to a worker that had ended
            raise WorkerDiedError() from exc

    def _finish(self) -> None:
        """Tell every worker there is no more work (end of file on its tasks)."""
        for w in self._workers:
            if w.tasks >= 0:
                os.close(w.tasks)
                w.tasks = -1

    def close(self) -> None:
        """End and reap every worker: at once unless it was told there is no
        more work (an error, Ctrl-C: what is not started never runs)."""
        for w in self._workers:
            if w.tasks >= 0:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(w.pid, signal.SIGKILL)
        self._finish()
        for w in self._workers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(w.pid, 0)
            os.close(w.results)
        self._workers = []


def _become_worker(parent: int) -> None:
    """In a new worker: ignore Ctrl-C (held back since before the fork) and
    die with the indexing process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if sys.platform.startswith("linux"):
        parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the indexing process ended before the guard was up
        os._exit(1)


def _serve(tasks: int, results: int) -> int:
    """A worker's life: run tasks until the end of file on ``tasks``."""
    import pickle

    while True:
        message = _receive(tasks)
        if message is None:
            return 0
        task, fn, items = message
        try:
            reply = pickle.dumps((task, True, [fn(item) for item in items]), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # raised in the indexing process, like the executor did
            try:
                reply = pickle.dumps((task, False, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:
                reply = pickle.dumps((task, False, RuntimeError(repr(exc))), pickle.HIGHEST_PROTOCOL)
        try:
            _send(results, reply)
        except BrokenPipeError:  # the indexing process stopped reading: it is ending
            return 1


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    """The next message on ``fd``, or None at the end of file (its writer ended)."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    import pickle

    body = _read_exactly(fd, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts = []
    while size:
        part = os.read(fd, min(size, _PIPE_BYTES))
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """SIGINT held back (not lost) in this thread while workers are started,
    so they start with it blocked until they ignore it."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def parent_death_signal(signum: int) -> None:
    """Linux: ``signum`` for this process when its parent ends (``PR_SET_PDEATHSIG``)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0)
