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
    # Every term's postings at once; np.bincount adds them up in this
    # order (the terms' order, from 0.0), as adding term by term would, to
    # the same bits.
    given = [(lists[term], weight) for term, weight in weights.items() if term in lists]
    if not given:
        return []
    term_ids = np.concatenate([term_ids for (term_ids, _), _ in given])
    tf = np.concatenate([term_tfs for (_, term_tfs), _ in given]).astype(np.float64)
    factor = np.repeat(
        [weight * _idf(n, len(term_ids)) for (term_ids, _), weight in given],
        [len(term_ids) for (term_ids, _), _ in given],
    )
    at = np.searchsorted(ids, term_ids)
    scores = np.bincount(at, weights=factor * tf * (K1 + 1.0) / (tf + length_norm[at]), minlength=n)
    found = np.flatnonzero(scores > 0)
    if 0 < k < len(found):  # only what can be among the top k is sorted
        floor = np.partition(scores[found], len(found) - k)[len(found) - k]
        found = found[scores[found] >= floor]
    top = found[np.lexsort((-ids[found], -scores[found]))][:k]
    return [(int(ids[i]), float(scores[i])) for i in top]


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))
