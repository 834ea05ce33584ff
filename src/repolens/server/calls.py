"""What every MCP tool call goes through: where it looks, budgets, errors, the log.

:class:`~repolens.server.repos.Repos` decides where a call looks.
:class:`RepolensServer` wraps every call once: unknown tools and arguments
refused by name, validation errors and crashes as one line (the traceback
stays in the log), every reply within its budget, and the optional
JSON-lines query log. :func:`tool_body` adapts a tool function to the
mode, and :func:`strict_tool` makes it a tool whose arguments are taken at
their word (strict types, strings never decoded as JSON). The tools
themselves are in :mod:`repolens.server.tools`.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import ConfigDict, PrivateAttr, ValidationError

from repolens.budget import (
    CHUNK_MAX_CHARS,
    COMPARE_MAX_CHARS,
    FOCUS_MAX_CHARS,
    HISTORY_MAX_CHARS,
    READ_MAX_CHARS,
    REFS_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    SYMBOLS_MAX_CHARS,
)
from repolens.errors import RepolensError, UsageError
from repolens.fronts import serving
from repolens.server.repos import LOCATION_ALIAS, Repos
from repolens.server.tool_list import LOCATION
from repolens.settings import Settings
from repolens.testrun.limits import DEFAULT_MAX_CHARS as TEST_MAX_CHARS
from repolens.validate import MAX_BUDGET, MIN_BUDGET, check_utf8, json_type

if TYPE_CHECKING:
    from repolens.fronts import Front

log = logging.getLogger("repolens")

# Reply budgets (characters) when the call names none: the ones every front
# shares (repolens.budget). A search's is its repository's max_chars setting,
# which the tool notes once it knows it (note_budget).
DEFAULT_BUDGETS = {
    "index_repo": SUMMARY_MAX_CHARS,
    "search_code": Settings.max_chars,
    "read_snippet": READ_MAX_CHARS,
    "find_symbol": SYMBOLS_MAX_CHARS,
    "get_focused_context": FOCUS_MAX_CHARS,
    "get_chunk": CHUNK_MAX_CHARS,
    "refresh_index": SUMMARY_MAX_CHARS,
    "index_status": SUMMARY_MAX_CHARS,
    "list_repositories": SUMMARY_MAX_CHARS,
    "run_tests": TEST_MAX_CHARS,
    "compare_branches": COMPARE_MAX_CHARS,
    "search_history": HISTORY_MAX_CHARS,
    "find_references": REFS_MAX_CHARS,
    "impact": REFS_MAX_CHARS,
}
# Longest query a tool accepts. Query parsing is superlinear on long
# unbroken runs (about 1 s at 10,000 chars), so the cap bounds the work one
# call can cause; a question, an identifier or a traceback's key lines fit.
ERROR_MAX_CHARS = 1000
# Query log: argument strings longer than this are shortened in the log.
LOG_ARG_CHARS = 300

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# Threads one event loop (a server process) gives the read-only tools at once;
# the others (indexing, test runs: minutes, mostly waiting) take anyio's default
# 40. A search holds the GIL for most of its work, so threads past a few only
# wait for it, and handing it among them costs CPU: 50 HTTP clients on 2 workers
# got ~29% more requests/s with 4 than with 40 (and 2 no more than 40), and
# ~7% less server CPU a call (bench.serving load, five alternating rounds).
READ_THREADS = 4
_read_limiter: RunVar[anyio.CapacityLimiter] = RunVar("repolens_read_limiter")


# -- query log --------------------------------------------------------------------


class QueryLog:
    """JSON lines, one per tool call: ``{time, tool, arguments, latency_ms, hits, chars, error}``.

    Appends under a lock. A log that cannot be written never fails a call:
    the first failure is reported once on stderr, later ones are silent.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._warned = False

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                with open(self.path, "a", encoding="utf-8", errors="backslashreplace") as fh:
                    fh.write(line)
            except OSError as exc:
                if not self._warned:
                    self._warned = True
                    print(
                        f"repolens: warning: cannot write the query log {self.path} "
                        f"({exc.strerror or type(exc).__name__}); calls go on without it",
                        file=sys.stderr,
                        flush=True,
                    )


def _log_value(value: Any) -> Any:
    """An argument as logged: long strings and lists shortened, so one line stays small."""
    if isinstance(value, str):
        return value if len(value) <= LOG_ARG_CHARS else f"{value[:LOG_ARG_CHARS]}... ({len(value)} chars)"
    if isinstance(value, list):
        shown = [_log_value(v) for v in value[:20]]
        return [*shown, f"... ({len(value)} items)"] if len(value) > 20 else shown
    if isinstance(value, dict):
        return {str(k)[:100]: _log_value(v) for k, v in list(value.items())[:20]}
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**18:
        return f"{str(value)[:30]}... ({len(str(value))} digits)"
    return value


# What the tool body reports about its reply (hits), read by the call wrapper.
# The body runs on a worker thread with a copy of this context, so it sees the
# same dict object.
_current_call: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "repolens_current_call", default=None
)


def note_hits(hits: int) -> None:
    record = _current_call.get()
    if record is not None:
        record["hits"] = hits


def note_budget(max_chars: int) -> None:
    """The budget the reply was made within, when the call named none and the
    tool's is not the default (a search's: its repository's ``max_chars``)."""
    record = _current_call.get()
    if record is not None:
        record["budget"] = max_chars


def note_evidence_budget() -> None:
    """The reply is JSON whose ``max_chars`` budgets only the evidence inside it
    (``search_code`` mode=json): the last guard must not cut it, as cut JSON is
    no JSON. The evidence budget is kept by the packet that the JSON carries."""
    record = _current_call.get()
    if record is not None:
        record["evidence_budget"] = True


# -- replies and errors -----------------------------------------------------------


def one_line(text: str, limit: int = ERROR_MAX_CHARS) -> str:
    """Collapse whitespace (newlines included) and cut at ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _budget(value: Any, default: int) -> int:
    """The reply budget a call asked for, or ``default`` when it asked for none (or nonsense)."""
    if isinstance(value, int) and not isinstance(value, bool) and MIN_BUDGET <= value <= MAX_BUDGET:
        return value
    return default


# What a strict type check expected, by pydantic's error type, and what JSON sent instead.
_EXPECTED = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "an array",
}


def _validation_message(tool: str, exc: ValidationError) -> str:
    """pydantic's multi-line report as one line: field and problem (the type
    expected and the type sent), never the rejected value."""
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        kind = err.get("type", "")
        if kind == "missing":
            problem = "missing"
        elif kind in _EXPECTED:
            problem = f"expected {_EXPECTED[kind]}, got {json_type(err.get('input'))}"
        else:
            problem = err.get("msg", "invalid")
        parts.append(f"{loc}: {problem}")
    more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
    return f"invalid arguments for {tool}: {'; '.join(parts)}{more}"


def _untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without its titles (its own and its
    properties'), and an argument that may be left out (``X | None =
    None``) shown as its type ``X`` alone: leaving it out is how a call says
    "as the settings say" (the repository's ``.repolens.toml``, else the
    default every front shares), and ``null`` would say no more."""
    properties = {name: _optional_as_type(prop) for name, prop in schema.get("properties", {}).items()}
    return {**{k: v for k, v in schema.items() if k != "title"}, "properties": properties}


def _optional_as_type(prop: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, {"type": "null"}], "default": null}`` as ``X``; titles left out."""
    prop = {k: v for k, v in prop.items() if k != "title"}
    either = prop.get("anyOf")
    if "default" in prop and prop["default"] is None and isinstance(either, list) and len(either) == 2:
        kept = [s for s in either if s != {"type": "null"}]
        if len(kept) == 1:
            rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
            return dict(sorted({**kept[0], **rest}.items()))  # in sorted order, as the SDK's
    return prop


class RepolensServer(MCPServer):
    """``MCPServer`` with one wrapper around every tool call: one-line errors,
    unknown arguments refused, reply budgets enforced, and the query log."""

    def __init__(self, *, repos: Repos, query_log: QueryLog | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.repos = repos
        self.query_log = query_log
        # told of every call: (tool, None for an unknown one; seconds; error or None): the metrics
        self.on_call: Callable[[str | None, float, str | None], None] | None = None
        self._params: dict[str, set[str]] | None = None

    async def run_stdio_streams(self, stdin: Any, stdout: Any) -> None:
        """``run_stdio_async`` over the given text streams (``async for`` lines
        in, ``write``/``flush`` out) in place of the process's stdin and stdout:
        the stdio front's replay (:mod:`repolens.server.stdio`)."""
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            lowlevel = self._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    async def list_tools(self) -> list[MCPTool]:
        """The tools as the SDK lists them, less the ``title`` pydantic gives
        every argument and schema (the argument's own name, capitalised):
        every agent pays for tools/list up front (~1,500 of its characters),
        and a title says nothing the name does not. Calls are still checked
        against the full schema."""
        return [
            t.model_copy(update={"input_schema": _untitled(t.input_schema)})
            for t in await super().list_tools()
        ]

    async def _tool_params(self) -> dict[str, set[str]]:
        if self._params is None:
            self._params = {
                t.name: set(t.input_schema.get("properties", {})) for t in await self.list_tools()
            }
        return self._params

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None, *, front: Front = "mcp"
    ) -> Any:
        """``front``: whose words the reply's notes and fixes are in (the page's, for the page)."""
        started = time.perf_counter()
        record: dict[str, Any] = {"hits": None}
        token = _current_call.set(record)
        budget = _budget((arguments or {}).get("max_chars"), DEFAULT_BUDGETS.get(name, 4000))
        error: str | None = None
        try:
            # the one place a call's words are chosen: errors name the tool arguments, and notes the
            # tools (or the page's words), not the CLI's; the body's worker thread gets a copy
            with serving(front, _spelling):
                params = await self._tool_params()
                arguments = _unaliased(arguments or {}, params.get(name, set()))
                if name not in params:
                    error = f"unknown tool {one_line(name, 100)!r}: known tools are {', '.join(params)}"
                elif unknown := sorted(set(arguments or {}) - params[name]):
                    error = (
                        f"unknown argument {one_line(unknown[0], 100)!r} for {name}: "
                        f"known arguments are {', '.join(sorted(params[name]))}"
                    )
                else:
                    for key, value in (arguments or {}).items():  # every user string of a call enters here
                        check_utf8(f"argument {key!r} of {name}", value, fix="send UTF-8 text")
                    result = await super().call_tool(name, arguments, context)
        except MCPError:
            raise
        except RepolensError as exc:
            error = str(exc)
        except UnexpectedToolError as exc:
            log.error("tool %s failed unexpectedly", name, exc_info=exc.__cause__ or exc)
            kind = type(exc.__cause__).__name__
            error = f"internal error in {name} ({kind}): a bug; the server log has the details"
        except ToolError as exc:
            error = self._error_text(name, exc)
        finally:
            _current_call.reset(token)
        if error is not None:
            error = one_line(self.repos.redact(error), min(ERROR_MAX_CHARS, budget))
            result = CallToolResult(content=[TextContent(type="text", text=error)], is_error=True)
        elif not record.get("evidence_budget"):
            result = self._within_budget(name, result, record.get("budget", budget))
        if self.query_log is not None:
            self.query_log.write(
                {
                    "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                    "tool": name,
                    "arguments": _log_value(dict(arguments or {})),
                    "latency_ms": round((time.perf_counter() - started) * 1000, 1),
                    "hits": record["hits"],
                    "chars": sum(len(getattr(c, "text", "")) for c in getattr(result, "content", [])),
                    "error": error,
                }
            )
        if self.on_call is not None:  # an unknown tool's name is the caller's text: not passed on
            self.on_call(name if name in (self._params or {}) else None, time.perf_counter() - started, error)
        return result

    @staticmethod
    def _error_text(name: str, exc: ToolError) -> str:
        cause = exc.__cause__
        if isinstance(cause, ValidationError):
            return _validation_message(name, cause)
        if isinstance(cause, ToolError):  # raised by a tool body: the domain error's own message
            return str(cause)
        return str(exc).removeprefix(f"Error executing tool {name}: ")

    @staticmethod
    def _within_budget(name: str, result: Any, budget: int) -> Any:
        """The last guard: a tool reply over its budget is a bug, logged and cut."""
        for block in getattr(result, "content", None) or []:
            text = getattr(block, "text", None)
            if isinstance(text, str) and len(text) > budget:
                log.warning("%s replied %d chars over a budget of %d: cut", name, len(text), budget)
                block.text = text[:budget]
        return result


# -- the tools ----------------------------------------------------------------------


class _AsSent(FuncMetadata):
    """The SDK's argument handling less its guess. The SDK decodes a
    JSON-looking string given for any parameter not typed plain ``str``
    (``pre_parse_json``): ``path="null"`` became None, dropping the filter
    without a word, and ``query="[]"`` a list. Here a string is the string
    sent. A parameter that takes a list (and no string) also takes one
    written as JSON text (as some clients send lists), and a plain string as
    a list of that one string (``include="src/*"``, as ``--include`` takes
    one pattern at a time). An
    integer parameter takes a number with no fraction (``5.0``), which JSON
    Schema counts as an integer, and nothing else that is not one."""

    # (the argument model, then the names of its arguments taking a list, a string, an integer)
    _kinds: tuple[Any, frozenset[str], frozenset[str], frozenset[str]] | None = PrivateAttr(default=None)

    def _argument_kinds(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """The names (as a call sends them) of the arguments taking a list, a
        string and an integer: read from the model's annotations once, not on
        every call (a tool's model does not change; reassigned, it is read again)."""
        if self._kinds is None or self._kinds[0] is not self.arg_model:
            fields = self.arg_model.model_fields.items()
            self._kinds = (
                self.arg_model,
                frozenset(field.alias or name for name, field in fields if _takes_list(field.annotation)),
                frozenset(field.alias or name for name, field in fields if _takes(str, field.annotation)),
                frozenset(field.alias or name for name, field in fields if _takes(int, field.annotation)),
            )
        return self._kinds[1:]

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        lists, strings, ints = self._argument_kinds()
        parsed = dict(data)
        for key in ints & data.keys():  # JSON Schema's integer: 5.0 is one (5.5 is not)
            if isinstance(data[key], float) and data[key].is_integer():
                parsed[key] = int(data[key])
        for key in lists & data.keys():
            if isinstance(data[key], str):
                try:
                    value = json.loads(data[key])
                except (ValueError, RecursionError):
                    value = None
                if isinstance(value, list):
                    parsed[key] = value
                elif key not in strings:  # one item, as the command line takes one per flag
                    parsed[key] = [data[key]]
        return parsed


def _takes_list(annotation: Any) -> bool:
    return any(get_origin(a) is list for a in (annotation, *get_args(annotation)))


def _takes(kind: type, annotation: Any) -> bool:
    return any(a is kind for a in (annotation, *get_args(annotation)))


def strict_tool(
    fn: Callable[..., Any], *, name: str, description: str, annotations: ToolAnnotations | None
) -> Tool:
    """The SDK's tool for ``fn``, its arguments taken at their word: checked
    strictly (an integer is an integer, not ``true`` or ``"300"``; a boolean
    is ``true`` or ``false``, not ``"yes"``; a number may be an integer), and
    strings never decoded (:class:`_AsSent`). The schema is the SDK's."""
    tool = Tool.from_function(
        fn,
        name=name,
        description=description,
        annotations=annotations,
        structured_output=False,  # the text is the reply; a copy in structuredContent doubles it
    )
    model = tool.fn_metadata.arg_model
    strict = type(
        model.__name__, (model,), {"model_config": ConfigDict(strict=True), "__module__": model.__module__}
    )
    return tool.model_copy(update={"fn_metadata": _AsSent(arg_model=strict)})


def _unaliased(arguments: dict[str, Any], params: set[str]) -> dict[str, Any]:
    """``arguments`` with :data:`LOCATION_ALIAS` renamed to :data:`LOCATION`
    for a tool that takes it; both at once must agree."""
    if LOCATION_ALIAS not in arguments or LOCATION not in params:
        return arguments
    renamed = {k: v for k, v in arguments.items() if k != LOCATION_ALIAS}
    value = arguments[LOCATION_ALIAS]
    if LOCATION in arguments and arguments[LOCATION] != value:
        raise UsageError(f"`{LOCATION_ALIAS}` is another name for `{LOCATION}`: pass one of them")
    renamed[LOCATION] = value
    return renamed


def _spelling(arg: str) -> str:
    """An argument as a fix names it to a tool caller: ``repo`` for ``{root}``."""
    return f"`{LOCATION if arg == LOCATION_ALIAS else arg}`"


def read_limiter() -> anyio.CapacityLimiter:
    """The threads this event loop gives the read-only tools (:data:`READ_THREADS`)."""
    try:
        return _read_limiter.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(READ_THREADS)
        _read_limiter.set(limiter)
        return limiter


def tool_body(fn: Callable[..., str], repos: Repos, *, read_only: bool) -> Callable[..., Awaitable[str]]:
    """``fn`` as the SDK sees it: run on a worker thread (a read-only tool's
    among :data:`READ_THREADS`, another's among anyio's default ones), domain
    errors as ``ToolError`` (one line, server folders redacted for remote
    callers), what it tells the caller to run named as tools, or in the
    page's words for the page (:mod:`repolens.fronts`), and the location
    parameter described for this mode (a name or a path locally, a name
    remotely)."""
    sig = inspect.signature(fn, eval_str=True)
    name_param = sig.parameters.get(LOCATION)
    several = name_param is not None and _takes_list(name_param.annotation)
    name, annotation = repos.location_param(several)

    def body(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)  # in the words call_tool chose (its context is copied here)
        except RepolensError as exc:
            raise ToolError(repos.redact(str(exc))) from exc

    @wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> str:
        limiter = read_limiter() if read_only else None
        return await anyio.to_thread.run_sync(partial(body, *args, **kwargs), limiter=limiter)

    params = [p.replace(annotation=annotation) if p.name == name else p for p in sig.parameters.values()]
    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return wrapper
