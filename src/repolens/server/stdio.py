"""The MCP server over stdio, with a front that answers ``initialize`` and
``tools/list`` before the MCP SDK loads.

Importing the SDK takes over half a second, and a client waits for the
reply to ``initialize`` before it does anything else, then lists the tools
before its first call. So :func:`run_stdio` reads the first line from stdin
itself, with the standard library: when it is an ``initialize`` request of
the plain shape clients send, it writes the reply at once
(:func:`repolens.server.handshake.initialize_reply`, the SDK's reply to the
byte). Then it imports the SDK and builds the server, while a thread reads
the client's next lines and answers a plain ``tools/list`` among them from
the recorded list (:func:`repolens.server.tool_list.tools_list_reply`, the
SDK's reply to the byte, too). The server then runs over streams that
replay every line read (so the SDK's session records the client and moves
to initialized) before the client's next ones, and drop the SDK's own
replies to the requests the front answered: the client sees one reply to
each, and every other byte passes through. A first line of any other kind
(another method, a shape the front does not check, EOF) reaches the SDK
unchanged, and the SDK answers it and everything after.

Every line, the first included, reaches the SDK only if the SDK can read
it; any other (not UTF-8, not JSON, no JSON-RPC message, a lone surrogate)
is answered here with a JSON-RPC error (:mod:`repolens.server.lines`):
the SDK would drop it without a word, and the client would wait for its
timeout.

The dropped replies are compared with the front's: an SDK that answers
otherwise is logged (stderr), one that refuses the ``initialize`` request
ends the server with a one-line error, as does an SDK that fails to load
after the front replied. ``REPOLENS_STDIO_FRONT=0`` turns the front off (the
SDK answers everything once it has loaded).

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
from repolens.server.tool_list import location_description, tool_list_applies, tools_list_reply

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
    missing: Mapping[str, Path] | None = None,
) -> None:
    """Serve over stdio (``missing``: configured roots whose folder is missing,
    name -> folder, named as such until a call naming one finds it back);
    with ``watch``, the served repositories are kept fresh (and embedded,
    where vectors are on) in background threads, started
    once the client has finished the handshake (``notifications/initialized``,
    or ``BACKGROUND_AFTER_S`` at the latest): their first scan must not slow
    the ``initialize`` reply a client waits for.

    Raises :class:`ServerStartError` when the SDK does not load, or refuses
    the ``initialize`` request the front has answered."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")
    _end_runs_on_termination()
    # What the tools' ``repo`` argument says: made once, for the front's tool list and the SDK's
    # alike (a root whose folder comes back meanwhile changes neither: the lists are the same).
    description = location_description(list(roots or {}), remote=False, missing=list(missing or {}))

    def build() -> RepolensServer:
        try:
            from repolens.server.tools import build_server
        except ImportError as exc:
            raise ServerStartError(
                f"the MCP server cannot start: {type(exc).__name__}: {exc}",
                fix="reinstall repolens with its dependencies (pip install repolens)",
            ) from exc
        server = build_server(
            roots,
            index_dir=index_dir,
            query_log=query_log,
            registry=registry,
            missing=missing,
            description=description,
        )
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
        stdin = _Replayed(first, wire_in, wire_out, answered, description)
        server = build()  # the SDK loads here, while stdin's thread reads on
        stdout = _OneReply(wire_out, stdin.answered)
        _serve(server, stdin, stdout)
    finally:
        release()


def _serve(server: RepolensServer, stdin: _Replayed, stdout: _OneReply) -> None:
    import anyio

    stdin.refusals = stdout
    try:
        anyio.run(server.run_stdio_streams, stdin, stdout)
    except BaseExceptionGroup as group:  # anyio's task groups wrap what they raise
        named = _first_named(group)
        if named is None:
            raise
        raise named from group


def _end_runs_on_termination() -> None:
    """SIGTERM and SIGHUP (a client stopping its server, a closed terminal)
    end this process without its ``atexit`` handlers, and a ``run_tests``
    under way runs in a session of its own: it would run on to its timeout.
    So the server answers them by killing its runs' process groups first,
    then dies of the same signal as before (its exit status unchanged)."""
    import signal

    def end(signum: int, frame: object) -> None:
        process = sys.modules.get("repolens.testrun.process")  # no run without it
        if process is not None:
            process.kill_running()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:  # a handler someone set stays
            signal.signal(signum, end)


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
    any other is answered on ``refusals`` (the SDK would drop it without a
    word). A daemon thread reads ``wire`` from the start, while the SDK
    loads, so that a server stopping early (an error) never waits at exit
    for a read that may never return.

    Until the SDK's event loop takes the lines (``async for``), they wait
    here, and when the front answered ``initialize`` (``answered``) a
    ``tools/list`` request among them is answered at once
    (:func:`repolens.server.tool_list.tools_list_reply`, its ``repo`` argument
    saying ``description``): its reply written to ``out``, and kept in
    :attr:`answered` by request id, so that the SDK's own is dropped and
    compared (:class:`_OneReply`). Lines read after the event loop took
    over go to the SDK as they come."""

    def __init__(
        self,
        first: bytes,
        wire: IO[bytes],
        out: IO[bytes],
        answered: Reply | None,
        description: str | None,
    ) -> None:
        self.first = first
        self.wire = wire
        self.out = out
        self.description = description
        self.answered: dict[int | str, Reply] = {}
        self.protocol_version = ""
        if answered is not None:
            self.answered[answered.request_id] = answered
            self.protocol_version = answered.protocol_version
        self.refusals: _OneReply | None = None  # set before the SDK reads
        self._lock = threading.Lock()
        self._early: list[bytes] = []  # read before the event loop took over
        self._sink: tuple[Any, Any] | None = None  # then: (memory stream, event loop token)
        self._ended = False  # EOF before the event loop took over
        threading.Thread(target=self._pump, name="repolens-stdin", daemon=True).start()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        import anyio
        import anyio.lowlevel

        send, receive = anyio.create_memory_object_stream[str | Refusal](0)
        with self._lock:
            early, ended = self._early, self._ended
            self._early = []
            self._sink = (send, anyio.lowlevel.current_token())
        async with receive:
            for line in early:
                item = _checked(line)
                if isinstance(item, str):
                    yield item
                else:
                    await self._refused(item)
            if ended:
                send.close()
                return
            async for item in receive:
                if isinstance(item, str):
                    yield item
                else:
                    await self._refused(item)

    async def _refused(self, refused: Refusal) -> None:
        if refused.notification:
            log.warning("a notification the MCP SDK cannot read was dropped: %s", refused.reason)
        elif self.refusals is not None:
            await self.refusals.answer(refused.reply)

    def _pump(self) -> None:
        """Read lines: before the event loop takes them, keep them (and answer
        ``tools/list``); after, check each (here, off the event loop: the
        check parses it) and hand it or its refusal to the event loop. At EOF,
        close the event loop's stream (or say so, before it took over)."""
        if self.protocol_version and not tool_list_applies():
            self.protocol_version = ""  # no usable recording: the SDK answers
        lines = itertools.chain((self.first,), self.wire) if self.first else iter(())
        for line in lines:
            with self._lock:
                if self._sink is None:
                    self._keep(line)
                    continue
                sink = self._sink
            if not _hand_over(_checked(line), sink):
                return
        with self._lock:
            self._ended = self._sink is None
            sink = self._sink
        if sink is not None:
            _hand_over(None, sink)

    def _keep(self, line: bytes) -> None:
        """Keep ``line`` for the SDK; a plain ``tools/list`` after the front's
        ``initialize`` is answered now (the lock is held: one writer)."""
        self._early.append(line)
        if not self.protocol_version:
            return
        try:
            reply = tools_list_reply(line, self.description, self.protocol_version)
        except Exception:  # (this thread must read on, or the session hangs): the SDK answers it
            log.exception("the stdio front could not read a line; the MCP SDK answers it")
            return
        if reply is None or reply.request_id in self.answered:
            return
        try:
            self.out.write(reply.line.encode("utf-8"))
            self.out.flush()
        except OSError:  # the client has gone: its EOF ends the session, the SDK answers nothing more
            self.protocol_version = ""
            return
        self.answered[reply.request_id] = reply


def _checked(line: bytes) -> str | Refusal:
    """The line as the SDK reads it, or why it cannot. A check that fails
    (a bug) hands the line to the SDK as it would be without the check: the
    thread reading stdin must read on, or the session hangs."""
    try:
        refused = refusal(line)
    except Exception:
        log.exception("a line could not be checked; the MCP SDK reads it")
        return line.decode("utf-8", "replace")
    return line.decode("utf-8") if refused is None else refused


def _hand_over(item: str | Refusal | None, sink: tuple[Any, Any]) -> bool:
    """Send ``item`` to the event loop (None: close the stream); False once
    the server has stopped."""
    import anyio
    import anyio.from_thread

    send, token = sink
    try:
        if item is None:
            anyio.from_thread.run_sync(send.close, token=token)
        else:
            anyio.from_thread.run(send.send, item, token=token)
    except (anyio.RunFinishedError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        return False  # the server stopped first
    return True


class _OneReply:
    """The SDK's stdout: every line to ``wire`` but the SDK's replies to the
    requests the front has answered (``answered``, by request id), which
    are compared with the front's instead; and the answers to lines the SDK
    cannot read (:meth:`answer`). A lock keeps the two writers' lines whole."""

    def __init__(self, wire: IO[bytes], answered: dict[int | str, Reply]) -> None:
        import anyio

        self.out = anyio.wrap_file(io.TextIOWrapper(wire, encoding="utf-8"))
        self.answered = answered
        self.lock = anyio.Lock()

    async def write(self, line: str) -> None:
        front = self._front_reply(line)
        if front is not None:
            if line != front.line:
                _differs(line, front)
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

    def _front_reply(self, line: str) -> Reply | None:
        """The front's reply to the request ``line`` replies to, if the front
        answered it (taken out: one reply per request)."""
        if not self.answered:
            return None
        request_id = _reply_id(line)
        front = self.answered.get(request_id) if request_id is not None else None
        if front is None or type(front.request_id) is not type(request_id):
            return None
        del self.answered[front.request_id]
        return front


def _reply_id(line: str) -> int | str | None:
    """The id of the request ``line`` replies to; None when it is no reply."""
    import json

    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or "id" not in message or "method" in message:
        return None
    found = message["id"]
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def _differs(sdk_line: str, front: Reply) -> None:
    """The SDK's reply to a request the front answered is not the front's.
    A refused ``initialize`` ends the server (the client believes it is
    initialized, the SDK's session does not); anything else is logged."""
    import json

    error = json.loads(sdk_line).get("error")
    if error is not None and front.method == "initialize":
        detail = error.get("message") if isinstance(error, dict) else error
        raise ServerStartError(
            f"the MCP SDK refused the initialize request the stdio front had answered ({detail})",
            fix=FRONT_OFF_FIX,
        )
    log.warning("the stdio front's reply to %s differs from the MCP SDK's: %s", front.method, FRONT_OFF_FIX)


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

    repos = server.repos
    missing = dict(repos.missing)  # (before the roots: one served meanwhile is in both, not in neither)
    start_background(dict(repos.roots), index_dir, missing=missing)
