"""Writing one local generation (:class:`repolens.store.base.IndexWriter`).

A batch is a SQLite transaction mirrored by tantivy: SQLite commits first,
then tantivy, then the ``lex_pending`` outbox is drained. A crash between
any two steps leaves outbox rows that the next writer replays
(:meth:`LocalWriter.reconcile`); a reader resolves every lexical hit
against SQLite, so it never cites a chunk whose rows are gone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from repolens.chunking import Chunk, Symbol
from repolens.store.base import HistoryUpdate, LexicalFields, SkippedFile
from repolens.store.local import history
from repolens.store.local import sqlite as sq
from repolens.store.local.generation import DB_NAME, Generation, open_parts


class LocalWriter(Generation):
    """The one writer of a generation folder (the caller holds the write lock)."""

    def __init__(self, root: Path, index_dir: Path, gen_dir: Path, *, create: bool = False) -> None:
        super().__init__(root, index_dir, gen_dir, *open_parts(gen_dir, root, write=True, create=create))
        self._open = False
        self._wrote: set[str] = set()  # "content" and/or "vectors" in the open batch

    def write_meta(self, values: Mapping[str, object]) -> None:
        sq.write_meta(self.db, values)

    # -- batches -----------------------------------------------------------
    @property
    def in_batch(self) -> bool:
        return self._open

    def begin(self) -> None:
        self.db.execute("BEGIN")
        self._open = True
        self._wrote = set()

    def commit(self) -> None:
        """Commit SQLite, then tantivy, then drain the outbox. A batch that
        wrote only vectors moves ``vectors_version``; any other batch moves
        ``content_version`` and ``vectors_version`` too and sets ``updated_at``,
        telling cached readers (dense matrix, path index, remembered queries)
        that content moved."""
        content = "content" in self._wrote or not self._wrote
        sq.bump(self.db, "vectors_version")
        if content:
            sq.bump(self.db, "content_version")
            sq.write_meta(self.db, {"updated_at": _now()})
        self.db.execute("COMMIT")
        self._open = False
        if content:
            self.lex.commit()
            pending = sq.pending_lexical(self.db)
            if pending:
                self.db.execute("BEGIN")
                sq.clear_pending(self.db, [cid for cid, _ in pending])
                self.db.execute("COMMIT")

    def abort(self) -> None:
        """Undo the open batch in both halves (the tantivy writer mirrors the
        rolled-back transaction) and release tantivy's writer."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self.lex.abort()
        self._open = False

    def reconcile(self) -> int:
        """Replay the outbox left by a crash between the SQLite and tantivy commits.

        Every pending key is deleted from tantivy and re-added when its chunk
        still exists, so a replay is idempotent. Returns how many were replayed.
        """
        pending = sq.pending_lexical(self.db)
        if not pending:
            return 0
        cids = [cid for cid, _ in pending]
        self.lex.delete(cids)
        stored = sq.chunks_by_cid(self.db, cids)
        self.lex.add((cid, s.chunk) for cid, s in stored.items())
        self.lex.commit()
        self.db.execute("BEGIN")
        sq.clear_pending(self.db, cids)
        self.db.execute("COMMIT")
        return len(cids)

    # -- files -------------------------------------------------------------
    def add_file(
        self,
        *,
        path: str,
        hash: str,
        size: int,
        mtime_ns: int,
        language: str,
        lines: int,
        flags: str,
        chunks: Sequence[Chunk],
        symbols: Sequence[Symbol],
        fields: Sequence[LexicalFields],
        vectors: Mapping[str, bytes] | None = None,
    ) -> list[int]:
        self._wrote.add("content")
        cids = sq.insert_file(
            self.db,
            path=path,
            hash=hash,
            size=size,
            mtime_ns=mtime_ns,
            language=language,
            lines=lines,
            flags=flags,
            chunks=chunks,
            symbols=symbols,
        )
        if vectors:  # an edit elsewhere in the file keeps these chunks' vectors
            sq.put_vectors(
                self.db,
                [(cid, vectors[c.id]) for cid, c in zip(cids, chunks, strict=True) if c.id in vectors],
            )
        self.lex.add_fields(zip(cids, fields, strict=True))
        return cids

    def delete_file(self, file_id: int) -> None:
        """Remove a file from both halves (SQLite first; tantivy mirrors the order)."""
        self._wrote.add("content")
        self.lex.delete(sq.delete_file(self.db, file_id))

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        self._wrote.add("content")
        sq.touch_file(self.db, file_id, size, mtime_ns)

    def set_skipped(self, skip: SkippedFile) -> None:
        self._wrote.add("content")
        sq.set_skipped(self.db, skip)

    def forget_skipped(self, paths: Iterable[str]) -> None:
        self._wrote.add("content")
        sq.forget_skipped(self.db, paths)

    # -- history: its own transaction, outside a batch ------------------------
    def update_history(self, update: HistoryUpdate) -> None:
        assert not self._open, "update_history runs outside a batch"
        history.update(self.db, update)

    # -- vectors -----------------------------------------------------------
    def vectors_of_file(self, file_id: int) -> dict[str, bytes]:
        return sq.vectors_of_file(self.db, file_id)

    def chunks_missing_vectors(self, limit: int) -> list[int]:
        return sq.chunks_missing_vectors(self.db, limit)

    def put_vectors(self, rows: Iterable[tuple[int, bytes]]) -> None:
        self._wrote.add("vectors")
        sq.put_vectors(self.db, rows)

    def drop_vectors(self) -> None:
        self._wrote.add("vectors")
        sq.drop_vectors(self.db)

    def copy_vectors(self, source: str, identity: str, style: str) -> int:
        """Copy vectors of chunks (same id) from generation ``source``'s
        database, when it was embedded by the same model and style."""
        previous_db = self.index_dir / source / DB_NAME
        try:
            old = sqlite3.connect(f"file:{previous_db}?mode=ro", uri=True)
            try:
                meta = sq.read_meta(old)
                if meta.get("embed_identity") != identity or meta.get("embed_style") != style:
                    return 0
                rows = sq.vectors_by_chunk_id(old)
            finally:
                old.close()
        except sqlite3.Error:
            return 0
        if not rows:
            return 0
        ids = sq.chunk_keys(self.db)
        found = [(ids[chunk_id], vec) for chunk_id, vec in rows if chunk_id in ids]
        self.begin()
        self.put_vectors(found)
        self.commit()
        return len(found)

    def sync_dense_index(self, min_vectors: int) -> str:
        from repolens.store.local import ann  # numpy, usearch: only for indexes with vectors

        return ann.sync(self, min_vectors)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
