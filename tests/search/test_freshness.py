"""Replies never cite line numbers that no longer hold without saying so."""

from __future__ import annotations

from pathlib import Path

import pytest

from repolens import service
from repolens.index.build import build_index
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _shown_lines(text: str) -> list[tuple[int, str]]:
    out = []
    for line in text.splitlines():
        head, sep, rest = line.partition(": ")
        if sep and head.isdigit():
            out.append((int(head), rest))
    return out


def test_moved_chunk_is_cited_at_its_current_lines(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_CHUNK_MERGE_LINES", "2")  # SessionStore is a chunk of its own
    build_index(sample_repo)

    session = sample_repo / "src/auth/session.py"
    session.write_text("# one\n# two\n# three\n" + session.read_text())
    reply = service.search_code("session expired", sample_repo, top_k=1)
    assert reply.notes == ("1 cited file changed since indexing; `repolens index` refreshes the index",)
    current = session.read_text().splitlines()
    shown = _shown_lines(reply.packet.rendered[0].text)
    assert shown, reply.text
    for number, text in shown:
        assert current[number - 1] == text
    assert "stale" not in reply.packet.rendered[0].text  # same text, true lines: nothing to warn about


def test_changed_definition_is_marked_stale_with_its_current_text(sample_repo: Path):
    build_index(sample_repo)
    session = sample_repo / "src/auth/session.py"
    session.write_text(
        session.read_text().replace('raise KeyError("session expired")', "return None  # expired")
    )
    reply = service.search_code("SessionStore load expired", sample_repo, top_k=1, explain=False)
    header = reply.packet.rendered[0].text.splitlines()[0]
    assert header.endswith("(stale: file changed since indexing)")
    assert "return None  # expired" in reply.packet.rendered[0].text
    current = session.read_text().splitlines()
    for number, text in _shown_lines(reply.packet.rendered[0].text):
        assert current[number - 1] == text


def test_deleted_file_is_marked(sample_repo: Path):
    build_index(sample_repo)
    (sample_repo / "src/auth/session.py").unlink()
    reply = service.search_code("SessionStore", sample_repo, top_k=1)
    assert reply.packet.rendered[0].text.splitlines()[0].endswith("(stale: file deleted since indexing)")
    assert reply.text.startswith("note: 1 cited file changed since indexing")
