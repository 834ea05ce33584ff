"""What the search page makes of a reply, without a browser: the text kept
line for line, links to bounded reads, colours that add no text, ``explain``
read back from what :meth:`Hit.explain` writes, and the login cookie."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from repolens.chunking import Chunk
from repolens.search.hits import Hit
from repolens.server.hosts import host_name
from repolens.server.page import explain, session
from repolens.server.page.app import SearchPage, _around, _safe_next
from repolens.server.page.highlight import tokens
from repolens.server.page.view import READ_MAX_LINES, query_id_of, read_href, read_lines, reply_lines
from repolens.server.tools import build_server


def _text(lines) -> str:
    return "\n".join(line.text for line in lines)


def _query(href: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(href).query).items()}


@pytest.fixture(scope="module")
def replies(indexed_sample: tuple[Path, Path]) -> dict[str, str]:
    """Real replies of the MCP server's call path, for the sample repository."""
    root, index_dir = indexed_sample
    server = build_server({"app": root}, remote=True, index_dir=index_dir)
    calls = {
        "packet": {"query": "where do sessions expire", "repo": "app", "max_chars": 700, "explain": True},
        "files": {"query": "where do sessions expire", "repo": "app", "mode": "files"},
        "json": {"query": "where do sessions expire", "repo": "app", "mode": "json", "max_chars": 800},
    }

    async def run() -> dict[str, str]:
        out = {}
        for mode, arguments in calls.items():
            result = await server.call_tool("search_code", arguments)
            assert not result.is_error, result.content[0].text
            out[mode] = result.content[0].text
        out["read"] = (
            (await server.call_tool("read_snippet", {"path": "src/auth/session.py", "start": 3, "end": 9}))
            .content[0]
            .text
        )
        return out

    return anyio.run(run)


@pytest.mark.parametrize("mode", ["packet", "files", "json"])
def test_the_page_keeps_a_reply_line_for_line(replies: dict[str, str], mode: str):
    assert _text(reply_lines(replies[mode], mode, "app")) == replies[mode]


def test_a_packet_links_its_headers_markers_and_reads(replies: dict[str, str]):
    lines = reply_lines(replies["packet"], "packet", "app")
    heads = [line for line in lines if line.kind == "head"]
    assert heads and all(line.pieces[0].href.startswith("/read?") for line in heads)
    first = _query(heads[0].pieces[0].href)
    assert first["repo"] == "app" and first["path"] == "src/auth/session.py"
    markers = [p for line in lines if line.kind == "marker" for p in line.pieces if p.href]
    assert markers, replies["packet"]
    for piece in markers:
        query = _query(piece.href)
        assert query["path"] and int(query["start"]) <= int(query["end"])
    assert any(line.kind == "explain" and line.explain for line in lines)
    assert any(p.kind == "t-kw" for line in lines if line.kind == "code" for p in line.pieces)
    assert query_id_of(replies["packet"]) is not None


def test_a_read_reply_is_kept_and_coloured(replies: dict[str, str]):
    lines = read_lines(replies["read"], "src/auth/session.py")
    assert _text(lines) == replies["read"]
    assert [line.kind for line in lines] == ["head"] + ["code"] * 7


ODD_PATHS = """src/paren(1).py:1-2 function paren_zebra (score 1.00)
1: def paren_zebra():
... (lines 5-7 omitted)

src/my dir/space file.py:1-302 function spacey_function (score 0.90)
1: def spacey_function():
... 10 more lines; use read_snippet src/my dir/space file.py 210 299 to expand

next files (read_snippet PATH START END to read one):
src/<b>.py:1-2 (1 of 1 terms, source file)
... 2 more blocks did not fit: src/a.py:1-2, src/b.py:3-4"""


def test_paths_with_spaces_or_parentheses_are_linked_whole():
    """A header's link read ``.py:1-2`` of ``src/paren(1).py`` (the path cut
    at the parenthesis), so its code was not coloured nor its markers linked;
    a read's path was cut at the space."""
    lines = reply_lines(ODD_PATHS, "packet", "app")
    assert _text(lines) == ODD_PATHS
    links = [(p.text, _query(p.href)["path"]) for line in lines for p in line.pieces if p.href]
    assert links == [
        ("src/paren(1).py:1-2", "src/paren(1).py"),
        ("... (lines 5-7 omitted)", "src/paren(1).py"),
        ("src/my dir/space file.py:1-302", "src/my dir/space file.py"),
        ("read_snippet src/my dir/space file.py 210 299", "src/my dir/space file.py"),
        ("src/<b>.py:1-2", "src/<b>.py"),
        ("src/a.py:1-2", "src/a.py"),
        ("src/b.py:3-4", "src/b.py"),
    ]
    assert [line.kind for line in lines[:2]] == ["head", "code"]


def test_a_cut_reads_marker_links_to_the_lines_it_left_out():
    cut = "... (truncated at 12000 chars; use read_snippet src/big.py 210 299 to expand)"
    text = f"src/big.py:1-299 (of 600 lines)\n1: x = 1\n{cut}"
    marker = read_lines(text, "src/big.py", "app")[-1]
    assert [_query(p.href) for p in marker.pieces if p.href] == [
        {"repo": "app", "path": "src/big.py", "start": "210", "end": "299"}
    ]


def test_a_cut_reads_later_lines_start_after_the_last_line_shown():
    """A read cut at 12,000 characters offered "later lines" after the end
    asked, so the lines between could not be reached by clicking."""
    shown = "\n".join(f"{n}: x" for n in range(1, 210))
    text = f"src/big.py:1-299 (of 600 lines)\n{shown}\n... (truncated at 12000 chars)"
    later = _query(_around(text, "src/big.py", "app", 1, 299)["later"])
    assert (later["start"], later["end"]) == ("210", "508")
    whole = "src/big.py:1-3 (of 600 lines)\n1: a\n2: b\n3: c"
    assert _query(_around(whole, "src/big.py", "app", 1, 3)["later"])["start"] == "4"


def test_paths_labelled_with_their_repository_name_it_themselves():
    assert _query(read_href("app@main:src/x.py", 3, 9, "ignored")) == {
        "path": "app@main:src/x.py",
        "start": "3",
        "end": "9",
    }
    assert _query(read_href("src/x.py", 3, 9, "app"))["repo"] == "app"
    assert _query(read_href("src/x.py", 1, 5000, None))["end"] == str(READ_MAX_LINES)


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ('    if x == "a#b":  # note', "a.py"),
        ("const re = /x/; // c", "a.ts"),
        ("fn main() { let s = 'a'; }", "a.rs"),
        ("  -- comment", "a.lua"),
        ('unclosed "string here', "a.go"),
        ("plain prose, with 'quotes'", "README.md"),
        ("", "a.py"),
    ],
)
def test_colours_add_nothing_to_a_line(line: str, path: str):
    assert "".join(text for _, text in tokens(line, path)) == line


def test_colours_name_what_a_line_shows():
    kinds = dict((text, kind) for kind, text in tokens('def load(self):  # "x"', "a.py"))
    assert kinds["def"] == "kw" and kinds["load"] == "def" and kinds['# "x"'] == "com"
    assert ("str", '"session expired"') in tokens('raise KeyError("session expired")', "a.py")
    assert ("num", "3600") in tokens("SESSION_TTL = 3600", "a.py")
    assert tokens("# heading", "a.md") == [("", "# heading")]


HEADERS = """include/widget.h:2-4 struct app::Widget (score 1.00)
2: class Widget {
3:   public:
4:   void draw() { this->paint(); }

include/point.h:1-1 struct point (score 0.90)
1: struct point { int this; int new; };"""


def test_a_headers_code_is_coloured_as_the_language_its_lines_say():
    """A ``.h`` header was coloured as C: a C++ one's ``public`` and ``this`` plain."""

    def keywords(lines: list) -> set[str]:
        return {p.text for line in lines if line.kind == "code" for p in line.pieces if p.kind == "t-kw"}

    lines = reply_lines(HEADERS, "packet", "repo")
    assert _text(lines) == HEADERS
    assert {"public", "this"} <= keywords(lines[:4])
    assert keywords(lines[5:]) == {"struct", "int"}
    read = read_lines(
        "include/widget.h:2-3 (of 6 lines)\n2: class Widget {\n3:   public:", "include/widget.h"
    )
    assert "public" in keywords(read)


def _hit(legs: dict, factors: dict, score: float) -> Hit:
    chunk = Chunk(
        path="a.py", start_line=1, end_line=2, text="def f():\n    pass", language="python", kind="function"
    )
    return Hit(1, chunk, score, legs, factors)


def test_explain_reads_back_what_hit_explain_writes():
    hit = _hit(
        {"lexical": (1, 30.7), "dense": (4, 0.8123), "symbol": (2, 1.0)},
        {
            "fused": 30.7,
            "prior": 1.0,
            "role": "source",
            "file": 6.01,
            "learned": 2.55,
            "moved": "file_tuned_best +0.78, chunk_terms -0.57, tuned_score +0.53",
            "spread": 0.8,
            "nth": 2,
        },
        0.636,
    )
    read = explain.parse(hit.explain())
    assert read is not None
    assert [(leg.name, leg.rank, leg.score) for leg in read.legs] == [
        ("lexical", 1, 30.7),
        ("dense", 4, 0.812),
        ("symbol", 2, 1.0),
    ]
    assert read.moved == (("file_tuned_best", 0.78), ("chunk_terms", -0.57), ("tuned_score", 0.53))
    assert (read.learned, read.score) == (2.55, 0.636)
    chart = explain.chart(read, explain.largest_move([read]))
    legs = [b for b in chart.bars if b.sign == "leg"]
    assert [b.width for b in legs] == [explain.BAR, explain.BAR / 4, explain.BAR / 2]
    up, down, _ = (b for b in chart.bars if b.sign != "leg")
    assert up.width == explain.BAR / 2 and up.x == chart.middle  # the largest move: half the bar, rightwards
    assert down.sign == "down" and down.x + down.width == pytest.approx(chart.middle)


def test_explain_without_legs_or_the_learned_model():
    read = explain.parse(_hit({}, {"fused": 2.0}, 2.0).explain())
    assert read is not None and (read.legs, read.moved, read.learned, read.score) == ((), (), None, 2.0)
    assert explain.parse("src/a.py:1-2 function f (score 1.00)") is None


def test_the_login_cookie_is_the_tokens_and_expires():
    token = "test-token-0123456789abcdef"
    value = session.session_value(token, now=1000)
    assert token not in value
    assert session.valid_session(token, value, now=1000 + session.SESSION_SECONDS - 1)
    assert not session.valid_session(token, value, now=1000 + session.SESSION_SECONDS + 1)
    assert not session.valid_session("another-token-0123456789", value, now=1000)
    expiry, mac = value.split(".")
    assert not session.valid_session(
        token, f"{int(expiry) + 100}.{mac}", now=1000
    )  # a later expiry is forged
    assert not session.valid_session(token, "garbage", now=1000)
    header = [(b"cookie", f"a=b; {session.COOKIE}={value}".encode())]
    assert session.cookie_of(header) == value
    assert session.cookie_of([(b"cookie", b'bad"cookie')]) is None
    made = session.set_cookie(value, secure=True).decode()
    assert "HttpOnly" in made and "SameSite=Strict" in made and made.endswith("Secure")


@pytest.mark.parametrize(
    ("wanted", "goes"),
    [
        ("/read?path=x", "/read?path=x"),
        ("//evil.example/x", "/search"),
        ("https://evil.example", "/search"),
        ("/\\evil", "/search"),
        ("/\t/evil.example", "/search"),
        ("/\n/evil.example", "/search"),
        (None, "/search"),
    ],
)
def test_a_login_leads_only_to_this_server(wanted: str | None, goes: str):
    assert _safe_next(wanted) == goes


def test_host_names_as_a_loopback_bind_checks_them():
    assert [host_name(h) for h in ("127.0.0.1:8765", "LOCALHOST", "[::1]:80", "evil.example:1")] == [
        "127.0.0.1",
        "localhost",
        "[::1]",
        "evil.example",
    ]


def test_the_repository_picker_offers_each_one_all_and_each_project(
    indexed_sample: tuple[Path, Path], tmp_path: Path
):
    root, _ = indexed_sample
    registry = tmp_path / "registry.toml"
    registry.write_text('[[repository]]\nname = "app"\nproject = "shop"\n')
    server = build_server({"app": root, "lib": root.parent}, remote=True, registry=registry)
    page = SearchPage(server, token=None, bearer_ok=lambda scope: False)
    assert page.choices == ["app", "lib", "*", "project:shop"]
