"""The operations the adapters expose, as plain functions.

CLI, MCP server and HTTP app all call these and only these, so a tool and its
subcommand cannot drift apart. Each function validates its arguments (raising
``UsageError`` with the fix), resolves the root and index folder, and returns
a value whose ``render()``/``text`` is what the user sees.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from repolens.config import Settings, load_settings
from repolens.errors import IndexMissingError, UsageError
from repolens.index import IndexReport, ProgressFn, build_index
from repolens.packets import Packet, PacketOptions, render_packet
from repolens.query import parse_query
from repolens.retrieve import CANDIDATES, search_index
from repolens.snippets import Snippet
from repolens.snippets import read_snippet as _read_snippet
from repolens.store import IndexHandle
from repolens.store.layout import IndexLayout, resolve_index_dir, resolve_root
from repolens.store.lexical import LexFilters

MAX_QUERY_CHARS = 100_000


class _HandleCache:
    """Open index handles per index folder, for long-running servers.

    Invalidated when the folder's ``current`` generation changes (a rebuild
    was published); the old handle is closed then.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[Path, IndexHandle] = {}

    def get(self, layout: IndexLayout) -> IndexHandle:
        with self._lock:
            gen = layout.require_current()
            handle = self._open.get(layout.index_dir)
            if handle is not None and handle.gen_dir == gen:
                handle.lex.reload()
                return handle
            if handle is not None:
                handle.close()
            handle = IndexHandle.open_current(layout)
            self._open[layout.index_dir] = handle
            return handle

    def clear(self) -> None:
        with self._lock:
            for handle in self._open.values():
                handle.close()
            self._open.clear()


handles = _HandleCache()


def layout_for(root: str | Path | None, index_dir: str | Path | None = None) -> IndexLayout:
    root_path = resolve_root(root)
    return IndexLayout(root_path, resolve_index_dir(root_path, index_dir))


def index_repo(
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_file_bytes: int | None = None,
    progress: ProgressFn | None = None,
) -> IndexReport:
    root_path = resolve_root(root)
    settings = load_settings(root_path, {"max_file_bytes": max_file_bytes})
    return build_index(root_path, index_dir=index_dir, settings=settings, progress=progress)


@dataclass
class SearchReply:
    packet: Packet
    indexed: IndexReport | None  # set when this call had to build the index first

    @property
    def text(self) -> str:
        return self.packet.text


def _check_int(name: str, value: int | None, lo: int, hi: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be an integer between {lo} and {hi}")
    if not lo <= value <= hi:
        raise UsageError(f"{name} must be between {lo} and {hi}, got {value}")


def search_code(
    query: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    top_k: int | None = None,
    max_chars: int | None = None,
    path: str | None = None,
    language: str | None = None,
    auto_index: bool = True,
    progress: ProgressFn | None = None,
) -> SearchReply:
    """Answer ``query`` with an evidence packet, indexing first if needed."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError("query is empty: pass a question or an identifier to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"query is {len(query)} chars; the limit is {MAX_QUERY_CHARS}: shorten it")
    _check_int("top_k", top_k, 1, 50)
    _check_int("max_chars", max_chars, 200, 1_000_000)
    layout = layout_for(root, index_dir)
    settings: Settings = load_settings(layout.root, {"top_k": top_k, "max_chars": max_chars})
    indexed = None
    if layout.current_generation() is None:
        if not auto_index:
            raise IndexMissingError(f"no index for {layout.root}: run `repolens index {layout.root}`")
        indexed = build_index(layout.root, index_dir=layout.index_dir, settings=settings, progress=progress)
    handle = handles.get(layout)
    filters = LexFilters(
        subpath=path.strip("/") if path else None,
        languages=(language,) if language else (),
    )
    parsed = parse_query(query)
    outcome = search_index(handle, parsed, limit=max(CANDIDATES, settings.top_k * 4), filters=filters)
    opts = PacketOptions(
        top_k=settings.top_k,
        max_chars=settings.max_chars,
        hit_max_chars=min(settings.hit_max_chars, settings.max_chars),
        context_lines=settings.context_lines,
        notes=outcome.notes,
    )
    packet = render_packet(query, outcome.hits, parsed.tokens, opts)
    return SearchReply(packet, indexed)


def read_snippet(root: str | Path | None, path: str, start: int, end: int) -> Snippet:
    return _read_snippet(resolve_root(root), path, start, end)
