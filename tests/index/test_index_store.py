"""The index on disk: atomic publish, one writer, versions, crashes."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import kill_survivors, run_repolens, tagged_env, wait_for, write_tree_files
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


def _size(db: Path) -> int:
    """Bytes of a SQLite database and its write-ahead log (0 when gone)."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


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
    root = _marker_repo(make_repo, "alpha", n=600)  # a rebuild long enough for many searches
    build_index(root)
    seen: list[tuple[float, float, set[bool]]] = []  # (started, ended, stale flags of its hits)
    stop = threading.Event()

    def searcher() -> None:
        # Files on disk change before the rebuild is published, so hits from
        # the old generation are re-read and marked stale: a reply from one
        # generation is all stale (old) or all fresh (new), never a mix.
        while not stop.is_set():
            started = time.monotonic()
            packet = service.search_code("alpha_marker beta_marker", root, top_k=50, max_chars=100_000).packet
            seen.append((started, time.monotonic(), {bool(r.block.stale) for r in packet.rendered}))

    for i in range(600):
        (root / f"pkg/mod{i:03d}.py").write_text(f"def f{i}():\n    return 'beta_marker {i}'\n")
    t = threading.Thread(target=searcher)
    t.start()
    try:
        wait_for(lambda: len(seen) >= 1, "a search before the rebuild")
        began = time.monotonic()
        build_index(root, rebuild=True)
        ended = time.monotonic()
        wait_for(lambda: seen[-1][0] > ended, "a search after the rebuild")
    finally:
        stop.set()
        t.join()
    assert all(len(kinds) == 1 for *_, kinds in seen), "a search saw both generations at once"
    assert seen[0][2] == {True} and seen[-1][2] == {False}  # the old generation, then the new
    during = [kinds for start, end, kinds in seen if start < ended and end > began]
    assert len(during) >= 2, "no search ran while the rebuild was under way"


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


def test_a_writer_waiting_while_a_first_build_removes_its_folder_locks_the_folder_made_anew(make_repo):
    """The writer that made the index folder and leaves no index removes it,
    lock file included: one that was waiting on that lock file takes the
    lock of the folder made anew, never the lock of a file no longer there."""
    root = make_repo({"a.py": "def alpha():\n    pass\n"})
    layout = _layout(root)
    first_build = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from repolens.store.local.layout import IndexLayout\n"
        "with IndexLayout(Path(sys.argv[1]), Path(sys.argv[2])).write_lock():\n"
        "    print('holding', flush=True)\n"
        "    time.sleep(0.5)\n"
    )
    args = [sys.executable, "-c", first_build, str(root), str(layout.index_dir)]
    with subprocess.Popen(args, stdout=subprocess.PIPE, text=True) as first:
        assert first.stdout is not None and first.stdout.readline() == "holding\n"
        with IndexLayout(root, layout.index_dir).write_lock(wait=10):
            assert layout.lock_held() is True  # the lock file in the folder is the one held
        assert first.wait(10) == 0
    assert not layout.index_dir.exists()
    assert build_index(root).files == 1


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
    # Killed mid-write: once the new generation holds a good share of the files.
    wait_for(lambda: building is not None and _size(building / DB_NAME) > 2_000_000, "the rebuild to write")
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
    damage = f"the index in {db_path.parent.parent} is damaged (gen-000001/index.db: file is not a database)"
    with pytest.raises(IndexCorruptError) as caught:
        service.search_code("session", sample_repo)
    assert str(caught.value) == f"{damage}: run `repolens index` to rebuild it"
    report = build_index(sample_repo)
    assert report.summary().splitlines()[1] == (
        f"rebuilt: the index could not be read ({damage})"
    )  # why it rebuilt; not the fix the rebuild just applied
    assert "session" in service.search_code("session", sample_repo).text


def test_zero_files_keeps_the_previous_index(make_repo):
    root = make_repo({"a.py": "def alpha():\n    pass\n"})
    build_index(root)
    write_tree_files(root, {".repolensignore": "*\n"})
    with pytest.raises(NothingToIndexError, match="nothing to index"):
        build_index(root)
    assert "alpha" in service.search_code("alpha", root).text


def test_a_failed_first_build_leaves_no_folder_behind(make_repo, tmp_path: Path):
    """A first `repolens index` that failed (nothing to index) left, in a
    shared index folder (REPOLENS_INDEX_DIR), a folder holding its lock and
    .gitignore, which `repolens indexes` did not list nor `drop` remove. The
    folders a failed first build made are removed, and only those."""
    ignored = make_repo({".repolensignore": "*\n", "a.py": "x = 1\n"}, name="ignored")
    shared = tmp_path / "made" / "indexes"
    env = {"REPOLENS_INDEX_DIR": str(shared)}
    failed = run_repolens("index", str(ignored), env=env)
    assert failed.returncode == 1 and failed.stderr.startswith(f"error: nothing to index in {ignored}: ")
    assert not (tmp_path / "made").exists()

    app = make_repo({"a.py": "def alpha():\n    pass\n"}, name="app")
    assert run_repolens("index", str(app), env=env).returncode == 0
    kept = sorted(p for p in shared.rglob("*"))
    assert run_repolens("index", str(ignored), env=env).returncode == 1
    assert sorted(p for p in shared.rglob("*")) == kept  # the folder was there: only the new one goes

    # a build that started (a generation made, then discarded), in the repository's own folder
    binary = make_repo({"a.py": b"\0binary"}, name="binary")
    own = run_repolens("index", str(binary))
    assert (own.returncode, own.stderr) == (
        1,
        f"error: nothing to index in {binary}: the only file was binary\n",
    )
    assert not (binary / ".repolens").exists()


def test_a_refresh_that_would_leave_no_file_keeps_the_previous_index(make_repo):
    """A refresh published an index of 0 files, exit 0, where a build of the
    same tree says why it cannot (the only file now binary); the watcher's
    refresh of the saved paths, the last file deleted, did the same."""
    root = make_repo({"a.py": "def alpha():\n    pass\n"})
    build_index(root)
    (root / "a.py").write_bytes(b"\0binary")
    with pytest.raises(NothingToIndexError) as refused:
        build_index(root)
    assert str(refused.value) == f"nothing to index in {root}: the only file was binary"
    (root / "a.py").unlink()
    with pytest.raises(NothingToIndexError) as watched:
        build_index(root, paths=["a.py"])
    assert str(watched.value).startswith(
        f"nothing to index in {root}: these changes would leave the index with no file"
    )
    assert service.index_status(root).files == 1
    assert "alpha" in service.search_code("alpha", root).text


def test_a_plain_refresh_of_an_index_with_vectors_embeds_what_changed(sample_repo: Path):
    """It left the changed chunks without vectors, and the note's `repolens
    index` (finish the embedding) changed nothing: only --vectors did."""
    service.index_repo(sample_repo, vectors=True)
    session = sample_repo / "src" / "auth" / "session.py"
    session.write_text(session.read_text() + "\n\ndef renew(store, sid):\n    return store.load(sid)\n")
    service.index_repo(sample_repo)
    status = service.index_status(sample_repo)
    assert status.vectors_done == status.vectors_total == status.chunks
    session.write_text(session.read_text() + "\n\ndef drop(store, sid):\n    return store.pop(sid)\n")
    service.index_repo(sample_repo, vectors=False)  # said: this run embeds nothing
    after = service.index_status(sample_repo)
    assert after.vectors_done < after.vectors_total


def test_damaged_lexical_index_is_rebuilt_with_a_message(sample_repo: Path):
    build_index(sample_repo)
    lexical = _layout(sample_repo).current_generation() / "lexical"
    for f in lexical.iterdir():
        f.unlink()
    with pytest.raises(
        IndexCorruptError,
        match=r"damaged \(gen-000001/lexical: its files are missing\): run `repolens index` to rebuild it$",
    ):
        service.search_code("session", sample_repo)
    readers.clear()
    report = build_index(sample_repo)
    assert report.mode == "build" and report.reason.startswith("the index could not be read (the index in ")
    assert "to rebuild it" not in report.summary()
    assert "session" in service.search_code("session", sample_repo).text


# -- damage inside the files, through the real CLI and MCP ------------------------


def _overwrite_pages(gen: Path) -> None:
    """Eight pages in the middle of the database, overwritten."""
    db = gen / DB_NAME
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(size // 2 - (size // 2) % 4096)
        f.write(b"\xab" * 4096 * 8)


def _flip_chunk_text(gen: Path) -> None:
    """Bytes flipped inside the stored (compressed) text of session.py's chunks."""
    db = sqlite3.connect(gen / DB_NAME)
    blobs = [r[0] for r in db.execute("SELECT text FROM chunks WHERE path = 'src/auth/session.py'")]
    db.close()
    data = bytearray((gen / DB_NAME).read_bytes())
    for blob in blobs:
        at = data.find(blob)
        assert at > 0
        data[at + 12 : at + 20] = bytes(b ^ 0xFF for b in data[at + 12 : at + 20])
    (gen / DB_NAME).write_bytes(bytes(data))


def _path_not_utf8(gen: Path) -> None:
    """A byte of every stored copy of one path made 0xff (the issue's "Could not decode to UTF-8")."""
    db = gen / DB_NAME
    db.write_bytes(db.read_bytes().replace(b"src/web/forms.py", b"src/web/f\xffrms.py"))


def _flip_lexical_terms(gen: Path) -> None:
    """A byte in the middle of the term dictionary (its checksum no longer matches)."""
    (term,) = (gen / "lexical").glob("*.term")
    data = bytearray(term.read_bytes())
    data[len(data) // 3] ^= 0x5A
    term.write_bytes(bytes(data))


def _unindex_a_lexical_field(gen: Path) -> None:
    """One letter of tantivy's meta.json changed: still JSON, but the field
    ``sig`` is no longer indexed (tantivy: "Schema error: Field "sig" is not indexed")."""
    meta = gen / "lexical" / "meta.json"
    text = meta.read_text()
    at = text.index('"indexing"', text.index('"name": "sig"'))
    meta.write_text(text[:at] + '"indexinx"' + text[at + len('"indexing"') :])


def _cut_lexical_meta(gen: Path) -> None:
    meta = gen / "lexical" / "meta.json"
    meta.write_text(meta.read_text()[: meta.stat().st_size // 2])


DAMAGE = {
    "pages": (_overwrite_pages, "index.db: database disk image is malformed"),
    "chunk-text": (_flip_chunk_text, "index.db: a chunk's stored text is damaged"),
    "lexical-meta": (_cut_lexical_meta, "lexical/meta.json: EOF while parsing a string"),
    "lexical-schema": (_unindex_a_lexical_field, "lexical/meta.json: its schema is not the index's"),
    "not-utf8": (_path_not_utf8, "index.db: column 'path' holds bytes that are not UTF-8"),
    "lexical-terms": (_flip_lexical_terms, ""),  # (found by index's checksums, not by every search)
}


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    return subprocess.run(
        [sys.executable, "-m", "repolens", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize("damage", [name for name, (_, what) in DAMAGE.items() if what])
def test_damage_inside_the_files_is_one_line_and_index_repairs_it(sample_repo: Path, damage: str):
    """search and status say the index is damaged and how to repair it (not
    "unexpected ... (a bug)", exit 70), over MCP too, naming the tool that
    repairs it there; index rebuilds it."""
    from mcp import Client

    from repolens.server.tools import build_server

    root = str(sample_repo)
    assert _cli("index", root).returncode == 0
    gen = _layout(sample_repo).current_generation()
    damage_files, what = DAMAGE[damage]
    damage_files(gen)
    line = f"the index in {gen.parent} is damaged ({gen.name}/{what}): run `repolens index` to rebuild it"

    search = _cli("search", "session expire", "--root", root)
    status = _cli("status", "--root", root)
    for out in (search, status):
        assert (out.returncode, out.stdout, out.stderr) == (1, "", f"error: {line}\n")
    assert len(line) - len(str(gen.parent)) < 150  # not tantivy's quote of a whole meta.json

    async def session() -> list:
        async with Client(build_server(sample_repo)) as client:
            return [
                await client.call_tool("search_code", {"query": "session expire"}),
                await client.call_tool("index_status", {}),
            ]

    for result in asyncio.run(session()):
        assert result.is_error
        assert "\n".join(c.text for c in result.content) == line.replace(
            "run `repolens index`", "call refresh_index"
        )

    index = _cli("index", root)
    assert index.returncode == 0, index.stderr
    assert f"rebuilt: the index could not be read (the index in {gen.parent} is damaged" in index.stdout
    after = _cli("search", "session expire", "--root", root)
    assert after.returncode == 0 and after.stdout.startswith("src/auth/session.py:"), after


FOUND_BY_INDEX = {
    "pages": "index.db: database disk image is malformed",
    "lexical-meta": "lexical/meta.json: EOF while parsing a string",
    "not-utf8": "index.db: column 'path' holds bytes that are not UTF-8",
    "lexical-schema": "lexical/meta.json: its schema is not the index's",
    "lexical-terms": "lexical/{term}: its checksum does not match its contents",
}


@pytest.mark.parametrize("damage", list(FOUND_BY_INDEX))
def test_index_rebuilds_damage_it_finds_itself(sample_repo: Path, damage: str):
    """Without a search first: index reads every page of the database and
    every lexical file against its checksum before it refreshes, and a
    value it cannot decode makes it rebuild."""
    root = str(sample_repo)
    assert _cli("index", root).returncode == 0
    gen = _layout(sample_repo).current_generation()
    (term,) = (gen / "lexical").glob("*.term")
    DAMAGE[damage][0](gen)
    index = _cli("index", root)
    assert index.returncode == 0, index.stderr
    what = FOUND_BY_INDEX[damage].format(term=term.name)
    assert (
        f"rebuilt: the index could not be read (the index in {gen.parent} is damaged ({gen.name}/{what}))"
        in (index.stdout)
    )
    after = _cli("search", "session expire", "--root", root)
    assert after.returncode == 0 and after.stdout.startswith("src/auth/session.py:"), after
