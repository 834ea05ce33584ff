"""The operations the adapters expose, as plain functions.

CLI, MCP server and HTTP app all call these and only these, so a tool and its
subcommand cannot drift apart. Each function validates its arguments (raising
``UsageError`` with the fix), resolves the root and index folder, and returns
a value whose ``render()``/``text`` is what the user sees.

They live in one module per kind of use case (an index as a whole, a
search, the reads of an index, many repositories and branches); each
imports its own stack when it runs, and this package imports each module
when one of its operations is first asked for (:func:`__getattr__`), so a
command loads only its own: a search, neither the reads nor the references.
"""

from __future__ import annotations

import importlib

from repolens.store import open_store

TYPE_CHECKING = False
if TYPE_CHECKING:
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

# The module of each operation but ``open_store`` (as the imports for type checkers above say).
_MODULES = {
    "branches": ("compare_branches", "named_repositories", "refresh_all"),
    "navigation": ("find_references", "find_references_across", "impact"),
    "reads": (
        "find_symbol",
        "find_symbol_across",
        "focus",
        "get_chunk",
        "read_snippet",
        "search_history",
        "search_history_across",
    ),
    "searches": ("ask_across", "reply_across", "search_across", "search_code"),
    "stores": ("build_index", "drop_index", "index_repo", "index_status", "list_indexes", "open_index"),
}
_MODULE_OF = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> object:
    """An operation, its module imported when first asked for, then kept here
    (a later lookup does not come back)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
