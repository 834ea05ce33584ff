"""The reply-budget module: the marker and trailer wordings, and the helpers that keep replies in budget."""

from __future__ import annotations

from repolens.budget import (
    BLOCK_SEP,
    REPLY_CUT,
    TRAILER_RESERVE,
    cut_to_budget,
    did_not_fit,
    fit_lines,
    lines_cut_marker,
    omitted_marker,
    trailer_reserve,
    truncated_marker,
)


def test_marker_wordings_are_the_contract():
    assert omitted_marker(3, 3) == "... (line 3 omitted)"
    assert omitted_marker(3, 9) == "... (lines 3-9 omitted)"
    assert truncated_marker("a.py", 4, 9, 500) == (
        "... (truncated at 500 chars; use read_snippet a.py 4 9 to expand)"
    )
    assert lines_cut_marker("a.py", 301, 400, 300) == (
        "... (cut at 300 lines; use read_snippet a.py 301 400 to continue)"
    )
    assert REPLY_CUT == "... (cut to fit the reply budget)"


def test_trailer_names_what_fits_then_counts_the_rest():
    refs = ["a.py:1-2", "b.py:3-4", "c.py:5-6"]
    assert did_not_fit("hit", refs, 1000) == "... 3 more hits did not fit: a.py:1-2, b.py:3-4, c.py:5-6"
    assert did_not_fit("hit", refs, 50) == "... 3 more hits did not fit: a.py:1-2, and 2 more"
    assert did_not_fit("block", refs, 30) == "... 3 more blocks did not fit"
    assert did_not_fit("hit", refs, 10) == ""
    assert did_not_fit("hit", [], 1000) == ""


def test_trailer_reserve_is_the_trailer_and_its_separator_capped():
    refs = [f"src/module_{i}.py:1-40 (score 1.00)" for i in range(40)]
    reserve = trailer_reserve("hit", refs, 10_000)
    assert reserve == len(BLOCK_SEP) + len(did_not_fit("hit", refs, TRAILER_RESERVE))
    assert reserve <= len(BLOCK_SEP) + TRAILER_RESERVE
    assert trailer_reserve("hit", refs, 60) == len(BLOCK_SEP) + len("... 40 more hits did not fit")
    assert trailer_reserve("hit", [], 10_000) == 0
    assert trailer_reserve("hit", refs, 5) == 0


def test_fit_lines_keeps_whole_lines_and_names_the_first_line_left_out():
    body = [(f"{n}: {'x' * 20}", n) for n in range(1, 11)]
    text, cut = fit_lines("head", body, 10_000, lambda n: f"... from {n}", 10)
    assert not cut and text.splitlines()[1:] == [t for t, _ in body]
    text, cut = fit_lines("head", body, 100, lambda n: f"... from {n}", 10)
    assert cut and len(text) <= 100
    lines = text.splitlines()
    assert lines[0] == "head" and lines[-1] == f"... from {len(lines) - 1}"
    text, cut = fit_lines("h" * 50, body, 20, lambda n: f"... from {n}", 10)
    assert (text, cut) == ("h" * 20, True)  # not even the head and the marker fit


def test_cut_to_budget_ends_with_the_marker_within_budget():
    assert cut_to_budget("short", 200) == "short"
    cut = cut_to_budget("y" * 500, 200)
    assert len(cut) == 200 and cut.endswith("\n" + REPLY_CUT)


def test_a_count_of_a_noun_in_y_says_ies():
    """The impact trailer said "31 more entrys did not fit"."""
    from repolens.budget import counted, more_did_not_fit

    assert [counted(n, "entry") for n in (1, 2)] == ["1 entry", "2 entries"]
    assert counted(2, "key") == "2 keys" and counted(3, "match", "matches") == "3 matches"
    assert more_did_not_fit("entry", 31) == "... 31 more entries did not fit"


def test_a_header_cut_to_fit_keeps_the_file_name_and_its_span():
    """A long path's header was cut from its end: the file name and the
    lines it cites were what went."""
    from repolens.budget import header_and_line

    path = "/".join(f"very_long_directory_name_{i:02d}" for i in range(8)) + "/module.py"
    header = f"{path}:1-2 function quuxify_thing (score 1.00)"
    text = header_and_line(header, f"{path}:1-2 (score 1.00)", "1: def quuxify_thing(a):", 1, 200)
    first, line = text.split("\n")
    assert len(text) <= 200 and first.startswith("...") and first.endswith("/module.py:1-2 (score 1.00)")
    assert line.startswith("1: def quuxify")
