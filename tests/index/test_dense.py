"""The dense leg: vectors after the lexical index, reuse, resume, fusion, notes.

Uses the deterministic fake embedder (feature hashing) so the tests run
fast and offline; the real model's loading is covered in test_embed.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repolens import service
from repolens.errors import EmbedderError
from repolens.index.build import build_index
from repolens.store import open_store
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fake_embedder(monkeypatch):
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    monkeypatch.setenv("REPOLENS_VECTORS", "1")
    yield
    readers.clear()


def test_index_fills_vectors_after_the_lexical_index(sample_repo: Path):
    report = build_index(sample_repo)
    assert report.vectors is not None
    assert (report.vectors.done, report.vectors.total) == (report.chunks, report.chunks)
    assert report.vectors.embedded == report.chunks
    reader = open_store(sample_repo).open_reader()
    try:
        meta = reader.meta()
        assert meta["embed_identity"].startswith("fake:")
        assert meta["embed_style"] == "header+idents"
        assert reader.vector_count() == report.chunks
    finally:
        reader.close()
    assert "vectors: " in report.summary() and "(100%, complete)" in report.summary()


def test_refresh_embeds_only_the_changed_function(sample_repo: Path):
    build_index(sample_repo)
    forms = sample_repo / "src/web/forms.py"
    forms.write_text(forms.read_text().replace("return True", 'return "saved"'))
    refreshed = build_index(sample_repo)
    assert refreshed.mode == "refresh" and refreshed.changed == 1
    assert refreshed.vectors.embedded == 1  # handle_submit changed; parse_url kept its vector
    assert refreshed.vectors.done == refreshed.vectors.total


def test_rebuild_reuses_vectors_of_unchanged_chunks(sample_repo: Path):
    build_index(sample_repo)
    (sample_repo / "src/web/forms.py").write_text("def brand_new_function():\n    return 42\n")
    rebuilt = build_index(sample_repo, rebuild=True)
    assert rebuilt.mode == "build"
    assert rebuilt.vectors.embedded == 1
    assert rebuilt.vectors.reused == rebuilt.chunks - 1


def test_interrupted_embedding_keeps_its_batches_and_search_says_so(make_repo):
    files = {f"mod{i:02d}.py": f"def handler_{i}(request):\n    return 'reply {i}'\n" for i in range(100)}
    root = make_repo(files)
    calls = []

    def interrupt_after_first_batch(done: int, total: int) -> None:
        calls.append(done)
        raise KeyboardInterrupt

    report = build_index(root, vector_progress=interrupt_after_first_batch)
    assert report.vectors.interrupted
    assert 0 < report.vectors.done < report.vectors.total
    reply = service.search_code("handler request reply", root)
    assert reply.notes and reply.notes[0].startswith(f"dense leg covers {report.vectors.done} of ")
    assert reply.text.startswith("note: dense leg covers")
    readers.clear()
    resumed = build_index(root)
    assert resumed.vectors.embedded == report.vectors.total - report.vectors.done  # only the rest
    assert resumed.vectors.done == resumed.vectors.total

    notes = service.search_code("handler request reply", root).notes
    assert not [n for n in notes if n.startswith("dense")]  # (its one commit, 100 files, is no history)


def test_dense_leg_ranks_and_is_explained_per_hit(sample_repo: Path):
    build_index(sample_repo)
    reply = service.search_code("validate submitted form email", sample_repo, explain=True)
    block = reply.packet.rendered[0].block
    assert block.path == "src/web/forms.py"
    explain = reply.text.splitlines()[1]
    assert explain.startswith("explain: lexical #1 ")
    assert ", dense #" in explain and "x prior 1.00 (source)" in explain
    assert reply.notes == ()


def test_searching_with_another_model_is_refused_with_the_fix(sample_repo: Path, monkeypatch):
    build_index(sample_repo)
    monkeypatch.setenv("REPOLENS_EMBED_DIM", "64")
    reply = service.search_code("session expire", sample_repo)
    assert reply.notes[0].startswith("dense leg missing: the index was embedded with fake:")
    assert "re-run `repolens index --rebuild`" in reply.notes[0]
    assert "src/auth/session.py" in reply.text  # the lexical legs still answer


def test_no_vectors_index_is_lexical_only_and_quiet_when_vectors_are_off(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_VECTORS", "0")
    report = build_index(sample_repo)
    assert report.vectors is None
    assert service.search_code("session expire", sample_repo).notes == ()


def test_index_without_vectors_when_they_are_expected_says_the_leg_is_missing(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_VECTORS", "0")
    build_index(sample_repo)
    monkeypatch.setenv("REPOLENS_VECTORS", "1")
    reply = service.search_code("session expire", sample_repo)
    assert reply.notes == ("dense leg missing: this index has no vectors yet; run `repolens index` to embed",)


def test_bad_embedder_config_fails_before_any_work(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "local")
    monkeypatch.setenv("REPOLENS_EMBED_PATH", str(sample_repo / "no-such-model"))
    with pytest.raises(EmbedderError):
        build_index(sample_repo)
    assert open_store(sample_repo).current() is None


@pytest.mark.parametrize("fusion", ["boost", "rrf", "rerank"])
def test_every_fusion_answers(sample_repo: Path, monkeypatch, fusion: str):
    monkeypatch.setenv("REPOLENS_FUSION", fusion)
    build_index(sample_repo)
    data = service.search_code("where do sessions expire", sample_repo, mode="json").to_json()
    assert data["hits"][0]["path"] == "src/auth/session.py"


def test_a_rebuild_without_vectors_says_it_dropped_them(sample_repo: Path, monkeypatch: pytest.MonkeyPatch):
    """A changed chunker rebuilds the index; with ``vectors`` off now (an
    index embedded by ``--vectors`` once), the rebuilt one has none: said,
    not silent."""
    build_index(sample_repo)
    monkeypatch.delenv("REPOLENS_VECTORS")
    (sample_repo / ".repolens.toml").write_text('chunker = "windows"\n')
    report = build_index(sample_repo)
    assert report.mode == "build" and report.vectors is None
    assert report.summary().splitlines()[-1] == (
        "vectors: none in the rebuilt index, which had them: index with --vectors, or set vectors = true, "
        "to embed it"
    )
