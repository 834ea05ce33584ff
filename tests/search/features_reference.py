"""The learned ranking's features computed the straightforward way: the reference
that :func:`repolens.search.features.candidate_features` must equal.

Each candidate's row is built one feature at a time, and which of the
question's terms a chunk holds is tested term by term (``term in
text.lower()``), as the engine did before it computed them as columns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from repolens.chunking import Chunk
from repolens.roles import PRIMARY_DEFINITION_KINDS, SECONDARY_DEFINITION_KINDS, path_role
from repolens.search.features import _LEGS, _ROLES, FEATURES, _ranks, question_row
from repolens.search.query import ParsedQuery
from repolens.store.base import normalize_symbol


def reference_features(
    query: ParsedQuery,
    chunks: Mapping[int, Chunk],
    legs: Mapping[str, Mapping[int, tuple[int, float]]],
    tuned: Mapping[int, float],
    priors: Mapping[int, float],
) -> dict[int, list[float]]:
    """Each candidate's row, one candidate and one feature at a time, as the
    engine computed them before they were columns (issue 36)."""
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
