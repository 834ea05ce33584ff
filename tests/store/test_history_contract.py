"""The history part of the store contract (repolens.store.base): what every
backend does with commits, written through ``IndexWriter.update_history`` and
read through ``IndexReader``'s ``history_*`` methods, for each backend of
``store_factory``. Scores are checked against the BM25 written down in
:class:`repolens.store.base.HistoryState`."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from store_helpers import CART, PAY, build

from repolens.store.base import CommitDoc, HistoryUpdate, Store


@pytest.fixture
def store(store_factory, tmp_path: Path) -> Store:
    root = tmp_path / "repo"
    root.mkdir()
    store = store_factory(root)
    build(store, CART, PAY)
    return store


def doc(sha: str, time: int, subject: str, paths: tuple[str, ...], terms: dict[str, int], named=None):
    return CommitDoc(sha * 40, time, subject, "", paths, named or paths, terms)


OLD = doc("a", 1_000, "Add the cart", ("src/shop/cart.py",), {"add": 1, "cart": 2})
MID = doc("b", 2_000, "Pay invoices", ("src/pay/gateway.js", "gone.py"), {"pay": 1, "invoic": 1, "gone": 1})
NEW = doc("c", 3_000, "Cart pays", ("src/shop/cart.py", "src/pay/gateway.js"), {"cart": 1, "pay": 1})


def update(store: Store, change: HistoryUpdate) -> None:
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            writer.update_history(change)
        finally:
            writer.close()


def bm25(tf: int, df: int, n: int, dl: int, avgdl: float) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))


def test_an_index_without_history_says_so(store: Store):
    reader = store.open_reader()
    try:
        assert reader.history_state() is None
        assert reader.history_search([("cart", 1.0)], 5) == []
        assert reader.history_commits([1]) == {}
        assert reader.history_of_file("src/shop/cart.py") == []
    finally:
        reader.close()


def test_commits_are_stored_searched_and_read_back(store: Store):
    update(store, HistoryUpdate("c" * 40, "recipe 1", commits=[OLD, MID, NEW], keep=10))
    reader = store.open_reader()
    try:
        state = reader.history_state()
        assert state is not None
        assert (state.head, state.recipe, state.note, state.commits, state.newest) == (
            "c" * 40,
            "recipe 1",
            "",
            3,
            3_000,
        )
        found = reader.history_search([("cart", 1.0), ("cart", 0.5), ("pay", 2.0)], 10)
        ids = [cid for cid, _ in found]
        commits = reader.history_commits(ids)
        assert [commits[i].subject for i in ids] == ["Cart pays", "Pay invoices", "Add the cart"]
        assert ids == sorted(ids, reverse=True)  # ids ascend with recency
        avgdl = (3 + 3 + 2) / 3
        expected = bm25(1, 2, 3, 2, avgdl) + 2.0 * bm25(1, 2, 3, 2, avgdl)
        assert found[0][1] == pytest.approx(expected, rel=1e-6)
        assert found[2][1] == pytest.approx(bm25(2, 2, 3, 3, avgdl), rel=1e-6)
        assert commits[ids[1]].paths == ("gone.py", "src/pay/gateway.js")
        indexed = reader.history_commits(ids, indexed_only=True)
        assert indexed[ids[1]].paths == ("src/pay/gateway.js",)
        assert [commits[i].subject for i, _ in reader.history_of_file("src/shop/cart.py")] == [
            "Cart pays",
            "Add the cart",
        ]
        assert reader.history_search([("nothing", 1.0)], 10) == []
    finally:
        reader.close()


def test_ties_go_to_the_newer_commit(store: Store):
    a = doc("a", 1_000, "Fix one", ("x.py",), {"fix": 1})
    b = doc("b", 2_000, "Fix two", ("y.py",), {"fix": 1})
    update(store, HistoryUpdate("b" * 40, "r", commits=[a, b], keep=10))
    reader = store.open_reader()
    try:
        found = reader.history_search([("fix", 1.0)], 10)
        assert [reader.history_commits([cid])[cid].subject for cid, _ in found] == ["Fix two", "Fix one"]
    finally:
        reader.close()


def test_appending_keeps_the_stored_commits_and_trims_the_oldest(store: Store):
    update(store, HistoryUpdate("b" * 40, "r", commits=[OLD, MID], keep=5))
    moved = doc("d", 4_000, "Move the cart", ("src/cart.py",), {"move": 1})
    update(store, HistoryUpdate("d" * 40, "r", commits=[moved], replace=False, keep=5))
    reader = store.open_reader()
    try:
        state = reader.history_state()
        assert state is not None and (state.commits, state.head) == (3, "d" * 40)
        assert [reader.history_commits([i])[i].subject for i, _ in reader.history_of_file("src/cart.py")] == [
            "Move the cart"
        ]
        assert [i for i, _ in reader.history_of_file("src/shop/cart.py")] == [1]
    finally:
        reader.close()
    update(store, HistoryUpdate("d" * 40, "r", replace=False, keep=2))
    reader = store.open_reader()
    try:
        touched = reader.history_of_file("src/cart.py")
        assert [reader.history_commits([i])[i].subject for i, _ in touched] == ["Move the cart"]
        assert reader.history_search([("add", 1.0)], 10) == []  # the trimmed commit's terms went with it
    finally:
        reader.close()


def test_replacing_or_emptying_the_history(store: Store):
    update(store, HistoryUpdate("c" * 40, "r", commits=[OLD, MID, NEW], keep=10))
    update(store, HistoryUpdate("a" * 40, "r2", commits=[OLD], keep=10))
    reader = store.open_reader()
    try:
        state = reader.history_state()
        assert state is not None and (state.commits, state.recipe) == (1, "r2")
    finally:
        reader.close()
    update(store, HistoryUpdate("", "", note="not a git work tree"))
    reader = store.open_reader()
    try:
        state = reader.history_state()
        assert state is not None and (state.head, state.note, state.commits) == ("", "not a git work tree", 0)
        assert reader.history_search([("cart", 1.0)], 5) == []
    finally:
        reader.close()


def test_an_open_reader_sees_each_history_update(store: Store):
    reader = store.open_reader()
    try:
        assert reader.history_state() is None
        update(store, HistoryUpdate("b" * 40, "r", commits=[OLD, MID], keep=10))
        reader.refresh()
        state = reader.history_state()
        assert state is not None and (state.head, state.commits, state.newest) == ("b" * 40, 2, 2_000)
        assert len(reader.history_search([("cart", 1.0), ("pay", 1.0)], 10)) == 2
        update(store, HistoryUpdate("c" * 40, "r", commits=[NEW], replace=False, keep=2))
        reader.refresh()
        state = reader.history_state()
        assert state is not None and (state.head, state.commits, state.newest) == ("c" * 40, 2, 3_000)
        found = reader.history_search([("cart", 1.0), ("pay", 1.0)], 10)
        subjects = {c.subject for c in reader.history_commits(cid for cid, _ in found).values()}
        assert subjects == {"Cart pays", "Pay invoices"}
        update(store, HistoryUpdate("", "r", note="not a git repository", replace=True, keep=0))
        reader.refresh()
        state = reader.history_state()
        assert state is not None and (state.note, state.commits) == ("not a git repository", 0)
        assert reader.history_search([("cart", 1.0)], 10) == []
    finally:
        reader.close()


def test_a_history_update_moves_no_content_counter(store: Store):
    reader = store.open_reader()
    before = reader.cache_key()
    reader.close()
    update(store, HistoryUpdate("c" * 40, "r", commits=[OLD], keep=10))
    reader = store.open_reader()
    try:
        assert reader.cache_key() == before
    finally:
        reader.close()


def reference(commits: list[CommitDoc], terms: list[tuple[str, float]]) -> list[tuple[int, float]]:
    """The docstring's BM25 over ``commits`` (ids 1.. oldest first), newer first among equals."""
    weights: dict[str, float] = {}
    for term, weight in terms:
        weights[term] = max(weight, weights.get(term, 0.0))
    lengths = [sum(c.terms.values()) for c in commits]
    avgdl = sum(lengths) / len(commits)
    scores = {}
    for i, c in enumerate(commits):
        score = 0.0
        for term, weight in weights.items():
            df = sum(term in other.terms for other in commits)
            if term in c.terms:
                score += weight * bm25(c.terms[term], df, len(commits), lengths[i], avgdl)
        if score > 0:
            scores[i] = score
    return sorted(scores.items(), key=lambda item: (-item[1], -item[0]))


def test_scores_follow_the_formula_through_appends_and_trims(store: Store):
    rng = random.Random(7)
    words = ["fix", "cart", "pay", "parse", "url", "retry", "cache", "token", "form", "docs"]
    made = [
        doc(
            f"{i:x}",
            1_000 + i,
            f"commit {i}",
            (f"f{i % 7}.py",),
            {w: rng.randint(1, 3) for w in rng.sample(words, 3)},
        )
        for i in range(60)
    ]
    queries = [[("fix", 1.0), ("cart", 0.5)], [("retry", 2.0), ("url", 1.0), ("retry", 0.3)], [("docs", 1.0)]]
    # replace, then appends that trim: past a tenth of the cap the lists are cut, below it old ids linger
    steps = [
        (made[:20], True, 30),
        (made[20:32], False, 30),
        (made[32:34], False, 30),
        (made[34:60], False, 25),
    ]
    stored: list[CommitDoc] = []
    for commits, replace, keep in steps:
        update(store, HistoryUpdate("h", "r", commits=commits, replace=replace, keep=keep))
        stored = (commits if replace else stored + commits)[-keep:]
        reader = store.open_reader()
        try:
            first = min(reader.history_commits(range(1, 100)))
            for terms in queries:
                found = reader.history_search(terms, 100)
                expected = reference(stored, terms)
                assert [i - first for i, _ in found] == [i for i, _ in expected], terms
                assert [s for _, s in found] == pytest.approx([s for _, s in expected], rel=1e-9)
            assert reader.history_search(queries[0], 3) == reader.history_search(queries[0], 100)[:3]
        finally:
            reader.close()
