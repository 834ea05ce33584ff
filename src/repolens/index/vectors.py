"""The dense leg's write side: filling vectors after the lexical index.

Embedding never blocks the first answer. The lexical index is published
first; vectors are then computed in batches and committed to the published
generation as they finish, so an interrupted run resumes where it stopped
and searches meanwhile use whatever share is done (and say so).

Vectors are float16 rows in the ``vectors`` table, keyed by chunk. The
index records the embedder's identity and the embedding style; vectors of
another model are never mixed in, and searching with another model is
refused with the fix. A rebuild copies the vectors of unchanged chunks from
the previous generation (matched by content-derived chunk id), and an
optional cache folder shares them across indexes (branches, worktrees).

Searching them is the read side, :mod:`repolens.store.dense`.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from repolens.errors import EmbedderError
from repolens.models.base import Embedder
from repolens.models.document import embedding_text
from repolens.store import IndexHandle
from repolens.store import sqlite as sq

BATCH = 64
ProgressFn = Callable[[int, int], None]


@dataclass
class VectorReport:
    done: int = 0
    total: int = 0
    embedded: int = 0  # computed by the model in this run
    reused: int = 0  # copied from a previous generation or the cache
    seconds: float = 0.0
    interrupted: bool = False
    reason: str = ""  # why every vector was dropped first, if it was
    ann: str = ""  # what was done to the HNSW graph (repolens.store.ann), if anything

    def summary(self) -> str:
        state = "interrupted, resumes on the next run" if self.interrupted else "complete"
        pct = 100.0 * self.done / max(self.total, 1)
        line = (
            f"vectors: {self.done}/{self.total} chunks ({pct:.0f}%, {state}); "
            f"{self.embedded} embedded, {self.reused} reused in {self.seconds:.1f}s"
        )
        lines = [line] + [f"vectors: {extra}" for extra in (self.reason, self.ann) if extra]
        return "\n".join(lines)


def coverage(db: sqlite3.Connection) -> tuple[int, int]:
    """(chunks with a vector, chunks)."""
    done = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return int(done), int(total)


def bind_embedder(db: sqlite3.Connection, embedder: Embedder, style: str) -> None:
    """Record the model and style, or refuse when the index holds another's."""
    meta = sq.read_meta(db)
    identity = meta.get("embed_identity")
    if identity and (identity != embedder.identity or meta.get("embed_style") != style):
        done, _ = coverage(db)
        if done:
            raise EmbedderError(
                f"the index holds vectors of {identity} ({meta.get('embed_style')}) but the configured "
                f"model is {embedder.identity} ({style}): re-run `repolens index --rebuild`, or restore "
                "the embed settings the index was built with"
            )
    sq.write_meta(db, {"embed_identity": embedder.identity, "embed_style": style, "embed_dim": embedder.dim})


def drop_if_other_model(db: sqlite3.Connection, embedder: Embedder, style: str) -> str:
    """Delete every vector when the index holds another model's or style's;
    return the one-line reason ("" when nothing was dropped)."""
    meta = sq.read_meta(db)
    identity = meta.get("embed_identity")
    if not identity or (identity == embedder.identity and meta.get("embed_style") == style):
        return ""
    db.execute("BEGIN")
    db.execute("DELETE FROM vectors")
    db.execute("DELETE FROM meta WHERE key IN ('embed_identity', 'embed_style', 'embed_dim')")
    _bump(db)
    db.execute("COMMIT")
    return (
        f"embedding settings changed ({identity} -> {embedder.identity}, {style}): re-embedding every chunk"
    )


def _bump(db: sqlite3.Connection) -> None:
    db.execute(
        "INSERT INTO meta(key, value) VALUES('vectors_version', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


def _put(db: sqlite3.Connection, rows: Iterable[tuple[int, bytes]]) -> None:
    db.executemany("INSERT OR REPLACE INTO vectors(cid, vec) VALUES(?, ?)", rows)


def copy_from(handle: IndexHandle, previous_db: Path, identity: str, style: str) -> int:
    """Copy vectors of chunks (same id) from the previous generation's
    database, when it was embedded by the same model and style."""
    try:
        old = sqlite3.connect(f"file:{previous_db}?mode=ro", uri=True)
        try:
            meta = dict(old.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("embed_identity") != identity or meta.get("embed_style") != style:
                return 0
            rows = old.execute("SELECT c.id, v.vec FROM vectors v JOIN chunks c ON c.cid = v.cid").fetchall()
        finally:
            old.close()
    except sqlite3.Error:
        return 0
    if not rows:
        return 0
    ids = dict(handle.db.execute("SELECT id, cid FROM chunks").fetchall())
    found = [(ids[chunk_id], vec) for chunk_id, vec in rows if chunk_id in ids]
    handle.db.execute("BEGIN")
    _put(handle.db, found)
    _bump(handle.db)
    handle.db.execute("COMMIT")
    return len(found)


class EmbedCache:
    """Vectors by (model, style, text), shared across indexes; a plain SQLite
    file under the configured folder. Entries never go stale: the key is a
    hash of everything that determines the vector."""

    def __init__(self, folder: Path, identity: str, style: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(folder / "vectors.db", timeout=30.0, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS cache (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self.salt = f"{identity}\0{style}\0".encode()

    def key(self, text: str) -> bytes:
        return hashlib.blake2b(self.salt + text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def get(self, keys: list[bytes]) -> dict[bytes, bytes]:
        marks = ",".join("?" * len(keys))
        return dict(self.db.execute(f"SELECT key, vec FROM cache WHERE key IN ({marks})", keys).fetchall())

    def put(self, items: list[tuple[bytes, bytes]]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO cache(key, vec) VALUES(?, ?)", items)

    def close(self) -> None:
        self.db.close()


def fill(
    handle: IndexHandle,
    embedder: Embedder,
    *,
    style: str,
    cache_dir: Path | None = None,
    batch: int = BATCH,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
    max_batches: int | None = None,
) -> VectorReport:
    """Embed every chunk that has no vector yet, committing each batch.

    ``should_stop`` is polled between batches (Ctrl-C, server shutdown); the
    work done so far is kept either way.
    """
    started = time.monotonic()
    db = handle.db
    bind_embedder(db, embedder, style)
    report = VectorReport()
    report.done, report.total = coverage(db)
    cache = EmbedCache(cache_dir, embedder.identity, style) if cache_dir else None
    batches = 0
    try:
        while max_batches is None or batches < max_batches:
            batches += 1
            if should_stop is not None and should_stop():
                report.interrupted = True
                break
            cids = [
                r[0]
                for r in db.execute(
                    "SELECT cid FROM chunks WHERE cid NOT IN (SELECT cid FROM vectors) ORDER BY cid LIMIT ?",
                    (batch,),
                )
            ]
            if not cids:
                break
            stored = sq.chunks_by_cid(db, cids)
            cids = [c for c in cids if c in stored]
            texts = [embedding_text(stored[c].chunk, style) for c in cids]
            blobs: dict[int, bytes] = {}
            if cache is not None:
                keys = [cache.key(t) for t in texts]
                hits = cache.get(keys)
                blobs = {c: hits[k] for c, k in zip(cids, keys, strict=True) if k in hits}
                report.reused += len(blobs)
            todo = [i for i, c in enumerate(cids) if c not in blobs]
            if todo:
                vecs = embedder.embed_documents([texts[i] for i in todo]).astype(np.float16)
                for i, row in zip(todo, vecs, strict=True):
                    blobs[cids[i]] = row.tobytes()
                report.embedded += len(todo)
                if cache is not None:
                    cache.put([(keys[i], blobs[cids[i]]) for i in todo])
            db.execute("BEGIN")
            _put(db, blobs.items())
            _bump(db)
            db.execute("COMMIT")
            report.done += len(blobs)
            if progress is not None:
                progress(report.done, report.total)
    finally:
        if cache is not None:
            cache.close()
    report.seconds = time.monotonic() - started
    return report
