"""Line-window chunks: the fallback for files without a grammar.

Windows of about ``target_lines`` lines overlap by ``overlap`` lines so that a
passage cut at a window edge is whole in the next window. A window also closes
early at ``max_chars`` so that long lines (data, minified code) cannot blow a
chunk up.

A single line longer than ``max_chars`` is data: an image in base64 inside a
notebook, a minified bundle, a one-line FITS header or JSON dump. Its first
``max_chars`` characters are one chunk and the rest is not indexed. Cutting
it all into chunks cost more than the rest of some repositories (two
notebooks of xarray: 770 ms of its 1.7 s of chunking and tokenizing, 238 of
its 1,890 chunks, all of them random base64 "words"), and no question is
answered by the middle of a base64 string. The file is untouched:
``read_snippet`` reads the line from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from repolens.budget import INDEXED_LINE_CHARS
from repolens.chunking import Chunk
from repolens.chunking.chunker import ChunkedFile
from repolens.lines import source_lines

TARGET_LINES = 80
OVERLAP_LINES = 16
MAX_LINES = 120
MAX_CHARS = INDEXED_LINE_CHARS


@dataclass(frozen=True)
class WindowChunker:
    target_lines: int = TARGET_LINES
    overlap: int = OVERLAP_LINES
    max_lines: int = MAX_LINES
    max_chars: int = MAX_CHARS
    name: str = "windows"
    version: int = 1

    def chunk(self, path: str, text: str, language: str) -> ChunkedFile:
        return ChunkedFile(window_chunks(path, text, language, self))


def window_chunks(
    path: str,
    text: str,
    language: str,
    params: WindowChunker | None = None,
    first_line: int = 1,
    lines: list[str] | None = None,
) -> list[Chunk]:
    """Cut ``lines`` (or ``text``) into overlapping windows.

    ``first_line`` offsets the line numbers, so other chunkers can window a
    region of a file (a huge markdown section, an unparsable span).
    """
    p = params or WindowChunker()
    if lines is None:
        lines = source_lines(text)
    target = min(p.target_lines, p.max_lines)
    chunks: list[Chunk] = []
    i, n = 0, len(lines)
    while i < n:
        if len(lines[i]) > p.max_chars:
            chunks.append(Chunk(path, first_line + i, first_line + i, lines[i][: p.max_chars], language))
            i += 1
            continue
        j, size = i, 0
        while j < n and j - i < target and size + len(lines[j]) + 1 <= p.max_chars:
            size += len(lines[j]) + 1
            j += 1
        chunks.append(Chunk(path, first_line + i, first_line + j - 1, "\n".join(lines[i:j]), language))
        if j >= n:
            break
        # Overlap only when the window was cut by the line count; a window
        # closed by the character cap restarts right after itself so long
        # lines are not stored twice.
        step_back = p.overlap if j - i >= target else 0
        i = max(j - step_back, i + 1)
    return chunks
