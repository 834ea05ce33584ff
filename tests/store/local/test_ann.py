"""The HNSW graph over the vectors (repolens.store.local.ann): built when vectors are
complete, used by the dense leg, patched after a refresh, exact meanwhile.

The threshold is lowered to a handful of vectors so a small repository
gets a graph; the fake embedder keeps it offline and deterministic.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from repolens import service
from repolens.index.build import build_index
from repolens.index.status import index_status
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.store.local import ann
from repolens.store.local.dense import DenseIndex
from repolens.store.local.writer import LocalWriter

pytest.importorskip("usearch.index", reason="usearch is part of the test extra")

FILES = {
    f"pkg/mod{i:02d}.py": f"def handler_{i}(request):\n    return 'reply {i} {'x' * i}'\n" for i in range(40)
}


@pytest.fixture(autouse=True)
def _vectors(monkeypatch):
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    monkeypatch.setenv("REPOLENS_VECTORS", "1")
    monkeypatch.setenv("REPOLENS_ANN_MIN_VECTORS", "10")
    yield
    readers.clear()


def _handle(root: Path) -> LocalWriter:
    store = open_store(root)
    return store.open_writer(store.current())  # the tests play the writer


def _query(handle: LocalWriter) -> np.ndarray:
    from repolens.models import make_embedder

    embedder = make_embedder({"provider": "fake"})
    return embedder.embed_query("handler 7 request reply")


def test_graph_is_built_with_the_vectors_and_answers_like_exact_search(make_repo):
    root = make_repo(FILES)
    report = build_index(root)
    assert "HNSW graph built over 40 vectors" in report.summary()
    handle = _handle(root)
    try:
        assert (handle.gen_dir / ann.ANN_FILE).is_file()
        assert ann.state(handle, 10).usable
        dense = DenseIndex()
        assert dense.uses_graph(handle)
        q = _query(handle)
        from_graph = dense.search(handle, q, 5)
        matrix = DenseIndex()
        matrix._load(handle, matrix=True)
        sims = matrix._matrix @ q
        exact = [int(matrix._cids[i]) for i in np.argsort(-sims)[:5]]
        true_sim = dict(zip(matrix._cids.tolist(), sims.tolist(), strict=True))
        # Approximate by design: near-ties may swap, but the best match and
        # most of the top 5 agree, and every similarity reported is the real one.
        assert from_graph[0][0] == exact[0]
        assert len({cid for cid, _ in from_graph} & set(exact)) >= 4
        for cid, sim in from_graph:
            assert sim == pytest.approx(true_sim[cid], abs=1e-2)
    finally:
        handle.close()
    status = service.index_status(root)
    assert "dense search: HNSW graph over 40 vectors (current)" in status.render()


def test_refresh_patches_the_graph_and_exact_search_covers_the_gap(make_repo):
    root = make_repo(FILES)
    build_index(root)
    (root / "pkg/mod03.py").write_text("def renamed_handler(request):\n    return 'changed'\n")
    (root / "pkg/new.py").write_text("def fresh_handler(request):\n    return 'new'\n")

    # Between the refresh's lexical commit and the vectors, the graph is behind:
    # the dense leg searches every vector instead, so nothing new is missed.
    handle = _handle(root)
    try:
        with handle.db:
            handle.db.execute("UPDATE meta SET value = value || 'x' WHERE key = 'vectors_version'")
        assert not ann.state(handle, 10).usable
        assert not DenseIndex().uses_graph(handle)
        assert DenseIndex().search(handle, _query(handle), 3)
    finally:
        handle.close()

    report = build_index(root)
    assert report.vectors.embedded == 2
    assert "HNSW graph updated (+2 -1) over 41 vectors" in report.summary()
    handle = _handle(root)
    try:
        from usearch.index import Index

        graph = Index.restore(str(handle.gen_dir / ann.ANN_FILE))
        cids = {r[0] for r in handle.db.execute("SELECT cid FROM vectors")}
        assert set(np.asarray(graph.keys).tolist()) == cids
        assert DenseIndex().uses_graph(handle)
    finally:
        handle.close()


def test_below_the_threshold_no_graph_and_status_says_exact(make_repo, monkeypatch):
    monkeypatch.setenv("REPOLENS_ANN_MIN_VECTORS", "1000")
    root = make_repo(FILES)
    report = build_index(root)
    assert "HNSW" not in report.summary()
    handle = _handle(root)
    try:
        assert not (handle.gen_dir / ann.ANN_FILE).exists()
        store = open_store(root)
        assert (
            "exact search (40 vectors, graph from 1,000)" in index_status(store, readers.get(store)).render()
        )
    finally:
        handle.close()


def test_turning_the_graph_off_removes_it_on_the_next_index(make_repo, monkeypatch):
    root = make_repo(FILES)
    build_index(root)
    monkeypatch.setenv("REPOLENS_ANN_MIN_VECTORS", "0")
    build_index(root)
    handle = _handle(root)
    try:
        assert not (handle.gen_dir / ann.ANN_FILE).exists()
        assert not DenseIndex().uses_graph(handle)
    finally:
        handle.close()


def test_a_damaged_graph_file_falls_back_to_exact_search(make_repo):
    root = make_repo(FILES)
    build_index(root)
    handle = _handle(root)
    try:
        (handle.gen_dir / ann.ANN_FILE).write_bytes(b"not a graph")
        dense = DenseIndex()
        assert not dense.uses_graph(handle)
        assert len(dense.search(handle, _query(handle), 5)) == 5
    finally:
        handle.close()
    reply = service.search_code("handler request reply", root)
    assert reply.packet is not None and reply.packet.rendered and not reply.notes
    report = build_index(root)  # the next index notices and rebuilds it
    assert "HNSW graph built over 40 vectors" in report.summary()
    handle = _handle(root)
    try:
        assert DenseIndex().uses_graph(handle)
    finally:
        handle.close()


def test_an_index_with_a_graph_is_searched_exactly_where_the_ann_extra_is_missing(make_repo):
    """An index built with the `ann` extra, read by a repolens installed without it
    (another machine, a server's own venv): exact search answers, status says why."""
    from without_modules import repolens_without

    root = make_repo(FILES)
    assert "HNSW graph built" in build_index(root).summary()

    def run(command: list[str], *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args, "--root", str(root)], capture_output=True, text=True, timeout=60, check=False
        )

    with_graph = run([sys.executable, "-m", "repolens"], "search", "handler 7 request reply")
    searched = run(repolens_without("usearch"), "search", "handler 7 request reply")
    assert searched.returncode == 0, searched.stderr
    assert searched.stdout.splitlines()[0] == with_graph.stdout.splitlines()[0]
    status = run(repolens_without("usearch"), "status")
    assert "dense search: exact search over 40 vectors: install 'repolens[ann]' (usearch)" in status.stdout


def test_usearch_and_onnxruntime_load_together():
    """usearch 2.26 made onnxruntime crash on import when loaded first
    (hence the pin): load them in that order with the bundled model."""
    code = (
        "import repolens.store.local.ann as a, usearch.index\n"
        "from repolens.models import make_embedder\n"
        "v = make_embedder({}).embed_query('parse a url')\n"
        "print(len(v))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-500:]
    assert out.stdout.strip() == "384"
