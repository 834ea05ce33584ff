"""The one entry of search/: legs bound from settings, fused, notes filled by the search."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from repolens.index.build import build_index
from repolens.search.filters import Filters
from repolens.search.query import parse_query
from repolens.search.ranking import RankingOptions, search, search_index
from repolens.settings import load_settings
from repolens.store import open_store


def _reader(root: Path):
    build_index(root)
    return open_store(root, None).open_reader()


def test_search_ranks_with_the_settings_and_is_search_index_on_them(sample_repo: Path):
    reader = _reader(sample_repo)
    try:
        settings = load_settings(sample_repo)
        outcome = search(reader, sample_repo, "where do sessions expire", settings, Filters())
        assert outcome.hits and outcome.notes == []
        assert outcome.query.text == "where do sessions expire"
        direct = search_index(
            reader,
            parse_query("where do sessions expire", weighted=settings.query_weights),
            limit=100,
            options=RankingOptions.from_settings(settings),
        )
        assert [(h.cid, h.score, h.factors) for h in outcome.hits] == [
            (h.cid, h.score, h.factors) for h in direct.hits
        ]
    finally:
        reader.close()


def test_search_keeps_its_filters_for_remembering(sample_repo: Path):
    reader = _reader(sample_repo)
    try:
        filters = Filters(subpath="src")
        outcome = search(reader, sample_repo, "session", load_settings(sample_repo), filters)
        assert outcome.filters is filters
        assert outcome.hits and all(h.chunk.path.startswith("src/") for h in outcome.hits)
    finally:
        reader.close()


def test_a_missing_leg_is_a_note_of_the_search_itself(sample_repo: Path, monkeypatch):
    reader = _reader(sample_repo)
    try:
        settings = replace(load_settings(sample_repo), vectors=True)
        monkeypatch.setenv("REPOLENS_RERANK_PROVIDER", "local")
        monkeypatch.setenv("REPOLENS_RERANK_PATH", str(sample_repo / "no-such-model"))
        outcome = search(reader, sample_repo, "session expire", settings, Filters())
        assert outcome.hits
        assert outcome.notes[0] == (
            "dense leg missing: this index has no vectors yet; run `repolens index` to embed"
        )
        assert outcome.notes[1].startswith("rerank leg missing: ")
        assert len(outcome.notes) == 2
    finally:
        reader.close()


def test_a_search_that_lost_a_leg_has_an_id_of_its_own(sample_repo: Path, monkeypatch):
    """With the embedding model gone, the search ranked without its dense
    leg under the same query_id as the search with it: the id recalled
    either ranking, whichever was asked last."""
    from repolens import service

    service.index_repo(sample_repo, vectors=True)
    whole = service.search_code("where do sessions expire", sample_repo, auto_index=False)
    monkeypatch.setenv("REPOLENS_EMBED_MODEL_PATH", str(sample_repo / "no-such-model.onnx"))
    degraded = service.search_code("where do sessions expire", sample_repo, auto_index=False)
    assert degraded.text.startswith("note: dense leg missing: ")
    assert degraded.query_id != whole.query_id


def test_filters_that_leave_no_hit_say_so(sample_repo: Path):
    """--lang go on a repository without Go said "No matching chunks found."
    as a question that matches nothing does (only --path said why)."""
    from repolens import service

    reply = service.search_code("session expire", sample_repo, language="go", kind="struct")
    said = (
        "note: no hit passes the filters language go; kind struct: leave them out to see what the question "
    )
    assert reply.text.startswith(said + "finds")
    assert "no hit passes" not in service.search_code("session expire", sample_repo, language="python").text
