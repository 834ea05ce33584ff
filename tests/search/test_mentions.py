"""Mentions: which indexed files a query's paths, file names, modules and scopes point at."""

from __future__ import annotations

import math

import pytest

from repolens.search import mentions
from repolens.search.mentions import PathIndex, path_index

PATHS = [
    "sympy/matrices/dense.py",
    "sympy/matrices/sparse.py",
    "src/walk.rs",
    "tests/walk.rs",
    "sphinx/ext/autodoc/__init__.py",
    "src/validator/mod.rs",
    "lib/validator.js",
    "README.md",
]


@pytest.fixture(scope="module")
def index() -> PathIndex:
    return PathIndex(PATHS)


@pytest.mark.parametrize(
    "mention",
    [
        "/home/u/.local/lib/python3.7/site-packages/sympy/matrices/dense.py",  # another machine's prefix
        "C:\\work\\sympy\\matrices\\dense.py",  # backslashes
        "matrices/dense.py",
        "matrices/dense",  # no extension
    ],
)
def test_two_trailing_components_name_a_file_at_full_strength(index: PathIndex, mention: str) -> None:
    assert index.match([mention]) == {"sympy/matrices/dense.py": 1.0}


def test_a_dotted_module_names_its_file_or_its_package(index: PathIndex) -> None:
    assert index.match(["sphinx.ext.autodoc"]) == {"sphinx/ext/autodoc/__init__.py": 1.0}
    assert index.match(["sympy.matrices.sparse"]) == {"sympy/matrices/sparse.py": 1.0}
    assert index.match(["np.array"]) == {}


def test_a_bare_file_name_is_weaker_and_shared_among_its_namesakes(index: PathIndex) -> None:
    assert index.match(["README.md"]) == {"README.md": 0.6}
    shared = 0.6 / math.sqrt(2)
    assert index.match(["walk.rs"]) == {"src/walk.rs": shared, "tests/walk.rs": shared}
    assert index.match(["nothing.py", "validator"]) == {}  # unknown file; a bare word is no mention


def test_a_scope_names_a_folder_or_a_stem_anywhere(index: PathIndex) -> None:
    shared = 0.4 / math.sqrt(2)
    assert index.match([], ["validator"]) == {"src/validator/mod.rs": shared, "lib/validator.js": shared}


def test_the_strongest_mention_of_a_file_wins(index: PathIndex) -> None:
    found = index.match(["src/walk.rs", "walk.rs"], ["src"])
    assert found["src/walk.rs"] == 1.0
    assert found["tests/walk.rs"] == 0.6 / math.sqrt(2)


def test_a_generation_builds_its_index_once() -> None:
    loads: list[str] = []

    def load() -> list[str]:
        loads.append("x")
        return PATHS

    first = path_index("test-mentions-gen-1", load)
    assert path_index("test-mentions-gen-1", load) is first
    assert loads == ["x"]
    assert path_index("test-mentions-gen-2", load) is not first


def test_a_server_of_many_repositories_keeps_every_one_s_index() -> None:
    """A search across 200 repositories (or a server answering about them in
    turn) built each one's index again on every question mentioning a path:
    the cache held 9 indexes, whatever their size."""
    loads: list[str] = []

    def load_for(key: str):
        return lambda: loads.append(key) or PATHS

    keys = [f"test-mentions-many-{i}" for i in range(30)]
    first = [path_index(key, load_for(key)) for key in keys]
    again = [path_index(key, load_for(key)) for key in keys]
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert loads == keys


def test_the_least_recently_used_go_when_the_paths_are_too_many(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mentions, "MAX_CACHED_PATHS", 2 * len(PATHS))
    loads: list[str] = []

    def ask(key: str) -> PathIndex:
        return path_index(key, lambda: loads.append(key) or PATHS)

    ask("test-mentions-lru-a"), ask("test-mentions-lru-b")
    ask("test-mentions-lru-a")  # used again: b is now the oldest
    ask("test-mentions-lru-c")  # three indexes' paths: one must go
    ask("test-mentions-lru-a"), ask("test-mentions-lru-c")
    assert loads == ["test-mentions-lru-a", "test-mentions-lru-b", "test-mentions-lru-c"]
    ask("test-mentions-lru-b")
    assert loads[-1] == "test-mentions-lru-b"
