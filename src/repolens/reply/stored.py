"""Stored chunks read back: one chunk by id, and a file's lines from its chunks.

``get_chunk`` backs the MCP tool of the same name: the ids it takes come from
JSON replies (``search_code`` mode=json; ``repolens search``/``focus --json``).
``file_lines`` rebuilds a file's text, line by line, from the chunks stored
in the index (no read of the working tree, so it shows exactly what was
indexed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from repolens.budget import (
    CHUNK_MAX_CHARS,
    INDEXED_LINE_CHARS,
    fit_lines,
    line_cut_marker,
    omitted_marker,
    truncated_marker,
)
from repolens.chunking.labels import repeated_header_lines
from repolens.errors import NotFoundError, UsageError
from repolens.fronts import say
from repolens.store.base import IndexReader, StoredChunk
from repolens.store.file_text import file_lines, line_cut_by_the_index
from repolens.validate import check_budget

MAX_ID_CHARS = 100


@dataclass(frozen=True)
class ChunkView:
    """One stored chunk, exactly as indexed, and its bounded rendering.

    ``text`` is the stored text (for parts 2..n of a split definition it
    starts with ``header_lines`` lines repeating the definition's header).
    ``rendered`` numbers every line ``N: text``; repeated header lines carry
    their own line numbers (``header_start``) followed by an omission marker
    up to the part's first line.
    """

    id: str
    path: str
    start_line: int
    end_line: int
    kind: str
    name: str
    qualname: str
    signature: str
    parent: str
    language: str
    text: str
    header_lines: int
    header_start: int | None
    rendered: str
    truncated: bool

    def render(self) -> str:
        return self.rendered

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "kind": self.kind,
            "name": self.name,
            "qualname": self.qualname,
            "signature": self.signature,
            "parent": self.parent,
            "language": self.language,
            "header_lines": self.header_lines,
            "truncated": self.truncated,
            "text": self.text,
            "rendered": self.rendered,
        }


def get_chunk(reader: IndexReader, chunk_id: str, *, max_chars: int = CHUNK_MAX_CHARS) -> ChunkView:
    """The stored chunk ``chunk_id``, rendered within ``max_chars`` (200-1,000,000).

    Raises ``UsageError`` for a malformed id and ``NotFoundError`` for an id
    this index does not hold.
    """
    if not isinstance(chunk_id, str) or not chunk_id.strip():
        raise UsageError(f"chunk id is empty: pass an id from a JSON reply ({say('chunk ids')})")
    if len(chunk_id) > MAX_ID_CHARS:
        raise UsageError(
            f"chunk id is {len(chunk_id)} chars; ids are short hex strings such as 51818877acd60f45"
        )
    check_budget(max_chars)
    chunk_id = chunk_id.strip()
    stored = reader.chunk_by_id(chunk_id)
    if stored is None:
        raise NotFoundError(
            f"no chunk with id {chunk_id} in this index: ids come from JSON replies ({say('chunk ids')}); "
            "the index may have been rebuilt"
        )
    c = stored.chunk
    header = repeated_header_lines(c)
    header_start = _header_start(reader, stored, header) if header else None
    lines = c.text.split("\n")
    body: list[tuple[str, int | None]] = []
    if header:
        for i, text in enumerate(lines[:header]):
            body.append((f"{header_start + i}: {text}" if header_start else f"(header) {text}", None))
        if header_start and header_start + header < c.start_line:
            a, b = header_start + header, c.start_line - 1
            body.append((omitted_marker(a, b), None))
    for i, text in enumerate(lines[header:]):
        body.append((f"{c.start_line + i}: {text}", c.start_line + i))
    if line_cut_by_the_index(c):  # the line goes on past what the index holds: its read says where
        body.append((line_cut_marker(c.path, c.start_line, INDEXED_LINE_CHARS), None))
    label = f" {c.kind} {c.qualname}" if c.qualname else f" {c.kind}"
    head = f"{c.path}:{c.start_line}-{c.end_line}{label} [{c.language}] chunk {c.id}"
    rendered, truncated = fit_lines(
        head, body, max_chars, lambda n: truncated_marker(c.path, n, c.end_line, max_chars), c.end_line
    )
    return ChunkView(
        id=c.id,
        path=c.path,
        start_line=c.start_line,
        end_line=c.end_line,
        kind=c.kind,
        name=c.name,
        qualname=c.qualname,
        signature=c.signature,
        parent=c.parent,
        language=c.language,
        text=c.text,
        header_lines=header,
        header_start=header_start,
        rendered=rendered,
        truncated=truncated,
    )


def _header_start(reader: IndexReader, stored: StoredChunk, header: int) -> int | None:
    """Line number of the first repeated header line of a split part, or None.

    The header is the definition's signature line(s): found in the file's
    stored lines between the definition's start and this part.
    """
    c = stored.chunk
    # The smallest definition of that name around the part.
    around = [
        s
        for s in reader.symbols_of_file(c.path)
        if s.qualname == c.qualname and s.start_line <= c.start_line and s.end_line >= c.end_line
    ]
    if not around:
        return None
    first = int(min(around, key=lambda s: s.end_line - s.start_line).start_line)
    wanted = c.text.split("\n")[:header]
    before = [
        s
        for s in reader.chunks_of_file(c.path)
        if s.chunk.end_line >= first and s.chunk.start_line < c.start_line
    ]
    lines = file_lines(before)
    for n in range(first, c.start_line):
        if all(lines.get(n + i) == w for i, w in enumerate(wanted)):
            return n
    return None
