"""The search page's login: a cookie that stands for the bearer token.

The login form takes the token once and answers with a cookie holding an
expiry and an HMAC-SHA256 of it keyed by the token (``EXPIRY.HEX``): every
worker process can check it without any shared state, it never holds the
token (a stolen cookie cannot call ``/mcp``, which wants the token itself),
and a new token ends every session. ``HttpOnly`` keeps it from scripts,
``SameSite=Strict`` from requests other sites start (with a page that only
reads, that is the CSRF defence), and ``Secure`` is set when the request
came over HTTPS.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from http.cookies import SimpleCookie

COOKIE = "repolens_session"
SESSION_SECONDS = 12 * 3600
_PURPOSE = b"repolens search page session "


def _mac(token: str, expiry: int) -> str:
    return hmac.new(token.encode(), _PURPOSE + str(expiry).encode(), hashlib.sha256).hexdigest()


def session_value(token: str, now: float | None = None) -> str:
    """A fresh cookie value for ``token``, good for :data:`SESSION_SECONDS`."""
    expiry = int(now if now is not None else time.time()) + SESSION_SECONDS
    return f"{expiry}.{_mac(token, expiry)}"


def valid_session(token: str, value: str, now: float | None = None) -> bool:
    """Whether ``value`` is a cookie this token made that has not expired (constant time)."""
    expiry_text, _, mac = value.partition(".")
    if not expiry_text.isdigit() or len(expiry_text) > 12:
        return False
    expiry = int(expiry_text)
    if expiry < (now if now is not None else time.time()):
        return False
    return hmac.compare_digest(mac.encode(), _mac(token, expiry).encode())


def cookie_of(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The session cookie's value in a request's ``Cookie`` headers, if any."""
    for key, raw in headers:
        if key != b"cookie":
            continue
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(raw.decode("latin-1"))
        except Exception:  # a malformed Cookie header: as if there were none (http.cookies.CookieError)
            continue
        if COOKIE in jar:
            return jar[COOKIE].value
    return None


def set_cookie(value: str, *, secure: bool, max_age: int = SESSION_SECONDS) -> bytes:
    """The ``Set-Cookie`` header value (``max_age=0`` ends the session)."""
    parts = [f"{COOKIE}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Strict"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts).encode()
