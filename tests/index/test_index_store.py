"""The index on disk: atomic publish, one writer, versions, crashes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import kill_survivors, tagged_env, write_tree_files
from repolens import service
from repolens.errors import IndexCorruptError, IndexLockedError, IndexVersionError, NothingToIndexError
from repolens.index.build import build_index
from repolens.store.handles import readers
from repolens.store.local.generation import DB_NAME
from repolens.store.local.layout import IndexLayout
from repolens.store.versions import format_versions


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _marker_repo(make_repo, word: str, n: int = 60) -> Path:
    files = {f"pkg/mod{i:03d}.py": f"def f{i}():\n    return '{word}_marker {i}'\n" for i in range(n)}
    return make_repo(files)


def _layout(root: Path) -> IndexLayout:
    return IndexLayout(root, root / ".repolens")


def test_rebuild_publishes_a_new_generation_and_collects_old_ones(sample_repo: Path):
    build_index(sample_repo)
    layout = _layout(sample_repo)
    first = layout.current_generation()
    build_index(sample_repo, rebuild=True)
    second = layout.current_generation()
    assert first != second and second is not None
    assert os.readlink(layout.current_link) == second.name
    assert not list(layout.index_dir.glob("*.building"))


def test_search_during_rebuild_sees_old_or_new_never_a_mix(make_repo):
    root = _marker_repo(make_repo, "alpha")
    build_index(root)
    seen: list[set[str]] = []
    stop = threading.Event()

    def searcher() -> None:
        # Files on disk change before the rebuild is published, so hits from
        # the old generation are re-read and marked stale: a reply from one
        # generation is all stale (old) or all fresh (new), never a mix.
        while not stop.is_set():
            packet = service.search_code("alpha_marker beta_marker", root, top_k=50, max_chars=100_000).packet
            seen.append({bool(r.block.stale) for r in packet.rendered})

    for i in range(60):
        (root / f"pkg/mod{i:03d}.py").write_text(f"def f{i}():\n    return 'beta_marker {i}'\n")
    t = threading.Thread(target=searcher)
    t.start()
    try:
        time.sleep(0.2)
        build_index(root, rebuild=True)

        time.sleep(0.2)
    finally:
        stop.set()
        t.join()
    assert seen
    assert all(len(kinds) == 1 for kinds in seen), "a search saw both generations at once"
    assert seen[-1] == {False}


def test_second_writer_gets_a_clear_message(sample_repo: Path):
    layout = _layout(sample_repo)
    with layout.write_lock():
        out = subprocess.run(
            [sys.executable, "-m", "repolens", "index", str(sample_repo)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        with pytest.raises(IndexLockedError, match="another process"):
            build_index(sample_repo)
    assert out.returncode == 1
    assert out.stderr.startswith("error: another process (pid ")
    assert "wait for it to finish" in out.stderr


@pytest.mark.slow
def test_crash_mid_rebuild_leaves_the_previous_index_usable(make_repo):
    files = {f"pkg/m{i:04d}.py": f"def g{i}():\n    return 'gamma_marker {i}'\n" * 40 for i in range(3000)}
    root = make_repo(files)
    build_index(root)
    api_paths_before = service.search_code("gamma_marker", root).packet.rendered

    for i in range(3000):
        (root / f"pkg/m{i:04d}.py").write_text(f"def g{i}():\n    return 'delta_marker {i}'\n" * 40)
    cmd = [sys.executable, "-m", "repolens", "index", str(root), "--rebuild"]
    env, tag = tagged_env()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env)
    building = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and building is None:
        found = list((root / ".repolens").glob("*.building/index.db"))
        if found and found[0].stat().st_size > 0:
            building = found[0].parent
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert kill_survivors(tag) == [], "the killed indexer left processes behind"
    assert building is not None and building.exists(), "the indexer was killed before it started writing"
    readers.clear()
    after = service.search_code("gamma_marker", root).packet  # the old index still answers
    old_paths = [r.block.path for r in api_paths_before]
    assert [r.block.path for r in after.rendered] == old_paths
    assert all(r.block.stale for r in after.rendered)  # and says its lines may have moved
    build_index(root, rebuild=True)

    assert not building.exists()
    assert "delta_marker" in service.search_code("delta_marker", root).text


def test_index_of_another_version_is_refused_with_the_fix(sample_repo: Path):
    build_index(sample_repo)
    db_path = _layout(sample_repo).current_generation() / DB_NAME
    with sqlite3.connect(db_path) as db:
        db.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    with pytest.raises(IndexVersionError, match=r"schema version 999 .* re-run `repolens index`"):
        service.search_code("session", sample_repo)
    report = build_index(sample_repo)
    assert report.mode == "build"
    assert report.reason == f"schema version changed (999 -> {format_versions()['schema_version']})"
    assert "session" in service.search_code("session", sample_repo).text


def test_corrupt_index_is_reported_not_a_traceback(sample_repo: Path):
    build_index(sample_repo)
    db_path = _layout(sample_repo).current_generation() / DB_NAME
    for extra in ("-wal", "-shm"):
        Path(str(db_path) + extra).unlink(missing_ok=True)
    db_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexCorruptError, match="re-run `repolens index"):
        service.search_code("session", sample_repo)
    report = build_index(sample_repo)
    assert report.summary().splitlines()[1] == (
        f"rebuilt: the index could not be read (index database {db_path} cannot be read "
        "(file is not a database))"
    )  # why it rebuilt; not the fix the rebuild just applied
    assert "session" in service.search_code("session", sample_repo).text


def test_zero_files_keeps_the_previous_index(make_repo):
    root = make_repo({"a.py": "def alpha():\n    pass\n"})
    build_index(root)
    write_tree_files(root, {".repolensignore": "*\n"})
    with pytest.raises(NothingToIndexError, match="nothing to index"):
        build_index(root)
    assert "alpha" in service.search_code("alpha", root).text


def test_damaged_lexical_index_is_rebuilt_with_a_message(sample_repo: Path):
    build_index(sample_repo)
    lexical = _layout(sample_repo).current_generation() / "lexical"
    for f in lexical.iterdir():
        f.unlink()
    with pytest.raises(IndexCorruptError, match="re-run `repolens index"):
        service.search_code("session", sample_repo)
    readers.clear()
    report = build_index(sample_repo)
    assert report.mode == "build" and report.reason.startswith("the index could not be read (lexical index ")
    assert "re-run" not in report.summary()
    assert "session" in service.search_code("session", sample_repo).text
