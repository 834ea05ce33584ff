"""Markdown chunked by headings.

Each heading opens a section that runs to the next heading of the same or a
higher level; its qualified name is the heading path (``Install > From
source``), its kind ``section``. Text before the first heading is a
``block``. A section that fits the bounds is one chunk with its subsections;
a bigger one is cut into its intro and its subsections, and a section still
too big is cut into parts that repeat its heading line (see
:mod:`repolens.chunking.pack`). Parts start at paragraph boundaries; fenced
code blocks are never cut unless one alone exceeds the bounds. Headings
inside fences and YAML front matter are not headings.

A line scanner, not a full CommonMark parser: ATX (``## x``) and setext
(``x`` over ``===`` / ``---``) headings, backtick and tilde fences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from repolens.chunking import Symbol
from repolens.chunking.chunker import ChunkedFile
from repolens.chunking.pack import Def, Packer
from repolens.lines import source_lines
from repolens.record import Record

# Sections up to this many lines are packed with their small neighbours.
MERGE_MAX_LINES = 4

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)$")
_LIST_OR_QUOTE = re.compile(r" {0,3}(?:[-+*>]|\d+[.)])(?:\s|$)")


class Heading(Record):
    row: int  # 0-based row of the heading text
    last_row: int  # underline row for setext headings
    level: int
    title: str


@dataclass(frozen=True)
class MarkdownChunker:
    name: str = "markdown"
    version: int = 1

    def chunk(self, path: str, text: str, language: str) -> ChunkedFile:
        lines = source_lines(text)
        headings, breaks = scan(lines)
        defs = sections(headings, lines)
        packer = Packer(
            path,
            language,
            lines,
            gap_breaks=breaks,
            breaks_for=lambda d: breaks,
            merge_max_lines=MERGE_MAX_LINES,
        )
        chunks = packer.pack(defs)
        symbols: list[Symbol] = []
        stack = list(reversed(defs))
        while stack:
            d = stack.pop()
            symbols.append(
                Symbol(
                    d.name, d.qualname, d.kind, path, d.start + 1, d.end + 1, d.signature, d.parent, language
                )
            )
            stack.extend(reversed(d.children))
        return ChunkedFile(chunks, symbols)


def scan(lines: list[str]) -> tuple[list[Heading], list[int]]:
    """Headings, and the rows a part may start at (paragraphs, fences, headings)."""
    headings: list[Heading] = []
    breaks: list[int] = []
    fence = ""  # the opening fence while inside one
    para = -1  # first row of the paragraph being read, -1 outside one
    i, n = 0, len(lines)
    if n and lines[0].strip() == "---":  # YAML front matter
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                breaks.append(i)
                break
    while i < n:
        line = lines[i]
        if fence:
            s = line.strip()
            if (
                s.startswith(fence[0] * len(fence))
                and not s.strip(fence[0])
                and len(line) - len(line.lstrip()) < 4
            ):
                fence = ""
                breaks.append(i + 1)
            i += 1
            continue
        if not line.strip():
            para = -1
            i += 1
            continue
        m = _FENCE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
            breaks.append(i)
            para = -1
            i += 1
            continue
        m = _ATX.match(line)
        if m:
            headings.append(Heading(i, i, len(m.group(1)), (m.group(2) or "").strip()))
            breaks.append(i)
            para = -1
            i += 1
            continue
        m = _SETEXT.match(line)
        if m and para >= 0:
            title = " ".join(x.strip() for x in lines[para:i])
            headings.append(Heading(para, i, 1 if m.group(1)[0] == "=" else 2, title))
            breaks.append(para)
            para = -1
            i += 1
            continue
        if para < 0:
            para = i
            breaks.append(i)
            if _LIST_OR_QUOTE.match(line):
                para = -1  # a list item or quote cannot be a setext heading's text
        i += 1
    return headings, breaks


def sections(headings: list[Heading], lines: list[str]) -> list[Def]:
    """The heading tree as nested section definitions covering their text."""
    n = len(lines)
    roots: list[Def] = []
    stack: list[tuple[int, Def]] = []
    for h in headings:
        while stack and stack[-1][0] >= h.level:
            stack.pop()[1].end = h.row - 1
        parent = stack[-1][1] if stack else None
        title = h.title or "(untitled)"
        qual = f"{parent.qualname} > {title}" if parent is not None else title
        d = Def(
            "section",
            title,
            qual,
            parent.qualname if parent is not None else "",
            h.row,
            n - 1,
            signature=lines[h.row].strip()[:240],
            head=h.row,
            head_end=h.last_row,
        )
        (parent.children if parent is not None else roots).append(d)
        stack.append((h.level, d))
    return roots
