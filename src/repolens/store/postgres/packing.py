"""Writing the lexical lists (:mod:`repolens.store.postgres.postings` values) packed.

A build writes each batch's lists as they are, one ``int8[]`` *part* per
(token, field) in ``lex_blobs``, numbered by its first chunk id (binary
``COPY``: no row per posting, no index but the table's key, no sort in the
server: the writer numbers chunks in order, so each list is built
ascending), and :func:`fold` joins each term's parts into one when the
build is published. A refresh writes a row per posting into
``lex_postings`` and masks removed chunks in ``lex_deleted``; once they
touch :data:`FOLD_SHARE` of the documents, :func:`fold` makes them parts of
the lists too.

No numpy here: the indexing process imports this and not the scoring.
"""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

# array_send(int8[]), what a binary COPY reads: one dimension, no nulls,
# element type int8 (20), its length, lower bound 1; then each element as
# its length (8) and its value, big-endian.
_HEAD = struct.Struct(">iiiii")
_INT8 = 20
_SMALL = 16  # lists up to this long are packed by one struct (most lists hold a posting or two)
_small: dict[int, struct.Struct] = {}


def int8_array(values: Sequence[int]) -> bytes:
    """``values`` as ``array_send`` makes an ``int8[]``."""
    n = len(values)
    if n <= _SMALL:
        packer = _small.get(n)
        if packer is None:
            packer = _small[n] = struct.Struct(">iiiii" + "iq" * n)
        args = [1, 0, _INT8, n, 1]
        for value in values:
            args += (8, value)
        return packer.pack(*args)
    body = array("q", values)
    if sys.byteorder == "little":
        body.byteswap()
    raw = body.tobytes()
    out = bytearray(12 * n)  # each element: 4 bytes of length (0, 0, 0, 8), 8 of value
    out[3::12] = b"\x08" * n
    for k in range(8):
        out[4 + k :: 12] = raw[k::8]
    return _HEAD.pack(1, 0, _INT8, n, 1) + out


def write_parts(conn: psycopg.Connection, gen: int, lists: Sequence[Mapping[str, Sequence[int]]]) -> None:
    """Write a batch's lists (by field, then token; each ascending, its cids
    above every part written before) as one part per (token, field),
    numbered by its first cid."""
    sql = "COPY lex_blobs (gen, token, field, part, postings) FROM STDIN (FORMAT BINARY)"
    with conn.cursor().copy(sql) as copy:
        # The postings go as bytes already in int8[]'s binary form; the server reads them as int8[].
        copy.set_types(["int8", "text", "int2", "int4", "bytea"])
        for field, into in enumerate(lists):
            for token, values in into.items():
                copy.write_row((gen, token, field, values[0] >> 32, int8_array(values)))


# A refresh's rows and deletions are folded into the lists once they touch
# this share of the documents (each query reads them besides the lists).
FOLD_SHARE = 0.05

# Each term of several parts: its parts joined in order (their cid ranges
# ascend) into its first, the others removed. The terms are found first
# from the key alone, so a list that is one part already is never read.
JOIN_PARTS = """
WITH split AS MATERIALIZED (
    SELECT token, field, min(part) AS part FROM lex_blobs WHERE gen = %(g)s
    GROUP BY token, field HAVING count(*) > 1
), joined AS MATERIALIZED (
    SELECT s.token, s.field, s.part, repolens_concat(b.postings ORDER BY b.part) AS postings
    FROM split s JOIN lex_blobs b ON b.gen = %(g)s AND b.token = s.token AND b.field = s.field
    GROUP BY s.token, s.field, s.part
), gone AS (
    DELETE FROM lex_blobs b USING joined j
    WHERE b.gen = %(g)s AND b.token = j.token AND b.field = j.field AND b.part > j.part
)
UPDATE lex_blobs b SET postings = j.postings FROM joined j
WHERE b.gen = %(g)s AND b.token = j.token AND b.field = j.field AND b.part = j.part
"""


def fold(conn: psycopg.Connection, gen: int) -> None:
    """Make every term's list one part again, without the deleted chunks and
    with the rows a refresh added; in the caller's transaction. At publish
    this joins a build's parts (one per batch that held the term)."""
    deleted = [r[0] for r in conn.execute("SELECT cid FROM lex_deleted WHERE gen = %s", (gen,))]
    if deleted:
        # Which lists hold a deleted chunk is not recorded: filter them all
        # (a rare, bounded rewrite, at most once per FOLD_SHARE of changes).
        conn.execute(
            "UPDATE lex_blobs SET postings = ARRAY(SELECT p FROM unnest(postings) AS p"
            " WHERE NOT ((p >> 32)::int = ANY(%(d)s)) ORDER BY p) WHERE gen = %(g)s",
            {"g": gen, "d": deleted},
        )
        conn.execute("DELETE FROM lex_blobs WHERE gen = %s AND cardinality(postings) = 0", (gen,))
    # A refresh's rows are one more part per term: their cids are above every part's.
    conn.execute(
        "INSERT INTO lex_blobs (gen, token, field, part, postings)"
        " SELECT gen, token, field, min(cid), array_agg(packed ORDER BY packed) FROM lex_postings"
        " WHERE gen = %(g)s GROUP BY gen, token, field",
        {"g": gen},
    )
    conn.execute(JOIN_PARTS, {"g": gen})
    conn.execute("DELETE FROM lex_postings WHERE gen = %s", (gen,))
    conn.execute("DELETE FROM lex_deleted WHERE gen = %s", (gen,))


def should_fold(conn: psycopg.Connection, gen: int) -> bool:
    """Whether a refreshed generation's rows and deletions passed :data:`FOLD_SHARE`."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM lex_deleted WHERE gen = %(g)s)"
        " + (SELECT count(DISTINCT cid) FROM lex_postings WHERE gen = %(g)s),"
        " (SELECT num_docs FROM lex_stats WHERE gen = %(g)s)",
        {"g": gen},
    ).fetchone()
    changed, docs = (row[0] or 0), (row[1] or 0)
    return changed > 0 and changed >= FOLD_SHARE * max(docs, 1)
