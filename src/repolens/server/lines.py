"""The answer to a line (a stdio line, an HTTP body) the MCP SDK cannot read.

The SDK's stdio transport hands a line it cannot read (not UTF-8, not JSON,
not a JSON-RPC message, a string holding a lone surrogate) to its session
as an exception, which drops it: the client hears nothing and waits for its
own timeout. Over HTTP the same request gets an error. So the stdio server
(:mod:`repolens.server.stdio`) asks :func:`refusal` about every line before
the SDK sees it, and answers a refused one itself, as JSON-RPC says:

- ``-32700`` Parse error: not UTF-8, not JSON (a blank line included), or
  JSON nested deeper than the SDK reads; with the request's id where the
  line is JSON once its bad bytes are replaced, or Python reads the
  nesting (a client waits for that id), else null;
- ``-32600`` Invalid Request: JSON that is no JSON-RPC message (an array, a
  number, an object without ``jsonrpc`` "2.0" and ``method``, a request whose
  id is neither a string nor an integer), with the request's id when it has
  a usable one, else null;
- ``-32602`` Invalid params, with the request's id: a string holding a lone
  surrogate (``"\\ud800"`` is valid JSON but no text: nothing can store or
  search it), in the one line :func:`repolens.validate.check_utf8` writes
  for a tool argument.

A notification (no id) gets no reply in JSON-RPC, whatever is wrong with
it: over stdio a refused one is logged on stderr instead. Over HTTP the SDK
answers most such bodies itself, but not all (an invalid request as a
multi-line ``-32602``, a request with a boolean id not at all):
:class:`repolens.server.web.ReadableBodies` asks :func:`refusal` too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from repolens.errors import UsageError
from repolens.validate import check_utf8, json_type

# JSON-RPC's error codes (mcp_types names them; this module loads no SDK type
# until a line needs the SDK's reading).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
# The refusal of JSON nested deeper than the SDK's parser (or Python's) reads.
DEEP = "Parse error: the JSON nests too deeply"


@dataclass(frozen=True)
class Refusal:
    """Why a line is refused (one line, for the log), the JSON-RPC error
    (one line, newline-terminated), and whether the line was a notification,
    which JSON-RPC never answers (over HTTP a POST gets it all the same)."""

    reason: str
    reply: str
    notification: bool = False


def refusal(line: bytes) -> Refusal | None:
    """None when the SDK reads ``line`` as a JSON-RPC message; else the
    :class:`Refusal` (see the module docstring). Runs the SDK's own reading
    (``mcp_types.jsonrpc_message_adapter``) on the line, so what passes here
    is exactly what the SDK accepts."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        # the id, when the line is JSON with its bad bytes replaced (a client waits on it)
        request_id = _usable_id(_loaded(line.decode("utf-8", "replace")))
        return _answer(request_id, PARSE_ERROR, f"Parse error: the line is not UTF-8 (byte {exc.start})")
    from mcp_types import JSONRPCNotification, jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        read = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        return _classify(text, exc)
    if isinstance(read, JSONRPCNotification) and '"id"' in text:
        message = json.loads(text)
        if isinstance(message, dict) and "id" in message:  # an id the SDK could not use, read as none
            return _answer(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    return None


def _loaded(text: str) -> Any:
    """``text`` as JSON; None when it is not, or nests deeper than Python reads."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _classify(text: str, exc: Any) -> Refusal:
    """A line the SDK refused: why, in JSON-RPC's terms."""
    deep = any("recursion limit" in err.get("msg", "") for err in exc.errors())
    message = _loaded(text)
    if message is None:
        return _answer(None, PARSE_ERROR, DEEP if deep else "Parse error")
    envelope = message if isinstance(message, dict) else {}
    request_id = _usable_id(envelope)
    notification = "id" not in envelope and isinstance(envelope.get("method"), str)
    if deep:  # JSON Python reads and the SDK does not: the id is known
        return _answer(request_id, PARSE_ERROR, DEEP, notification)
    try:
        check_utf8("a string in the request", message, fix="send UTF-8 text")
    except UsageError as bad:
        # in the params, the request is well formed and its params are not
        code = (
            INVALID_PARAMS
            if _clean({k: v for k, v in envelope.items() if k != "params"})
            else INVALID_REQUEST
        )
        return _answer(request_id, code, _utf8_problem(envelope) or str(bad), notification)
    if any(err.get("type") == "json_invalid" for err in exc.errors()):
        return _answer(None, PARSE_ERROR, "Parse error")
    return _answer(
        request_id,
        INVALID_REQUEST,
        f"Invalid Request: {json_type(message)} is no JSON-RPC 2.0 request, notification or response",
        notification,
    )


def _clean(value: Any) -> bool:
    try:
        check_utf8("", value)
    except UsageError:
        return False
    return True


def _utf8_problem(envelope: dict[str, Any]) -> str | None:
    """The line a tool's own check writes for a tool argument holding a lone
    surrogate (``argument 'query' of search_code is not valid UTF-8 ...``);
    None when the surrogate is elsewhere."""
    params = envelope.get("params")
    if envelope.get("method") != "tools/call" or not isinstance(params, dict):
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return None
    try:
        check_utf8("the tool name", name, fix="send UTF-8 text")
        for key, value in arguments.items():
            check_utf8(f"argument {key!r} of {name}", value, fix="send UTF-8 text")
    except UsageError as bad:
        return str(bad)
    return None


def _usable_id(envelope: Any) -> int | str | None:
    """The id a reply may echo: an integer or a string of text (not one
    holding U+FFFD, which stands for bytes replaced); None otherwise."""
    found = envelope.get("id") if isinstance(envelope, dict) else None
    if isinstance(found, bool):
        return None
    if isinstance(found, int):
        return found
    if isinstance(found, str):
        try:
            found.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return found if "\ufffd" not in found else None
    return None


def _answer(request_id: int | str | None, code: int, message: str, notification: bool = False) -> Refusal:
    reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return Refusal(message, json.dumps(reply, ensure_ascii=False, separators=(",", ":")) + "\n", notification)
