"""Finding focused context (search/focus.py): matches, enclosing definitions, nesting."""

from __future__ import annotations

from pathlib import Path

from repolens.chunking import Chunk
from repolens.index.build import build_index
from repolens.search.focus import Candidate, find_candidates, resolve_nesting
from repolens.search.hits import matching_lines
from repolens.settings import Settings
from repolens.store import open_store

BASKET = """class Basket:
    limit = 50

    def put(self, fruit):
        if len(self.fruits) >= self.limit:
            raise ValueError("basket overflows")
        self.fruits.append(fruit)
"""


def test_a_split_parts_repeated_header_never_matches():
    # part 2 of a split definition: its first text line repeats the header (line 1)
    part = Chunk(
        "a.py", 21, 22, "def crunch(values):\n    total += quasar(values)\n    return total", "python"
    )
    assert matching_lines(part, frozenset({"crunch"})) == []
    assert matching_lines(part, frozenset({"quasar"})) == [21]
    assert matching_lines(part, frozenset({"total"})) == [21, 22]


def test_matches_map_to_their_innermost_definition(make_repo):
    root: Path = make_repo({"shop/basket.py": BASKET, "shop/other.py": "def unrelated():\n    return 1\n"})
    build_index(root)
    reader = open_store(root, None).open_reader()
    try:
        found = find_candidates(reader, root, "basket overflows", Settings(), (), 50)
        assert found.subpaths == ()
        assert found.ranked_files[0] == "shop/basket.py"
        by_name = {c.qualname: c for c in found.by_file["shop/basket.py"]}
        put = by_name["Basket.put"]
        assert (put.kind, put.start, put.end) == ("method", 4, 7)
        assert 6 in put.hit_lines  # raise ValueError("basket overflows")
        within = find_candidates(reader, root, "basket overflows", Settings(), ("shop/other.py",), 50)
        assert within.subpaths == ("shop/other.py",)
        assert set(within.by_file) <= {"shop/other.py"}
    finally:
        reader.close()


def _cand(start: int, end: int, score: float, lines: set[int]) -> Candidate:
    return Candidate("a.py", start, end, "function", f"f{start}", "", "python", score, lines)


def test_an_outer_definition_absorbs_a_nested_one_when_it_fits_whole():
    outer, inner = _cand(1, 50, 1.0, {2}), _cand(10, 20, 3.0, {12})
    kept = resolve_nesting([inner, outer], lambda c: 100 * (c.end - c.start + 1), 5000)
    assert kept == [outer]
    assert (outer.score, outer.hit_lines, outer.holes) == (3.0, {2, 12}, [])


def test_a_nested_definition_stays_and_is_a_hole_of_an_outer_too_big():
    outer, a, b = _cand(1, 50, 1.0, {2}), _cand(10, 20, 3.0, {12}), _cand(21, 30, 2.0, {25})
    kept = resolve_nesting([a, b, outer], lambda c: 100 * (c.end - c.start + 1), 1000)
    assert kept == [outer, a, b]
    assert outer.holes == [(10, 30)]  # touching ranges are one hole
    assert outer.hit_lines == {2}
