"""The operations the adapters expose, as plain functions.

CLI, MCP server and HTTP app all call these and only these, so a tool and its
subcommand cannot drift apart. Each function validates its arguments (raising
``UsageError`` with the fix), resolves the root and index folder, and returns
a value whose ``render()``/``text`` is what the user sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.errors import UsageError
from repolens.reply.chunk import ChunkView
from repolens.reply.chunk import get_chunk as _get_chunk
from repolens.reply.focus import FocusResult, focused_context
from repolens.reply.modes import MODES, SearchReply, render_search
from repolens.reply.snippet import Snippet
from repolens.reply.snippet import read_snippet as _read_snippet
from repolens.search import search
from repolens.search.filters import make_filters
from repolens.search.freshness import freshen_outcome
from repolens.search.remembered import recall_outcome, remember_outcome
from repolens.search.symbols import SymbolMatches, find_symbols
from repolens.settings import Settings, load_settings
from repolens.store import open_store, resolve_root
from repolens.store.base import IndexReader, Store
from repolens.store.handles import readers
from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query, check_rerender

if TYPE_CHECKING:
    from repolens.index.build import IndexReport, ProgressFn
    from repolens.ops.status import IndexStatus

# A search that finds no index builds one; if a watcher is already building
# it, wait for that instead of failing.
AUTO_INDEX_WAIT_S = 120.0


def build_index(*args: Any, **kwargs: Any) -> IndexReport:
    """:func:`repolens.index.build.build_index`, imported on first use: the
    write path (discovery, chunkers, worker pools) costs a new process more
    than a whole search, and a search of a built index never needs it."""
    from repolens.index.build import build_index as build

    return build(*args, **kwargs)


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
        check_rerender({**given, "include": include, "exclude": exclude})
    if top_k is not None:
        check_int("top_k", top_k, 1, MAX_TOP_K)
    if max_chars is not None:
        check_budget(max_chars)
    store = open_store(root, index_dir)
    settings = load_settings(store.root, {"top_k": top_k, "max_chars": max_chars})
    indexed = _ensure_index(store, settings, auto_index and query_id is None, progress)
    reader = readers.get(store)
    if query_id is None:
        assert query is not None
        outcome = search(reader, store.root, query, settings, filters)
        query_id = remember_outcome(reader, outcome)
    else:
        outcome = recall_outcome(reader, query_id, settings)
    # Cited lines must hold: files changed since indexing are re-chunked now.
    freshen_outcome(store.root, reader, outcome, settings)
    reply = render_search(outcome, query_id, mode, settings, explain=explain)
    reply.indexed = indexed
    return reply


def _ensure_index(
    store: Store, settings: Settings | None, auto_index: bool, progress: ProgressFn | None
) -> IndexReport | None:
    """Build the index of a repository that has none (``auto_index``), else
    refuse with the store's fix; the report of that build, or None."""
    if store.current() is not None:
        return None
    if not auto_index:
        raise store.missing()
    return build_index(
        store.root, store=store, settings=settings, progress=progress, lock_wait=AUTO_INDEX_WAIT_S
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
    indexed = _ensure_index(store, None, auto_index, progress)
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
