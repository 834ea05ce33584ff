"""BM25 on PostgreSQL, scored as tantivy scores it (:mod:`repolens.store.bm25` is the spec).

Why this design (measured in ``docs/benchmarks.md``, "Lexical ranking on
PostgreSQL"): any exact SQL plan touches every posting of every query term,
about a microsecond each in the executor, 11-21x slower than the local
store; fetching the query terms' posting lists packed and summing them here
with numpy is 2.4-3x, and exact.

**Postings.** One ``int8`` per (chunk, field, token)
(:mod:`repolens.store.postgres.postings`), so a list sorted by value is
sorted by cid. A published generation keeps each (token, field)'s list as
one ``int8[]`` in ``lex_blobs`` (written packed by
:mod:`repolens.store.postgres.packing`); chunks a refresh added since are
rows of ``lex_postings`` and chunks removed since are ``lex_deleted``; one
statement returns the query terms' lists and rows (``array_send``: raw
big-endian values, no text to parse), the live statistics and the deleted
cids.

**Statistics are live and exact**: ``N`` and the token totals come from
``lex_stats``, maintained in each batch's transaction; ``df`` is the length
of a term's live list (blob minus deleted, plus rows). A refreshed index
therefore ranks like a freshly built local one.

**Fields.** 0..3 are the scored text fields, 4 is ``dirs`` (every folder
prefix; a ``subpath`` filter selects by it *and adds its BM25*, as tantivy's
MUST clause does), 5 ``lang`` and 6 ``kind`` (filters adding 1.0 each).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from repolens.store.bm25 import K1, B, id_to_fieldnorm
from repolens.store.document import TEXT_FIELDS
from repolens.store.postgres.postings import DIRS, KIND, LANG, MAX_TF, SCORED

if TYPE_CHECKING:
    import psycopg

    from repolens.store.base import LexFilters

_NORMS = np.array([id_to_fieldnorm(code) for code in range(256)], dtype=np.float64)
# array_send(int8[]): ndim, flags, element type, then (length, lower bound)
# per dimension; then each element as a 4-byte length and 8 bytes.
_ELEMENT = np.dtype([("n", ">i4"), ("v", ">i8")])


LISTS = """
SELECT 0, b.token, b.field, array_send(b.postings)
FROM unnest(%(tokens)s::text[], %(fields)s::int2[]) AS q(token, field)
JOIN lex_blobs b ON b.gen = %(gen)s AND b.token = q.token AND b.field = q.field
UNION ALL
SELECT 1, p.token, p.field, array_send(array_agg(p.packed ORDER BY p.packed))
FROM unnest(%(tokens)s::text[], %(fields)s::int2[]) AS q(token, field)
JOIN lex_postings p ON p.gen = %(gen)s AND p.token = q.token AND p.field = q.field
GROUP BY p.token, p.field
"""
QUERY = (
    LISTS
    + """UNION ALL
SELECT 2, NULL, NULL, array_send(array_prepend(num_docs, totals)) FROM lex_stats WHERE gen = %(gen)s
UNION ALL
SELECT 3, NULL, NULL, array_send(array_agg(cid::int8)) FROM lex_deleted WHERE gen = %(gen)s
"""
)


def int8_values(blob: bytes | None) -> np.ndarray:
    """The values of an ``array_send`` of a one-dimensional ``int8[]`` (none for an empty one)."""
    if not blob or int.from_bytes(blob[:4], "big") == 0:
        return np.zeros(0, dtype=np.int64)
    return np.frombuffer(blob, dtype=_ELEMENT, offset=20)["v"].astype(np.int64)


class Lists:
    """The live posting lists of one reader's searches, by (token, field),
    with the statistics and deleted chunks read with the first of them.
    A reader keeps them until it refreshes (:class:`~repolens.store.postgres.reader.PgReader`):
    one question searches the same terms several times (the candidates, then
    the files it names or the history votes for), and fetching a long
    question's lists is most of a search."""

    def __init__(self) -> None:
        self.num_docs = 0
        self.totals = [0] * len(SCORED)
        self.deleted = np.zeros(0, dtype=np.int64)
        self.lists: dict[tuple[str, int], np.ndarray] = {}
        self.asked: set[tuple[str, int]] = set()  # fetched, found or not

    def add(self, rows: Iterable[tuple[int, str | None, int | None, bytes | None]]) -> None:
        """Rows of :data:`QUERY` (the first fetch) or :data:`LISTS` (later ones)."""
        parts: dict[tuple[str, int], list[np.ndarray]] = {}
        for kind, token, field, blob in rows:
            values = int8_values(blob)
            if kind == 2:
                self.num_docs, self.totals = int(values[0]), [int(v) for v in values[1:]]
            elif kind == 3:
                self.deleted = values
            else:
                assert token is not None and field is not None
                parts.setdefault((token, field), []).append(values)
        for key, arrays in parts.items():
            values = np.concatenate(arrays) if len(arrays) > 1 else arrays[0]
            if len(self.deleted):
                values = values[~np.isin(values >> 32, self.deleted)]
            if len(values):
                self.lists[key] = values

    def cids(self, key: tuple[str, int]) -> np.ndarray:
        values = self.lists.get(key)
        return np.zeros(0, dtype=np.int64) if values is None else values >> 32


def _bm25(lists: Lists, boosts: Mapping[tuple[str, int], float]) -> tuple[np.ndarray, np.ndarray]:
    """(cids, partial scores) of every posting of the boosted lists, concatenated."""
    cids, parts = [], []
    n = lists.num_docs
    for (token, field), boost in boosts.items():
        values = lists.lists.get((token, field))
        if values is None or boost <= 0 or n <= 0 or lists.totals[field] <= 0:
            continue
        df = len(values)
        weight = boost * math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1.0)
        per_token = K1 * B * n / lists.totals[field]
        tf = ((values >> 8) & MAX_TF).astype(np.float64)
        dl = _NORMS[values & 0xFF]
        parts.append(weight * tf / (tf + K1 * (1.0 - B) + per_token * dl))
        cids.append(values >> 32)
    if not cids:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(cids), np.concatenate(parts)


# The tokens of the scored fields in a range (``COLLATE "C"``: code point
# order, so a prefix is the range from it to it followed by U+10FFFF), in
# both the packed lists and the rows written since.
PREFIX_TERMS = """
SELECT token FROM lex_blobs WHERE gen = %(g)s AND token >= %(lo)s AND token < %(hi)s AND field < %(f)s
UNION
SELECT token FROM lex_postings WHERE gen = %(g)s AND token >= %(lo)s AND token < %(hi)s AND field < %(f)s
"""


HELD_TERMS = """
SELECT token FROM lex_blobs WHERE gen = %(g)s AND token = ANY(%(t)s) AND field < %(f)s
UNION
SELECT token FROM lex_postings WHERE gen = %(g)s AND token = ANY(%(t)s) AND field < %(f)s
"""


def held_terms(conn: psycopg.Connection, gen: int, tokens: Sequence[str]) -> frozenset[str]:
    """See :meth:`repolens.store.base.IndexReader.held_terms`: one statement."""
    params = {"g": gen, "t": list(dict.fromkeys(tokens)), "f": len(TEXT_FIELDS)}
    return frozenset(row[0] for row in conn.execute(HELD_TERMS, params))


# The same for the published index of each of many keys (a row with a NULL
# token for a key whose index holds none of them; no row for a key with none).
HELD_BY_KEY = """
SELECT r.key, h.token FROM repos r JOIN generations g ON g.gen = r.current_gen
LEFT JOIN LATERAL (
  SELECT token FROM lex_blobs WHERE gen = g.gen AND token = ANY(%(t)s) AND field < %(f)s
  UNION
  SELECT token FROM lex_postings WHERE gen = g.gen AND token = ANY(%(t)s) AND field < %(f)s
) h ON true
WHERE r.key = ANY(%(k)s)
"""


def held_terms_by_key(
    conn: psycopg.Connection, keys: Sequence[str], tokens: Sequence[str]
) -> dict[str, set[str]]:
    """:func:`held_terms` of the published index of each of ``keys`` that
    has one, in one statement (the probe of a search across the
    repositories of one database)."""
    params = {"k": list(keys), "t": list(dict.fromkeys(tokens)), "f": len(TEXT_FIELDS)}
    found: dict[str, set[str]] = {}
    for key, token in conn.execute(HELD_BY_KEY, params):
        held = found.setdefault(key, set())
        if token is not None:
            held.add(token)
    return found


def terms_with_prefix(conn: psycopg.Connection, gen: int, prefix: str, limit: int) -> list[str]:
    """See :meth:`repolens.store.base.IndexReader.terms_with_prefix`."""
    params = {"g": gen, "lo": prefix, "hi": prefix + "\U0010ffff", "f": len(TEXT_FIELDS)}
    found = [row[0] for row in conn.execute(PREFIX_TERMS, params)]
    return sorted(found, key=lambda term: (len(term), term))[:limit]


def search_each(
    conn: psycopg.Connection,
    gen: int,
    terms: Sequence[tuple[str, float]],
    field_weights: Mapping[str, float],
    asks: Sequence[tuple[int, LexFilters | None]],
    known: Lists | None = None,
) -> tuple[list[list[tuple[int, float]]], Lists | None]:
    """For each ``(limit, filters)``: the top ``limit`` (cid, score), best
    first, ties by ascending cid; and the lists read. The terms' lists (and
    each filter's) are fetched in one statement, only those not ``known``
    yet, and scored once; only the filters differ."""
    boosts: dict[tuple[str, int], float] = {}
    for token, weight in terms:
        for f, name in enumerate(TEXT_FIELDS):
            fw = field_weights.get(name, 0.0)
            if fw > 0 and weight > 0:
                # Repeated terms are separate clauses in tantivy: their scores add up.
                boosts[token, f] = boosts.get((token, f), 0.0) + weight * fw
    if not boosts or all(limit <= 0 for limit, _ in asks):
        return [[] for _ in asks], known
    wanted = dict.fromkeys(boosts)
    for _, f in asks:
        if f is not None:
            wanted.update(dict.fromkeys([(_subpath(f), DIRS)] if _subpath(f) else []))
            wanted.update(dict.fromkeys([(v, LANG) for v in f.languages] + [(v, KIND) for v in f.kinds]))
    lists = known if known is not None else Lists()
    missing = [key for key in wanted if key not in lists.asked]
    if missing:  # always on a first fetch, which also reads the statistics
        params = {"gen": gen, "tokens": [t for t, _ in missing], "fields": [f for _, f in missing]}
        lists.add(conn.cursor(binary=True).execute(LISTS if known is not None else QUERY, params).fetchall())
        lists.asked.update(missing)
    cids, parts = _bm25(lists, boosts)
    if not len(cids):
        return [[] for _ in asks], lists
    size = int(cids.max()) + 1
    scores = np.bincount(cids, weights=parts, minlength=size)
    matched = np.bincount(cids, minlength=size) > 0
    out = []
    for limit, f in asks:
        if limit <= 0:
            out.append([])
        elif f is None:
            out.append(_top(scores, matched, limit))
        else:
            out.append(_top(*_filtered(lists, scores, matched, f, _subpath(f)), limit))
    return out, lists


def _subpath(f: LexFilters) -> str:
    return f.subpath.strip("/") if f.subpath else ""


def _top(scores: np.ndarray, matched: np.ndarray, limit: int) -> list[tuple[int, float]]:
    found = np.flatnonzero(matched)
    if len(found) > limit:  # keep every chunk tied with the k-th, then order by (-score, cid)
        kth = np.partition(scores[found], len(found) - limit)[len(found) - limit]
        found = found[scores[found] >= kth]
    order = np.lexsort((found, -scores[found]))[:limit]
    return [(int(c), float(scores[c])) for c in found[order]]


def _filtered(
    lists: Lists, scores: np.ndarray, matched: np.ndarray, f: LexFilters, subpath: str
) -> tuple[np.ndarray, np.ndarray]:
    """Keep the chunks within the filters and add what each filter scores."""
    size = len(scores)

    def member(cids: np.ndarray) -> np.ndarray:
        cids = cids[cids < size]
        return np.bincount(cids, minlength=size) > 0

    if subpath:
        cids, parts = _bm25(lists, {(subpath, DIRS): 1.0})
        keep = cids < size
        scores = scores + np.bincount(cids[keep], weights=parts[keep], minlength=size)
        matched = matched & member(cids)
    for values, field in ((f.languages, LANG), (f.kinds, KIND)):
        if values:
            inside = member(np.concatenate([lists.cids((v, field)) for v in values]))
            matched = matched & inside
            scores = scores + inside
    return scores, matched
