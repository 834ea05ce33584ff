"""The learned ranking's features computed the straightforward way: the reference
that :func:`repolens.search.features.candidate_features` must equal.

Each candidate's row is built one feature at a time, and which of the
question's terms a chunk holds is tested term by term (``term in
text.lower()``), as the engine did before it computed them as columns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from repolens.chunking import Chunk
from repolens.roles import PRIMARY_DEFINITION_KINDS, SECONDARY_DEFINITION_KINDS, path_role
from repolens.search.features import _FILE_FEATURES, _LEGS, _ROLES, FEATURES, _ranks, question_row
from repolens.search.pinpoint import _DEFINES, question_marks
from repolens.search.query import ParsedQuery
from repolens.search.related import related_weights
from repolens.store.base import normalize_symbol

if TYPE_CHECKING:
    from repolens.search.history_leg import HistoryVotes


def reference_features(
    query: ParsedQuery,
    chunks: Mapping[int, Chunk],
    legs: Mapping[str, Mapping[int, tuple[int, float]]],
    tuned: Mapping[int, float],
    priors: Mapping[int, float],
    votes: HistoryVotes | None = None,
) -> dict[int, list[float]]:
    """Each candidate's row, one candidate and one feature at a time, as the
    engine computed them before they were columns (issue 36), with the
    features of which function a question is about and of the words related
    to it (issue 37), the straightforward way."""
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

    rows: dict[int, dict[str, float]] = {}
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
        for name, value in zip(_FILE_FEATURES, per_file[chunk.path], strict=True):
            row[name] = value
        rows[cid] = row
    _add_pinpoint(query, chunks, rows, lowered, held, votes)
    _add_related(query, chunks, rows, lowered)
    return {cid: [row[name] for name in FEATURES] for cid, row in rows.items()}


def _share(weights: Mapping[str, float], found: set[str] | frozenset[str]) -> float:
    total = math.fsum(weights.values())
    return math.fsum(w for t, w in weights.items() if t in found) / total if total else 0.0


def _tail(path: str) -> tuple[str, ...]:
    return tuple(path.lower().split("/")[-2:])


def _stopped_in(chunk: Chunk, frames) -> bool:
    """A frame names the chunk's file and a line inside it."""
    tail = _tail(chunk.path)
    return any(
        (f.tail == tail[-1:] if len(f.tail) == 1 else f.tail == tail)
        and chunk.start_line <= f.line <= chunk.end_line
        for f in frames
    )


def _add_pinpoint(query, chunks, rows, lowered, held, votes) -> None:
    """repolens.search.pinpoint's columns, one candidate at a time, every
    word tested against every text."""
    weights = {t.token: t.weight for t in query.terms}
    code = {t.token: t.weight for t in query.terms if t.code}
    subject = {t: w for t, w in weights.items() if t in query.subject}
    marks = question_marks(query.text)
    norm = dict(marks.spelled)
    inner = [f for f in marks.frames if f.innermost]
    inner_names = {f.function for f in inner if f.function}
    terms = {cid: _share(weights, held[cid]) for cid in rows}
    for cid, row in rows.items():
        chunk = chunks[cid]
        for name, text in (("name_terms", chunk.qualname or chunk.name), ("sig_terms", chunk.signature),
                           ("doc_terms", chunk.doc)):  # fmt: skip
            row[name] = _share(weights, {t for t in weights if t in text.lower()})
        row["subject_terms"] = _share(subject, held[cid])
        row["code_terms"] = _share(code, held[cid])
        names = {normalize_symbol(x) for x in (chunk.name, chunk.qualname.rsplit(".", 1)[-1]) if x}
        names = {x for x in names if x in norm.values()}
        names |= {n for raw, n in marks.spelled for kw in _DEFINES if kw + raw in lowered[cid]}
        calls = {n for raw, n in marks.spelled if n in marks.called and raw + "(" in lowered[cid]}
        row["calls_called"] = len(calls) / len(marks.called) if marks.called else 0.0
        row["defines_called"] = float(bool(names & marks.called))
        row["frame_function"] = float(bool(names & marks.frame_functions))
        row["frame_line"] = float(_stopped_in(chunk, marks.frames))
        row["frame_innermost"] = float(bool(names & inner_names) or _stopped_in(chunk, inner))
        vote = votes.files.get(chunk.path) if votes is not None else None
        row["history_names"] = 0.0
        if vote is not None and len(chunk.name) >= 4:
            wanted = normalize_symbol(chunk.name)
            row["history_names"] = max(
                (c.weight for c in vote.commits
                 if wanted in {normalize_symbol(w) for w in re.findall(r"[\w.]+", c.commit.subject)}),
                default=0.0,
            )  # fmt: skip
        same = [c for c in rows if chunks[c].path == chunk.path]
        lex_best = max(rows[c]["lexical_score"] for c in same)
        row["file_lexical_share"] = row["lexical_score"] / lex_best if lex_best > 0 else 0.0
        above = sum(1 for c in same if rows[c]["tuned_score"] > row["tuned_score"])
        row["file_place"] = math.log1p(above + 1)
        row["file_terms_gap"] = max(terms[c] for c in same) - terms[cid]


def _add_related(query, chunks, rows, lowered) -> None:
    """repolens.search.related's columns, one candidate at a time."""
    related = related_weights([(t.token, t.weight) for t in query.terms])
    total = math.fsum(related.values())
    for cid, row in rows.items():
        if not total:
            row["related_terms"] = row["file_related_terms"] = 0.0
            continue
        row["related_terms"] = math.fsum(w for word, w in related.items() if word in lowered[cid]) / total
        same = [c for c in rows if chunks[c].path == chunks[cid].path]
        found = {word for c in same for word in related if word in lowered[c]}
        row["file_related_terms"] = math.fsum(related[w] for w in found) / total
