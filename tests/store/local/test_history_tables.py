"""The local store's history tables: tables of another shape (an index
written by an earlier build) are not read, and the next sync replaces them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import Git, MakeRepo
from repolens import service
from repolens.store.handles import readers


def test_history_tables_of_another_shape_are_not_read_and_are_replaced(make_repo: MakeRepo, git: Git):
    root = make_repo({"a.py": "def alpha():\n    return 1\n", "b.py": "x = 1\n"})
    service.index_repo(root)
    db_path = next((root / ".repolens").glob("gen-*/index.db"))
    db = sqlite3.connect(db_path)
    db.executescript(
        "DROP TABLE history_files; CREATE TABLE history_files (commit_id INTEGER, path TEXT);"
        "DELETE FROM meta WHERE key = 'history_schema';"
    )
    db.commit()
    db.close()
    readers.clear()
    assert service.search_history(path="a.py", root=root).notes == [
        "no history: this index has no history yet; `repolens index` reads it"
    ]
    assert "history: 1 commit up to" in service.index_repo(root).summary()
    readers.clear()
    assert [e.subject for e in service.search_history(path="a.py", root=root).entries] == ["initial"]


def test_a_fresh_index_has_history_tables_in_the_current_shape(make_repo: MakeRepo, tmp_path: Path):
    root = make_repo({"a.py": "x = 1\n"})
    service.index_repo(root)
    assert service.index_status(root).history.startswith("1 commit up to ")
