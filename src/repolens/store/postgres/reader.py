"""Reading one published generation on PostgreSQL (:class:`repolens.store.base.IndexReader`).

A reader holds no connection: each call borrows one from the pool of the
store's read URL (a replica when ``[store] read_url`` names one) for one
statement, so any number of threads and processes read at once, and a
server that restarted is reconnected to at the next call. Every statement
reads committed batches only, so a reader sees each file whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from repolens.store.base import (
    FileRecord,
    HistoryCommit,
    HistoryState,
    LexFilters,
    NameMatch,
    RefRow,
    SkippedFile,
    StoredChunk,
    SymbolFilters,
    SymbolOrder,
    SymbolRow,
)
from repolens.store.postgres import history, lexical, rows
from repolens.store.postgres.connect import pooled

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from repolens.store.postgres.handle import StoreHandle


class PgReader:
    def __init__(self, store: StoreHandle, gen: int, name: str, url: str | None = None) -> None:
        self.store = store
        self.gen = gen
        self._name = name
        self._url = url or store.read_url  # (the primary, for an index its replica does not hold yet)
        self._closed = False
        self._lists: lexical.Lists | None = None  # posting lists read since the last refresh
        self._meta, self._history = self._read_meta()

    def _conn(self) -> AbstractContextManager[psycopg.Connection]:
        if self._closed:
            raise ValueError(f"the reader of {self._name} is closed")
        return pooled(self._url)

    @property
    def generation(self) -> str:
        return self._name

    def _read_meta(self) -> tuple[dict[str, str], HistoryState | None]:
        """The meta and the history's state, read together when the reader
        opens and at each :meth:`refresh` (a search reads both; one
        connection from the pool instead of two)."""
        with self._conn() as conn:
            return rows.read_meta(conn, self.gen), history.state(conn, self.gen)

    def cache_key(self) -> str:
        return f"{self.store.location}:{self._name}:{self._meta.get('content_version', '0')}"

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def replaced(self) -> bool:
        return False  # generations are numbered by a sequence: a name is never given twice

    def refresh(self) -> None:
        self._lists = None
        self._meta, self._history = self._read_meta()

    def close(self) -> None:
        self._closed = True  # no connection is held between calls

    def staleness(self) -> str:
        return self.store.replica_lag(self._url)

    # -- files -----------------------------------------------------------
    def counts(self) -> dict[str, int]:
        with self._conn() as conn:
            return rows.counts(conn, self.gen)

    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
        with self._conn() as conn:
            return rows.files(conn, self.gen, paths)

    def paths(self) -> list[str]:
        with self._conn() as conn:
            return [r[0] for r in conn.execute("SELECT path FROM files WHERE gen = %s", (self.gen,))]

    def has_path(self, path: str) -> bool:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT 1 FROM files WHERE gen = %s AND (path = %s OR starts_with(path, %s)) LIMIT 1",
                (self.gen, path, path + "/"),
            ).fetchone()
        return row is not None

    def skipped_files(self) -> dict[str, SkippedFile]:
        with self._conn() as conn:
            return rows.skipped(conn, self.gen)

    # -- chunks ----------------------------------------------------------
    def chunks(self, cids: Iterable[int]) -> dict[int, StoredChunk]:
        with self._conn() as conn:
            return rows.chunks(conn, self.gen, cids)

    def chunk_by_id(self, chunk_id: str) -> StoredChunk | None:
        with self._conn() as conn:
            return rows.chunk_by_id(conn, self.gen, chunk_id)

    def chunks_of_file(self, path: str) -> list[StoredChunk]:
        return self.chunks_of_files([path]).get(path, [])

    def chunks_of_files(self, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        with self._conn() as conn:
            return rows.chunks_of_files(conn, self.gen, paths)

    def chunks_at(self, spots: Sequence[tuple[str, int]]) -> list[int | None]:
        if not spots:
            return []
        with self._conn() as conn:
            return rows.chunks_at(conn, self.gen, spots)

    # -- symbols ---------------------------------------------------------
    def symbols(
        self, match: NameMatch, filters: SymbolFilters, limit: int | None, order: SymbolOrder = "name"
    ) -> list[SymbolRow]:
        with self._conn() as conn:
            return rows.symbols(conn, self.gen, match, filters, limit, order)

    def count_symbols(self, match: NameMatch, filters: SymbolFilters) -> int:
        with self._conn() as conn:
            return rows.count_symbols(conn, self.gen, match, filters)

    def symbol_names(
        self, match: NameMatch, filters: SymbolFilters, limit: int, order: SymbolOrder = "name"
    ) -> list[str]:
        with self._conn() as conn:
            return rows.symbol_names(conn, self.gen, match, filters, limit, order)

    def symbols_of_file(self, path: str) -> list[SymbolRow]:
        return self.symbols_of_files([path]).get(path, [])

    def symbols_of_files(self, paths: Sequence[str]) -> dict[str, list[SymbolRow]]:
        with self._conn() as conn:
            return rows.symbols_of_files(conn, self.gen, paths)

    # -- references ------------------------------------------------------
    def refs_named(self, names: Sequence[str]) -> list[RefRow]:
        with self._conn() as conn:
            return rows.refs_named(conn, self.gen, names)

    def refs_of_files(self, paths: Sequence[str]) -> dict[str, list[RefRow]]:
        with self._conn() as conn:
            return rows.refs_of_files(conn, self.gen, paths)

    # -- lexical ---------------------------------------------------------
    def lexical(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        limit: int,
        filters: LexFilters | None = None,
    ) -> list[tuple[int, float]]:
        return self._lexical(terms, field_weights, [(limit, filters)])[0]

    def _lexical(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        asks: Sequence[tuple[int, LexFilters | None]],
    ) -> list[list[tuple[int, float]]]:
        with self._conn() as conn:
            found, self._lists = lexical.search_each(conn, self.gen, terms, field_weights, asks, self._lists)
        return found

    def lexical_in_files(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        paths: Sequence[str],
        per_file: int,
        filters: LexFilters | None = None,
    ) -> dict[str, list[tuple[int, float]]]:
        """Each file's own search, but the terms' posting lists fetched and
        scored once for all of them (one statement, not one per file)."""
        wanted = list(dict.fromkeys(paths))
        base = filters or LexFilters()
        asks = [(per_file, base._replace(subpath=path)) for path in wanted]
        found = self._lexical(terms, field_weights, asks)
        return {path: hits for path, hits in zip(wanted, found, strict=True) if hits}

    def terms_with_prefix(self, prefix: str, limit: int) -> list[str]:
        if not prefix or limit <= 0:
            return []
        with self._conn() as conn:
            return lexical.terms_with_prefix(conn, self.gen, prefix, limit)

    def held_terms(self, tokens: Sequence[str]) -> frozenset[str]:
        if not tokens:
            return frozenset()
        with self._conn() as conn:
            return lexical.held_terms(conn, self.gen, tokens)

    # -- vectors ---------------------------------------------------------
    def vector_count(self) -> int:
        with self._conn() as conn:
            return rows.vector_count(conn, self.gen)

    # -- history (see repolens.store.postgres.history) ----------------------
    def history_state(self) -> HistoryState | None:
        return self._history  # as of the last refresh(), like meta()

    def history_search(self, terms: Sequence[tuple[str, float]], k: int) -> list[tuple[int, float]]:
        with self._conn() as conn:
            return history.search(conn, self.gen, terms, k)

    def history_commits(self, ids: Iterable[int], *, indexed_only: bool = False) -> dict[int, HistoryCommit]:
        with self._conn() as conn:
            return history.commits(conn, self.gen, ids, indexed_only=indexed_only)

    def history_of_file(self, path: str) -> list[tuple[int, str]]:
        with self._conn() as conn:
            return history.of_file(conn, self.gen, path)

    def history_newest_name(self, named: str) -> str:
        with self._conn() as conn:
            return history.newest_name(conn, self.gen, named)

    def vectors_of_chunks(self, chunk_ids: Iterable[str]) -> dict[str, bytes]:
        from repolens.store.postgres import dense

        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        with self._conn() as conn:
            return dense.vectors_by_chunk_id(conn, [self.gen], ids)

    def dense_top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        from repolens.store.postgres import dense

        with self._conn() as conn:
            return dense.top(conn, self.gen, query, k, min_vectors=1)

    def dense_similarities(self, query: np.ndarray, cids: Iterable[int]) -> dict[int, float]:
        from repolens.store.postgres import dense

        with self._conn() as conn:
            return dense.similarities(conn, self.gen, query, cids)

    def dense_state(self, min_vectors: int) -> str:
        from repolens.store.postgres import dense

        with self._conn() as conn:
            return dense.state(conn, self.gen, min_vectors, rows.vector_count(conn, self.gen))

    # -- remembered results (on the primary: a replica cannot be written) --
    def remember(self, query_id: str, payload: str) -> bool:
        return self.store.remember(query_id, payload)

    def recall(self, query_id: str) -> str | None:
        return self.store.recall(query_id)
