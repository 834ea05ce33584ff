"""A chunk as a table row, the same in every backend.

Both stores keep a generation's chunks in a ``chunks`` table with the same
columns; the text is compressed (:mod:`repolens.store.deflate`'s fastest
level: a search decompresses ~100 chunks, so reading speed matters more
than size). Lone surrogates, which files in odd encodings can carry, survive
the round trip.
"""

from __future__ import annotations

from collections.abc import Sequence

from repolens.chunking import Chunk
from repolens.store import deflate
from repolens.store.records import StoredChunk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The columns a read selects, in the order :func:`stored_chunk` unpacks them.
CHUNK_COLS = (
    "cid, id, path, start_line, end_line, language, kind, name, qualname, signature, parent, doc, kinds, text"
)


def compress(text: str) -> bytes:
    return deflate.compress(text.encode("utf-8", "surrogatepass"))


def decompress(blob: bytes) -> str:
    return deflate.decompress(blob).decode("utf-8", "surrogatepass")


def stored_chunk(row: Sequence[Any]) -> StoredChunk:
    """A row of :data:`CHUNK_COLS` as a stored chunk. Every column is NOT
    NULL, and both databases give ints and strs for them already: no
    conversions (a search reads ~100 rows)."""
    cid, id_, path, start, end, lang, kind, name, qual, sig, parent, doc, kinds, blob = row
    chunk = Chunk(
        path=path,
        start_line=start,
        end_line=end,
        text=decompress(blob),
        language=lang,
        kind=kind,
        name=name,
        qualname=qual,
        signature=sig,
        parent=parent,
        doc=doc,
        id=id_,
        kinds=tuple(kinds.split(",")) if kinds else (),
    )
    return StoredChunk(cid, chunk)
