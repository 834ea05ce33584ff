"""Remembered search results of a local index: one file per result.

They live in ``<index_dir>/queries/<query_id>.json``, beside the
generations rather than in one: a result names the generation it was ranked
on (:mod:`repolens.search.remembered` checks it), and files, not memory, so
the CLI and the MCP server share them. When there are more than
``PRUNE_AT``, the newest ``KEEP`` are kept: pruning in batches, because
listing and dating every result on every search cost 3 ms of a ~30 ms
search.

A search asked again on an unchanged index has the same id and the same
result: the file that holds it is left as it is and only dated anew (so
pruning counts it among the newest). Renaming a fresh copy over it would
make ext4 write the data out before the rename returns (``auto_da_alloc``
flushes a file renamed over another), ~3 ms of wall time for nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

KEEP = 200
PRUNE_AT = KEEP + KEEP // 4
_NAME = re.compile(r"^[0-9a-f]{1,64}$")  # ids are hex digests: never a path


def _folder(index_dir: Path) -> Path:
    return index_dir / "queries"


def remember(index_dir: Path, query_id: str, payload: str) -> bool:
    """Write the result atomically (a reader sees all of it or none); False
    when the folder cannot be written (a read-only disk)."""
    if not _NAME.match(query_id):
        raise ValueError(f"query id {query_id!r} is not a hex digest")
    folder = _folder(index_dir)
    target = folder / f"{query_id}.json"
    if recall(index_dir, query_id) == payload:
        with contextlib.suppress(OSError):
            os.utime(target)  # the newest again, for pruning (a read-only disk keeps its date)
        return True
    tmp = folder / f".{query_id}.{os.getpid()}.tmp"
    try:
        folder.mkdir(exist_ok=True)
        tmp.write_text(payload, encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    with contextlib.suppress(OSError):
        if len(os.listdir(folder)) > PRUNE_AT:
            _prune(folder)
    return True


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-KEEP]:
        with contextlib.suppress(OSError):
            old.unlink()


def recall(index_dir: Path, query_id: str) -> str | None:
    if not _NAME.match(query_id):
        return None
    try:
        return (_folder(index_dir) / f"{query_id}.json").read_text(encoding="utf-8")
    except (OSError, ValueError):  # missing, unreadable, not UTF-8
        return None
