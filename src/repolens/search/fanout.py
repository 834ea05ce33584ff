"""One call per repository, at once: the repositories a question (or a
read, a symbol look-up, a reference) names are each asked on a thread of a
small pool that keeps its readers open between calls: a repository stays at
home on one thread (:class:`Pool`), so each holds one reader, not one per
thread. A repository that fails (no index yet, one being built, a damaged
one, a store that does not answer) becomes one line naming it, and the
others answer; one that has not answered :data:`ASK_TIMEOUT_S` after its
call started too, and its thread is replaced rather than waited for. How a
search's answers are ranked across repositories is :mod:`.across`'s."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from repolens.errors import NotFoundError, RepolensError, RootError
from repolens.fronts import say

if TYPE_CHECKING:
    from repolens.store.base import Store

log = logging.getLogger("repolens")

# Threads that search repositories at once (per process): enough to overlap a
# store's I/O, few enough that a question over hundreds of repositories
# cannot take every core or every database connection (a pool holds 8).
ACROSS_THREADS = 4
# A repository that has not answered this many seconds after its search
# started (a store that does not answer) is named in a note; the others answer.
ASK_TIMEOUT_S = 30.0
# The separator between a repository's key and a path in a label.
LABEL_SEP = ":"
# Why a target without a folder is not asked: a server's configured root whose folder
# is missing has none (the one such target). A stat at each call naming it looks again.
MISSING_FOLDER = "not served: its configured folder is missing on the server (served once it is back)"

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """One repository (a served root) to ask: its key (``name`` or
    ``name@branch``), folder and index folder (None: the default). A
    target without a folder (a server's configured root whose folder is
    missing) is never asked: it answers why (:attr:`unserved`), so a reply
    over several names it rather than passing over it."""

    key: str
    folder: Path | None
    index_dir: Path | None = None

    @property
    def unserved(self) -> str:
        """Why it cannot be asked ("" when it can)."""
        return MISSING_FOLDER if self.folder is None else ""

    @property
    def root(self) -> Path:
        """The folder to open; an unserved target has none, and says why
        (a made-up path, or None, would open some other folder's index)."""
        if self.folder is None:
            raise RootError(f"repository {self.key!r} is {self.unserved}")
        return self.folder


@dataclass(frozen=True)
class Answered(Generic[T]):
    """What one repository answered (``value``), or why it did not (``error``)."""

    target: Target
    value: T | None = None
    error: str = ""


def label(key: str, path: str) -> str:
    """``app@main:src/x.py``: a path as a reply over several repositories names it."""
    return f"{key}{LABEL_SEP}{path}"


class _Task:
    """One call on the pool: run once, by the first thread that claims it
    (a task moved off a stuck thread may still be queued there)."""

    __slots__ = ("_done", "_lock", "error", "finished", "fn", "key", "started", "value")

    def __init__(self, key: str, fn: Callable[[], object], done: threading.Condition) -> None:
        self.key, self.fn = key, fn
        self.started: float | None = None
        self.value: object = None
        self.error: BaseException | None = None
        self._done = done  # notified when the task starts and when it ends
        self._lock = threading.Lock()
        self.finished = False  # (under ``done``)

    def claim(self) -> bool:
        """Whether this thread is the one to run it (the first to ask)."""
        with self._lock:
            if self.started is not None:
                return False
            self.started = time.monotonic()
            return True

    def run(self) -> None:
        with self._done:  # its clock runs from now
            self._done.notify_all()
        try:
            self.value = self.fn()
        except BaseException as exc:  # handed to the caller, which says what it was
            self.error = exc
        with self._done:
            self.finished = True
            self._done.notify_all()


class _Slot:
    """One thread of the pool: its executor, the task it runs, the tasks queued on it."""

    def __init__(self, index: int) -> None:
        self.executor = ThreadPoolExecutor(1, thread_name_prefix=f"repolens-across-{index}")
        self.running: _Task | None = None
        self.queued: list[_Task] = []


class Pool:
    """Threads that ask repositories, each repository at home on one of
    them: a key is homed on the thread with the fewest keys when first
    seen, and stays there while it is among the ``homes`` keys used last,
    so its reader (one per thread, :mod:`repolens.store.handles`) is opened
    once and kept. A thread whose task has run longer than the timeout of
    a call waiting on it is stuck (a store that does not answer): it is
    retired, a new thread takes its place, and the tasks queued on it move
    there (the stuck one ends when its task does, its readers closed then)."""

    def __init__(self, threads: int, homes: int = 4096) -> None:
        self._lock = threading.Lock()
        self._slots: list[_Slot | None] = [None] * threads
        self._homes: OrderedDict[str, int] = OrderedDict()
        self._max_homes = homes

    def home(self, key: str) -> int:
        """The thread ``key`` runs on (homing it on the least busy one when new)."""
        with self._lock:
            return self._home(key)

    def _home(self, key: str) -> int:
        if key in self._homes:
            self._homes.move_to_end(key)
            return self._homes[key]
        keys = [0] * len(self._slots)
        for slot in self._homes.values():
            keys[slot] += 1
        self._homes[key] = index = keys.index(min(keys))
        if len(self._homes) > self._max_homes:
            self._homes.popitem(last=False)
        return index

    def submit(self, task: _Task) -> None:
        with self._lock:
            index = self._home(task.key)
            slot = self._slots[index] = self._slots[index] or _Slot(index)
            self._queue(slot, task)

    def _queue(self, slot: _Slot, task: _Task) -> None:
        slot.queued.append(task)
        slot.executor.submit(self._run, slot, task)

    def _run(self, slot: _Slot, task: _Task) -> None:
        with self._lock:
            if task in slot.queued:
                slot.queued.remove(task)
            if not task.claim():
                return
            slot.running = task
        try:
            task.run()
        finally:
            with self._lock:
                if slot.running is task:
                    slot.running = None

    def retire_stuck(self, timeout: float) -> None:
        """Retire every thread whose task has run ``timeout`` seconds or more."""
        now = time.monotonic()
        with self._lock:
            for index, slot in enumerate(self._slots):
                task = slot.running if slot is not None else None
                if slot is None or task is None or task.started is None or now - task.started < timeout:
                    continue
                log.warning(
                    "%s has not answered in %.0f s: its thread is left to it", task.key, now - task.started
                )
                fresh = self._slots[index] = _Slot(index)
                for queued in slot.queued:
                    self._queue(fresh, queued)
                slot.queued.clear()
                slot.executor.shutdown(wait=False, cancel_futures=True)


_pool = Pool(ACROSS_THREADS)


def run_each(
    keys: Sequence[str], calls: Sequence[Callable[[], T]], timeout: float
) -> list[tuple[T | None, str]]:
    """Each of ``calls`` on the pool, the i-th at home on the thread of
    ``keys[i]``, at most :data:`ACROSS_THREADS` at once: (value, "") or
    (None, why it has none), in order. A call running ``timeout`` seconds
    has none ("no answer within 30 s"), and the others still answer; a
    ``RepolensError`` is its one line; anything else is a bug, logged with
    its traceback and named as one."""
    done = threading.Condition()
    # each in a copy of the caller's context, as a thread of its own would
    # be: what the call says is in its caller's words (repolens.fronts)
    pairs = zip(keys, calls, strict=True)
    tasks = [_Task(key, functools.partial(copy_context().run, call), done) for key, call in pairs]
    for task in tasks:
        _pool.submit(task)
    late: set[int] = set()
    with done:
        while True:
            now = time.monotonic()
            late |= {
                i
                for i, task in enumerate(tasks)
                if not task.finished and task.started is not None and now - task.started >= timeout
            }
            waiting = [t for i, t in enumerate(tasks) if not t.finished and i not in late]
            if not waiting:
                break
            _pool.retire_stuck(timeout)  # (a task may wait behind another call's stuck one)
            started = [t.started + timeout - now for t in waiting if t.started is not None]
            done.wait(max(0.01, min(started, default=timeout)))
    return [
        (None, f"no answer within {timeout:g} s") if i in late else _outcome(t) for i, t in enumerate(tasks)
    ]


def _outcome(task: _Task) -> tuple[T | None, str]:
    if task.error is None:
        return task.value, ""  # type: ignore[return-value]
    if isinstance(task.error, RepolensError):
        return None, _first_line(task.error)
    exc = task.error
    log.error("search of %s failed", task.key, exc_info=exc)
    return None, f"unexpected {type(exc).__name__}: {exc} (a bug; see the log)"


def ask_each(
    targets: Sequence[Target], ask: Callable[[Target], T], timeout: float = ASK_TIMEOUT_S
) -> list[Answered[T]]:
    """``ask(target)`` for every target (see :func:`run_each`), in ``targets``' order."""
    asked = [t for t in targets if not t.unserved]
    answers = iter(run_each([t.key for t in asked], [functools.partial(ask, t) for t in asked], timeout))
    out: list[Answered[T]] = []
    for t in targets:
        v, why = (None, t.unserved) if t.unserved else next(answers)
        out.append(Answered(t, v) if not why else Answered(t, error=why))
    return out


def held_each(
    targets: Sequence[Target], tokens: Sequence[str], timeout: float = ASK_TIMEOUT_S
) -> list[Answered[frozenset[str]]]:
    """Which of ``tokens`` each target's index holds anywhere (the probe of a
    search of many repositories), in ``targets``' order: the stores of one
    batch (:meth:`~repolens.store.base.Store.probe_batch`: the repositories
    of one PostgreSQL database) in one round trip, the others each by its
    reader as last refreshed; all on the pool, with its ``timeout``. Errors
    as :func:`ask_each`. A batch's probe opens no reader, so an index
    another repository wrote under the same key is refused only when the
    full search opens one (:func:`~repolens.store.identity.check_identity`),
    if it is chosen."""
    from repolens.store import open_store
    from repolens.store.handles import readers, unpublished

    answered: dict[str, Answered[frozenset[str]]] = {}
    groups: dict[str, list[tuple[Target, Store]]] = {}
    for target in targets:
        if target.unserved:
            answered[target.key] = Answered(target, error=target.unserved)
            continue
        try:
            store = open_store(target.root, target.index_dir)
        except RepolensError as exc:
            answered[target.key] = Answered(target, error=_first_line(exc))
            continue
        batch = store.probe_batch()
        groups.setdefault(batch if batch is not None else f"alone {target.key}", []).append((target, store))

    def probe(group: Sequence[tuple[Target, Store]]) -> list[frozenset[str] | None]:
        stores = [store for _, store in group]
        if stores[0].probe_batch() is None:
            return [readers.get(stores[0], refresh=False).held_terms(tokens)]
        return stores[0].held_terms_batch(stores, tokens)

    batches = list(groups.values())
    found = run_each([g[0][0].key for g in batches], [functools.partial(probe, g) for g in batches], timeout)
    for group, (held, why) in zip(batches, found, strict=True):
        for i, (target, store) in enumerate(group):
            if why:
                answered[target.key] = Answered(target, error=why)
            elif held is not None and held[i] is not None:
                answered[target.key] = Answered(target, held[i])
            else:
                answered[target.key] = Answered(target, error=_first_line(unpublished(store)))
    return [answered[t.key] for t in targets]


def _first_line(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0]


def failed_notes(answers: Sequence[Answered[object]]) -> list[str]:
    """One note per repository that did not answer."""
    return [_not_answered([a.target.key], a.error) for a in answers if a.error]


def _not_answered(keys: Sequence[str], why: str) -> str:
    return f"{', '.join(keys)} did not answer: {why}"


def none_answered(answers: Sequence[Answered[object]]) -> NotFoundError:
    """The error of a call no repository of ``answers`` answered: each reason once, naming
    every repository that gave it (a ``path`` none of them holds, ``a, b``, beside ``c``'s
    missing index). One reason for all is its own fix; several add the fix of the usual
    cause (indexes not built yet): a path none held was told to index them."""
    reasons = _by_note([(a.target.key, [a.error]) for a in answers if a.error])
    said = "; ".join(_not_answered(keys, why) for why, keys in reasons.items())
    if len(reasons) == 1:
        return NotFoundError(f"no repository could answer: {said}")
    return NotFoundError(f"no repository could answer: {said}", fix=f"{say('index them')} and ask again")


def grouped_notes(per_repo: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """Each repository's notes, one line per distinct note naming every
    repository it is about (``a, b: vectors not computed ...``), not the same
    line once per repository."""
    return [f"{', '.join(names)}: {note}" for note, names in _by_note(per_repo).items()]


def _by_note(per_repo: Sequence[tuple[str, Sequence[str]]]) -> dict[str, list[str]]:
    """Each distinct note of ``per_repo`` -> the repositories giving it, in their order."""
    keys: dict[str, list[str]] = {}
    for key, notes in per_repo:
        for note in notes:
            keys.setdefault(note, []).append(key)
    return keys
