"""The MCP server: tools that call :mod:`repolens.api`, nothing more.

stdout belongs to the protocol: logs go to stderr, and no tool prints.
Domain errors become tool results with ``isError`` and a one-line message.
"""

from __future__ import annotations

import json
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
            "Search the repository and get an evidence packet: the top hits with path, line range, "
            "score and only the lines that matter, within a character budget. Best for broad or "
            "natural-language questions ('where is the session expiry checked?'); for one exact "
            "identifier, grep is cheaper. Omission markers name the read_snippet call to expand."
        )
    )
    @_domain_errors
    def search_code(
        query: Annotated[str, Field(description="A question, an identifier, or an error message.")],
        root: Annotated[str | None, Field(description="Repository root; default: the server's root.")] = None,
        top_k: Annotated[int, Field(description="Number of hits (1-50).")] = 5,
        max_chars: Annotated[int, Field(description="Reply budget in characters (>= 200).")] = 6000,
        path: Annotated[str | None, Field(description="Only search under this folder or file.")] = None,
        language: Annotated[str | None, Field(description="Only this language, e.g. python.")] = None,
        json_output: Annotated[bool, Field(description="Return JSON instead of the packet text.")] = False,
    ) -> str:
        reply = api.search_code(
            query,
            root_of(root),
            index_dir=index_dir,
            top_k=top_k,
            max_chars=max_chars,
            path=path,
            language=language,
        )
        if json_output:
            return json.dumps(reply.packet.to_json(), ensure_ascii=False)
        return reply.text

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

    return server


def run_stdio(default_root: Path | None = None, index_dir: Path | None = None) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")
    build_server(default_root, index_dir).run("stdio")
