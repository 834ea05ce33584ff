"""Markdown chunked by headings: heading paths, fences kept whole, big sections split."""

from __future__ import annotations

from pathlib import Path

from repolens.chunking.chunker import ChunkedFile
from repolens.chunking.dispatch import chunk_file
from repolens.chunking.labels import repeated_header_lines
from repolens.chunking.markdown import scan
from repolens.chunking.text import MAX_LINES
from repolens.lines import source_lines

FIXTURE = Path(__file__).parent / "fixtures" / "sample.md"


def _md(text: str) -> ChunkedFile:
    return chunk_file("README.md", text, "markdown")


def _spans(result: ChunkedFile) -> list[tuple[int, int, str, str]]:
    return [(c.start_line, c.end_line, c.kind, c.qualname) for c in result.chunks]


def _assert_tiles(result: ChunkedFile, text: str) -> None:
    lines = source_lines(text)
    expect = 1
    for c in result.chunks:
        assert c.start_line == expect
        assert c.text.split("\n")[repeated_header_lines(c) :] == lines[c.start_line - 1 : c.end_line]
        assert c.end_line - c.start_line + 1 <= MAX_LINES
        expect = c.end_line + 1
    assert expect == len(lines) + 1


def _filler(n: int, word: str = "text") -> str:
    return "".join(f"{word} line {i} of a paragraph.\n" + ("\n" if i % 5 == 4 else "") for i in range(n))


def test_fixture_sections_have_heading_paths() -> None:
    text = FIXTURE.read_text()
    result = _md(text)
    # front matter and intro before the first heading, then the document (it fits the bounds)
    assert _spans(result) == [(1, 6, "block", ""), (7, 36, "section", "repolens")]
    assert [(s.kind, s.qualname, s.start_line, s.end_line) for s in result.symbols] == [
        ("section", "repolens", 7, 36),
        ("section", "repolens > Install", 11, 28),
        ("section", "repolens > Install > From PyPI", 13, 19),
        ("section", "repolens > Install > From source", 20, 28),
        ("section", "repolens > Usage", 29, 32),
        ("section", "repolens > Configuration", 33, 36),
    ]
    assert result.symbols[0].signature == "# repolens"
    _assert_tiles(result, text)


def test_headings_inside_fences_and_front_matter_are_ignored() -> None:
    headings, _ = scan(source_lines(FIXTURE.read_text()))
    assert [(h.row + 1, h.level, h.title) for h in headings] == [
        (7, 1, "repolens"),
        (11, 2, "Install"),
        (13, 3, "From PyPI"),
        (20, 3, "From source"),
        (29, 2, "Usage"),
        (33, 2, "Configuration"),
    ]


def test_big_document_is_cut_into_sections() -> None:
    text = (
        "# Guide\n\nIntro.\nIt explains\nall of it.\n\n## Install\n\n"
        + _filler(60)
        + "\n## Usage\n\n"
        + "### Basics\n\n"
        + _filler(50)
        + "\n### Advanced\n\n"
        + _filler(50)
    )
    result = _md(text)
    assert [(c.kind, c.qualname) for c in result.chunks] == [
        ("section", "Guide"),
        ("section", "Guide > Install"),
        ("section", "Guide > Usage > Basics"),
        ("section", "Guide > Usage > Advanced"),
    ]
    # "## Usage" alone is no chunk: it leads into its first subsection
    basics = result.chunks[2]
    assert basics.text.startswith("## Usage\n\n### Basics")
    _assert_tiles(result, text)


def test_big_section_is_windowed_with_its_heading_repeated() -> None:
    text = "# Notes\n\n## Log\n\n" + _filler(400)
    result = _md(text)
    parts = [c for c in result.chunks if c.qualname == "Notes > Log"]
    assert len(parts) >= 4
    for p in parts[1:]:
        assert repeated_header_lines(p) == 1 and p.text.startswith("## Log\n")
        assert p.signature == "## Log"
    # parts start at paragraph boundaries
    lines = source_lines(text)
    assert all(lines[p.start_line - 2] == "" for p in parts[1:])
    _assert_tiles(result, text)


def test_fences_are_never_cut_when_avoidable() -> None:
    fence = "```python\n" + "".join(f"x{i} = {i}\n\n" for i in range(30)) + "```\n"
    text = "# API\n\n" + (_filler(20) + "\n" + fence + "\n") * 6
    result = _md(text)
    lines = source_lines(text)
    inside, depth = set(), False
    for i, line in enumerate(lines, 1):
        if line.startswith("```"):
            depth = not depth
            continue
        if depth:
            inside.add(i)
    assert len(result.chunks) > 1
    assert not [c.start_line for c in result.chunks if c.start_line in inside]
    _assert_tiles(result, text)


def test_a_fence_bigger_than_the_bounds_is_cut() -> None:
    text = "# Dump\n\n```\n" + "".join(f"row {i}\n" for i in range(400)) + "```\n"
    result = _md(text)
    assert len(result.chunks) >= 4
    _assert_tiles(result, text)


def test_setext_headings() -> None:
    text = "Title\n=====\n\nSome text.\n\nPart\n----\n\nMore.\n\n---\n\nNot a heading above.\n"
    result = _md(text)
    assert [(s.qualname, s.start_line, s.end_line) for s in result.symbols] == [
        ("Title", 1, 13),
        ("Title > Part", 6, 13),
    ]


def test_small_sibling_sections_are_packed() -> None:
    text = "# Changelog\n\n" + "".join(f"## 1.{i}\n\n- fix {i}\n\n" for i in range(60))
    result = _md(text)
    assert len(result.symbols) == 61
    assert len(result.chunks) < 10
    assert result.chunks[1].qualname.startswith("Changelog > 1.")
    _assert_tiles(result, text)


def test_empty_and_heading_free_documents() -> None:
    assert _md("").chunks == []
    result = _md("just text\n\nmore\n")
    assert _spans(result) == [(1, 3, "block", "")]
    assert result.symbols == []
