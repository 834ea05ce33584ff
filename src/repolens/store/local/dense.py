"""Searching the vectors of one local generation.

Exact search is one float32 matrix product over every vector, cached in
memory per generation and refreshed when ``vectors_version`` moves; big
indexes go through the HNSW graph of :mod:`repolens.store.local.ann`. The
vectors are computed by :mod:`repolens.index.vectors`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from repolens.store.local import ann

if TYPE_CHECKING:
    from repolens.store.local.generation import Generation


class DenseIndex:
    """The vectors of one generation, searched exactly (a float32 matrix) or,
    for big indexes, through the HNSW graph of :mod:`repolens.store.local.ann`.

    A cache: reloaded when the generation's ``vectors_version`` differs from
    the one it was loaded at (a batch was committed since). The matrix is
    read only when exact search or per-chunk similarities need it, so an
    index answered by its graph never holds every vector in memory.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[str, str] | None = None
        self._graph: object | None = None
        self._matrix_loaded = False
        self._cids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, 0), dtype=np.float32)

    def _load(self, handle: Generation, *, matrix: bool) -> None:
        meta = handle.meta()
        version = meta.get("vectors_version", "0")
        key = (str(handle.gen_dir), version)
        if key != self._key:
            self._key = key
            self._matrix_loaded = False
            self._cids = np.zeros(0, dtype=np.int64)
            self._matrix = np.zeros((0, 0), dtype=np.float32)
            self._graph = None
            if ann.is_current(meta, handle.gen_dir):
                self._graph = ann.load(handle)
        if matrix and not self._matrix_loaded:
            self._read_matrix(handle)

    def _read_matrix(self, handle: Generation) -> None:
        rows = handle.db.execute("SELECT cid, vec FROM vectors ORDER BY cid").fetchall()
        if rows:
            self._cids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            # Stored as float16 (half the disk), searched as float32: numpy has
            # no fast float16 product (166 ms vs 17 ms for 100k x 384 here).
            half = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1)
            self._matrix = half.astype(np.float32)
        self._matrix_loaded = True

    def uses_graph(self, handle: Generation) -> bool:
        with self._lock:
            self._load(handle, matrix=False)
            return self._graph is not None

    def similarities(self, handle: Generation, query: np.ndarray, cids: Iterable[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each of ``cids`` that has a vector."""
        with self._lock:
            self._load(handle, matrix=True)
            all_cids, matrix = self._cids, self._matrix
        wanted = np.fromiter(cids, dtype=np.int64)
        if not len(all_cids) or not len(wanted):
            return {}
        pos = np.searchsorted(all_cids, wanted)
        pos = np.clip(pos, 0, len(all_cids) - 1)
        ok = all_cids[pos] == wanted
        sims = matrix[pos[ok]] @ query.astype(np.float32)
        return {int(c): float(v) for c, v in zip(wanted[ok], sims, strict=True)}

    def search(self, handle: Generation, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` (cid, cosine similarity): from the graph when it is current."""
        with self._lock:
            self._load(handle, matrix=False)
            graph = self._graph
            if graph is None:
                self._load(handle, matrix=True)
            cids, matrix = self._cids, self._matrix
        if graph is not None:
            return ann.search(graph, query, k)
        if not len(cids):
            return []
        sims = matrix @ query.astype(np.float32)
        k = min(k, len(cids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(int(cids[i]), float(sims[i])) for i in top]


_DENSE: dict[str, DenseIndex] = {}


def dense_for(handle: Generation) -> DenseIndex:
    """The cached dense index of a generation (one per generation folder)."""
    key = str(handle.gen_dir)
    with contextlib.suppress(KeyError):
        return _DENSE[key]
    if len(_DENSE) > 8:
        _DENSE.clear()
    return _DENSE.setdefault(key, DenseIndex())
