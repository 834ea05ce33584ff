"""The access log of ``serve --http``, and the HTTP metrics: one ASGI
middleware that times every request.

Each request answered becomes one JSON line (on stderr, or appended to a
file: ``[serve] access_log``)::

    {"time": "2026-01-01T10:00:00.123+00:00", "method": "GET", "path": "/search",
     "route": "search", "status": 200, "bytes": 5120, "ms": 12.4,
     "client": "127.0.0.1", "pid": 4242}

``path`` is the path alone: the query string (a search's question, a
file's name) and every header (the token, the page's cookie) stay out of
it; a path over :data:`PATH_CHARS` is cut. ``pid`` names the worker that
answered. ``ms`` runs to the end of the response body (an MCP call's event
stream included). The same figures feed
``repolens_http_requests_total`` and ``repolens_http_request_seconds``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from repolens.server.calls import QueryLog

PATH_CHARS = 200
OTHER_ROUTE = "other"


class AccessLog:
    """ASGI middleware: ``log`` is where lines go (``"stderr"``, a file's
    path, or None for none); ``routes`` names the known paths (any other
    is ``other``, and a path under ``prefixes`` the prefix's name);
    ``observe(route, method, status, seconds)`` is told of every request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        log: str | Path | None,
        routes: Mapping[str, str],
        prefixes: Mapping[str, str] | None = None,
        observe: Callable[[str, str, int, float], None] | None = None,
    ) -> None:
        self.app = app
        self.routes = dict(routes)
        self.prefixes = dict(prefixes or {})
        self.observe = observe
        self._file = QueryLog(Path(log)) if isinstance(log, Path) else None
        self._stderr = log == "stderr"
        self._pid = os.getpid()

    def route(self, path: str) -> str:
        if path in self.routes:
            return self.routes[path]
        return next((name for prefix, name in self.prefixes.items() if path.startswith(prefix)), OTHER_ROUTE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answer = {"status": 0, "bytes": 0}

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["bytes"] += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            # a request the app failed on without answering: uvicorn answers 500
            self._done(scope, answer["status"] or 500, answer["bytes"], time.perf_counter() - started)

    def _done(self, scope: Scope, status: int, size: int, seconds: float) -> None:
        path = scope.get("path", "")
        route = self.route(path)
        method = scope.get("method", "")
        if self.observe is not None:
            self.observe(route, method, status, seconds)
        if not (self._stderr or self._file):
            return
        client = scope.get("client")
        record = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "method": method,
            "path": path if len(path) <= PATH_CHARS else path[:PATH_CHARS] + "...",
            "route": route,
            "status": status,
            "bytes": size,
            "ms": round(seconds * 1000, 1),
            "client": client[0] if client else None,
            "pid": self._pid,
        }
        if self._file is not None:
            self._file.write(record)
        else:
            print(json.dumps(record, ensure_ascii=False), file=sys.stderr, flush=True)
