"""Reads of one generation's rows, shared by the reader and the writer.

Each function takes a connection and a generation id and runs one
statement; rows come back in the orders :mod:`repolens.store.base` writes
down (the same as the local store's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from repolens.store.base import (
    FileRecord,
    NameMatch,
    RefRow,
    SkippedFile,
    StoredChunk,
    SymbolFilters,
    SymbolOrder,
    SymbolRow,
)
from repolens.store.chunk_rows import CHUNK_COLS, stored_chunk
from repolens.store.ref_rows import unpack_refs

if TYPE_CHECKING:
    import psycopg


def read_meta(conn: psycopg.Connection, gen: int) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta WHERE gen = %s", (gen,)).fetchall())


def published_with(conn: psycopg.Connection, meta: Mapping[str, str], other_than: str) -> list[int]:
    """The published generations of the repositories other than ``other_than``
    (a key) whose meta has every value of ``meta``."""
    found = conn.execute(
        "SELECT r.current_gen FROM repos r WHERE r.current_gen IS NOT NULL AND r.key <> %s"
        " AND (SELECT count(*) FROM meta m WHERE m.gen = r.current_gen"
        "      AND (m.key, m.value) IN (SELECT * FROM unnest(%s::text[], %s::text[]))) = %s",
        (other_than, list(meta), [str(v) for v in meta.values()], len(meta)),
    ).fetchall()
    return [int(r[0]) for r in found]


def counts(conn: psycopg.Connection, gen: int) -> dict[str, int]:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM files WHERE gen = %(g)s),"
        " (SELECT coalesce(sum(size), 0) FROM files WHERE gen = %(g)s),"
        " (SELECT coalesce(sum(lines), 0) FROM files WHERE gen = %(g)s),"
        " (SELECT count(*) FROM chunks WHERE gen = %(g)s),"
        " (SELECT count(*) FROM symbols WHERE gen = %(g)s)",
        {"g": gen},
    ).fetchone()
    assert row is not None
    return dict(zip(("files", "bytes", "lines", "chunks", "symbols"), map(int, row), strict=True))


_FILE_COLS = "id, path, hash, size, mtime_ns, language, lines, flags"


def files(conn: psycopg.Connection, gen: int, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
    if paths is None:
        rows = conn.execute(f"SELECT {_FILE_COLS} FROM files WHERE gen = %s", (gen,))
    else:
        rows = conn.execute(
            f"SELECT {_FILE_COLS} FROM files WHERE gen = %s AND path = ANY(%s)", (gen, list(set(paths)))
        )
    return {r[1]: FileRecord(*r) for r in rows}


def skipped(conn: psycopg.Connection, gen: int) -> dict[str, SkippedFile]:
    rows = conn.execute("SELECT path, reason, size, mtime_ns FROM skipped WHERE gen = %s", (gen,))
    return {r[0]: SkippedFile(*r) for r in rows}


def chunks(conn: psycopg.Connection, gen: int, cids: Iterable[int]) -> dict[int, StoredChunk]:
    wanted = list({int(c) for c in cids})
    if not wanted:
        return {}
    rows = conn.execute(f"SELECT {CHUNK_COLS} FROM chunks WHERE gen = %s AND cid = ANY(%s)", (gen, wanted))
    return {s.cid: s for s in map(stored_chunk, rows)}


def chunk_by_id(conn: psycopg.Connection, gen: int, chunk_id: str) -> StoredChunk | None:
    row = conn.execute(
        f"SELECT {CHUNK_COLS} FROM chunks WHERE gen = %s AND id = %s", (gen, chunk_id)
    ).fetchone()
    return stored_chunk(row) if row else None


def chunks_of_files(conn: psycopg.Connection, gen: int, paths: Iterable[str]) -> dict[str, list[StoredChunk]]:
    """The chunks of those of ``paths`` that have any, each file's by start line, then cid."""
    rows = conn.execute(
        f"SELECT {CHUNK_COLS} FROM chunks WHERE gen = %s AND path = ANY(%s) ORDER BY path, start_line, cid",
        (gen, list(paths)),
    )
    out: dict[str, list[StoredChunk]] = {}
    for stored in map(stored_chunk, rows):
        out.setdefault(stored.chunk.path, []).append(stored)
    return out


def chunks_at(conn: psycopg.Connection, gen: int, spots: Sequence[tuple[str, int]]) -> list[int | None]:
    """One statement for all of ``spots``: a lateral lookup per spot, in order."""
    found = conn.execute(
        "SELECT s.i, c.cid FROM unnest(%s::text[], %s::int[]) WITH ORDINALITY AS s(path, line, i)"
        " CROSS JOIN LATERAL (SELECT cid FROM chunks WHERE gen = %s AND path = s.path"
        " AND start_line <= s.line AND end_line >= s.line ORDER BY start_line, cid LIMIT 1) c",
        ([p for p, _ in spots], [n for _, n in spots], gen),
    )
    out: list[int | None] = [None] * len(spots)
    for i, cid in found:
        out[int(i) - 1] = int(cid)
    return out


# -- symbols ---------------------------------------------------------------------

SYMBOL_COLS = "name, qualname, kind, path, start_line, end_line, signature, parent, language, norm"
_ORDER = {"name": " ORDER BY norm, seq", "length": " ORDER BY length(norm), norm, seq"}


def _symbol_where(gen: int, match: NameMatch, f: SymbolFilters) -> tuple[str, list[object]]:
    """The WHERE clause of a lookup; ``norm`` is ``COLLATE "C"``, so a prefix
    is a range compared code point by code point, as the local store does."""
    clauses, args = ["gen = %s"], [gen]
    if match.names:
        clauses.append("norm = ANY(%s)")
        args.append(list(match.names))
    elif match.prefix:
        clauses.append(f"norm {'>=' if match.prefix_itself else '>'} %s AND norm < %s")
        args.extend([match.prefix, match.prefix + "\U0010ffff"])
    elif match.inner:
        clauses.append("strpos(norm, %s) > 1")
        args.append(match.inner)
    if match.max_len:
        clauses.append("length(norm) BETWEEN %s AND %s")
        args.extend([match.min_len, match.max_len])
    if f.kind:
        clauses.append("kind = %s")
        args.append(f.kind)
    if f.language:
        clauses.append("language = %s")
        args.append(f.language)
    if f.path:
        clauses.append("(path = %s OR starts_with(path, %s))")
        args.extend([f.path, f.path + "/"])
    if not f.sections:
        clauses.append("kind <> 'section'")
    return " AND ".join(clauses), args


def symbols(
    conn: psycopg.Connection,
    gen: int,
    match: NameMatch,
    f: SymbolFilters,
    limit: int | None,
    order: SymbolOrder,
) -> list[SymbolRow]:
    where, args = _symbol_where(gen, match, f)
    sql = f"SELECT {SYMBOL_COLS} FROM symbols WHERE {where}{_ORDER[order]}"
    if limit is not None:
        sql += " LIMIT %s"
        args.append(limit)
    return [SymbolRow._make(r) for r in conn.execute(sql, args)]


def count_symbols(conn: psycopg.Connection, gen: int, match: NameMatch, f: SymbolFilters) -> int:
    where, args = _symbol_where(gen, match, f)
    row = conn.execute(f"SELECT count(*) FROM symbols WHERE {where}", args).fetchone()
    return int(row[0]) if row else 0


def symbol_names(
    conn: psycopg.Connection, gen: int, match: NameMatch, f: SymbolFilters, limit: int, order: SymbolOrder
) -> list[str]:
    where, args = _symbol_where(gen, match, f)
    by = " ORDER BY norm" if order == "name" else " ORDER BY length(norm), norm"
    rows = conn.execute(
        f"SELECT norm FROM (SELECT DISTINCT norm FROM symbols WHERE {where}) d{by} LIMIT %s", [*args, limit]
    )
    return [r[0] for r in rows]


def symbols_of_files(conn: psycopg.Connection, gen: int, paths: Iterable[str]) -> dict[str, list[SymbolRow]]:
    """The symbols of those of ``paths`` that have any, each file's in the order written."""
    rows = conn.execute(
        f"SELECT {SYMBOL_COLS} FROM symbols WHERE gen = %(g)s AND file_id IN"
        " (SELECT id FROM files WHERE gen = %(g)s AND path = ANY(%(p)s)) ORDER BY file_id, seq",
        {"g": gen, "p": list(paths)},
    )
    out: dict[str, list[SymbolRow]] = {}
    for row in map(SymbolRow._make, rows):
        out.setdefault(row.path, []).append(row)
    return out


def refs_named(conn: psycopg.Connection, gen: int, names: Sequence[str]) -> list[RefRow]:
    """Every stored use of one of ``names``, by path, each file's in line order."""
    wanted = frozenset(names)
    rows = conn.execute(
        "SELECT f.path, f.language, r.data FROM refs r JOIN files f ON f.gen = r.gen AND f.id = r.file_id"
        " WHERE r.gen = %(g)s AND r.file_id IN"
        " (SELECT file_id FROM ref_names WHERE gen = %(g)s AND name = ANY(%(n)s)) ORDER BY f.path",
        {"g": gen, "n": sorted(wanted)},
    )
    return [row for path, language, data in rows for row in unpack_refs(bytes(data), path, language, wanted)]


def refs_of_files(conn: psycopg.Connection, gen: int, paths: Iterable[str]) -> dict[str, list[RefRow]]:
    rows = conn.execute(
        "SELECT f.path, f.language, r.data FROM refs r JOIN files f ON f.gen = r.gen AND f.id = r.file_id"
        " WHERE r.gen = %(g)s AND f.path = ANY(%(p)s)",
        {"g": gen, "p": list(paths)},
    )
    return {path: unpack_refs(bytes(data), path, language) for path, language, data in rows}


def vector_count(conn: psycopg.Connection, gen: int) -> int:
    row = conn.execute("SELECT count(*) FROM vectors WHERE gen = %s", (gen,)).fetchone()
    return int(row[0]) if row else 0
