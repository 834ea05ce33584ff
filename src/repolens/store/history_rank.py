"""BM25 over stored commits, as :class:`repolens.store.base.HistoryState` writes it down.

Every store fetches the posting lists of a question's terms its own way
(packed rows in SQLite, ``int8[]`` lists on PostgreSQL) and hands them here,
so two backends score the history with the same arithmetic in the same order
and rank it alike.

The scoring has two forms that give the same bits: with numpy, when the
process has loaded it (a server does, when it starts: ~0.3 ms a question on
5,000 commits), and in plain Python otherwise (~2-3 ms), for a process that
asks one question: loading numpy would cost it 60-120 ms.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

K1, B = 1.2, 0.75


def query_weights(terms: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Each token once, at its largest weight, in the order first given."""
    weights: dict[str, float] = {}
    for term, weight in terms:
        weights[term] = max(weight, weights.get(term, 0.0))
    return weights


def top_commits(
    ids: Sequence[int],
    lengths: Sequence[float],
    lists: Mapping[str, tuple[Sequence[int], Sequence[int]]],
    weights: Mapping[str, float],
    k: int,
) -> list[tuple[int, float]]:
    """Top ``k`` (commit id, score > 0), best first, newer (higher id) first among equals.

    ``ids`` are the stored commits' ids (ascending) and ``lengths`` their
    document lengths (whole numbers); ``lists`` holds, per term, the ids of
    the stored commits containing it (ascending, each one of ``ids``) and its
    count in each. Arrays or sequences; with numpy when it is loaded (see the
    module docstring), else :func:`top_commits_python`.
    """
    if "numpy" in sys.modules:
        return top_commits_numpy(ids, lengths, lists, weights, k)
    return top_commits_python(ids, lengths, lists, weights, k)


def top_commits_numpy(
    ids: Any, lengths: Any, lists: Mapping[str, tuple[Any, Any]], weights: Mapping[str, float], k: int
) -> list[tuple[int, float]]:
    """:func:`top_commits` with numpy: every term's postings at once."""
    import numpy as np

    n = len(ids)
    if not n or not lists:
        return []
    ids = np.asarray(ids, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.float64)
    length_norm = K1 * (1.0 - B + B * lengths / max(float(lengths.mean()), 1.0))
    # Every term's postings at once; np.bincount adds them up in this
    # order (the terms' order, from 0.0), as adding term by term would, to
    # the same bits.
    given = [(lists[term], weight) for term, weight in weights.items() if term in lists]
    if not given:
        return []
    term_ids = np.concatenate([np.asarray(term_ids, dtype=np.int64) for (term_ids, _), _ in given])
    tf = np.concatenate([np.asarray(term_tfs, dtype=np.float64) for (_, term_tfs), _ in given])
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


def top_commits_python(
    ids: Sequence[int],
    lengths: Sequence[float],
    lists: Mapping[str, tuple[Sequence[int], Sequence[int]]],
    weights: Mapping[str, float],
    k: int,
) -> list[tuple[int, float]]:
    """:func:`top_commits` in plain Python, to the bits of
    :func:`top_commits_numpy`: the lengths are whole numbers, so their mean
    is exact in any order; each posting's share is computed in the same
    order of operations, and added to its commit's score in the order numpy
    adds them (the terms' order, each term's postings in order, from 0.0)."""
    n = len(ids)
    if not n or not lists:
        return []
    norm = max(sum(lengths) / n, 1.0)
    length_of = dict(zip(ids, lengths, strict=True))
    length_norm: dict[int, float] = {}
    scores: dict[int, float] = {}
    for term, weight in weights.items():
        if term not in lists:
            continue
        term_ids, term_tfs = lists[term]
        factor = weight * _idf(n, len(term_ids))
        for commit, tf in zip(term_ids, term_tfs, strict=True):
            ln = length_norm.get(commit)
            if ln is None:
                ln = length_norm[commit] = K1 * (1.0 - B + B * length_of[commit] / norm)
            scores[commit] = scores.get(commit, 0.0) + factor * tf * (K1 + 1.0) / (tf + ln)
    top = sorted((commit for commit, score in scores.items() if score > 0), key=lambda c: (-scores[c], -c))
    return [(commit, scores[commit]) for commit in top[:k]]


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))
