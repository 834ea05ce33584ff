"""Writing one local generation (:class:`repolens.store.base.IndexWriter`).

A batch is a SQLite transaction mirrored by the lexical index (tantivy).
tantivy commits first, keeping the state it replaced (:mod:`.segments`),
then SQLite commits with the opstamp of that tantivy commit in its meta
(``lexical_opstamp``). A batch that fails anywhere, a full disk included, is
undone in both halves: SQLite rolls back and tantivy's previous state is put
back. A crash between the two commits is repaired by the next writer, which
keeps tantivy's commit only if SQLite recorded it. A refresh is one batch
(:mod:`repolens.index.build`), so a failed refresh leaves the index as it was;
so does a compaction's rewrite of a segment that fails (:meth:`LocalWriter.compact`).

A build's batches may leave their documents to a later tantivy commit (see
:meth:`LocalWriter.commit`); SQLite then says so (``lexical_behind``), and
the next writer adds what a crash lost meanwhile (:meth:`LocalWriter.reconcile`).

Indexes written before the opstamp was recorded kept an outbox of chunks
(``lex_pending``) instead; :meth:`LocalWriter.reconcile` replays one a crash
left there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from repolens.chunking import Chunk, Symbol
from repolens.store.base import HistoryUpdate, LexicalFields, PackedRefs, SkippedFile
from repolens.store.document import document_fields
from repolens.store.local import history
from repolens.store.local import sqlite as sq
from repolens.store.local.failures import damaged, damaged_pages, guarded
from repolens.store.local.generation import (
    DB_NAME,
    LEXICAL_BEHIND,
    LEXICAL_DIR,
    LEXICAL_OPSTAMP,
    Generation,
    open_parts,
)
from repolens.store.local.lexical import Stopped
from repolens.store.local.segments import MAX_SEGMENTS, damaged_file

# Chunks read from the database at a time when a crashed build's waiting documents are added again.
_CATCH_UP_SLICE = 256


@guarded
class LocalWriter(Generation):
    """The one writer of a generation folder (the caller holds the write lock)."""

    def __init__(self, root: Path, index_dir: Path, gen_dir: Path, *, create: bool = False) -> None:
        super().__init__(root, index_dir, gen_dir, *open_parts(gen_dir, root, write=True, create=create))
        self._open = False
        self._wrote: set[str] = set()  # "content", "vectors", "stat" in the open batch
        self._behind = False  # a committed batch's documents wait for tantivy's next commit

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

    def commit(self, *, compact: bool = True, lexical: bool = True) -> None:
        """Commit tantivy, then SQLite (see the module docstring). A batch that
        wrote only vectors moves ``vectors_version``; any other batch moves
        ``content_version`` and ``vectors_version`` too and sets ``updated_at``,
        telling cached readers (dense matrix, path index, remembered queries)
        that content moved. Without ``compact`` the lexical segments that
        lost a chunk are left for :meth:`compact` (see
        :meth:`~.lexical.LexicalIndex.commit`).

        Without ``lexical``, a batch that only added documents commits SQLite
        alone and its documents wait in tantivy's writer for a later commit.
        A build says so between its pieces: each tantivy commit makes a
        segment, and tantivy merges eight into one, so a build committing
        every batch ended in one large segment (corpus-1m: 29,202 of 33,665
        documents) that the first refresh then rewrote whole, 9-12 s, where
        a build in pieces leaves segments of about a fifth of the index, as
        a refresh keeps them. SQLite records that documents wait
        (``lexical_behind``) in the same transaction, and :meth:`reconcile`
        adds those a crash lost."""
        content = "content" in self._wrote or not self._wrote
        sq.bump(self.db, "vectors_version")
        waits = content and not lexical and self.lex.only_added()
        if content:
            sq.bump(self.db, "content_version")
            sq.write_meta(self.db, {"updated_at": _now()})
            if waits:
                if not self._behind:
                    sq.write_meta(self.db, {LEXICAL_BEHIND: "1"})
                    self._behind = True
            else:
                self._lexical_committed(self.lex.commit(self._fields_of, compact=compact))
        self._committed(lexical=not waits)

    def compact(self, should_stop: Callable[[], bool] = lambda: False) -> int | None:
        """Rewrite the lexical segments that hold deleted chunks, a batch per
        segment (:meth:`~.lexical.LexicalIndex.compact`), so the index ranks
        as a fresh build; how many chunks were rewritten, None when
        ``should_stop()`` cut it short (the segment being rewritten is left
        as it was, those done stay done). Content does not move: no counter
        does, and remembered searches stay valid."""
        done = 0
        # A segment a batch; more than there can be segments would be a rewrite that did not take.
        for _ in range(MAX_SEGMENTS + 1):
            if not self.lex.has_deletions():
                break
            if should_stop():
                return None
            self.begin()
            try:
                compacted = self.lex.compact(self._fields_of, should_stop)
            except Stopped:
                self.abort()
                return None
            except BaseException:
                self.abort()
                raise
            if compacted is None:  # (has_deletions() said otherwise a moment ago)
                self.abort()
                break
            self._lexical_committed(compacted[0])
            self._committed()
            done += compacted[1]
        return done

    def _lexical_committed(self, opstamp: int | None) -> None:
        if opstamp is not None:
            sq.write_meta(self.db, {LEXICAL_OPSTAMP: str(opstamp)})
            if self._behind:  # what waited is in this commit
                sq.write_meta(self.db, {LEXICAL_BEHIND: "0"})
                self._behind = False

    def _committed(self, *, lexical: bool = True) -> None:
        self.db.execute("COMMIT")
        self._open = False
        if lexical:  # else the state before the waiting documents is still the one to go back to
            self.lex.forget_previous()

    def _fields_of(self, cids: Sequence[int]) -> Iterator[tuple[int, LexicalFields]]:
        """The lexical fields of stored chunks, as the indexer made them."""
        for cid, stored in sq.chunks_by_cid(self.db, cids).items():
            yield cid, document_fields(stored.chunk)

    def abort(self) -> None:
        """Undo the open batch in both halves (tantivy's previous state is put
        back if it had committed) and release tantivy's writer; the log of a
        transaction a full disk stopped is emptied."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
        self.lex.abort()
        self._open = False
        # What waited is gone with tantivy's writer: SQLite still says so,
        # for the next writer's reconcile, and no commit of this one unsays it.
        self._behind = False
        sq.shrink_log(self.db)

    def reconcile(self) -> int:
        """Make the lexical index hold exactly the stored chunks after a
        crash: the documents a build's batches left waiting (see
        :meth:`commit`) and never committed are added, and the outbox an
        older version's crash left between the SQLite and tantivy commits
        is replayed (every pending key deleted from tantivy and re-added
        when its chunk still exists). One batch; returns how many chunks
        were written."""
        written = self._catch_up() if sq.read_meta(self.db).get(LEXICAL_BEHIND) == "1" else 0
        pending = sq.pending_lexical(self.db)
        if not pending:
            return written
        cids = [cid for cid, _ in pending]
        self.begin()
        self.lex.delete(cids)
        self.lex.add((cid, s.chunk) for cid, s in sq.chunks_by_cid(self.db, cids).items())
        sq.clear_pending(self.db, cids)
        self.commit()
        return written + len(cids)

    def _catch_up(self) -> int:
        """Add the stored chunks tantivy's committed documents lack (only
        added documents wait: tantivy holds none that is not stored), then
        say that nothing waits."""
        held = self.lex.committed_cids()
        missing = sorted(cid for (cid,) in self.db.execute("SELECT cid FROM chunks") if cid not in held)
        self.begin()
        for start in range(0, len(missing), _CATCH_UP_SLICE):
            self.lex.add_fields(self._fields_of(missing[start : start + _CATCH_UP_SLICE]))
        sq.write_meta(self.db, {LEXICAL_BEHIND: "0"})
        self.commit()
        return len(missing)

    def verify(self) -> None:
        """Read every page of the database (``PRAGMA quick_check``, ~3 ms a
        MB) and every file of the lexical index against its checksum (~1 ms
        a MB): damage a refresh would not touch still makes the next index a
        rebuild. Values are not decoded, nor chunk texts decompressed; a
        reader that fails on one marks the generation (:mod:`.failures`)."""
        if problem := damaged_pages(self.db):
            raise damaged(self.gen_dir, f"{DB_NAME}: {problem}")
        if problem := damaged_file(self.lex.directory):
            raise damaged(self.gen_dir, f"{LEXICAL_DIR}/{problem}")

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
        refs: PackedRefs | None = None,
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
            refs=refs,
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
        self._wrote.add("stat")
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
