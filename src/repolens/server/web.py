"""MCP over streamable HTTP: the SDK's app at ``/mcp``, bearer auth in front,
repositories from an allow-list, ``GET /health`` open.

Auth is a small ASGI middleware rather than the SDK's OAuth machinery
(``AuthSettings`` wants an issuer URL and a token verifier; one shared
secret needs neither). Every request but ``GET /health`` must carry
``Authorization: Bearer <token>``; anything else gets a bare 401 with
``WWW-Authenticate: Bearer`` and no body. Tokens are compared as SHA-256
digests with ``hmac.compare_digest`` (constant time, and constant length).

A server without a token refuses to start, unless it is bound to a loopback
address and started with ``--no-auth``. On loopback binds the SDK's
DNS-rebinding protection is on (the ``Host`` and ``Origin`` headers must
name a loopback address), so a web page cannot reach the server through a
rebound domain name.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import hmac
import ipaddress
import logging
import socket
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from repolens import __version__, service
from repolens.branches.roots import apply_bindings
from repolens.errors import IndexLockedError, ServeError, UsageError
from repolens.server.config import (
    TOKEN_ENV,
    TOKEN_FILE_ENV,
    TOKEN_HINT,
    ServeConfig,
    missing_folders,
    require_roots,
)
from repolens.server.hosts import FoldedHost, HostGuard
from repolens.server.lines import refusal
from repolens.server.tools import build_server
from repolens.server.workers import read_workers, run_workers, shared_metrics

if TYPE_CHECKING:
    from repolens.index.report import IndexReport
    from repolens.server.calls import RepolensServer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
AUTHORIZED_KEY = "repolens.authorized"  # set in the ASGI scope for open paths
# The longest address (path and query) httptools' URL parser reads.
URL_MAX = 65_535
LONG_URL = (
    "this address is over 64 KB, longer than the server reads: search from the form at /search, "
    "which sends a long question in the request's body, not in its address"
)


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, but a request whose address is over
    :data:`URL_MAX` (a long question in a link) is refused with a line saying
    so, not uvicorn's bare "Invalid HTTP request received.": the parser
    refuses it before any app (the page's own checks) could say why."""

    def send_400_response(self, msg: str) -> None:
        super().send_400_response(LONG_URL if len(getattr(self, "url", b"")) > URL_MAX else msg)


# How uvicorn serves, in one process or in each worker. The HTTP parser and
# event loop are httptools (:class:`HttpProtocol`) and uvloop ("auto"),
# dependencies of repolens (uvloop but on Windows): the C parser and loop spend
# ~0.9M fewer instructions on an MCP call than h11 and asyncio's loop (~17% of
# a read_snippet's, callgrind).
UVICORN_OPTIONS = {
    "http": HttpProtocol,
    "loop": "auto",
    "log_level": "warning",
    "access_log": False,
    "timeout_graceful_shutdown": 5,
}

log = logging.getLogger("repolens")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1); names are not resolved."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_auth_policy(host: str, token: str | None, no_auth: bool) -> None:
    """Refuse configurations that would expose the server without a token."""
    if no_auth and not is_loopback(host):
        raise UsageError(
            f"--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost), not {host}: "
            f"set {TOKEN_ENV} or pass --token-file"
        )
    if not no_auth and token is None:
        raise UsageError(
            f"no bearer token: set {TOKEN_ENV}, or {TOKEN_FILE_ENV} / --token-file to a file holding one "
            f"({TOKEN_HINT}); on a loopback host --no-auth serves without one"
        )


def transport_security(host: str) -> TransportSecuritySettings:
    """DNS-rebinding protection for loopback binds; off elsewhere (the token guards those)."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = {"127.0.0.1", "localhost", "[::1]", _url_host(host).lower()}  # lower case: see FoldedHost
    # a name alone too: a client of port 80 sends ``Host: localhost`` (the page's guard takes it)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=sorted({*names, *(f"{n}:*" for n in names)}),
        allowed_origins=sorted({*(f"http://{n}" for n in names), *(f"http://{n}:*" for n in names)}),
    )


class BearerAuth:
    """ASGI middleware: requests need ``Authorization: Bearer <token>``, except
    ``open_paths`` (which learn whether the caller was authorized from
    ``scope["repolens.authorized"]``). ``token=None`` lets everything through."""

    def __init__(self, app: ASGIApp, token: str | None, open_paths: Iterable[str] = (HEALTH_PATH,)) -> None:
        self.app = app
        self._digest = hashlib.sha256(token.encode()).digest() if token is not None else None
        self.open_paths = frozenset(open_paths)

    def authorized(self, scope: Scope) -> bool:
        """One ``Authorization`` header holding the token (two, whatever they
        hold, are refused: which one counts would be a proxy's guess)."""
        if self._digest is None:
            return True
        given = [value for key, value in scope.get("headers", ()) if key == b"authorization"]
        if len(given) != 1:
            return False
        scheme, _, credentials = given[0].partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        presented = hashlib.sha256(credentials.strip()).digest()
        return hmac.compare_digest(presented, self._digest)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        ok = self.authorized(scope)
        if scope.get("path") in self.open_paths:
            scope[AUTHORIZED_KEY] = ok
            await self.app(scope, receive, send)
        elif ok:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})


class ReadableBodies:
    """ASGI middleware: a POST to ``/mcp`` whose body the SDK cannot read as
    a JSON-RPC message gets the JSON-RPC error the stdio server writes for
    such a line (:func:`repolens.server.lines.refusal`), with status 400;
    any other request reaches the app with its body as sent. The SDK would
    answer some of these itself, some in a multi-line ``-32602`` naming
    pydantic's models, and a request with a boolean id not at all."""

    def __init__(self, app: ASGIApp, path: str = MCP_PATH) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        refused = refusal(body)
        if refused is not None:
            answer = Response(refused.reply.strip(), status_code=400, media_type="application/json")
            await answer(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def build_app(
    config: ServeConfig,
    *,
    host: str = DEFAULT_HOST,
    no_auth: bool = False,
    index_dir: Path | None = None,
    workers_file: Path | None = None,
) -> ASGIApp:
    """The whole HTTP app: auth middleware around the SDK's streamable HTTP
    app, stateless (see :mod:`repolens.server.workers` for why).
    ``workers_file`` is the supervisor's list of workers, for ``/health``."""
    roots = require_roots(config)
    check_auth_policy(host, config.token, no_auth)
    apply_bindings(config.bindings, config.store_flag)  # a spawned worker starts without them
    server = build_server(
        roots,
        remote=True,
        index_dir=index_dir,
        allow_rebuild=config.allow_rebuild,
        allow_tests=config.allow_tests,
        query_log=config.query_log,
        registry=config.registry,
        missing=missing_folders(config),
    )

    @server.custom_route(HEALTH_PATH, methods=["GET"], include_in_schema=False)
    async def health(request: Request) -> Response:
        repos = server.repos
        repos.look_again(list(repos.missing))  # counted below: one back is served, and counted so
        served, missing = list(repos.roots), list(repos.missing)
        body: dict[str, object] = {"status": "ok", "version": __version__, "repositories": len(served)}
        # A configured root whose folder is missing is counted, still "ok": the server answers
        # for the others, and restarting it (what a failing check leads to) brings no folder back.
        if missing:
            body["missing"] = len(missing)
        workers = read_workers(workers_file)
        body["workers"] = workers.pop("workers")
        if request.scope.get(AUTHORIZED_KEY):  # names and process ids only for callers holding the token
            body["names"] = served
            if missing:
                body["missing_names"] = missing
            body.update(workers)
        return JSONResponse(body)

    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=transport_security(host),
        stateless_http=True,
    )
    return _with_page_and_metrics(
        ReadableBodies(FoldedHost(app)), server, config, host, None if no_auth else config.token
    )


def _with_page_and_metrics(
    app: ASGIApp, server: RepolensServer, config: ServeConfig, host: str, token: str | None
) -> ASGIApp:
    """``app`` (MCP) behind the token, beside the search page and ``/metrics``
    (as the config turns them on), the whole in the access log. Imported
    here: prometheus_client must not load before the supervisor of several
    workers has named their shared folder (:func:`repolens.server.workers.shared_metrics`)."""
    from repolens.server import metrics
    from repolens.server.access import AccessLog

    routes: dict[str, ASGIApp] = {}
    names = {MCP_PATH: "mcp", HEALTH_PATH: "health"}
    open_paths = [HEALTH_PATH]
    # the Host names a loopback bind answers on the routes the SDK does not guard (DNS rebinding)
    hosts = (
        frozenset({"127.0.0.1", "localhost", "[::1]", _url_host(host).lower()}) if is_loopback(host) else None
    )
    if config.metrics != "off":
        server.on_call = metrics.observe_call
        targets = [(name, *server.repos.resolve(name)) for name in server.repos.roots]
        endpoint: ASGIApp = metrics.MetricsEndpoint(targets)
        routes[metrics.METRICS_PATH] = endpoint if hosts is None else HostGuard(endpoint, hosts)
        names[metrics.METRICS_PATH] = "metrics"
        if config.metrics == "open":
            open_paths.append(metrics.METRICS_PATH)
    if config.page:
        from repolens.server.page import app as page

        search_page = page.SearchPage(
            server, token=token, bearer_ok=lambda scope: bool(scope.get(AUTHORIZED_KEY)), hosts=hosts
        )
        for path in (*page.ROUTES, *page.STATIC_PATHS):
            routes[path] = search_page
            open_paths.append(path)  # the page checks the token itself (the header or its cookie)
        names.update(page.ROUTES)
    guarded = BearerAuth(Routes(app, routes), token, open_paths=open_paths)
    observe = metrics.observe_request if config.metrics != "off" else None
    log = None if config.access_log == "off" else config.access_log
    return AccessLog(guarded, log=log, routes=names, prefixes={"/static/": "static"}, observe=observe)


class Routes:
    """ASGI: a request for one of ``routes``' paths goes to its app, any other to ``app``."""

    def __init__(self, app: ASGIApp, routes: Mapping[str, ASGIApp]) -> None:
        self.app = app
        self.routes = dict(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = self.routes.get(scope.get("path", "")) if scope["type"] == "http" else None
        await (target or self.app)(scope, receive, send)


@dataclass(frozen=True)
class AppRecipe:
    """What a worker process builds its app from (:func:`build_app`,
    called in the worker): the app (an MCP server with its task groups and
    caches) cannot cross a process boundary, these few values can."""

    config: ServeConfig
    host: str
    no_auth: bool
    index_dir: Path | None
    workers_file: Path | None

    def __call__(self) -> ASGIApp:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")
        return build_app(
            self.config,
            host=self.host,
            no_auth=self.no_auth,
            index_dir=self.index_dir,
            workers_file=self.workers_file,
        )


def index_missing(roots: dict[str, Path], index_dir: Path | None = None) -> None:
    """Index every served repository that has no index yet, before the first caller waits for it."""
    for name, root in roots.items():
        if service.open_store(root, index_dir).current() is None:
            print(f"repolens: indexing {name} ({root}) ...", file=sys.stderr, flush=True)
            try:
                report = service.index_repo(root, index_dir=index_dir)
            except IndexLockedError:  # an indexer started beside this server (deploy/compose.yaml)
                print(
                    f"repolens: {name} is being indexed by another process: calls on it say so until "
                    "that build is published, then it is served",
                    file=sys.stderr,
                    flush=True,
                )
                continue
            print(f"repolens: {name}: {report.summary().splitlines()[0]}", file=sys.stderr, flush=True)
            _observe_build(name, report)


def _observe_build(name: str, report: IndexReport) -> None:
    """A build or refresh the server ran by itself, for ``/metrics``."""
    from repolens.server.metrics import observe_build

    observe_build(name, report.mode, report.seconds)


def bind(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of ``host`` at ``port``, before anything
    else starts: an address in use is one ``ServeError`` line (not uvicorn's
    log after "serving ..."), and nothing can take the port between this
    check and serving, since these very sockets are served."""
    shown = f"{_url_host(host)}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ServeError(f"cannot serve at {shown} ({exc.strerror})", fix="pass another {host}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: TIME_WAIT is no conflict
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        fix = {
            errno.EADDRINUSE: "stop the program that uses it, or pass another {port}",
            errno.EACCES: "pass a {port} above 1023",
        }.get(exc.errno or 0, "pass another {host}")
        raise ServeError(f"cannot serve at {shown}: {exc.strerror or exc}", fix=fix) from None
    return sockets


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def serve(
    config: ServeConfig,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    no_auth: bool = False,
    index_dir: Path | None = None,
    workers: int = 1,
) -> None:
    """Run the HTTP server until interrupted: in this process (``workers=1``),
    or from ``workers`` worker processes (:mod:`repolens.server.workers`).
    This process indexes what is missing first and runs the watcher and
    embedder, once, whatever the number of workers; with several, every
    process counts its metrics in one folder they share."""
    with shared_metrics(workers):
        _serve(config, host=host, port=port, no_auth=no_auth, index_dir=index_dir, workers=workers)


def _serve(
    config: ServeConfig, *, host: str, port: int, no_auth: bool, index_dir: Path | None, workers: int
) -> None:
    import uvicorn

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="repolens: %(message)s")
    app = build_app(config, host=host, no_auth=no_auth, index_dir=index_dir)  # checks, even for workers
    sockets = bind(host, port)
    try:
        index_missing(config.roots, index_dir)
        from repolens.index.watch import start_background

        start_background(
            config.roots,
            index_dir,
            missing=missing_folders(config),
            watch_files=config.watch,
            on_report=_observe_build,
        )
        auth = "no auth (loopback only)" if no_auth else f"bearer token from {config.token_source}"
        processes = f"{workers} worker processes" if workers > 1 else "one process"
        print(
            f"repolens: serving {', '.join(config.roots)} at http://{_url_host(host)}:{port}{MCP_PATH} "
            f"({auth}; {processes}); health at {HEALTH_PATH}",
            file=sys.stderr,
            flush=True,
        )
        if workers > 1:
            recipe = functools.partial(AppRecipe, config, host, no_auth, index_dir)
            run_workers(recipe, sockets, workers, host=host, port=port, **UVICORN_OPTIONS)
            return
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, **UVICORN_OPTIONS)).run(sockets=sockets)
    finally:
        for sock in sockets:
            sock.close()
