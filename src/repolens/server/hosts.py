"""Which ``Host`` a loopback server answers: DNS-rebinding protection for the
routes the MCP SDK does not guard (the search page, ``/metrics``), and the
case of the names the SDK checks on ``/mcp``.

A page on another site can make a browser send requests to ``127.0.0.1``
under its own name; a server bound to loopback answers only requests that
name it as loopback does (``127.0.0.1``, ``localhost``, ``[::1]``, its host).
Host names are case-insensitive (RFC 9110): ``LOCALHOST`` is ``localhost``.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send


def host_name(host: str) -> str:
    """The name part of a ``Host`` header (``[::1]:8765`` -> ``[::1]``), lower case."""
    if host.startswith("["):
        return host[: host.find("]") + 1].lower()
    return host.rsplit(":", 1)[0].lower() if host.count(":") == 1 else host.lower()


class HostGuard:
    """ASGI: an HTTP request whose ``Host`` is none of ``hosts`` gets 421."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = next((v for k, v in scope.get("headers", ()) if k == b"host"), b"")
            if host_name(header.decode("latin-1")) not in self.hosts:
                body = b"invalid Host header"
                headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]
                await send({"type": "http.response.start", "status": 421, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


_FOLDED = (b"host", b"origin")  # an origin is a scheme, a host and a port: no case-sensitive part


class FoldedHost:
    """ASGI: ``Host`` and ``Origin`` in lower case before ``app`` sees them.

    The SDK's DNS-rebinding check in front of ``/mcp`` compares both as
    written against its allowed names (``LOCALHOST:8765`` is not
    ``localhost:*`` to it), so a client naming the server in capitals was
    refused there (421) and served by the page. Its allowed names are lower
    case: folding the headers lets every spelling of an allowed name
    through, and a name that is none of them stays refused."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(k, v.lower() if k in _FOLDED else v) for k, v in scope.get("headers", ())]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)
