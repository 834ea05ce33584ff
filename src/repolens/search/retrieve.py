"""Ranked chunks for a parsed query: six legs, fused into one list of :class:`Hit`.

Each leg produces ranked candidates (a hit's ``legs`` keeps its rank and
score in each):

* **lexical**: BM25 over four fields (path, symbol name, signature/doc, body);
  every search runs it, and its candidates are the base of the fusion;
* **symbol**: the definitions of identifiers the query names literally
  (``parse_url``, ``Store.save``); a name defined in many places says little
  and weighs less, a name defined in more than ``MAX_DEFS_PER_NAME`` places
  is ignored. Fused as a boost: a definition gains ``symbol_boost *
  top_bm25 * strength``, so a one-identifier query puts its definition first
  while chunks that only mention the name keep their order;
* **dense** (when the index has vectors): cosine similarity to the query's
  embedding, fused by ``fusion``: ``rerank`` re-scores the candidates,
  ``boost`` also adds dense-only matches, ``rrf`` is reciprocal rank fusion;
* **path**: files the query mentions (tracebacks, file names, scopes, see
  :mod:`repolens.search.mentions`) join with their best chunks and gain
  ``path_boost * top * strength``;
* **history** (``history_weight > 0``): files that past commits like the
  question touched (:mod:`repolens.search.history_leg`) gain
  ``history_weight * top * strength``; the strongest files only the history
  suggests join with their best chunk;
* **rerank** (when a cross-encoder is configured): its order of the head
  joins as a weighted rank vote.

Between the legs: role priors (:mod:`repolens.search.priors`), file
evidence (a file matching in several places), and after them the spread
over files (``diversity``).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from pathspec import GitIgnoreSpec

from repolens.chunk import Chunk
from repolens.roles import path_role
from repolens.search.mentions import path_index
from repolens.search.priors import role_weight, wanted_roles
from repolens.search.query import ParsedQuery
from repolens.store.base import IndexReader, LexFilters, NameMatch, SymbolFilters, normalize_symbol

# Per-field weights for BM25. A term in a definition's name or signature says
# more about the chunk than the same term somewhere in its body.
FIELD_WEIGHTS = {"path": 1.0, "name": 2.0, "sig": 1.5, "body": 1.0}
FLAT_FIELDS = {"path": 1.0, "name": 1.0, "sig": 1.0, "body": 1.0}
CANDIDATES = 100
MAX_DEFS_PER_NAME = 25


@dataclass(frozen=True, slots=True)
class Hit:
    cid: int
    chunk: Chunk
    score: float
    # Per leg: (rank starting at 1, the leg's own score); for --explain.
    legs: dict[str, tuple[int, float]] = field(default_factory=dict)
    # How the final score came about: fused legs, role prior, file evidence.
    factors: dict[str, float | str] = field(default_factory=dict)
    # Set when the cited file changed since indexing (see repolens.search.freshness).
    stale: str = ""

    def explain(self) -> str:
        """One line: each leg's rank and score, then every step from the fused
        score to ``score`` (the one that decided the order), in the order
        applied: role prior, file evidence, the reranker's vote, the spread
        over files."""
        legs = ", ".join(f"{name} #{rank} {score:.3g}" for name, (rank, score) in self.legs.items())
        f = self.factors
        steps = [f"fused {f.get('fused', self.score):.3g}"]
        if "prior" in f:
            steps.append(f"x prior {f['prior']:.2f} ({f.get('role', '')})")
        if f.get("file"):
            steps.append(f"+ file {f['file']:.3g}")
        if "vote" in f:
            steps.append(f"-> rerank vote {f['vote']:.3g}")
        if "spread" in f:
            steps.append(f"x spread {f['spread']:.2f} ({_ordinal(int(f.get('nth', 0)))} in its file)")
        line = f"explain: {legs or 'no leg'}; {' '.join(steps)} = {self.score:.3g}"
        return f"{line}; history: {f['history']}" if f.get("history") else line

    @property
    def relevance(self) -> float:
        """The score before the spread over files lowered it: what the chunk
        is worth on its own (a file overview sums these per file)."""
        return self.score / float(self.factors.get("spread", 1.0))


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True, slots=True)
class Filters:
    """Every search filter. ``subpath``, languages and kinds run inside the
    lexical query; globs are matched on paths afterwards (gitignore syntax)."""

    subpath: str | None = None
    languages: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def lexical(self) -> LexFilters:
        return LexFilters(self.subpath, self.languages, self.kinds)

    def has_globs(self) -> bool:
        return bool(self.include or self.exclude)

    def accepts(self, chunk: Chunk) -> bool:
        if self.subpath and not (chunk.path == self.subpath or chunk.path.startswith(self.subpath + "/")):
            return False
        if self.languages and chunk.language not in self.languages:
            return False
        if self.kinds and chunk.kind not in self.kinds and not set(chunk.kinds) & set(self.kinds):
            return False
        if self.include and not _spec(self.include).match_file(chunk.path):
            return False
        return not (self.exclude and _spec(self.exclude).match_file(chunk.path))


_SPECS: dict[tuple[str, ...], GitIgnoreSpec] = {}


def _spec(globs: tuple[str, ...]) -> GitIgnoreSpec:
    """Compiled glob sets; a pure cache keyed by the patterns themselves."""
    spec = _SPECS.get(globs)
    if spec is None:
        if len(_SPECS) > 256:
            _SPECS.clear()
        spec = _SPECS[globs] = GitIgnoreSpec.from_lines(globs)
    return spec


@dataclass
class SearchOutcome:
    query: ParsedQuery
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RankingOptions:
    symbol_boost: float = 1.0
    priors: bool = True  # scale by the file's role (source over tests/docs)
    file_weight: float = 0.0  # add this share of the file's other chunks' scores
    diversity: float = 1.0  # multiply the n-th chunk of one file by diversity**n
    fusion: str = "boost"  # how the dense leg joins: boost, rrf or rerank
    dense_weight: float = 0.5
    path_boost: float = 0.0  # weight of files the query mentions (tracebacks, names, scopes)
    history_weight: float = 0.0  # weight of files past commits like the query touched
    field_weights: bool = True  # a match in a name or signature counts more than in a body


class RerankLeg(Protocol):
    """A cross-encoder as retrieval sees it (``rerank.CrossEncoder`` bound
    to a query), with the vote settings."""

    top_n: int
    weight: float

    def scores(self, chunks: list[Chunk]) -> list[float]: ...


class DenseLeg(Protocol):
    """The dense leg as retrieval sees it (the store's vectors bound to a
    reader and a query vector)."""

    def top(self, k: int) -> list[tuple[int, float]]: ...

    def similarities(self, cids: Iterable[int]) -> dict[int, float]: ...


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
    strengths: dict[int, tuple[float, str]] = {}
    for row in rows:
        norm, name, qualname = row.norm, row.name, row.qualname
        n = per_name[norm]
        if n > MAX_DEFS_PER_NAME:
            continue
        strength = 1.0 / math.sqrt(n)
        if any(spelled == name for spelled, _ in wanted[norm]):
            strength *= 1.5
        qual_norm = normalize_symbol(re.sub(r"\W", "", qualname))
        if any(q and qual_norm.endswith(q) for _, q in wanted[norm]):
            strength *= 2.0
        cid = reader.chunk_at(row.path, row.start_line)
        if cid is not None and strength > strengths.get(cid, (0.0, ""))[0]:
            strengths[cid] = (strength, qualname)
    return strengths


def _ranked(scores: dict[int, float]) -> dict[int, tuple[int, float]]:
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    return {cid: (i + 1, s) for i, (cid, s) in enumerate(order)}


def fuse_boost(
    lexical: list[tuple[int, float]], symbols: dict[int, float], weight: float
) -> dict[int, float]:
    """BM25 score plus ``weight * top_bm25 * strength`` for symbol hits."""
    fused = dict(lexical)
    top = lexical[0][1] if lexical else 1.0
    for cid, strength in symbols.items():
        fused[cid] = fused.get(cid, 0.0) + weight * top * strength
    return fused


def search_index(
    reader: IndexReader,
    query: ParsedQuery,
    *,
    limit: int = CANDIDATES,
    filters: Filters | None = None,
    options: RankingOptions | None = None,
    dense: DenseLeg | None = None,
    rerank: RerankLeg | None = None,
) -> SearchOutcome:

    filters = filters or Filters()
    options = options or RankingOptions()
    fields = FIELD_WEIGHTS if options.field_weights else FLAT_FIELDS
    # Globs filter after retrieval, so fetch deeper to keep ``limit`` hits.
    depth = limit * 4 if filters.has_globs() else limit
    lexical = reader.lexical(query.weighted(), fields, depth, filters.lexical())
    legs: dict[str, dict[int, tuple[int, float]]] = {"lexical": _ranked(dict(lexical))}
    scores = dict(lexical)
    symbols: dict[int, tuple[float, str]] = {}
    if options.symbol_boost > 0:
        symbols = symbol_leg(reader, query)
        if symbols:
            strength = {cid: st for cid, (st, _) in symbols.items()}
            legs["symbol"] = _ranked(strength)
            scores = fuse_boost(lexical, strength, options.symbol_boost)
    if dense is not None and options.dense_weight > 0:
        scores = _fuse_dense(scores, dense, depth, options, legs)
    mentioned = _mentioned_files(reader, query) if options.path_boost > 0 else {}
    for path in sorted(mentioned, key=lambda p: -mentioned[p])[:MAX_MENTIONED]:
        # a mentioned file joins the candidates with its best chunks
        in_file = LexFilters(path, filters.languages, filters.kinds)
        for cid, score in reader.lexical(query.weighted(), fields, 3, in_file):
            scores.setdefault(cid, score)
    stored = reader.chunks(scores)
    notes: list[str] = []
    votes = None
    if options.history_weight > 0:
        from repolens.search.history_leg import history_leg, join_voted

        votes, notes = history_leg(reader, query.weighted())
        join_voted(reader, votes, query.weighted(), fields, filters.lexical(), scores, stored)
    chunks = {cid: s.chunk for cid, s in stored.items() if filters.accepts(s.chunk)}
    scores = {cid: sc for cid, sc in scores.items() if cid in chunks}
    top = max(scores.values(), default=1.0)
    if mentioned:
        strengths = {cid: mentioned[c.path] for cid, c in chunks.items() if c.path in mentioned}
        legs["path"] = _ranked(strengths)
        for cid, strength in strengths.items():
            scores[cid] += options.path_boost * top * strength
    factors: dict[int, dict[str, float | str]] = {}
    if votes is not None and votes.files:
        voted = {cid: votes.files[c.path] for cid, c in chunks.items() if c.path in votes.files}
        legs["history"] = _ranked({cid: v.strength for cid, v in voted.items()})
        for cid, vote in voted.items():
            scores[cid] += options.history_weight * top * vote.strength
            factors[cid] = {"history": vote.explain()}
    for cid, sc in scores.items():
        factors[cid] = {"fused": sc, **factors.get(cid, {})}
    for cid, (_, qualname) in symbols.items():
        if cid in factors:
            factors[cid]["defines"] = qualname
    if options.priors:
        wanted = wanted_roles(query)
        for cid in scores:
            weight = role_weight(chunks[cid].path, wanted)
            factors[cid].update(prior=weight, role=path_role(chunks[cid].path))
            scores[cid] *= weight
    if options.file_weight > 0:
        boosted = _with_file_evidence(scores, chunks, options.file_weight)
        for cid, sc in boosted.items():
            factors[cid]["file"] = sc - scores[cid]
        scores = boosted
    order = sorted(scores, key=lambda cid: -scores[cid])
    if rerank is not None and order:
        order, scores = _rerank(order, scores, chunks, rerank, legs)
        for cid, vote in scores.items():
            factors[cid]["vote"] = vote
    if options.diversity < 1.0:
        order, nth = _diversify(order, scores, chunks, options.diversity)
        for cid, n in nth.items():
            if n > 1:  # the score that decided the order is the one shown
                factors[cid].update(spread=options.diversity ** (n - 1), nth=n)
                scores[cid] *= options.diversity ** (n - 1)
    hits = [
        Hit(
            cid,
            chunks[cid],
            scores[cid],
            {name: leg[cid] for name, leg in legs.items() if cid in leg},
            factors[cid],
        )
        for cid in order[:limit]
    ]
    return SearchOutcome(query, hits, notes)


RRF_K = 60
MAX_MENTIONED = 8


def _mentioned_files(reader: IndexReader, query: ParsedQuery) -> dict[str, float]:
    if not query.paths and not query.scopes:
        return {}
    index = path_index(reader.cache_key(), reader.paths)
    return index.match(query.paths, query.scopes)


def _fuse_dense(
    scores: dict[int, float],
    dense: DenseLeg,
    depth: int,
    options: RankingOptions,
    legs: dict[str, dict[int, tuple[int, float]]],
) -> dict[int, float]:
    """Join the dense leg to the lexical(+symbol) scores.

    ``boost``: each chunk gains ``weight * top * d``, where ``d`` is its
    similarity rescaled to [0, 1] over the dense top list (so the best dense
    match gains ``weight`` times the best lexical score); dense-only matches
    join the candidates. ``rerank``: the same, but only lexical candidates
    are scored (no new candidates). ``rrf``: weighted reciprocal rank fusion
    of the two ranked lists.
    """
    sims = dense.similarities(scores) if options.fusion == "rerank" else dict(dense.top(depth))
    if not sims:
        return scores
    legs["dense"] = _ranked(sims)
    if options.fusion == "rrf":
        lex_rank = _ranked(scores)
        fused: dict[int, float] = {}
        for cid, (rank, _) in lex_rank.items():
            fused[cid] = 1.0 / (RRF_K + rank)
        for cid, (rank, _) in legs["dense"].items():
            fused[cid] = fused.get(cid, 0.0) + options.dense_weight / (RRF_K + rank)
        return fused
    lo, hi = min(sims.values()), max(sims.values())
    span = (hi - lo) or 1.0
    top = max(scores.values(), default=1.0)
    fused = dict(scores)
    for cid, sim in sims.items():
        fused[cid] = fused.get(cid, 0.0) + options.dense_weight * top * (sim - lo) / span
    return fused


def _rerank(
    order: list[int],
    scores: dict[int, float],
    chunks: dict[int, Chunk],
    rerank: RerankLeg,
    legs: dict[str, dict[int, tuple[int, float]]],
) -> tuple[list[int], dict[int, float]]:
    """Re-order the head of the ranking by a cross-encoder, as a weighted
    rank vote (``rerank.rerank_vote``); the tail keeps its order below."""
    from repolens.models.rerank import rerank_vote

    head = order[: rerank.top_n]
    relevance = dict(zip(head, rerank.scores([chunks[c] for c in head]), strict=True))
    legs["rerank"] = _ranked(relevance)
    voted = rerank_vote([(c, scores[c]) for c in order], relevance, rerank.weight, rerank.top_n)
    return [c for c, _ in voted], dict(voted)


def _with_file_evidence(
    scores: dict[int, float], chunks: dict[int, Chunk], weight: float
) -> dict[int, float]:
    """Each chunk gains ``weight`` x the decayed sum of its file's other
    chunks: a file that matches in several places is likelier the answer."""
    by_file: dict[str, list[float]] = {}
    for cid, sc in scores.items():
        by_file.setdefault(chunks[cid].path, []).append(sc)
    totals = {
        path: sum(v * 0.5**k for k, v in enumerate(sorted(vals, reverse=True)))
        for path, vals in by_file.items()
    }
    return {cid: sc + weight * (totals[chunks[cid].path] - sc) for cid, sc in scores.items()}


def _diversify(
    order: list[int], scores: dict[int, float], chunks: dict[int, Chunk], factor: float
) -> tuple[list[int], dict[int, int]]:
    """Greedy re-ranking: each further chunk of a file already chosen counts
    ``factor`` times less, so a reply spreads over files. Returns the new
    order and, per chunk, its place among its file's chunks (1 for the
    first): the n-th counted ``scores * factor**(n-1)`` when it was chosen,
    and those scores descend along the new order. A lazy heap: an entry
    whose file gained a chunk since it was pushed is pushed again."""
    seen: dict[str, int] = {}
    nth: dict[int, int] = {}
    heap = [(-scores[cid], i, cid, 0) for i, cid in enumerate(order)]
    heapq.heapify(heap)
    out: list[int] = []
    while heap:
        _neg, i, cid, count = heapq.heappop(heap)
        path = chunks[cid].path
        now = seen.get(path, 0)
        if now != count:
            heapq.heappush(heap, (-scores[cid] * factor**now, i, cid, now))
            continue
        out.append(cid)
        seen[path] = nth[cid] = now + 1
    return out, nth
