"""The indexes of a folder shared by many roots (``REPOLENS_INDEX_DIR``),
listed and dropped (:mod:`repolens.store.inventory`, which makes the
listing's entries of what this module reads).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from repolens.store.local import sqlite as sq
from repolens.store.local.generation import DB_NAME
from repolens.store.local.layout import IndexLayout


def local_indexes(parent: Path) -> list[tuple[str, str, str, dict[str, str]]]:
    """Each sub-folder of ``parent`` holding an index (a published one, else
    an interrupted build), by name: (key, generation, state, meta); the state
    ``empty`` for an index folder with no generation (a failed first build of
    an earlier version left its lock and ``.gitignore``), to be dropped."""
    out = []
    for folder in sorted(p for p in parent.iterdir() if p.is_dir() and not p.name.startswith(".")):
        layout = IndexLayout(folder, folder)
        current = layout.current_generation()
        building = layout.building_dirs()
        gen_dir = current or (building[-1] if building else None)
        if gen_dir is None:
            if layout.lock_path.exists() or (folder / ".gitignore").exists():
                out.append((folder.name, "", "empty", {}))
            continue
        try:
            db = sq.open_reader(gen_dir / DB_NAME)
            try:
                meta = sq.read_meta(db)
            finally:
                db.close()
        except Exception:  # a damaged index is listed, to be dropped
            meta = {}
        state = "published" if current is not None else "building"
        out.append((folder.name, gen_dir.name.removesuffix(".building"), state, meta))
    return out


def local_drop(parent: Path, key: str) -> None:
    """Delete the index folder ``parent/key`` under its writer lock
    (``IndexLockedError`` while one writes)."""
    folder = parent / key
    layout = IndexLayout(folder, folder)
    with layout.write_lock():
        doomed = parent / f".{key}.dropped-{os.getpid()}"
        os.replace(folder, doomed)  # gone at once for readers; removed below
    shutil.rmtree(doomed, ignore_errors=True)
