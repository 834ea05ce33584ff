"""The search page in a real browser: Chromium (Debian's ``chromium``,
``/usr/bin/chromium``) driven by Playwright, against ``repolens serve
--http`` in a subprocess.

The browser is the system's: Playwright's own download (``playwright
install``) is never used, and a machine without Chromium fails these
tests, never skips them (``.ci/run`` installs it). Chromium gets the flags
that keep it off the network (no background fetches, no QUIC, no sync), a
fresh profile per launch (Playwright's temporary ``--user-data-dir``) and a
fresh context (cookies) per test.

``REPOLENS_PAGE_SCREENSHOT=docs/search-page.png`` makes the screenshot test
write the README's picture there (else it goes to the test's folder).
"""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from test_http import (
    TOKEN,
    Running,
    connect,
    free_port,
    raw,
    running_server,
    sample_repos,
    server_env,
    text_of,
)

from conftest import SAMPLE_FILES, run_git
from repolens import fronts
from repolens.server.web import LONG_URL
from repolens.store import open_store

CHROMIUM = Path("/usr/bin/chromium")
# Offline: Chromium otherwise reaches out (updates, sync, QUIC probes) and stalls here.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SECRET = "SECRET-OUTSIDE-THE-ROOT-31"
SCREENSHOT_ENV = "REPOLENS_PAGE_SCREENSHOT"
AUTH_HEADER = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Site:
    server: Running
    app: Path
    base: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """Two repositories (app, other) served with a token; a secret beside them."""
    base = tmp_path_factory.mktemp("page")
    roots = sample_repos(base, ("app", "other"))
    (base / "secret.txt").write_text(f"{SECRET}\n")
    env = server_env({"REPOLENS_TOKEN": TOKEN})
    args = ["--workers", "1", "--root", f"app={roots['app']}", "--root", f"other={roots['other']}"]
    with running_server(args, env, base / "server.err", free_port()) as server:
        yield Site(server, roots["app"], base)


@pytest.fixture(scope="module")
def browser():
    """Chromium, started once for the module; its absence fails the test."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.is_file():
        found = shutil.which("chromium")
        if found is None:
            pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install -y chromium` (.ci/run installs it)")
    executable = str(CHROMIUM) if CHROMIUM.is_file() else shutil.which("chromium")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1000, "height": 680})
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    try:
        yield tab
    finally:
        context.close()


def log_in(page, site: Site, token: str = TOKEN) -> None:
    page.goto(f"{site.server.base}/login")
    page.fill("#token", token)
    with page.expect_navigation():
        page.click("button[type=submit]")


def search(page, site: Site, query: str, **params: str | list[str]) -> None:
    """Fill the form as a person would and submit it."""
    page.goto(f"{site.server.base}/search")
    page.fill("#q", query)
    repos = params.pop("repo", None)
    if repos is not None:
        page.select_option("#repo", repos if isinstance(repos, list) else [repos])
    for name, value in params.items():
        if name == "explain":
            page.check("#explain")
        elif name == "mode":
            page.check(f"input[name=mode][value={value}]")
        else:
            page.fill(f"input[name={name}]", str(value))
    with page.expect_navigation():
        page.click("#go")


def mcp_text(site: Site, arguments: dict) -> str:
    async def call() -> str:
        async with connect(site.server.url) as client:
            return text_of(await client.call_tool("search_code", arguments))

    # Playwright's sync API keeps an event loop running in this thread: the client runs in another.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result()


# -- the token ---------------------------------------------------------------------


def test_without_the_token_a_page_is_401_with_the_login_form(page, site: Site):
    response = page.goto(f"{site.server.base}/search?q=session")
    assert response.status == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert page.locator("#token").is_visible()
    assert page.locator("#reply").count() == 0
    assert raw("GET", f"{site.server.base}/read?repo=app&path=README.md&start=1&end=2")[0] == 401
    assert raw("GET", f"{site.server.base}/status")[0] == 401
    assert raw("GET", f"{site.server.base}/metrics")[0] == 401


def test_logging_in_sets_an_http_only_strict_cookie_and_a_wrong_token_does_not(page, site: Site):
    log_in(page, site, token="not-the-token-0123456789")
    assert page.locator("#login-error").is_visible()
    assert page.context.cookies() == []
    log_in(page, site)
    assert page.url == f"{site.server.base}/search"
    (cookie,) = page.context.cookies()
    assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"]) == ("repolens_session", True, "Strict")
    assert TOKEN not in cookie["value"]
    page.click("text=Log out")
    page.wait_for_url("**/login")
    assert page.context.cookies() == []
    assert page.goto(f"{site.server.base}/status").status == 401


def test_a_search_posted_after_the_session_ended_is_searched_once_logged_in(page, site: Site):
    """A person whose session ended while the page was open posted a search,
    got the login, and after logging in landed on an empty search page: the
    question (a pasted log, perhaps) was lost. Now it rides through the login
    (a wrong token first included) and is searched: by its link when it fits
    one, else posted again to the search. The address bar showed ``/login``
    for a question too long for a link (its reload posted the token again):
    it shows the search page."""
    line = "2024-05-01 12:00:01 ERROR auth.session: session expired KeyError token=abc123 in get_user "
    for question in ("where do sessions expire", line * (9000 // len(line))):
        log_in(page, site)
        page.goto(f"{site.server.base}/search")
        page.context.clear_cookies()  # the session ends while the page is open
        page.fill("#q", question)
        page.select_option("#repo", ["app"])
        with page.expect_navigation() as submitted:
            page.click("#go")
        assert submitted.value.status == 401 and page.locator("#carried").is_visible()
        page.fill("#token", "not-the-token-0123456789")
        with page.expect_navigation():
            page.click("button[type=submit]")
        assert page.locator("#login-error").is_visible() and page.locator("#carried").is_visible()
        page.fill("#token", TOKEN)
        with page.expect_navigation():
            page.click("button[type=submit]")
        assert page.locator("#q").input_value() == question
        assert page.locator("#reply-text").input_value() == mcp_text(site, {"query": question, "repo": "app"})
        linked = len(question) < 8000
        assert urlsplit(page.url).path == "/search"
        assert page.locator("#unlinked").count() == (0 if linked else 1)
        assert TOKEN not in page.content()
        page.context.clear_cookies()


def test_a_search_carried_through_the_login_is_bounded_and_leads_only_here(site: Site):
    """Only the search form's own fields ride along (never a posted ``token``
    or ``next``), within the search form's size; the login still leads
    nowhere but this server."""
    urlencoded = {"Content-Type": "application/x-www-form-urlencoded"}
    base = site.server.base
    posted = b"q=session&repo=app&token=planted&next=//evil.example/x&bogus=1"
    status, _, body = raw("POST", f"{base}/search", urlencoded, posted)
    hidden = re.findall(rb'<input type="hidden" name="([^"]+)" value="([^"]*)"', body)
    assert status == 401 and hidden == [(b"next", b"/search"), (b"q", b"session"), (b"repo", b"app")]
    over = b"q=" + b"a" * (12 * 100_000 + 64 * 1024) + b"&repo=app"
    status, _, body = raw("POST", f"{base}/search", urlencoded, over)
    assert status == 401 and re.findall(rb'type="hidden" name="([^"]+)"', body) == [b"next"]
    assert b'id="dropped">Your search is over' in body  # not lost without a word
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=30)
    form = f"next=//evil.example/x&token={TOKEN}&q=session&repo=app".encode()
    connection.request("POST", "/login", form, urlencoded)
    reply = connection.getresponse()
    assert (reply.status, reply.getheader("location")) == (303, "/search?q=session&repo=app")
    assert "HttpOnly" in reply.getheader("set-cookie")
    reply.read()
    long = f"next=/search&token={TOKEN}&q={'session+' * 2000}&repo=app".encode()
    connection.request("POST", "/login", long, urlencoded)
    reply = connection.getresponse()  # too long for a link: posted again to the search
    assert (reply.status, reply.getheader("location")) == (307, "/search")
    connection.close()
    # that form, posted again, is searched by its search fields only: the token goes no further
    posted = f"next=/search&token={TOKEN}&q=session&repo=app".encode()
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=30)
    connection.request("POST", "/search", posted, {**urlencoded, **AUTH_HEADER})
    reply = connection.getresponse()
    assert (reply.status, reply.getheader("location")) == (303, "/search?q=session&repo=app")
    connection.close()


def test_the_bearer_header_opens_the_page_too(site: Site):
    status, headers, body = raw("GET", f"{site.server.base}/search?q=session&repo=app", headers=AUTH_HEADER)
    assert status == 200
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert b"<script>" not in body and b" style=" not in body  # no inline script or style to allow


def test_the_page_passes_a_keyword_as_typed_and_links_modes_with_the_budget_used(site: Site):
    """The page stripped the keyword's spaces (its reply then differed from
    the MCP call's), and its links to the same result in another mode
    dropped the top_k and max_chars it was shown with."""
    base = f"{site.server.base}/search?q=session&repo=app"
    _, _, spaced = raw("GET", f"{base}&keyword=SessionStore%20%20", headers=AUTH_HEADER)
    assert b"no match contains &#39;SessionStore  &#39;" in spaced
    _, _, budget = raw("GET", f"{base}&top_k=1&max_chars=400", headers=AUTH_HEADER)
    modes = re.findall(rb'href="(/search\?query_id=[^"]+)"', budget)
    assert modes and all(b"top_k=1" in link and b"max_chars=400" in link for link in modes)


def test_the_page_changes_nothing_and_takes_no_post_from_another_site(site: Site):
    form = f"token={TOKEN}&next=/search".encode()
    urlencoded = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _, _ = raw(
        "POST", f"{site.server.base}/login", {**urlencoded, "Origin": "http://evil.example"}, form
    )
    assert status == 403
    connection = http.client.HTTPConnection(urlsplit(site.server.base).netloc, timeout=30)
    connection.request("POST", "/login", form, {**urlencoded, "Origin": site.server.base})
    reply = connection.getresponse()
    assert (reply.status, reply.getheader("location")) == (303, "/search")  # the same site: logged in
    assert "HttpOnly" in reply.getheader("set-cookie")
    connection.close()
    search = {**AUTH_HEADER, **urlencoded}  # the search form posts (a question can be long)
    elsewhere = {**search, "Origin": "http://evil.example"}
    assert raw("POST", f"{site.server.base}/search", elsewhere, b"q=x")[0] == 403
    assert raw("PUT", f"{site.server.base}/search", search, b"q=x")[0] == 405
    assert raw("GET", f"{site.server.base}/logout", dict(AUTH_HEADER))[0] == 405


def test_a_rebound_host_name_is_refused_on_a_loopback_bind(site: Site):
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1."""
    rebound = {**AUTH_HEADER, "Host": "evil.example"}
    assert raw("GET", f"{site.server.base}/search?q=session&repo=app", rebound)[0] == 421
    assert raw("GET", f"{site.server.base}/search?q=session&repo=app", AUTH_HEADER)[0] == 200


# -- searching ---------------------------------------------------------------------


def test_a_search_of_one_repository_shows_the_packet_an_mcp_call_gets(page, site: Site):
    log_in(page, site)
    search(page, site, "where do sessions expire", repo="app", max_chars="1500")
    shown = page.locator("#reply-text").input_value()
    assert shown == mcp_text(site, {"query": "where do sessions expire", "repo": "app", "max_chars": 1500})
    lines = page.locator("#reply .l").all_inner_texts()
    assert "\n".join(line.replace("\u200b", "") for line in lines) == shown  # line for line, nothing added
    header = page.locator("#reply .head a.ref").first
    assert header.inner_text().startswith("src/auth/session.py:")
    assert page.locator("#reply .code .t-kw").count() > 0  # coloured: keywords of python
    assert page.locator("#reply .code .ln").count() > 0


def test_a_search_leaves_a_link_to_share_and_the_link_shows_it_again(page, site: Site):
    log_in(page, site)
    search(page, site, "where do sessions expire", repo="app")
    link = page.url
    assert urlsplit(link).path == "/search" and "q=where+do+sessions+expire" in link
    shown = page.locator("#reply-text").input_value()
    assert shown and page.locator("#unlinked").count() == 0
    page.goto(link)
    assert page.locator("#reply-text").input_value() == shown


def test_a_question_too_long_for_a_link_is_searched_all_the_same(page, site: Site):
    """A pasted log of ~100 KB: the form's GET got uvicorn's ``400 Invalid HTTP
    request received.`` (its request line limit) and no page. The form posts it;
    such a link, which uvicorn still refuses before the page, is refused with a
    line saying why and what to do."""
    log_in(page, site)
    line = "2024-05-01 12:00:01 ERROR auth.session: session expired KeyError token=abc123 in get_user "
    question = line * (100_000 // len(line))
    search(page, site, question, repo="app")
    asked = page.locator("#q").input_value()
    assert len(asked) >= 99_900 and urlsplit(page.url).path == "/search"
    assert page.locator("#reply-text").input_value() == mcp_text(site, {"query": asked, "repo": "app"})
    assert "too long" in page.locator("#unlinked").inner_text()
    with page.expect_navigation():  # its result in another mode: a link of its query_id
        page.click("#as-files")
    assert page.locator("#reply .file a.ref").count() > 0
    response = page.goto(f"{site.server.base}/search?{urlencode({'q': question, 'repo': 'app'})}")
    assert response.status == 400
    assert page.locator("body").inner_text().strip() == LONG_URL


def test_a_pasted_traceback_is_searched_with_its_lines_and_enter_searches(page, site: Site):
    """The question box was a one-line input: a pasted traceback lost its
    line breaks, so the page asked another question than an agent would."""
    log_in(page, site)
    question = (
        "session expired too early\n"
        "Traceback (most recent call last):\n"
        '  File "src/auth/session.py", line 3, in expire\n'
        "KeyError: 'token'"
    )
    search(page, site, question, repo="app")
    assert page.locator("#q").input_value() == question
    assert page.locator("#reply-text").input_value() == mcp_text(site, {"query": question, "repo": "app"})
    page.goto(f"{site.server.base}/search")
    page.fill("#q", "where do sessions expire")
    page.select_option("#repo", ["app"])
    with page.expect_navigation():
        page.press("#q", "Enter")
    assert page.locator("#q").input_value() == "where do sessions expire"
    assert page.locator("#reply-text").input_value()


def test_a_search_form_over_the_limit_gets_a_page_saying_so(site: Site):
    form = b"q=" + b"a" * (12 * 100_000 + 64 * 1024) + b"&repo=app"
    headers = {**AUTH_HEADER, "Content-Type": "application/x-www-form-urlencoded"}
    status, _, body = raw("POST", f"{site.server.base}/search", headers, form)
    assert status == 413
    error = re.search(rb'<p class="error" id="error">([^<]*)</p>', body)
    assert error and b"a question holds at most 100000 characters" in error[1]
    assert b'id="search-form"' in body  # the form, to search again


def test_a_search_of_several_repositories_labels_every_hit(page, site: Site):
    log_in(page, site)
    search(page, site, "handle submit form", repo=["app", "other"])
    heads = page.locator("#reply .head a.ref").all_inner_texts()
    assert heads, page.content()
    assert {h.split(":", 1)[0] for h in heads} <= {"app", "other"}
    assert len({h.split(":", 1)[0] for h in heads}) == 2
    expected = mcp_text(site, {"query": "handle submit form", "repo": ["app", "other"]})
    assert page.locator("#reply-text").input_value() == expected
    search(page, site, "handle submit form", repo="*", mode="files")
    assert page.locator("#reply .file a.ref").count() > 0


def test_a_hit_header_opens_a_bounded_read_of_its_lines(page, site: Site):
    log_in(page, site)
    search(page, site, "where do sessions expire", repo="app")
    header = page.locator("#reply .head a.ref").first
    span = header.inner_text().split(":")[-1]
    start, end = (int(n) for n in span.split("-"))
    with page.expect_navigation():
        header.click()
    assert page.locator("#read-path").inner_text() == "src/auth/session.py"
    first = page.locator("#reply .code .ln").first.inner_text()
    assert first == f"{start}: "
    assert page.locator("#reply .code").count() == end - start + 1


def test_following_a_pointer_reads_the_lines_it_names(page, site: Site):
    log_in(page, site)
    search(page, site, "session expired KeyError", repo="app", max_chars="400", top_k="1")
    pointer = page.locator("#reply .marker a").first
    text = pointer.inner_text()
    assert "omitted" in text or "read_snippet" in text, page.locator("#reply").inner_text()
    with page.expect_navigation():
        pointer.click()
    assert page.url.startswith(f"{site.server.base}/read?")
    numbers = [int(n.rstrip(": ")) for n in page.locator("#reply .code .ln").all_inner_texts()]
    assert numbers and numbers == list(range(numbers[0], numbers[0] + len(numbers)))


def test_explain_draws_each_hits_legs_and_the_learned_models_features(page, site: Site):
    log_in(page, site)
    search(page, site, "where do sessions expire", repo="app", explain="1")
    explained = page.locator("#reply .explain")
    assert explained.count() > 0
    assert page.locator("#reply svg.chart").count() == explained.count()
    first = page.locator("#reply svg.chart").first
    labels = first.locator("text.label").all_text_contents()
    assert any(label.startswith("lexical #") for label in labels)
    line = explained.first.inner_text()
    if "-> learned" in line and "(" in line.split("-> learned", 1)[1]:  # the learned model moved it
        assert first.locator("rect.up, rect.down").count() > 0


def test_a_query_holding_html_is_shown_as_text(page, site: Site):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, site)
    query = '<script>alert("x")</script><b id="bold">session</b><img src=x onerror=alert(2)>'
    search(page, site, query, repo="app")
    assert page.locator("#asked").inner_text() == query
    assert page.locator("#q").input_value() == query
    assert page.locator("#bold").count() == 0
    assert page.locator("main img").count() == 0
    assert dialogs == []


def test_a_read_outside_the_repository_is_refused(page, site: Site):
    log_in(page, site)
    for path in ("../secret.txt", "src/../../secret.txt", "%2e%2e/secret.txt", str(site.base / "secret.txt")):
        response = page.goto(f"{site.server.base}/read?repo=app&path={path}&start=1&end=5")
        assert response.status == 400, path
        assert page.locator("#error").is_visible()
        assert SECRET not in page.content()
        assert str(site.app) not in page.content()
    assert ".." in page.goto(f"{site.server.base}/read?repo=app&path=../secret.txt&start=1&end=5").text()


def test_bad_input_is_one_line_on_the_page(page, site: Site):
    log_in(page, site)
    response = page.goto(f"{site.server.base}/search?q=session&repo=nosuch")
    assert response.status == 400
    assert "nosuch" in page.locator("#error").inner_text()
    response = page.goto(f"{site.server.base}/search?q=session&repo=app&max_chars=lots")
    assert response.status == 400
    assert "max_chars" in page.locator("#error").inner_text()
    # a huge project name was said again in full: the line, cut at 1,000 characters, lost its fix
    response = page.goto(f"{site.server.base}/search?q=session&repo=project:{'x' * 3000}")
    assert response.status == 400
    assert page.locator("#error").inner_text() == (
        f"no project '{'x' * 60}'... (3000 chars) in the registry: "
        "its projects are none (set `project` on the registry's entries)"
    )


def test_a_path_no_repository_holds_is_said_once_not_as_indexes_to_build(page, site: Site):
    """QA: a path filter matching nothing in any repository searched gave each
    one's line and then "ask the server's operator to index them": their
    indexes are fine. The reason is said once, naming them all, with its fix."""
    log_in(page, site)
    for repo in ("*", "app&repo=other"):
        response = page.goto(f"{site.server.base}/search?q=session&repo={repo}&path=nothing/")
        assert response.status == 400
        assert page.locator("#error").inner_text() == (
            "no repository could answer: app, other did not answer: no indexed file is under 'nothing': "
            "pass a folder or file the index holds as `path`"
        )


def test_the_page_tells_a_person_to_ask_the_operator_not_to_run_a_command(tmp_path: Path):
    """A person at the page may not be the server's operator, and can call no
    tool, but the page's notes said to run a command (index health's, in the
    command line's words: "`repolens index` reads it") or to call a tool (a
    search's, in MCP's: "refresh_index refreshes the index"). They ask the
    operator now; an MCP call's reply still names the tool."""
    roots = sample_repos(tmp_path, ("app",))
    app = roots["app"]
    args = ["--workers", "1", "--no-watch", "--root", f"app={app}"]
    with running_server(args, server_env({"REPOLENS_TOKEN": TOKEN}), tmp_path / "err", free_port()) as server:
        with (app / "src/auth/session.py").open("a") as cited:  # no watcher refreshes the index
            cited.write("# changed since indexing\n")
        run_git(app, "commit", "-q", "--allow-empty", "-m", "later")  # HEAD moves past the index's history
        operator = b"a refresh by the server&#39;s operator (`repolens index`)"
        _, _, status = raw("GET", f"{server.base}/status", AUTH_HEADER)
        assert b"behind HEAD by 1 commit: " + operator + b" reads it" in status
        _, _, searched = raw("GET", f"{server.base}/search?q=where+do+sessions+expire&repo=app", AUTH_HEADER)
        assert b"changed since indexing; " + operator + b" refreshes the index" in searched
        assert b"refresh_index" not in searched

        async def call() -> str:
            async with connect(server.url) as client:
                arguments = {"query": "where do sessions expire", "repo": "app"}
                return text_of(await client.call_tool("search_code", arguments))

        with ThreadPoolExecutor(1) as pool:  # Playwright's sync API may hold this thread's loop
            assert "; refresh_index refreshes the index" in pool.submit(asyncio.run, call()).result()
    for phrase in fronts._PHRASES:  # a phrase without the page's words would fail the page
        with fronts.serving("page"):
            assert fronts.say(phrase, root="app", key="app-key", config="serve.toml", folder="/srv/index")


def test_index_health_lists_every_served_repository(page, site: Site):
    log_in(page, site)
    page.goto(f"{site.server.base}/status")
    rows = page.locator("#health tbody tr")
    assert rows.count() == 2
    app = page.locator("#health tr[data-repo=app]")
    cells = app.locator("td").all_inner_texts()
    assert cells[0] == str(len(SAMPLE_FILES))  # files
    assert cells[-1] == "no"  # no build running
    assert str(site.app) not in page.content()  # server folders redacted
    with open_store(site.app).write_lock():  # a writer beside the server, as an indexer would be
        page.reload()
        assert page.locator("#health tr[data-repo=app] td").last.inner_text() == "yes"
        assert page.locator("#health tr[data-repo=other] td").last.inner_text() == "no"


def test_a_screenshot_of_the_page(page, site: Site, tmp_path: Path):
    """The README's picture: a search with explain (written where
    ``REPOLENS_PAGE_SCREENSHOT`` says, else into this test's folder)."""
    log_in(page, site)
    search(page, site, "where do sessions expire", repo="app", explain="1", max_chars="2500")
    target = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path / "search-page.png")
    page.screenshot(path=str(target))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
