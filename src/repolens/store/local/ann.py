"""An approximate nearest-neighbour graph over the vectors, for big indexes.

Exact search is one float32 matrix product over every vector: 8.5 ms for
100k x 384 and 31 ms for 400k here, linear in the number of vectors, and
the matrix lives in memory (1.5 KB per vector). From ``ann_min_vectors``
(default 500k, chosen by measurement, see ``docs/benchmarks.md``) the dense
leg's top-k comes from a usearch HNSW graph instead: about 1 ms, recall@10
0.94 against exact search on 78k real MiniLM vectors, memory-mapped rather
than loaded. Recall falls as graphs grow (0.51 at 400k synthetic clustered
vectors), which is why the threshold sits where exact search starts to
cost real memory, not where the graph starts to be faster.

The graph is a cache of the ``vectors`` table, saved beside the database
with the ``vectors_version`` it matches. It is brought up to date when the
vectors are complete (after ``index`` fills them, and by ``serve``'s
background embedder): changed chunks are removed and added, or the graph is
rebuilt when much changed. While it lags behind (a refresh just changed some
chunks), search uses exact search, so a result never misses a fresh chunk.

usearch is optional (``pip install 'repolens[ann]'``); without it, indexes
of any size use exact search and ``repolens status`` says so.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repolens.store.local import sqlite as sq

if TYPE_CHECKING:
    from repolens.store.local.generation import Generation

ANN_FILE = "vectors.usearch"
ANN_SUM = "ann_fingerprint"  # the meta key of the graph file's fingerprint()
# HNSW parameters measured on 78k real MiniLM vectors (docs/benchmarks.md):
# connectivity 16 and a search beam of 256 give recall@10 0.94-0.96 at ~1 ms.
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 256
# Past this share of changed vectors, a fresh graph beats patching the old one
# (removed nodes stay as tombstones and degrade the graph).
REBUILD_SHARE = 0.2
_READ_BATCH = 10_000


def available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class AnnState:
    """Where the graph of one generation stands; ``line`` says it to a person."""

    usable: bool
    line: str


def _meta_key(meta: dict[str, str]) -> str:
    """What the graph's vectors depend on: the model and what it embedded."""
    return f"{meta.get('embed_identity', '')}\0{meta.get('embed_style', '')}"


def is_current(meta: dict[str, str], gen_dir: Path) -> bool:
    """The generation's graph file matches its vectors as they are now."""
    return (
        meta.get("ann_version") == meta.get("vectors_version", "0")
        and meta.get("ann_model") == _meta_key(meta)
        and (gen_dir / ANN_FILE).is_file()
    )


def fingerprint(path: Path) -> str:
    """The graph file's size and the wrapping sum of its 8-byte words (~15 ms
    a 200 MB file): a flipped byte, a cut or a page of zeros changes it.
    usearch follows the links of a memory-mapped graph unchecked, so a
    damaged one would crash the process; one that does not match the
    fingerprint recorded when it was saved is not used (exact search
    answers, and the next ``repolens index`` saves it anew)."""
    size = path.stat().st_size
    if size < 8:
        return f"{size}:{path.read_bytes().hex()}"
    data = np.memmap(path, dtype=np.uint8, mode="r")
    try:
        whole = size // 8 * 8
        total = int(data[:whole].view(np.uint64).sum(dtype=np.uint64))
        return f"{size}:{total:x}:{bytes(data[whole:]).hex()}"
    finally:
        data._mmap.close()  # type: ignore[attr-defined]  # (not left to the collector)


def _why_exact(min_vectors: int, count: int) -> str:
    """Why an index of ``count`` vectors gets no graph ("" when it should have one)."""
    if min_vectors <= 0:
        return "off (ann_min_vectors = 0): exact search"
    if count < min_vectors:
        return f"exact search ({count:,} vectors, graph from {min_vectors:,})"
    if not available():
        return f"exact search over {count:,} vectors: install 'repolens[ann]' (usearch) for a graph"
    return ""


def state(handle: Generation, min_vectors: int, count: int | None = None) -> AnnState:
    if count is None:
        count = sq.count_vectors(handle.db)
    why = _why_exact(min_vectors, count)
    if why:
        return AnnState(False, why)
    if is_current(handle.meta(), handle.gen_dir):
        return AnnState(True, f"HNSW graph over {count:,} vectors (current)")
    return AnnState(False, "exact search: the graph is behind the vectors until they are complete")


def new_graph(dim: int) -> Any:
    """An empty graph with repolens's measured parameters."""
    from usearch.index import Index

    return Index(
        ndim=dim,
        metric="cos",
        dtype="f16",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def load(handle: Generation) -> Any | None:
    """The generation's graph, memory-mapped, when it matches the vectors now
    and usearch is installed (an index built with the ``ann`` extra may be
    read by a repolens without it: exact search answers there, as documented)."""
    if not available():
        return None
    from usearch.index import Index

    path = handle.gen_dir / ANN_FILE
    try:
        if fingerprint(path) != handle.meta().get(ANN_SUM):
            return None  # damaged, or saved by a version that did not record it
        index = Index.restore(str(path), view=True)
    except Exception:  # a missing, partial or foreign file: exact search answers instead
        return None
    if index is None:
        return None
    index.expansion_search = EXPANSION_SEARCH
    return index


def search(index: Any, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    found = index.search(query.astype(np.float32), k)
    # cosine distance = 1 - cosine similarity
    return [(int(key), 1.0 - float(d)) for key, d in zip(found.keys, found.distances, strict=True)]


def sync(handle: Generation, min_vectors: int) -> str:
    """Bring the graph up to date with complete vectors; one line on what was
    done ("" when nothing was needed). The caller holds the writer lock."""
    path = handle.gen_dir / ANN_FILE
    count = sq.count_vectors(handle.db)
    if _why_exact(min_vectors, count):
        path.unlink(missing_ok=True)
        return ""
    meta = handle.meta()
    if is_current(meta, handle.gen_dir) and load(handle) is not None:
        return ""
    if count < handle.db.execute("SELECT count(*) FROM chunks").fetchone()[0]:
        return ""  # not complete yet: exact search meanwhile
    version = meta.get("vectors_version", "0")
    index, how = _patched(handle, path, meta, count)
    tmp = path.with_name(f".{ANN_FILE}.{os.getpid()}.tmp")
    try:
        index.save(str(tmp))
        saved = fingerprint(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    handle.db.execute("BEGIN")
    sq.write_meta(handle.db, {"ann_version": version, "ann_model": _meta_key(meta), ANN_SUM: saved})
    handle.db.execute("COMMIT")
    return f"HNSW graph {how} over {count:,} vectors"


def _patched(handle: Generation, path: Path, meta: dict[str, str], count: int) -> tuple[Any, str]:
    """The old graph with removed and new vectors applied, or a new graph."""
    from usearch.index import Index

    wanted = np.fromiter((r[0] for r in handle.db.execute("SELECT cid FROM vectors")), dtype=np.uint64)
    old = None
    if path.is_file() and meta.get("ann_model") == _meta_key(meta):
        with contextlib.suppress(Exception):  # damaged: build afresh
            old = Index.restore(str(path)) if fingerprint(path) == meta.get(ANN_SUM) else None
    if old is not None:
        have = np.asarray(old.keys, dtype=np.uint64)
        gone = np.setdiff1d(have, wanted, assume_unique=True)
        new = np.setdiff1d(wanted, have, assume_unique=True)
        if len(gone) + len(new) <= REBUILD_SHARE * max(count, 1):
            if len(gone):
                old.remove(gone)
            _add(handle, old, new)
            return old, f"updated (+{len(new):,} -{len(gone):,})"
    index = new_graph(int(meta.get("embed_dim") or 0) or _dim(handle))
    _add(handle, index, wanted)
    return index, "built"


def _dim(handle: Generation) -> int:
    row = handle.db.execute("SELECT vec FROM vectors LIMIT 1").fetchone()
    return len(row[0]) // 2  # float16


def _add(handle: Generation, index: Any, cids: np.ndarray) -> None:
    for start in range(0, len(cids), _READ_BATCH):
        part = [int(c) for c in cids[start : start + _READ_BATCH]]
        marks = ",".join("?" * len(part))
        rows = handle.db.execute(f"SELECT cid, vec FROM vectors WHERE cid IN ({marks})", part).fetchall()
        if not rows:
            continue
        keys = np.fromiter((r[0] for r in rows), dtype=np.uint64, count=len(rows))
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1)
        index.add(keys, vecs.astype(np.float32))
