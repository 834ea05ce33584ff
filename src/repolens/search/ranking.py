"""Rank chunks for a question: parse the query, run the legs, fuse them.

:func:`search` is the one entry the service calls: it binds the legs a
repository's settings ask for (:mod:`repolens.search.legs`), ranks with
:func:`search_index` and fills the outcome's notes (a leg that is configured
but missing or failed). :func:`search_index` is the ranking itself, on a
parsed query with explicit :class:`RankingOptions`:

1. the lexical leg's candidates, the symbol leg as a boost, the dense leg
   by ``fusion``, the best chunks of mentioned files, filters;
2. the path boost, the history leg's votes (:mod:`repolens.search.history_leg`),
   role priors, file evidence;
3. the reranker's rank vote on the head, the spread over files.

The arithmetic of every step but the history vote (added in place, against
the best score before the path boost) is in :mod:`repolens.search.fusion`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from repolens.budget import counted
from repolens.fronts import say
from repolens.record import Record
from repolens.roles import path_role
from repolens.search.filters import Filters, no_indexed_file
from repolens.search.fusion import (
    add_path_boost,
    diversify,
    fuse_boost,
    fuse_dense,
    prior_weights,
    ranked,
    rerank_vote,
    with_file_evidence,
)
from repolens.search.history_leg import history_leg, join_voted
from repolens.search.hits import Hit, SearchOutcome
from repolens.search.legs import (
    FIELD_WEIGHTS,
    FLAT_FIELDS,
    DenseLeg,
    RerankLeg,
    dense_leg,
    dense_scores,
    lexical_accepted,
    lexical_leg,
    mentioned_chunks,
    mentioned_files,
    rerank_leg,
    rerank_scores,
    symbol_leg,
)
from repolens.search.query import ParsedQuery, parse_query, with_completions
from repolens.settings import CHUNKING_SETTINGS, chunking_settings
from repolens.store.base import IndexReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.settings import Settings

__all__ = ["CANDIDATES", "Filters", "Hit", "RankingOptions", "SearchOutcome", "search", "search_index"]

# Candidates ranked per search (at least; four per shown hit when more are shown).
CANDIDATES = 100
# The learned ranking says which features moved a hit for this many of the first hits (--explain).
EXPLAINED = 10


class RankingOptions(Record):
    """How the legs are fused and scaled (see the module docstring); each
    field is the setting of its name (:class:`repolens.settings.Settings`
    says what it does, and holds its one default). No field has a default
    here: every ranking comes from settings (:meth:`from_settings`), so a
    search, focus and a search of several repositories rank alike."""

    symbol_boost: float
    priors: bool
    file_weight: float
    diversity: float
    fusion: str
    dense_weight: float
    dense_fallback: bool
    path_boost: float
    history_weight: float
    field_weights: bool
    ranking: str

    @classmethod
    def from_settings(cls, settings: Settings) -> RankingOptions:
        """The options ``settings`` ask for: each field is the setting of its
        name. The one conversion from settings to a ranking."""
        return cls(**{name: getattr(settings, name) for name in cls._fields})


def search(
    reader: IndexReader,
    root: Path,
    query: str,
    settings: Settings,
    filters: Filters,
    *,
    explain: bool = False,
    limit: int | None = None,
) -> SearchOutcome:
    """The best ``limit`` chunks for ``query`` (default: four per hit
    ``settings.top_k`` asks for, at least :data:`CANDIDATES`), ranked on
    ``reader`` as ``settings`` say (a partial identifier, ``zorb*``,
    completed from the index), with every leg the repository configures
    (dense when the index has vectors, rerank when a cross-encoder is set
    up); a leg that is missing or fails is named in the outcome's notes, and
    the search goes on without it. ``PathError`` when nothing is found
    because nothing is indexed under the path filter. The one ranking of a
    search, of focus and of a search of several repositories."""
    parsed, completed = with_completions(
        parse_query(query, weighted=settings.query_weights), reader.terms_with_prefix
    )
    dense, notes = dense_leg(root, reader, settings, parsed)
    rerank, rerank_notes = rerank_leg(root, parsed)
    outcome = search_index(
        reader,
        parsed,
        limit=limit if limit is not None else max(CANDIDATES, settings.top_k * 4),
        filters=filters,
        options=RankingOptions.from_settings(settings),
        dense=dense,
        rerank=rerank,
        explain=explain,
        root=root,
    )
    if not outcome.hits and filters.subpath and not reader.has_path(filters.subpath):
        raise no_indexed_file(reader, filters.subpath)
    if not outcome.hits and (narrowed := _narrowed_by(filters)):
        # (keywords and min_score say so themselves)
        outcome.notes.append(f"no hit passes {narrowed}: leave them out to see what the question finds")
    said = [reader.staleness(), _chunked_otherwise(reader, settings), _kinds_held(outcome, settings.top_k)]
    if not parsed.terms:
        said.append(NO_WORD)
    outcome.notes[:0] = [*filter(None, said), *completed, *notes, *rerank_notes]
    if rerank is not None and rerank.error:
        outcome.notes.append(f"rerank leg failed, order without it: {rerank.error}")
    return outcome


# The note of a question with no word to search for ("s*", "a").
NO_WORD = (
    "the question holds no word to search for: words of one letter are not indexed, "
    "and a partial identifier (zorb*) needs two letters or more"
)


def _narrowed_by(filters: Filters) -> str:
    """The language, kind and glob filters, as a note names them ("" for none)."""
    named = (
        ("language", filters.languages),
        ("kind", filters.kinds),
        ("include", filters.include),
        ("exclude", filters.exclude),
    )
    said = [f"{what} {', '.join(values)}" for what, values in named if values]
    return "the filters " + "; ".join(said) if said else ""


def _chunked_otherwise(reader: IndexReader, settings: Settings) -> str:
    """A note when the index was chunked with other settings than those in
    force (it is rebuilt by the next ``repolens index``, not by a search)."""
    built = reader.meta().get(CHUNKING_SETTINGS)
    now = chunking_settings(settings)
    if not built or built == now:
        return ""
    return f"the index was chunked with {built}; the settings now say {now}: {say('run index')} to rebuild it"


def _kinds_held(outcome: SearchOutcome, shown: int) -> str:
    """A note when a kind filter took hits of another kind that hold one
    (a class holding the methods asked for: small definitions are chunked
    together), else ""."""
    kinds = outcome.filters.kinds
    others = sorted({h.chunk.kind for h in outcome.hits[:shown] if h.chunk.kind not in kinds})
    if not kinds or not others:
        return ""
    n = sum(1 for h in outcome.hits[:shown] if h.chunk.kind not in kinds)
    verbs = ("is", "holds") if n == 1 else ("are", "hold")
    return (
        f"kind {', '.join(kinds)}: {counted(n, 'hit')} {verbs[0]} of kind {' or '.join(others)} and "
        f"{verbs[1]} one (small definitions are chunked together)"
    )


def search_index(
    reader: IndexReader,
    query: ParsedQuery,
    *,
    options: RankingOptions,
    limit: int = CANDIDATES,
    filters: Filters | None = None,
    dense: DenseLeg | None = None,
    rerank: RerankLeg | None = None,
    features_out: dict[int, Sequence[float]] | None = None,
    explain: bool = False,
    root: Path | None = None,
) -> SearchOutcome:
    """The best ``limit`` chunks for ``query``, each with its per-leg ranks
    and the factors of its score (see the module docstring for the steps).
    ``features_out``, when given, receives every candidate's row of
    :data:`repolens.search.features.FEATURES` (what a ranking is learned from).
    ``explain``: the learned ranking also says which features moved each of
    the first hits (``--explain``; it costs a second walk of the trees).
    ``root``: the work tree the index is of, whose HEAD the history leg
    checks still holds the history read (None: not checked)."""
    filters = filters or Filters()
    fields = FIELD_WEIGHTS if options.field_weights else FLAT_FIELDS
    # Globs and keywords filter after retrieval, so fetch deeper to keep ``limit`` hits.
    depth = limit * 4 if filters.has_globs() or filters.keywords else limit
    if filters.keywords:
        lexical = lexical_accepted(reader, query, fields, limit, filters)
    else:
        lexical = lexical_leg(reader, query, fields, depth, filters.lexical())
    legs: dict[str, dict[int, tuple[int, float]]] = {"lexical": ranked(dict(lexical))}
    scores = dict(lexical)
    # The learned model reads every leg's features, so its legs run whatever
    # the tuned weights say: those weigh only the tuned fusion (one of its inputs).
    every_leg = options.ranking == "learned"
    symbols: dict[int, tuple[float, str]] = {}
    if options.symbol_boost > 0 or every_leg:
        symbols = symbol_leg(reader, query)
        if symbols:
            strength = {cid: st for cid, (st, _) in symbols.items()}
            legs["symbol"] = ranked(strength)
            scores = fuse_boost(lexical, strength, options.symbol_boost)
    if dense is not None and options.dense_weight > 0:
        sims = dense_scores(dense, scores.keys(), depth, options.fusion, options.dense_fallback)
        if sims:
            legs["dense"] = ranked(sims)
            scores = fuse_dense(scores, sims, options.fusion, options.dense_weight)
    mentioned = mentioned_files(reader, query) if options.path_boost > 0 or every_leg else {}
    for cid, score in mentioned_chunks(reader, query, fields, mentioned, filters.lexical()):
        scores.setdefault(cid, score)  # a mentioned file joins the candidates with its best chunks
    stored = reader.chunks(scores)
    notes: list[str] = []
    votes = None
    if options.history_weight > 0 or every_leg:
        votes, notes = history_leg(reader, query.weighted(), root)
        join_voted(reader, votes, query.weighted(), fields, filters.lexical(), scores, stored)
    chunks = {cid: s.chunk for cid, s in stored.items() if filters.accepts(s.chunk)}
    if filters.keywords and not chunks:
        notes.append(f"no match contains {' and '.join(map(repr, filters.keywords))}")
    scores = {cid: sc for cid, sc in scores.items() if cid in chunks}
    top = max(scores.values(), default=1.0)
    if mentioned:
        strengths = {cid: mentioned[c.path] for cid, c in chunks.items() if c.path in mentioned}
        legs["path"] = ranked(strengths)
        add_path_boost(scores, strengths, options.path_boost)
    factors: dict[int, dict[str, float | str]] = {}
    if votes is not None and votes.files:
        voted = {cid: votes.files[c.path] for cid, c in chunks.items() if c.path in votes.files}
        legs["history"] = ranked({cid: v.strength for cid, v in voted.items()})
        said: dict[str, str] = {}  # each voted file's explanation, made once for all its chunks
        for cid, vote in voted.items():
            scores[cid] += options.history_weight * top * vote.strength
            path = chunks[cid].path
            factors[cid] = {"history": said[path] if path in said else said.setdefault(path, vote.explain())}
    for cid, sc in scores.items():
        factors[cid] = {"fused": sc, **factors.get(cid, {})}
    for cid, (_, qualname) in symbols.items():
        if cid in factors:
            factors[cid]["defines"] = qualname
    if options.priors:
        for cid, weight in prior_weights(chunks, list(scores), query).items():
            factors[cid].update(prior=weight, role=path_role(chunks[cid].path))
            scores[cid] *= weight
    if options.file_weight > 0:
        boosted = with_file_evidence(scores, chunks, options.file_weight)
        for cid, sc in boosted.items():
            factors[cid]["file"] = sc - scores[cid]
        scores = boosted
    learned = options.ranking == "learned" and bool(scores)
    if features_out is not None or learned:
        from repolens.search.features import candidate_features

        priors = {cid: float(f.get("prior", 1.0)) for cid, f in factors.items()}
        rows = candidate_features(query, chunks, legs, scores, priors, votes)
        if features_out is not None:
            features_out.update(rows)
        if learned:
            scores = _learned_scores(rows, factors)
    if learned:
        scores = _exact_first(exact_definitions(query, symbols), scores, factors)
    # Equal scores (two chunks alike) in the order of their place in the tree, not
    # of the order the store listed them in: a refreshed index ranks as a fresh build.
    order = sorted(
        scores, key=lambda cid: (-scores[cid], chunks[cid].path, chunks[cid].start_line, chunks[cid].id)
    )
    if rerank is not None and order:
        head = order[: rerank.top_n]
        relevance = rerank_scores(rerank, head, chunks)
        legs["rerank"] = ranked(relevance)
        voted = rerank_vote([(c, scores[c]) for c in order], relevance, rerank.weight, rerank.top_n)
        order, scores = [c for c, _ in voted], dict(voted)
        for cid, vote in scores.items():
            factors[cid]["vote"] = vote
    if options.diversity < 1.0:
        order, nth = diversify(order, scores, chunks, options.diversity)
        for cid, n in nth.items():
            if n > 1:  # the score that decided the order is the one shown
                factors[cid].update(spread=options.diversity ** (n - 1), nth=n)
                scores[cid] *= options.diversity ** (n - 1)
    if learned and explain:
        _explain_learned(order[:EXPLAINED], rows, factors)
    if filters.min_score is not None and order:
        best = scores[order[0]]
        order = [cid for cid in order if scores[cid] >= filters.min_score]
        if not order:
            notes.append(f"every hit scored below min_score {filters.min_score:g} (the best {best:.3g})")
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
    return SearchOutcome(query, hits, notes, filters=filters)


def exact_definitions(query: ParsedQuery, symbols: dict[int, tuple[float, str]]) -> list[int]:
    """For a question that is one bare name (``fieldNamingStrategy``), the
    candidates defining it spelled exactly so: an agent asking a name asks
    for its definition, and one that matches only once case and
    underscores are ignored (the class ``FieldNamingStrategy``, ``Literal``
    for ``_literal``) or a file that uses it often is not it."""
    words = query.text.split()
    if len(words) != 1 or len(query.identifiers) != 1:
        return []
    name = query.identifiers[0]
    if not re.fullmatch(r"[\w$]+", name):  # a dotted name is asked of its qualified name
        return []
    return [cid for cid, (_, qualname) in symbols.items() if re.split(r"::|[.)]", qualname)[-1] == name]


def _exact_first(
    exact: list[int], scores: dict[int, float], factors: dict[int, dict[str, float | str]]
) -> dict[int, float]:
    """The learned scores with the ``exact`` definitions lifted above every
    other candidate, in their own order, the best scoring 1 again."""
    lifted = set(exact) & scores.keys()
    if not lifted:
        return scores
    lift = max(scores.values())
    for cid in lifted:
        factors[cid]["exact"] = 1.0
    scores = {cid: sc + lift if cid in lifted else sc for cid, sc in scores.items()}
    top = max(scores.values())
    return {cid: sc / top for cid, sc in scores.items()}


def _learned_scores(
    rows: dict[int, Sequence[float]], factors: dict[int, dict[str, float | str]]
) -> dict[int, float]:
    """The learned model's score of each candidate, made positive for the
    spread over files (:func:`repolens.search.learned.positive`)."""
    from repolens.search.learned import bundled_ranker, positive

    raw = bundled_ranker().score(rows)
    for cid, value in raw.items():
        factors[cid]["learned"] = value
    return positive(raw)


def _explain_learned(
    cids: list[int], rows: dict[int, Sequence[float]], factors: dict[int, dict[str, float | str]]
) -> None:
    """For ``--explain``: the features that moved each of ``cids`` most."""
    from repolens.search.learned import bundled_ranker

    model = bundled_ranker()
    for cid in cids:
        factors[cid]["moved"] = ", ".join(f"{name} {delta:+.2f}" for name, delta in model.explain(rows[cid]))
