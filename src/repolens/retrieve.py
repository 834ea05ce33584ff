"""Retrieve: ranked chunks for a parsed query.

The spine has one leg, BM25 over four fields; later legs (dense vectors,
symbol boost, reranker) fuse into the same ranked list of :class:`Hit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from repolens.chunk import Chunk
from repolens.query import ParsedQuery
from repolens.store import IndexHandle
from repolens.store import sqlite as sq
from repolens.store.lexical import LexFilters

# Per-field weights for BM25. A term in a definition's name or signature says
# more about the chunk than the same term somewhere in its body.
FIELD_WEIGHTS = {"path": 1.0, "name": 2.0, "sig": 1.5, "body": 1.0}
CANDIDATES = 100


@dataclass(frozen=True, slots=True)
class Hit:
    cid: int
    chunk: Chunk
    score: float


@dataclass
class SearchOutcome:
    query: ParsedQuery
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)


def search_index(
    handle: IndexHandle,
    query: ParsedQuery,
    *,
    limit: int = CANDIDATES,
    filters: LexFilters | None = None,
) -> SearchOutcome:
    scored = handle.lex.search(query.weighted(), FIELD_WEIGHTS, limit, filters)
    stored = sq.chunks_by_cid(handle.db, (cid for cid, _ in scored))
    hits = [
        Hit(cid, stored[cid].chunk, score)
        for cid, score in scored
        if cid in stored  # a cid missing here was deleted and not yet dropped from the lexical index
    ]
    return SearchOutcome(query, hits)
