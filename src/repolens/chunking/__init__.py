"""Chunks: the unit the index stores, retrieves and cites.

A chunker turns one file's text into a ``ChunkedFile``: chunks that
together cover every line of the file, plus the definitions (symbols) it
found. The index only talks to :func:`repolens.chunking.dispatch.chunk_file`,
which decides the chunker that runs for a file (syntax-aware, markdown
headings or line windows).

This module holds what the read path needs (:class:`Chunk`, :class:`Symbol`)
and imports none of the modules beside it, which import it: what only
chunking needs (``ChunkedFile``, ``Chunker``, ``ChunkFn`` in
:mod:`repolens.chunking.chunker`, the dispatcher and its grammars) is imported
from there, so a search that re-chunks nothing never creates those classes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from repolens.hashing import blake2b
from repolens.record import Record


@dataclass(frozen=True, slots=True)
class Chunk:
    """A contiguous, 1-based inclusive line range of one file.

    ``text`` is exactly those lines joined by ``\\n`` (a line longer than the
    chunker's character cap is split over several chunks with the same range).
    ``id`` is derived from content, not position, so it survives edits
    elsewhere in the file; :func:`assign_ids` fills it in.
    """

    path: str
    start_line: int
    end_line: int
    text: str
    language: str
    kind: str = "window"
    name: str = ""
    qualname: str = ""
    signature: str = ""
    parent: str = ""
    doc: str = ""
    id: str = ""
    # Kinds of the definitions that start inside this chunk (a packed chunk
    # can hold several); the kind filter matches any of them.
    kinds: tuple[str, ...] = ()


class Symbol(Record):
    """One definition found in a file (function, class, method, ...)."""

    name: str
    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str = ""
    parent: str = ""
    language: str = ""


def assign_ids(chunks: list[Chunk]) -> list[Chunk]:
    """Give each chunk a stable id: a hash of path, kind, name and text.

    Line numbers are deliberately left out so that an edit above a function
    does not change the function's id (its vectors can then be reused).
    Identical chunks in one file get an occurrence suffix to stay unique.
    Surrounding blank lines are left out too: a chunk owns the blank lines
    after it, and adding one should not change its id.
    """
    seen: dict[str, int] = {}
    out: list[Chunk] = []
    for c in chunks:
        h = blake2b(digest_size=8)
        for part in (c.path, c.kind, c.qualname, c.text.strip()):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\0")
        base = h.hexdigest()
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(replace(c, id=base if n == 0 else f"{base}-{n}"))
    return out


__all__ = ["Chunk", "Symbol", "assign_ids"]
