"""BM25 over stored commits, as :class:`repolens.store.base.HistoryState` writes it down.

Every store fetches the posting lists of a question's terms its own way
(packed rows in SQLite, ``int8[]`` lists on PostgreSQL) and hands them here,
so two backends score the history with the same arithmetic in the same order
and rank it alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

K1, B = 1.2, 0.75


def query_weights(terms: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Each token once, at its largest weight, in the order first given."""
    weights: dict[str, float] = {}
    for term, weight in terms:
        weights[term] = max(weight, weights.get(term, 0.0))
    return weights


def top_commits(
    ids: np.ndarray,
    lengths: np.ndarray,
    lists: Mapping[str, tuple[np.ndarray, np.ndarray]],
    weights: Mapping[str, float],
    k: int,
) -> list[tuple[int, float]]:
    """Top ``k`` (commit id, score > 0), best first, newer (higher id) first among equals.

    ``ids`` are the stored commits' ids (ascending) and ``lengths`` their
    document lengths; ``lists`` holds, per term, the ids of the stored
    commits containing it (ascending, each one of ``ids``) and its count in each.
    """
    import numpy as np  # only when the history is asked

    n = len(ids)
    if not n or not lists:
        return []
    length_norm = K1 * (1.0 - B + B * lengths / max(float(lengths.mean()), 1.0))
    scores = np.zeros(n)
    for term, weight in weights.items():
        if term not in lists:
            continue
        term_ids, term_tfs = lists[term]
        at = np.searchsorted(ids, term_ids)
        tf = term_tfs.astype(np.float64)
        idf = math.log(1.0 + (n - len(at) + 0.5) / (len(at) + 0.5))
        scores[at] += weight * idf * tf * (K1 + 1.0) / (tf + length_norm[at])
    found = np.flatnonzero(scores > 0)
    top = found[np.lexsort((-ids[found], -scores[found]))][:k]
    return [(int(ids[i]), float(scores[i])) for i in top]
