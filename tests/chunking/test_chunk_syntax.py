"""Syntax-aware chunking: definitions, qualified names, coverage, splits, failures.

Each fixture under ``tests/chunking/fixtures/`` is one small, realistic file per
language; the chunks (range, kind, qualname) and symbols (kind, qualname) it
yields are asserted exactly against ``expected.json``: they are what search
results show.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from conftest import relay_source
from repolens.chunking import dispatch
from repolens.chunking.chunker import ChunkedFile
from repolens.chunking.dispatch import chunk_file, chunking_config
from repolens.chunking.grammars import KINDS, SPECS, available_languages, grammar_versions
from repolens.chunking.labels import repeated_header_lines
from repolens.chunking.languages import language_for, language_of
from repolens.chunking.syntax import SyntaxChunker, supports
from repolens.chunking.text import MAX_CHARS, MAX_LINES
from repolens.lines import source_lines

FIXTURES = Path(__file__).parent / "fixtures"

# file -> {"chunks": [[start, end, kind, qualname], ...], "symbols": [[kind, qualname], ...]}
EXPECTED: dict[str, dict[str, list[list]]] = json.loads((FIXTURES / "expected.json").read_text())


# The fixtures pin one chunk per definition: packing of small neighbours
# (the default merges definitions of up to 30 lines) is tested on its own.
DEFINITION_GRAIN = 2


def _chunk(name: str, text: str) -> ChunkedFile:
    return chunk_file(name, text, language_of(name, text), merge_lines=DEFINITION_GRAIN)


def _assert_tiles(result: ChunkedFile, text: str) -> None:
    """Chunks cover every line, in order, without overlap; texts are the lines
    (the head of a line longer than ``MAX_CHARS``)."""
    lines = source_lines(text)
    expect = 1
    for c in result.chunks:
        assert c.start_line == expect, (c.start_line, expect, c.kind, c.qualname)
        assert c.end_line >= c.start_line
        body = c.text.split("\n")[repeated_header_lines(c) :]
        if len(lines[c.start_line - 1]) <= MAX_CHARS:
            assert body == lines[c.start_line - 1 : c.end_line]
        else:
            assert c.start_line == c.end_line and body == [lines[c.start_line - 1][:MAX_CHARS]]
        assert c.end_line - c.start_line + 1 <= MAX_LINES
        expect = c.end_line + 1
    assert expect == len(lines) + 1


def _assert_covers(result: ChunkedFile, text: str) -> None:
    n = len(source_lines(text))
    covered = bytearray(n + 1)
    for c in result.chunks:
        assert 1 <= c.start_line <= c.end_line <= n
        covered[c.start_line : c.end_line + 1] = b"\1" * (c.end_line - c.start_line + 1)
    assert covered[1:] == b"\1" * n


def test_every_spec_language_loads_from_its_wheel() -> None:
    assert available_languages() == sorted(SPECS)
    assert len(SPECS) >= 20


def test_grammar_versions_are_what_importlib_metadata_reports() -> None:
    """The index fingerprint reads wheel METADATA directly; it must agree
    with importlib.metadata, or every existing index would be rebuilt."""
    from importlib import metadata

    versions = grammar_versions()
    assert [pkg for pkg, _ in versions] == sorted({"tree-sitter", *(s.package for s in SPECS.values())})
    assert all(version == metadata.version(pkg) for pkg, version in versions)


def test_every_fixture_has_expectations() -> None:
    names = {p.name for p in FIXTURES.iterdir() if language_for(p.name) not in ("markdown", "json")}
    assert names == set(EXPECTED)
    assert {language_for(n) for n in names} == set(SPECS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_chunks_and_symbols(name: str) -> None:
    text = (FIXTURES / name).read_text()
    result = _chunk(name, text)
    assert not result.parse_error
    assert [[c.start_line, c.end_line, c.kind, c.qualname] for c in result.chunks] == EXPECTED[name]["chunks"]
    assert [[s.kind, s.qualname] for s in result.symbols] == EXPECTED[name]["symbols"]
    assert all(s.path == name and s.language == language_for(name) for s in result.symbols)
    _assert_tiles(result, text)


def _symbol(result: ChunkedFile, qualname: str):
    (sym,) = [s for s in result.symbols if s.qualname == qualname]
    return sym


def test_decorators_and_doc_comments_start_the_definition() -> None:
    py = _chunk("sample.py", (FIXTURES / "sample.py").read_text())
    empty = _symbol(py, "Bucket.empty")
    assert (empty.start_line, empty.signature) == (30, "def empty(self) -> bool")
    bucket = _symbol(py, "Bucket")
    assert (bucket.start_line, bucket.end_line) == (17, 36)  # from @dataclass
    rs = _chunk("sample.rs", (FIXTURES / "sample.rs").read_text())
    assert _symbol(rs, "Entry").start_line == 7  # /// doc, then #[derive]
    assert _symbol(rs, "Cache::len").start_line == 33  # #[inline]
    java = _chunk("Sample.java", (FIXTURES / "Sample.java").read_text())
    assert _symbol(java, "JsonWriter.value").start_line == 16  # javadoc before @Override
    ts = _chunk("sample.ts", (FIXTURES / "sample.ts").read_text())
    assert _symbol(ts, "App.get").start_line == 19  # @logged
    ex = _chunk("sample.ex", (FIXTURES / "sample.ex").read_text())
    assert _symbol(ex, "MyApp.Accounts.create").start_line == 14  # @doc and @spec


def test_signature_parent_and_doc_are_carried() -> None:
    go = _chunk("sample.go", (FIXTURES / "sample.go").read_text())
    start = next(c for c in go.chunks if c.qualname == "(*Server).Start")
    assert start.signature == "func (s *Server) Start(ctx context.Context) error"
    assert start.parent == "Server"
    assert start.doc == "Start starts listening."
    py = _chunk("sample.py", (FIXTURES / "sample.py").read_text())
    take = _symbol(py, "Bucket.take")
    assert take.parent == "Bucket"
    assert take.signature == "def take(self, n: int = 1) -> bool"
    fetch = next(c for c in py.chunks if c.qualname == "fetch")
    assert fetch.signature == "async def fetch(url: str, timeout: float = 5.0) -> bytes"
    bucket = next(c for c in py.chunks if c.qualname == "Bucket")
    assert bucket.doc == "A bucket that refills at ``rate`` tokens per second."
    java = _chunk("Sample.java", (FIXTURES / "Sample.java").read_text())
    assert java.chunks[1].doc == "Serializes values to JSON."


def _big_function(n: int) -> str:
    body = "".join(f"    x{i} = compute({i})\n" for i in range(n))
    return f'def big(a, b):\n    """Many steps."""\n{body}    return a\n'


def test_big_function_is_split_into_parts_that_repeat_its_header() -> None:
    text = "import os\n\n\n" + _big_function(300) + "\n\ndef small():\n    return 1\n"
    result = _chunk("big.py", text)
    parts = [c for c in result.chunks if c.qualname == "big"]
    assert len(parts) == 3
    assert all(c.kind == "function" and c.signature == "def big(a, b)" for c in parts)
    assert parts[0].start_line == 4 and repeated_header_lines(parts[0]) == 0
    for p in parts[1:]:
        assert repeated_header_lines(p) == 1
        assert p.text.startswith("def big(a, b):\n    x")
    assert [s.qualname for s in result.symbols] == ["big", "small"]
    _assert_tiles(result, text)


def test_big_function_with_long_lines_is_split_by_characters() -> None:
    body = "".join(f"    s{i} = '{'y' * 200}'\n" for i in range(60))
    text = f"def wide():\n{body}"
    result = _chunk("wide.py", text)
    assert len(result.chunks) >= 3
    assert all(len(c.text) <= MAX_CHARS for c in result.chunks)
    _assert_tiles(result, text)


def test_a_line_longer_than_the_bound_keeps_only_its_head() -> None:
    # A notebook's image output: one line of base64, ~140 chunks' worth.
    blob = "iVBORw0KGgoAAAANSUhEUgAAA" + "QmCC9x/+" * 100_000
    text = f'def plot():\n    """Seasonal means."""\n    return "{blob}"\n\n\ndef after():\n    return 1\n'
    result = _chunk("nb.py", text)
    long_line = text.split("\n")[2]
    assert [c.text for c in result.chunks if c.start_line <= 3 <= c.end_line] == [long_line[:MAX_CHARS]]
    assert [s.qualname for s in result.symbols] == ["plot", "after"]
    _assert_tiles(result, text)


def test_a_long_line_in_a_file_without_grammar_keeps_only_its_head() -> None:
    text = "cell one\n" + "A" * (3 * MAX_CHARS) + "\ncell three\n"
    result = chunk_file("notebook.ipynb", text, language_for("notebook.ipynb"))
    assert [(c.start_line, c.end_line, len(c.text)) for c in result.chunks] == [
        (1, 1, 8),
        (2, 2, MAX_CHARS),
        (3, 3, 10),
    ]


def _big_class(methods: int) -> str:
    out = ['class Store:\n    """Keeps things."""\n\n    limit = 10\n']
    for i in range(methods):
        out.append(
            f"\n    def m{i}(self, x):\n"
            + "".join(f"        x += {j}\n" for j in range(8))
            + "        return x\n"
        )
    return "".join(out)


def test_big_class_splits_into_header_and_one_chunk_per_method() -> None:
    text = _big_class(20)
    result = _chunk("store.py", text)
    head = result.chunks[0]
    assert (head.kind, head.qualname, head.start_line, head.end_line) == ("class", "Store", 1, 5)
    assert head.doc == "Keeps things."
    methods = result.chunks[1:]
    assert [c.qualname for c in methods] == [f"Store.m{i}" for i in range(20)]
    assert all(c.kind == "method" and c.parent == "Store" for c in methods)
    _assert_tiles(result, text)


def test_small_class_stays_one_chunk_with_its_methods() -> None:
    text = _big_class(2)
    result = _chunk("store.py", text)
    assert [(c.kind, c.qualname) for c in result.chunks] == [("class", "Store")]
    assert [s.qualname for s in result.symbols] == ["Store", "Store.m0", "Store.m1"]


def test_one_line_definitions_are_packed_and_each_is_a_symbol() -> None:
    text = (
        "package k\n\n"
        + "".join(f"const C{i} = {i}\n" for i in range(30))
        + "\nfunc F() {\n\tg()\n\th()\n}\n"
    )
    result = _chunk("k.go", text)
    assert [(c.kind, c.qualname) for c in result.chunks] == [
        ("block", "C0, C1, C2 (+27 more)"),
        ("function", "F"),
    ]
    assert [s.qualname for s in result.symbols] == [f"C{i}" for i in range(30)] + ["F"]


def test_grouped_go_declarations_name_each_member() -> None:
    text = "package k\n\nconst (\n\tA = 1\n\tB = 2\n)\n\ntype (\n\tP struct{}\n\tQ interface{}\n)\n"
    result = _chunk("k.go", text)
    assert [(s.kind, s.qualname, s.start_line) for s in result.symbols] == [
        ("constant", "A", 4),
        ("constant", "B", 5),
        ("struct", "P", 9),
        ("interface", "Q", 10),
    ]


def test_csharp_properties_indexers_and_events_are_members_of_their_class() -> None:
    """A property, an expression-bodied one, an indexer and an event were no symbols:
    `symbols Total` found nothing, and their uses had no definition to resolve to."""
    text = (
        "namespace Acme.Shop\n"
        "{\n"
        "    public class Cart\n"
        "    {\n"
        "        public decimal Total { get; set; }\n"  # 5
        "        public int Count => items.Count;\n"
        "        public string this[int i] => items[i];\n"
        "        public event EventHandler Changed, Cleared;\n"
        "        public event EventHandler Saved { add { } remove { } }\n"
        "        public string Label\n"  # 10
        "        {\n"
        "            get { return Name(); }\n"
        "        }\n"
        '        string Name() => "n";\n'
        "    }\n"
        "}\n"
    )
    result = _chunk("Cart.cs", text)
    assert [(s.kind, s.qualname, s.start_line, s.end_line, s.signature) for s in result.symbols[2:]] == [
        ("method", "Acme.Shop.Cart.Total", 5, 5, "public decimal Total"),
        ("method", "Acme.Shop.Cart.Count", 6, 6, "public int Count"),
        ("method", "Acme.Shop.Cart.this", 7, 7, "public string this[int i]"),
        ("method", "Acme.Shop.Cart.Changed", 8, 8, "public event EventHandler Changed, Cleared;"),
        ("method", "Acme.Shop.Cart.Cleared", 8, 8, "public event EventHandler Changed, Cleared;"),
        ("method", "Acme.Shop.Cart.Saved", 9, 9, "public event EventHandler Saved"),
        ("method", "Acme.Shop.Cart.Label", 10, 13, "public string Label"),
        ("method", "Acme.Shop.Cart.Name", 14, 14, "string Name()"),
    ]
    assert all(s.parent == "Acme.Shop.Cart" for s in result.symbols[2:])
    _assert_tiles(result, text)


def test_editing_one_function_keeps_the_other_chunk_ids() -> None:
    text = (FIXTURES / "sample.go").read_text()
    before = {c.qualname: c.id for c in _chunk("sample.go", text).chunks}
    edited = text.replace("return s.srv.ListenAndServe()", "log.Print(ctx)\n\treturn s.srv.ListenAndServe()")
    after = {c.qualname: c.id for c in _chunk("sample.go", edited).chunks}
    assert before.keys() == after.keys()
    changed = {q for q in before if before[q] != after[q]}
    assert changed == {"(*Server).Start"}
    # lines added above move everything below without changing ids
    shifted = {c.qualname: c.id for c in _chunk("sample.go", "// Copyright\n\n" + text).chunks}
    assert {q: shifted[q] for q in before if q != "defaultAddr"} == {
        q: i for q, i in before.items() if q != "defaultAddr"
    }


def test_ids_are_unique_within_a_file() -> None:
    text = "def f():\n    pass\n\n\n" * 3
    ids = [c.id for c in _chunk("dup.py", text).chunks]
    assert len(ids) == len(set(ids))


def test_unparsable_file_falls_back_to_windows_with_parse_error() -> None:
    text = "".join(f"}} ) def class ::: {i} (((\n" for i in range(200))
    result = _chunk("broken.py", text)
    assert result.parse_error
    assert {c.kind for c in result.chunks} == {"window"}
    _assert_covers(result, text)


@pytest.mark.parametrize(
    ("name", "head", "tail", "symbols"),
    [
        (
            "mixed.py",
            "def ok():\n    return 1\n\n\nclass Broken:\n",
            "\n\ndef fine(x):\n    return x\n",
            ["ok", "fine"],
        ),
        # tree-sitter-typescript 0.23 loses a whole file so to one interface (hono's src/types.ts)
        (
            "types.ts",
            "export type A = string\n\nexport interface Broken {\n",
            "}\n\nexport type B<T> = T\n",
            ["A", "B"],
        ),
    ],
)
def test_a_file_most_of_which_fails_keeps_the_definitions_around_the_part_that_fails(
    name: str, head: str, tail: str, symbols: list[str]
) -> None:
    broken = "".join(f"    ) ) ( ( ::: {i} ;; ((\n" for i in range(200))
    text = head + broken + tail
    result = _chunk(name, text)
    assert result.parse_error  # said: part of the file is chunked as plain blocks
    assert [s.qualname for s in result.symbols] == symbols
    assert [c.qualname for c in result.chunks if c.kind != "block"] == symbols
    _assert_tiles(result, text)


def test_a_typescript_interface_with_call_signatures_one_per_line_is_read_whole() -> None:
    # tree-sitter-typescript reads a call signature starting a line as the type before it called
    overloads = "".join(
        f"  // overload {i}\n  <\n    P{i} extends string = string\n  >(\n    h: H{i}\n  ): R{i}\n\n"
        for i in range(40)
    )
    text = (
        "export type A = string\n\nexport interface Handlers {\n" + overloads + "}\n\nexport type B<T> = T\n"
    )
    result = _chunk("types.ts", text)
    assert not result.parse_error
    assert [s.qualname for s in result.symbols] == ["A", "Handlers", "B"]
    _assert_tiles(result, text)


def test_small_syntax_errors_keep_definitions() -> None:
    text = "def ok():\n    return 1\n\n\nprint 'py2'\n\n\ndef fine(x):\n    y = x\n    return y\n"
    result = _chunk("mixed.py", text)
    assert not result.parse_error
    assert [s.qualname for s in result.symbols] == ["ok", "fine"]
    _assert_tiles(result, text)


def test_parse_timeout_falls_back_to_windows() -> None:
    text = _big_function(2000)
    result = SyntaxChunker(timeout=0.0).chunk("slow.py", text, "python")
    assert result.parse_error
    assert {c.kind for c in result.chunks} == {"window"}


def test_file_over_the_size_cap_is_windowed_without_parsing() -> None:
    text = _big_function(50)
    result = SyntaxChunker(max_bytes=100).chunk("big.py", text, "python")
    assert not result.parse_error
    assert {c.kind for c in result.chunks} == {"window"}


def test_chunk_file_never_raises_on_a_failing_chunker(monkeypatch: pytest.MonkeyPatch) -> None:
    class Boom:
        name, version = "boom", 1

        def chunk(self, path: str, text: str, language: str) -> ChunkedFile:
            raise RuntimeError("grammar crashed")

    monkeypatch.setattr(dispatch, "chunker_for", lambda language: Boom())
    result = chunk_file("a.py", "x = 1\ny = 2\n", "python")
    assert result.parse_error
    assert [(c.start_line, c.end_line, c.kind) for c in result.chunks] == [(1, 2, "window")]
    assert result.chunks[0].id


def test_languages_without_grammar_get_windows() -> None:
    text = "".join(f"line {i}\n" for i in range(100))
    result = chunk_file("data.txt", text, "text")
    assert not supports("text")
    assert {c.kind for c in result.chunks} == {"window"}
    _assert_covers(result, text)


def test_header_parsed_as_cpp_when_c_fails() -> None:
    """A header given as C (its text not telling) that fails as C is parsed as C++."""
    text = (
        "#pragma once\nnamespace ns {\nclass Box {\npublic:\n"
        "  int size() const { return n; }\n  int n;\n};\n}\n"
    )
    result = chunk_file("box.h", text, "c", merge_lines=DEFINITION_GRAIN)
    assert [(s.kind, s.qualname) for s in result.symbols] == [
        ("module", "ns"),
        ("class", "ns::Box"),
        ("method", "ns::Box::size"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "class Widget { public: void draw(); };\n",
        "namespace app {\nstruct Widget final {\n  void draw() { paint(); }\n};\n}\n",
        "#include <vector>\nstruct Widget { std::vector<int> parts; };\n",
        "template <typename T>\nT twice(T x) { return x + x; }\n",
        "struct Widget : Base {\n  int n;\n};\n",
    ],
)
def test_a_cpp_header_named_h_is_read_as_cpp(text: str) -> None:
    """A ``.h`` file was always C: ``class Widget {...}`` a function, the
    word ``class`` a type used, a method in a namespace no symbol."""
    result = _chunk("include/widget.h", text)
    assert {c.language for c in result.chunks} == {"cpp"}
    assert {s.language for s in result.symbols} == {"cpp"}
    assert "Widget" not in {s.qualname for s in result.symbols if s.kind == "function"}
    rows = result.refs.text if result.refs else ""
    assert "class\t" not in rows and "namespace\t" not in rows


def test_a_cpp_headers_class_and_methods_are_symbols() -> None:
    text = "namespace app {\nstruct Widget final {\n  void draw() { paint(); }\n};\n}\n"
    result = _chunk("widget.h", text)
    assert [(s.kind, s.qualname) for s in result.symbols] == [
        ("module", "app"),
        ("struct", "app::Widget"),
        ("method", "app::Widget::draw"),
    ]


def test_a_cpp_method_declared_in_its_class_and_a_header_s_prototype_are_symbols() -> None:
    """``void draw();`` in a class's body, and ``Widget make_widget(int);`` in a header, were
    no symbols: a header-only API had none for its methods. Each is now named as its
    definition is (``Widget::draw``); a field, a pointer to a function, and a prototype in a
    source file (a forward declaration) are none, and the class is still one chunk."""
    text = (
        "#pragma once\n"
        "namespace ui {\n"
        "class Widget {\n"
        " public:\n"
        "  Widget();\n"  # 5
        "  ~Widget();\n"
        "  void draw();\n"
        "  static Widget create();\n"
        "  int size() const;\n"
        "  Widget& operator=(const Widget&);\n"  # 10
        "  template <typename T> T get() const;\n"
        "  int count = 0;\n"
        "  void (*on_draw)(int);\n"
        "};\n"
        "Widget make_widget(int);\n"  # 15
        "}\n"
        'extern "C" int helper(int a);\n'
    )
    result = chunk_file("widget.hpp", text, "cpp")
    assert [(s.kind, s.qualname, s.start_line) for s in result.symbols] == [
        ("module", "ui", 2),
        ("class", "ui::Widget", 3),
        ("method", "ui::Widget::Widget", 5),
        ("method", "ui::Widget::~Widget", 6),
        ("method", "ui::Widget::draw", 7),
        ("method", "ui::Widget::create", 8),
        ("method", "ui::Widget::size", 9),
        ("method", "ui::Widget::operator=", 10),
        ("method", "ui::Widget::get", 11),
        ("function", "ui::make_widget", 15),
        ("function", "helper", 17),
    ]
    assert [(c.kind, c.qualname) for c in result.chunks] == [("block", "ui, helper")]  # packed
    source = "int helper(int a);\nclass Widget { void draw(); };\nint helper(int a) { return a; }\n"
    defined = chunk_file("widget.cpp", source, "cpp").symbols
    assert [(s.kind, s.qualname, s.start_line) for s in defined] == [
        ("class", "Widget", 2),
        ("method", "Widget::draw", 2),
        ("function", "helper", 3),
    ]
    assert [s.qualname for s in chunk_file("point.h", "int area(int w, int h);\n", "c").symbols] == ["area"]
    assert chunk_file("point.c", "int area(int w, int h);\n", "c").symbols == []


def test_a_cpp_member_defined_out_of_its_class_is_a_method() -> None:
    """``void Widget::draw() {...}`` was a function, its declaration in the class's body a
    method: what is said of methods (overloads by their count of arguments, a class's other
    members) was said of the declaration only. A member's definition out of its class is a
    method, its parent the class; one of a namespace the file names is a function."""
    source = (
        '#include "widget.hpp"\n'
        "namespace ui { void paint(); }\n"
        "void Widget::draw() {}\n"
        "Widget::Widget() {}\n"
        "Widget::~Widget() {}\n"  # 5
        "int ui::Panel::size() const { return 0; }\n"
        "void ui::paint() {}\n"
        "template <typename T> void Box<T>::put(T x) {}\n"
        "bool operator==(const Widget& a, const Widget& b) { return true; }\n"
    )
    symbols = chunk_file("widget.cpp", source, "cpp").symbols
    found = [s for s in symbols if s.start_line > 2]  # draw, Widget, ~Widget, size, paint, put, operator==
    assert [s.kind for s in found] == ["method"] * 4 + ["function", "method", "function"]
    assert [s.parent for s in found] == ["Widget", "Widget", "Widget", "ui::Panel", "ui", "Box<T>", ""]


def test_a_c_header_stays_c_whatever_its_comments_and_strings_say() -> None:
    text = (
        '#ifndef POINT_H\n#define POINT_H\n#include <stdio.h>\n#ifdef __cplusplus\nextern "C" {\n#endif\n'
        "/* Unlike Widget::draw (widget.hpp), no\nclass Point here; namespace: none. */\n"
        "// template <typename T> would be C++\n"
        "struct point { int x : 4; int y : 4; };\n"
        'static const char *SEP = "::";\n'
        "int area(const struct point *p);\n"
        "#ifdef __cplusplus\n}\n#endif\n#endif\n"
    )
    assert language_of("point.h", text) == "c"
    result = _chunk("point.h", text)
    assert {s.language for s in result.symbols} == {"c"}
    assert language_of("point.hpp", text) == "cpp"  # a C++ name is C++ whatever the text
    assert language_of("point.c", "class Point {};\n") == "c"  # and a C source C


def test_line_numbers_count_newlines_only() -> None:
    text = "def a():\r\n    return 1\r\n\x0c\r\ndef b():\r\n    return 2\r\n"
    result = _chunk("crlf.py", text)
    assert [(s.qualname, s.start_line, s.end_line) for s in result.symbols] == [("a", 1, 2), ("b", 4, 5)]
    assert all("\r" not in c.text for c in result.chunks)
    _assert_tiles(result, text)


def test_chunking_config_names_the_setup() -> None:
    name, version = chunking_config()
    assert name.startswith("syntax+markdown+windows/") and version >= 1
    assert chunking_config() == (name, version)


def _sample_files() -> list[tuple[str, str]]:
    """Real source files: installed libraries and, when ``$REPOLENS_BENCH_DATA``
    holds them, benchmark checkouts."""
    roots = [Path(pytest.__file__).parent.parent / "_pytest", Path(os.__file__).parent / "email"]
    checkouts = Path(os.environ.get("REPOLENS_BENCH_DATA", "/nonexistent")) / "checkouts"
    if checkouts.is_dir():
        for prefix in ("spf13__cobra@", "sharkdp__fd@", "google__gson@", "honojs__hono@"):
            found = sorted(checkouts.glob(prefix + "*"))
            roots += found[:1]
    files = []
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file() and supports(language_for(p.name)) and "node_modules" not in p.parts:
                files.append(p)
    rng = random.Random(7)
    picked = rng.sample(files, min(len(files), 250))
    out = []
    for p in sorted(picked):
        try:
            out.append((str(p), p.read_text(encoding="utf-8", errors="surrogateescape")))
        except OSError:
            continue
    return out


def test_every_line_belongs_to_a_chunk_on_real_files() -> None:
    files = _sample_files()
    assert len(files) >= 50
    fixtures = [(p.name, p.read_text()) for p in sorted(FIXTURES.iterdir())]
    for path, text in fixtures + files:
        result = chunk_file(path, text, language_for(path))
        _assert_covers(result, text)
        if result.chunks and result.chunks[0].kind != "window":  # windows overlap by design
            _assert_tiles(result, text)
        assert all(c.id for c in result.chunks)
        assert {c.kind for c in result.chunks} <= KINDS
        assert {s.kind for s in result.symbols} <= KINDS


def test_small_definitions_are_packed_up_to_the_target_by_default() -> None:
    functions = "".join(f"def f{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(10))
    fine = chunk_file("m.py", functions, "python", merge_lines=DEFINITION_GRAIN)
    packed = chunk_file("m.py", functions, "python")
    assert len(fine.chunks) == 10
    assert len(packed.chunks) == 1
    assert packed.chunks[0].qualname == "f0, f1, f2 (+7 more)"
    assert len(packed.symbols) == len(fine.symbols) == 10  # every definition is still a symbol


def test_a_name_does_not_repeat_its_kind() -> None:
    """A header reads ``impl Store for Cache``, not ``impl impl Store for Cache``:
    the kind says what a definition is, its name does not say it again."""
    spelled = {"impl": ("impl", "implementation"), "module": ("mod", "module")}
    for name in sorted(EXPECTED):
        result = _chunk(name, (FIXTURES / name).read_text())
        for s in result.symbols:
            first = s.qualname.split()[0].lstrip("@").lower()
            assert first not in (s.kind, *spelled.get(s.kind, ())), (name, s.kind, s.qualname)
    rust = _chunk("cache.rs", "struct Cache;\nimpl Cache {\n    fn new() -> Self { Cache }\n}\n")
    assert [(c.kind, c.qualname) for c in rust.chunks if c.kind == "impl"] == [("impl", "Cache")]


def test_a_method_packed_after_a_long_one_is_named_by_the_method() -> None:
    """The blank line after a split method goes with the next method: that
    chunk is the method (kind, name, signature), not its class."""
    result = chunk_file("relay.py", relay_source(), "python")
    labels = [(c.start_line, c.kind, c.qualname) for c in result.chunks]
    assert labels == [
        (1, "block", ""),
        (8, "class", "Relay"),
        (20, "method", "Relay.forward"),
        (88, "method", "Relay.forward"),
        (156, "method", "Relay.refresh_credentials"),
        (180, "method", "Relay.refresh_route"),
    ]
    credentials = result.chunks[4]
    assert credentials.text.startswith("\n    def refresh_credentials(")
    assert credentials.signature == "def refresh_credentials( self, message, reply ) -> None"


# The same shape in other languages: a class (impl) whose long method is split,
# a field between methods, then a short method. One labelling, in pack.py.
_LONG_BODY = "".join(f"        step({i});\n" for i in range(130))
_SHAPES = {
    "Relay.java": (
        "class Relay {\n    int hops;\n\n    void forward() {\n"
        + _LONG_BODY
        + "    }\n\n    int retries = 3;\n\n    void refresh() {\n        hops = 0;\n    }\n}\n",
        ("block", "Relay.refresh", ""),
    ),
    "relay.rs": (
        "struct Relay;\n\nimpl Relay {\n    fn forward(&self) {\n"
        + _LONG_BODY
        + "    }\n\n    const RETRIES: u32 = 3;\n\n    fn refresh(&self) {\n        hop();\n    }\n}\n",
        ("block", "Relay::RETRIES, Relay::refresh", ""),
    ),
    "relay.ts": (
        "class Relay {\n  hops = 0;\n\n  forward(): void {\n"
        + _LONG_BODY
        + "  }\n\n  // retried on failure\n\n  refresh(): void {\n    this.hops = 0;\n  }\n}\n",
        ("block", "Relay.refresh", ""),
    ),
}


@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_class_code_packed_with_a_method_names_the_method(name: str) -> None:
    text, expected = _SHAPES[name]
    result = chunk_file(name, text, language_for(name))
    last = result.chunks[-1]
    assert (last.kind, last.qualname, last.signature) == expected
    assert all(c.kind != "class" or c.start_line == 1 for c in result.chunks)
    _assert_tiles(result, text)
