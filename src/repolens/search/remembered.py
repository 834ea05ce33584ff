"""Remembered search results, so a reply can be re-rendered without searching.

Every search stores its ranked candidates (chunk keys, scores, per-leg
ranks, the factors of each score) under a short ``query_id``, in the store
(:meth:`repolens.store.base.IndexReader.remember`; the local store keeps
the newest few hundred as files, so the CLI and the MCP server share them).
A later call with that id renders the same result in another mode (packet,
files, JSON) from the same index generation.

A remembered result is tied to the generation it was computed on: after a
rebuild its chunk keys mean nothing, so it is refused with the fix.
"""

from __future__ import annotations

import json
import re
import sys

from repolens.errors import NotFoundError, UsageError
from repolens.hashing import blake2b
from repolens.record import Record
from repolens.search.filters import Filters
from repolens.search.hits import Hit, SearchOutcome
from repolens.search.query import parse_query, with_completions
from repolens.store.base import IndexReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.settings import Settings

Ranked = tuple[int, float, dict[str, tuple[int, float]], dict[str, float | str]]
# The note of a search whose result could not be stored.
NOT_REMEMBERED = (
    "this search is not remembered (its index cannot be written: a read-only disk or database role, "
    "a full disk): its query_id cannot re-render it"
)
_ID = r"^[0-9a-f]{10}$"  # compiled at first use: a search needs none


class Remembered(Record):
    """A stored search result, as recalled by its id."""

    query_id: str
    query: str
    generation: str
    filters: Filters
    # (cid, score, {leg: (rank, score)}, {factor: value}) in rank order
    ranked: list[Ranked]


def remember(
    reader: IndexReader,
    generation: str,
    query: str,
    filters: Filters,
    ranked: list[Ranked],
    shaped_by: str = "",
) -> tuple[str, bool]:
    """Store a result; return its id and whether it was stored. Best effort:
    an index that cannot be written (a read-only disk) still answers the
    search; the id then cannot re-render it (say so: ``NOT_REMEMBERED``).
    ``shaped_by`` says what else made the result (the settings, ``--explain``):
    the same question ranked otherwise is another result, with an id of its own."""
    digest = blake2b(digest_size=5)
    # Deterministic: the same search on the same index gets the same id.
    digest.update(f"{generation}\0{query}\0{filters}\0{shaped_by}".encode())
    query_id = digest.hexdigest()
    data = {
        "query_id": query_id,
        "query": query,
        "generation": generation,
        "filters": filters._asdict(),
        "ranked": ranked,
    }
    return query_id, reader.remember(query_id, _dumps(data))


def _dumps(data: object) -> str:
    """``data`` as JSON. A result holds ~1,000 floats, and json's ``repr`` of
    each was ~4% of a warm search's instructions: orjson writes the same
    shortest form ~10x faster, but importing it (with uuid, dataclasses and
    inspect) costs a one-shot command more than it saves. So a process that
    has it uses it: a server imports it at start (repolens.server.tools),
    as it does numpy. Both forms read back alike (:func:`recall`)."""
    fast = sys.modules.get("orjson")
    return fast.dumps(data).decode() if fast is not None else json.dumps(data)


def recall(reader: IndexReader, query_id: str, generation: str) -> Remembered:
    if not isinstance(query_id, str) or not re.match(_ID, query_id):
        raise UsageError(f"query_id {query_id!r} is not an id from a search reply (10 hex digits)")
    payload = reader.recall(query_id)
    try:
        data = json.loads(payload) if payload is not None else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise NotFoundError(f"no remembered search {query_id} for this index: run the search again")
    if data.get("generation") != generation:
        raise NotFoundError(
            f"search {query_id} was made on an older index (changed since): run the search again"
        )
    try:
        filters = data.get("filters") or {}
        return Remembered(
            query_id=query_id,
            query=data["query"],
            generation=generation,
            filters=Filters(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in filters.items()}),
            ranked=[
                (int(c), float(s), {k: (int(r), float(v)) for k, (r, v) in legs.items()}, dict(*factors))
                for c, s, legs, *factors in data["ranked"]
            ],
        )
    except (KeyError, TypeError, ValueError) as e:  # damaged, or from another version
        raise NotFoundError(f"remembered search {query_id} cannot be read: run the search again") from e


def generation_key(reader: IndexReader) -> str:
    """What a remembered result is tied to: the generation and its content
    counter (a refresh that changed files makes older results stale)."""
    return f"{reader.generation}.{reader.meta().get('content_version', '0')}"


def remember_outcome(reader: IndexReader, outcome: SearchOutcome, shaped_by: str = "") -> str:
    """Remember ``outcome`` and return its query id; when it cannot be
    stored, the outcome's notes say so (:data:`NOT_REMEMBERED`). ``shaped_by``:
    see :func:`remember`."""
    ranked = [(h.cid, h.score, h.legs, h.factors) for h in outcome.hits]
    query_id, stored = remember(
        reader, generation_key(reader), outcome.query.text, outcome.filters, ranked, shaped_by
    )
    if not stored:
        outcome.notes.append(NOT_REMEMBERED)
    return query_id


def recall_outcome(reader: IndexReader, query_id: str, settings: Settings) -> SearchOutcome:
    """The remembered search ``query_id`` as an outcome, without searching:
    its question, filters and hits (those whose chunks still exist)."""
    remembered = recall(reader, query_id, generation_key(reader))
    stored = reader.chunks(r[0] for r in remembered.ranked)
    hits = [Hit(c, stored[c].chunk, *ranked) for c, *ranked in remembered.ranked if c in stored]
    parsed, _ = with_completions(
        parse_query(remembered.query, weighted=settings.query_weights), reader.terms_with_prefix
    )
    return SearchOutcome(parsed, hits, filters=remembered.filters)
