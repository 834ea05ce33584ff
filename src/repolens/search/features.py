"""What a learned ranking reads of each candidate: numbers from what the legs already returned.

:func:`candidate_features` turns one search's candidates into rows of
:data:`FEATURES`, in that order, computed only from what
:func:`repolens.search.ranking.search_index` has in hand when it asks
(every leg's score and rank, the tuned fusion's score, the chunks' text and
paths, the parsed question, the history leg's votes): no second search, no
store call, so two stores that answer the legs alike give the same rows.

Three kinds of numbers, side by side in every row:

* the **question's** (its kind: one bare identifier, one line, several
  lines, a pasted traceback; how many terms, names and paths it holds): the
  same for every candidate of a search, they let a model weigh the legs
  differently for an identifier than for a pasted issue;
* the **chunk's** (each leg's score, relative to the leg's best, and rank;
  its kind, size, role, the share of the question's terms its text holds);
* its **file's** (how many candidates it has, their best and summed
  scores, the share of the question's terms all of them hold, the file's
  rank by the tuned fusion): a file is the unit an answer is judged by;
* **which function of its file** the question is about
  (:mod:`repolens.search.pinpoint`: the question's terms in the chunk's
  name, signature and doc comment, the names the question calls defined or
  called there, a traceback's frames, the history's commits naming it, the
  chunk against its file's other candidates): the lines to change;
* the **words related** to the question's that the chunk and its file hold
  (:mod:`repolens.search.related`, distilled from the bundled model): what
  it means, where its words differ.

Scores are divided by their leg's best (scales differ between questions
and repositories) and ranks are ``log1p(rank)`` (0 for a candidate the leg
did not return), so the rows mean the same across repositories; ranks are
competition ranks (equal scores share one), so a row never depends on the
order in which a store lists equal documents.

They are computed as columns (:func:`feature_columns`), one feature at a
time for every candidate: a feature is one named column there, and what is
the same for many candidates (the question, a path, a file) is computed
once. ``tests/search/features_reference.py`` computes the same rows one
candidate at a time, the reference these must equal to the bit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from repolens.chunking import Chunk
from repolens.roles import PRIMARY_DEFINITION_KINDS, SECONDARY_DEFINITION_KINDS, path_role
from repolens.search.pinpoint import PINPOINT_FEATURES, pinpoint_columns, text_patterns
from repolens.search.query import ParsedQuery
from repolens.search.related import RELATED_FEATURES, related_columns, related_weights
from repolens.store.base import normalize_symbol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    from repolens.search.history_leg import HistoryVotes

    K = TypeVar("K")
_ROLES = ("source", "test", "doc", "example", "config", "generated", "vendored")
_LEGS = ("lexical", "symbol", "dense", "path", "history")

# A candidate's file: computed once per file (see :func:`feature_columns`).
_FILE_FEATURES = (
    "file_candidates",
    "file_lexical_best",
    "file_lexical_sum",
    "file_tuned_best",
    "file_rank",
    "file_terms",
)

FEATURES: tuple[str, ...] = (
    # the question
    "q_bare",
    "q_one_line",
    "q_lines",
    "q_terms",
    "q_identifiers",
    "q_paths",
    "q_code_share",
    # each leg: the chunk's score over the leg's best, and log1p(rank) (0: not returned)
    *(f"{leg}_{part}" for leg in _LEGS for part in ("score", "rank")),
    "tuned_score",
    "tuned_rank",
    "prior",
    # the chunk
    *(f"role_{role}" for role in _ROLES),
    "kind_primary",
    "kind_secondary",
    "kind_block",
    "kind_section",
    "kind_window",
    "lines",
    "depth",
    "names_identifier",
    "path_terms",
    "chunk_terms",
    *_FILE_FEATURES,
    # which function of its file the question is about (repolens.search.pinpoint)
    *PINPOINT_FEATURES,
    # the words the bundled model relates to the question's (repolens.search.related)
    *RELATED_FEATURES,
)
_INDEX = {name: i for i, name in enumerate(FEATURES)}


def question_row(query: ParsedQuery) -> dict[str, float]:
    """The question's features (the same in every row of a search)."""
    text = query.text.strip()
    lines = [line for line in text.splitlines() if line.strip()]
    words = text.split()
    terms = query.terms
    weight = sum(t.weight for t in terms) or 1.0
    return {
        "q_bare": float(len(words) == 1 and bool(query.identifiers)),
        "q_one_line": float(len(lines) <= 1),
        "q_lines": math.log1p(len(lines)),
        "q_terms": math.log1p(len(terms)),
        "q_identifiers": math.log1p(len(query.identifiers)),
        "q_paths": math.log1p(len(query.paths)),
        "q_code_share": sum(t.weight for t in terms if t.code) / weight,
    }


def candidate_features(
    query: ParsedQuery,
    chunks: Mapping[int, Chunk],
    legs: Mapping[str, Mapping[int, tuple[int, float]]],
    tuned: Mapping[int, float],
    priors: Mapping[int, float],
    votes: HistoryVotes | None = None,
) -> dict[int, tuple[float, ...]]:
    """A row of :data:`FEATURES` for each cid of ``tuned`` (the tuned
    fusion's scores, after priors and file evidence; ``chunks`` holds every
    one of them). ``legs`` are the per-leg (rank, score) of
    :func:`repolens.search.ranking.search_index`; ``priors`` each cid's role
    weight (1 when priors are off). The rows are :func:`feature_columns`
    read across."""
    cids = list(tuned)
    columns = feature_columns(query, [chunks[cid] for cid in cids], legs, tuned, priors, votes)
    return dict(zip(cids, zip(*(columns[name] for name in FEATURES), strict=True), strict=True))


def feature_columns(
    query: ParsedQuery,
    chunks: Sequence[Chunk],
    legs: Mapping[str, Mapping[int, tuple[int, float]]],
    tuned: Mapping[int, float],
    priors: Mapping[int, float],
    votes: HistoryVotes | None = None,
) -> dict[str, list[float]]:
    """Each feature of :data:`FEATURES` as a column: its value for every
    candidate, in the order of ``tuned`` (``chunks`` are theirs, in that
    order). One feature is one column computed here, for all candidates at
    once: what is the same for many of them (the question, a file, a path, a
    role) is computed once."""
    cids = list(tuned)
    n = len(cids)
    columns: dict[str, list[float]] = {name: [value] * n for name, value in question_row(query).items()}
    for name in _LEGS:
        columns[f"{name}_score"], columns[f"{name}_rank"] = _leg_columns(legs.get(name, {}), cids)
    top = max(tuned.values(), default=0.0)
    columns["tuned_score"] = [tuned[cid] / top for cid in cids] if top > 0 else [0.0] * n
    tuned_rank = _ranks(tuned)
    columns["tuned_rank"] = [math.log1p(tuned_rank[cid]) for cid in cids]
    columns["prior"] = [priors.get(cid, 1.0) for cid in cids]

    paths = [chunk.path for chunk in chunks]
    roles = [path_role(path) for path in paths]
    for role in _ROLES:
        columns[f"role_{role}"] = [float(r == role) for r in roles]
    kinds = [{*chunk.kinds, chunk.kind} for chunk in chunks]
    columns["kind_primary"] = [float(not PRIMARY_DEFINITION_KINDS.isdisjoint(k)) for k in kinds]
    columns["kind_secondary"] = [float(not SECONDARY_DEFINITION_KINDS.isdisjoint(k)) for k in kinds]
    for kind in ("block", "section", "window"):
        columns[f"kind_{kind}"] = [float(chunk.kind == kind) for chunk in chunks]
    columns["lines"] = [math.log1p(chunk.end_line - chunk.start_line + 1) for chunk in chunks]
    columns["depth"] = [float(path.count("/")) for path in paths]
    wanted_names = {normalize_symbol(i.replace("::", ".").rsplit(".", 1)[-1]) for i in query.identifiers}
    columns["names_identifier"] = [
        float(bool(chunk.name) and normalize_symbol(chunk.name) in wanted_names) for chunk in chunks
    ]

    weight = sum(t.weight for t in query.terms) or 1.0
    tokens = [(t.token, t.weight) for t in query.terms]
    share = _TermShare(tokens, weight)
    columns["path_terms"] = [share.of_path(path) for path in paths]
    # One pass over each chunk's text finds the question's terms, the words related
    # to them (repolens.search.related) and its names as defined or called (pinpoint).
    related = related_weights(tokens)
    extra = [*text_patterns(query), *related]
    found = held_terms([chunk.text for chunk in chunks], [tok for tok, _ in tokens] + extra)
    own = frozenset(tok for tok, _ in tokens)
    held = [f & own for f in found] if extra else found
    columns["chunk_terms"] = [share.of(terms) for terms in held]

    # Per file: its candidates, best first, and which of the question's terms any of them holds.
    at = {cid: i for i, cid in enumerate(cids)}
    files: dict[str, list[int]] = {}
    for cid in sorted(cids, key=lambda cid: -tuned[cid]):
        files.setdefault(paths[at[cid]], []).append(cid)
    file_rank = _ranks({path: tuned[of[0]] for path, of in files.items()})
    lexical = legs.get("lexical", {})
    lex_best = max((s for _, s in lexical.values()), default=0.0) or 1.0
    per_file: dict[str, tuple[float, ...]] = {}
    for path, of in files.items():
        lex = [lexical[c][1] / lex_best for c in of if c in lexical]
        per_file[path] = (
            math.log1p(len(of)),
            max(lex, default=0.0),
            math.fsum(lex),  # exactly rounded: the same whatever order the candidates came in
            tuned[of[0]] / top if top > 0 else 0.0,
            math.log1p(file_rank[path]),
            share.of(set().union(*(held[at[c]] for c in of))),
        )
    for i, name in enumerate(_FILE_FEATURES):
        columns[name] = [per_file[path][i] for path in paths]
    columns |= pinpoint_columns(
        query, chunks, columns["lexical_score"], columns["tuned_score"], held, votes, held_terms, found
    )
    columns |= related_columns(related, [chunk.text for chunk in chunks], paths, held_terms, found)
    return columns


def _leg_columns(
    leg: Mapping[int, tuple[int, float]], cids: Sequence[int]
) -> tuple[list[float], list[float]]:
    """A leg's two columns: each candidate's score over the leg's best, and
    ``log1p`` of its competition rank in the leg (both 0 where the leg did
    not return it; the score 0 too when the best is 0)."""
    scores = {cid: s for cid, (_, s) in leg.items()}
    best = max(scores.values(), default=0.0)
    ranks = _ranks(scores)
    score = [scores[cid] / best if cid in scores else 0.0 for cid in cids] if best else [0.0] * len(cids)
    return score, [math.log1p(ranks[cid]) if cid in ranks else 0.0 for cid in cids]


class _TermShare:
    """The share of the question's term weight that a set of terms, or a
    path, holds: summed in the question's order (the same bits for the same
    terms), each distinct path and set of terms once."""

    def __init__(self, tokens: Sequence[tuple[str, float]], weight: float) -> None:
        self.tokens, self.weight = tokens, weight
        self._paths: dict[str, float] = {}
        self._sets: dict[frozenset[str], float] = {}

    def of(self, terms: set[str] | frozenset[str]) -> float:
        key = frozenset(terms)
        share = self._sets.get(key)
        if share is None:
            share = self._sets[key] = sum(w for tok, w in self.tokens if tok in key) / self.weight
        return share

    def of_path(self, path: str) -> float:
        share = self._paths.get(path)
        if share is None:
            lowered = path.lower()
            share = self._paths[path] = sum(w for tok, w in self.tokens if tok in lowered) / self.weight
        return share


def held_terms(texts: Sequence[str], terms: Sequence[str]) -> list[frozenset[str]]:
    """For each of ``texts``, which of ``terms`` occur in it, ignoring case
    (``term in text.lower()``: anywhere, inside a longer word too). Testing
    each term against each text scans a text once per term it lacks, ~3 ms
    for 100 chunks and 25 terms; an Aho-Corasick automaton of the ASCII
    terms finds them all in one pass over each text's lowercase form
    (~0.9 ms), whatever characters the text holds. Only a term with other
    characters is tested alone (few are). The automaton is a DFA: it costs
    more to build (~0.3 ms for 120 terms) than the NFA the library picks
    for so few patterns, but a pasted issue's 110 candidates (~230 KB, ~8,000
    matches) are searched in half the time (1.8 -> 1.0 ms with its build)."""
    wanted = list(dict.fromkeys(terms))
    ascii_terms = [t for t in wanted if t.isascii()]
    others = [t for t in wanted if not t.isascii()]
    if not ascii_terms:
        return [frozenset(t for t in others if t in text.lower()) for text in texts]
    # a compiled extension: only when a search ranks by features
    from ahocorasick_rs import AhoCorasick, Implementation

    find = AhoCorasick(ascii_terms, implementation=Implementation.DFA).find_matches_as_strings
    if not others:
        return [frozenset(find(text.lower(), overlapping=True)) for text in texts]
    held: list[frozenset[str]] = []
    for text in texts:
        lowered = text.lower()
        found = set(find(lowered, overlapping=True))
        found.update(t for t in others if t in lowered)
        held.append(frozenset(found))
    return held


def _ranks(scores: Mapping[K, float]) -> dict[K, int]:
    """Competition ranks, from 1 (equal scores share a rank: 1, 2, 2, 4), so
    a rank never depends on the order equal scores were found in (an index
    refreshed many times lists documents in another order than a fresh build
    of the same files, and ranks as it does)."""
    ordered = sorted(scores.values(), reverse=True)
    first: dict[float, int] = {}
    for i, value in enumerate(ordered, 1):
        first.setdefault(value, i)
    return {key: first[value] for key, value in scores.items()}


def feature_index(name: str) -> int:
    """The position of feature ``name`` in a row."""
    return _INDEX[name]
