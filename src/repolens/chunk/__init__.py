"""Chunks: the unit the index stores, retrieves and cites.

A chunker turns one file's text into a :class:`ChunkedFile`: chunks that
together cover every line of the file, plus the definitions (symbols) it
found. The index only talks to :func:`chunk_file`; which chunker runs for a
file (syntax-aware, markdown headings or line windows) is decided in
:mod:`repolens.chunk.dispatch`.

This module holds what the read path needs (:class:`Chunk`, :class:`Symbol`);
what only chunking needs (``ChunkedFile``, ``Chunker``, ``ChunkFn`` in
:mod:`repolens.chunk.chunker`, the dispatcher) loads on first use of its
name here, so a search that re-chunks nothing never creates those classes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from repolens.hashing import blake2b


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


class Symbol(NamedTuple):
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


# The dispatcher (tree-sitter and every grammar) and the chunkers' own types
# load on first use of their names (PEP 562): the read path needs Chunk and
# Symbol, never a parser.
_DISPATCH = frozenset({"chunk_file", "chunker_for", "chunker_identity", "chunking_config"})
_CHUNKER = frozenset({"ChunkFn", "ChunkedFile", "Chunker"})

if TYPE_CHECKING:
    from repolens.chunk.chunker import ChunkedFile, Chunker, ChunkFn
    from repolens.chunk.dispatch import chunk_file, chunker_for, chunker_identity, chunking_config
    from repolens.settings import Settings


def make_chunker(settings: Settings) -> ChunkFn:
    """``chunk_file`` bound to the chunking settings: (path, text, language) ->
    ChunkedFile. The grammars load when the first file is chunked, so a search
    that finds every cited file unchanged never loads a parser."""
    mode, merge = settings.chunker, settings.chunk_merge_lines

    def chunk(path: str, text: str, language: str) -> ChunkedFile:
        from repolens.chunk.dispatch import chunk_file

        return chunk_file(path, text, language, mode=mode, merge_lines=merge)

    return chunk


def __getattr__(name: str) -> Any:
    if name in _CHUNKER:
        from repolens.chunk import chunker

        return getattr(chunker, name)
    if name in _DISPATCH:
        from repolens.chunk import dispatch

        return getattr(dispatch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Chunk",
    "ChunkFn",
    "ChunkedFile",
    "Chunker",
    "Symbol",
    "assign_ids",
    "chunk_file",
    "chunker_for",
    "chunker_identity",
    "chunking_config",
    "make_chunker",
]
