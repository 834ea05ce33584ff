"""One question asked of several repositories: concurrent, bounded, and
ranked across them.

Each repository is searched as it would be alone (its own index, settings
and legs), on a thread of a small pool that keeps its readers open between
calls: a repository always goes to the same thread (by its key), so each
holds one reader, not one per thread. A repository that fails (no index yet,
one being built, a damaged one, a store that does not answer) becomes one
line naming it, and the others answer.

**Scores across repositories.** A repository's scores are relative to its
own best hit (the learned ranking's are ``exp`` of the margin to that best,
:func:`repolens.search.learned.positive`), so they cannot be merged as
they are. What compares is the model's own score before that: a function
of the question and of features of each candidate (how many of the
question's terms its file and chunk cover, whether it defines a named
identifier, its role, its legs' ranks), which does not depend on which
repository asked. :func:`cross_score` puts every hit back on that scale
(the spread over files included), and the merged order sorts by it; the
tuned ranking's scores are taken as they are (the log, so the same
arithmetic holds). ``bench/cross_repo.py`` measures how well this ranks a
question's own repository first among 20 and more others.

Hits are relabelled ``key:path`` (``app@main:src/x.py``), so every block,
marker and pointer of the reply names its repository, and
``read_snippet app@main:src/x.py 3 9`` reads it.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, TypeVar

from repolens.errors import RepolensError
from repolens.search.hits import Hit

log = logging.getLogger("repolens")

# Threads that search repositories at once (per process): enough to overlap a
# store's I/O, few enough that a question over hundreds of repositories
# cannot take every core or every database connection (a pool holds 8).
ACROSS_THREADS = 4
# The separator between a repository's key and a path in a label.
LABEL_SEP = ":"

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """One repository (a served root) to ask: its key (``name`` or
    ``name@branch``), folder and index folder (None: the default)."""

    key: str
    root: Path
    index_dir: Path | None = None


@dataclass(frozen=True)
class Answered(Generic[T]):
    """What one repository answered (``value``), or why it did not (``error``)."""

    target: Target
    value: T | None = None
    error: str = ""


def label(key: str, path: str) -> str:
    """``app@main:src/x.py``: a path as a reply over several repositories names it."""
    return f"{key}{LABEL_SEP}{path}"


class _Pool:
    """Single-thread executors, one chosen per repository key: a repository
    is always read on the same thread, so its reader (one per thread,
    :mod:`repolens.store.handles`) is opened once and kept."""

    def __init__(self, threads: int) -> None:
        self._threads = threads
        self._lock = threading.Lock()
        self._executors: list[ThreadPoolExecutor] = []

    def submit(self, key: str, fn: Callable[[], T]) -> Future[T]:
        with self._lock:
            if not self._executors:
                self._executors = [
                    ThreadPoolExecutor(1, thread_name_prefix=f"repolens-across-{i}")
                    for i in range(self._threads)
                ]
            # A stable choice (not hash(), which varies per process): the same key, the same thread.
            index = sum(key.encode()) % self._threads
            return self._executors[index].submit(fn)


_pool = _Pool(ACROSS_THREADS)


def ask_each(targets: Sequence[Target], ask: Callable[[Target], T]) -> list[Answered[T]]:
    """``ask(target)`` for every target, at most :data:`ACROSS_THREADS` at
    once, in ``targets``' order. A ``RepolensError`` is that repository's
    one-line error; anything else is a bug, logged with its traceback and
    named as one (the other repositories still answer)."""
    futures = [(t, _pool.submit(t.key, lambda t=t: ask(t))) for t in targets]
    out: list[Answered[T]] = []
    for target, future in futures:
        try:
            out.append(Answered(target, future.result()))
        except RepolensError as exc:
            out.append(Answered(target, error=str(exc).split("\n", 1)[0]))
        except Exception as exc:  # a bug in one repository's search must not lose the others' answers
            log.exception("search of %s failed", target.key)
            out.append(Answered(target, error=f"unexpected {type(exc).__name__}: {exc} (a bug; see the log)"))
    return out


def failed_notes(answers: Sequence[Answered[object]]) -> list[str]:
    """One note per repository that did not answer."""
    return [f"{a.target.key} did not answer: {a.error}" for a in answers if a.error]


def grouped_notes(per_repo: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """Each repository's notes, one line per distinct note naming every
    repository it is about (``a, b: vectors not computed ...``), not the same
    line once per repository."""
    keys: dict[str, list[str]] = {}
    for key, notes in per_repo:
        for note in notes:
            keys.setdefault(note, []).append(key)
    return [f"{', '.join(names)}: {note}" for note, names in keys.items()]


def cross_score(hit: Hit) -> float:
    """``hit``'s score on a scale shared by every repository (see the module
    docstring): the learned model's own score, less what the spread over
    files took; a tuned score's log."""
    score = max(hit.score, 1e-300)
    learned = hit.factors.get("learned")
    if learned is None:
        return math.log(score)
    relevance = hit.relevance  # exp(learned - best), before the spread
    spread = score / relevance if relevance > 0 else 1.0
    return float(learned) + math.log(max(spread, 1e-300))


def merge_hits(per_repo: Sequence[tuple[str, Sequence[Hit]]], limit: int) -> list[Hit]:
    """The hits of every repository (key, hits in its own order), ranked
    together by :func:`cross_score` and relabelled ``key:path``; each score
    shown becomes ``exp`` of the margin to the best (1 for the best)."""
    scored = [(cross_score(h), key, h) for key, hits in per_repo for h in hits]
    scored.sort(key=lambda item: (-item[0], item[1], item[2].chunk.path, item[2].chunk.start_line))
    best = scored[0][0] if scored else 0.0
    out = []
    for cross, key, hit in scored[:limit]:
        chunk = replace(hit.chunk, path=label(key, hit.chunk.path))
        factors = {**hit.factors, "across": cross}
        out.append(replace(hit, chunk=chunk, score=math.exp(cross - best), factors=factors))
    return out
