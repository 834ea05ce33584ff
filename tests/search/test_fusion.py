"""Fusion on hand-made scores: every step of the ranking, alone."""

from __future__ import annotations

import pytest

from repolens.chunking import Chunk
from repolens.search.fusion import (
    RRF_K,
    add_path_boost,
    diversify,
    fuse_boost,
    fuse_dense,
    prior_weights,
    ranked,
    rerank_vote,
    with_file_evidence,
)
from repolens.search.query import parse_query


def _chunk(path: str) -> Chunk:
    return Chunk(path=path, start_line=1, end_line=2, text="def f():\n    pass", language="python")


def test_rrf_constant_is_the_one_of_the_literature() -> None:
    assert RRF_K == 60


def test_ranked_numbers_from_the_best_score() -> None:
    assert ranked({1: 0.5, 2: 3.0, 3: 1.0}) == {2: (1, 3.0), 3: (2, 1.0), 1: (3, 0.5)}
    # equal scores share a rank, whichever a store listed first (a refreshed index's order is
    # not a fresh build's): --explain said #41 refreshed and #42 fresh for one chunk
    tied = {7: 1.0, 3: 2.0, 9: 1.0, 4: 0.5}
    assert (
        ranked(tied)
        == ranked(dict(reversed(tied.items())))
        == {3: (1, 2.0), 7: (2, 1.0), 9: (2, 1.0), 4: (4, 0.5)}
    )


def test_symbol_boost_adds_a_share_of_the_top_lexical_score() -> None:
    lexical = [(1, 10.0), (2, 4.0)]
    assert fuse_boost(lexical, {2: 1.5, 3: 0.5}, 1.0) == {1: 10.0, 2: 4.0 + 15.0, 3: 5.0}
    assert fuse_boost([], {3: 2.0}, 0.5) == {3: 1.0}  # no lexical hit: the top counts 1


def test_dense_boost_rescales_similarities_over_their_range() -> None:
    fused = fuse_dense({1: 8.0, 2: 4.0}, {2: 0.9, 3: 0.5, 1: 0.7}, "boost", 0.5)
    # the best dense match gains weight x the best lexical score, the worst nothing
    assert fused == pytest.approx({1: 8.0 + 0.5 * 8.0 * 0.5, 2: 4.0 + 0.5 * 8.0, 3: 0.0})


def test_dense_rrf_sums_reciprocal_ranks() -> None:
    fused = fuse_dense({1: 8.0, 2: 4.0}, {2: 0.9, 3: 0.5}, "rrf", 0.5)
    assert fused == pytest.approx(
        {1: 1 / (RRF_K + 1), 2: 1 / (RRF_K + 2) + 0.5 / (RRF_K + 1), 3: 0.5 / (RRF_K + 2)}
    )


def test_path_boost_uses_the_top_score_before_any_gain() -> None:
    scores = {1: 10.0, 2: 2.0}
    add_path_boost(scores, {2: 1.0, 1: 0.4}, 0.5)
    assert scores == pytest.approx({1: 12.0, 2: 7.0})


def test_priors_discount_tests_unless_the_query_asks_for_them() -> None:
    chunks = {1: _chunk("src/app.py"), 2: _chunk("tests/test_app.py")}
    plain = prior_weights(chunks, [1, 2], parse_query("where is the app started"))
    asked = prior_weights(chunks, [1, 2], parse_query("the test of the app start"))
    assert plain[1] == 1.0 and plain[2] < 1.0
    assert asked[2] == 1.0


def test_file_evidence_adds_a_decayed_share_of_the_files_other_chunks() -> None:
    chunks = {1: _chunk("a.py"), 2: _chunk("a.py"), 3: _chunk("b.py")}
    out = with_file_evidence({1: 4.0, 2: 2.0, 3: 3.0}, chunks, 0.5)
    # a.py totals 4 + 2 * 0.5 = 5: each chunk gains half of the rest of it
    assert out == pytest.approx({1: 4.0 + 0.5 * 1.0, 2: 2.0 + 0.5 * 3.0, 3: 3.0})


def test_diversify_spreads_over_files_and_counts_the_place_in_the_file() -> None:
    chunks = {1: _chunk("a.py"), 2: _chunk("a.py"), 3: _chunk("b.py")}
    order, nth = diversify([1, 2, 3], {1: 10.0, 2: 9.0, 3: 7.0}, chunks, 0.5)
    assert order == [1, 3, 2]  # a.py's second chunk counts 4.5 < 7
    assert nth == {1: 1, 3: 1, 2: 2}
    assert diversify([1, 2, 3], {1: 10.0, 2: 9.0, 3: 7.0}, chunks, 1.0)[0] == [1, 2, 3]


# -- the rank vote ------------------------------------------------------------------------

K = RRF_K
RANKED = [(10, 9.0), (11, 7.5), (12, 3.0), (13, 2.0)]


def test_vote_reorders_the_head_and_keeps_the_tail_below() -> None:
    fused = rerank_vote(RANKED, {10: 0.1, 11: 0.9, 12: 0.5, 13: 5.0}, weight=1.0, top_n=3)
    assert fused == [
        (11, 1 / (K + 2) + 1 / (K + 1)),
        (10, 1 / (K + 1) + 1 / (K + 3)),
        (12, 1 / (K + 3) + 1 / (K + 2)),
        (13, 1 / (K + 4)),
    ]


def test_vote_weight_shifts_the_order_toward_the_reranker() -> None:
    scores = {10: 0.1, 11: 0.9, 12: 0.5}
    assert [c for c, _ in rerank_vote(RANKED, scores, weight=3.0, top_n=3)] == [11, 12, 10, 13]
    assert [c for c, _ in rerank_vote(RANKED, scores, weight=0.0, top_n=3)] == [10, 11, 12, 13]
    assert rerank_vote(RANKED, {}, weight=1.0, top_n=3) == [
        (c, 1 / (K + r)) for r, (c, _) in enumerate(RANKED, 1)
    ]


def test_vote_ties_keep_the_current_order_and_unscored_head_gets_no_vote() -> None:
    # swapped ranks give equal sums: the current order decides
    assert [c for c, _ in rerank_vote(RANKED[:2], {10: 1.0, 11: 2.0}, 1.0, 2)] == [10, 11]
    fused = rerank_vote(RANKED, {11: 0.2, 12: 0.8}, weight=1.0, top_n=3)
    assert fused == [
        (12, 1 / (K + 3) + 1 / (K + 1)),
        (11, 1 / (K + 2) + 1 / (K + 2)),
        (10, 1 / (K + 1)),
        (13, 1 / (K + 4)),
    ]


def test_vote_edges() -> None:
    assert rerank_vote([], {}, 1.0, 30) == []
    assert [c for c, _ in rerank_vote(RANKED, {13: 1.0}, 100.0, 30)] == [13, 10, 11, 12]
    with pytest.raises(ValueError):
        rerank_vote(RANKED, {}, -1.0, 3)
