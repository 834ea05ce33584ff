"""One question asked of several repositories, and ranked across them.

Each repository is searched as it would be alone (its own index, settings
and legs), all at once and bounded in time (:mod:`.fanout`: a repository
that fails or does not answer becomes one line naming it, and the others
answer).

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

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from repolens.record import Record
from repolens.search.fanout import (
    ASK_TIMEOUT_S,
    Answered,
    Target,
    ask_each,
    failed_notes,
    grouped_notes,
    held_each,
    label,
    none_answered,
)
from repolens.search.hits import Hit, SearchOutcome
from repolens.search.query import ParsedQuery
from repolens.store.base import normalize_symbol
from repolens.tokens import TermsIn, terms_in

if TYPE_CHECKING:
    from repolens.search.filters import Filters
    from repolens.settings import Settings
    from repolens.store.base import IndexReader

log = logging.getLogger("repolens")

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
    from repolens.errors import IndexMissingError
    from repolens.search.freshness import freshen_outcome
    from repolens.search.query import parse_query
    from repolens.search.ranking import search
    from repolens.settings import load_settings
    from repolens.store import open_store
    from repolens.store.handles import readers, unpublished

    def reader_of(target: Target) -> tuple[IndexReader, Settings]:
        store = open_store(target.root, target.index_dir)
        settings = load_settings(store.root, dict(overrides))
        try:
            return readers.get(store), settings
        except IndexMissingError:  # with its fix; or: its first build is under way
            raise unpublished(store) from None

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
        raise none_answered(answers)
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
