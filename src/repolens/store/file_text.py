"""A file's lines from its stored chunks: what a reply quotes of a file the
index holds, without reading the disk (which may have moved on since)."""

from __future__ import annotations

from collections.abc import Iterable

from repolens.budget import INDEXED_LINE_CHARS
from repolens.chunking import Chunk
from repolens.chunking.labels import repeated_header_lines
from repolens.store.records import StoredChunk


def file_lines(chunks: Iterable[StoredChunk]) -> dict[int, str]:
    """Line number -> text of one file, reassembled from its stored chunks.

    Handles the three ways chunk texts differ from a plain tiling: parts 2..n
    of a split definition start with the definition's header repeated (those
    lines are dropped, see :func:`~repolens.chunking.labels.repeated_header_lines`);
    line windows overlap (the first chunk to supply a line wins, the texts
    are identical); and a line longer than the chunk cap is stored as several
    one-line chunks of the same line, concatenated here in storage order.
    """
    out: dict[int, str] = {}
    pieces: dict[int, list[str]] = {}
    for s in sorted(chunks, key=lambda s: (s.chunk.start_line, s.cid)):
        c = s.chunk
        if c.start_line == c.end_line and "\n" not in c.text:
            pieces.setdefault(c.start_line, []).append(c.text)
            continue
        own = c.text.split("\n")[repeated_header_lines(c) :]
        for i, text in enumerate(own[: c.end_line - c.start_line + 1]):
            out.setdefault(c.start_line + i, text)
    for n, parts in pieces.items():
        if n not in out or len(parts) > 1:
            out[n] = "".join(parts)
    return out


def line_cut_by_the_index(chunk: Chunk) -> bool:
    """A one-line chunk holding the first ``INDEXED_LINE_CHARS`` characters of a
    longer line (data, a minified bundle: :mod:`repolens.chunking.text`),
    whose rest the index does not hold: shown as it is, it would pass for the
    whole line. (A line of exactly that length, stored whole, reads as cut
    too: the index does not say which; the marker's read shows it either way.)"""
    return chunk.start_line == chunk.end_line and len(chunk.text) >= INDEXED_LINE_CHARS
