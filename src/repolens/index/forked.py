"""Worker processes forked by the indexing process, and the little protocol
that feeds them: a pool of our own rather than ``ProcessPoolExecutor``.

Each worker is a fork of the indexing process with two pipes: tasks in,
results out, each message a length, a task number and a pickle. One thread
of the indexing process, the courier, keeps ``_QUEUED`` tasks waiting at
each worker and collects the results as they come; the writer takes them in
task order. The courier spends its time in ``select``, reads and writes,
which release the GIL, so the writer keeps it, and no worker waits for work
while the writer commits a batch (a first version without a courier read
results only between the writer's files: corpus-1m took up to 12% longer).
The executor did this with two threads and queues, and its imports
(``multiprocessing``, ``concurrent.futures``: ``logging``, ``socket``,
``tempfile`` ...) cost ~20 ms of a small index.

The courier sends no task more than ``ahead`` tasks beyond the one the
writer takes next: results the writer has not taken wait in memory, and a
writer slower than its workers (a busy disk, a big commit) would otherwise
let them pile up to the whole repository's chunks. A worker with nothing
allowed waits; the writer wakes the courier when it takes a result.

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

_HEADER = struct.Struct("<QQ")  # length, task
# Tasks waiting at each worker: the next one is there when it finishes one,
# without waiting for the courier's round trip. More waiting tasks make the
# workers' last tasks less even (eight: corpus-1m 15.11 against 13.58 s).
_QUEUED = 2
# Tasks sent but not yet taken by the writer, at most (a fresh build's task
# holds about eight average files: a few MB of pickled chunks in all); far
# more than the workers need to stay busy while the writer commits a batch.
_AHEAD = 32
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

    def __init__(self, size: int, ahead: int = _AHEAD) -> None:
        import threading

        self._workers: list[_Worker] = []
        self._done: dict[int, bytes] = {}  # results arrived, pickled, by task
        self._arrived = threading.Condition()  # also guards _taken, _held and _closing
        self._broken: BaseException | None = None  # why the courier stopped early
        self._complete = False  # every result arrived (and no worker is needed)
        self._courier: threading.Thread | None = None
        self._ahead = max(ahead, 1)
        self._taken = 0  # results the writer took
        self._held = False  # the courier holds a task back until the writer takes one
        self._sent = 0  # tasks the courier handed to workers
        self._closing = False
        self._wake_r, self._wake_w = os.pipe()  # the writer (or close) wakes the courier
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
                os.close(self._wake_r)
                os.close(self._wake_w)
                become_worker(parent)
                code = _serve(task_r, result_w)
            finally:
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        return _Worker(pid, task_w, result_r)

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Sequence[Any]]) -> Iterator[Any]:
        """``fn`` of each item of each of ``tasks``, in order; a worker runs
        a task at a time. Raises :class:`WorkerDiedError` when a worker ends
        before its tasks are done. One call per pool."""
        import pickle  # here, not above: an index prepared in process never pickles
        import threading

        if self._courier is not None:
            raise RuntimeError("a ForkedPool maps once: its workers end after the last task")
        count = len(tasks)
        messages = [pickle.dumps((t, fn, items), pickle.HIGHEST_PROTOCOL) for t, items in enumerate(tasks)]
        self._courier = threading.Thread(
            target=self._carry, args=(messages,), name="repolens-courier", daemon=True
        )
        self._courier.start()
        for task in range(count):
            with self._arrived:
                while task not in self._done and self._broken is None:
                    self._arrived.wait()
                data = self._done.pop(task, None)
                self._taken += 1
                if self._held:  # room for one more task: the courier waits for this
                    self._held = False
                    os.write(self._wake_w, b"x")
            if data is None:
                failure = self._broken
                if failure is None or isinstance(failure, OSError):  # a worker gone
                    raise WorkerDiedError() from failure
                raise failure  # the courier's own
            _, ok, value = pickle.loads(data)
            if not ok:
                raise value
            yield from value

    def holding_back(self) -> int | None:
        """How many tasks the courier has handed out while it holds the next
        one back for the writer to catch up (``ahead`` beyond the results
        taken), None while it is not holding back: what the bound on work
        ahead of the writer can be seen by."""
        with self._arrived:
            return self._sent if self._held else None

    def _carry(self, tasks: list[bytes]) -> None:
        """The courier thread: hands each worker its next task as soon as it
        returns a result (and the writer is at most ``ahead`` tasks behind),
        and keeps the results (pickled) for :meth:`map`. It waits in
        ``select`` and in reads and writes, which release the GIL: the writer
        keeps it, and no worker waits for a task while the writer commits a
        batch."""
        by_fd = {w.results: w for w in self._workers}
        received = 0

        def feed(worker: _Worker) -> None:
            while worker.queued < _QUEUED and self._sent < len(tasks):
                with self._arrived:
                    if self._sent - self._taken >= self._ahead:
                        self._held = True
                        return
                _send(worker.tasks, tasks[self._sent])
                worker.queued += 1
                with self._arrived:
                    self._sent += 1
            if self._sent == len(tasks):
                self._finish()  # every task is out: each worker exits after its last

        try:
            for worker in self._workers:
                feed(worker)
            while received < len(tasks):
                for fd in select.select([*by_fd, self._wake_r], [], [])[0]:
                    if fd == self._wake_r:
                        os.read(fd, 4096)
                        with self._arrived:
                            if self._closing:
                                return
                        for worker in list(by_fd.values()):
                            feed(worker)
                        continue
                    message = _receive(fd)
                    if message is None and not by_fd[fd].queued and self._sent == len(tasks):
                        del by_fd[fd]  # done with its last task
                        continue
                    if message is None:  # it ended with tasks to do: killed
                        raise BrokenPipeError
                    task, data = message
                    received += 1
                    with self._arrived:
                        self._done[task] = data
                        self._complete = received == len(tasks)
                        self._arrived.notify()
                    by_fd[fd].queued -= 1
                    feed(by_fd[fd])
        except BaseException as exc:  # OSError: a worker gone (BrokenPipeError), its pipe closed
            with self._arrived:
                self._broken = exc
                self._arrived.notify()

    def _finish(self) -> None:
        """Tell every worker there is no more work (end of file on its tasks)."""
        for w in self._workers:
            if w.tasks >= 0:
                os.close(w.tasks)
                w.tasks = -1

    def close(self) -> None:
        """End and reap every worker: at once unless every result arrived
        (an error, Ctrl-C: what is not started never runs)."""
        if not self._complete:
            for w in self._workers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(w.pid, signal.SIGKILL)
        if self._courier is not None:
            with self._arrived:  # a courier holding tasks back waits for this, not for a worker
                self._closing = True
                os.write(self._wake_w, b"x")
            self._courier.join()  # or it ends at the killed workers' end of file
        self._finish()
        for w in self._workers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(w.pid, 0)
            os.close(w.results)
        self._workers = []
        if self._wake_r >= 0:
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = -1


def become_worker(parent: int) -> None:
    """In a new worker (forked or spawned): ignore Ctrl-C, held back since
    before it started (one pressed since is discarded), and die with the
    indexing process ``parent``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
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
        task, fn, items = pickle.loads(message[1])
        try:
            reply = pickle.dumps((task, True, [fn(item) for item in items]), pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # raised in the indexing process, like the executor did
            try:
                reply = pickle.dumps((task, False, exc), pickle.HIGHEST_PROTOCOL)
            except Exception:
                reply = pickle.dumps((task, False, RuntimeError(repr(exc))), pickle.HIGHEST_PROTOCOL)
        try:
            _send(results, reply, task)
        except BrokenPipeError:  # the indexing process stopped reading: it is ending
            return 1


def _send(fd: int, data: bytes, task: int = 0) -> None:
    view = memoryview(_HEADER.pack(len(data), task) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> tuple[int, bytes] | None:
    """The next message on ``fd`` (its task and its pickle), or None at the
    end of file (its writer ended)."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    size, task = _HEADER.unpack(head)
    body = _read_exactly(fd, size)
    return None if body is None else (task, body)


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
