"""Remembered search results, so a reply can be re-rendered without searching.

Every search stores its ranked candidates (chunk keys, scores, per-leg
ranks, the factors of each score) under a short ``query_id`` in ``<index_dir>/queries/``. A later call
with that id renders the same result in another mode (packet, files, JSON)
from the same index generation. Files, not memory, so the CLI and the MCP
server share them; the newest ``KEEP`` are kept.

A remembered result is tied to the generation it was computed on: after a
rebuild its chunk keys mean nothing, so it is refused with the fix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from repolens.errors import NotFoundError, UsageError
from repolens.search.retrieve import Filters

KEEP = 200
Ranked = tuple[int, float, dict[str, tuple[int, float]], dict[str, float | str]]
# The note of a search whose result could not be stored.
NOT_REMEMBERED = (
    "this search is not remembered (its index folder cannot be written): its query_id cannot re-render it"
)
_ID = re.compile(r"^[0-9a-f]{10}$")


@dataclass(frozen=True)
class Remembered:
    query_id: str
    query: str
    generation: str
    filters: Filters
    # (cid, score, {leg: (rank, score)}, {factor: value}) in rank order
    ranked: list[Ranked]


def _folder(index_dir: Path) -> Path:
    return index_dir / "queries"


def remember(
    index_dir: Path,
    generation: str,
    query: str,
    filters: Filters,
    ranked: list[Ranked],
) -> tuple[str, bool]:
    """Store a result; return its id and whether it was stored. Best effort:
    an index folder that cannot be written (a read-only disk) still answers
    the search; the id then cannot re-render it (say so: ``NOT_REMEMBERED``)."""
    digest = hashlib.blake2b(digest_size=5)
    # Deterministic: the same search on the same index gets the same id.
    digest.update(f"{generation}\0{query}\0{filters}".encode())
    query_id = digest.hexdigest()
    folder = _folder(index_dir)
    data = {
        "query_id": query_id,
        "query": query,
        "generation": generation,
        "filters": asdict(filters),
        "ranked": ranked,
    }
    tmp = folder / f".{query_id}.{os.getpid()}.tmp"
    try:
        folder.mkdir(exist_ok=True)
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, folder / f"{query_id}.json")
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return query_id, False
    with contextlib.suppress(OSError):
        _prune(folder)
    return query_id, True


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for old in entries[:-KEEP]:
        with contextlib.suppress(OSError):
            old.unlink()


def recall(index_dir: Path, query_id: str, generation: str) -> Remembered:
    if not isinstance(query_id, str) or not _ID.match(query_id):
        raise UsageError(f"query_id {query_id!r} is not an id from a search reply (10 hex digits)")
    path = _folder(index_dir) / f"{query_id}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise NotFoundError(f"no remembered search {query_id} for this index: run the search again") from None
    if data.get("generation") != generation:
        raise NotFoundError(
            f"search {query_id} was made on an older index (changed since): run the search again"
        )
    filters = data.get("filters") or {}
    return Remembered(
        query_id=query_id,
        query=data["query"],
        generation=generation,
        filters=Filters(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in filters.items()}),
        ranked=[
            (int(c), float(s), {k: (int(r), float(v)) for k, (r, v) in legs.items()}, dict(*factors))
            for c, s, legs, *factors in data["ranked"]
        ],
    )
