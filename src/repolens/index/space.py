"""How much free space writing an index needs, for the message of a full disk.

An estimate, made once the failed write was undone: the index grows with
its source, so a refresh needs about what the index takes, scaled by how
much the source grew since it was indexed (it rewrites at most its lexical
half and logs the database pages it changes); a rebuild half as much again
(a new generation beside the old one, and its log); a first build about
twice the bytes of its source (an index is about as big as its source, and
the log and tantivy's merges hold as much again while it is written).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from repolens.discover import discover
from repolens.errors import RepolensError, StorageFullError
from repolens.settings import Settings
from repolens.store.base import Store


@contextlib.contextmanager
def full_disk_said(store: Store, settings: Settings, *, rebuild: bool) -> Iterator[None]:
    """Around an index write: a full disk is said again once what failed is
    undone (the free space measured anew), with what a retry needs."""
    try:
        yield
    except StorageFullError as exc:
        raise StorageFullError(exc.folder, need=space_needed(store, settings, rebuild=rebuild)) from exc


def space_needed(store: Store, settings: Settings, *, rebuild: bool) -> int:
    """Bytes of free space a retry of an index write of ``store`` needs (about)."""
    found = discover(store.root, max_file_bytes=settings.max_file_bytes, index_dir=store.local_folder)
    source = sum(src.size for src in found.files)
    taken = folder_bytes(store.local_folder)
    current = store.current()
    if not taken or current is None:
        return 2 * source
    try:
        indexed = int(store.generation_meta(current).get("bytes", 0))
    except (RepolensError, ValueError):
        indexed = 0
    grown = taken * source // indexed if indexed else taken
    need = max(taken, grown)
    return need * 3 // 2 if rebuild else need


def folder_bytes(folder: Path | None) -> int:
    """The bytes of the files under ``folder`` (0 for none)."""
    if folder is None:
        return 0
    total = 0
    for dirpath, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total
