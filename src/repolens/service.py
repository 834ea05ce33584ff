"""The operations the adapters expose, as plain functions.

CLI, MCP server and HTTP app all call these and only these, so a tool and its
subcommand cannot drift apart. Each function validates its arguments (raising
``UsageError`` with the fix), resolves the root and index folder, and returns
a value whose ``render()``/``text`` is what the user sees.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.chunk import make_chunker
from repolens.errors import EmbedderError, RepolensError, UsageError
from repolens.index.build import IndexReport, ProgressFn, build_index
from repolens.reply.chunk import ChunkView
from repolens.reply.chunk import get_chunk as _get_chunk
from repolens.reply.files import FileEntry, file_overview, ranked_files, render_files
from repolens.reply.focus import FocusResult, focused_context
from repolens.reply.packet import Packet, PacketOptions, render_packet
from repolens.reply.snippet import Snippet
from repolens.reply.snippet import read_snippet as _read_snippet
from repolens.search.freshness import freshen
from repolens.search.query import parse_query
from repolens.search.remembered import NOT_REMEMBERED, recall, remember
from repolens.search.retrieve import CANDIDATES, Filters, Hit, RankingOptions, search_index
from repolens.settings import Settings, load_settings
from repolens.store import open_store, resolve_root
from repolens.store.base import IndexReader
from repolens.store.handles import readers
from repolens.validate import (
    MAX_TOP_K,
    check_budget,
    check_globs,
    check_int,
    check_kind,
    check_language,
    check_query,
    check_subpath,
)

if TYPE_CHECKING:
    from repolens.models.base import Embedder
    from repolens.ops.status import IndexStatus
    from repolens.reply.history import HistoryReply

from repolens.search.symbols import SymbolMatches, find_symbols

# A JSON reply echoes the start of the question, not a pasted issue in full.
QUERY_ECHO_CHARS = 200
# A search that finds no index builds one; if a watcher is already building
# it, wait for that instead of failing.
AUTO_INDEX_WAIT_S = 120.0


def index_repo(
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_file_bytes: int | None = None,
    vectors: bool | None = None,
    rebuild: bool = False,
    progress: ProgressFn | None = None,
    vector_progress: ProgressFn | None = None,
    lock_wait: float = 0.0,
) -> IndexReport:
    """Build the index of ``root``, or bring it up to date (only what changed
    is read); ``rebuild`` forces a fresh generation. ``lock_wait`` seconds
    are spent waiting for another writer (a server's watcher) to finish."""
    root_path = resolve_root(root)
    settings = load_settings(root_path, {"max_file_bytes": max_file_bytes, "vectors": vectors})
    return build_index(
        root_path,
        index_dir=index_dir,
        settings=settings,
        rebuild=rebuild,
        progress=progress,
        vector_progress=vector_progress,
        lock_wait=lock_wait,
    )


MODES = ("packet", "files", "json")


@dataclass
class SearchReply:
    """One search's answer. ``to_json`` is the JSON form (mode=json) of the
    same packet the text form shows: the same hits with the same text each,
    the same omitted hits and notes. ``max_chars`` budgets that evidence; the
    JSON around it (keys, locations, the file overview and the question,
    echoed as its first ``QUERY_ECHO_CHARS`` characters plus its length in
    ``query_chars``) is not counted."""

    query: str
    query_id: str
    mode: str
    text: str  # exactly what the user or agent reads, for every mode
    packet: Packet | None = None
    files: list[FileEntry] | None = None
    indexed: IndexReport | None = None  # set when this call had to build the index first
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "query": self.query[:QUERY_ECHO_CHARS],
            "query_chars": len(self.query),
            "query_id": self.query_id,
        }
        if self.packet is not None:
            data.update(self.packet.to_json())
        if self.files is not None:
            data["files"] = [f.to_json() for f in self.files]
        data["notes"] = list(self.notes)
        return data


def make_filters(
    path: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
) -> Filters:
    """Search filters from call arguments; ``UsageError`` for a path outside the
    repository and for a language or kind that names nothing (aliases such as
    ``py`` and ``func`` are accepted)."""
    subpath, language, kind = check_subpath(path), check_language(language), check_kind(kind)
    return Filters(
        subpath=subpath,
        languages=(language,) if language else (),
        kinds=(kind,) if kind else (),
        include=check_globs("include", include),
        exclude=check_globs("exclude", exclude),
    )


def ranking_options(settings: Settings) -> RankingOptions:
    return RankingOptions(
        symbol_boost=settings.symbol_boost,
        priors=settings.priors,
        file_weight=settings.file_weight,
        diversity=settings.diversity,
        fusion=settings.fusion,
        dense_weight=settings.dense_weight,
        path_boost=settings.path_boost,
        history_weight=settings.history_weight,
        field_weights=settings.field_weights,
    )


@dataclass
class _BoundDense:
    """The dense leg for one query on one generation (``retrieve.DenseLeg``)."""

    reader: IndexReader
    vector: Any

    def top(self, k: int) -> list[tuple[int, float]]:
        return self.reader.dense_top(self.vector, k)

    def similarities(self, cids: Any) -> dict[int, float]:
        return self.reader.dense_similarities(self.vector, cids)


@dataclass
class _BoundRerank:
    """The reranker leg for one query (``retrieve.RerankLeg``); a failure
    while scoring is kept in ``error`` and reported, never swallowed."""

    encoder: Any
    query: str
    top_n: int
    weight: float
    error: str = ""

    def scores(self, chunks: list[Any]) -> list[float]:
        try:
            return [float(s) for s in self.encoder.score(self.query, [f"{c.path}\n{c.text}" for c in chunks])]
        except RepolensError as exc:
            self.error = str(exc)
            return [0.0] * len(chunks)


def rerank_leg(root: Path, query: str) -> tuple[_BoundRerank | None, list[str]]:
    """The cross-encoder leg when one is configured, or None with a note
    saying why it is missing (silence only when none is configured)."""
    from repolens.models.rerank import make_reranker
    from repolens.settings import load_rerank_config

    try:
        config = load_rerank_config(root)
        if config.provider == "none":
            return None, []
        encoder = make_reranker(config)
    except RepolensError as exc:
        return None, [f"rerank leg missing: {exc}"]
    if encoder is None:
        return None, []
    return _BoundRerank(encoder, query[:2000], config.top_n, config.weight), []


def check_query_embedder(meta: dict[str, str], embedder: Embedder) -> None:
    """Refuse to search vectors with another model than the one that made them."""
    identity = meta.get("embed_identity")
    if identity and identity != embedder.identity:
        raise EmbedderError(
            f"the index was embedded with {identity} but the configured model is {embedder.identity}: "
            "search with the same embed settings, or re-run `repolens index --rebuild`"
        )


def dense_leg(
    root: Path, reader: IndexReader, settings: Settings, query: str
) -> tuple[_BoundDense | None, list[str]]:
    """The dense leg for ``query``, or None with a note saying why it is
    missing. Silence only when dense search is switched off by config."""
    if not settings.dense:
        return None, []
    meta = reader.meta()
    if not meta.get("embed_identity"):
        if settings.vectors:
            return None, ["dense leg missing: this index has no vectors yet; run `repolens index` to embed"]
        return None, []
    from repolens.models import make_embedder  # onnxruntime: only for indexes with vectors
    from repolens.settings import load_embed_config

    try:
        embedder = make_embedder(load_embed_config(root))
        if embedder is None:
            return None, ["dense leg off: embed.provider is none but the index has vectors"]
        check_query_embedder(meta, embedder)
        query_vector = embedder.embed_query(query[:1200])
    except RepolensError as exc:
        return None, [f"dense leg missing: {exc}"]
    done, total = reader.vector_count(), int(meta.get("chunks", "0") or 0)
    notes = []
    if total and done < total:
        notes.append(
            f"dense leg covers {done} of {total} chunks ({100 * done // total}%); "
            "`repolens index` finishes the embedding"
        )
    return _BoundDense(reader, query_vector), notes


def search_code(
    query: str | None,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    top_k: int | None = None,
    max_chars: int | None = None,
    path: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    mode: str = "packet",
    query_id: str | None = None,
    explain: bool = False,
    auto_index: bool = True,
    progress: ProgressFn | None = None,
) -> SearchReply:
    """Answer ``query`` (or re-render the remembered ``query_id``) in ``mode``.

    Modes: ``packet`` (evidence packet), ``files`` (ranked file overview),
    ``json`` (hits, omitted hits and files for programs). Indexes first if
    the repository has no index and ``auto_index`` is set.
    """
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if query_id is None:
        check_query(query)
        filters = make_filters(path, language, kind, include, exclude)  # before any indexing
    else:
        given = {"query": query, "path": path, "language": language, "kind": kind}
        _check_rerender({**given, "include": include, "exclude": exclude})
    if top_k is not None:
        check_int("top_k", top_k, 1, MAX_TOP_K)
    if max_chars is not None:
        check_budget(max_chars)
    store = open_store(root, index_dir)
    settings: Settings = load_settings(store.root, {"top_k": top_k, "max_chars": max_chars})
    indexed = None
    if store.current() is None:
        if not auto_index or query_id is not None:
            raise store.missing()
        indexed = build_index(
            store.root,
            store=store,
            settings=settings,
            progress=progress,
            lock_wait=AUTO_INDEX_WAIT_S,
        )
    reader = readers.get(store)
    # Remembered results are tied to the index content they were ranked on.
    generation = f"{reader.generation}.{reader.meta().get('content_version', '0')}"

    if query_id is not None:
        remembered = recall(reader, query_id, generation)
        query, filters = remembered.query, remembered.filters
        stored = reader.chunks(r[0] for r in remembered.ranked)
        hits = [Hit(c, stored[c].chunk, *ranked) for c, *ranked in remembered.ranked if c in stored]
        parsed = parse_query(query, weighted=settings.query_weights)
        notes: list[str] = []
    else:
        assert query is not None
        parsed = parse_query(query, weighted=settings.query_weights)
        dense, notes = dense_leg(store.root, reader, settings, query)
        rerank, rerank_notes = rerank_leg(store.root, query)
        outcome = search_index(
            reader,
            parsed,
            limit=max(CANDIDATES, settings.top_k * 4),
            filters=filters,
            options=ranking_options(settings),
            dense=dense,
            rerank=rerank,
        )
        hits = outcome.hits
        notes = [*notes, *rerank_notes, *outcome.notes]
        if rerank is not None and rerank.error:
            notes.append(f"rerank leg failed, order without it: {rerank.error}")

        query_id, stored = remember(
            reader, generation, query, filters, [(h.cid, h.score, h.legs, h.factors) for h in hits]
        )
        if not stored:
            notes.append(NOT_REMEMBERED)
    # Cited lines must hold: files changed since indexing are re-chunked now.
    hits, stale_files = freshen(store.root, reader, hits, make_chunker(settings), first=settings.top_k * 3)
    if stale_files:
        notes.append(
            f"{stale_files} cited file{'s' if stale_files > 1 else ''} changed since indexing; "
            "`repolens index` refreshes the index"
        )
    footer = f"query_id {query_id}"

    reply = SearchReply(
        query=query, query_id=query_id, mode=mode, text="", indexed=indexed, notes=tuple(notes)
    )
    overview_size = max(settings.top_k, 10)
    if mode == "files":
        reply.files = file_overview(hits, parsed, limit=overview_size)
        reply.text = render_files(reply.files, settings.max_chars, footer)
        return reply
    opts = PacketOptions(
        top_k=settings.top_k,
        max_chars=settings.max_chars - len(footer) - 2,
        hit_max_chars=min(settings.hit_max_chars, settings.max_chars),
        context_lines=settings.context_lines,
        fair_share=settings.fair_share,
        explain=explain,
        notes=notes,
        cite_files=settings.cite_files,
        files=functools.partial(ranked_files, hits, parsed),
    )
    reply.packet = render_packet(query, hits, dict(parsed.weighted()), opts)
    if mode == "json":
        reply.files = file_overview(hits, parsed, limit=overview_size)
        reply.text = json.dumps(reply.to_json(), ensure_ascii=False)
    else:
        reply.text = f"{reply.packet.text}\n\n{footer}"
    return reply


def _check_rerender(given: dict[str, object]) -> None:
    """A ``query_id`` re-renders a remembered search with its own question and
    filters: refuse any of those passed with it, rather than ignore them."""
    extra = [name for name, value in given.items() if value]
    if extra:
        named = ", ".join("{" + name + "}" for name in extra)
        raise UsageError(
            "a remembered search is shown with its own question and filters",
            fix=f"pass {{query_id}} alone (without {named}), or leave {{query_id}} out to search anew",
        )


def open_index(
    root: str | Path | None,
    index_dir: str | Path | None = None,
    *,
    auto_index: bool = True,
    progress: ProgressFn | None = None,
) -> tuple[IndexReader, IndexReport | None]:
    """A reader of the current index of ``root`` (built first when missing and ``auto_index``)."""
    store = open_store(root, index_dir)
    indexed = None
    if store.current() is None:
        if not auto_index:
            raise store.missing()
        indexed = build_index(store.root, store=store, progress=progress, lock_wait=AUTO_INDEX_WAIT_S)
    return readers.get(store), indexed


def index_status(root: str | Path | None = None, *, index_dir: str | Path | None = None) -> IndexStatus:
    """What the index holds, and how many files changed on disk since."""
    from repolens.ops.status import index_status as _status

    store = open_store(root, index_dir)
    return _status(store, readers.get(store))


def find_symbol(
    name: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    kind: str | None = None,
    path: str | None = None,
    language: str | None = None,
    limit: int = 20,
    max_chars: int = 4000,
) -> SymbolMatches:
    reader, _ = open_index(root, index_dir)
    return find_symbols(
        reader, name, kind=kind, path=path, language=language, limit=limit, max_chars=max_chars
    )


def focus(
    query: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    paths: Sequence[str] = (),
    max_files: int = 3,
    blocks_per_file: int = 3,
    max_blocks: int = 6,
    max_chars: int = 8000,
) -> FocusResult:
    check_query(query)
    reader, _ = open_index(root, index_dir)
    return focused_context(
        reader,
        query,
        paths=paths,
        max_files=max_files,
        blocks_per_file=blocks_per_file,
        max_blocks=max_blocks,
        max_chars=max_chars,
    )


def get_chunk(
    chunk_id: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_chars: int = 8000,
) -> ChunkView:
    reader, _ = open_index(root, index_dir, auto_index=False)
    return _get_chunk(reader, chunk_id, max_chars=max_chars)


def read_snippet(root: str | Path | None, path: str, start: int, end: int) -> Snippet:
    return _read_snippet(resolve_root(root), path, start, end)


def search_history(
    query: str | None = None,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    path: str | None = None,
    top_k: int = 10,
    max_chars: int = 6000,
) -> HistoryReply:
    """The commits most relevant to ``query``, to the file ``path``, or to
    both (see :mod:`repolens.reply.history`)."""
    from repolens.reply.history import history_reply

    if query is None and path is None:
        raise UsageError("pass a question, a file path, or both to search the history")
    if query is not None:
        check_query(query)
    file = check_subpath(path)
    if path is not None and not file:
        raise UsageError(f"path {path!r} must be a file inside the repository")
    check_int("top_k", top_k, 1, MAX_TOP_K)
    check_budget(max_chars)
    reader, _ = open_index(root, index_dir)
    return history_reply(reader, resolve_root(root), query, path=file, top_k=top_k, max_chars=max_chars)
