"""Indexing a second branch copies what its sibling already holds: unchanged
files are not chunked again, and vectors are copied, not embedded again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from branches.branch_fixtures import DEVELOP_CHANGES, MAIN_FILES, SAME, Branches, make_branches
from repolens.index.build import build_index
from repolens.settings import Settings
from repolens.store import open_store
from repolens.store.postgres.connect import close_pools
from repolens.tokens import tokenize

# One chunk per definition, so that an unchanged function in a changed file is its own chunk.
SETTINGS = Settings(vectors=True, chunk_merge_lines=0)


@pytest.fixture
def branches(make_repo, git, write_tree) -> Branches:
    return make_branches(make_repo, git, write_tree)


@pytest.fixture(autouse=True)
def _fake_embedder(monkeypatch):
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")


def _content(store) -> dict[str, list[tuple[str, int, int, bytes | None]]]:
    """Every file's chunks (id, lines) with their vectors, and its symbols: what an index answers from."""
    reader = store.open_reader()
    try:
        out = {}
        for path in sorted(reader.paths()):
            chunks = reader.chunks_of_file(path)
            vectors = reader.vectors_of_chunks(c.chunk.id for c in chunks)
            symbols = [(s.qualname, s.kind, s.start_line) for s in reader.symbols_of_file(path)]
            out[path] = [
                (c.chunk.id, c.chunk.start_line, c.chunk.end_line, vectors.get(c.chunk.id)) for c in chunks
            ]
            out[path].append(tuple(symbols))  # type: ignore[arg-type]
        # the lexical documents: every field's tokens score the same chunks the same
        for term in tokenize("price label total amount invoice refund coupon cart shop module py"):
            found = reader.lexical([(term, 1.0)], {"path": 1.0, "name": 2.0, "sig": 1.5, "body": 1.0}, 50)
            ids = reader.chunks([cid for cid, _ in found])
            out[f"lexical {term}"] = sorted((ids[cid].chunk.id, round(score, 4)) for cid, score in found)
        return out
    finally:
        reader.close()


def test_a_second_branch_copies_unchanged_files_and_their_vectors(branches, store_factory, tmp_path: Path):
    main, develop = store_factory(branches.main), store_factory(branches.develop)
    first = build_index(branches.main, store=main, settings=SETTINGS, siblings=[])
    assert first.files_reused == 0 and first.vectors.embedded == first.chunks

    second = build_index(branches.develop, store=develop, settings=SETTINGS, siblings=[main])

    reader = main.open_reader()
    same_chunks = sum(len(reader.chunks_of_file(p)) for p in SAME)
    reader.close()
    assert second.files_reused == len(SAME) == 10
    assert second.chunks_reused == second.vectors_copied == same_chunks
    # Embedded: coupons.py's one chunk and billing.py's changed refund_policy;
    # billing.py's unchanged invoice_total takes main's vector by chunk id.
    assert (second.vectors.embedded, second.vectors.reused) == (2, 1)
    assert second.branch == "develop"
    assert "reused from sibling branches: 10 files, 30 chunks, 30 vectors" in second.summary()

    # What was copied is exactly what indexing develop alone makes.
    alone = open_store(branches.develop, tmp_path / "alone")
    build_index(branches.develop, store=alone, settings=SETTINGS, siblings=[])
    assert _content(develop) == _content(alone)


def test_a_sibling_with_other_chunking_is_not_copied_from(branches, store_factory):
    main, develop = store_factory(branches.main), store_factory(branches.develop)
    build_index(branches.main, store=main, settings=Settings(chunk_merge_lines=30), siblings=[])
    report = build_index(
        branches.develop, store=develop, settings=Settings(chunk_merge_lines=0), siblings=[main]
    )
    assert report.files_reused == 0 and report.files == len(MAIN_FILES)


@pytest.fixture
def pg_url(pg_db) -> str:
    """A fresh PostgreSQL database; its connections are closed after the test."""
    yield pg_db.url
    close_pools()


def test_one_database_reuses_vectors_across_repositories(make_repo, pg_url):
    """Two repositories (not branches of one) in one PostgreSQL database: a
    chunk the first embedded (same path, kind, name and text, same model and
    chunking) is not embedded again for the second, which has no siblings."""
    shop = make_repo(MAIN_FILES, name="shop")
    fork = make_repo({**MAIN_FILES, **DEVELOP_CHANGES}, name="fork")
    first = build_index(shop, store=open_store(shop, url=pg_url), settings=SETTINGS, siblings=[])
    assert first.vectors.embedded == first.chunks

    second = build_index(fork, store=open_store(fork, url=pg_url), settings=SETTINGS, siblings=[])
    assert second.files_reused == 0  # files are only copied from branches of the same repository
    # Embedded: coupons.py's one chunk and billing.py's changed refund_policy; the rest is shop's.
    assert (second.vectors.embedded, second.vectors.reused) == (2, second.chunks - 2)


def test_plain_index_in_a_worktree_records_its_branch_and_copies_from_the_other_worktree(branches, store_url):
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}

    def index(root: Path) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "repolens", "index", str(root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "reused" not in index(branches.main)
    out = index(branches.develop)
    assert "reused from sibling branches: 10 files" in out, out
    for root, branch in ((branches.main, "main"), (branches.develop, "develop")):
        reader = open_store(root).open_reader()
        assert reader.meta()["branch"] == branch
        reader.close()
