"""The MCP server over stdio, with a front that answers ``initialize`` before
the MCP SDK loads.

Importing the SDK takes over a second, and a client waits for the reply to
``initialize`` before it does anything else. So :func:`run_stdio` reads the
first line from stdin itself, with the standard library: when it is an
``initialize`` request of the plain shape clients send, it writes the
reply at once (:func:`repolens.server.handshake.initialize_reply`, the
SDK's reply to the byte). Then it imports the SDK, builds the server and
runs it over streams that replay that first line (so the SDK's session
records the client and moves to initialized) before the client's next
lines, and drop the SDK's own reply to the replayed request: the client
sees one reply, and every other byte passes through. A first line of any
other kind (another method, a shape the front does not check, EOF)
reaches the SDK unchanged, and the SDK answers it.

Every line, the first included, reaches the SDK only if the SDK can read
it; any other (not UTF-8, not JSON, no JSON-RPC message, a lone surrogate)
is answered here with a JSON-RPC error (:mod:`repolens.server.lines`):
the SDK would drop it without a word, and the client would wait for its
timeout.

The dropped reply is compared with the front's: an SDK that answers
otherwise is logged (stderr), one that refuses the request ends the server
with a one-line error, as does an SDK that fails to load after the front
replied. ``REPOLENS_STDIO_FRONT=0`` turns the front off (the SDK answers
``initialize`` once it has loaded).

stdout carries protocol JSON only: while serving, file descriptor 1 points
at stderr and 0 at the null device (as the SDK's own stdio transport
does), so stray output of a library or a child process misses the wire.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from repolens.errors import RepolensError, ServerStartError
from repolens.server.handshake import Reply, initialize_reply
from repolens.server.lines import Refusal, refusal

if TYPE_CHECKING:
    from repolens.server.calls import RepolensServer

FRONT_ENV = "REPOLENS_STDIO_FRONT"
# What a user reads when the front and the SDK disagree.
FRONT_OFF_FIX = f"set {FRONT_ENV}=0 to let the MCP SDK answer it, and report this"

log = logging.getLogger("repolens")

# The background work starts this long after the server at the latest, should
# a client never send ``notifications/initialized``.
BACKGROUND_AFTER_S = 5.0


def run_stdio(
    roots: Mapping[str, Path] | None = None,
    index_dir: Path | None = None,
    *,
    query_log: Path | None = None,
    watch: bool = True,
    registry: Path | None = None,
) -> None:
    """Serve over stdio; with ``watch``, the served repositories are kept
    fresh (and embedded, where vectors are on) in background threads, started
    once the client has finished the handshake (``notifications/initialized``,
    or ``BACKGROUND_AFTER_S`` at the latest): their first scan must not slow
    the ``initialize`` reply a client waits for.

    Raises :class:`ServerStartError` when the SDK does not load, or refuses
    the ``initialize`` request the front has answered."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")

    def build() -> RepolensServer:
        try:
            from repolens.server.tools import build_server
        except ImportError as exc:
            raise ServerStartError(
                f"the MCP server cannot start: {type(exc).__name__}: {exc}",
                fix="reinstall repolens with its dependencies (pip install repolens)",
            ) from exc
        server = build_server(roots, index_dir=index_dir, query_log=query_log, registry=registry)
        if watch:
            server.middleware.append(after_handshake(lambda: _start_background(server, index_dir)))
        return server

    claim = _claim_stdio()
    if claim is None:
        build().run("stdio")
        return
    front = os.environ.get(FRONT_ENV, "1").strip() != "0"
    wire_in, wire_out, release = claim
    try:
        first = wire_in.readline()
        answered = initialize_reply(first) if front else None
        if answered is not None:
            wire_out.write(answered.line.encode("utf-8"))
            wire_out.flush()
        server = build()  # the SDK loads here
        stdout = _OneReply(wire_out, answered)
        _serve(server, _Replayed(first, wire_in, stdout), stdout)
    finally:
        release()


def _serve(server: RepolensServer, stdin: _Replayed, stdout: _OneReply) -> None:
    import anyio

    try:
        anyio.run(server.run_stdio_streams, stdin, stdout)
    except BaseExceptionGroup as group:  # anyio's task groups wrap what they raise
        named = _first_named(group)
        if named is None:
            raise
        raise named from group


def _claim_stdio() -> tuple[IO[bytes], IO[bytes], Callable[[], None]] | None:
    """The wire (the process's stdin and stdout) as private binary files,
    while descriptor 0 reads the null device and 1 writes to stderr, and the
    function that restores both. None where ``sys.stdin``/``sys.stdout`` are
    not descriptors 0 and 1 (replaced in process) or cannot be duplicated:
    the SDK then serves stdio itself. The private descriptors are never
    closed: a thread may still block reading one when the server stops."""
    if not (_on_fd(sys.stdin, 0) and _on_fd(sys.stdout, 1)):
        return None
    try:
        sys.stdout.flush()
        wire_in, wire_out = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDWR)
    except (OSError, ValueError):
        return None
    os.dup2(null, 0)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr: stray output goes nowhere
        os.dup2(null, 1)
    os.close(null)

    def release() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    return open(wire_in, "rb", closefd=False), open(wire_out, "wb", closefd=False), release


def _on_fd(stream: Any, fd: int) -> bool:
    try:
        return stream.fileno() == fd
    except (AttributeError, OSError, ValueError):
        return False


class _Replayed:
    """The SDK's stdin: ``first`` (the line the front read), then the lines
    of ``wire``, each one the SDK can read (:func:`repolens.server.lines.refusal`):
    any other is answered on ``stdout`` here (the SDK would drop it without
    a word). A daemon thread reads ``wire``, so that a server stopping early
    (an error) never waits at exit for a read that may never return."""

    def __init__(self, first: bytes, wire: IO[bytes], stdout: _OneReply) -> None:
        self.first = first
        self.wire = wire
        self.stdout = stdout

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        import anyio
        import anyio.lowlevel

        if not self.first:
            return  # EOF before any line
        send, receive = anyio.create_memory_object_stream[str | Refusal](0)
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._pump, args=(send, token), name="repolens-stdin", daemon=True).start()
        async with receive:
            async for item in receive:
                if isinstance(item, str):
                    yield item
                elif item.notification:
                    log.warning("a notification the MCP SDK cannot read was dropped: %s", item.reason)
                else:
                    await self.stdout.answer(item.reply)

    def _pump(self, send: Any, token: Any) -> None:
        """Read lines, check each (here, off the event loop: the check parses
        it), and hand it or its refusal to the event loop; close ``send`` at EOF."""
        import anyio
        import anyio.from_thread

        try:
            for line in itertools.chain((self.first,), self.wire):
                refused = refusal(line)
                item = line.decode("utf-8") if refused is None else refused
                anyio.from_thread.run(send.send, item, token=token)
            anyio.from_thread.run_sync(send.close, token=token)
        except (anyio.RunFinishedError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the server stopped first


class _OneReply:
    """The SDK's stdout: every line to ``wire`` but the SDK's reply to the
    ``initialize`` request the front has answered (``answered``), which is
    compared with the front's instead; and the answers to lines the SDK
    cannot read (:meth:`answer`). A lock keeps the two writers' lines whole."""

    def __init__(self, wire: IO[bytes], answered: Reply | None) -> None:
        import anyio

        self.out = anyio.wrap_file(io.TextIOWrapper(wire, encoding="utf-8"))
        self.answered = answered
        self.lock = anyio.Lock()

    async def write(self, line: str) -> None:
        if self.answered is not None and _replies_to(line, self.answered.request_id):
            front, self.answered = self.answered.line, None
            if line != front:
                _differs(line)
            return
        async with self.lock:
            await self.out.write(line)

    async def flush(self) -> None:
        async with self.lock:
            await self.out.flush()

    async def answer(self, line: str) -> None:
        async with self.lock:
            await self.out.write(line)
            await self.out.flush()


def _replies_to(line: str, request_id: int | str) -> bool:
    import json

    try:
        message = json.loads(line)
    except ValueError:
        return False
    if not isinstance(message, dict) or "id" not in message or "method" in message:
        return False
    found = message["id"]
    return type(found) is type(request_id) and found == request_id


def _differs(sdk_line: str) -> None:
    """The SDK's reply to the replayed ``initialize`` is not the front's:
    a refusal ends the server (the client believes it is initialized, the
    SDK's session does not), another result is logged."""
    import json

    error = json.loads(sdk_line).get("error")
    if error is not None:
        detail = error.get("message") if isinstance(error, dict) else error
        raise ServerStartError(
            f"the MCP SDK refused the initialize request the stdio front had answered ({detail})",
            fix=FRONT_OFF_FIX,
        )
    log.warning("the stdio front's reply to initialize differs from the MCP SDK's: %s", FRONT_OFF_FIX)


def _first_named(group: BaseExceptionGroup) -> RepolensError | None:
    """The first error with a message for the user in a task group's
    exceptions (nested groups included)."""
    for exc in group.exceptions:
        if isinstance(exc, RepolensError):
            return exc
        if isinstance(exc, BaseExceptionGroup) and (found := _first_named(exc)) is not None:
            return found
    return None


def after_handshake(start: Callable[[], None]) -> Callable[..., Any]:
    """A server middleware calling ``start`` once: after the client's
    ``notifications/initialized``, or ``BACKGROUND_AFTER_S`` after it is made."""
    once = threading.Lock()

    def start_once() -> None:
        if once.acquire(blocking=False):
            start()

    timer = threading.Timer(BACKGROUND_AFTER_S, start_once)
    timer.daemon = True
    timer.start()

    async def middleware(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            timer.cancel()
            start_once()
        return result

    return middleware


def _start_background(server: RepolensServer, index_dir: Path | None) -> None:
    from repolens.index.watch import start_background

    start_background(dict(server.repos.roots), index_dir)
