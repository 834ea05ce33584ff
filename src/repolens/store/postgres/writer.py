"""Writing one generation on PostgreSQL (:class:`repolens.store.base.IndexWriter`).

A batch is one transaction on the writer's own connection: files, chunks,
symbols, lexical postings, statistics, vectors and the meta counters commit
together or not at all, so there is no outbox to reconcile. Rows added in a
batch are buffered and written with ``COPY`` when the batch commits (or
before anything reads or deletes within it); chunk and file ids are
assigned here from the generation's counters, which only this writer (under
the write lock) moves.

A build (a generation not yet published) writes its postings as the
batch's packed lists (:func:`repolens.store.postgres.packing.write_parts`),
and commits without waiting for the server to flush them to disk
(``synchronous_commit`` off for its own connection): a batch a crash loses
is written again by the run that resumes the build, whose counters come
from the database, and the publish, on a connection of its own, is durable
as ever. A refresh writes a row per posting into ``lex_postings``, which
the next reader reads beside the lists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from repolens.chunking import Chunk, Symbol
from repolens.store.base import (
    FileRecord,
    HistoryState,
    HistoryUpdate,
    LexicalFields,
    PackedRefs,
    SkippedFile,
    StoredChunk,
    normalize_symbol,
)
from repolens.store.chunk_rows import compress
from repolens.store.postgres import history, packing, rows
from repolens.store.postgres.connect import connect, translate
from repolens.store.postgres.postings import SCORED, add_postings, new_lists, postings
from repolens.store.ref_rows import as_refs, ref_names, unpack_refs

if TYPE_CHECKING:
    import psycopg

    from repolens.store.postgres.handle import StoreHandle

_COPY = {
    "files": "gen, id, path, hash, size, mtime_ns, language, lines, flags",
    "chunks": "gen, cid, id, file_id, path, start_line, end_line, language, kind, name, qualname, signature,"
    " parent, doc, kinds, text, lens",
    "symbols": "gen, seq, file_id, path, name, norm, qualname, kind, start_line, end_line, signature, parent,"
    " language",
    "lex_postings": "gen, token, field, cid, packed",
    "refs": "gen, file_id, data",
    "ref_names": "gen, name, file_id",
}


def bump_sql(key: str) -> str:
    return (
        "INSERT INTO meta (gen, key, value) VALUES (%(g)s, '" + key + "', '1') ON CONFLICT (gen, key)"
        " DO UPDATE SET value = (meta.value::bigint + 1)::text"
    )


def write_meta_sql() -> str:
    return (
        "INSERT INTO meta (gen, key, value) VALUES (%s, %s, %s)"
        " ON CONFLICT (gen, key) DO UPDATE SET value = excluded.value"
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class PgWriter:
    """The one writer of a generation (the caller holds the store's write lock)."""

    def __init__(self, store: StoreHandle, gen: int, name: str) -> None:
        self.store = store
        self.gen = gen
        self._name = name
        self.conn = connect(store.url)
        self._open = False
        self._wrote: set[str] = set()
        self._building = False
        self._reset_buffers()
        if self._building:
            with translate(store.url):
                self.conn.execute("SET synchronous_commit = off")

    @property
    def generation(self) -> str:
        return self._name

    def _reset_buffers(self) -> None:
        self._rows: dict[str, list[tuple]] = {table: [] for table in _COPY}
        self._lists = new_lists()  # a build's postings of the batch, by field and token
        self._skips: dict[str, SkippedFile] = {}  # skipped files of the batch, by path
        self._docs = 0
        self._totals = [0] * len(SCORED)
        with translate(self.store.url):
            row = self.conn.execute(
                "SELECT next_cid, next_file, (SELECT coalesce(max(seq), 0) + 1 FROM"
                " symbols WHERE gen = %(g)s), state"
                " FROM generations WHERE gen = %(g)s",
                {"g": self.gen},
            ).fetchone()
        assert row is not None
        self._next_cid, self._next_file, self._next_symbol = (int(v) for v in row[:3])
        self._building = row[3] == "building"

    # -- plain reads (after the buffered rows are written) -------------------
    def meta(self) -> dict[str, str]:
        with translate(self.store.url):
            return rows.read_meta(self.conn, self.gen)

    def write_meta(self, values: Mapping[str, object]) -> None:
        items = [(self.gen, k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()]
        with translate(self.store.url):
            self.conn.cursor().executemany(write_meta_sql(), items)

    def counts(self) -> dict[str, int]:
        self._flush()
        with translate(self.store.url):
            return rows.counts(self.conn, self.gen)

    def files(self) -> dict[str, FileRecord]:
        self._flush()
        with translate(self.store.url):
            return rows.files(self.conn, self.gen)

    def skipped_files(self) -> dict[str, SkippedFile]:
        self._flush()
        with translate(self.store.url):
            return rows.skipped(self.conn, self.gen)

    def chunks(self, cids: Iterable[int]) -> dict[int, StoredChunk]:
        self._flush()
        with translate(self.store.url):
            return rows.chunks(self.conn, self.gen, cids)

    def reconcile(self) -> int:
        return 0  # one transaction per batch: nothing can be left between parts

    def verify(self) -> None:
        return None  # the server checks its own pages

    def close(self) -> None:
        """End the writer; a published generation whose refreshes changed
        enough of it gets its lexical lists folded (one transaction)."""
        try:
            if self._open:
                self.abort()
            with translate(self.store.url):
                sql = "SELECT state FROM generations WHERE gen = %s"
                state = self.conn.execute(sql, (self.gen,)).fetchone()
                if state and state[0] == "ready" and packing.should_fold(self.conn, self.gen):
                    with self.conn.transaction():
                        self.conn.execute("SET LOCAL statement_timeout = 0")
                        packing.fold(self.conn, self.gen)
        finally:
            self.conn.close()

    # -- batches ---------------------------------------------------------------
    @property
    def in_batch(self) -> bool:
        return self._open

    def begin(self) -> None:
        with translate(self.store.url):
            self.conn.execute("BEGIN")
        self._open = True
        self._wrote = set()

    def commit(self, *, compact: bool = True, lexical: bool = True) -> None:
        """Write the buffered rows, move the counters and commit, all in one
        transaction (statistics count live rows whatever ``compact`` says;
        the lexical rows are the transaction's whatever ``lexical`` says)."""
        content = "content" in self._wrote or not self._wrote
        with translate(self.store.url):
            self._flush()
            self.conn.execute(bump_sql("vectors_version"), {"g": self.gen})
            if content:
                self.conn.execute(bump_sql("content_version"), {"g": self.gen})
                self.conn.execute(write_meta_sql(), (self.gen, "updated_at", _now()))
            self.conn.execute("COMMIT")
        self._open = False

    def compact(self, should_stop: Callable[[], bool] = lambda: False) -> int:
        return 0  # the lexical statistics are kept over live rows (see .lexical)

    def abort(self) -> None:
        with translate(self.store.url):
            if self.conn.info.transaction_status != 0:  # not idle
                self.conn.execute("ROLLBACK")
            self._open = False
            self._reset_buffers()

    def _flush(self) -> None:
        """Write the buffered rows of the open batch (COPY) and the statistics they move."""
        if not any(self._rows.values()) and not any(self._lists) and not self._skips:
            return
        with translate(self.store.url):
            self._write_buffered()

    def _write_buffered(self) -> None:
        cur = self.conn.cursor()
        for table, columns in _COPY.items():
            buffered = self._rows[table]
            if buffered:
                with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in buffered:
                        copy.write_row(row)
                buffered.clear()
        if any(self._lists):
            packing.write_parts(self.conn, self.gen, self._lists)
            self._lists = new_lists()
        if self._skips:  # one round trip (a pipeline), not one per file: corpus-1m skips 1,301
            self._write_skips(cur, self._skips.values())
            self._skips = {}
        cur.execute(
            "INSERT INTO lex_stats (gen, num_docs, totals) VALUES (%(g)s, %(n)s, %(t)s)"
            " ON CONFLICT (gen) DO UPDATE SET num_docs = lex_stats.num_docs + excluded.num_docs,"
            " totals = ARRAY(SELECT a + b FROM unnest(lex_stats.totals, excluded.totals) AS x(a, b))",
            {"g": self.gen, "n": self._docs, "t": self._totals},
        )
        cur.execute(
            "UPDATE generations SET next_cid = %s, next_file = %s WHERE gen = %s",
            (self._next_cid, self._next_file, self.gen),
        )
        self._docs, self._totals = 0, [0] * len(SCORED)

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
        g = self.gen
        file_id = self._next_file
        self._next_file += 1
        self._rows["files"].append((g, file_id, path, hash, size, mtime_ns, language, lines, flags))
        cids = list(range(self._next_cid, self._next_cid + len(chunks)))
        self._next_cid += len(chunks)
        kept = []
        for cid, c, doc in zip(cids, chunks, fields, strict=True):
            if self._building:  # cids ascend, so each list does
                lens = add_postings(self._lists, cid, doc)
            else:
                found, lens = postings(cid, doc)
                self._rows["lex_postings"].extend((g, token, f, cid, packed) for token, f, packed in found)
            self._docs += 1
            self._totals = [a + b for a, b in zip(self._totals, lens, strict=True)]
            self._rows["chunks"].append(
                (g, cid, c.id, file_id, c.path, c.start_line, c.end_line, c.language, c.kind, c.name,
                 c.qualname, c.signature, c.parent, c.doc, ",".join(c.kinds), compress(c.text), lens)
            )  # fmt: skip
            if vectors and c.id in vectors:
                kept.append((cid, vectors[c.id]))
        for s in symbols:
            self._rows["symbols"].append(
                (g, self._next_symbol, file_id, s.path, s.name, normalize_symbol(s.name), s.qualname, s.kind,
                 s.start_line, s.end_line, s.signature, s.parent, s.language)
            )  # fmt: skip
            self._next_symbol += 1
        if refs:
            self._rows["refs"].append((g, file_id, refs.data))
            self._rows["ref_names"].extend((g, name, file_id) for name in refs.names)
        if kept:  # an edit elsewhere in the file keeps these chunks' vectors
            self._flush()
            self._put_vectors(kept)
        return cids

    def delete_file(self, file_id: int) -> None:
        """Remove a file's rows; its chunks leave the statistics and the lexical lists."""
        self._wrote.add("content")
        self._flush()
        g = self.gen
        with translate(self.store.url):
            cur = self.conn.cursor()
            gone = cur.execute(
                "DELETE FROM chunks WHERE gen = %s AND file_id = %s RETURNING cid, lens", (g, file_id)
            ).fetchall()
            cids = [int(cid) for cid, _ in gone]
            if cids:
                totals = [sum(lens[i] for _, lens in gone) for i in range(len(SCORED))]
                cur.execute(
                    "UPDATE lex_stats SET num_docs = num_docs - %s,"
                    " totals = ARRAY(SELECT a - b FROM unnest(totals, %s::bigint[]) AS"
                    " x(a, b)) WHERE gen = %s",
                    (len(cids), totals, g),
                )
                # A chunk in the published lists is masked; one added since loses its rows.
                cur.execute(
                    "INSERT INTO lex_deleted (gen, cid) SELECT %s, unnest(%s::int[]) ON CONFLICT DO NOTHING",
                    (g, cids),
                )
                cur.execute("DELETE FROM lex_postings WHERE gen = %s AND cid = ANY(%s)", (g, cids))
                cur.execute("DELETE FROM vectors WHERE gen = %s AND cid = ANY(%s)", (g, cids))
            cur.execute("DELETE FROM symbols WHERE gen = %s AND file_id = %s", (g, file_id))
            packed = cur.execute(
                "DELETE FROM refs WHERE gen = %s AND file_id = %s RETURNING data", (g, file_id)
            ).fetchone()
            if packed is not None:  # its names, read back: ref_names is keyed by name first
                names = ref_names(as_refs(unpack_refs(bytes(packed[0]), "", "")))
                cur.execute(
                    "DELETE FROM ref_names WHERE gen = %s AND name = ANY(%s) AND file_id = %s",
                    (g, names, file_id),
                )
            cur.execute("DELETE FROM files WHERE gen = %s AND id = %s", (g, file_id))

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        self._wrote.add("stat")
        with translate(self.store.url):
            self.conn.execute(
                "UPDATE files SET size = %s, mtime_ns = %s WHERE gen = %s AND id = %s",
                (size, mtime_ns, self.gen, file_id),
            )

    def set_skipped(self, skip: SkippedFile) -> None:
        self._wrote.add("content")
        if self._open:  # written with the batch's other rows
            self._skips[skip.path] = skip
            return
        with translate(self.store.url):
            self._write_skips(self.conn.cursor(), [skip])

    def _write_skips(self, cur: psycopg.Cursor, skips: Iterable[SkippedFile]) -> None:
        cur.executemany(
            "INSERT INTO skipped (gen, path, reason, size, mtime_ns) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (gen, path) DO UPDATE SET reason = excluded.reason, size = excluded.size,"
            " mtime_ns = excluded.mtime_ns",
            [(self.gen, s.path, s.reason, s.size, s.mtime_ns) for s in skips],
        )

    def forget_skipped(self, paths: Iterable[str]) -> None:
        self._wrote.add("content")
        paths = list(paths)
        for path in paths:  # forgotten after it was set: it is not written at all
            self._skips.pop(path, None)
        with translate(self.store.url):
            self.conn.execute("DELETE FROM skipped WHERE gen = %s AND path = ANY(%s)", (self.gen, paths))

    # -- history: its own transaction, outside a batch ------------------------
    def history_state(self) -> HistoryState | None:
        with translate(self.store.url):
            return history.state(self.conn, self.gen)

    def update_history(self, update: HistoryUpdate) -> None:
        assert not self._open, "update_history runs outside a batch"
        with translate(self.store.url):
            history.update(self.conn, self.gen, update)

    # -- vectors -----------------------------------------------------------
    def vector_count(self) -> int:
        with translate(self.store.url):
            return rows.vector_count(self.conn, self.gen)

    def vectors_of_file(self, file_id: int) -> dict[str, bytes]:
        from repolens.store.postgres.dense import to_bytes

        with translate(self.store.url):
            found = self.conn.execute(
                "SELECT c.id, halfvec_send(v.vec) FROM chunks c JOIN vectors v ON"
                " v.gen = c.gen AND v.cid = c.cid"
                " WHERE c.gen = %s AND c.file_id = %s",
                (self.gen, file_id),
            ).fetchall()
        return {chunk_id: to_bytes(vec) for chunk_id, vec in found}

    def chunks_missing_vectors(self, limit: int) -> list[int]:
        self._flush()
        with translate(self.store.url):
            found = self.conn.execute(
                "SELECT c.cid FROM chunks c WHERE c.gen = %(g)s AND NOT EXISTS"
                " (SELECT 1 FROM vectors v WHERE v.gen = %(g)s AND v.cid = c.cid) ORDER BY c.cid LIMIT %(n)s",
                {"g": self.gen, "n": limit},
            ).fetchall()
        return [int(r[0]) for r in found]

    def put_vectors(self, rows_: Iterable[tuple[int, bytes]]) -> None:
        self._wrote.add("vectors")
        self._flush()
        self._put_vectors(list(rows_))

    def _put_vectors(self, found: list[tuple[int, bytes]]) -> None:
        from repolens.store.postgres.dense import to_text

        if not found:
            return
        with translate(self.store.url):
            self.conn.cursor().executemany(
                "INSERT INTO vectors (gen, cid, vec) VALUES (%s, %s, %s::halfvec)"
                " ON CONFLICT (gen, cid) DO UPDATE SET vec = excluded.vec",
                [(self.gen, cid, to_text(vec)) for cid, vec in found],
            )

    def drop_vectors(self) -> None:
        self._wrote.add("vectors")
        with translate(self.store.url):
            self.conn.execute("DELETE FROM vectors WHERE gen = %s", (self.gen,))
            self.conn.execute(
                "DELETE FROM meta WHERE gen = %s AND key IN ('embed_identity', 'embed_style', 'embed_dim')",
                (self.gen,),
            )

    def copy_vectors(self, source: str, identity: str, style: str) -> int:
        src = self.store.generation_id(source)
        if src is None:
            return 0
        with translate(self.store.url):
            meta = rows.read_meta(self.conn, src)
        if meta.get("embed_identity") != identity or meta.get("embed_style") != style:
            return 0
        self.begin()
        self._wrote.add("vectors")
        with translate(self.store.url):
            cur = self.conn.execute(
                "INSERT INTO vectors (gen, cid, vec) SELECT %(g)s, c.cid, v.vec FROM vectors v"
                " JOIN chunks o ON o.gen = v.gen AND o.cid = v.cid"
                " JOIN chunks c ON c.gen = %(g)s AND c.id = o.id"
                " WHERE v.gen = %(s)s ON CONFLICT (gen, cid) DO UPDATE SET vec = excluded.vec",
                {"g": self.gen, "s": src},
            )
            copied = cur.rowcount
        self.commit()
        return max(copied, 0)

    def sync_dense_index(self, min_vectors: int) -> str:
        from repolens.store.postgres.dense import sync

        with translate(self.store.url):
            return sync(self.conn, self.gen, min_vectors)
