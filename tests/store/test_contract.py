"""The store contract (repolens.store.base): what every backend does, tested
through the protocols alone, for each backend of ``store_factory``.

Files, chunks and symbols are written by hand through ``IndexWriter`` (no
discovery, no chunker), so each test states exactly what the store holds.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from store_helpers import (
    ANY,
    CART,
    CARTS,
    FIELDS,
    GUIDE,
    PAY,
    add,
    build,
    meta,
    parts,
    query,
    refresh,
    unpublished,
    vec,
)

from repolens.errors import IndexLockedError, IndexMissingError, IndexVersionError
from repolens.store.base import (
    IndexWriter,
    LexFilters,
    NameMatch,
    SkippedFile,
    Store,
    SymbolFilters,
    normalize_symbol,
)
from repolens.store.document import TEXT_FIELDS, document_fields
from repolens.store.versions import format_versions
from repolens.tokens import tokenize


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


@pytest.fixture
def store(store_factory, repo: Path) -> Store:
    return store_factory(repo)


@pytest.fixture
def shop(store: Store):
    """A reader of a published generation holding CART, PAY and GUIDE."""
    build(store, CART, PAY, GUIDE)
    reader = store.open_reader()
    yield reader
    reader.close()


# -- generations -------------------------------------------------------------------


def test_a_new_store_has_no_index_and_says_how_to_make_one(store: Store, repo: Path):
    assert store.current() is None
    assert store.root == repo.resolve()
    assert isinstance(store.missing(), IndexMissingError)
    assert "repolens index" in str(store.missing())
    with pytest.raises(IndexMissingError):
        store.open_reader()


def test_publishing_makes_a_generation_current(store: Store):
    gen = build(store, CART)
    assert store.current() == gen
    assert store.building() == []
    reader = store.open_reader()
    try:
        assert reader.generation == gen
        assert reader.meta()["state"] == "ready"
        assert reader.meta()["schema_version"] == str(format_versions()["schema_version"])
    finally:
        reader.close()


def test_a_reader_keeps_its_generation_while_a_new_one_is_published(store: Store):
    old = build(store, CART)
    before = store.open_reader()
    try:
        new = build(store, PAY)
        assert new != old and store.current() == new
        assert set(before.paths()) == {"src/shop/cart.py"}  # the old one, whole
        assert query(before, "add item")[0] == "Cart.add_item"
        after = store.open_reader()
        try:
            assert after.generation == new
            assert set(after.paths()) == {"src/pay/gateway.js"}
            assert query(after, "add item") == []
        finally:
            after.close()
    finally:
        before.close()


def test_an_unpublished_is_resumed_with_its_committed_batches(store: Store):
    build(store, CART)
    with store.write_lock():
        gen = store.new_generation()
        writer = store.open_writer(gen, create=True)
        writer.write_meta(meta(store))
        writer.begin()
        add(writer, PAY)
        writer.commit()
        writer.begin()
        add(writer, GUIDE)  # never committed: the run dies here
        writer.abort()
        writer.close()
    assert store.building() == [gen]
    assert store.generation_meta(gen)["state"] == "building"
    with store.write_lock():
        writer = store.open_writer(gen, create=True)
        try:
            assert set(writer.files()) == {"src/pay/gateway.js"}
        finally:
            writer.close()
        store.discard(gen)
    assert store.building() == []
    assert store.current() is not None and store.current() != gen


def _ranked(store: Store, texts: tuple[str, ...]) -> list[list[tuple[str, float]]]:
    """Each text's hits as (qualname, score to 6 significant digits), best first, ties by name."""
    reader = store.open_reader()
    try:
        out = []
        for text in texts:
            hits = reader.lexical([(t, 1.0) for t in dict.fromkeys(tokenize(text))], FIELDS, 10)
            chunks = reader.chunks(cid for cid, _ in hits)
            out.append(
                sorted(
                    ((chunks[c].chunk.qualname, float(f"{s:.6g}")) for c, s in hits),
                    key=lambda h: (-h[1], h[0]),
                )
            )
        return out
    finally:
        reader.close()


def test_a_resumed_build_whose_files_changed_ranks_as_one_built_at_once(store_factory, tmp_path: Path):
    # The first run commits a batch and dies; the file it wrote has changed
    # when the next run resumes, which replaces it and adds the rest.
    old_cart = (CART[0], CART[1], [("class", "Cart", 1, 2, "class Cart:\n    legacy_items = []")])
    for name in ("resumed", "straight"):
        (tmp_path / name).mkdir()
    resumed = store_factory(tmp_path / "resumed")
    gen = unpublished(resumed, old_cart, PAY)
    with resumed.write_lock():
        writer = resumed.open_writer(gen, create=True)
        try:
            writer.begin()
            writer.delete_file(writer.files()[CART[0]].id)
            add(writer, CART)
            add(writer, GUIDE)
            writer.commit()
            writer.write_meta({"state": "ready"})
        finally:
            writer.close()
        resumed.publish(gen)
    straight = store_factory(tmp_path / "straight")
    build(straight, PAY, CART, GUIDE)
    texts = ("cart items", "legacy items", "pay invoice", "checkout cart total")
    assert _ranked(resumed, texts) == _ranked(straight, texts)
    assert _ranked(resumed, ("legacy",)) == [[]]


def test_garbage_collection_keeps_the_current_and_the_keptbuild(store: Store):
    current = build(store, CART)
    with store.write_lock():
        kept = store.new_generation()
        dropped = store.new_generation()
        for gen in (kept, dropped):
            store.open_writer(gen, create=True).close()
        store.collect_garbage(keep=kept)
        assert store.building() == [kept]
        store.collect_garbage()
        assert store.building() == []
    assert store.current() == current


def test_a_generation_of_other_versions_is_refused(store: Store):
    with store.write_lock():
        gen = store.new_generation()
        writer = store.open_writer(gen, create=True)
        writer.write_meta({**meta(store), "schema_version": "999"})
        writer.close()
        assert store.generation_meta(gen)["schema_version"] == "999"
        with pytest.raises(IndexVersionError, match="schema version 999"):
            store.open_writer(gen)


def test_one_writer_at_a_time(store_factory, repo: Path):
    first, second = store_factory(repo), store_factory(repo)
    locked = pytest.raises(IndexLockedError, match="wait for it to finish")
    with first.write_lock(), locked, second.write_lock():
        pass
    with second.write_lock():  # released when the first is done
        pass


def test_a_held_write_lock_is_seen_without_taking_it(store_factory, repo: Path):
    """What a status page asks: whether a writer runs now, without becoming one."""
    watcher, writer = store_factory(repo), store_factory(repo)
    assert watcher.writing() is False
    with writer.write_lock():
        assert watcher.writing() is True
    assert watcher.writing() is False
    with writer.write_lock():  # asking took nothing: the writer still gets the lock
        pass


def test_a_writer_waits_for_the_lock_when_asked(store_factory, repo: Path):
    holding, release, released = threading.Event(), threading.Event(), threading.Event()

    def hold() -> None:
        with store_factory(repo).write_lock():
            holding.set()
            release.wait(10)
            released.set()  # (set while still holding: the lock is released right after)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert holding.wait(10), "the holder never took the lock"
        with pytest.raises(IndexLockedError), store_factory(repo).write_lock():  # held: no waiting, no lock
            pass
        threading.Timer(0.2, release.set).start()
        with store_factory(repo).write_lock(wait=10):
            assert released.is_set(), "the waiter got the lock while the holder still held it"
    finally:
        release.set()
        thread.join()


# -- files, chunks, symbols ------------------------------------------------------------


def test_files_and_counts(shop):
    files = shop.files()
    assert set(files) == {"src/shop/cart.py", "src/pay/gateway.js", "docs/guide.md"}
    cart = files["src/shop/cart.py"]
    assert (cart.hash, cart.size, cart.mtime_ns, cart.language, cart.lines) == (
        "hash of src/shop/cart.py 3",
        100,
        1_000,
        "python",
        12,
    )
    assert set(shop.files(["docs/guide.md", "nowhere.py"])) == {"docs/guide.md"}
    assert sorted(shop.paths()) == sorted(files)
    assert shop.counts() == {"files": 3, "bytes": 300, "lines": 17, "chunks": 5, "symbols": 5}


def test_a_path_is_a_file_or_a_folder_holding_one(shop):
    assert shop.has_path("src/shop/cart.py")
    assert shop.has_path("src/shop") and shop.has_path("src")
    assert not shop.has_path("src/sh")  # a prefix of a name is not a folder
    assert not shop.has_path("src/shop/cart")


def test_chunks_by_key_by_id_by_file_and_by_line(shop):
    by_file = shop.chunks_of_file("src/shop/cart.py")
    assert [s.chunk.qualname for s in by_file] == ["Cart", "Cart.add_item", "checkout_cart"]
    first = by_file[0]
    assert shop.chunk_by_id(first.chunk.id) == first
    assert shop.chunk_by_id("no-such-id") is None
    assert shop.chunks([first.cid, 999_999]) == {first.cid: first}
    assert first.chunk.text.startswith("class Cart:\n    items = []")
    spots = [
        ("src/shop/cart.py", 6),
        ("src/shop/cart.py", 40),
        ("src/no/such.py", 1),
        ("src/shop/cart.py", 1),
    ]
    assert shop.chunks_at(spots) == [by_file[1].cid, None, None, first.cid]
    assert shop.chunks_at(spots[:1] * 2) == [by_file[1].cid] * 2  # in order, repeats answered each
    assert shop.chunks_at([]) == []


def test_a_chunks_text_reads_back_as_written(store: Store):
    """Whatever its size and characters: 6,000 two-byte characters (past
    the compressor's 8 KB window) and a lone surrogate, which a file in an
    odd encoding can carry."""
    text = "def f():\n    return '" + "é" * 6000 + "\udcff'\n" + "    x = 1\n" * 40
    build(store, ("src/big.py", "python", [("function", "f", 1, 42, text)]))
    reader = store.open_reader()
    try:
        (stored,) = reader.chunks_of_file("src/big.py")
        assert stored.chunk.text == text
    finally:
        reader.close()


def test_symbols_by_name_prefix_and_inner_part(shop):
    def names(match: NameMatch, filters: SymbolFilters = ANY, **kw) -> list[str]:
        return [r.qualname for r in shop.symbols(match, filters, 100, **kw)]

    assert names(NameMatch(names=(normalize_symbol("checkout_cart"),))) == ["checkout_cart"]
    assert names(NameMatch(names=("additem", "payinvoice"))) == ["Cart.add_item", "payInvoice"]
    assert names(NameMatch(names=("checkout",))) == ["Checkout"]
    assert names(NameMatch(names=("checkout",)), SymbolFilters(sections=False)) == []
    assert names(NameMatch(prefix="checkout")) == ["checkout_cart"]  # longer names only
    assert set(names(NameMatch(prefix="checkout", prefix_itself=True))) == {"Checkout", "checkout_cart"}
    assert names(NameMatch(inner="cart")) == ["checkout_cart"]  # not "cart" at the start
    assert names(NameMatch(prefix="c", prefix_itself=True, min_len=4, max_len=8)) == ["Cart", "Checkout"]
    assert names(NameMatch(prefix="c", prefix_itself=True), order="length") == [
        "Cart",
        "Checkout",
        "checkout_cart",
    ]


def test_symbol_filters_and_counts(shop):
    anything = NameMatch(prefix="a", prefix_itself=True)
    assert [r.path for r in shop.symbols(anything, SymbolFilters(path="src/shop"), None)] == [
        "src/shop/cart.py"
    ]
    assert shop.symbols(anything, SymbolFilters(path="src/sho"), None) == []
    assert shop.symbols(NameMatch(names=("payinvoice",)), SymbolFilters(language="python"), None) == []
    assert shop.count_symbols(NameMatch(names=("payinvoice",)), SymbolFilters(kind="function")) == 1
    assert shop.count_symbols(NameMatch(prefix="c", prefix_itself=True), SymbolFilters()) == 3
    assert shop.symbol_names(NameMatch(prefix="c", prefix_itself=True), SymbolFilters(), 2) == [
        "cart",
        "checkout",
    ]


def test_many_files_chunks_and_symbols_are_read_at_once_as_one_by_one(shop):
    paths = ["src/pay/gateway.js", "src/shop/cart.py", "no/such.py"]
    chunks, symbols = shop.chunks_of_files(paths), shop.symbols_of_files(paths)
    assert chunks == {p: shop.chunks_of_file(p) for p in paths[:2]}
    assert symbols == {p: shop.symbols_of_file(p) for p in paths[:2]}
    cart = chunks["src/shop/cart.py"]
    assert [s.chunk.qualname for s in cart] == ["Cart", "Cart.add_item", "checkout_cart"]
    assert shop.chunks_of_files([]) == shop.symbols_of_files([]) == {}


def test_a_files_symbols_come_in_the_order_they_were_found(shop):
    rows = shop.symbols_of_file("src/shop/cart.py")
    assert [(r.kind, r.qualname, r.start_line, r.end_line, r.parent) for r in rows] == [
        ("class", "Cart", 1, 4, ""),
        ("method", "Cart.add_item", 5, 8, "Cart"),
        ("function", "checkout_cart", 9, 12, ""),
    ]
    assert rows[1].norm == "additem" and rows[1].signature == "def add_item(self, item):"


# -- lexical -------------------------------------------------------------------------


def test_lexical_ranks_best_first_within_filters(shop):
    assert query(shop, "add item to cart")[0] == "Cart.add_item"
    assert query(shop, "pay invoice")[0] == "payInvoice"
    assert query(shop, "pay", filters=LexFilters(subpath="src/shop")) == ["checkout_cart"]
    assert query(shop, "pay", filters=LexFilters(subpath="src/sho")) == []
    assert query(shop, "pay", filters=LexFilters(languages=("markdown",))) == ["Checkout"]
    assert query(shop, "cart", filters=LexFilters(kinds=("method",))) == ["Cart.add_item"]
    assert query(shop, "zebra") == []


def test_lexical_weights_terms_and_fields(shop):
    (checkout,), (invoice,) = tokenize("checkout"), tokenize("invoice")
    best = shop.chunks_of_file("src/pay/gateway.js")[0].cid
    assert shop.lexical([(checkout, 1.0), (invoice, 9.0)], FIELDS, 1)[0][0] == best
    assert shop.lexical([(checkout, 9.0), (invoice, 1.0)], FIELDS, 1)[0][0] != best
    scores = dict(shop.lexical([(t, 1.0) for t in tokenize("cart")], FIELDS, 10))
    doubled = dict(shop.lexical([(t, 2.0) for t in tokenize("cart")], FIELDS, 10))
    assert scores.keys() == doubled.keys()
    assert all(doubled[c] == pytest.approx(2 * scores[c], rel=1e-4) for c in scores)
    assert shop.lexical([(t, 1.0) for t in tokenize("cart")], {"body": 0.0}, 10) == []


def test_lexical_in_files_is_each_files_own_search(shop):
    terms = [(t, 1.0) for t in tokenize("pay cart checkout item invoice")]
    files = ["src/shop/cart.py", "docs/guide.md", "src/pay/gateway.js", "src/shop/cart.py", "missing.py"]
    for filters in (None, LexFilters(subpath="src/pay"), LexFilters(languages=("python", "markdown"))):
        for per_file in (1, 2, 5):
            found = shop.lexical_in_files(terms, FIELDS, files, per_file, filters)
            base = filters or LexFilters()
            alone = {
                path: shop.lexical(terms, FIELDS, per_file, base._replace(subpath=path)) for path in files
            }
            assert found == {path: hits for path, hits in alone.items() if hits}
    assert shop.lexical_in_files(terms, FIELDS, [], 3) == {}
    assert shop.lexical_in_files(terms, FIELDS, files, 0) == {}
    assert shop.lexical(terms, FIELDS, 0) == []  # no hit asked for, none given (tantivy panicked)
    assert shop.lexical_in_files([(t, 1.0) for t in tokenize("zebra")], FIELDS, files, 3) == {}


def _tokens_starting(prefix: str, *specs: tuple) -> list[str]:
    """The reference: every token of the files' scored fields that starts with ``prefix``."""
    found = {
        token
        for spec in specs
        for chunk in parts(*spec)[0]
        for name, value in document_fields(chunk).items()
        if name in TEXT_FIELDS
        for token in str(value).split()
        if token.startswith(prefix)
    }
    return sorted(found, key=lambda t: (len(t), t))


def test_terms_with_a_prefix_are_the_indexed_tokens_shortest_first(store: Store, shop):
    every = _tokens_starting("c", CART, PAY, GUIDE)
    assert (
        shop.terms_with_prefix("c", 100)
        == every
        == [
            "cart",
            "charg",
            "class",
            "currenc",
            "checkout",
            "checkoutcart",
        ]
    )
    assert shop.terms_with_prefix("c", 3) == every[:3]
    assert shop.terms_with_prefix("check", 100) == ["checkout", "checkoutcart"]
    assert shop.terms_with_prefix("zebra", 10) == [] and shop.terms_with_prefix("c", 0) == []
    refresh(store, lambda w: add(w, CARTS))  # rows written since the build count too
    shop.refresh()
    assert shop.terms_with_prefix("additem", 10) == ["additem", "additems"]


def test_held_terms_are_the_asked_tokens_some_chunk_holds(store: Store, shop):
    asked = ["cart", "payinvoice", "zebra", "checkout", "additems", ""]
    assert shop.held_terms(asked) == {"cart", "payinvoice", "checkout"}
    assert shop.held_terms([]) == frozenset()
    refresh(store, lambda w: add(w, CARTS))  # rows written since the build count too
    shop.refresh()
    assert shop.held_terms(asked) == {"cart", "payinvoice", "checkout", "additems"}


# -- batches and counters ------------------------------------------------------------------


def test_a_batch_is_seen_whole_after_its_commit(store: Store, shop):
    cart = shop.files()["src/shop/cart.py"]
    version = shop.meta().get("content_version")
    key = shop.cache_key()
    before = query(shop, "add items")  # a reader may keep what a search read until it refreshes
    assert before and before != ["add_items"]
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            writer.begin()
            writer.delete_file(cart.id)
            add(writer, CARTS)
            shop.refresh()
            assert "src/shop/cart.py" in shop.paths() and "src/shop/carts/__init__.py" not in shop.paths()
            writer.commit()
        finally:
            writer.close()
    shop.refresh()
    assert set(shop.paths()) == {"src/shop/carts/__init__.py", "src/pay/gateway.js", "docs/guide.md"}
    assert query(shop, "add items") == ["add_items"]
    assert shop.symbols(NameMatch(names=("additem",)), SymbolFilters(), None) == []
    assert shop.chunks_of_file("src/shop/cart.py") == []
    assert shop.meta()["content_version"] != version
    assert shop.cache_key() != key


def test_an_aborted_batch_leaves_nothing_behind(store: Store, shop):
    before = (shop.counts(), sorted(shop.paths()))
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            writer.begin()
            writer.delete_file(shop.files()["src/pay/gateway.js"].id)
            add(writer, CARTS)
            writer.abort()
            assert not writer.in_batch
            assert writer.reconcile() == 0
        finally:
            writer.close()
    shop.refresh()
    assert (shop.counts(), sorted(shop.paths())) == before
    assert query(shop, "add items")[0] == "Cart.add_item"
    assert query(shop, "pay invoice")[0] == "payInvoice"


def test_touched_and_skipped_files(store: Store, shop):
    cart = shop.files()["src/shop/cart.py"]
    skip = SkippedFile("data/blob.bin", "binary", 2048, 77)
    refresh(store, lambda w: (w.touch_file(cart.id, 150, 2_000), w.set_skipped(skip)))
    shop.refresh()
    moved = shop.files()["src/shop/cart.py"]
    assert (moved.size, moved.mtime_ns, moved.hash) == (150, 2_000, cart.hash)
    assert shop.skipped_files() == {"data/blob.bin": skip}
    refresh(store, lambda w: w.forget_skipped(["data/blob.bin"]))
    shop.refresh()
    assert shop.skipped_files() == {}


def test_skipped_files_set_and_forgotten_within_a_batch_are_what_was_said_last(store: Store, shop):
    again = SkippedFile("data/again.bin", "binary", 10, 1)
    gone = SkippedFile("data/gone.txt", "empty", 0, 2)

    def change(writer: IndexWriter) -> None:
        writer.set_skipped(SkippedFile(again.path, "empty", 0, 1))
        writer.set_skipped(gone)
        writer.forget_skipped([again.path, gone.path])
        writer.set_skipped(again)
        assert writer.skipped_files() == {again.path: again}

    refresh(store, change)
    shop.refresh()
    assert shop.skipped_files() == {again.path: again}


def test_counters_move_with_content_and_with_vectors(store: Store, shop):
    def counters() -> tuple[int, int]:
        shop.refresh()
        now = shop.meta()
        return int(now.get("content_version", 0)), int(now.get("vectors_version", 0))

    content, vectors = counters()
    key = shop.cache_key()
    cid = shop.chunks_of_file("docs/guide.md")[0].cid
    refresh(store, lambda w: w.put_vectors([(cid, vec(1, 0, 0, 0))]))
    assert counters() == (content, vectors + 1)
    assert shop.cache_key() == key
    refresh(store, lambda w: w.forget_skipped([]))
    assert counters() == (content + 1, vectors + 2)
    assert shop.cache_key() != key


# -- vectors --------------------------------------------------------------------------------


def test_vectors_are_searched_exactly_and_go_with_their_file(store: Store, shop):
    by_name = {s.chunk.qualname: s for p in shop.paths() for s in shop.chunks_of_file(p)}
    rows = {
        "Cart": vec(1, 0, 0, 0),
        "Cart.add_item": vec(0.9, 0.1, 0, 0),
        "checkout_cart": vec(0, 1, 0, 0),
        "payInvoice": vec(0, 0, 1, 0),
    }
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            assert writer.chunks_missing_vectors(10) == sorted(s.cid for s in by_name.values())
            writer.write_meta({"embed_identity": "test:4", "embed_style": "plain", "embed_dim": 4})
            writer.begin()
            writer.put_vectors((by_name[q].cid, v) for q, v in rows.items())
            writer.commit()
            assert writer.chunks_missing_vectors(10) == [by_name["Checkout"].cid]
            assert writer.vector_count() == 4
            cart_id = writer.files()["src/shop/cart.py"].id
            assert writer.vectors_of_file(cart_id) == {by_name[q].chunk.id: rows[q] for q in list(rows)[:3]}
        finally:
            writer.close()
    shop.refresh()
    assert shop.vector_count() == 4
    # By content-derived chunk id (what a sibling branch's index copies);
    # unknown ids and chunks without a vector are left out.
    wanted = [by_name["Cart"].chunk.id, by_name["Checkout"].chunk.id, "no-such-chunk"]
    assert shop.vectors_of_chunks(wanted) == {by_name["Cart"].chunk.id: rows["Cart"]}
    probe = np.asarray([1, 0, 0, 0], dtype=np.float32)
    top = shop.dense_top(probe, 2)
    assert [c for c, _ in top] == [by_name["Cart"].cid, by_name["Cart.add_item"].cid]
    assert top[0][1] == pytest.approx(1.0, abs=1e-3)
    sims = shop.dense_similarities(probe, [by_name["payInvoice"].cid, by_name["Checkout"].cid])
    assert sims == {by_name["payInvoice"].cid: pytest.approx(0.0, abs=1e-3)}
    assert shop.dense_state(500_000)

    refresh(store, lambda w: w.delete_file(w.files()["src/shop/cart.py"].id))
    shop.refresh()
    assert shop.vector_count() == 1
    assert [c for c, _ in shop.dense_top(probe, 5)] == [by_name["payInvoice"].cid]


def test_kept_vectors_follow_an_edited_file(store: Store, shop):
    kept = {s.chunk.id: vec(1, 2, 3, 4) for s in shop.chunks_of_file("src/shop/cart.py")}

    def edit(writer: IndexWriter) -> None:
        writer.delete_file(writer.files()["src/shop/cart.py"].id)
        add(writer, CART, vectors=kept, size=120)

    refresh(store, edit)
    shop.refresh()
    assert shop.vector_count() == 3
    assert shop.files()["src/shop/cart.py"].size == 120


def test_dropping_vectors_forgets_the_model(store: Store, shop):
    cid = shop.chunks_of_file("docs/guide.md")[0].cid
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            writer.write_meta({"embed_identity": "test:4", "embed_style": "plain", "embed_dim": 4})
            writer.begin()
            writer.put_vectors([(cid, vec(1, 1, 1, 1))])
            writer.commit()
            writer.begin()
            writer.drop_vectors()
            writer.commit()
            assert writer.vector_count() == 0
            assert "embed_identity" not in writer.meta()
        finally:
            writer.close()


def test_a_rebuild_copies_the_vectors_of_unchanged_chunks(store: Store):
    old = build(store, CART, PAY)
    with store.write_lock():
        writer = store.open_writer(old)
        try:
            writer.write_meta({"embed_identity": "test:4", "embed_style": "plain", "embed_dim": 4})
            writer.begin()
            writer.put_vectors((cid, vec(1, 0, 0, 1)) for cid in writer.chunks_missing_vectors(10))
            writer.commit()
        finally:
            writer.close()
        gen = store.new_generation()
        writer = store.open_writer(gen, create=True)
        try:
            writer.write_meta(meta(store))
            writer.begin()
            add(writer, CART)
            add(writer, GUIDE)
            writer.commit()
            assert writer.copy_vectors(old, "test:4", "other style") == 0
            assert writer.copy_vectors(old, "test:4", "plain") == 3  # CART's; GUIDE is new
            assert writer.vector_count() == 3
            (missing,) = writer.chunks_missing_vectors(10)
            assert writer.chunks([missing])[missing].chunk.path == "docs/guide.md"
        finally:
            writer.close()


# -- remembered results -----------------------------------------------------------------


def test_a_remembered_result_is_recalled(shop):
    assert shop.recall("0123456789") is None
    assert shop.remember("0123456789", '{"query": "cart"}')
    assert shop.recall("0123456789") == '{"query": "cart"}'
    assert shop.remember("0123456789", '{"query": "pay"}')
    assert shop.recall("0123456789") == '{"query": "pay"}'
