"""The per-thread reader cache (repolens.store.handles): one reader per store
and thread, reopened when a new generation is published, refreshed to see the
batches committed since, closed when its thread has ended."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import CART, CARTS, PAY, add, build, refresh

from repolens.errors import IndexMissingError
from repolens.store.base import Store
from repolens.store.handles import ReaderCache


@pytest.fixture
def cache() -> Iterator[ReaderCache]:
    readers = ReaderCache()
    yield readers
    readers.clear()


@pytest.fixture
def store(store_factory, tmp_path: Path) -> Store:
    root = tmp_path / "repo"
    root.mkdir()
    return store_factory(root)


def _in_thread(cache: ReaderCache, store: Store):
    got = []
    thread = threading.Thread(target=lambda: got.append(cache.get(store)))
    thread.start()
    thread.join()
    return got[0]


def test_no_index_is_the_missing_error(cache: ReaderCache, store: Store):
    with pytest.raises(IndexMissingError):
        cache.get(store)


def test_a_thread_reuses_its_reader_and_each_thread_has_its_own(cache: ReaderCache, store: Store):
    build(store, CART)
    mine = cache.get(store)
    assert cache.get(store) is mine
    theirs = _in_thread(cache, store)
    assert theirs is not mine
    assert mine.paths() == ["src/shop/cart.py"]


def test_the_readers_of_ended_threads_are_closed(cache: ReaderCache, store: Store):
    build(store, CART)
    ended = _in_thread(cache, store)
    mine = cache.get(store)  # opened after the other thread ended: its reader is closed
    assert mine.paths() == ["src/shop/cart.py"]
    with pytest.raises(Exception, match="closed"):
        ended.paths()


def test_a_new_generation_gets_a_new_reader(cache: ReaderCache, store: Store):
    first = build(store, CART)
    old = cache.get(store)
    assert old.generation == first
    second = build(store, PAY)
    new = cache.get(store)
    assert new is not old and new.generation == second
    assert new.paths() == ["src/pay/gateway.js"]


def test_a_kept_reader_sees_the_batches_committed_since(cache: ReaderCache, store: Store):
    build(store, CART)
    reader = cache.get(store)
    refresh(store, lambda writer: add(writer, CARTS))
    assert cache.get(store) is reader
    assert sorted(reader.paths()) == ["src/shop/cart.py", "src/shop/carts/__init__.py"]
    terms = [("add", 1.0), ("item", 1.0)]
    found = reader.chunks(cid for cid, _ in reader.lexical(terms, {"name": 1.0}, 10))
    assert {s.chunk.path for s in found.values()} == {"src/shop/cart.py", "src/shop/carts/__init__.py"}


def test_clear_closes_every_reader(cache: ReaderCache, store: Store):
    build(store, CART)
    reader = cache.get(store)
    cache.clear()
    with pytest.raises(Exception, match="closed"):
        reader.paths()
    assert cache.get(store) is not reader


def test_an_index_deleted_and_built_anew_under_the_same_name_gets_a_new_reader(
    cache: ReaderCache, tmp_path: Path
):
    """A server's reader must not outlive the index it read: deleted (or
    dropped) and built again, a local index's first generation has the
    same name, and the kept reader would pair the old database with the
    new files (hits of deleted files, no hit for a new name). (PostgreSQL
    numbers its generations from a sequence: a name is never given twice.)"""
    from repolens.store import open_store

    root = tmp_path / "repo"
    root.mkdir()
    store = open_store(root, tmp_path / "index")
    first = build(store, CART)
    old = cache.get(store)
    old_key = old.cache_key()
    shutil.rmtree(tmp_path / "index")
    assert build(store, PAY) == first  # the same name
    new = cache.get(store)
    assert new is not old and new.paths() == ["src/pay/gateway.js"]
    assert new.cache_key() != old_key  # nor do caches of what it held outlive it
    assert cache.get(store) is new  # and kept while it stays


def test_a_local_readers_cache_key_moves_when_another_process_refreshes_and_reads_nothing_else(
    cache: ReaderCache, tmp_path: Path
):
    """The rules of a reference question key their memos with ``cache_key`` once per
    reference row: it reads the meta again only after another connection committed
    (here ``repolens index`` in another process, as the watcher would), and then must
    give a new key, without a refresh, so nothing kept of the old content is reused."""
    from repolens.store import open_store

    root, index_dir = tmp_path / "repo", tmp_path / "index"
    root.mkdir()
    (root / "cart.py").write_text("def add_item(cart, item):\n    cart.append(item)\n")

    def index() -> None:
        done = subprocess.run(
            [sys.executable, "-m", "repolens.cli", "index", str(root), "--index-dir", str(index_dir)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr

    index()
    store = open_store(root, index_dir)
    reader = cache.get(store)
    key = reader.cache_key()
    statements: list[str] = []
    reader.db.set_trace_callback(statements.append)
    assert [reader.cache_key() for _ in range(3)] == [key] * 3  # nothing written: the same key,
    assert not [s for s in statements if "meta" in s]  # and the meta is not read for it
    (root / "pay.py").write_text("def pay_invoice(invoice):\n    return invoice.total\n")
    index()
    assert store.current() == reader.generation  # a refresh of the same generation
    assert reader.cache_key() != key
    assert reader.cache_key() == reader.cache_key()
    reader.db.set_trace_callback(None)
