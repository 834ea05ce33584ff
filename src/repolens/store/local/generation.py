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

from repolens.store.base import FileRecord, HistoryState, SkippedFile, StoredChunk
from repolens.store.local import history
from repolens.store.local import sqlite as sq
from repolens.store.local.failures import damaged_pages, damaged_rows, failure, guarded
from repolens.store.versions import check_versions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.store.local.lexical import LexicalIndex

DB_NAME = "index.db"
LEXICAL_DIR = "lexical"
# The meta key naming the lexical index's commit that SQLite holds (see .writer)
LEXICAL_OPSTAMP = "lexical_opstamp"
# "1" while SQLite holds chunks whose lexical documents wait for a later
# commit (a build between its pieces, see LocalWriter.commit)
LEXICAL_BEHIND = "lexical_behind"
BUILDING = ".building"


@guarded
class Generation:
    """Both halves of one generation folder; closed together.

    A writer opens the lexical half with the database; a reader opens it on
    its first lexical search: ``symbols``, ``read`` and status, run once per
    question in a new process, never search it and so never load tantivy
    (~3 ms of a new process on a quiet machine, and opening the index ~1 ms).
    """

    def __init__(
        self, root: Path, index_dir: Path, gen_dir: Path, db: sqlite3.Connection, lex: LexicalIndex | None
    ):
        self.root = root
        self.index_dir = index_dir
        self.gen_dir = gen_dir
        self.db = db
        self._lex = lex

    @property
    def lex(self) -> LexicalIndex:
        """The lexical half, opened on first use."""
        if self._lex is None:
            self._lex = _open_lexical(self.gen_dir, create=False)
        return self._lex

    @property
    def generation(self) -> str:
        return self.gen_dir.name.removesuffix(BUILDING)

    def _damage(self) -> str:
        """What is damaged in the database, said as ``index.db: what`` (""
        when nothing): every page and index read, then every value's type
        and text (the check of a read that failed, see :mod:`.failures`)."""
        problem = damaged_pages(self.db, indexes=True) or damaged_rows(
            self.db, sq.SCHEMA + history.SCHEMA_SQL
        )
        return f"{DB_NAME}: {problem}" if problem else ""

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
        if self._lex is not None:
            self._lex.close()
        self.db.close()


def open_parts(
    gen_dir: Path, root: Path, *, write: bool, create: bool = False
) -> tuple[sqlite3.Connection, LexicalIndex | None]:
    """The database of ``gen_dir``, versions checked (unless a new
    generation is still empty), and for a writer its lexical index (a
    reader's opens on first use, see :class:`Generation`). A reader writes
    nothing, so an index on a read-only disk can be searched."""
    if create:
        db = sq.connect(gen_dir / DB_NAME, create=True)
    else:
        db = sq.connect(gen_dir / DB_NAME) if write else sq.open_reader(gen_dir / DB_NAME)
    try:
        meta = sq.read_meta(db)
        if meta or not create:
            check_versions(meta, root)
        lex = None
        if write:
            from repolens.store.local.segments import recover

            recover(gen_dir / LEXICAL_DIR, meta.get(LEXICAL_OPSTAMP))
            lex = _open_lexical(gen_dir, create=create)
    except BaseException as exc:
        db.close()
        if (err := failure(exc, gen_dir)) is not None:  # damage in the pages the meta is on
            raise err from exc
        raise
    return db, lex


def _open_lexical(gen_dir: Path, *, create: bool) -> LexicalIndex:
    from repolens.store.local.lexical import LexicalIndex

    return LexicalIndex(gen_dir / LEXICAL_DIR, create=create)
