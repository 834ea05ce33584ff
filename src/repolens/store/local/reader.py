"""Reading one published local generation (:class:`repolens.store.base.IndexReader`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from repolens.store.base import (
    HistoryCommit,
    HistoryState,
    LexFilters,
    NameMatch,
    RefRow,
    StoredChunk,
    SymbolFilters,
    SymbolOrder,
    SymbolRow,
)
from repolens.store.local import history, remembered
from repolens.store.local import sqlite as sq
from repolens.store.local.failures import guarded
from repolens.store.local.generation import DB_NAME, Generation, open_parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np


@guarded
class LocalReader(Generation):
    """A read-only view of one generation folder."""

    def __init__(self, root: Path, index_dir: Path, gen_dir: Path) -> None:
        super().__init__(root, index_dir, gen_dir, *open_parts(gen_dir, root, write=False))
        self._opened = _file_id(gen_dir / DB_NAME)
        self._counted: tuple[str, int] | None = None
        self._key: tuple[int, str] | None = None  # (data_version, cache key) when last read
        self._history = history.HistoryReads(self.db)

    def cache_key(self) -> str:
        """Asked once per reference row a question resolves (thousands on a big
        index): the meta is read again only when SQLite's ``data_version`` says
        another connection (the watcher, ``repolens index``) committed since;
        that pragma costs a fifth of reading the meta."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if self._key is None or self._key[0] != version:
            # the database file too: a generation made anew under the same name counts its versions anew
            opened = self._opened[1] if self._opened else 0
            self._key = (version, f"{self.gen_dir}:{opened}:{self.meta().get('content_version', '0')}")
        return self._key[1]

    def replaced(self) -> bool:
        # A generation made anew under the same name has another database file.
        return _file_id(self.gen_dir / DB_NAME) != self._opened

    def refresh(self) -> None:
        if self._lex is not None:  # (one not opened yet opens the newest commit)
            self._lex.reload()

    def staleness(self) -> str:
        return ""  # one copy: never behind itself

    # -- files and chunks ------------------------------------------------
    def paths(self) -> list[str]:
        return sq.all_paths(self.db)

    def has_path(self, path: str) -> bool:
        return sq.has_path(self.db, path)

    def chunk_by_id(self, chunk_id: str) -> StoredChunk | None:
        return sq.chunk_by_id(self.db, chunk_id)

    def chunks_of_file(self, path: str) -> list[StoredChunk]:
        return sq.chunks_of_files(self.db, [path]).get(path, [])

    def chunks_of_files(self, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        return sq.chunks_of_files(self.db, paths)

    def chunks_at(self, spots: Sequence[tuple[str, int]]) -> list[int | None]:
        return [sq.chunk_at(self.db, path, line) for path, line in spots]

    # -- symbols ---------------------------------------------------------
    def symbols(
        self, match: NameMatch, filters: SymbolFilters, limit: int | None, order: SymbolOrder = "name"
    ) -> list[SymbolRow]:
        return sq.symbols(self.db, match, filters, limit, order)

    def count_symbols(self, match: NameMatch, filters: SymbolFilters) -> int:
        return sq.count_symbols(self.db, match, filters)

    def symbol_names(
        self, match: NameMatch, filters: SymbolFilters, limit: int, order: SymbolOrder = "name"
    ) -> list[str]:
        return sq.symbol_names(self.db, match, filters, limit, order)

    def symbols_of_file(self, path: str) -> list[SymbolRow]:
        return sq.symbols_of_files(self.db, [path]).get(path, [])

    def symbols_of_files(self, paths: Sequence[str]) -> dict[str, list[SymbolRow]]:
        return sq.symbols_of_files(self.db, paths)

    # -- references ------------------------------------------------------
    def refs_named(self, names: Sequence[str]) -> list[RefRow]:
        return sq.refs_named(self.db, names)

    def refs_of_files(self, paths: Sequence[str]) -> dict[str, list[RefRow]]:
        return sq.refs_of_files(self.db, paths)

    # -- lexical ---------------------------------------------------------
    def lexical(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        limit: int,
        filters: LexFilters | None = None,
    ) -> list[tuple[int, float]]:
        return self.lex.search(terms, field_weights, limit, filters)

    def lexical_in_files(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        paths: Sequence[str],
        per_file: int,
        filters: LexFilters | None = None,
    ) -> dict[str, list[tuple[int, float]]]:
        """One tantivy search for all ``paths`` rather than one per file (each
        costs about as much as an unfiltered search: every term's postings are
        opened): the best hits of the files together, deeper until each file
        has ``per_file`` or every match is in. A file's first hits in that
        order are its own top hits (scores and ties do not depend on which
        files are asked together: a hit's score is its terms' plus its own
        file's, two numbers whose sum has no order). Language or kind
        filters add a third, whose order tantivy may pick per query, so
        then each file is searched alone, to the same bits as ever."""
        if filters is not None and (filters.languages or filters.kinds):
            alone = {
                path: self.lex.search(terms, field_weights, per_file, filters._replace(subpath=path))
                for path in dict.fromkeys(paths)
            }
            return {path: hits for path, hits in alone.items() if hits}
        wanted = list(dict.fromkeys(paths))
        out: dict[str, list[tuple[int, float]]] = {}
        limit = max(16 * per_file * len(wanted), 50)
        while wanted and per_file > 0:
            hits = self.lex.search(terms, field_weights, limit, filters, within=wanted)
            path_of = sq.paths_of_chunks(self.db, (cid for cid, _ in hits))
            out = {}
            for cid, score in hits:
                found = out.setdefault(path_of.get(cid, ""), [])
                if len(found) < per_file:
                    found.append((cid, score))
            if len(hits) < limit or all(len(out.get(p, ())) == per_file for p in wanted):
                break
            limit *= 4
        out.pop("", None)  # a chunk of the lexical index SQLite no longer holds
        return out

    def terms_with_prefix(self, prefix: str, limit: int) -> list[str]:
        return self.lex.terms_with_prefix(prefix, limit)

    def held_terms(self, tokens: Sequence[str]) -> frozenset[str]:
        return self.lex.held_terms(tokens)

    # -- vectors (numpy, usearch: loaded only for indexes with vectors) -----
    def vector_count(self) -> int:
        """Counted once per ``vectors_version``: count(*) reads every row (~30 ms at 100k)."""
        version = self.meta().get("vectors_version", "0")
        if self._counted is None or self._counted[0] != version:
            self._counted = (version, sq.count_vectors(self.db))
        return self._counted[1]

    def dense_top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        from repolens.store.local.dense import dense_for

        return dense_for(self).search(self, query, k)

    def dense_similarities(self, query: np.ndarray, cids: Iterable[int]) -> dict[int, float]:
        from repolens.store.local.dense import dense_for

        return dense_for(self).similarities(self, query, cids)

    def dense_state(self, min_vectors: int) -> str:
        from repolens.store.local import ann

        return ann.state(self, min_vectors, self.vector_count()).line

    # -- history -------------------------------------------------------------
    def history_state(self) -> HistoryState | None:
        return self._history.state()

    def history_search(self, terms: Sequence[tuple[str, float]], k: int) -> list[tuple[int, float]]:
        return self._history.search(terms, k)

    def history_commits(self, ids: Iterable[int], *, indexed_only: bool = False) -> dict[int, HistoryCommit]:
        return self._history.commits(ids, indexed_only=indexed_only)

    def history_of_file(self, path: str) -> list[tuple[int, str]]:
        return self._history.of_file(path)

    def history_newest_name(self, named: str) -> str:
        return self._history.newest_name(named)

    # -- remembered results ------------------------------------------------
    def remember(self, query_id: str, payload: str) -> bool:
        return remembered.remember(self.index_dir, query_id, payload)

    def recall(self, query_id: str) -> str | None:
        return remembered.recall(self.index_dir, query_id)


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of ``path``, None when it is gone. While a reader
    holds the file open its inode is not freed, so a file made anew has
    another (its times move with every refresh: no use here)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
