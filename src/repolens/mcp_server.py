"""The MCP server: tools that call :mod:`repolens.api`, nothing more.

stdout belongs to the protocol: logs go to stderr, and no tool prints.
Domain errors become tool results with ``isError`` and a one-line message.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from repolens import __version__, api
from repolens.errors import RepolensError

log = logging.getLogger("repolens")

INSTRUCTIONS = (
    "repolens answers questions about this repository with small, cited evidence packets "
    "(path, line range, score, only the matching lines). Use search_code for broad or "
    "natural-language questions and unfamiliar code; use grep when you already know the exact "
    "identifier or string. Follow omission markers with read_snippet."
)

F = TypeVar("F", bound=Callable[..., Any])


def _domain_errors(fn: F) -> F:
    """Turn our errors into ``ToolError`` (an ``isError`` result, one line)."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except RepolensError as exc:
            raise ToolError(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


def build_server(default_root: Path | None = None, index_dir: Path | None = None) -> MCPServer:
    """An MCP server whose tools default to ``default_root`` (else the cwd)."""
    server = MCPServer(name="repolens", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def root_of(root: str | None) -> str | Path | None:
        return root if root else default_root

    @server.tool(
        description=(
            "Build or rebuild the search index of a repository. search_code indexes automatically "
            "when no index exists, so call this only after large changes."
        )
    )
    @_domain_errors
    def index_repo(
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
    ) -> str:
        return api.index_repo(root_of(root), index_dir=index_dir).summary()

    @server.tool(
        description=(
            "Search the repository. mode=packet (default): an evidence packet with the top hits "
            "(path, line range, score, only the lines that matter) within max_chars; mode=files: "
            "a ranked list of files with the reason each matters; mode=json: hits for programs. "
            "Best for broad or natural-language questions; for one exact identifier grep is "
            "cheaper. Every reply carries a query_id: pass it back with another mode to re-render "
            "without searching. Omission markers name the read_snippet call to expand."
        )
    )
    @_domain_errors
    def search_code(
        query: Annotated[
            str | None, Field(description="A question, an identifier, or an error message.")
        ] = None,
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
        mode: Annotated[str, Field(description="packet, files or json.")] = "packet",
        top_k: Annotated[int, Field(description="Number of hits (1-50).")] = 5,
        max_chars: Annotated[int, Field(description="Reply budget in characters (>= 200).")] = 6000,
        path: Annotated[str | None, Field(description="Only under this folder or file.")] = None,
        language: Annotated[str | None, Field(description="Only this language, e.g. python.")] = None,
        kind: Annotated[str | None, Field(description="Only this chunk kind, e.g. function.")] = None,
        include: Annotated[list[str] | None, Field(description="Only paths matching these globs.")] = None,
        exclude: Annotated[list[str] | None, Field(description="Skip paths matching these globs.")] = None,
        query_id: Annotated[str | None, Field(description="Re-render a previous reply's result.")] = None,
        explain: Annotated[bool, Field(description="Add each hit's per-leg ranks and priors.")] = False,
    ) -> str:
        return api.search_code(
            query,
            root_of(root),
            index_dir=index_dir,
            top_k=top_k,
            max_chars=max_chars,
            path=path,
            language=language,
            kind=kind,
            include=include,
            exclude=exclude,
            mode=mode,
            query_id=query_id,
            explain=explain,
        ).text

    @server.tool(
        description=(
            "Read lines start..end (1-based, inclusive; at most 300 per call) of a file in the "
            "repository. Use it to expand what a packet's omission marker names."
        )
    )
    @_domain_errors
    def read_snippet(
        path: Annotated[str, Field(description="File path relative to the repository root.")],
        start: Annotated[int, Field(description="First line (1-based).")],
        end: Annotated[int, Field(description="Last line (inclusive).")],
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
    ) -> str:
        return api.read_snippet(root_of(root), path, start, end).render()

    @server.tool(
        description=(
            "Find where a symbol is defined: exact, case-insensitive, separator-insensitive "
            "(handle_submit finds handleSubmit), qualified (Store.save, Type::method) and fuzzy "
            "lookup, definitions first, with signature and location. Cheaper than search_code "
            "when you know the name."
        )
    )
    @_domain_errors
    def find_symbol(
        name: Annotated[str, Field(description="Symbol name, optionally qualified (Class.method).")],
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
        kind: Annotated[str | None, Field(description="Only this kind: function, method, class, ...")] = None,
        path: Annotated[str | None, Field(description="Only under this folder or file.")] = None,
        language: Annotated[str | None, Field(description="Only this language.")] = None,
        limit: Annotated[int, Field(description="Most matches to list (1-200).")] = 20,
        max_chars: Annotated[int, Field(description="Reply budget in characters.")] = 4000,
    ) -> str:
        return api.find_symbol(
            name,
            root_of(root),
            index_dir=index_dir,
            kind=kind,
            path=path,
            language=language,
            limit=limit,
            max_chars=max_chars,
        ).render()

    @server.tool(
        description=(
            "For a query's matches, return the whole enclosing functions/classes (not windows), "
            "with matched lines listed, under budgets. Use after search_code when you need the "
            "full definition to understand or edit it; pass paths to stay in known files."
        )
    )
    @_domain_errors
    def get_focused_context(
        query: Annotated[str, Field(description="What to look for.")],
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
        paths: Annotated[list[str] | None, Field(description="Only matches in these files/folders.")] = None,
        max_files: Annotated[int, Field(description="Most files.")] = 3,
        blocks_per_file: Annotated[int, Field(description="Most definitions per file.")] = 3,
        max_blocks: Annotated[int, Field(description="Most definitions in all.")] = 6,
        max_chars: Annotated[int, Field(description="Reply budget in characters.")] = 8000,
    ) -> str:
        return api.focus(
            query,
            root_of(root),
            index_dir=index_dir,
            paths=paths or (),
            max_files=max_files,
            blocks_per_file=blocks_per_file,
            max_blocks=max_blocks,
            max_chars=max_chars,
        ).render()

    @server.tool(description="Return one indexed chunk by its id (ids appear in JSON replies).")
    @_domain_errors
    def get_chunk(
        chunk_id: Annotated[str, Field(description="A chunk id from a JSON reply.")],
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
        max_chars: Annotated[int, Field(description="Reply budget in characters.")] = 8000,
    ) -> str:
        return api.get_chunk(chunk_id, root_of(root), index_dir=index_dir, max_chars=max_chars).render()

    return server


def run_stdio(default_root: Path | None = None, index_dir: Path | None = None) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")
    build_server(default_root, index_dir).run("stdio")
