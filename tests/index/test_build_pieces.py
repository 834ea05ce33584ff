"""A build commits its lexical index in pieces (``LEXICAL_PIECES``), the
batches between waiting, so its segments come out as a refresh keeps them
(the first refresh rewrites one piece, not a merged whole), and what waited
is never lost to an interrupted build."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import lexical_segments
from repolens import service
from repolens.index.build import BATCH_FILES, build_index
from repolens.store import open_store
from repolens.store.base import LEXICAL_PIECES
from repolens.store.handles import readers
from repolens.store.local.generation import DB_NAME, LEXICAL_BEHIND, LEXICAL_DIR
from repolens.store.local.lexical import LexicalIndex
from repolens.store.local.segments import MAX_SEGMENTS

# Files of one size, more than five batches hold: a piece is a fifth of them
# (600), larger than a batch (500), so the batch ending at file 500 waits.
COUNT = BATCH_FILES * LEXICAL_PIECES + 500


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _repo(make_repo, tag: str) -> Path:
    """``COUNT`` modules of two functions each, all of one size."""
    body = "def first_{i}(value):\n    return value + {i}\n\n\ndef second_{i}():\n    return '{tag}'\n"
    return make_repo({f"pkg/m{i:04d}.py": body.format(i=f"{i:04d}", tag=tag) for i in range(COUNT)})


def _content(root: Path, index_dir: Path | None = None) -> tuple[list, int]:
    """The chunks of the published index and how many lexical documents it holds."""
    reader = open_store(root, index_dir).open_reader()
    try:
        chunks = sorted(reader.db.execute("SELECT id, path, start_line, end_line FROM chunks").fetchall())
        reader.refresh()
        return chunks, reader.lex.num_docs
    finally:
        reader.close()


def test_a_build_lays_out_its_segments_as_a_refresh_keeps_them(make_repo):
    """Committed every batch, tantivy merged a build's segments eight at a
    time into one large segment, which the first refresh then rewrote whole
    (corpus-1m: 29,202 of 33,665 documents, 9-12 s); in pieces, each segment
    holds about a fifth of the index, and a refresh rewrites only the one
    that held the edited file."""
    root = _repo(make_repo, "alpha")
    build_index(root)
    sizes = [seg["max_doc"] for seg in lexical_segments(root)]
    assert len(sizes) == LEXICAL_PIECES, sizes
    assert max(sizes) <= 1.1 * sum(sizes) / LEXICAL_PIECES, sizes

    before = {seg["segment_id"] for seg in lexical_segments(root)}
    (root / "pkg/m0007.py").write_text("def first_0007(value):\n    return 'beta'\n")
    report = build_index(root)
    assert report.changed == 1
    after = lexical_segments(root)
    assert len(after) <= MAX_SEGMENTS
    kept = before & {seg["segment_id"] for seg in after}
    assert len(kept) == LEXICAL_PIECES - 1, "more than one piece rewritten"
    assert not any(seg["deletes"] for seg in after)
    assert "pkg/m0007.py" in service.search_code("beta", root, auto_index=False).text


# A build that dies at a given file: no rollback, no cleanup (kill -9, a power cut).
_KILLED_AT = """
import os, sys
from repolens.index.build import build_index

def stop(done, total):
    if done == int(sys.argv[2]):
        os._exit(0)

build_index(sys.argv[1], progress=stop)
"""


@pytest.mark.parametrize("how", ["interrupted", "killed"])
def test_a_stopped_build_keeps_the_documents_that_waited(make_repo, tmp_path: Path, how: str):
    """Stopped after a batch whose documents waited for tantivy's next
    commit (files 601-1100, the piece ending at 1200), mid-batch, by Ctrl-C
    (the open batch undone) or killed (nothing undone), the build leaves
    SQLite ahead of tantivy and says so; the run that resumes it adds what
    waited, and the index equals a fresh build."""
    root = _repo(make_repo, "gamma")
    at = BATCH_FILES * 2 + 150

    def stop(done: int, total: int) -> None:
        if done == at:
            raise KeyboardInterrupt

    if how == "killed":
        proc = subprocess.run([sys.executable, "-c", _KILLED_AT, str(root), str(at)], capture_output=True)
        assert proc.returncode == 0, proc.stderr
    else:
        with pytest.raises(KeyboardInterrupt):
            build_index(root, progress=stop)
    (building,) = (root / ".repolens").glob("*.building")
    with sqlite3.connect(building / DB_NAME) as db:
        stored = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        behind = dict(db.execute("SELECT key, value FROM meta").fetchall()).get(LEXICAL_BEHIND)
    lexical = LexicalIndex(building / LEXICAL_DIR)
    assert behind == "1"
    assert 0 < lexical.index.searcher().num_docs < stored, "no document waited when the build stopped"
    del lexical

    report = build_index(root)
    assert report.mode == "resume"
    got = _content(root)
    build_index(root, index_dir=tmp_path / "fresh")
    assert got == _content(root, tmp_path / "fresh")
    assert got[1] == len(got[0])
    assert "pkg/m0990.py" in service.search_code("first_0990", root, auto_index=False).text
