"""The handle of one local generation: SQLite + tantivy, opened together.

:class:`IndexHandle` opens both halves of a generation and checks that the
index was written by this version of the schema and tokenizer; anything else
is refused with the fix, never misread.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from repolens.errors import IndexCorruptError
from repolens.store import check_versions
from repolens.store.local import sqlite as sq
from repolens.store.local.layout import IndexLayout
from repolens.store.local.lexical import LexicalIndex

DB_NAME = "index.db"
LEXICAL_DIR = "lexical"


@dataclass
class IndexHandle:
    """Both stores of one generation, opened together."""

    gen_dir: Path
    db: sqlite3.Connection
    lex: LexicalIndex

    @classmethod
    def create(cls, gen_dir: Path) -> IndexHandle:
        db = sq.connect(gen_dir / DB_NAME, create=True)
        lex = LexicalIndex(gen_dir / LEXICAL_DIR, create=True)
        return cls(gen_dir, db, lex)

    @classmethod
    def open(cls, gen_dir: Path, root: Path | None = None, *, write: bool = False) -> IndexHandle:
        """Open a generation; read-only unless ``write`` (the caller then
        holds the write lock). A reader writes nothing, so an index on a
        read-only disk can be searched."""
        db = sq.connect(gen_dir / DB_NAME) if write else sq.open_reader(gen_dir / DB_NAME)
        try:
            check_versions(sq.read_meta(db), root or gen_dir)
            lex = LexicalIndex(gen_dir / LEXICAL_DIR)
        except BaseException:
            db.close()
            raise
        return cls(gen_dir, db, lex)

    @classmethod
    def open_current(cls, layout: IndexLayout) -> IndexHandle:
        gen = layout.require_current()
        try:
            return cls.open(gen, layout.root)
        except IndexCorruptError:
            # The generation may have been replaced and collected between
            # resolving ``current`` and opening it; resolve once more.
            newer = layout.require_current()
            if newer == gen:
                raise
            return cls.open(newer, layout.root)

    def meta(self) -> dict[str, str]:
        return sq.read_meta(self.db)

    def close(self) -> None:
        self.lex.close()
        self.db.close()
