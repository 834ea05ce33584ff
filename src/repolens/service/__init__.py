"""The operations the adapters expose, as plain functions.

CLI, MCP server and HTTP app all call these and only these, so a tool and its
subcommand cannot drift apart. Each function validates its arguments (raising
``UsageError`` with the fix), resolves the root and index folder, and returns
a value whose ``render()``/``text`` is what the user sees.

They live in one module per kind of use case (an index as a whole, a
search, the reads of an index, many repositories and branches); each
imports its own stack when it runs, so importing this package stays cheap.
"""

from __future__ import annotations

from repolens.service.branches import compare_branches, named_repositories, refresh_all
from repolens.service.navigation import find_references, find_references_across, impact
from repolens.service.reads import (
    find_symbol,
    find_symbol_across,
    focus,
    get_chunk,
    read_snippet,
    search_history,
    search_history_across,
)
from repolens.service.searches import ask_across, reply_across, search_across, search_code
from repolens.service.stores import (
    build_index,
    drop_index,
    index_repo,
    index_status,
    list_indexes,
    open_index,
)
from repolens.store import open_store

__all__ = [
    "ask_across",
    "build_index",
    "compare_branches",
    "drop_index",
    "find_references",
    "find_references_across",
    "find_symbol",
    "find_symbol_across",
    "focus",
    "get_chunk",
    "impact",
    "index_repo",
    "index_status",
    "list_indexes",
    "named_repositories",
    "open_index",
    "open_store",
    "read_snippet",
    "refresh_all",
    "reply_across",
    "search_across",
    "search_code",
    "search_history",
    "search_history_across",
]
