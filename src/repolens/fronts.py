"""What a reply or an error tells its caller to do, in the caller's own words.

The core writes notes and fixes such as "`repolens index` refreshes the
index". A caller of the MCP tools cannot run a command: it calls a tool
(``refresh_index``). The core asks :func:`say` for the phrase; the front
that serves the call chooses the words (:func:`serving`, set by the MCP
server around every tool call, the stdio and the HTTP one alike). Outside
such a call, the library and the CLI, the words are the command line's,
as they always were: their replies are unchanged, byte for byte.

An error's fix that names an argument names it the same way: the core
writes ``{root}`` in the fix (:class:`repolens.errors.RepolensError`) and
:func:`spell` gives the serving front's spelling (``--root`` or ``ROOT``
as the command was given, ```repo``` to a tool caller; the API name
outside any front). The front passes its spelling to :func:`serving`.

A context variable, not an argument: the phrases are written deep in the
search, the store and the index, far from any adapter, and a tool body runs
on a worker thread that gets a copy of the call's context.
"""

from __future__ import annotations

from contextvars import ContextVar

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not loaded on the read path (tests/test_cli_imports.py)
    from collections.abc import Callable
    from typing import Literal

    Front = Literal["cli", "mcp", "page"]
    Phrase = Literal[
        "index",
        "run index",
        "re-run index",
        "run build",
        "run build in store",
        "run build of config",
        "run migration",
        "run rebuild",
        "free space",
        "drop old index",
        "symbols",
        "impact",
        "chunk ids",
        "index them",
        "index elsewhere",
        "index where writable",
        "build elsewhere",
        "write elsewhere",
        "index dir anew",
        "delete foreign",
    ]

_front: ContextVar[Front] = ContextVar("repolens_front", default="cli")
_spelling: ContextVar[Callable[[str], str]] = ContextVar("repolens_spelling", default=str)

# Each phrase in each front. "index" reads the changes (and rebuilds an
# index it cannot read); "run build" builds the first index of {root} ("in
# store": in a database store, "of config": of a server config's roots);
# "run rebuild" builds the index afresh. What only the server's operator can
# do (drop an index of a database store) is asked of the operator.
_PHRASES: dict[Phrase, dict[Front, str]] = {
    "index": {"cli": "`repolens index`", "mcp": "refresh_index"},
    "run index": {"cli": "run `repolens index`", "mcp": "call refresh_index"},
    "re-run index": {"cli": "re-run `repolens index`", "mcp": "call refresh_index"},
    "run build": {"cli": "run `repolens index {root}`", "mcp": "call index_repo"},
    "run build in store": {
        "cli": "run `repolens index {root}` with the same store",
        "mcp": "call index_repo",
    },
    "run build of config": {
        "cli": "run `repolens refresh --all --config {config}` with the same store",
        "mcp": "call index_repo",
    },
    "run migration": {
        "cli": "run `repolens index` with this store once (it migrates the tables)",
        "mcp": "call refresh_index once (it migrates the tables)",
    },
    "run rebuild": {"cli": "re-run `repolens index --rebuild`", "mcp": "call index_repo with rebuild=true"},
    "free space": {
        "cli": "free some space (or pass --index-dir with a folder on another disk) "
        "and run `repolens index` again",
        "mcp": "free some space and call refresh_index again",
    },
    "drop old index": {
        "cli": "remove the old index with `repolens drop {key}` and the same store",
        "mcp": "ask the server's operator to remove the old index {key}",
    },
    "symbols": {"cli": "find_symbol (repolens symbols)", "mcp": "find_symbol"},
    "impact": {"cli": "the impact tool (repolens impact)", "mcp": "the impact tool"},
    # where chunk ids are (get_focused_context replies in text, without ids)
    "chunk ids": {
        "cli": "search_code mode=json; repolens search or focus --json",
        "mcp": "search_code mode=json",
    },
    "index them": {"cli": "index them (repolens index, or refresh --all)", "mcp": "index them (index_repo)"},
    # Where the index lives is the server's to choose (--index-dir): a tool
    # caller asks the operator, as the page does.
    "index elsewhere": {
        "cli": "index the repository into a folder of your own with --index-dir",
        "mcp": "ask the server's operator to index the repository into a folder the server can read "
        "(--index-dir)",
    },
    "index where writable": {
        "cli": "run `repolens index` where the folder is writable, or index a copy with --index-dir",
        "mcp": "ask the server's operator to run `repolens index` where the folder is writable, "
        "or to serve a copy indexed with --index-dir",
    },
    "build elsewhere": {
        "cli": "run `repolens index {root} --index-dir DIR` with DIR on a writable disk, "
        "then pass the same --index-dir",
        "mcp": "ask the server's operator to index it into a folder on a writable disk (--index-dir) "
        "and serve that",
    },
    "write elsewhere": {
        "cli": "pass --index-dir with a folder on a writable disk",
        "mcp": "ask the server's operator to serve it with an index folder on a writable disk (--index-dir)",
    },
    # the index in an --index-dir (or another folder outside the root) holds another repository
    "index dir anew": {
        "cli": "pass another --index-dir for {root}, or delete {folder} to index it anew",
        "mcp": "ask the server's operator to serve {root} with another --index-dir, "
        "or to delete {folder} to index it anew",
    },
    "delete foreign": {
        "cli": "delete {folder} to index {root} anew",
        "mcp": "ask the server's operator to delete {folder} to index {root} anew",
    },
}

# The search page's column: a person at the page may not be the server's
# operator, and the page runs no command and calls no tool but to search and read.
_OPERATOR = "ask the server's operator to"
_PAGE: dict[Phrase, str] = {
    "index": "a refresh by the server's operator (`repolens index`)",
    "run index": f"{_OPERATOR} run `repolens index`",
    "re-run index": f"{_OPERATOR} re-run `repolens index`",
    "run build": f"{_OPERATOR} index it (`repolens index`)",
    "run build in store": f"{_OPERATOR} index it (`repolens index`)",
    "run build of config": f"{_OPERATOR} index the served repositories (`repolens refresh --all`)",
    "run migration": f"{_OPERATOR} run `repolens index` once (it migrates the tables)",
    "run rebuild": f"{_OPERATOR} rebuild the index (`repolens index --rebuild`)",
    "free space": f"{_OPERATOR} free some space and run `repolens index` again",
    "drop old index": f"{_OPERATOR} remove the old index {{key}}",
    "symbols": "find_symbol (an MCP tool)",
    "impact": "the impact tool (an MCP tool)",
    "chunk ids": "a search in the json mode",
    "index them": f"{_OPERATOR} index them (`repolens index`)",
}

# What a tool caller is told to ask the operator, a person at the page asks alike.
for _phrase, _words in _PHRASES.items():
    if _words["mcp"].startswith(_OPERATOR):
        _PAGE.setdefault(_phrase, _words["mcp"])
for _phrase, _words in _PAGE.items():
    _PHRASES[_phrase]["page"] = _words


def say(phrase: Phrase, **fields: object) -> str:
    """``phrase`` in the words of the front serving this call, its
    ``fields`` (``root``) filled in where those words name them."""
    words = _PHRASES[phrase][_front.get()]
    return words.format(**fields) if fields else words


def spell(arg: str) -> str:
    """The argument ``arg`` (its API name) as the front serving this call spells it."""
    return _spelling.get()(arg)


class serving:  # a context manager, named as one is used: ``with serving("mcp", spell):``
    """Within this block (and the worker threads it starts with a copy of
    its context), :func:`say` speaks for ``front`` and :func:`spell` is
    ``spell`` (the API name when None)."""

    def __init__(self, front: Front, spell: Callable[[str], str] | None = None) -> None:
        self.front, self.spell = front, spell or str

    def __enter__(self) -> None:
        self.tokens = _front.set(self.front), _spelling.set(self.spell)

    def __exit__(self, *exc: object) -> None:
        front, spelling = self.tokens
        _spelling.reset(spelling)
        _front.reset(front)
