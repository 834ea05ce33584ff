"""Incremental indexing: only what changed is read; crashes never break the index."""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import age_files, kill_survivors, lexical_segments, running_processes, tagged_env, wait_for
from repolens import service
from repolens.index.build import build_index
from repolens.index.prepare import PARALLEL_MIN_BYTES, workers
from repolens.index.watch import WatchEvent, compact_index, refresh_once, start_watcher
from repolens.search.legs import FIELD_WEIGHTS
from repolens.search.query import parse_query
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.store.local.segments import MAX_SEGMENTS


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _module(i: int, tag: str) -> str:
    return (
        f'"""Module {i}."""\n\n\n'
        f"def first_{i}(value):\n    return value + {i}\n\n\n"
        f"def second_{i}(value):\n    return '{tag}_{i}'\n"
    )


def _content(root: Path, index_dir: Path | None = None) -> dict:
    """Everything an index should hold for a given tree, comparable across
    indexes; read from the local store's own halves (its outbox drained, as
    many lexical documents as chunks)."""
    reader = open_store(root, index_dir).open_reader()
    try:
        db = reader.db
        files = sorted(db.execute("SELECT path, hash, lines FROM files").fetchall())
        chunks = sorted(db.execute("SELECT id, path, start_line, end_line FROM chunks").fetchall())
        symbols = sorted(db.execute("SELECT path, qualname, start_line FROM symbols").fetchall())
        pending = db.execute("SELECT count(*) FROM lex_pending").fetchone()[0]
        reader.refresh()
        return {
            "files": files,
            "chunks": chunks,
            "symbols": symbols,
            "lexical_docs": reader.lex.num_docs,
            "pending": pending,
        }
    finally:
        reader.close()


def test_refresh_reads_only_what_changed(make_repo):
    root = make_repo({f"pkg/m{i}.py": _module(i, "alpha") for i in range(20)})
    first = build_index(root)
    assert (first.mode, first.files) == ("build", 20)

    (root / "pkg/m1.py").write_text(_module(1, "beta"))  # modified
    (root / "pkg/m2.py").unlink()  # deleted
    (root / "pkg/m3.py").rename(root / "pkg/renamed.py")  # renamed
    (root / "pkg/new.py").write_text(_module(99, "gamma"))  # new
    os.utime(root / "pkg/m4.py", ns=(1, 1))  # touched, same content
    report = build_index(root)
    assert report.mode == "refresh"
    assert (report.added, report.changed, report.deleted) == (2, 1, 2)
    assert report.unchanged == 17  # m4 was hashed, found equal
    assert report.files == 20
    assert "beta_1" in service.search_code("beta_1", root).text
    assert "pkg/renamed.py" in service.search_code("second_3", root).text
    assert "pkg/m2.py" not in service.search_code("second_2 first_2", root).text

    again = build_index(root)
    assert (again.added, again.changed, again.deleted, again.unchanged) == (0, 0, 0, 20)


def test_a_refresh_does_not_read_again_what_its_content_kept_out(make_repo):
    root = make_repo({"a.py": _module(1, "a"), "blob.dat": b"\x00\x01binary", "blank.txt": " \n"})
    age_files(root)
    first = build_index(root)
    assert (first.files, first.skipped["binary"], first.skipped["empty"]) == (1, 1, 1)
    again = build_index(root)
    assert again.content_skipped == {}, "a refresh read again files that did not change"
    assert (again.unchanged, again.skipped["binary"], again.skipped["empty"]) == (1, 1, 1)


def test_a_write_in_the_tick_an_index_read_is_not_missed(make_repo):
    """A file modified just before the index read it may be written again
    in the same timestamp tick (a formatter after an editor's save): the
    same size, the same mtime. Its stat cannot tell, so the next run reads
    it again (git's "racily clean" entries); a file older than that is
    trusted by its stat, as before."""
    root = make_repo({"fresh.py": "LIMIT = 1\n", "old.py": "OTHER = 1\n"})
    then = age_files(root, "old.py")
    tick = (root / "fresh.py").stat().st_mtime_ns
    build_index(root)
    (root / "fresh.py").write_text("LIMIT = 2\n")
    os.utime(root / "fresh.py", ns=(tick, tick))  # written again within the tick the index read it in
    read: list[tuple[int, int]] = []
    report = build_index(root, progress=lambda done, total: read.append((done, total)))
    assert (report.changed, report.unchanged, read) == (1, 1, [(1, 1)])
    assert "LIMIT = 2" in service.search_code("LIMIT", root, auto_index=False).text
    # Once its stat is old enough, a run records it, and the next trusts it.
    os.utime(root / "fresh.py", ns=(then, then))
    read.clear()
    assert build_index(root, progress=lambda done, total: read.append((done, total))).unchanged == 2
    assert read == [(1, 1)]
    read.clear()
    assert build_index(root, progress=lambda done, total: read.append((done, total))).unchanged == 2
    assert read == []


def test_progress_counts_every_file_read_including_skipped_ones(make_repo):
    root = make_repo({"a.py": _module(1, "a"), "blob.dat": b"\x00\x01binary"})
    seen: list[tuple[int, int]] = []
    build_index(root, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]


def test_editing_one_function_keeps_the_other_chunk_ids(make_repo):
    # Each function is longer than the packing threshold, so each is a chunk.
    body = "".join(f"    step_{k} = value * {k}\n" for k in range(35))
    source = f"def first(value):\n{body}    return step_5\n\n\ndef second(value):\n{body}    return step_1\n"

    root = make_repo({"a.py": source})
    build_index(root)
    before = {(r[2], r[3]): r[0] for r in _content(root)["chunks"]}
    assert len(before) == 2
    (root / "a.py").write_text("# a new first line\n" + source.replace("return step_5", "return step_4"))
    build_index(root)
    after = {(r[2], r[3]): r[0] for r in _content(root)["chunks"]}
    ids_before, ids_after = set(before.values()), set(after.values())
    assert len(ids_before & ids_after) == 1, "second() moved down a line but kept its id"


def test_a_settings_change_rebuilds_and_says_why(sample_repo: Path, monkeypatch):
    build_index(sample_repo)
    monkeypatch.setenv("REPOLENS_CHUNKER", "windows")
    report = build_index(sample_repo)
    assert report.mode == "build"
    assert report.reason.startswith("chunking changed (syntax+markdown+windows/")
    assert "rebuilt: chunking changed" in report.summary()


def test_refresh_matches_a_fresh_build(make_repo, tmp_path: Path):
    root = make_repo({f"m{i}.py": _module(i, "alpha") for i in range(30)})
    build_index(root)
    for i in range(0, 30, 3):
        (root / f"m{i}.py").write_text(_module(i, "beta"))
    (root / "m1.py").unlink()
    build_index(root)
    build_index(root, index_dir=tmp_path / "fresh")
    assert _content(root) == _content(root, tmp_path / "fresh")


_WORDS = """
    parse request response session token cache header cookie route handler config error value
    stream buffer socket timeout retry encode decode json schema field record index query result
""".split()  # noqa: SIM905
_QUESTIONS = [
    "where is the session token cache refreshed?",
    "parse_request header cookie",
    "retry timeout on the socket stream",
    "decode json schema field",
    "record index query result",
    "handler route config error",
]


def _worded(rng: random.Random, i: int) -> str:
    """A module of functions whose bodies run from a few words to hundreds (so
    lengths cross the exact range of tantivy's one-byte length code)."""
    out = [f'"""Module {i}: {" ".join(rng.choices(_WORDS, k=rng.randint(2, 9)))}."""\n']
    for j in range(rng.randint(1, 5)):
        a, b = rng.sample(_WORDS, 2)
        words = rng.choices(
            _WORDS, weights=[1 / (k + 1) for k in range(len(_WORDS))], k=rng.choice([4, 30, 90, 300])
        )
        body = "\n".join(f"    # {' '.join(words[k : k + 8])}" for k in range(0, len(words), 8))
        out.append(f"\n\ndef {a}_{b}_{j}(value):\n{body}\n    return {a}\n")
    return "".join(out)


def _lexical_scores(root: Path, index_dir: Path | None = None) -> dict[str, dict[tuple, float]]:
    """Every chunk's BM25 score for each of ``_QUESTIONS``, by (path, lines)."""
    reader = open_store(root, index_dir).open_reader()
    try:
        out = {}
        for question in _QUESTIONS:
            hits = reader.lexical(parse_query(question).weighted(), FIELD_WEIGHTS, 10_000, None)
            stored = reader.chunks([cid for cid, _ in hits])
            out[question] = {
                (s.chunk.path, s.chunk.start_line, s.chunk.end_line): score
                for cid, score in hits
                if (s := stored[cid])
            }
        return out
    finally:
        reader.close()


def test_a_refreshed_index_ranks_as_a_fresh_build(make_repo, tmp_path: Path):
    """tantivy's BM25 counts a deleted document (in the number of documents,
    of documents holding a term, of tokens) until its segment goes: refreshes
    that edit, delete and add files, whole-tree and scoped, must leave every
    chunk scoring as in a fresh build of the same files (and so the same top
    10), to float32 rounding."""
    rng = random.Random(27)
    count = 40
    root = make_repo({f"pkg/m{i:02d}.py": _worded(rng, i) for i in range(count)})
    build_index(root)
    for step in range(10):
        changed = _edit(root, rng, count, step, files=6)
        build_index(root, paths=changed) if step % 2 else build_index(root)
    _assert_ranks_as_a_fresh_build(root, tmp_path / "fresh")


def _edit(root: Path, rng: random.Random, count: int, step: int, files: int = 3) -> set[str]:
    """Edit or delete ``files`` of the ``count`` ``_worded`` modules, and add
    one; the paths touched."""
    changed = set()
    for i in rng.sample(range(count), files):
        path = root / f"pkg/m{i:02d}.py"
        if rng.random() < 0.25 and path.exists():
            path.unlink()
        else:
            path.write_text(_worded(rng, i))
        changed.add(f"pkg/m{i:02d}.py")
    (root / f"pkg/new{step}.py").write_text(_worded(rng, 100 + step))
    return changed | {f"pkg/new{step}.py"}


def test_a_watcher_refresh_rewrites_no_segment(make_repo):
    """The watcher's refresh of a saved file costs no rewrite: a segment that
    loses a chunk keeps it as tantivy's deletion (compaction comes when the
    saves pause), and every segment file of the index stays as it was."""
    rng = random.Random(6)
    root = make_repo({f"pkg/m{i:02d}.py": _worded(rng, i) for i in range(40)})
    build_index(root)
    before, files = lexical_segments(root), _segment_files(root)
    (root / "pkg/m07.py").write_text(_worded(rng, 7))
    event = refresh_once(
        open_store(root), load_settings(root, {"vectors": False}), 1, frozenset({"pkg/m07.py"})
    )
    assert event.report is not None and event.report.changed == 1
    after = lexical_segments(root)
    assert files.items() <= _segment_files(root).items(), "a segment was rewritten"
    assert len(after) == len(before) + 1  # the saved file's new chunks
    assert [seg["segment_id"] for seg in before] == [seg["segment_id"] for seg in after[: len(before)]]
    assert any(seg["deletes"] for seg in after)


def _segment_files(root: Path) -> dict[str, int]:
    """The inode of every file of the segments of the published index, but
    their lists of deletions (``<id>.<opstamp>.del``)."""
    directory = open_store(root).local_folder / "current" / "lexical"
    return {
        e.name: e.stat().st_ino for e in directory.iterdir() if re.fullmatch(r"[0-9a-f]{32}\.[a-z]+", e.name)
    }


def test_refreshes_that_do_not_compact_keep_tantivy_from_merging_and_compaction_makes_them_exact(
    make_repo, tmp_path: Path
):
    """Many refreshes without compaction in a row (the watcher's, each a
    segment of new chunks, deletions left in place): tantivy would merge
    eight segments of a size, estimating the token counts of those with
    deletions (no later rewrite could find them), so the index never holds
    more than MAX_SEGMENTS; compaction then leaves every chunk scoring as in
    a fresh build."""
    rng = random.Random(61)
    count = 40
    root = make_repo({f"pkg/m{i:02d}.py": _worded(rng, i) for i in range(count)})
    build_index(root)
    store, settings = open_store(root), load_settings(root, {"vectors": False})
    for step in range(12):
        changed = _edit(root, rng, count, step)
        build_index(root, store=store, settings=settings, paths=changed, compact=False)
        assert len(lexical_segments(root)) <= MAX_SEGMENTS
    assert any((seg["deletes"] or {}).get("num_deleted_docs") for seg in lexical_segments(root))
    assert compact_index(store, settings)
    assert not any(seg["deletes"] for seg in lexical_segments(root))
    _assert_ranks_as_a_fresh_build(root, tmp_path / "fresh")


def test_a_compaction_stops_for_a_save_and_leaves_the_index_as_it_was(make_repo, tmp_path: Path):
    """A save that comes during a compaction stops it (``should_stop``,
    asked every few hundred chunks): what it had rewritten is undone, and
    the index answers as before it started; the next one completes."""
    rng = random.Random(62)
    root = make_repo({f"pkg/m{i:03d}.py": _worded(rng, i) for i in range(150)})
    build_index(root)
    store, settings = open_store(root), load_settings(root, {"vectors": False})
    (root / "pkg/m001.py").write_text(_worded(rng, 1))
    build_index(root, store=store, settings=settings, paths={"pkg/m001.py"}, compact=False)
    before, scores = lexical_segments(root), _lexical_scores(root)
    asked = []

    def second_slice() -> bool:  # asked before compacting, then before each slice of chunks and commit
        asked.append(1)
        return len(asked) == 3

    assert compact_index(store, settings, second_slice) is None
    assert lexical_segments(root) == before and _lexical_scores(root) == scores
    assert compact_index(store, settings) and not any(seg["deletes"] for seg in lexical_segments(root))
    _assert_ranks_as_a_fresh_build(root, tmp_path / "fresh")


def test_a_watched_index_ranks_as_a_fresh_build_once_the_saves_pause(make_repo, tmp_path: Path):
    """Saves through the watcher are searchable at once, scored with the
    deleted chunks still counted; once no event has come for
    COMPACT_IDLE_S the watcher compacts, and every chunk scores as in a
    fresh build of the same files."""
    rng = random.Random(63)
    count = 40
    root = make_repo({f"pkg/m{i:02d}.py": _worded(rng, i) for i in range(count)})
    build_index(root)
    events: list[WatchEvent] = []
    thread, stop = start_watcher(root, on_event=events.append)
    try:
        wait_for(lambda: bool(events), "the first refresh")
        for step in range(4):
            _edit(root, rng, count, step)
            wait_for(lambda step=step: _added(events) == step + 1, "the saves to be indexed")
        wait_for(lambda: _compacted(root, events), "the compaction after the saves")
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not [e for e in events if e.error]
    assert any(e.compacted for e in events), "the watcher's refreshes rewrote what they deleted"
    _assert_ranks_as_a_fresh_build(root, tmp_path / "fresh")


def _added(events: list[WatchEvent]) -> int:
    """The files the watcher's refreshes added to the index so far."""
    return sum(e.report.added for e in events if e.report is not None)


def _compacted(root: Path, events: list[WatchEvent]) -> bool:
    """Whether the watcher's last event is a compaction that left no deleted chunk."""
    return (
        bool(events)
        and events[-1].compacted is not None
        and not any(seg["deletes"] for seg in lexical_segments(root))
    )


def _assert_ranks_as_a_fresh_build(root: Path, fresh: Path) -> None:
    """Every chunk of the index of ``root`` scores as in a fresh build of the
    same files (to float32 rounding), and so the top 10 is the same."""
    build_index(root, index_dir=fresh)
    got, want = _lexical_scores(root), _lexical_scores(root, fresh)
    for question in _QUESTIONS:
        assert got[question].keys() == want[question].keys(), question
        for key, score in want[question].items():
            assert got[question][key] == pytest.approx(score, rel=1e-6), (question, key)
        top = [
            sorted(scores, key=lambda k: (-round(scores[k], 4), k))[:10]
            for scores in (got[question], want[question])
        ]
        assert top[0] == top[1], question


def _mutate(root: Path, rng: random.Random, step: int, count: int) -> None:
    for i in range(count):
        path = root / f"pkg/m{i:04d}.py"
        roll = rng.random()
        if roll < 0.15 and path.exists():
            path.unlink()
        elif roll < 0.45:
            path.write_text(_module(i, f"step{step}") * 8)
    for j in range(rng.randint(0, 20)):
        (root / f"pkg/extra{step}_{j}.py").write_text(_module(10_000 + j, f"extra{step}") * 8)


def test_chunks_the_lexical_index_holds_and_the_database_not_are_no_candidates(make_repo):
    """A kill between the lexical index's commit and the database's leaves
    documents whose chunks the database lacks until the next run settles
    them: a search still answers, also when equal scores cross the lexical
    leg's cut (where the tied chunks are read to order them)."""
    root = make_repo({f"pkg/m{i:04d}.py": _module(i, "same") for i in range(300)})
    build_index(root)
    reader = open_store(root).open_reader()
    try:
        path = reader.db.execute("PRAGMA database_list").fetchone()[2]
    finally:
        reader.close()
    readers.clear()
    db = sqlite3.connect(path)
    with db:  # every other chunk of the tied ones gone from the database only
        db.execute("DELETE FROM chunks WHERE cid % 2 = 0")
    db.close()
    reply = service.search_code("first value", root, auto_index=False)
    assert reply.packet is not None and "def first_" in reply.text


@pytest.mark.slow
def test_sigkill_at_random_points_never_breaks_the_index(make_repo, tmp_path: Path):
    """Kill the indexer at random moments of builds and refreshes; each time
    the index must open and answer, and the next run must produce exactly
    the content of a fresh build."""
    count = 1500
    root = make_repo({f"pkg/m{i:04d}.py": _module(i, "step0") * 8 for i in range(count)})
    rng = random.Random(20261130)
    started = time.monotonic()
    build_index(root)
    full_time = time.monotonic() - started
    interrupted = 0
    # Six steps, and more (at most twelve) while fewer than three kills landed
    # mid-run: on a loaded machine a refresh may end before its kill.
    for step in range(1, 13):
        if step > 6 and interrupted >= 3:
            break
        _mutate(root, rng, step, count)
        cmd = [sys.executable, "-m", "repolens", "index", str(root)]
        if step % 3 == 0:
            cmd.append("--rebuild")
        env, tag = tagged_env()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        time.sleep(rng.uniform(0.3, 0.6 + full_time))
        interrupted += proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert kill_survivors(tag) == [], f"step {step}: the killed indexer left processes behind"

        readers.clear()
        # The index opens and answers whatever moment the kill hit.
        assert service.search_code("first value", root, auto_index=False).packet is not None
        readers.clear()
        build_index(root)
        fresh = tmp_path / f"fresh{step}"
        build_index(root, index_dir=fresh)
        got, want = _content(root), _content(root, fresh)
        assert got["pending"] == 0
        assert got == want, f"step {step}: refreshed index differs from a fresh build"
        assert got["lexical_docs"] == len(got["chunks"])
    assert interrupted >= 3, "too few kills landed while the indexer was running"


@pytest.mark.skipif(workers() < 2, reason="one core: files are prepared in process, no workers")
@pytest.mark.parametrize("fresh", [True, False], ids=["forked-by-a-build", "spawned-by-a-refresh"])
def test_a_killed_indexer_takes_its_worker_processes_with_it(make_repo, fresh: bool):
    """kill -9 (the OOM killer, a closed terminal) while files are prepared in
    worker processes: the workers and multiprocessing's resource tracker end too."""
    body = _module(0, "w") * 80  # about 9 kB: half again the bytes that start workers, in ~1000 files
    count = PARALLEL_MIN_BYTES * 3 // (2 * len(body)) + 1
    root = make_repo({f"pkg/m{i:04d}.py": body for i in range(count)})
    if not fresh:  # every file changed since the last index
        build_index(root)
        for i in range(count):
            (root / f"pkg/m{i:04d}.py").write_text(_module(i, "v") * 80)
    env, tag = tagged_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "repolens", "index", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        spawned: list[str] = []
        while len(spawned) < 2 and proc.poll() is None and time.monotonic() < deadline:
            procs = running_processes("REPOLENS_TEST_TAG")
            spawned = [p.args for p in procs if p.mark == tag and p.ppid == proc.pid]
            if not fresh:  # a refresh spawns its workers (they import the chunkers themselves)
                spawned = [a for a in spawned if "multiprocessing.spawn" in a]
            time.sleep(0.05)
        assert len(spawned) >= 2, "the indexer ended before its workers were seen"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert kill_survivors(tag) == []


def test_interrupting_a_refresh_mid_batch_leaves_both_stores_consistent(make_repo, tmp_path: Path):
    root = make_repo({f"m{i}.py": _module(i, "alpha") for i in range(40)})
    build_index(root)
    for i in range(40):
        (root / f"m{i}.py").write_text(_module(i, "beta"))

    def stop_halfway(done: int, total: int) -> None:
        if done == 20:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(root, progress=stop_halfway)
    got = _content(root)
    assert got["pending"] == 0
    assert got["lexical_docs"] == len(got["chunks"]), "tantivy kept documents of a rolled-back batch"
    build_index(root)
    build_index(root, index_dir=tmp_path / "fresh")
    assert _content(root) == _content(root, tmp_path / "fresh")


_CRASH_BETWEEN_COMMITS = """
import os, sys
from repolens.store import open_store
store = open_store(sys.argv[1])
with store.write_lock():
    writer = store.open_writer(store.current())
    writer.begin()
    for record in writer.files().values():
        writer.delete_file(record.id)
    writer.lex.commit(writer._fields_of)  # tantivy committed every deletion...
    os._exit(0)  # ...and the process died before SQLite did
"""


def test_a_crash_between_the_lexical_and_database_commits_is_undone(make_repo, tmp_path: Path):
    root = make_repo({f"m{i}.py": _module(i, "alpha") for i in range(12)})
    build_index(root)
    proc = subprocess.run([sys.executable, "-c", _CRASH_BETWEEN_COMMITS, str(root)], capture_output=True)
    assert proc.returncode == 0, proc.stderr
    lexical = open_store(root).layout.current_generation() / "lexical"
    assert (lexical / "previous").is_dir()
    report = build_index(root)  # the next writer puts tantivy's previous commit back
    assert report.mode == "refresh" and report.unchanged == 12
    assert not (lexical / "previous").exists()
    build_index(root, index_dir=tmp_path / "fresh")
    got = _content(root)
    assert got == _content(root, tmp_path / "fresh") and got["lexical_docs"] == len(got["chunks"])
    assert "alpha_3" in service.search_code("second_3", root).text


_KILLED_WHILE_TANTIVY_COMMITS = """
import os, shutil, sys
from repolens.store import open_store
store = open_store(sys.argv[1])
with store.write_lock():
    writer = store.open_writer(store.current())
    writer.begin()
    for record in list(writer.files().values())[:3]:
        writer.delete_file(record.id)
    lexical = writer.lex.directory
    writer.lex.commit(writer._fields_of, compact=False)  # tantivy wrote its lists of deletions...
    for name in ("meta.json", ".managed.json"):  # ...and died before its meta.json named them
        shutil.copy(lexical / "previous" / name, lexical / name)
    os._exit(0)
"""


def test_a_writer_killed_while_tantivy_commits_leaves_no_file_in_the_next_ones_way(make_repo):
    """The files of a tantivy commit that did not land are removed by the next
    writer even when SQLite holds the commit before it: that writer counts
    opstamps from there, and its first commit with deletions would meet a
    list of deletions of the same name (``FileAlreadyExists``)."""
    root = make_repo({f"m{i}.py": _module(i, "alpha") for i in range(12)})
    build_index(root)
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_TANTIVY_COMMITS, str(root)], capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    lexical = open_store(root).layout.current_generation() / "lexical"
    assert list(lexical.glob("*.del"))
    report = build_index(root)
    assert report.mode == "refresh" and report.unchanged == 12
    named = {seg["segment_id"].replace("-", "") for seg in lexical_segments(root)}
    assert {
        p.name.split(".")[0] for p in lexical.iterdir() if re.fullmatch(r"[0-9a-f]{32}\..+", p.name)
    } == named
    assert not list(lexical.glob("*.del"))


def test_scoped_refresh_reads_only_the_named_paths_and_matches_a_full_refresh(make_repo, tmp_path):
    files = {f"pkg/m{i}.py": _module(i, "alpha") for i in range(8)}
    files[".gitignore"] = "build/\n"
    files["pkg/empty.py"] = ""
    root = make_repo(files)
    build_index(root)
    (root / "pkg/m1.py").write_text(_module(1, "beta"))
    (root / "pkg/m2.py").write_text(_module(2, "beta"))  # not named: left for a later scan
    (root / "pkg/m3.py").unlink()
    (root / "pkg/new.py").write_text(_module(99, "gamma"))
    (root / "pkg/empty.py").write_text(_module(50, "delta"))  # skipped as empty before
    (root / "build").mkdir()
    (root / "build/out.py").write_text(_module(7, "ignored"))

    named = {"pkg/m1.py", "pkg/m3.py", "pkg/new.py", "pkg/empty.py", "build/out.py"}
    scoped = build_index(root, paths=named)
    assert scoped.mode == "refresh"
    assert (scoped.changed, scoped.deleted, scoped.added) == (1, 1, 2)
    assert scoped.unchanged == 0  # nothing outside the named paths was even stat-ed
    reader = open_store(root).open_reader()
    try:
        paths = set(reader.paths())
    finally:
        reader.close()
    assert "build/out.py" not in paths and "pkg/m3.py" not in paths and "pkg/new.py" in paths

    full = build_index(root)
    assert (full.changed, full.added, full.deleted) == (1, 0, 0)  # only m2 was left
    other = tmp_path / "reference-index"
    build_index(root, index_dir=other)
    assert _content(root) == _content(root, other)


def test_scoped_refresh_of_a_deleted_folder_drops_everything_under_it(make_repo):
    root = make_repo({**{f"pkg/sub/m{i}.py": _module(i, "a") for i in range(3)}, "keep.py": _module(9, "k")})
    build_index(root)
    for i in range(3):
        (root / f"pkg/sub/m{i}.py").unlink()
    (root / "pkg/sub").rmdir()
    report = build_index(root, paths={"pkg/sub"})
    assert report.deleted == 3 and report.files == 1


def test_a_named_folder_or_a_missing_index_means_a_whole_tree_scan(make_repo):
    root = make_repo({"a.py": _module(1, "a")})
    first = build_index(root, paths={"a.py"})  # no index yet: a full build
    assert (first.mode, first.files) == ("build", 1)
    (root / "newdir").mkdir()
    (root / "newdir/x.py").write_text(_module(2, "x"))
    (root / "newdir/y.py").write_text(_module(3, "y"))
    report = build_index(root, paths={"newdir"})  # a folder: git lists it whole
    assert report.added == 2 and report.unchanged == 1


def test_a_languages_change_refreshes_what_it_changes_and_says_so(make_repo, store_url, monkeypatch):
    root = make_repo(
        {"a.py": _module(1, "a"), "b.go": "package b\n\nfunc B() int { return 1 }\n", "c.md": "# C\n"}
    )
    monkeypatch.delenv("REPOLENS_LANGUAGES", raising=False)
    assert build_index(root).files == 3
    (root / ".repolens.toml").write_text('languages = ["py"]\n')
    narrowed = build_index(root)
    assert (narrowed.mode, narrowed.deleted, narrowed.unchanged, narrowed.files) == ("refresh", 2, 1, 1)
    assert narrowed.skipped["not_in_languages"] == 3  # b.go, c.md and the config file
    assert "languages changed (all -> python): files of the others removed" in narrowed.summary()
    assert "languages=python" in service.index_status(root).render()
    assert build_index(root).languages == ""  # said once
    # a watcher's refresh of one saved file looks at the whole tree when the setting moved
    (root / ".repolens.toml").write_text('languages = ["python", "golang"]\n')
    widened = build_index(root, paths={"a.py"})
    assert (widened.added, widened.files, widened.languages) == (1, 2, "python -> go, python")
    monkeypatch.setenv("REPOLENS_LANGUAGES", "")
    assert build_index(root).added == 2  # c.md and the config file, back with every language
