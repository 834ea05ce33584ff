"""The ranked file overview: files scored by their hits and role, with the evidence, within a budget."""

from __future__ import annotations

import pytest

from repolens.chunking import Chunk
from repolens.reply.files import POINTER_EVIDENCE_HITS, FileEntry, file_overview, ranked_files, render_files
from repolens.roles import OVERVIEW_WEIGHT
from repolens.search.hits import Hit
from repolens.search.query import parse_query

QUERY = parse_query("where does parse_url split the host")


def hit(path: str, score: float, text: str, start: int = 1, **chunk: str) -> Hit:
    lines = text.count("\n") + 1
    return Hit(0, Chunk(path, start, start + lines - 1, text, "python", **chunk), score, {}, {})


def test_a_file_scores_its_best_hit_then_each_next_one_half_as_much() -> None:
    hits = [
        hit("src/url.py", 4.0, "def parse_url(url):", 10),
        hit("src/url.py", 2.0, "host = rest", 30),
        hit("src/url.py", 1.0, "return host", 40),
    ]
    (entry,) = file_overview(hits, QUERY)
    assert entry.score == 4.0 + 2.0 * 0.5 + 1.0 * 0.25
    assert (entry.hits, entry.best) == (3, (10, 10))


def test_the_role_scales_a_file_by_the_overview_weight() -> None:
    entries = file_overview([hit("tests/test_url.py", 4.0, "x"), hit("src/url.py", 3.5, "x")], QUERY)
    assert [(e.path, e.role) for e in entries] == [("src/url.py", "source"), ("tests/test_url.py", "test")]
    assert entries[1].score == 4.0 * OVERVIEW_WEIGHT["test"]


def test_the_evidence_names_terms_as_written_and_named_definitions() -> None:
    hits = [
        hit(
            "src/url.py",
            4.0,
            "def parse_url(url):\n    host = url",
            kind="function",
            name="parse_url",
            qualname="urls.parse_url",
        ),
        hit("src/other.py", 1.0, "x = 1", kind="function", name="other", qualname="other"),
    ]
    entry = file_overview(hits, QUERY)[0]
    assert entry.terms == ("parse_url", "parse", "url", "host")
    assert entry.terms_total == len(QUERY.terms)
    assert entry.defines == ("urls.parse_url",)
    assert entry.line() == (
        "src/url.py (score 4.00, 1 hit, best 1-2): 4 of 5 terms, defines urls.parse_url, source file"
    )


def test_a_pointer_counts_the_terms_of_the_lines_it_names_the_overview_of_the_best_hits() -> None:
    """The overview describes a file (its best few hits); a packet's pointer
    names the lines of the file's best hit, and says what those lines hold."""
    hits = [hit("src/url.py", 4.0, "def parse_url(url):", 10), hit("src/url.py", 2.0, "host = rest", 30)]
    (overview,) = file_overview(hits, QUERY)
    (pointer,) = ranked_files(hits, QUERY, evidence_hits=POINTER_EVIDENCE_HITS)
    assert overview.terms == ("parse_url", "parse", "url", "host")
    assert pointer.terms == ("parse_url", "parse", "url")
    assert pointer.best == overview.best == (10, 10)


def test_the_symbol_leg_names_what_a_hit_defines() -> None:
    found = Hit(0, Chunk("src/a.py", 1, 1, "x", "python"), 1.0, {}, {"defines": "A.parse_url"})
    assert file_overview([found], QUERY)[0].defines == ("A.parse_url",)


def test_limit_keeps_the_best_files() -> None:
    hits = [hit(f"src/m{i}.py", float(i), "x") for i in range(5)]
    assert [e.path for e in file_overview(hits, QUERY, limit=2)] == ["src/m4.py", "src/m3.py"]


def entry(path: str) -> FileEntry:
    return FileEntry(path, 1.0, 1, (), 2, (), "source", (1, 2))


@pytest.mark.parametrize(
    ("max_chars", "expected"),
    [
        (
            1000,
            "1. a.py (score 1.00, 1 hit, best 1-2): 0 of 2 terms, source file\n"
            "2. b.py (score 1.00, 1 hit, best 1-2): 0 of 2 terms, source file",
        ),
        (
            100,
            "1. a.py (score 1.00, 1 hit, best 1-2): 0 of 2 terms, source file\n... 1 more file did not fit",
        ),
        (40, "... 2 more files did not fit"),
    ],
)
def test_render_stays_within_the_budget_and_counts_what_did_not_fit(max_chars: int, expected: str) -> None:
    assert render_files([entry("a.py"), entry("b.py")], max_chars) == expected


def test_render_without_files_says_so() -> None:
    assert render_files([], 100, footer="query_id abc") == "No matching files found.\nquery_id abc"
