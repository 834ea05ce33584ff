"""The search page's HTTP side: routes, login, security headers, rendering.

Every search and read goes through the MCP server's own call path
(:meth:`repolens.server.calls.RepolensServer.call_tool`, the very method a
``tools/call`` reaches), with the arguments an MCP client would send and
only those the person gave: the same tool bodies, path checks, budgets,
redaction, query log and metrics, so a page search and an MCP call give
the same text, but for what a note or a fix tells its reader to run: a
person at the page may not be the server's operator, and can call no tool,
so those are the page's words (:mod:`repolens.fronts`; index health's too).
The page only shows it (:mod:`repolens.server.page.view`).

Routes (all ``GET`` but the forms'): ``/search`` (``/`` leads there; its
form ``POST``s), ``/read``, ``/status``, ``/login`` (``GET`` the form,
``POST`` the token), ``/logout`` (``POST``) and ``/static/NAME``. Without
the token (the bearer header, or the login's cookie:
:mod:`repolens.server.page.session`) a page answers 401 with the login
form; ``/login`` and the static files are open.
Every answer carries a Content-Security-Policy that allows scripts and
styles from the server only (no inline script or style), no framing, and
forms posting back only here; ``Referrer-Policy: same-origin`` keeps a
search's question out of other sites' logs; ``Cache-Control: no-store``.
The page changes nothing: the login sets a cookie and the logout clears it;
a ``POST`` whose ``Origin`` is another site's is refused.

The search form ``POST``s, since a question can be long (a pasted log): a
``GET`` whose address is over 64 KB is refused by uvicorn before the page
sees it (with a line saying why: :class:`repolens.server.web.HttpProtocol`).
A posted search whose link fits :data:`LINK_MAX` is redirected to that link
(``GET /search?q=...``), so the address bar holds a link to share as before;
a longer one is answered at once, without a link. A search posted without
the token (the session ended while the page was open) rides through the
login as hidden fields of its form, the search form's fields only and
within :data:`CARRIED_MAX` (the login page says so of a longer one): a
``next`` link could not hold a long question. Once the token is right the
login leads to its link, or (too long for one) answers 307, so the browser
posts the login form again to ``/search``: the address bar shows the search
page, not ``/login``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio.to_thread
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.types import Receive, Scope, Send

from repolens.branches.names import branches_of
from repolens.chunking.languages import LANGUAGES
from repolens.fronts import serving
from repolens.roles import KINDS
from repolens.server.calls import RepolensServer
from repolens.server.hosts import host_name
from repolens.server.page import explain, session
from repolens.server.page.health import Health, health_of, missing_health
from repolens.server.page.view import (
    MODES,
    READ_PATH,
    SEARCH_PATH,
    Line,
    line_html,
    query_id_of,
    read_href,
    read_lines,
    reply_lines,
)
from repolens.validate import MAX_QUERY_CHARS

HERE = Path(__file__).parent
STATIC_PREFIX = "/static/"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
STATUS_PATH = "/status"
# Every path the page answers: the server routes these here, and lets them past the bearer check.
ROUTES = {"/": "page", SEARCH_PATH: "search", READ_PATH: "read", STATUS_PATH: "status"}
ROUTES |= {LOGIN_PATH: "login", LOGOUT_PATH: "logout"}
STATIC = {"page.css": "text/css", "page.js": "text/javascript", "icon.svg": "image/svg+xml"}
STATIC_PATHS = tuple(STATIC_PREFIX + name for name in STATIC)
LOGIN_BODY_MAX = 4096
# A posted search's form: the longest question search_code takes, every character
# percent-encoded UTF-8 (12 bytes at most), and room for the other fields.
SEARCH_BODY_MAX = 12 * MAX_QUERY_CHARS + 64 * 1024
# A search posted without the token rides through the login within this size: the
# login form holding it (the token and ``next`` besides) is posted again to the
# search (:meth:`SearchPage.resumed`), so it must fit the search form's size,
# the most a login form may be.
CARRIED_MAX = SEARCH_BODY_MAX - LOGIN_BODY_MAX
TOO_LONG_TO_KEEP = (
    f"Your search is over {CARRIED_MAX // 1024} KB, too long to keep through the login: log in, then "
    "search again with the lines that matter (an error and those around it)."
)
# The longest link a posted search is redirected to: 8 KB is the request line
# proxies commonly take (nginx's default buffer); uvicorn takes ~64 KB.
LINK_MAX = 8000
# The methods each path answers (any other: GET and HEAD).
ALLOWED = {SEARCH_PATH: "GET, HEAD, POST", LOGIN_PATH: "GET, HEAD, POST", LOGOUT_PATH: "POST"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
_NUMBER = re.compile(r"\d{1,9}")
_OF_LINES = re.compile(r"\(of (\d+) lines?\)")


@dataclass(frozen=True)
class Asset:
    body: bytes
    media_type: str
    etag: str


def _assets() -> dict[str, Asset]:
    out = {}
    for name, media_type in STATIC.items():
        body = (HERE / "static" / name).read_bytes()
        out[STATIC_PREFIX + name] = Asset(body, media_type, '"' + hashlib.sha256(body).hexdigest()[:16] + '"')
    return out


class SearchPage:
    """ASGI app of the page's routes (:data:`ROUTES`, the static files).

    ``token``: the bearer token (None: served without one, ``--no-auth``);
    ``bearer_ok(scope)``: whether the request carried it (the server's own
    check); ``hosts``: the ``Host`` names a loopback bind answers (None:
    any), the same DNS-rebinding defence the SDK gives ``/mcp``.
    """

    def __init__(
        self,
        server: RepolensServer,
        *,
        token: str | None,
        bearer_ok: Callable[[Scope], bool],
        hosts: frozenset[str] | None = None,
    ) -> None:
        self.server = server
        self.repos = server.repos
        self.token = token
        self.bearer_ok = bearer_ok
        self.hosts = hosts
        self.assets = _assets()
        self.env = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["line_html"] = line_html
        self.env.globals["datalists"] = _datalists()  # the same on every page: made once
        self._digest = hashlib.sha256(token.encode()).digest() if token is not None else None
        names = list(branches_of(self.repos.roots))
        projects = {e.project for n in names if (e := self.repos.registry.get(n)) and e.project}
        self.choices = [
            *self.repos.roots,
            *(["*"] if len(self.repos.roots) > 1 else []),
            *(f"project:{p}" for p in sorted(projects)),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response = await self.answer(request)
        for key, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        await response(scope, receive, send)

    async def answer(self, request: Request) -> Response:
        path = request.url.path
        if self.hosts is not None and host_name(request.headers.get("host", "")) not in self.hosts:
            return Response("invalid Host header", status_code=421, media_type="text/plain")
        if path in self.assets:
            return self.asset(request, self.assets[path])
        if request.method == "POST":
            if not self.same_origin(request):
                return Response("cross-site request refused", status_code=403, media_type="text/plain")
            if path == LOGIN_PATH:
                return await self.login(request)
            if path == LOGOUT_PATH:
                return self.logout(request)
        allowed = ALLOWED.get(path, "GET, HEAD")
        if request.method not in allowed.split(", "):
            return Response(status_code=405, headers={"allow": allowed})
        if path == LOGIN_PATH:
            if self.signed_in(request):
                return RedirectResponse(SEARCH_PATH, status_code=303)
            goto = _safe_next(request.query_params.get("next"))
            return self.render("login.html", next=goto, wrong=False, search=[], dropped="")
        if not self.signed_in(request):
            wanted = path + (f"?{request.url.query}" if request.url.query else "")
            if path == "/":
                return RedirectResponse(LOGIN_PATH, status_code=303)
            carried: list[tuple[str, str]] = []
            dropped = ""
            if path == SEARCH_PATH and request.method == "POST":  # its form rides through the login
                body = await _body(request, CARRIED_MAX)
                carried = _search_fields(body)
                dropped = TOO_LONG_TO_KEEP if body is None else ""
            response = self.render(
                "login.html",
                status=401,
                next=_safe_next(wanted),
                wrong=False,
                search=carried,
                dropped=dropped,
            )
            response.headers["www-authenticate"] = "Bearer"
            return response
        if path == "/":
            return RedirectResponse(SEARCH_PATH, status_code=303)
        if path == SEARCH_PATH and request.method == "POST":
            return await self.posted_search(request)
        if path == SEARCH_PATH:
            return await self.search(request.query_params)
        if path == READ_PATH:
            return await self.read(request.query_params)
        return await self.status()

    # -- who is asking -------------------------------------------------------------

    def signed_in(self, request: Request) -> bool:
        if self.token is None or self.bearer_ok(request.scope):
            return True
        value = session.cookie_of(request.scope.get("headers", []))
        return value is not None and session.valid_session(self.token, value)

    @staticmethod
    def same_origin(request: Request) -> bool:
        """A ``POST`` without ``Origin`` (not from a browser) or from this very host."""
        origin = request.headers.get("origin")
        if origin is None:
            return True
        return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()

    async def login(self, request: Request) -> Response:
        """The token checked; then the search the login carried (:meth:`searched`), else ``next``."""
        body = await _body(request, SEARCH_BODY_MAX)  # (one carrying a search is posted there again)
        fields = _form_fields(body, _LOGIN_FIELDS + _SEARCH_FIELDS_MAX)
        if fields is None:
            problem = f"the login form is over {SEARCH_BODY_MAX // 1024} KB: log in from {LOGIN_PATH}"
            return Response(problem, status_code=413, media_type="text/plain")
        given = _first(fields, "token").strip()
        goto = _safe_next(_first(fields, "next"))
        carried = [(key, value) for key, value in fields if key in SEARCH_FIELDS]
        if self.token is not None:
            assert self._digest is not None
            if not hmac.compare_digest(hashlib.sha256(given.encode()).digest(), self._digest):
                return self.render(
                    "login.html", status=401, next=goto, wrong=True, search=carried, dropped=""
                )
        response = self.resumed(QueryParams(carried)) if carried else RedirectResponse(goto, status_code=303)
        if self.token is None:
            return response
        secure = request.url.scheme == "https"
        response.headers["set-cookie"] = session.set_cookie(
            session.session_value(self.token), secure=secure
        ).decode()
        return response

    @staticmethod
    def logout(request: Request) -> Response:
        response = RedirectResponse(LOGIN_PATH, status_code=303)
        response.headers["set-cookie"] = session.set_cookie(
            "", secure=request.url.scheme == "https", max_age=0
        ).decode()
        return response

    # -- pages -----------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """``tool`` called as an MCP client calls it: (its text, whether it is an error)."""
        result = await self.server.call_tool(tool, arguments, front="page")
        text = "\n".join(getattr(block, "text", "") for block in getattr(result, "content", []) or [])
        return text, bool(getattr(result, "is_error", False))

    async def posted_search(self, request: Request) -> Response:
        """The search form's ``POST``: redirected to its link when that fits
        :data:`LINK_MAX`, else answered here (a question too long for a link)."""
        body = await _body(request, SEARCH_BODY_MAX)
        if body is None:
            problem = (
                f"the search form is over {SEARCH_BODY_MAX // 1024} KB, and a question holds at most "
                f"{MAX_QUERY_CHARS} characters: keep the lines that matter (an error and those around it)"
            )
            form = _search_form(QueryParams())
            return self.render(
                "search.html", status=413, form=form, choices=self.choices, **_nothing(problem)
            )
        return await self.searched(QueryParams(_search_fields(body)))

    async def searched(self, params: QueryParams) -> Response:
        """A posted search: redirected to its link when that fits :data:`LINK_MAX`, else answered here."""
        return _to_link(params) or await self.search(params, linked=False)

    @staticmethod
    def resumed(params: QueryParams) -> Response:
        """Where a login carrying a search leads: its link when that fits
        :data:`LINK_MAX`; else a 307, which has the browser post the same
        form again to ``/search`` (now with the cookie), so the address bar
        shows the search page, not ``/login``, whose reload would post the
        token again. The search takes only its own fields of that form."""
        return _to_link(params) or RedirectResponse(SEARCH_PATH, status_code=307)

    async def search(self, params: QueryParams, *, linked: bool = True) -> Response:
        """``linked``: the search has a link (a ``GET``); else the page says why not."""
        form = _search_form(params)
        if not form["q"] and not form["query_id"]:
            return self.render("search.html", form=form, choices=self.choices, **_nothing())
        arguments, problem = _search_arguments(form)
        if problem:
            return self.render(
                "search.html", status=400, form=form, choices=self.choices, **_nothing(problem)
            )
        text, failed = await self.call("search_code", arguments)
        if failed:
            return self.render("search.html", status=400, form=form, choices=self.choices, **_nothing(text))
        one = form["repo"][0] if len(form["repo"]) == 1 and _single(form["repo"][0]) else None
        lines = reply_lines(text, form["mode"] or "packet", one)
        explained = {i: e for i, line in enumerate(lines) if (e := explain.parse(line.explain)) is not None}
        largest = explain.largest_move(list(explained.values()))
        charts = {i: explain.chart(e, largest) for i, e in explained.items()}
        again = {}
        if query_id := query_id_of(text):  # the same result in another mode, without searching
            for other in MODES:
                query = {"query_id": query_id, "mode": other, **({"repo": one} if one else {})}
                # the budget and the hit count it was shown with: a re-render under others differs
                query |= {key: form[key] for key in ("top_k", "max_chars") if form[key]}
                again[other] = f"{SEARCH_PATH}?{urlencode(query)}"
        return self.render(
            "search.html",
            form=form,
            choices=self.choices,
            lines=lines,
            reply_html=self.reply_html(lines, charts),
            error="",
            reply=text,
            again=again,
            unlinked=not linked,
        )

    def reply_html(self, lines: list[Line], charts: Mapping[int, explain.Chart]) -> Markup:
        """The reply's lines as HTML, each explained hit's chart under its ``explain:`` line
        (joined here: a template loop over a hundred lines was a third of the page's rendering)."""
        chart_svg = self.env.get_template("macros.html").module.chart_svg  # type: ignore[attr-defined]
        parts = []
        for i, line in enumerate(lines):
            parts.append(line_html(line))
            if i in charts:
                parts.append(chart_svg(charts[i]))
        return Markup("\n").join(parts)

    async def read(self, params: QueryParams) -> Response:
        path = params.get("path", "")
        repo = params.get("repo") or None
        start, end = params.get("start", ""), params.get("end", "")
        shown = {"path": path, "repo": repo or "", "start": start, "end": end}
        if not path or not _NUMBER.fullmatch(start) or not _NUMBER.fullmatch(end):
            problem = "a read needs path, start and end (whole numbers): follow a link from a search"
            return self.render("read.html", status=400, read=shown, lines=[], error=problem, around={})
        arguments: dict[str, Any] = {"path": path, "start": int(start), "end": int(end)}
        if repo:
            arguments["repo"] = repo
        text, failed = await self.call("read_snippet", arguments)
        if failed:
            return self.render("read.html", status=400, read=shown, lines=[], error=text, around={})
        return self.render(
            "read.html",
            read=shown,
            lines=read_lines(text, path, repo),
            error="",
            around=_around(text, path, repo, int(start), int(end)),
        )

    async def status(self) -> Response:
        self.repos.look_again(list(self.repos.missing))  # the page lists every one
        names = list(self.repos.roots)

        def facts_of() -> list[Health]:
            with serving("page"):  # what index_status tells its reader to run, in the page's words
                return [health_of(self.repos, n) for n in names]

        facts = await anyio.to_thread.run_sync(facts_of)
        return self.render("status.html", facts=facts + missing_health(self.repos))

    def asset(self, request: Request, asset: Asset) -> Response:
        headers = {"etag": asset.etag, "cache-control": "no-cache"}
        if request.headers.get("if-none-match") == asset.etag:
            return Response(status_code=304, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)

    def render(self, template: str, *, status: int = 200, **values: Any) -> HTMLResponse:
        names = {"search": SEARCH_PATH, "status": STATUS_PATH, "logout": LOGOUT_PATH, "login": LOGIN_PATH}
        html = self.env.get_template(template).render(
            paths=names, signed_out=template == "login.html", auth=self.token is not None, **values
        )
        return HTMLResponse(html, status_code=status)


async def _body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None once it is over ``limit`` bytes (read no further)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _form_fields(body: bytes | None, most: int) -> list[tuple[str, str]] | None:
    """A form's fields, in order; None when it is over its size (``body`` None)
    or has more than ``most`` fields (a form of the page has a few)."""
    if body is None:
        return None
    try:
        return parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True, max_num_fields=most)
    except ValueError:
        return None


def _first(fields: list[tuple[str, str]], key: str) -> str:
    return next((value for name, value in fields if name == key), "")


def _search_fields(body: bytes | None) -> list[tuple[str, str]]:
    """The search form's fields of a posted form (none of another's: no
    ``token`` or ``next`` rides along), [] when it is no search form's."""
    fields = _form_fields(body, _SEARCH_FIELDS_MAX) or []
    return [(key, value) for key, value in fields if key in SEARCH_FIELDS]


def _datalists() -> Markup:
    """The choices the language and kind boxes offer (the index's names)."""
    lists = {"languages": sorted(LANGUAGES), "kinds": sorted(KINDS)}
    return Markup("\n").join(
        Markup('<datalist id="{}">{}</datalist>').format(
            name, Markup("").join(Markup('<option value="{}">').format(v) for v in values)
        )
        for name, values in lists.items()
    )


def _safe_next(wanted: str | None) -> str:
    """Where a login leads: a path of this server only (never ``//elsewhere``)."""
    if not wanted or not wanted.startswith("/") or wanted.startswith("//"):
        return SEARCH_PATH
    if any(
        c <= " " or c in "\\\x7f" for c in wanted
    ):  # browsers drop tabs and newlines: "/\t/evil" is "//evil"
        return SEARCH_PATH
    return wanted


def _to_link(params: QueryParams) -> RedirectResponse | None:
    """A posted search redirected to its link (``GET``, a link to share); None
    when that is over :data:`LINK_MAX`, and the caller answers it otherwise."""
    link = f"{SEARCH_PATH}?{params}"
    return RedirectResponse(link, status_code=303) if len(link) <= LINK_MAX else None


def _single(repo: str) -> bool:
    return repo.strip() != "*" and not repo.strip().startswith("project:")


def _nothing(error: str = "") -> dict[str, Any]:
    return {
        "lines": [],
        "reply_html": Markup(""),
        "error": error,
        "reply": "",
        "again": {},
        "unlinked": False,
    }


_TEXT_FIELDS = ("q", "mode", "max_chars", "top_k", "path", "language", "kind", "keyword", "query_id")
# Every field of the search form, and the most a posted one has (a repo per
# repository chosen); the login form's own.
SEARCH_FIELDS = frozenset({*_TEXT_FIELDS, "repo", "explain"})
_SEARCH_FIELDS_MAX = 1000
_LOGIN_FIELDS = 2


def _search_form(params: QueryParams) -> dict[str, Any]:
    """The search form as given (every value a string, to show back as typed)."""
    form: dict[str, Any] = {key: params.get(key, "").strip() for key in _TEXT_FIELDS}
    # as typed, spaces and all: the question, and the exact text every hit must hold; the
    # question's lines as pasted (a browser sends a text area's line breaks as CR LF)
    form["q"], form["keyword"] = params.get("q", "").replace("\r\n", "\n"), params.get("keyword", "")
    form["repo"] = [r for r in params.getlist("repo") if r.strip()]
    form["explain"] = params.get("explain", "") in ("1", "on", "true")
    form["modes"] = MODES
    return form


def _search_arguments(form: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """``search_code``'s arguments for the form: only what was given (the
    tool's settings decide the rest), or a line saying what is wrong."""
    arguments: dict[str, Any] = {}
    if form["query_id"]:
        arguments["query_id"] = form["query_id"]
    elif form["q"].strip():
        arguments["query"] = form["q"]
    repos = form["repo"]
    if repos:
        arguments["repo"] = repos[0] if len(repos) == 1 else list(repos)
    for key in ("mode", "path", "language", "kind", "keyword"):
        if form[key]:
            arguments[key] = form[key]
    for key in ("max_chars", "top_k"):
        if form[key]:
            if not _NUMBER.fullmatch(form[key]):
                return {}, f"{key} must be a whole number, got {form[key][:40]!r}"
            arguments[key] = int(form[key])
    if form["explain"]:
        arguments["explain"] = True
    return arguments, ""


def _around(text: str, path: str, repo: str | None, start: int, end: int) -> dict[str, str]:
    """Links to the lines before and after a read, as many again (within the
    file); after the last line shown, when the read was cut short of ``end``."""
    size = end - start + 1
    shown = [int(n) for line in text.split("\n")[1:] if (n := line.partition(": ")[0]).isdigit()]
    end = min(end, max(shown, default=end))
    total = _OF_LINES.search(text.split("\n", 1)[0])
    out = {}
    if start > 1:
        out["earlier"] = read_href(path, max(1, start - size), start - 1, repo)
    if total and end < int(total[1]):
        out["later"] = read_href(path, end + 1, min(int(total[1]), end + size), repo)
    return out
