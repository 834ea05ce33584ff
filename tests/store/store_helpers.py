"""What the store tests write by hand through ``IndexWriter``: three small
files of three languages, and the steps of a build and of a refresh."""

from __future__ import annotations

import numpy as np

from repolens.chunking import Chunk, Symbol, assign_ids
from repolens.store.base import IndexWriter, LexFilters, Store, SymbolFilters
from repolens.store.document import document_fields
from repolens.store.versions import format_versions
from repolens.tokens import tokenize

FIELDS = {"path": 1.0, "name": 2.0, "sig": 1.5, "body": 1.0}
ANY = SymbolFilters()

# path -> language, [(kind, qualname, start, end, body)]
CART = (
    "src/shop/cart.py",
    "python",
    [
        ("class", "Cart", 1, 4, "class Cart:\n    items = []\n    total = 0\n    currency = 'EUR'"),
        ("method", "Cart.add_item", 5, 8, "def add_item(self, item):\n    self.items.append(item)\n\n"),
        ("function", "checkout_cart", 9, 12, "def checkout_cart(cart):\n    return pay(cart.total)\n\n"),
    ],
)
PAY = (
    "src/pay/gateway.js",
    "javascript",
    [("function", "payInvoice", 1, 3, "function payInvoice(invoice) {\n  return charge(invoice)\n}")],
)
GUIDE = ("docs/guide.md", "markdown", [("section", "Checkout", 1, 2, "# Checkout\nPay the cart total.")])
CARTS = (
    "src/shop/carts/__init__.py",
    "python",
    [("function", "add_items", 1, 2, "def add_items():\n    pass")],
)


def parts(path: str, language: str, defs: list) -> tuple[list[Chunk], list[Symbol]]:
    chunks = assign_ids(
        [
            Chunk(
                path,
                start,
                end,
                text,
                language,
                kind,
                name=qual.split(".")[-1],
                qualname=qual,
                signature=text.split("\n")[0],
                kinds=(kind,),
            )
            for kind, qual, start, end, text in defs
        ]
    )
    symbols = [
        Symbol(
            qual.split(".")[-1],
            qual,
            kind,
            path,
            start,
            end,
            text.split("\n")[0],
            qual.rpartition(".")[0],
            language,
        )
        for kind, qual, start, end, text in defs
    ]
    return chunks, symbols


def add(
    writer: IndexWriter, spec: tuple, vectors: dict[str, bytes] | None = None, size: int = 100
) -> list[int]:
    path, language, defs = spec
    chunks, symbols = parts(path, language, defs)
    return writer.add_file(
        path=path,
        hash=f"hash of {path} {len(defs)}",
        size=size,
        mtime_ns=1_000,
        language=language,
        lines=max(end for _, _, _, end, _ in defs),
        flags="",
        chunks=chunks,
        symbols=symbols,
        fields=[document_fields(c) for c in chunks],
        vectors=vectors,
    )


def meta(store: Store) -> dict[str, object]:
    return {**format_versions(), "root": str(store.root), "state": "building"}


def build(store: Store, *files: tuple) -> str:
    """A new published generation holding ``files``."""
    with store.write_lock():
        gen = store.new_generation()
        writer = store.open_writer(gen, create=True)
        try:
            writer.write_meta(meta(store))
            writer.begin()
            for spec in files:
                add(writer, spec)
            writer.commit()
            writer.write_meta({"state": "ready"})
        finally:
            writer.close()
        store.publish(gen)
    return gen


def refresh(store: Store, change) -> None:
    """One batch on the published generation: ``change(writer)``."""
    with store.write_lock():
        writer = store.open_writer(store.current())
        try:
            writer.begin()
            change(writer)
            writer.commit()
        finally:
            writer.close()


def vec(*values: float) -> bytes:
    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).astype(np.float16).tobytes()


def query(reader, text: str, limit: int = 10, filters: LexFilters | None = None) -> list[str]:
    terms = [(t, 1.0) for t in dict.fromkeys(tokenize(text))]
    hits = reader.lexical(terms, FIELDS, limit, filters)
    chunks = reader.chunks(cid for cid, _ in hits)
    return [chunks[cid].chunk.qualname for cid, _ in hits if cid in chunks]
