"""What a learned ranking reads of each candidate: numbers from what the legs already returned.

:func:`candidate_features` turns one search's candidates into rows of
:data:`FEATURES`, in that order, computed only from what
:func:`repolens.search.ranking.search_index` has in hand when it asks
(every leg's score and rank, the tuned fusion's score, the chunks' text and
paths, the parsed question): no second search, no store call, so two stores
that answer the legs alike give the same rows.

Three kinds of numbers, side by side in every row:

* the **question's** (its kind: one bare identifier, one line, several
  lines, a pasted traceback; how many terms, names and paths it holds): the
  same for every candidate of a search, they let a model weigh the legs
  differently for an identifier than for a pasted issue;
* the **chunk's** (each leg's score, relative to the leg's best, and rank;
  its kind, size, role, the share of the question's terms its text holds);
* its **file's** (how many candidates it has, their best and summed
  scores, the share of the question's terms all of them hold, the file's
  rank by the tuned fusion): a file is the unit an answer is judged by.

Scores are divided by their leg's best (scales differ between questions
and repositories) and ranks are ``log1p(rank)`` (0 for a candidate the leg
did not return), so the rows mean the same across repositories; ranks are
competition ranks (equal scores share one), so a row never depends on the
order in which a store lists equal documents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeVar

from repolens.chunking import Chunk
from repolens.roles import PRIMARY_DEFINITION_KINDS, SECONDARY_DEFINITION_KINDS, path_role
from repolens.search.query import ParsedQuery
from repolens.store.base import normalize_symbol

K = TypeVar("K")
_ROLES = ("source", "test", "doc", "example", "config", "generated", "vendored")
_LEGS = ("lexical", "symbol", "dense", "path", "history")

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
    # its file
    "file_candidates",
    "file_lexical_best",
    "file_lexical_sum",
    "file_tuned_best",
    "file_rank",
    "file_terms",
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
) -> dict[int, list[float]]:
    """A row of :data:`FEATURES` for each cid of ``tuned`` (the tuned
    fusion's scores, after priors and file evidence; ``chunks`` holds every
    one of them). ``legs`` are the per-leg (rank, score) of
    :func:`repolens.search.ranking.search_index`; ``priors`` each cid's role
    weight (1 when priors are off)."""
    base = question_row(query)
    weight = sum(t.weight for t in query.terms) or 1.0
    tokens = [(t.token, t.weight) for t in query.terms]
    wanted_names = {normalize_symbol(i.replace("::", ".").rsplit(".", 1)[-1]) for i in query.identifiers}
    best = {name: max((s for _, s in leg.values()), default=0.0) for name, leg in legs.items()}
    leg_rank = {name: _ranks({cid: s for cid, (_, s) in leg.items()}) for name, leg in legs.items()}
    top = max(tuned.values(), default=0.0)
    order = sorted(tuned, key=lambda cid: -tuned[cid])
    tuned_rank = _ranks(tuned)

    # Per file: its candidates, and which of the question's terms any of them holds.
    lowered = {cid: chunks[cid].text.lower() for cid in tuned}
    held = {cid: {tok for tok, _ in tokens if tok in lowered[cid]} for cid in tuned}
    files: dict[str, list[int]] = {}
    for cid in order:
        files.setdefault(chunks[cid].path, []).append(cid)
    file_rank = _ranks({path: tuned[cids[0]] for path, cids in files.items()})
    lexical = legs.get("lexical", {})
    lex_best = best.get("lexical") or 1.0
    per_file: dict[str, tuple[float, ...]] = {}
    for path, cids in files.items():
        lex = [lexical[c][1] / lex_best for c in cids if c in lexical]
        covered = set().union(*(held[c] for c in cids))
        per_file[path] = (
            math.log1p(len(cids)),
            max(lex, default=0.0),
            math.fsum(lex),  # exactly rounded: the same whatever order the candidates came in
            tuned[cids[0]] / top if top > 0 else 0.0,
            math.log1p(file_rank[path]),
            sum(w for tok, w in tokens if tok in covered) / weight,
        )

    rows: dict[int, list[float]] = {}
    for cid in tuned:
        chunk = chunks[cid]
        row = dict(base)
        for name in _LEGS:
            leg = legs.get(name, {})
            found = cid in leg
            row[f"{name}_score"] = leg[cid][1] / best[name] if found and best.get(name) else 0.0
            row[f"{name}_rank"] = math.log1p(leg_rank[name][cid]) if found else 0.0
        row["tuned_score"] = tuned[cid] / top if top > 0 else 0.0
        row["tuned_rank"] = math.log1p(tuned_rank[cid])
        row["prior"] = priors.get(cid, 1.0)
        role = path_role(chunk.path)
        for name in _ROLES:
            row[f"role_{name}"] = float(role == name)
        kinds = set(chunk.kinds) | {chunk.kind}
        row["kind_primary"] = float(bool(kinds & PRIMARY_DEFINITION_KINDS))
        row["kind_secondary"] = float(bool(kinds & SECONDARY_DEFINITION_KINDS))
        row["kind_block"] = float(chunk.kind == "block")
        row["kind_section"] = float(chunk.kind == "section")
        row["kind_window"] = float(chunk.kind == "window")
        row["lines"] = math.log1p(chunk.end_line - chunk.start_line + 1)
        row["depth"] = float(chunk.path.count("/"))
        row["names_identifier"] = float(bool(chunk.name) and normalize_symbol(chunk.name) in wanted_names)
        path = chunk.path.lower()
        row["path_terms"] = sum(w for tok, w in tokens if tok in path) / weight
        row["chunk_terms"] = sum(w for tok, w in tokens if tok in held[cid]) / weight
        for name, value in zip(FEATURES[-6:], per_file[chunk.path], strict=True):
            row[name] = value
        rows[cid] = [row[name] for name in FEATURES]
    return rows


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
