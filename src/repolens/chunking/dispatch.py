"""Which chunker runs for a file, and the fingerprint of the whole setup.

:func:`chunk_file` is the one entry point the index uses. It never raises
for a file's content: a parser crash, a timeout or a bug in a language spec
falls back to line windows with ``parse_error=True``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import replace
from functools import lru_cache

from repolens.chunking import Chunk, Symbol, assign_ids
from repolens.chunking.chunker import ChunkedFile, Chunker
from repolens.chunking.grammars import grammar_versions
from repolens.chunking.markdown import MarkdownChunker
from repolens.chunking.syntax import SyntaxChunker, supports
from repolens.chunking.text import MAX_CHARS, MAX_LINES, TARGET_LINES, WindowChunker, window_chunks
from repolens.hashing import blake2b
from repolens.lines import source_lines

# Bump when any chunker's output changes for the same input and grammars.
# 19: C# properties, indexers and events are definitions (their reads uses), and a use on a
#     line several C# definitions share is in the one holding it; Java's and Kotlin's star
#     imports and default imports (reference rows only).
# 20: C++ methods declared in a class body and a header's prototypes are symbols (and
#     ``extern "C"`` definitions); a ``.h`` whose text is C++ is read as C++.
# 21: a C++ member defined out of its class is a method (its rows: bare members, typed loop
#     variables); Rust method results, full crate paths; Kotlin's default functions by one
#     rule; C# bare reads of a base's or another part's property (reference rows).
CHUNKING_VERSION = 21

DEFAULT_MERGE_LINES = 30  # keep equal to settings.Settings.chunk_merge_lines
SYNTAX = SyntaxChunker(merge_max_lines=DEFAULT_MERGE_LINES)
MARKDOWN = MarkdownChunker()
WINDOWS = WindowChunker()


def chunker_for(language: str) -> Chunker:
    """Markdown by headings, tree-sitter where a grammar loads, else line windows."""
    if language == "markdown":
        return MARKDOWN
    if supports(language):
        return SYNTAX
    return WINDOWS


@lru_cache(maxsize=8)
def _syntax(merge_lines: int) -> SyntaxChunker:
    return SyntaxChunker(merge_max_lines=merge_lines)


def chunk_file(
    path: str, text: str, language: str, *, mode: str = "syntax", merge_lines: int = DEFAULT_MERGE_LINES
) -> ChunkedFile:
    """Chunks (with ids) and symbols of one file.

    ``mode="windows"`` uses line windows for every file (the baseline the
    syntax chunker is measured against). Line numbers count ``\\n`` only
    (see :func:`~repolens.lines.source_lines`), for every chunker.
    """
    chunker = WINDOWS if mode == "windows" else chunker_for(language)
    if chunker is SYNTAX and merge_lines != SYNTAX.merge_max_lines:
        chunker = _syntax(merge_lines)
    try:
        if chunker is WINDOWS:
            result = ChunkedFile(window_chunks(path, text, language, lines=source_lines(text)))
        else:
            result = chunker.chunk(path, text, language)
    except Exception:  # a grammar or spec failing on one file must not stop indexing
        result = ChunkedFile(window_chunks(path, text, language, lines=source_lines(text)), parse_error=True)
    chunks = _with_kinds(assign_ids(result.chunks), result.symbols)
    return ChunkedFile(chunks, result.symbols, result.parse_error, result.refs)


def _with_kinds(chunks: list[Chunk], symbols: list[Symbol]) -> list[Chunk]:
    """Record on each chunk the kinds of the definitions starting in it."""
    if not symbols:
        return chunks
    ordered = sorted(symbols, key=lambda s: s.start_line)
    starts = [s.start_line for s in ordered]
    out = []
    for c in chunks:
        lo, hi = bisect_left(starts, c.start_line), bisect_right(starts, c.end_line)
        kinds = sorted({s.kind for s in ordered[lo:hi]} - {c.kind})
        out.append(replace(c, kinds=tuple(kinds)) if kinds else c)
    return out


def chunking_config(mode: str = "syntax", merge_lines: int = DEFAULT_MERGE_LINES) -> tuple[str, int]:
    """``(name, version)`` to record in an index; a different pair means re-chunk.

    The name carries a hash of the bounds and of the installed tree-sitter
    and grammar package versions, so upgrading a grammar (which can move
    chunk boundaries) also invalidates stored chunks.
    """
    h = blake2b(digest_size=6)
    if mode == "windows":
        h.update(repr((TARGET_LINES, MAX_LINES, MAX_CHARS, WINDOWS.overlap)).encode())
        return f"windows/{h.hexdigest()}", CHUNKING_VERSION
    h.update(repr((TARGET_LINES, MAX_LINES, MAX_CHARS, merge_lines, grammar_versions())).encode())
    return f"syntax+markdown+windows/{h.hexdigest()}", CHUNKING_VERSION


def chunker_identity(mode: str, merge_lines: int) -> str:
    """The chunking an index was built with, as recorded in its meta
    (``syntax+.../v3``), for the settings ``chunker`` and ``chunk_merge_lines``
    (plain values: settings imports validate, which imports the chunk vocabularies)."""
    name, version = chunking_config(mode, merge_lines)
    return f"{name}/v{version}"
