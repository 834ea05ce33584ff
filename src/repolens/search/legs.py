"""The legs of a search: each ranks candidates for a parsed query on its own.

* **lexical**: BM25 over four fields (path, symbol name, signature/doc, body);
  every search runs it, and its candidates are the base of the fusion;
* **symbol**: the definitions of identifiers the query names literally
  (``parse_url``, ``Store.save``); a name defined in many places says little
  and weighs less, a name defined in more than ``MAX_DEFS_PER_NAME`` places
  is ignored;
* **path**: files the query mentions (tracebacks, file names, scopes, see
  :mod:`repolens.search.mentions`), which join with their best chunks;
* **dense** (when the index has vectors): cosine similarity to the query's
  embedding (:func:`dense_leg` binds the store's vectors to a query);
* **rerank** (when a cross-encoder is configured): its scores of the head of
  the ranking (:func:`rerank_leg`).

How the legs are combined is :mod:`repolens.search.fusion`; a leg that is
configured but cannot run says why in a note instead of failing the search.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from repolens.chunking import Chunk
from repolens.errors import EmbedderError, RepolensError
from repolens.fronts import say
from repolens.record import Record
from repolens.search.filters import Filters
from repolens.search.mentions import path_index
from repolens.search.query import ParsedQuery
from repolens.store.base import IndexReader, LexFilters, NameMatch, SymbolFilters, normalize_symbol

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from repolens.models.base import Embedder
    from repolens.settings import Settings
else:
    Protocol = object  # the legs' protocols are for type checkers (see repolens.store.base)

# Per-field weights for BM25. A term in a definition's name or signature says
# more about the chunk than the same term somewhere in its body.
FIELD_WEIGHTS = {"path": 1.0, "name": 2.0, "sig": 1.5, "body": 1.0}
FLAT_FIELDS = {"path": 1.0, "name": 1.0, "sig": 1.0, "body": 1.0}
MAX_DEFS_PER_NAME = 25
# At most this many mentioned files join the candidates, strongest first.
MAX_MENTIONED = 8
# How many of a mentioned file's best chunks join the candidates.
MENTIONED_CHUNKS = 3
# The query text a model reads: the start of a pasted issue carries its gist.
DENSE_QUERY_CHARS = 1200
RERANK_QUERY_CHARS = 2000


# -- lexical ---------------------------------------------------------------------


def lexical_leg(
    reader: IndexReader,
    query: ParsedQuery,
    fields: Mapping[str, float],
    depth: int,
    filters: LexFilters | None,
) -> list[tuple[int, float]]:
    """The top ``depth`` (cid, BM25 score), best first, scores to
    :func:`six_digits`. Equal scores across the cut are settled by the
    chunks' place in the tree (:func:`settle_ties`), not by the order the
    store lists them in."""
    found = reader.lexical(query.weighted(), fields, depth + TIE_SLACK, filters)
    return settle_ties(reader, [(cid, six_digits(score)) for cid, score in found], depth)


# Candidates beyond the cut a lexical search asks for, to see whether equal scores cross it.
TIE_SLACK = 32


def settle_ties(reader: IndexReader, found: list[tuple[int, float]], depth: int) -> list[tuple[int, float]]:
    """The first ``depth`` of ``found`` (best first), where the chunks whose
    score equals the one at the cut are taken by (path, first line, chunk
    id): two chunks alike (the parts of a long definition repeat its header)
    score alike, and which of them a store lists first depends on its
    segments, so an index refreshed many times would keep another one than a
    fresh build of the same files. Only a tie across the cut reads chunks."""
    if len(found) <= depth or found[depth][1] != found[depth - 1][1]:
        return found[:depth]
    edge = found[depth - 1][1]
    above = [hit for hit in found if hit[1] > edge]
    tied = [cid for cid, score in found if score == edge]
    chunks = reader.chunks(tied)
    # A chunk the lexical index holds and the database not (a crash between
    # their commits, before the next run settles them) is no candidate at all.
    tied = [cid for cid in tied if cid in chunks]
    tied.sort(key=lambda cid: (chunks[cid].chunk.path, chunks[cid].chunk.start_line, chunks[cid].chunk.id))
    return above + [(cid, edge) for cid in tied[: depth - len(above)]]


def six_digits(score: float) -> float:
    """``score`` to six significant digits. BM25 summed in another order (by
    a store in 32 bits, another in 64; by an index refreshed many times and a
    fresh build of the same files) differs in the last bits, and two chunks
    alike would change places by that noise; rounded, they tie, and ties are
    ordered by their place in the tree."""
    return float(f"{score:.6g}")


# A keyword filter is checked on the text of the lexical leg's candidates:
# the leg is asked deeper, x4 at a time, until enough of them contain it, it
# has no more, or it was asked for this many.
MAX_KEYWORD_DEPTH = 25_600


def lexical_accepted(
    reader: IndexReader, query: ParsedQuery, fields: Mapping[str, float], wanted: int, filters: Filters
) -> list[tuple[int, float]]:
    """The lexical leg's candidates that ``filters`` accept (their chunks
    read from the store), best first: at least ``wanted`` of them when that
    many are within the leg's best :data:`MAX_KEYWORD_DEPTH`, so that a rare
    keyword still leaves a search its hits."""
    accepted: dict[int, bool] = {}
    depth = wanted * 4
    while True:
        found = lexical_leg(reader, query, fields, depth, filters.lexical())
        new = [cid for cid, _ in found if cid not in accepted]
        stored = reader.chunks(new)
        accepted.update({cid: cid in stored and filters.accepts(stored[cid].chunk) for cid in new})
        kept = [(cid, score) for cid, score in found if accepted[cid]]
        if len(kept) >= wanted or len(found) < depth or depth >= MAX_KEYWORD_DEPTH:
            return kept
        depth = min(depth * 4, MAX_KEYWORD_DEPTH)


# -- symbol ----------------------------------------------------------------------


def _split_name(identifier: str) -> list[str]:
    return [p for p in re.split(r"\.|::|#", identifier) if p]


def symbol_leg(reader: IndexReader, query: ParsedQuery) -> dict[int, tuple[float, str]]:
    """Chunks holding definitions the query names: (strength in (0, 3],
    qualified name of the strongest such definition).

    Strength is ``1/sqrt(definitions of that name)``, x1.5 when the name is
    spelled exactly as in the query (``handle_submit`` over ``HandleSubmit``),
    x2 when a dotted name (``Store.save``) also matches the qualified name.
    Markdown headings are symbols for lookup, but not definitions here.
    """
    wanted: dict[str, list[tuple[str, str]]] = {}
    for ident in query.identifiers:
        parts = _split_name(ident)
        if parts:
            qual = normalize_symbol("".join(parts[-2:])) if len(parts) > 1 else ""
            wanted.setdefault(normalize_symbol(parts[-1]), []).append((parts[-1], qual))
    if not wanted:
        return {}
    rows = reader.symbols(NameMatch(names=tuple(wanted)), SymbolFilters(sections=False), None)
    per_name: dict[str, int] = {}
    for row in rows:
        per_name[row.norm] = per_name.get(row.norm, 0) + 1
    rows = [row for row in rows if per_name[row.norm] <= MAX_DEFS_PER_NAME]
    cids = reader.chunks_at([(row.path, row.start_line) for row in rows])
    strengths: dict[int, tuple[float, str]] = {}
    for row, cid in zip(rows, cids, strict=True):
        norm, name, qualname = row.norm, row.name, row.qualname
        strength = 1.0 / math.sqrt(per_name[norm])
        if any(spelled == name for spelled, _ in wanted[norm]):
            strength *= 1.5
        qual_norm = normalize_symbol(re.sub(r"\W", "", qualname))
        if any(q and qual_norm.endswith(q) for _, q in wanted[norm]):
            strength *= 2.0
        if cid is not None and strength > strengths.get(cid, (0.0, ""))[0]:
            strengths[cid] = (strength, qualname)
    return strengths


# -- path ------------------------------------------------------------------------


def mentioned_files(reader: IndexReader, query: ParsedQuery) -> dict[str, float]:
    """Indexed files the query mentions, with their strength (see
    :mod:`repolens.search.mentions`)."""
    if not query.paths and not query.scopes:
        return {}
    index = path_index(reader.cache_key(), reader.paths)
    return index.match(query.paths, query.scopes)


def mentioned_chunks(
    reader: IndexReader,
    query: ParsedQuery,
    fields: Mapping[str, float],
    mentioned: Mapping[str, float],
    filters: LexFilters,
) -> list[tuple[int, float]]:
    """The best chunks (cid, BM25 score) of the strongest mentioned files,
    so that a mentioned file joins the candidates even when its words are
    common elsewhere; ``filters`` languages and kinds still apply."""
    strongest = sorted(mentioned, key=lambda p: -mentioned[p])[:MAX_MENTIONED]
    if not strongest:
        return []
    best = reader.lexical_in_files(query.weighted(), fields, strongest, MENTIONED_CHUNKS, filters)
    return [(cid, six_digits(score)) for path in strongest for cid, score in best.get(path, ())]


# -- dense -----------------------------------------------------------------------


class DenseLeg(Protocol):
    """The dense leg as a search sees it (the store's vectors bound to a
    reader and a query vector)."""

    def top(self, k: int) -> list[tuple[int, float]]: ...

    def similarities(self, cids: Iterable[int]) -> dict[int, float]: ...


class BoundDense(Record):
    """The dense leg for one query on one generation."""

    reader: IndexReader
    vector: Any

    def top(self, k: int) -> list[tuple[int, float]]:
        return self.reader.dense_top(self.vector, k)

    def similarities(self, cids: Any) -> dict[int, float]:
        return self.reader.dense_similarities(self.vector, cids)


def dense_scores(
    dense: DenseLeg, candidates: Collection[int], depth: int, fusion: str, fallback: bool = False
) -> dict[int, float]:
    """Similarities of the ``candidates`` alone (``fusion`` ``rerank``: no
    new candidates, unless lexical search is weak and ``fallback`` is on:
    :func:`weak_lexical_joiners`), else of the ``depth`` nearest chunks."""
    if fusion != "rerank":
        return dict(dense.top(depth))
    sims = dense.similarities(candidates)
    if fallback:
        sims.update(weak_lexical_joiners(candidates, sims, dense, depth))
    return sims


# Lexical search is weak when it finds fewer candidates than a packet shows,
# or when a chunk it missed is closer in meaning than every chunk it found,
# by CLOSER_BY cosine similarity. MiniLM puts a paraphrase 0.3-0.6 above
# unrelated text; the bands below are a third of that.
FEW_CANDIDATES = 5
CLOSER_BY = 0.1
# With few candidates, the dense matches within this band of the best join
# (not the whole dense list: past the band is noise).
NEAR_BEST = 0.15


def weak_lexical_joiners(
    candidates: Collection[int], sims: Mapping[int, float], dense: DenseLeg, depth: int
) -> dict[int, float]:
    """The dense leg's own matches that join rerank's candidates because
    the words failed: a question that shares no word with the code (``retry
    when a transfer fails`` for ``backoff_schedule``) finds nothing or noise
    lexically. Where lexical search is strong, its candidates include the
    chunks closest in meaning, and nothing joins."""
    top = dense.top(depth)
    if not top:
        return {}
    if len(candidates) < FEW_CANDIDATES:
        floor = max(sim for _, sim in top) - NEAR_BEST
    else:
        floor = max(sims.values(), default=-1.0) + CLOSER_BY
    return {cid: sim for cid, sim in top if cid not in candidates and sim >= floor}


def check_query_embedder(meta: dict[str, str], embedder: Embedder) -> None:
    """Refuse to search vectors with another model than the one that made them."""
    identity = meta.get("embed_identity")
    if identity and identity != embedder.identity:
        raise EmbedderError(
            f"the index was embedded with {identity} but the configured model is {embedder.identity}: "
            f"search with the same embed settings, or {say('run rebuild')}"
        )


def dense_leg(
    root: Path, reader: IndexReader, settings: Settings, query: ParsedQuery
) -> tuple[BoundDense | None, list[str]]:
    """The dense leg for ``query`` (its text is embedded), or None with a
    note saying why it is missing. Silence when dense search is switched
    off by config, and for a question of partial identifiers alone
    (``zorb*``: letters, whose embedding only adds hits unrelated to it)."""
    if not settings.dense or not query.has_words():
        return None, []
    meta = reader.meta()
    if not meta.get("embed_identity"):
        if settings.vectors:
            return None, [f"dense leg missing: this index has no vectors yet; {say('run index')} to embed"]
        return None, []
    from repolens.models import make_embedder  # onnxruntime: only for indexes with vectors
    from repolens.models.embed_config import load_embed_config

    try:
        embedder = make_embedder(load_embed_config(root))
        if embedder is None:
            return None, ["dense leg off: embed.provider is none but the index has vectors"]
        check_query_embedder(meta, embedder)
        query_vector = embedder.embed_query(query.text[:DENSE_QUERY_CHARS])
    except RepolensError as exc:
        return None, [f"dense leg missing: {exc}"]
    done, total = reader.vector_count(), int(meta.get("chunks", "0") or 0)
    notes = []
    if total and done < total:
        notes.append(
            f"dense leg covers {done} of {total} chunks ({100 * done // total}%); "
            f"{say('index')} finishes the embedding"
        )
    return BoundDense(reader, query_vector), notes


# -- rerank ----------------------------------------------------------------------


class RerankLeg(Protocol):
    """A cross-encoder as a search sees it (``rerank.CrossEncoder`` bound
    to a query), with the vote settings."""

    top_n: int
    weight: float

    def scores(self, chunks: list[Chunk]) -> list[float]: ...


class BoundRerank:
    """The reranker leg for one query; a failure while scoring is kept in
    ``error`` and reported, never swallowed. A plain class (as
    :class:`~repolens.search.hits.SearchOutcome`, and for the same reason)."""

    __slots__ = ("encoder", "error", "query", "top_n", "weight")

    def __init__(self, encoder: Any, query: str, top_n: int, weight: float) -> None:
        self.encoder = encoder
        self.query = query
        self.top_n = top_n
        self.weight = weight
        self.error = ""

    def scores(self, chunks: list[Any]) -> list[float]:
        try:
            return [float(s) for s in self.encoder.score(self.query, [f"{c.path}\n{c.text}" for c in chunks])]
        except RepolensError as exc:
            self.error = str(exc)
            return [0.0] * len(chunks)


def rerank_leg(root: Path, query: ParsedQuery) -> tuple[BoundRerank | None, list[str]]:
    """The cross-encoder leg for ``query`` (it reads the text) when one is
    configured, or None with a note saying why it is missing (silence only
    when none is configured)."""
    from repolens.settings import section_given

    try:
        if not section_given(root, "rerank"):  # the default, no reranker: no need to load its settings
            return None, []
        from repolens.models.rerank_config import load_rerank_config

        config = load_rerank_config(root)
        if config.provider == "none":
            return None, []
        from repolens.models.rerank import make_reranker  # numpy, onnxruntime: only when configured

        encoder = make_reranker(config)
    except RepolensError as exc:
        return None, [f"rerank leg missing: {exc}"]
    if encoder is None:
        return None, []
    return BoundRerank(encoder, query.text[:RERANK_QUERY_CHARS], config.top_n, config.weight), []


def rerank_scores(rerank: RerankLeg, head: list[int], chunks: Mapping[int, Chunk]) -> dict[int, float]:
    """The cross-encoder's relevance of each chunk of ``head``."""
    return dict(zip(head, rerank.scores([chunks[c] for c in head]), strict=True))
