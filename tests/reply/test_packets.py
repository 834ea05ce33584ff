"""Evidence packets: trimming, merging, markers and the character budget."""

import json
import random

import pytest

from conftest import relay_source
from repolens.chunking import Chunk
from repolens.chunking.dispatch import chunk_file
from repolens.reply.packet import NO_MATCH, PacketOptions, render_packet
from repolens.reply.prose import prose_lines
from repolens.search.hits import Hit
from repolens.search.query import parse_query


def _chunk(path, start, lines, **kw):
    return Chunk(path, start, start + len(lines) - 1, "\n".join(lines), "python", id=f"{path}:{start}", **kw)


def _hit(chunk, score):
    return Hit(0, chunk, score)


def _filler(n, special=None, start=1):
    special = special or {}
    return [special.get(i, f"pass  # filler {i}") for i in range(start, start + n)]


def test_only_matching_lines_with_two_lines_of_context_and_markers():
    lines = _filler(20, {10: "def parse_url(s):"})
    packet = render_packet(
        "parseURL", [_hit(_chunk("a.py", 1, lines), 3.5)], parse_query("parseURL").tokens, PacketOptions()
    )
    assert packet.text == "\n".join(
        [
            "a.py:1-20 (score 3.50)",
            "... (lines 1-7 omitted)",
            "8: pass  # filler 8",
            "9: pass  # filler 9",
            "10: def parse_url(s):",
            "11: pass  # filler 11",
            "12: pass  # filler 12",
            "... (lines 13-20 omitted)",
        ]
    )


def test_definition_keeps_its_signature_line():
    lines = ["def outer():", *_filler(30, {20: "    token = parse_url(x)"}, start=2)]
    chunk = _chunk("a.py", 5, lines, kind="function", qualname="outer")
    text = render_packet(
        "parse_url", [_hit(chunk, 1.0)], parse_query("parse_url").tokens, PacketOptions()
    ).text
    assert text.splitlines()[:3] == [
        "a.py:5-35 function outer (score 1.00)",
        "5: def outer():",
        "... (lines 6-21 omitted)",
    ]


def test_hits_of_one_file_that_touch_are_merged_and_no_line_repeats():
    a = _chunk("a.py", 1, _filler(10, {9: "parse_url()"}))
    b = _chunk("a.py", 11, _filler(10, {12: "parse_url()"}, start=11))
    packet = render_packet(
        "parse_url", [_hit(a, 2.0), _hit(b, 1.0)], parse_query("parse_url").tokens, PacketOptions()
    )
    assert len(packet.rendered) == 1
    shown = [line.split(":")[0] for line in packet.text.splitlines()[1:] if not line.startswith("...")]
    assert shown == [str(n) for n in range(7, 15)]
    assert packet.rendered[0].block.start_line == 1 and packet.rendered[0].block.end_line == 20


def test_overlapping_windows_are_merged():
    a = _chunk("a.py", 1, _filler(80, {5: "parse_url()"}))
    b = _chunk("a.py", 65, _filler(80, {70: "parse_url()"}, start=65))
    packet = render_packet(
        "q", [_hit(a, 2.0), _hit(b, 1.0)], parse_query("parse_url").tokens, PacketOptions()
    )
    assert len(packet.rendered) == 1
    numbers = [int(x.split(":")[0]) for x in packet.text.splitlines()[1:] if not x.startswith("...")]
    assert len(numbers) == len(set(numbers))


def test_per_hit_cap_keeps_the_best_lines_and_names_the_follow_up_read():
    lines = [f"value_{i} = compute({i})  # {'x' * 60}" for i in range(1, 101)]
    lines[69] = "result = parse_url(url)  # the one line that matters"
    packet = render_packet(
        "parse_url compute",
        [_hit(_chunk("big.py", 1, lines), 1.0)],
        {"parseurl": 2.0, "pars": 2.0, "url": 2.0, "comput": 1.0},
        PacketOptions(hit_max_chars=1000, max_chars=6000),
    )
    text = packet.text.splitlines()
    assert len(packet.text) <= 1000
    assert text[-1] == "... (truncated at 1000 chars; use read_snippet big.py 1 100 to expand)"
    assert "70: result = parse_url(url)  # the one line that matters" in text
    numbered = [int(x.split(":")[0]) for x in text[1:-1] if not x.startswith("...")]
    assert numbered == sorted(numbered)
    markers = [x for x in text[1:-1] if x.startswith("... (line")]
    assert markers, "every stretch not shown is marked"


def test_a_best_line_about_as_long_as_the_per_hit_cap_is_shown_and_the_other_hits_follow():
    """Header, line and marker did not fit the per-hit cap: the packet fell
    back to its smallest form at any budget, the best line alone beside a
    budget marker and "2 more hits did not fit", at 50,000 characters."""
    wide = "TABLE = {" + ", ".join(f'"k{i:04d}": {i}' for i in range(290)) + "}  # zeppelin airship"
    lines = ["def load_table():", '    """Load the table."""', wide, "    return TABLE"]
    big = _chunk("big.py", 1, lines, kind="function", name="load_table", qualname="load_table")
    small = _chunk("small.py", 1, ["def small_helper():", '    return "zeppelin"'])
    notes = _chunk("notes.md", 1, ["# Notes", "", "The zeppelin is mentioned here."])
    packet = render_packet(
        "zeppelin airship",
        [_hit(big, 1.0), _hit(small, 0.5), _hit(notes, 0.4)],
        {"zeppelin": 1.0, "airship": 1.0},
        PacketOptions(hit_max_chars=4000, max_chars=50_000),
    )
    assert [r.block.path for r in packet.rendered] == ["big.py", "small.py", "notes.md"]
    assert f"3: {wide}" in packet.text.splitlines() and "did not fit" not in packet.text


def test_a_tiny_per_hit_cap_cuts_a_hit_to_its_best_line_not_shows_it_whole():
    """A cap under header plus marker (hit_max_chars may be 100) showed the
    whole hit: 43 lines, 2,098 characters."""
    lines = ["def render_widget(widget, context):"] + [
        f"    widget.render_step_{i}(context)" for i in range(40)
    ]
    packet = render_packet(
        "render widget",
        [_hit(_chunk("w.py", 1, lines), 1.0)],
        {"render": 1.0, "widget": 1.0},
        PacketOptions(hit_max_chars=100, max_chars=20_000),
    )
    (block,) = packet.rendered
    assert block.truncated and len(block.text) < 300, block.text


def test_a_keyword_hits_line_is_shown_first():
    """search --keyword: the hit held the keyword, and showed only its
    first lines, the keyword's line omitted."""
    lines = ["def frobnicate_widget(w):", '    """Frobnicate the widget."""']
    lines += [f"    w.step_{i} = {i}" for i in range(50)]
    lines.insert(43, "    w.secret_marker_value = 99")
    chunk = _chunk(
        "frob.py", 1, lines, kind="function", name="frobnicate_widget", qualname="frobnicate_widget"
    )
    weights = {"frobnic": 1.0, "widget": 1.0}
    plain = render_packet("frobnicate widget", [_hit(chunk, 1.0)], weights, PacketOptions(max_chars=6000))
    assert "secret_marker_value" not in plain.text
    wanted = PacketOptions(max_chars=6000, keywords=("secret_marker_value",))
    packet = render_packet("frobnicate widget", [_hit(chunk, 1.0)], weights, wanted)
    assert "44:     w.secret_marker_value = 99" in packet.text.splitlines()
    tight = PacketOptions(max_chars=6000, hit_max_chars=150, keywords=("secret_marker_value",))
    assert (
        "44:     w.secret_marker_value = 99"
        in render_packet("frobnicate widget", [_hit(chunk, 1.0)], weights, tight).text
    )


def test_a_line_the_index_holds_only_the_start_of_says_so_and_names_the_read():
    """A line over 6,000 characters (data, a minified bundle) is indexed by
    its first 6,000: shown so, it passed for the whole line."""
    from repolens.budget import INDEXED_LINE_CHARS

    start = 'BLOB = "zeppelin ' + "x" * (INDEXED_LINE_CHARS - 17)
    chunk = _chunk("data.py", 1, [start])
    assert len(chunk.text) == INDEXED_LINE_CHARS
    packet = render_packet("zeppelin", [_hit(chunk, 1.0)], {"zeppelin": 1.0}, PacketOptions(max_chars=20_000))
    lines = packet.text.splitlines()
    assert lines[1] == f"1: {start}"
    assert lines[2] == (
        "... (line 1 goes on past the 6000 chars the index holds; use read_snippet data.py 1 1 to read it)"
    )


def test_budget_cut_names_the_follow_up_read_and_lists_what_did_not_fit():
    lines = [f"parse_url({i})  # {'x' * 60}" for i in range(1, 101)]
    hits = [_hit(_chunk(f"f{i}.py", 1, lines), 10.0 - i) for i in range(5)]
    packet = render_packet(
        "parse_url", hits, parse_query("parse_url").tokens, PacketOptions(max_chars=1600, hit_max_chars=1200)
    )
    text = packet.text
    assert len(text) <= 1600
    assert "... (truncated at " in text  # the first hits get their share
    cut = packet.rendered[-1]
    assert cut.budget_cut
    assert cut.text == "\n".join(  # its best line, not just markers
        [
            "f3.py:1-100 (score 7.00)",
            lines[0].join(["1: ", ""]),
            "... (budget: 8104 chars omitted; use read_snippet f3.py 2 100 to expand)",
        ]
    )
    last = text.splitlines()[-1]
    assert last == "... 1 more hit did not fit: f4.py:1-100 (score 6.00)"


def test_a_hit_that_cannot_show_a_line_is_listed_not_shown_as_a_bare_header():
    lines = [f"parse_url({i})  # {'x' * 60}" for i in range(1, 101)]
    hits = [_hit(_chunk(f"f{i}.py", 1, lines), 10.0 - i) for i in range(5)]
    packet = render_packet(
        "parse_url", hits, parse_query("parse_url").tokens, PacketOptions(max_chars=1500, hit_max_chars=1200)
    )
    assert [r.block.path for r in packet.rendered] == ["f0.py", "f1.py", "f2.py"]
    assert all(r.text.splitlines()[1].startswith("1: ") for r in packet.rendered)
    assert packet.text.splitlines()[-1] == (
        "... 2 more hits did not fit: f3.py:1-100 (score 7.00), f4.py:1-100 (score 6.00)"
    )


def test_fair_shares_let_every_top_hit_fit():
    lines = [f"parse_url({i})  # {'x' * 60}" for i in range(1, 101)]
    hits = [_hit(_chunk(f"f{i}.py", 1, lines), 10.0 - i) for i in range(5)]
    packet = render_packet("parse_url", hits, parse_query("parse_url").tokens, PacketOptions())
    assert [r.block.path for r in packet.rendered] == [f"f{i}.py" for i in range(5)]
    assert not packet.omitted
    assert len(packet.text) <= 6000


def test_path_only_hit_is_a_pointer_and_only_without_text_hit_in_that_file():
    text_hit = _hit(_chunk("auth/session.py", 1, _filler(5, {2: "token()"})), 5.0)
    same_file = _hit(_chunk("auth/session.py", 50, _filler(5)), 4.0)
    other = _hit(_chunk("auth/README.md", 1, _filler(3)), 3.0)
    packet = render_packet(
        "session token", [text_hit, same_file, other], parse_query("session token").tokens, PacketOptions()
    )
    blocks = packet.text.split("\n\n")
    assert len(blocks) == 2
    assert blocks[1] == "auth/README.md:1-3 (path match only; use read_snippet auth/README.md 1 3)"


def test_no_match():
    assert render_packet("q", [], frozenset({"q"}), PacketOptions()).text == NO_MATCH


def test_json_form_carries_hits_and_omitted():
    lines = [f"parse_url({i}) {'y' * 80}" for i in range(1, 60)]
    hits = [_hit(_chunk(f"f{i}.py", 1, lines), 10.0 - i) for i in range(8)]
    packet = render_packet(
        "parse_url", hits, parse_query("parse_url").tokens, PacketOptions(max_chars=3000, top_k=8)
    )
    data = json.loads(json.dumps(packet.to_json()))
    assert [h["path"] for h in data["hits"]] == [r.block.path for r in packet.rendered]
    assert {"path", "start_line", "end_line", "score", "text"} <= set(data["hits"][0])
    assert [o["path"] for o in data["omitted"]] == [b.path for b in packet.omitted]
    assert data["omitted"], "a 3000-char budget cannot hold eight 5000-char hits"


@pytest.mark.parametrize("seed", range(40))
def test_reply_never_exceeds_budget_and_never_repeats_a_line(seed):
    rng = random.Random(seed)
    hits = []
    for i in range(rng.randint(1, 12)):
        path = f"p{rng.randint(0, 3)}.py"
        start = rng.randint(1, 300)
        n = rng.randint(1, 120)
        lines = [("parse_url " if rng.random() < 0.2 else "") + "z" * rng.randint(0, 200) for _ in range(n)]
        hits.append(_hit(_chunk(path, start, lines), 100.0 - i))
    opts = PacketOptions(
        top_k=rng.randint(1, 50), max_chars=rng.randint(200, 8000), hit_max_chars=rng.randint(100, 4000)
    )
    packet = render_packet("parse_url", hits, parse_query("parse_url").tokens, opts)
    assert len(packet.text) <= opts.max_chars
    seen = set()
    for r in packet.rendered:
        for line in r.text.splitlines()[1:]:
            head = line.split(": ", 1)[0]
            if head.isdigit():
                key = (r.block.path, int(head))
                assert key not in seen
                seen.add(key)


def test_a_long_name_is_cut_in_the_header_and_kept_whole_in_json():
    name = "Guide > " + " > ".join(f'<a name="TOC-{i}"></a>Section {i}' for i in range(4))
    chunk = _chunk("docs/guide.md", 1, ["# Guide", "parse_url"], kind="section", qualname=name)
    packet = render_packet("parse_url", [_hit(chunk, 1.0)], parse_query("parse_url").tokens, PacketOptions())
    assert packet.text.splitlines()[0] == f"docs/guide.md:1-2 section {name[:77]}... (score 1.00)"
    assert packet.to_json()["hits"][0]["qualname"] == name


@pytest.mark.parametrize("max_chars", [200, 250, 300])
def test_a_small_budget_shows_the_best_hits_first_lines_before_the_trailer(max_chars):
    lines = [f"parse_url({i})  # {'x' * 20}" for i in range(1, 40)]
    hits = [_hit(_chunk(f"src/pkg/module{i}.py", 1, lines), 10.0 - i) for i in range(5)]
    packet = render_packet(
        "parse_url", hits, parse_query("parse_url").tokens, PacketOptions(max_chars=max_chars)
    )
    text = packet.text.splitlines()
    assert len(packet.text) <= max_chars
    assert text[0] == "src/pkg/module0.py:1-39 (score 10.00)"
    assert text[1] == f"1: parse_url(1)  # {'x' * 20}"
    assert text[-1] == "... 4 more hits did not fit"


def test_the_trailer_names_what_fits_and_counts_the_rest():
    hits = [_hit(_chunk(f"src/f{i}.py", 1, [f"parse_url({i})" * 30] * 3), 10.0 - i) for i in range(5)]
    packet = render_packet(
        "parse_url", hits, parse_query("parse_url").tokens, PacketOptions(max_chars=900, fair_share=False)
    )
    assert packet.text.splitlines()[-1] == (
        "... 4 more hits did not fit: src/f1.py:1-3 (score 9.00), src/f2.py:1-3 (score 8.00), "
        "src/f3.py:1-3 (score 7.00), src/f4.py:1-3 (score 6.00)"
    )


def test_a_split_definition_merged_back_keeps_its_name():
    head = "    def url_for(self, endpoint):"
    one = _filler(60, {1: head, 58: "        url = build_url(endpoint)"})
    two = [head, *_filler(60, {61: "        return build_url(url)"}, start=61)]  # part 2 repeats the header
    hits = [
        _hit(_chunk("app.py", 1, one, kind="method", qualname="Flask.url_for"), 5.0),
        _hit(
            Chunk("app.py", 61, 120, "\n".join(two), "python", kind="method", qualname="Flask.url_for"),
            4.0,
        ),
    ]
    packet = render_packet("build_url", hits, parse_query("build_url").tokens, PacketOptions())
    assert [r.block.header() for r in packet.rendered] == ["app.py:1-120 method Flask.url_for (score 5.00)"]
    assert packet.to_json()["hits"][0]["kind"] == "method"


def test_a_block_merged_from_several_definitions_names_them_best_first():
    hits = [
        _hit(_chunk("app.py", 11, _filler(10, {12: "build_url()"}, 11), kind="method", qualname="A.b"), 5.0),
        _hit(_chunk("app.py", 1, _filler(10, {9: "build_url()"}), kind="function", qualname="a"), 4.0),
    ]
    packet = render_packet("build_url", hits, parse_query("build_url").tokens, PacketOptions())
    assert packet.rendered[0].block.header() == "app.py:1-20 merged A.b, a (score 5.00)"


def test_a_block_merged_from_packed_chunks_names_three_definitions_and_counts_the_rest():
    packed = {"kind": "function", "qualname": "f1, f2, f3 (+2 more)"}
    hits = [
        _hit(_chunk("app.py", 11, _filler(10, {12: "build_url()"}, 11), kind="method", qualname="A.b"), 5.0),
        _hit(_chunk("app.py", 1, _filler(10, {9: "build_url()"}), **packed), 4.0),
    ]
    packet = render_packet("build_url", hits, parse_query("build_url").tokens, PacketOptions())
    assert packet.rendered[0].block.header() == "app.py:1-20 merged A.b, f1, f2 (+3 more) (score 5.00)"


def test_a_cut_definition_shows_the_code_that_matches_before_its_docstring():
    lines = [
        "def register(self, app, options):",
        '    """Called by register_blueprint to register all views and callbacks',
        "    registered on the blueprint with the application, and each record",
        "    callback registered on the blueprint. A blueprint registered twice",
        "    under one name is an error: register it under another name.",
        '    """',
        *_filler(30, start=7),
        "    app.blueprints[name] = self  # the registration itself",
        *_filler(30, start=38),
    ]
    chunk = _chunk("bp.py", 1, lines, kind="method", qualname="Blueprint.register")
    weights = {"regist": 1.0, "blueprint": 1.0}
    packet = render_packet(
        "blueprint register", [_hit(chunk, 1.0)], weights, PacketOptions(hit_max_chars=350)
    )
    text = packet.text.splitlines()
    assert "37:     app.blueprints[name] = self  # the registration itself" in text
    assert text[1] == "1: def register(self, app, options):"


@pytest.mark.parametrize(
    ("language", "source", "prose"),
    [
        (
            "python",
            'def f():\n    """Doc\n    more."""\n    x = 1  # trailing\n    # note\n    return x',
            {1, 2, 4},
        ),
        ("python", "def f():\n    '''One line.'''\n    s = '''not a docstring\n    '''", {1}),
        (
            "rust",
            "/// Doc.\n#[derive(Debug)]\nstruct S; // trailing\n/* a\n * b\n */\nfn f() {}",
            {0, 3, 4, 5},
        ),
        ("c", "#include <x.h>\n// c\nint *p = q; /* x */\n*p = 1;", {1}),
        ("lua", "--[[ a\nb ]]\nlocal x = 1 -- one\n-- c", {0, 1, 3}),
        ("markdown", "# Title\n\ntext", set()),
    ],
)
def test_prose_lines_are_comments_and_docstrings_not_code(language, source, prose):
    assert prose_lines(source.split("\n"), language) == prose


# -- the next files after the hits ---------------------------------------------


def _entries(paths):
    from repolens.reply.files import FileEntry

    return [
        FileEntry(
            path=p,
            score=10.0 - i,
            hits=1,
            terms=("url",),
            terms_total=2,
            defines=(),
            role="source",
            best=(3, 9),
        )
        for i, p in enumerate(paths)
    ]


def test_a_packet_names_the_next_files_after_its_hits_as_one_line_pointers():
    hits = [_hit(_chunk(f"h{i}.py", 1, ["def parse_url(s):", "    pass"]), 5.0 - i) for i in range(3)]
    files = _entries(["h0.py", "n1.py", "h1.py", "n2.py", "n3.py", "n4.py"])
    opts = PacketOptions(cite_files=5, files=lambda named: files)
    packet = render_packet("parse_url", hits, parse_query("parse_url").tokens, opts)
    tail = packet.text.split("\n\n")[-1].splitlines()
    assert tail == [
        "next files (read_snippet PATH START END to read one):",
        "n1.py:3-9 (1 of 2 terms, source file)",
        "n2.py:3-9 (1 of 2 terms, source file)",
    ], "files the hits already name are skipped; five files are named in all"
    assert packet.to_json()["next_files"] == [
        {"path": "n1.py", "start_line": 3, "end_line": 9, "reason": "1 of 2 terms, source file"},
        {"path": "n2.py", "start_line": 3, "end_line": 9, "reason": "1 of 2 terms, source file"},
    ]


def test_pointers_take_a_small_share_of_the_budget_and_none_when_off():
    hits = [_hit(_chunk("a.py", 1, ["def parse_url(s):", *_filler(200)]), 5.0)]
    files = _entries([f"pkg/module_{i}.py" for i in range(20)])
    tokens = parse_query("parse_url").tokens
    small = render_packet(
        "parse_url", hits, tokens, PacketOptions(max_chars=1000, cite_files=20, files=lambda named: files)
    )
    assert len(small.text) <= 1000
    pointer_chars = len(small.text.split("\n\n")[-1])
    assert 0 < len(small.pointers) < 19 and pointer_chars <= 150, "at most 15% of the budget"
    off_opts = PacketOptions(max_chars=1000, cite_files=0, files=lambda named: files)
    off = render_packet("parse_url", hits, tokens, off_opts)
    assert not off.pointers and "next files" not in off.text


@pytest.mark.parametrize("open_end", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_a_cut_block_is_sized_exactly_as_it_is_written(seed, open_end):
    """The per-hit cap decides line by line from sizes computed without
    building the text; they must be the written text's, or a cut block
    would keep fewer lines than fit (or overrun its share). Cut by the
    packet's budget (``open_end``), the stretch that ends the span is the
    budget marker's, not written as an omission."""
    from repolens.reply.block import Block, BodySize, body_lines

    rng = random.Random(seed)
    start = rng.randint(1, 500)
    numbers = sorted(rng.sample(range(start, start + 80), rng.randint(1, 40)))
    lines = tuple((n, "x" * rng.randint(0, 30)) for n in numbers)
    block = Block("a.py", start, start + 80 + rng.randint(0, 5), 1.0, "function", "f", ("c",), lines)
    sizes = {n: len(f"{n}: {text}") for n, text in lines}

    def written(keep: set[int]) -> int:
        pieces = body_lines(block, keep)
        if open_end and max(keep, default=start - 1) < block.end_line:
            pieces.pop()
        return len("".join("\n" + piece for piece in pieces))

    body = BodySize(block, sizes, open_end=open_end)
    assert body.size == written(set())
    for _ in range(10):  # a kept set grows as _fit grows it: groups, some overlapping what is kept
        group = set(rng.sample(numbers, rng.randint(0, min(6, len(numbers)))))
        assert body.with_lines(group) == written(body.keep | group)
        if rng.random() < 0.7:
            body.add(group)
            assert body.size == written(body.keep)


@pytest.mark.parametrize("max_chars", [300, 500, 1000, 6000])
def test_a_method_packed_after_a_blank_line_shows_its_def_line_when_cut(max_chars):
    """The chunk starts with a blank line, then the method: the block names
    the method and shows its ``def`` line (not the blank line) with the match."""
    (chunk,) = [c for c in chunk_file("relay.py", relay_source(), "python").chunks if c.start_line == 156]
    query = "log debug"
    packet = render_packet(
        query, [_hit(chunk, 2.0)], parse_query(query).tokens, PacketOptions(max_chars=max_chars)
    )
    lines = packet.text.splitlines()
    assert len(packet.text) <= max_chars
    assert lines[0] == "relay.py:156-179 method Relay.refresh_credentials (score 2.00)"
    assert "157:     def refresh_credentials(" in lines
    assert "178:         log.debug('credentials refreshed for %s', message.origin)" in lines


_NOTE = "1 cited file changed since indexing; `repolens index` refreshes the index"


@pytest.mark.parametrize("max_chars", [200, 300, 500, 1000])
def test_the_best_hits_best_line_fits_at_every_budget(max_chars):
    """Notes, pointers to the next files and a long header before it: the
    best line of the best hit still shows (and its header), and the packet
    keeps to its budget."""
    best = "    return self.session_cookie_name  # where the session cookie is named"
    lines = _filler(60, {1: "def get_cookie_name(self):", 45: best, 50: "    session = 1"}, start=1)
    name = "Application.configuration.sessions.SecureCookieSessionInterface.get_cookie_name"
    first = _chunk("src/flask/sessions/secure_cookie_interface.py", 100, lines, kind="method", qualname=name)
    others = [
        _hit(_chunk(f"src/flask/module_{i}.py", 1, _filler(40, {20: "session cookie"})), 5.0 - i)
        for i in range(4)
    ]
    files = _entries([f"src/flask/next_{i}.py" for i in range(10)])
    query = "where is the session cookie named"
    opts = PacketOptions(max_chars=max_chars, notes=[_NOTE, _NOTE], files=lambda named: files)
    packet = render_packet(query, [_hit(first, 9.0), *others], dict(parse_query(query).weighted()), opts)
    text = packet.text.splitlines()
    assert len(packet.text) <= max_chars
    assert f"144: {best}" in text
    header = [line for line in text if line.startswith("src/flask/sessions/")]
    assert header and header[0].startswith("src/flask/sessions/secure_cookie_interface.py:100-159 ")


@pytest.mark.parametrize("max_chars", [6050, 6100, 6120])
def test_a_line_the_index_cut_keeps_its_marker_whole_at_a_budget_just_under_both(max_chars: int):
    """The packet's smallest form (a header and the best line) cut the marker
    of a line the index holds only the start of mid-word, or left it out."""
    from repolens.budget import INDEXED_LINE_CHARS, line_cut_marker

    start = 'BLOB = "zeppelin ' + "x" * (INDEXED_LINE_CHARS - 17)
    chunk = _chunk("data.py", 1, [start])
    packet = render_packet(
        "zeppelin", [_hit(chunk, 1.0)], {"zeppelin": 1.0}, PacketOptions(max_chars=max_chars)
    )
    assert len(packet.text) <= max_chars
    lines = packet.text.splitlines()
    assert lines[1].startswith("1: BLOB") and lines[1].endswith("...")
    assert lines[2] == line_cut_marker("data.py", 1, INDEXED_LINE_CHARS)
