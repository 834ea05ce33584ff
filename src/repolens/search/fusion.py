"""Fusion: the legs' candidates and scores made into one ranking.

Every function here works on plain scores (``{cid: score}``) and ranks, so
each step can be checked on hand-made numbers:

* :func:`fuse_boost`: the symbol leg as a boost of the lexical scores;
* :func:`fuse_dense`: the dense leg by ``boost``, ``rerank`` (the same
  boost, lexical candidates only) or ``rrf`` (reciprocal rank fusion);
* :func:`add_path_boost`: files the query mentions;
* :func:`prior_weights`: role priors (source over tests, docs, generated);
* :func:`with_file_evidence`: a file matching in several places;
* :func:`rerank_vote`: the cross-encoder's order as a weighted rank vote;
* :func:`diversify`: the spread over files.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence

from repolens.chunking import Chunk
from repolens.search.priors import role_weight, wanted_roles
from repolens.search.query import ParsedQuery

# The rank constant of reciprocal rank fusion and of the reranker's vote
# (Cormack et al. 2009): it flattens the gap between neighbouring ranks, so
# no single leg or vote decides alone.
RRF_K = 60


def ranked(scores: Mapping[int, float]) -> dict[int, tuple[int, float]]:
    """Each cid's (1-based rank, score), best first. Ranks are competition
    ranks (equal scores share one: 1, 2, 2, 4), as the learned ranking's
    features count them: which of two equal chunks a store lists first
    depends on its segments, and a refreshed index would say another rank
    (``--explain``, reciprocal rank fusion) than a fresh build of the same files."""
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    out: dict[int, tuple[int, float]] = {}
    rank, previous = 0, None
    for i, (cid, s) in enumerate(order, 1):
        if s != previous:
            rank, previous = i, s
        out[cid] = (rank, s)
    return out


def fuse_boost(
    lexical: list[tuple[int, float]], symbols: Mapping[int, float], weight: float
) -> dict[int, float]:
    """BM25 score plus ``weight * top_bm25 * strength`` for symbol hits."""
    fused = dict(lexical)
    top = lexical[0][1] if lexical else 1.0
    for cid, strength in symbols.items():
        fused[cid] = fused.get(cid, 0.0) + weight * top * strength
    return fused


def fuse_dense(
    scores: Mapping[int, float], sims: Mapping[int, float], fusion: str, weight: float
) -> dict[int, float]:
    """Join dense similarities ``sims`` to the lexical(+symbol) ``scores``.

    ``boost`` and ``rerank``: each chunk gains ``weight * top * d``, where
    ``d`` is its similarity rescaled to [0, 1] over ``sims`` (so the best
    dense match gains ``weight`` times the best lexical score); chunks only
    in ``sims`` join. ``rrf``: weighted reciprocal rank fusion of the two
    ranked lists.
    """
    if fusion == "rrf":
        fused: dict[int, float] = {}
        for cid, (rank, _) in ranked(scores).items():
            fused[cid] = 1.0 / (RRF_K + rank)
        for cid, (rank, _) in ranked(sims).items():
            fused[cid] = fused.get(cid, 0.0) + weight / (RRF_K + rank)
        return fused
    lo, hi = min(sims.values()), max(sims.values())
    top = max(scores.values(), default=1.0)
    fused = dict(scores)
    for cid, sim in sims.items():
        closeness = (sim - lo) / (hi - lo) if hi > lo else 1.0  # one similarity: the best
        fused[cid] = fused.get(cid, 0.0) + weight * top * closeness
    return fused


def add_path_boost(scores: dict[int, float], strengths: Mapping[int, float], weight: float) -> None:
    """Each chunk of a mentioned file gains ``weight * top * strength``
    (``top``: the best score before any gain), in place."""
    top = max(scores.values(), default=1.0)
    for cid, strength in strengths.items():
        scores[cid] += weight * top * strength


def prior_weights(chunks: Mapping[int, Chunk], cids: Sequence[int], query: ParsedQuery) -> dict[int, float]:
    """The role prior of each of ``cids`` (see :mod:`repolens.search.priors`)."""
    wanted = wanted_roles(query)
    return {cid: role_weight(chunks[cid].path, wanted) for cid in cids}


def with_file_evidence(
    scores: Mapping[int, float], chunks: Mapping[int, Chunk], weight: float
) -> dict[int, float]:
    """Each chunk gains ``weight`` x the decayed sum of its file's other
    chunks: a file that matches in several places is likelier the answer."""
    by_file: dict[str, list[float]] = {}
    for cid, sc in scores.items():
        by_file.setdefault(chunks[cid].path, []).append(sc)
    totals = {
        path: sum(v * 0.5**k for k, v in enumerate(sorted(vals, reverse=True)))
        for path, vals in by_file.items()
    }
    return {cid: sc + weight * (totals[chunks[cid].path] - sc) for cid, sc in scores.items()}


def rerank_vote(
    hits_scores: list[tuple[int, float]], rerank_scores: Mapping[int, float], weight: float, top_n: int
) -> list[tuple[int, float]]:
    """Fuse the reranker's order into the current one: ``(cid, fused)`` for
    every candidate of ``hits_scores`` (best first), best first.

    Only positions count; the incoming scores are ignored, since BM25 sums
    and logits are on unrelated scales. A candidate at 1-based position
    ``rank`` scores ``1/(K + rank)`` with ``K = RRF_K = 60``; each of the first
    ``top_n`` that has a reranker score adds ``weight/(K + rerank_rank)``,
    where ``rerank_rank`` is its position among them by ``rerank_scores``
    (higher first). Every such head score is at least ``1/(K + top_n)``, so
    the candidates after the head stay below it, in their order. Ties keep
    the current order. Raises ValueError for a negative weight or top_n.
    """
    if weight < 0 or top_n < 0:
        raise ValueError(f"weight and top_n must not be negative, got {weight}, {top_n}")
    head = [cid for cid, _ in hits_scores[:top_n] if cid in rerank_scores]
    rerank_rank = {cid: r for r, cid in enumerate(sorted(head, key=lambda c: -rerank_scores[c]), 1)}
    fused = []
    for rank, (cid, _) in enumerate(hits_scores, 1):
        vote = weight / (RRF_K + rerank_rank[cid]) if cid in rerank_rank and rank <= top_n else 0.0
        fused.append((cid, 1.0 / (RRF_K + rank) + vote))
    return sorted(fused, key=lambda pair: -pair[1])


def diversify(
    order: list[int], scores: Mapping[int, float], chunks: Mapping[int, Chunk], factor: float
) -> tuple[list[int], dict[int, int]]:
    """Greedy re-ranking: each further chunk of a file already chosen counts
    ``factor`` times less, so a reply spreads over files. Returns the new
    order and, per chunk, its place among its file's chunks (1 for the
    first): the n-th counted ``scores * factor**(n-1)`` when it was chosen,
    and those scores descend along the new order. A lazy heap: an entry
    whose file gained a chunk since it was pushed is pushed again."""
    seen: dict[str, int] = {}
    nth: dict[int, int] = {}
    heap = [(-scores[cid], i, cid, 0) for i, cid in enumerate(order)]
    heapq.heapify(heap)
    out: list[int] = []
    while heap:
        _neg, i, cid, count = heapq.heappop(heap)
        path = chunks[cid].path
        now = seen.get(path, 0)
        if now != count:
            heapq.heappush(heap, (-scores[cid] * factor**now, i, cid, now))
            continue
        out.append(cid)
        seen[path] = nth[cid] = now + 1
    return out, nth
