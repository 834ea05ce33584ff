"""The dense leg on pgvector: exact search for small repositories, HNSW for big ones.

Vectors are ``halfvec`` (float16, as the local store keeps them: half the
size of ``vector``, and the values the embedder's float16 output already
is). Exact search is a scan of the generation's rows ordered by cosine
distance; from ``ann_min_vectors`` vectors (the local store's threshold,
same logic) :func:`sync` builds a partial HNSW index on the generation's
rows (``WHERE gen = N``, on ``vec::halfvec(dim)``: an index needs a fixed
dimension), which pgvector then keeps current on every write, so unlike
the local graph it never lags behind the vectors.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from pgvector import HalfVector

if TYPE_CHECKING:
    import psycopg

EF_SEARCH = 256  # the local graph's search beam (docs/benchmarks.md)
M, EF_CONSTRUCTION = 16, 128


def to_text(vec: bytes) -> str:
    """A stored vector (little-endian float16 bytes) as pgvector's text form."""
    return HalfVector(np.frombuffer(vec, dtype="<f2")).to_text()


def to_bytes(sent: bytes) -> bytes:
    """``halfvec_send(vec)`` back to little-endian float16 bytes."""
    return HalfVector.from_binary(sent).to_numpy().astype("<f2").tobytes()


def vectors_by_chunk_id(
    conn: psycopg.Connection, gens: Iterable[int], chunk_ids: list[str]
) -> dict[str, bytes]:
    """The vectors of those of ``chunk_ids`` that one of the generations
    ``gens`` holds (any one of them: equal ids, equal embedding input)."""
    found = conn.execute(
        "SELECT DISTINCT ON (c.id) c.id, halfvec_send(v.vec) FROM chunks c JOIN vectors v"
        " ON v.gen = c.gen AND v.cid = c.cid WHERE c.gen = ANY(%s) AND c.id = ANY(%s)",
        (list(gens), chunk_ids),
    ).fetchall()
    return {chunk_id: to_bytes(vec) for chunk_id, vec in found}


def _query_text(query: np.ndarray) -> str:
    return HalfVector(query.astype(np.float32)).to_text()


def index_name(gen: int) -> str:
    return f"vectors_hnsw_{int(gen)}"


def has_index(conn: psycopg.Connection, gen: int) -> int:
    """The dimension of the generation's HNSW index, 0 when it has none."""
    row = conn.execute("SELECT value FROM meta WHERE gen = %s AND key = 'ann_dim'", (gen,)).fetchone()
    if not row:
        return 0
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (index_name(gen),)).fetchone()
    return int(row[0]) if exists and exists[0] else 0


def why_exact(min_vectors: int, count: int) -> str:
    if min_vectors <= 0:
        return "off (ann_min_vectors = 0): exact search"
    if count < min_vectors:
        return f"exact search ({count:,} vectors, graph from {min_vectors:,})"
    return ""


def state(conn: psycopg.Connection, gen: int, min_vectors: int, count: int) -> str:
    why = why_exact(min_vectors, count)
    if why:
        return why
    if has_index(conn, gen):
        return f"pgvector HNSW index over {count:,} vectors (current)"
    return "exact search: the HNSW index is built once the vectors are complete"


def top(
    conn: psycopg.Connection, gen: int, query: np.ndarray, k: int, min_vectors: int
) -> list[tuple[int, float]]:
    """Top ``k`` (cid, cosine similarity): through the HNSW index when the
    generation has one (approximate), else exactly."""
    q = _query_text(query)
    dim = has_index(conn, gen) if min_vectors > 0 else 0
    if dim:
        g = int(gen)  # a literal: the planner matches the partial index's predicate
        with conn.transaction():
            conn.execute(f"SET LOCAL hnsw.ef_search = {EF_SEARCH}")
            found = conn.execute(
                f"SELECT cid, 1 - (vec::halfvec({dim}) <=> %(q)s::halfvec({dim})) FROM"
                f" vectors WHERE gen = {g}"
                f" ORDER BY vec::halfvec({dim}) <=> %(q)s::halfvec({dim}) LIMIT %(k)s",
                {"q": q, "k": k},
            ).fetchall()
    else:
        found = conn.execute(
            "SELECT cid, 1 - (vec <=> %(q)s::halfvec) AS sim FROM vectors WHERE gen = %(g)s"
            " ORDER BY vec <=> %(q)s::halfvec, cid LIMIT %(k)s",
            {"q": q, "g": gen, "k": k},
        ).fetchall()
    return [(int(c), float(s)) for c, s in found]


def similarities(
    conn: psycopg.Connection, gen: int, query: np.ndarray, cids: Iterable[int]
) -> dict[int, float]:
    wanted = list({int(c) for c in cids})
    if not wanted:
        return {}
    found = conn.execute(
        "SELECT cid, 1 - (vec <=> %s::halfvec) FROM vectors WHERE gen = %s AND cid = ANY(%s)",
        (_query_text(query), gen, wanted),
    ).fetchall()
    return {int(c): float(s) for c, s in found}


def sync(conn: psycopg.Connection, gen: int, min_vectors: int) -> str:
    """Build the generation's HNSW index once its vectors are complete and
    numerous enough (drop it below the threshold); one line on what was done."""
    count = int(conn.execute("SELECT count(*) FROM vectors WHERE gen = %s", (gen,)).fetchone()[0])
    name = index_name(gen)
    if why_exact(min_vectors, count):
        conn.execute(f"DROP INDEX IF EXISTS {name}")
        return ""
    if has_index(conn, gen):
        return ""
    chunks = int(conn.execute("SELECT count(*) FROM chunks WHERE gen = %s", (gen,)).fetchone()[0])
    if count < chunks:
        return ""  # not complete yet: exact search meanwhile
    row = conn.execute("SELECT vector_dims(vec) FROM vectors WHERE gen = %s LIMIT 1", (gen,)).fetchone()
    dim = int(row[0])
    with conn.transaction():
        conn.execute("SET LOCAL statement_timeout = 0")  # a big graph takes minutes
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON vectors USING hnsw"
            f" ((vec::halfvec({dim})) halfvec_cosine_ops)"
            f" WITH (m = {M}, ef_construction = {EF_CONSTRUCTION}) WHERE gen = {int(gen)}"
        )
        conn.execute(
            "INSERT INTO meta (gen, key, value) VALUES (%s, 'ann_dim', %s)"
            " ON CONFLICT (gen, key) DO UPDATE SET value = excluded.value",
            (gen, str(dim)),
        )
    return f"pgvector HNSW index built over {count:,} vectors"
