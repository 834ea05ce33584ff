"""One local generation: its SQLite database and tantivy index, opened together.

:class:`Generation` holds what the reader and the writer of a generation
share: the two halves, the checks made when opening them, and the reads both
need. A generation written by other versions of the schema, tokenizer or
lexical index is refused with the fix, never misread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from repolens.store import check_versions
from repolens.store.base import FileRecord, HistoryState, SkippedFile, StoredChunk
from repolens.store.local import history
from repolens.store.local import sqlite as sq
from repolens.store.local.lexical import LexicalIndex

DB_NAME = "index.db"
LEXICAL_DIR = "lexical"
BUILDING = ".building"


class Generation:
    """Both halves of one generation folder; closed together."""

    def __init__(self, root: Path, index_dir: Path, gen_dir: Path, db: sqlite3.Connection, lex: LexicalIndex):
        self.root = root
        self.index_dir = index_dir
        self.gen_dir = gen_dir
        self.db = db
        self.lex = lex

    @property
    def generation(self) -> str:
        return self.gen_dir.name.removesuffix(BUILDING)

    def meta(self) -> dict[str, str]:
        return sq.read_meta(self.db)

    def counts(self) -> dict[str, int]:
        return sq.counts(self.db)

    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
        return sq.file_records(self.db, paths)

    def skipped_files(self) -> dict[str, SkippedFile]:
        return sq.skipped_files(self.db)

    def chunks(self, cids: Iterable[int]) -> dict[int, StoredChunk]:
        return sq.chunks_by_cid(self.db, cids)

    def vector_count(self) -> int:
        return sq.count_vectors(self.db)

    def vectors_of_chunks(self, chunk_ids: Iterable[str]) -> dict[str, bytes]:
        return sq.vectors_of_chunks(self.db, chunk_ids)

    def history_state(self) -> HistoryState | None:
        return history.state(self.db)

    def close(self) -> None:
        self.lex.close()
        self.db.close()


def open_parts(
    gen_dir: Path, root: Path, *, write: bool, create: bool = False
) -> tuple[sqlite3.Connection, LexicalIndex]:
    """The database and lexical index of ``gen_dir``, versions checked
    (unless a new generation is still empty). A reader writes nothing, so an
    index on a read-only disk can be searched."""
    if create:
        db = sq.connect(gen_dir / DB_NAME, create=True)
    else:
        db = sq.connect(gen_dir / DB_NAME) if write else sq.open_reader(gen_dir / DB_NAME)
    try:
        meta = sq.read_meta(db)
        if meta or not create:
            check_versions(meta, root)
        lex = LexicalIndex(gen_dir / LEXICAL_DIR, create=create)
    except BaseException:
        db.close()
        raise
    return db, lex
