"""One question asked of several repositories: concurrent, bounded, and
ranked across them.

Each repository is searched as it would be alone (its own index, settings
and legs), on a thread of a small pool that keeps its readers open between
calls: a repository stays at home on one thread (:class:`Pool`), so each
holds one reader, not one per thread. A repository that fails (no index yet,
one being built, a damaged one, a store that does not answer) becomes one
line naming it, and the others answer; one that has not answered
:data:`ASK_TIMEOUT_S` after its search started too, and its thread is
replaced rather than waited for.

**Scores across repositories.** A repository's scores are relative to its
own best hit (the learned ranking's are ``exp`` of the margin to that best,
:func:`repolens.search.learned.positive`), so they cannot be merged as
they are. What compares is the model's own score before that: a function
of the question and of features of each candidate (how many of the
question's terms its file and chunk cover, whether it defines a named
identifier, its role, its legs' ranks), which does not depend on which
repository asked. :func:`cross_score` puts every hit back on that scale
(the spread over files included); the tuned ranking's scores are taken as
they are (the log, so the same arithmetic holds). Alone, that puts a
question's own repository first among 38 for 0.62 of the mined questions
(each repository's shown score, best = 1 in each: 0.07). What the model
never had to learn is which repository a question is about: a word rare
in one repository (so weighty in its BM25) may be common in the others.
So the merge adds the question's *coverage*, with each term weighted by an
IDF over the repositories asked (:func:`coverage`): how much of the
question a repository's best evidence holds, and how much the hit's file
holds (0.79 first). ``bench.org ranking`` measures it.

Hits are relabelled ``key:path`` (``app@main:src/x.py``), so every block,
marker and pointer of the reply names its repository, and
``read_snippet app@main:src/x.py 3 9`` reads it.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from repolens.errors import NotFoundError, RepolensError
from repolens.record import Record
from repolens.search.hits import Hit, SearchOutcome
from repolens.search.query import ParsedQuery
from repolens.store.base import normalize_symbol
from repolens.tokens import TermsIn, terms_in

if TYPE_CHECKING:
    from repolens.search.filters import Filters
    from repolens.settings import Settings
    from repolens.store.base import IndexReader, Store

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
# A repository's coverage of the question (see coverage) counts as
# CALIBRATION.coverage * log(coverage) in the order across repositories, from
# its first EVIDENCE_HITS hits, and the hit's file's as
# CALIBRATION.file_coverage * log(coverage); a coverage under MIN_COVERAGE
# counts as that (the other evidence: Calibration).
# A search of more repositories than this asks each first which of the
# question's terms its index holds (one look-up), and searches in full only
# the FULL_SEARCHES that hold most of the question (see choose).
FULL_SEARCHES = 16
# The commits of a repository's history whose subjects count in its coverage (0: none).
HISTORY_EVIDENCE = 10
EVIDENCE_HITS = 10
MIN_COVERAGE = 0.01

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """One repository (a served root) to ask: its key (``name`` or
    ``name@branch``), folder and index folder (None: the default)."""

    key: str
    root: Path
    index_dir: Path | None = None


class Asked(Record):
    """One repository's search, for the merge: the outcome, the settings it
    ran with, and the question's terms its history's best commits hold."""

    outcome: SearchOutcome
    settings: Settings
    history: frozenset[str] = frozenset()


def history_terms(reader: IndexReader, query: ParsedQuery) -> frozenset[str]:
    """The question's terms held by the subjects of the :data:`HISTORY_EVIDENCE`
    commits of ``reader``'s history most like it: what a repository's past
    says of a question (a commit message is often asked of the repository
    whose history holds its like)."""
    if HISTORY_EVIDENCE <= 0 or reader.history_state() is None:
        return frozenset()
    found = reader.history_search(query.weighted(), HISTORY_EVIDENCE)
    commits = reader.history_commits([cid for cid, _ in found])
    wanted = frozenset(t.token for t in query.terms)
    return frozenset().union(*(terms_in(c.subject, wanted) for c in commits.values()))


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
    tasks = [_Task(key, call, done) for key, call in zip(keys, calls, strict=True)]
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
    answers = run_each([t.key for t in targets], [functools.partial(ask, t) for t in targets], timeout)
    return [
        Answered(t, v) if not why else Answered(t, error=why)
        for t, (v, why) in zip(targets, answers, strict=True)
    ]


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
    from repolens.store.handles import readers

    answered: dict[str, Answered[frozenset[str]]] = {}
    groups: dict[str, list[tuple[Target, Store]]] = {}
    for target in targets:
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
                answered[target.key] = Answered(target, error=_first_line(store.missing()))
    return [answered[t.key] for t in targets]


def _first_line(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0]


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


def _mass(query: ParsedQuery, held: Mapping[str, frozenset[str]]) -> dict[str, float]:
    """Each query term's weight: the query's, times an IDF over the
    repositories of ``held`` (key -> the terms it holds): a word every
    repository holds says nothing about which one the question is about; a
    name only one holds says much."""
    weights: dict[str, float] = {}
    for term in query.terms:
        weights[term.token] = max(weights.get(term.token, 0.0), term.weight)
    n = len(held)
    return {t: w * math.log(1 + n / (1 + sum(t in f for f in held.values()))) for t, w in weights.items()}


def choose(held: Mapping[str, frozenset[str]], query: ParsedQuery, keep: int) -> list[str]:
    """The ``keep`` repositories of ``held`` (key -> the question's terms its
    index holds anywhere) that hold most of the question's weight
    (:func:`_mass`), in ``held``'s order: those a search of many
    repositories searches in full."""
    mass = _mass(query, held)
    weight = {key: sum(mass[t] for t in terms if t in mass) for key, terms in held.items()}
    best = sorted(held, key=lambda key: -weight[key])[:keep]
    return [key for key in held if key in best]


def _term_mass(
    per_repo: Sequence[tuple[str, Sequence[Hit]]],
    query: ParsedQuery,
    history: Mapping[str, frozenset[str]] | None = None,
) -> tuple[dict[str, float], dict[tuple[str, str], frozenset[str]], dict[str, frozenset[str]]]:
    """:func:`_mass` over what each repository's first :data:`EVIDENCE_HITS`
    hits hold; the terms each (repository, file) of the hits holds, and each
    repository's first hits. Only ``query``'s terms count: a repository's
    ``history`` was found with its own reading of the question (``zorb*``
    completed from its index, the stopwords its settings keep), whose other
    terms the merge does not weigh."""
    tokens = frozenset(t.token for t in query.terms)
    found_in = TermsIn(tokens)
    files: dict[tuple[str, str], frozenset[str]] = {}
    held: dict[str, frozenset[str]] = {}
    for key, hits in per_repo:
        held[key] = (history or {}).get(key, frozenset()) & tokens
        for i, h in enumerate(hits):
            found = found_in(h.chunk.text)
            spot = (key, h.chunk.path)
            files[spot] = files.get(spot, frozenset()) | found
            if i < EVIDENCE_HITS:
                held[key] |= found
    return _mass(query, held), files, held


def coverage(
    per_repo: Sequence[tuple[str, Sequence[Hit]]],
    mass: Mapping[str, float],
    held: Mapping[str, frozenset[str]],
) -> dict[str, float]:
    """Per repository, the share of the question's term ``mass`` that its
    best evidence holds (``held``: see :func:`_term_mass`)."""
    total = sum(mass.values()) or 1.0
    return {key: sum(mass[t] for t in held.get(key, ())) / total if mass else 1.0 for key, _ in per_repo}


class Calibration(Record):
    """How much each piece of a repository's evidence (:func:`repository_evidence`)
    and the hit's file's coverage weigh in the order across repositories,
    beside the model's own score (:func:`cross_score`). :data:`CALIBRATION`
    was learned on 494 mined questions (every 20th of issue 37's set) asked
    among 38 repositories, by coordinate ascent with their repositories held
    out (``bench.org ranking --collect``, then ``--fit``): own repository
    first 0.816 -> 0.828 held out against the hand-set weights before it
    (coverage 8, file coverage 4, the rest 0), file Acc@5 across 0.727 ->
    0.731; never the development set's questions."""

    coverage: float  # log of the repository's coverage of the question
    file_coverage: float  # log of the hit's file's
    named: float  # the question names the repository
    paths: float  # the share of the files the question mentions that the repository's hits are
    defines: float  # one of its first hits defines a name the question names
    margin: float  # its best hit's cross score less the best of all repositories' (<= 0)


CALIBRATION = Calibration(coverage=4.0, file_coverage=4.0, named=2.0, paths=2.0, defines=0.5, margin=0.0)
EVIDENCE = ("coverage", "named", "paths", "defines", "margin")


def repository_name(key: str) -> str:
    """The repository a key names, normalised: ``app@main`` -> ``app``, a
    checkout's ``owner__name@commit`` -> ``name``."""
    return normalize_symbol(key.partition("@")[0].rpartition("__")[2])


def repository_evidence(
    per_repo: Sequence[tuple[str, Sequence[Hit]]], query: ParsedQuery, share: Mapping[str, float]
) -> dict[str, dict[str, float]]:
    """Per repository, what says the question is about it (:data:`EVIDENCE`):
    its coverage (``share``, as a log), whether the question names it, the
    share of the question's mentioned files among its hits' files, whether one
    of its first :data:`EVIDENCE_HITS` hits defines a name the question names,
    and its best hit's :func:`cross_score` against the best of all."""
    tokens = {t.token for t in query.terms} | {normalize_symbol(w) for w in query.text.lower().split()}
    mentioned = {p.rsplit("/", 1)[-1].lower() for p in query.paths}
    best = {key: max((cross_score(h) for h in hits), default=-math.inf) for key, hits in per_repo}
    top = max(best.values(), default=0.0)
    out = {}
    for key, hits in per_repo:
        names = {h.chunk.path.rsplit("/", 1)[-1].lower() for h in hits}
        out[key] = {
            "coverage": math.log(max(share[key], MIN_COVERAGE)),
            "named": float(len(repository_name(key)) >= 3 and repository_name(key) in tokens),
            "paths": len(mentioned & names) / len(mentioned) if mentioned else 0.0,
            "defines": float(any("defines" in h.factors for h in hits[:EVIDENCE_HITS])),
            "margin": best[key] - top if hits else 0.0,
        }
    return out


def merge_hits(
    per_repo: Sequence[tuple[str, Sequence[Hit]]],
    limit: int,
    query: ParsedQuery,
    history: Mapping[str, frozenset[str]] | None = None,
    calibration: Calibration | None = None,
) -> list[Hit]:
    """The hits of every repository (key, hits in its own order), ranked
    together by :func:`cross_score` plus the repository's evidence
    (:func:`repository_evidence`) and the log of the hit's file's coverage,
    each weighed by ``calibration``, and relabelled ``key:path``; each score
    shown becomes ``exp`` of the margin to the best (1 for the best)."""
    calibration = calibration or CALIBRATION  # read at the call: a bench may set another
    mass, files, held = _term_mass(per_repo, query, history)
    share = coverage(per_repo, mass, held)
    evidence = repository_evidence(per_repo, query, share)
    prior = {
        key: sum(getattr(calibration, name) * ev[name] for name in EVIDENCE) for key, ev in evidence.items()
    }
    total = sum(mass.values()) or 1.0

    def file_share(key: str, path: str) -> float:
        return sum(mass[t] for t in files[(key, path)]) / total if mass else 1.0

    scored = [
        (
            cross_score(h)
            + prior[key]
            + calibration.file_coverage * math.log(max(file_share(key, h.chunk.path), MIN_COVERAGE)),
            key,
            h,
        )
        for key, hits in per_repo
        for h in hits
    ]
    scored.sort(key=lambda item: (-item[0], item[1], item[2].chunk.path, item[2].chunk.start_line))
    best = scored[0][0] if scored else 0.0
    out = []
    for cross, key, hit in scored[:limit]:
        chunk = replace(hit.chunk, path=label(key, hit.chunk.path))
        factors = {**hit.factors, "across": cross}
        out.append(replace(hit, chunk=chunk, score=math.exp(cross - best), factors=factors))
    return out


# -- the two halves of a search of several repositories ----------------------------------


def ask_across(
    query: str,
    targets: Sequence[Target],
    filters: Filters,
    overrides: Mapping[str, Any],
    *,
    explain: bool = False,
    timeout: float = ASK_TIMEOUT_S,
) -> tuple[list[Answered[Asked]], list[str]]:
    """The first half of a search of several repositories: every repository searched as
    alone (its settings with ``overrides``), its cited files checked; of
    more than ``FULL_SEARCHES``, those whose index holds most of the
    question (:func:`choose`), with a note saying so. A repository that has
    not answered ``timeout`` seconds after its search started is named in a
    note (see :func:`run_each`)."""
    from repolens.search.freshness import freshen_outcome
    from repolens.search.query import parse_query
    from repolens.search.ranking import search
    from repolens.settings import load_settings
    from repolens.store import open_store
    from repolens.store.handles import readers

    def reader_of(target: Target) -> tuple[IndexReader, Settings]:
        store = open_store(target.root, target.index_dir)
        settings = load_settings(store.root, dict(overrides))
        return readers.get(store), settings  # (IndexMissingError, with its fix, when it has none)

    def ask(target: Target) -> Asked:
        reader, settings = reader_of(target)
        outcome = search(reader, target.root, query, settings, filters, explain=explain)
        freshen_outcome(target.root, reader, outcome, settings)
        return Asked(outcome, settings, history_terms(reader, outcome.query))

    if len(targets) <= FULL_SEARCHES:
        return ask_each(targets, ask, timeout), []
    parsed = parse_query(query)
    tokens = list(dict.fromkeys(t.token for t in parsed.terms))
    probes = held_each(targets, tokens, timeout)
    held = {a.target.key: a.value for a in probes if a.value is not None}
    chosen = set(choose(held, parsed, FULL_SEARCHES))
    failed: list[Answered[Asked]] = [Answered(a.target, error=a.error) for a in probes if a.error]
    note = (
        f"{len(targets)} repositories asked: the {len(chosen)} whose indexes hold most of the question's "
        "words were searched in full"
    )
    return failed + ask_each([t for t in targets if t.key in chosen], ask, timeout), [note]


def merge_answers(
    query: str, answers: Sequence[Answered[Asked]], filters: Filters, notes: Sequence[str] = ()
) -> tuple[SearchOutcome, Settings]:
    """The second half of a search of several repositories: the answers
    (of :func:`ask_across`) merged into one outcome (:func:`merge_hits`),
    ``notes`` first, and the settings its reply is rendered with: the first
    repository's (its budget and top_k). ``NotFoundError`` when no
    repository answered."""
    from repolens.search.query import parse_query

    answered = [(a.target.key, a.value) for a in answers if a.value is not None]
    if not answered:
        raise NotFoundError(
            "no repository could answer: " + "; ".join(failed_notes(answers)),
            fix="index them (repolens index, or refresh --all) and ask again",
        )
    settings = answered[0][1].settings  # the reply's budget and top_k: as the first repository's settings say
    notes = [
        *notes,
        *failed_notes(answers),
        *grouped_notes([(key, asked.outcome.notes) for key, asked in answered]),
    ]
    limit = max(settings.top_k * 4, 20)
    parsed = parse_query(query, weighted=settings.query_weights)
    history = {key: asked.history for key, asked in answered}
    hits = merge_hits([(key, asked.outcome.hits) for key, asked in answered], limit, parsed, history)
    return SearchOutcome(parsed, hits, notes, filters), settings
