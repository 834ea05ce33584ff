"""Damage at random: bytes flipped, a page overwritten, a file cut, in every
file of a local index, over many seeds. Every read is an answer or one line
(``IndexCorruptError`` and the like, never "a bug"), and ``repolens index``
then repairs the index: the next search answers from the right file.

One index (SQLite with vectors, tantivy segments, the HNSW graph when
usearch is installed, tantivy's meta files, a remembered query) is built
once and copied for each seed; the repository itself is shared, each copy
read and repaired through ``index_dir``. The copies live on a tmpfs where
there is one (``/dev/shm``): what is tested is damage, not the disk, and
the repairs' fsyncs cost minutes on a disk other processes keep busy
(4 min against 40 s, measured on a shared 2-core machine).
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import SAMPLE_FILES, run_git, write_tree_files
from repolens import service
from repolens.errors import RepolensError
from repolens.store.handles import readers
from repolens.store.local.ann import available as ann_available

SEEDS = 240  # damaged indexes; the issue asked for at least 200
QUESTION = "where do sessions expire?"
ENV = {"REPOLENS_EMBED_PROVIDER": "fake", "REPOLENS_ANN_MIN_VECTORS": "1", "REPOLENS_VECTORS": "1"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    """(repository, its index built once, a remembered query id)."""
    root = tmp_path_factory.mktemp("repo")
    run_git(root, "init", "-q", "-b", "main")
    write_tree_files(root, SAMPLE_FILES)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "Sessions expire after an hour")
    index_dir = tmp_path_factory.mktemp("template") / "index"
    with pytest.MonkeyPatch.context() as env:
        for name, value in ENV.items():
            env.setenv(name, value)
        service.index_repo(root, index_dir=index_dir, vectors=True)
        query_id = service.search_code(QUESTION, root, index_dir=index_dir).query_id
        readers.clear()  # (closed: no -wal or -shm file left beside the database)
        yield root, index_dir, query_id


def _damage(rng: random.Random, file: Path) -> str:
    """Damage ``file`` one of four ways; which, in a word."""
    data = bytearray(file.read_bytes())
    how = rng.choice(["flip", "flip", "flip 50", "page", "cut"])
    if how == "cut":
        data = data[: rng.randrange(len(data))]
    elif how == "page" and len(data) > 4096:
        at = rng.randrange(len(data) // 4096) * 4096
        data[at : at + 4096] = rng.randbytes(4096)
    else:  # "flip 50": past the header pages, as a bad sector would
        low = 8192 if how == "flip 50" and len(data) > 16384 else 0
        for _ in range(50 if how == "flip 50" else rng.choice([1, 3, 10])):
            at = rng.randrange(low, len(data))
            data[at] ^= rng.randrange(1, 256)
    file.write_bytes(bytes(data))
    return how


def _reads(root: Path, index_dir: Path, query_id: str) -> list[tuple[str, Callable[[], object]]]:
    at = {"index_dir": index_dir}
    return [
        ("search", lambda: service.search_code(QUESTION, root, auto_index=False, **at).text),
        ("files", lambda: service.search_code("session", root, mode="files", auto_index=False, **at).text),
        (
            "json",
            lambda: service.search_code("handle_submit form", root, mode="json", auto_index=False, **at).text,
        ),
        ("query_id", lambda: service.search_code(None, root, query_id=query_id, mode="files", **at).text),
        ("symbol", lambda: service.find_symbol("SessionStore", root, **at).text),
        ("focus", lambda: service.focus("session expired", root, **at).text),
        ("history", lambda: service.search_history("sessions expire", root, **at).text),
        ("references", lambda: service.find_references("SessionStore.save", root, **at).text),
        ("impact", lambda: service.impact("src/auth/session.py", root, **at).text),
        ("status", lambda: service.index_status(root, **at)),
    ]


@pytest.fixture
def copies(tmp_path: Path) -> Iterator[Path]:
    """A folder for the damaged copies: on the tmpfs when there is one (see
    the module docstring), removed afterwards; else ``tmp_path``."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="repolens-damage-", dir=shm))
    try:
        yield folder
    finally:
        _remove(folder)


def _remove(folder: Path) -> None:
    """Remove ``folder``, again if a closed reader's tantivy thread, seeing
    meta.json go, took its lock file anew meanwhile (once in ~2,000 copies)."""
    try:
        shutil.rmtree(folder)
    except OSError:
        time.sleep(0.2)
        shutil.rmtree(folder, ignore_errors=True)


def test_every_damaged_index_is_said_in_one_line_and_repaired(
    template: tuple[Path, Path, str], copies: Path, monkeypatch: pytest.MonkeyPatch
):
    root, built, query_id = template
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    files = sorted(
        p.relative_to(built)
        for p in built.rglob("*")
        if p.is_file() and not p.is_symlink() and p.stat().st_size
    )
    names = {p.name for p in files}
    assert {"index.db", "meta.json", ".managed.json", f"{query_id}.json"} <= names
    assert {p.suffix for p in files} >= {".db", ".idx", ".term", ".pos", ".store", ".fast", ".fieldnorm"}
    assert not ann_available() or "vectors.usearch" in names

    damaged: Counter[str] = Counter()
    lines: Counter[str] = Counter()
    wrong: list[str] = []
    for seed in range(SEEDS):
        rng = random.Random(seed)
        index_dir = copies / f"index-{seed}"
        shutil.copytree(built, index_dir, symlinks=True)
        # each file alone in turn, and every seventh time all of them at once
        targets = files if seed % 7 == 6 else [files[(seed - seed // 7) % len(files)]]
        how = [_damage(rng, index_dir / rel) for rel in targets][-1]
        case = f"seed {seed} ({how} {'every file' if len(targets) > 1 else targets[0]})"
        damaged[str(targets[0]) if len(targets) == 1 else "every file"] += 1
        readers.clear()  # (each copy is a new folder; a server would see it anew too)
        for name, read in _reads(root, index_dir, query_id):
            try:
                read()
            except RepolensError as exc:
                said = str(exc)
                if "\n" in said or "a bug" in said:
                    wrong.append(f"{case}: {name} said {said!r}")
                lines[type(exc).__name__] += 1
            except BaseException as exc:  # a Rust panic is not an Exception
                if isinstance(exc, KeyboardInterrupt):
                    raise
                wrong.append(f"{case}: {name} raised {type(exc).__name__}: {exc}")
        readers.clear()
        try:
            service.index_repo(root, index_dir=index_dir, vectors=True)
            readers.clear()
            repaired = service.search_code(QUESTION, root, index_dir=index_dir, auto_index=False)
            if not repaired.text.startswith("src/auth/session.py:"):
                wrong.append(f"{case}: after `repolens index` the search answered {repaired.text[:80]!r}")
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            wrong.append(f"{case}: `repolens index` did not repair it: {type(exc).__name__}: {exc}")
        readers.clear()
        _remove(index_dir)

    assert wrong == [], "\n".join(wrong)
    assert sum(damaged.values()) == SEEDS >= 200
    assert set(damaged) == {*map(str, files), "every file"}  # every file was damaged alone
    assert lines["IndexCorruptError"] > SEEDS // 2  # most damage is found, and said


def test_a_read_left_mid_way_goes_quietly_after_its_database(tmp_path: Path):
    """A read that stops mid-way (a damaged value, a caller that has enough)
    leaves its rows' generator open; gone after the database is closed, it
    closed its cursor too, which raised, and Python printed "Exception
    ignored in: <generator object rows_in>" with a traceback on stderr."""
    import sqlite3

    from repolens.store.local.sqlite import rows_in

    db = sqlite3.connect(tmp_path / "t.db")
    db.execute("CREATE TABLE t (k INTEGER)")
    db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(10)])
    rows = rows_in(db, "SELECT k FROM t WHERE k IN ({marks})", range(10))
    assert next(rows) == (0,)
    db.close()
    rows.close()  # what the garbage collector does, where an error is printed
