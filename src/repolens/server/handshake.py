"""The reply to ``initialize``, made with the standard library alone.

The MCP SDK takes over a second to import (the pydantic types of two
protocol eras, its client, starlette); a client waits for the reply to
``initialize`` before anything else, and some give up on a slow server.
:mod:`repolens.server.stdio` therefore answers it before the SDK loads,
with :func:`initialize_reply`, and hands the session to the SDK afterwards.

The reply must be the one the SDK would write, byte for byte:

- the protocol version is negotiated by the SDK's rule (the client's if it
  is one of the SDK's handshake versions, else the SDK's latest handshake
  version), over the SDK's own version table, read from its
  ``mcp_types/version.py`` without importing the package (:func:`sdk_versions`);
- ``serverInfo`` and ``instructions`` are the values :func:`repolens.server.tools.build_server`
  gives the SDK (``SERVER_NAME``, ``repolens.__version__``, ``INSTRUCTIONS``);
- ``CAPABILITIES`` is the one copy of what the SDK declares for the handlers
  its ``MCPServer`` registers: ``tests/server/test_stdio_front.py`` compares
  the whole reply with the SDK's own for every protocol version, and the
  running server compares it with the SDK's reply it drops.

Only a request of the plain shape clients send is answered here (see
:func:`initialize_reply`); anything else is the SDK's to answer, errors
included.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repolens import __version__

SERVER_NAME = "repolens"

INSTRUCTIONS = (
    "repolens answers questions about this repository with small, cited evidence packets "
    "(path, line range, score, only the matching lines). Use search_code for broad or "
    "natural-language questions and unfamiliar code; use grep when you already know the exact "
    "identifier or string. Follow omission markers with read_snippet."
)

# The text of the repolens_guide prompt (repolens.server.tools.build_server).
GUIDE = """\
repolens answers questions about this repository with evidence packets: the
top hits with path, line range and score, and only the lines that matter,
within a character budget (max_chars, which every tool but index_repo,
refresh_index and index_status takes).

Which tool
- Broad or natural-language question, unfamiliar code, an error message:
  search_code. mode=files ranks files, each with why (when you only need
  where to look); mode=json gives the hits as JSON, with chunk ids for
  get_chunk (max_chars budgets their text, not the keys).
- You know a name: find_symbol. Exact, case- and separator-insensitive
  (handle_submit finds handleSubmit), qualified (Store.save, Type::method)
  and fuzzy; definitions first, with signature and location.
- Who uses a definition: find_references with target a name (save,
  Model.save) or path:line; its uses grouped by file and by the function
  they sit in, resolved ones (imports, self.x, same-file scopes followed)
  before name matches (the same name, target unknown). direction=callers or
  callees walks calls, depth 1-3.
- What a change reaches: impact with target path:start-end (or a name, or
  a path): the definitions that use what those lines define (callers,
  importers, subclasses; lines at a module's top level reach its
  importers), ranked by depth and by how many uses reach each, then the
  tests apart, each with the run_tests call that runs it.
- A whole function or class around the matches: get_focused_context (paths
  keeps to files you know).
- Why is this code like this, when did it change: search_history (a
  question, a path, or both; with path, the lines each commit changed there).
- Two branches: compare_branches, for paths or for the files a query finds
  (base and head default to the registry's, else main and the other one).
- An exact string you already know: grep is cheaper.

Replies
- An omission marker says `use read_snippet <path> <start> <end>`: call
  read_snippet with exactly that (at most 300 lines a call).
- A search_code reply ends with its query_id: pass it back, with no question
  or filters (another mode, top_k or max_chars if you like), to see that
  result again without searching.
- A hit marked (stale: ...) is from a file changed since indexing;
  refresh_index updates the index (the server's watcher usually does).
- An error is one line saying what to pass instead.

search_code arguments
- Filters: path (a folder or file), language (python or py, ...), kind
  (function or fn, class, ...), include and exclude (path globs), keyword
  (every hit contains this exact text, case included), min_score (weaker
  hits are dropped). An unknown language or kind is refused with the list.
- A word ending in * is a partial identifier: zorb* also searches the
  indexed words starting with zorb.
- top_k: 1-50 hits (default: the repository's top_k setting, 5);
  explain=true adds each hit's leg ranks and what moved its score.

Other tools
- run_tests: runner is pytest, npm, pnpm or yarn (the test script), go,
  cargo, mvn or gradle; args are test paths and one filter (-k EXPR for
  pytest), never shell text; only the failure-relevant lines come back.
- index_repo: search_code indexes on first use; call it after large changes
  (rebuild=true builds anew). index_status: what the index holds and how
  fresh it is.
- Several repositories served: name one with repo=<name> (list_repositories
  lists them, a branch as name@branch); locally repo may also be a path.
  root is the same argument's other name.
- search_code, find_symbol, find_references, impact and search_history also ask several
  at once:
  repo as a list of names, "*" (every one served) or "project:NAME" (the
  registry's project). One reply ranked across them; every hit is named
  name@branch:path, and read_snippet takes that path as it is. A repository
  that cannot answer is named in a note.
"""

# What MCPServer declares for its tool, resource and prompt handlers (the SDK
# sorts the keys of a result: so does this copy).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}

# JSON-RPC ids the SDK accepts as they are: a 64-bit integer or a string.
_ID_RANGE = range(-(2**63), 2**63)


@dataclass(frozen=True)
class Reply:
    """The front's answer to a request: the request's id, the reply line
    (newline-delimited JSON, as the SDK writes it), the request's method, and
    for ``initialize`` the protocol version negotiated."""

    request_id: int | str
    line: str
    method: str = "initialize"
    protocol_version: str = ""


@functools.cache
def sdk_versions() -> tuple[tuple[str, ...], str] | None:
    """The SDK's ``HANDSHAKE_PROTOCOL_VERSIONS`` and ``LATEST_HANDSHAKE_VERSION``,
    read from ``mcp_types/version.py`` run alone: importing ``mcp_types`` itself
    would load every protocol type (~0.3 s). None when the file is not there
    or does not define them as expected (the SDK then answers ``initialize``)."""
    try:
        spec = importlib.util.find_spec("mcp_types")
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
        table = importlib.util.spec_from_file_location("mcp_types.version", path)
        if table is None or table.loader is None:
            return None
        module = importlib.util.module_from_spec(table)
        table.loader.exec_module(module)
        versions = tuple(module.HANDSHAKE_PROTOCOL_VERSIONS)
        latest = module.LATEST_HANDSHAKE_VERSION
    except (ImportError, OSError, AttributeError, TypeError, SyntaxError):
        return None
    if not versions or not all(isinstance(v, str) for v in versions) or latest not in versions:
        return None
    return versions, latest


def negotiate(requested: str, versions: tuple[tuple[str, ...], str]) -> str:
    """The SDK's rule (``mcp.server.runner``): the client's version if the
    SDK can handshake in it, else the SDK's latest handshake version."""
    supported, latest = versions
    return requested if requested in supported else latest


def initialize_reply(line: bytes) -> Reply | None:
    """The reply to ``line`` if it is an ``initialize`` request of the plain
    shape clients send: exactly ``jsonrpc`` "2.0", an integer or printable
    ASCII ``id``, ``method`` and ``params`` with exactly ``protocolVersion``
    (a string), ``capabilities`` (objects, ``listChanged`` flags) and
    ``clientInfo`` (strings, ``name`` and ``version`` among them). None for
    anything else, and when the SDK's version table cannot be read: the SDK
    answers those as it does (or refuses them)."""
    versions = sdk_versions()
    try:
        message = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, or nothing (EOF), or nested too deep
        return None
    if versions is None or not _plain_initialize(message):
        return None
    version = negotiate(message["params"]["protocolVersion"], versions)
    result = {
        "capabilities": CAPABILITIES,
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
    line = json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n"
    return Reply(message["id"], line, protocol_version=version)


def _plain_initialize(message: Any) -> bool:
    if not isinstance(message, dict) or message.keys() != {"jsonrpc", "id", "method", "params"}:
        return False
    if message["jsonrpc"] != "2.0" or message["method"] != "initialize" or not plain_id(message["id"]):
        return False
    params = message["params"]
    if not isinstance(params, dict) or params.keys() != {"protocolVersion", "capabilities", "clientInfo"}:
        return False
    client = params["clientInfo"]
    return (
        isinstance(params["protocolVersion"], str)
        and _plain_capabilities(params["capabilities"])
        and isinstance(client, dict)
        and {"name", "version"} <= client.keys() <= {"name", "version", "title", "description"}
        and all(isinstance(v, str) for v in client.values())
    )


def plain_id(value: Any) -> bool:
    """An id the SDK takes as it is (and echoes as it came): an integer of 64
    bits or a string of printable ASCII."""
    if isinstance(value, bool):  # a JSON true is not an id
        return False
    if isinstance(value, int):
        return value in _ID_RANGE
    return isinstance(value, str) and value.isascii() and value.isprintable()


def _plain_capabilities(value: Any) -> bool:
    """Objects all the way down, but for ``listChanged`` flags: the shape of
    every capability the SDK knows; a string or a number anywhere could be
    refused by the SDK's models."""
    if not isinstance(value, dict):
        return False
    return all(
        isinstance(v, bool) if k == "listChanged" else _plain_capabilities(v) for k, v in value.items()
    )
