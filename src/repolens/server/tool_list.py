"""``tools/list`` over stdio without the MCP SDK: the SDK's reply, recorded.

A client lists the tools right after the handshake, and the SDK takes half
a second to import after the front (:mod:`repolens.server.stdio`) has
answered ``initialize``. The list is the same for every stdio server but
for what the ``repo`` argument says (:func:`location_description`: the
repositories configured), so the SDK's own reply is recorded in
``tool_list.json`` with ``repo`` undescribed (one repository served), and
:func:`tools_list_reply` fills the description in and writes the reply as
the SDK would, byte for byte: ``tests/server/test_stdio_front.py`` holds it
so for every protocol version and several sets of repositories.

The recording names what made it (the versions of the SDK and of pydantic,
which writes the argument schemas) and the protocol versions the reply was
the same for: in another protocol version the front leaves ``tools/list``
to the SDK. As for ``initialize``, the running server compares the SDK's
reply with the front's and logs a difference. Record it again after
changing a tool or the SDK (``python -m repolens.server.record_tools``);
the tests fail until then.

Nothing here imports the SDK: recording does, in :mod:`repolens.server.record_tools`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repolens.server.handshake import Reply, plain_id

RECORDED = Path(__file__).with_name("tool_list.json")
RECORD_COMMAND = "python -m repolens.server.record_tools"
# What writes the reply: the SDK (its two distributions) and pydantic (the schemas).
SDK_DISTRIBUTIONS = ("mcp", "mcp_types", "pydantic", "pydantic_core")
# The argument naming the repository a tool looks at (see repolens.server.repos.Repos).
LOCATION = "repo"
# The longest description of ``repo`` that lists the names served (the 13
# tools taking it repeat it: with 56 chars each the list stays under 8,000),
# and the one that points to the list instead (no longer than that).
DESCRIPTION_MAX_CHARS = 56
NAMED_ELSEWHERE = "A served name (list_repositories lists them)."
# After a configured root whose folder was missing at start (served once it is back).
MISSING_MARK = "(missing at start)"


def location_description(names: Sequence[str], *, remote: bool, missing: Sequence[str] = ()) -> str | None:
    """What the tools' ``repo`` argument says, given the served repositories'
    ``names`` and the configured roots whose folder was ``missing`` at start:
    the choice a caller has. The list is made once, at start, and a missing
    root is served once its folder is back, so it is named too, marked
    (:data:`MISSING_MARK`). None when there is no choice to make (one
    repository, the default): every tool would repeat it for nothing. Every
    tool taking ``repo`` repeats it, so the names are listed only while they
    are short (:data:`DESCRIPTION_MAX_CHARS`); past that, a team's thirty
    repositories would push the tool list over its 8,000 characters, and
    ``list_repositories`` names them instead."""
    if not names and not missing:
        return "A repository path (default: the current directory)."
    if len(names) + len(missing) == 1:
        return None
    listed = ", ".join([*names, *(f"{name} {MISSING_MARK}" for name in missing)])
    described = f"One of: {listed}." if remote else f"One of: {listed}; or a path."
    if len(described) <= DESCRIPTION_MAX_CHARS:
        return described
    return NAMED_ELSEWHERE if remote else f"{NAMED_ELSEWHERE[:-1]}; or a path."


@functools.cache
def _recorded() -> dict[str, Any] | None:
    """The recording; None when the file is missing or not as written."""
    try:
        recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
        tools, versions = recorded["tools"], recorded["protocol_versions"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return recorded if isinstance(versions, list) and _well_formed(tools) else None


def _well_formed(tools: Any) -> bool:
    """Tools whose arguments :func:`described` can fill in (a failure there,
    in the thread reading stdin, would leave the session hanging)."""
    if not isinstance(tools, list):
        return False
    for tool in tools:
        schema = tool.get("inputSchema") if isinstance(tool, dict) else None
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or not isinstance(properties.get(LOCATION, {}), dict):
            return False
    return True


def tool_list_applies() -> bool:
    """Whether the recording can be used (read once, then cached)."""
    return _recorded() is not None


def tools_list_reply(line: bytes, description: str | None, protocol_version: str) -> Reply | None:
    """The SDK's reply to ``line`` on a stdio server whose ``repo`` argument says
    ``description`` (:func:`location_description`, made once at start: the SDK's
    server is built with the same) after an ``initialize`` that negotiated ``protocol_version``,
    if ``line`` is a ``tools/list`` request of the plain shape clients send:
    exactly ``jsonrpc`` "2.0", an integer or printable ASCII ``id``,
    ``method``, and no ``params`` or empty ones. None for anything else, and
    when the recording cannot be used (see the module docstring)."""
    recorded = _recorded()
    if recorded is None or protocol_version not in recorded["protocol_versions"]:
        return None
    try:
        message = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):  # (nested too deep: the SDK's reading refuses it)
        return None
    if not _plain_tools_list(message):
        return None
    tools = described(recorded["tools"], description)
    reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": tools}}
    text = json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n"
    return Reply(message["id"], text, method="tools/list")


def described(tools: list[dict[str, Any]], description: str | None) -> list[dict[str, Any]]:
    """``tools`` with ``description`` on every ``repo`` argument, its keys in
    the sorted order of the SDK's schemas (the recording has none)."""
    if description is None:
        return tools
    out = []
    for tool in tools:
        properties = tool["inputSchema"]["properties"]
        if LOCATION in properties:
            argument = dict(sorted({**properties[LOCATION], "description": description}.items()))
            properties = {**properties, LOCATION: argument}
            tool = {**tool, "inputSchema": {**tool["inputSchema"], "properties": properties}}
        out.append(tool)
    return out


def _plain_tools_list(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("method") != "tools/list":
        return False
    if message.keys() - {"params"} != {"jsonrpc", "id", "method"} or message.get("params", {}) != {}:
        return False
    return message["jsonrpc"] == "2.0" and plain_id(message["id"])
