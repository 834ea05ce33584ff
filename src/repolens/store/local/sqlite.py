"""The relational half of an index: files, chunks, symbols, settings.

One SQLite database per generation, in WAL mode so readers keep a consistent
snapshot while a writer commits. Chunk text is stored zlib-compressed: code
compresses about 4x, which keeps the whole index smaller than the source.

Every chunk has two keys: ``cid``, a small integer shared with the lexical
index (and the vector matrix), and ``id``, a content-derived string that is
stable across edits elsewhere in the file and is what users see.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from repolens.chunking import Chunk, Symbol
from repolens.errors import IndexCorruptError, RepolensError
from repolens.fronts import say
from repolens.store.base import (
    FileRecord,
    NameMatch,
    PackedRefs,
    RefRow,
    SkippedFile,
    StoredChunk,
    SymbolFilters,
    SymbolOrder,
    SymbolRow,
    normalize_symbol,
)
from repolens.store.chunk_rows import CHUNK_COLS, compress, stored_chunk
from repolens.store.local.failures import failure
from repolens.store.ref_rows import as_refs, ref_names, unpack_refs

# The version of these tables, recorded in every index, is
# repolens.store.versions.SCHEMA_VERSION: bump it with any change here.

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    language TEXT NOT NULL,
    lines INTEGER NOT NULL,
    flags TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS chunks (
    cid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    language TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    signature TEXT NOT NULL,
    parent TEXT NOT NULL,
    doc TEXT NOT NULL,
    kinds TEXT NOT NULL DEFAULT '',
    text BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path, start_line);
CREATE TABLE IF NOT EXISTS symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    norm TEXT NOT NULL,
    qualname TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL,
    parent TEXT NOT NULL,
    language TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS symbols_norm ON symbols(norm);
CREATE INDEX IF NOT EXISTS symbols_file ON symbols(file_id);
-- Lexical-index outbox of older versions: chunks written here but not yet
-- committed to (or removed from) the lexical index; the next writer replays
-- what a crash left. Now the two halves commit together (see .writer).
CREATE TABLE IF NOT EXISTS lex_pending (cid INTEGER PRIMARY KEY, op TEXT NOT NULL);
-- Dense vectors (float16, unit length), one per chunk, filled after the
-- lexical index is published; they go when their chunk goes.
CREATE TABLE IF NOT EXISTS vectors (
    cid INTEGER PRIMARY KEY REFERENCES chunks(cid) ON DELETE CASCADE,
    vec BLOB NOT NULL
);
-- Each file's references, packed (repolens.store.ref_rows), and the names
-- they use: a lookup by name reads only the files that use it.
CREATE TABLE IF NOT EXISTS refs (
    file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS ref_names (
    name TEXT NOT NULL,
    file_id INTEGER NOT NULL,
    PRIMARY KEY (name, file_id)
) WITHOUT ROWID;
-- Files that discovery lists but whose content keeps them out (binary,
-- blank), with the size and mtime they were read at: until those move, a
-- refresh does not read them again and `status` does not count them as new.
-- Added after schema 3 without a version bump: a writer creates it, a reader
-- of an index without it reads it as empty.
CREATE TABLE IF NOT EXISTS skipped (
    path TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL
);
"""


def connect(path: Path, *, create: bool = False) -> sqlite3.Connection:
    """A connection for the writer (who holds the write lock): WAL mode, the
    schema created (``create``) or completed with tables added since."""
    if not create and not path.exists():
        raise _missing(path)
    try:
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise _unreadable(path, exc) from exc
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(SCHEMA)  # all IF NOT EXISTS
        db.execute("SELECT count(*) FROM meta").fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        db.close()
        raise _unreadable(path, exc) from exc
    return db


def open_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection: it never writes the database, and needs no
    write access to its folder.

    A reader in a writable folder shares the writer's ``-shm`` file and sees
    each commit. In a folder it cannot write (a read-only mount, a CI cache,
    another user's checkout) SQLite cannot create that file: when no writer
    has the database open (no ``-wal``/``-shm`` beside it, so the file holds
    every commit) it is opened ``immutable``, with no locking at all.
    """
    if not path.exists():
        raise _missing(path)
    folder_writable = os.access(path.parent, os.W_OK)
    in_use = any(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))
    flags = "mode=ro" if folder_writable or in_use else "mode=ro&immutable=1"
    uri = f"{path.absolute().as_uri()}?{flags}"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA query_only=ON")
        db.execute("SELECT count(*) FROM meta").fetchone()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        if not os.access(path, os.R_OK):
            raise IndexCorruptError(
                f"index database {path} cannot be read (permission denied)",
                fix=say("index elsewhere"),
            ) from exc
        if not folder_writable and in_use:
            raise IndexCorruptError(
                f"index database {path} cannot be read ({exc}): it is in a read-only folder "
                "with the write-ahead log of an unfinished write beside it",
                fix=say("index where writable"),
            ) from exc
        raise _unreadable(path, exc) from exc
    return db


def _missing(path: Path) -> IndexCorruptError:
    return IndexCorruptError(f"index database {path} is missing", fix=say("re-run index"))


def _unreadable(path: Path, exc: Exception) -> RepolensError:
    """A damaged file or a full disk said as such (:mod:`.failures`), any other failure as unreadable."""
    known = failure(exc, path.parent, path.name)
    return known or IndexCorruptError(f"index database {path} cannot be read ({exc})")


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("SELECT key, value FROM meta").fetchall())


def write_meta(db: sqlite3.Connection, values: Mapping[str, object]) -> None:
    db.executemany(
        "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()],
    )


_FILE_COLS = "id, path, hash, size, mtime_ns, language, lines, flags"


def file_records(db: sqlite3.Connection, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
    """Records by path: of ``paths`` (those indexed), or of every file."""
    if paths is None:
        return {r[1]: FileRecord(*r) for r in db.execute(f"SELECT {_FILE_COLS} FROM files")}
    rows = rows_in(db, f"SELECT {_FILE_COLS} FROM files WHERE path IN ({{marks}})", paths)
    return {r[1]: FileRecord(*r) for r in rows}


def rows_in(db: sqlite3.Connection, sql: str, keys: Iterable[object]) -> Iterator[Sequence[object]]:
    """The rows of ``sql``, whose ``IN ({marks})`` takes the distinct ``keys``
    500 at a time (SQLite bounds the variables of a statement)."""
    wanted = list(dict.fromkeys(keys))
    for i in range(0, len(wanted), 500):
        part = wanted[i : i + 500]
        # Not ``yield from``: a read left mid-way (a damaged value, a caller
        # with enough) would close its cursor when the generator goes, which
        # raises once the database is closed (printed as an ignored exception).
        for row in db.execute(sql.format(marks=",".join("?" * len(part))), part):  # noqa: UP028
            yield row


def all_paths(db: sqlite3.Connection) -> list[str]:
    return [r[0] for r in db.execute("SELECT path FROM files")]


def has_path(db: sqlite3.Connection, path: str) -> bool:
    """``path`` is an indexed file or a folder holding one (an exact prefix
    test: ``LIKE`` would be case-insensitive and read wildcards)."""
    row = db.execute(
        "SELECT 1 FROM files WHERE path = ? OR substr(path, 1, ?) = ? LIMIT 1",
        (path, len(path) + 1, path + "/"),
    ).fetchone()
    return row is not None


def touch_file(db: sqlite3.Connection, file_id: int, size: int, mtime_ns: int) -> None:
    db.execute("UPDATE files SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, file_id))


def skipped_files(db: sqlite3.Connection) -> dict[str, SkippedFile]:
    exists = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='skipped'").fetchone()
    if not exists:  # written before the table existed
        return {}
    rows = db.execute("SELECT path, reason, size, mtime_ns FROM skipped")
    return {r[0]: SkippedFile(*r) for r in rows}


def set_skipped(db: sqlite3.Connection, skip: SkippedFile) -> None:
    db.execute(
        "INSERT INTO skipped(path, reason, size, mtime_ns) VALUES(?,?,?,?) ON CONFLICT(path) DO UPDATE "
        "SET reason=excluded.reason, size=excluded.size, mtime_ns=excluded.mtime_ns",
        (skip.path, skip.reason, skip.size, skip.mtime_ns),
    )


def forget_skipped(db: sqlite3.Connection, paths: Iterable[str]) -> None:
    db.executemany("DELETE FROM skipped WHERE path=?", [(p,) for p in paths])


def insert_file(
    db: sqlite3.Connection,
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
    refs: PackedRefs | None = None,
) -> list[int]:
    """Insert one file with its chunks, symbols and references; return the new chunk cids.

    The caller owns the transaction, so a file is always all-or-nothing.
    """
    file_id = db.execute(
        "INSERT INTO files(path, hash, size, mtime_ns, language, lines, flags) VALUES(?,?,?,?,?,?,?)",
        (path, hash, size, mtime_ns, language, lines, flags),
    ).lastrowid
    cids = []
    for c in chunks:
        cur = db.execute(
            "INSERT INTO chunks(id, file_id, path, start_line, end_line, language, kind, name, qualname,"
            " signature, parent, doc, kinds, text) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                c.id,
                file_id,
                c.path,
                c.start_line,
                c.end_line,
                c.language,
                c.kind,
                c.name,
                c.qualname,
                c.signature,
                c.parent,
                c.doc,
                ",".join(c.kinds),
                compress(c.text),
            ),
        )
        cids.append(cur.lastrowid)
    db.executemany(
        "INSERT INTO symbols(file_id, path, name, norm, qualname, kind, start_line, end_line, signature,"
        " parent, language) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                file_id,
                s.path,
                s.name,
                normalize_symbol(s.name),
                s.qualname,
                s.kind,
                s.start_line,
                s.end_line,
                s.signature,
                s.parent,
                s.language,
            )
            for s in symbols
        ],
    )
    if refs:
        db.execute("INSERT INTO refs(file_id, data) VALUES(?, ?)", (file_id, refs.data))
        db.executemany(
            "INSERT INTO ref_names(name, file_id) VALUES(?, ?)", [(n, file_id) for n in refs.names]
        )
    return cids


def delete_file(db: sqlite3.Connection, file_id: int) -> list[int]:
    """Delete a file's rows; the cids of its chunks (for the lexical index)."""
    cids = [r[0] for r in db.execute("SELECT cid FROM chunks WHERE file_id=?", (file_id,))]
    db.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
    db.execute("DELETE FROM symbols WHERE file_id=?", (file_id,))
    row = db.execute("SELECT data FROM refs WHERE file_id=?", (file_id,)).fetchone()
    if row is not None:  # its names, read back: ref_names is keyed by name first
        names = ref_names(as_refs(unpack_refs(row[0], "", "")))
        db.executemany("DELETE FROM ref_names WHERE name=? AND file_id=?", [(n, file_id) for n in names])
        db.execute("DELETE FROM refs WHERE file_id=?", (file_id,))
    db.execute("DELETE FROM files WHERE id=?", (file_id,))
    return cids


def chunks_by_cid(db: sqlite3.Connection, cids: Iterable[int]) -> dict[int, StoredChunk]:
    out: dict[int, StoredChunk] = {}
    for row in rows_in(db, f"SELECT {CHUNK_COLS} FROM chunks WHERE cid IN ({{marks}})", cids):
        s = stored_chunk(row)
        out[s.cid] = s
    return out


def paths_of_chunks(db: sqlite3.Connection, cids: Iterable[int]) -> dict[int, str]:
    """The file of each of ``cids`` that is stored."""
    return {
        int(cid): str(path)
        for cid, path in rows_in(db, "SELECT cid, path FROM chunks WHERE cid IN ({marks})", cids)
    }


def chunk_by_id(db: sqlite3.Connection, chunk_id: str) -> StoredChunk | None:
    row = db.execute(f"SELECT {CHUNK_COLS} FROM chunks WHERE id=?", (chunk_id,)).fetchone()
    return stored_chunk(row) if row else None


def chunks_of_files(db: sqlite3.Connection, paths: Iterable[str]) -> dict[str, list[StoredChunk]]:
    """The chunks of those of ``paths`` that have any, each file's by start
    line (chunks sharing one in the order they were written)."""
    sql = f"SELECT {CHUNK_COLS} FROM chunks WHERE path IN ({{marks}}) ORDER BY path, start_line, cid"
    out: dict[str, list[StoredChunk]] = {}
    for row in rows_in(db, sql, paths):
        stored = stored_chunk(row)
        out.setdefault(stored.chunk.path, []).append(stored)
    return out


def chunk_at(db: sqlite3.Connection, path: str, line: int) -> int | None:
    row = db.execute(
        "SELECT cid FROM chunks WHERE path=? AND start_line<=? AND end_line>=? ORDER BY start_line LIMIT 1",
        (path, line, line),
    ).fetchone()
    return int(row[0]) if row else None


def chunk_keys(db: sqlite3.Connection) -> dict[str, int]:
    """Chunk id -> cid, for every chunk."""
    return dict(db.execute("SELECT id, cid FROM chunks").fetchall())


# -- symbols ---------------------------------------------------------------------

_SYMBOL_COLS = "name, qualname, kind, path, start_line, end_line, signature, parent, language, norm"
_ORDER = {"name": "", "length": " ORDER BY length(norm)"}


def _symbol_where(match: NameMatch, f: SymbolFilters) -> tuple[str, list[object]]:
    """The WHERE clause of a lookup. Name conditions come first, so each is
    answered from the ``symbols_norm`` index (whose order is "name": by norm,
    then rowid). A prefix is a range, ``norm > p AND norm < p || U+10FFFF``:
    SQLite compares TEXT bytewise (UTF-8), and U+10FFFF sorts after every
    other code point, so the range holds every longer name starting with p."""
    clauses: list[str] = []
    args: list[object] = []
    if match.names:
        clauses.append(
            "norm = ?" if len(match.names) == 1 else f"norm IN ({','.join('?' * len(match.names))})"
        )
        args.extend(match.names)
    elif match.prefix:
        clauses.append(f"norm {'>=' if match.prefix_itself else '>'} ? AND norm < ?")
        args.extend([match.prefix, match.prefix + "\U0010ffff"])
    elif match.inner:
        clauses.append("instr(norm, ?) > 1")
        args.append(match.inner)
    if match.max_len:
        clauses.append("length(norm) BETWEEN ? AND ?")
        args.extend([match.min_len, match.max_len])
    if f.kind:
        clauses.append("kind = ?")
        args.append(f.kind)
    if f.language:
        clauses.append("language = ?")
        args.append(f.language)
    if f.path:
        clauses.append("(path = ? OR substr(path, 1, ?) = ?)")
        args.extend([f.path, len(f.path) + 1, f.path + "/"])
    if not f.sections:
        clauses.append("kind != 'section'")
    return " AND ".join(clauses), args


def symbols(
    db: sqlite3.Connection, match: NameMatch, f: SymbolFilters, limit: int | None, order: SymbolOrder
) -> list[SymbolRow]:
    where, args = _symbol_where(match, f)
    sql = f"SELECT {_SYMBOL_COLS} FROM symbols WHERE {where}{_ORDER[order]}"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return list(map(SymbolRow._make, db.execute(sql, args)))


def count_symbols(db: sqlite3.Connection, match: NameMatch, f: SymbolFilters) -> int:
    where, args = _symbol_where(match, f)
    return int(db.execute(f"SELECT count(*) FROM symbols WHERE {where}", args).fetchone()[0])


def symbol_names(
    db: sqlite3.Connection, match: NameMatch, f: SymbolFilters, limit: int, order: SymbolOrder
) -> list[str]:
    """Distinct matching names. A ``inner`` match without filters scans only
    the ``symbols_norm`` index (a covering scan inside SQLite), not the table."""
    where, args = _symbol_where(match, f)
    rows = db.execute(
        f"SELECT DISTINCT norm FROM symbols WHERE {where}{_ORDER[order]} LIMIT ?", [*args, limit]
    )
    return [r[0] for r in rows]


def symbols_of_files(db: sqlite3.Connection, paths: Iterable[str]) -> dict[str, list[SymbolRow]]:
    """The symbols of those of ``paths`` that have any, each file's in the order written."""
    # by file id: symbols has an index on file_id, not on path
    sql = (
        f"SELECT {_SYMBOL_COLS} FROM symbols WHERE file_id IN"
        " (SELECT id FROM files WHERE path IN ({marks})) ORDER BY file_id, id"
    )
    out: dict[str, list[SymbolRow]] = {}
    for row in map(SymbolRow._make, rows_in(db, sql, paths)):
        out.setdefault(row.path, []).append(row)
    return out


# -- references ------------------------------------------------------------------

_REF_SELECT = "SELECT f.path, f.language, r.data FROM refs r JOIN files f ON f.id = r.file_id"


def refs_named(db: sqlite3.Connection, names: Sequence[str]) -> list[RefRow]:
    """Every stored use of one of ``names``, by path, each file's in line order."""
    wanted = frozenset(names)
    sql = f"{_REF_SELECT} WHERE r.file_id IN (SELECT file_id FROM ref_names WHERE name IN ({{marks}}))"
    found: dict[str, list[RefRow]] = {}
    for path, language, data in rows_in(db, sql, sorted(wanted)):
        found[path] = unpack_refs(data, path, language, wanted)
    return [row for path in sorted(found) for row in found[path]]


def refs_of_files(db: sqlite3.Connection, paths: Iterable[str]) -> dict[str, list[RefRow]]:
    sql = f"{_REF_SELECT} WHERE f.path IN ({{marks}})"
    return {path: unpack_refs(data, path, language) for path, language, data in rows_in(db, sql, paths)}


# -- vectors ---------------------------------------------------------------------


def count_vectors(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM vectors").fetchone()[0])


def put_vectors(db: sqlite3.Connection, rows: Iterable[tuple[int, bytes]]) -> None:
    db.executemany("INSERT OR REPLACE INTO vectors(cid, vec) VALUES(?, ?)", rows)


def vectors_of_file(db: sqlite3.Connection, file_id: int) -> dict[str, bytes]:
    rows = db.execute(
        "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.cid = c.cid WHERE c.file_id = ?", (file_id,)
    )
    return dict(rows.fetchall())


def vectors_by_chunk_id(db: sqlite3.Connection) -> list[tuple[str, bytes]]:
    return db.execute("SELECT c.id, v.vec FROM vectors v JOIN chunks c ON c.cid = v.cid").fetchall()


def vectors_of_chunks(db: sqlite3.Connection, chunk_ids: Iterable[str]) -> dict[str, bytes]:
    """Vectors by chunk id, of those of ``chunk_ids`` that have one."""
    sql = "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.cid = c.cid WHERE c.id IN ({marks})"
    return {str(i): bytes(v) for i, v in rows_in(db, sql, chunk_ids)}


def chunks_missing_vectors(db: sqlite3.Connection, limit: int) -> list[int]:
    rows = db.execute(
        "SELECT cid FROM chunks WHERE cid NOT IN (SELECT cid FROM vectors) ORDER BY cid LIMIT ?", (limit,)
    )
    return [r[0] for r in rows]


def drop_vectors(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM vectors")
    db.execute("DELETE FROM meta WHERE key IN ('embed_identity', 'embed_style', 'embed_dim')")


def bump(db: sqlite3.Connection, key: str) -> None:
    """Increment the counter ``key`` in meta (from 1 when absent)."""
    db.execute(
        "INSERT INTO meta(key, value) VALUES(?, '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (key,),
    )


def pending_lexical(db: sqlite3.Connection) -> list[tuple[int, str]]:
    return [(int(c), str(op)) for c, op in db.execute("SELECT cid, op FROM lex_pending ORDER BY cid")]


def clear_pending(db: sqlite3.Connection, cids: Iterable[int]) -> None:
    db.executemany("DELETE FROM lex_pending WHERE cid=?", [(c,) for c in cids])


def shrink_log(db: sqlite3.Connection) -> None:
    """Empty the write-ahead log after a rolled-back transaction (which leaves
    its pages there); best effort: a reader still in it, or a disk too full to
    checkpoint, keeps it for later."""
    with contextlib.suppress(sqlite3.Error):
        db.execute("PRAGMA busy_timeout=200")  # not the writer's 30 s wait for readers to move on
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            db.execute("PRAGMA busy_timeout=30000")


def counts(db: sqlite3.Connection) -> dict[str, int]:
    files = db.execute("SELECT count(*), coalesce(sum(size),0), coalesce(sum(lines),0) FROM files").fetchone()
    chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    symbols = db.execute("SELECT count(*) FROM symbols").fetchone()[0]
    return {"files": files[0], "bytes": files[1], "lines": files[2], "chunks": chunks, "symbols": symbols}
