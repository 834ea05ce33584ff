"""References found in one file: every language's query, kinds, scopes, and what is no use."""

from __future__ import annotations

import pytest
import tree_sitter as ts

from repolens.chunking.dispatch import chunk_file
from repolens.chunking.grammars import SPECS, load_language
from repolens.chunking.refs import NO_USE_KINDS, Ref, RefRows, definition_keys, ref_rows
from repolens.chunking.refs.specs import REF_SPECS

# One file per language that calls ``helper`` (defined in it or not), inside a definition.
CALLS = {
    "python": ("a.py", "def helper():\n    pass\n\ndef user():\n    helper()\n"),
    "javascript": ("a.js", "function helper() {}\nfunction user() {\n  helper();\n}\n"),
    "typescript": ("a.ts", "function helper(): void {}\nfunction user(): void {\n  helper();\n}\n"),
    "tsx": ("a.tsx", "function helper() {}\nfunction user() {\n  helper();\n}\n"),
    "go": ("a.go", "package a\n\nfunc helper() {}\n\nfunc user() {\n\thelper()\n}\n"),
    "rust": ("a.rs", "fn helper() {}\n\nfn user() {\n    helper();\n}\n"),
    "java": ("A.java", "class A {\n    void helper() {}\n    void user() {\n        helper();\n    }\n}\n"),
    "kotlin": ("a.kt", "fun helper() {}\n\nfun user() {\n    helper()\n}\n"),
    "scala": ("a.scala", "object A {\n  def helper() = 1\n  def user() = {\n    helper()\n  }\n}\n"),
    "groovy": ("a.groovy", "class A {\n  def helper() {}\n  def user() {\n    helper()\n  }\n}\n"),
    "csharp": ("a.cs", "class A {\n    void Helper() {}\n    void User() {\n        Helper();\n    }\n}\n"),
    "c": ("a.c", "void helper(void) {}\n\nvoid user(void) {\n    helper();\n}\n"),
    "cpp": ("a.cpp", "void helper() {}\n\nvoid user() {\n    helper();\n}\n"),
    "objc": ("a.m", "void helper(void) {}\n\nvoid user(void) {\n    helper();\n}\n"),
    "ruby": ("a.rb", "def helper\nend\n\ndef user\n  helper()\nend\n"),
    "php": ("a.php", "<?php\nfunction helper() {}\n\nfunction user() {\n    helper();\n}\n"),
    "lua": ("a.lua", "function helper() end\n\nfunction user()\n  helper()\nend\n"),
    "bash": ("a.sh", "helper() {\n  echo hi\n}\n\nuser() {\n  helper\n}\n"),
    "perl": ("a.pl", "sub helper { }\n\nsub user {\n    helper();\n}\n"),
    "julia": ("a.jl", "function helper()\nend\n\nfunction user()\n    helper()\nend\n"),
    "dart": ("a.dart", "void helper() {}\n\nvoid user() {\n  helper();\n}\n"),
    "zig": ("a.zig", "fn helper() void {}\n\nfn user() void {\n    helper();\n}\n"),
    "swift": ("a.swift", "func helper() {}\n\nfunc user() {\n    helper()\n}\n"),
    "haskell": ("a.hs", "helper x = x\n\nuser y = helper y\n"),
    "elixir": ("a.ex", "defmodule A do\n  def helper, do: 1\n\n  def user do\n    helper()\n  end\nend\n"),
    "ocaml": ("a.ml", "let helper x = x\n\nlet user y =\n  helper y\n"),
}


def refs_of(path: str, text: str, language: str) -> list[Ref]:
    rows = chunk_file(path, text, language).refs
    return rows.refs() if rows is not None else []


def targets(path: str, text: str, language: str) -> dict[tuple[int, str], str]:
    """(line, name) -> the target of the last use of that name on that line."""
    return {(r.line, r.name): r.target for r in refs_of(path, text, language)}


def test_every_language_with_a_grammar_has_a_query_that_compiles():
    assert set(REF_SPECS) == set(SPECS) and len(SPECS) == 26
    for name, spec in REF_SPECS.items():
        grammar = SPECS[name]
        ts.Query(load_language(grammar.module, grammar.entry), spec.query)


@pytest.mark.parametrize("language", sorted(CALLS))
def test_every_language_finds_a_call_and_the_definition_it_sits_in(language: str):
    path, text = CALLS[language]
    found = [r for r in refs_of(path, text, language) if r.name.lower() == "helper"]
    assert found, f"no use of helper in {language}"
    assert found[0].scope.lower().endswith("user")


def test_python_kinds_targets_and_what_is_no_use():
    text = (
        "import os\n"  # 1
        "from pkg.models import Model as M, helper\n"
        "from . import sibling\n"
        "\n"
        "\n"
        "@helper\n"  # 6
        "class Thing(M):\n"
        "    def save(self, x: M) -> None:\n"
        "        self.clean()\n"
        "        super().save(x)\n"  # 10
        "        sibling.run(os.sep)\n"
        "        print('helper is only a word here')\n"
        "\n"
        "    def clean(self):\n"
        "        helper = len\n"  # 15
        "        return helper([])\n"
    )
    refs = refs_of("src/pkg/views.py", text, "python")
    assert [(r.name, r.line, r.kind, r.scope, r.target, r.binds) for r in refs] == [
        ("Model", 2, "import", "", "pkg.models.Model", "M"),
        ("helper", 2, "import", "", "pkg.models.helper", "helper"),
        ("sibling", 3, "import", "", "src.pkg.sibling", "sibling"),
        ("helper", 6, "decorator", "Thing", "pkg.models.helper", ""),
        ("Model", 7, "base", "Thing", "pkg.models.Model", ""),
        ("Model", 8, "type", "Thing.save", "pkg.models.Model", ""),
        ("clean", 9, "call", "Thing.save", "=Thing.clean", ""),
        ("save", 10, "call", "Thing.save", "^Thing.save", ""),
        ("sibling", 11, "name", "Thing.save", "src.pkg.sibling", ""),  # the head of sibling.run
        ("run", 11, "call", "Thing.save", "src.pkg.sibling.run", ""),
        ("sep", 11, "attr", "Thing.save", "os.sep", ""),
    ]


def test_a_member_of_a_field_whose_type_the_class_declares_is_resolved():
    python = (
        "from typing import Optional\n"  # 1
        "from pkg.cap import Multi\n"
        "\n"
        "\n"
        "class Holder:\n"  # 5
        "    later: Multi\n"
        "    maybe: Optional[Multi] = None\n"
        "\n"
        "    def __init__(self, other, given: 'Multi'):\n"
        "        self._capture = Multi()\n"  # 10
        "        self.other = other\n"
        "        self.given = given\n"
        "\n"
        "    def go(self):\n"
        "        self._capture.suspend()\n"  # 15
        "        self.later.suspend()\n"
        "        self.maybe.suspend()\n"
        "        self.other.suspend()\n"
        "        self.given.suspend()\n"
    )
    calls = [(r.line, r.target) for r in refs_of("src/pkg/use.py", python, "python") if r.name == "suspend"]
    assert calls == [
        (15, "pkg.cap.Multi.suspend"),
        (16, "pkg.cap.Multi.suspend"),
        (17, "pkg.cap.Multi.suspend"),
        (18, ""),  # a field of an unknown type: a name match
        (19, "pkg.cap.Multi.suspend"),  # a field set from a typed parameter
    ]
    typescript = (
        "import { Conn } from './conn'\n"  # 1
        "class Manager { has(): boolean { return true } }\n"
        "export class Client {\n"
        "  private active: Conn | null = null\n"
        "  other = new Conn()\n"  # 5
        "  constructor(private readonly manager: Manager, plain: Conn) {\n"
        "    this.made = new Conn()\n"
        "  }\n"
        "  run() {\n"
        "    this.active.isOpen()\n"  # 10
        "    this.other.open()\n"
        "    this.manager.has()\n"
        "    this.made.open()\n"
        "    this.plain.open()\n"
        "  }\n"
        "}\n"
    )
    refs = refs_of("ts/client.ts", typescript, "typescript")
    assert [(r.line, r.name, r.target) for r in refs if r.line >= 10 and r.kind == "call"] == [
        (10, "isOpen", "ts.conn.Conn.isOpen"),
        (11, "open", "ts.conn.Conn.open"),
        (12, "has", "=Manager.has"),
        (13, "open", "ts.conn.Conn.open"),
        (14, "open", ""),
    ]


def test_a_local_assigned_twice_has_the_type_of_the_later_assignment_at_every_build():
    # A query's captures come in an order that changes from run to run: twelve
    # functions, so an extraction reading them in that order is caught (1 in 4,096 not).
    body = "".join(
        f"def f{i}():\n    x = First()\n    if x:\n        x = Second()\n    x.go()\n\n\n" for i in range(12)
    )
    text = "from pkg import First, Second\n\n\n" + body
    for _ in range(3):
        targets = {r.target for r in refs_of("a.py", text, "python") if r.name == "go"}
        assert targets == {"pkg.Second.go"}


def test_the_head_of_a_member_chain_the_file_imports_is_a_use_of_it():
    python = "from pkg.resp import Response\n\n\ndef f(x):\n    return Response.build(x).body\n"
    heads = [(r.name, r.line, r.kind, r.target) for r in refs_of("a.py", python, "python") if r.line == 5]
    assert heads[:2] == [
        ("Response", 5, "name", "pkg.resp.Response"),
        ("build", 5, "call", "pkg.resp.Response.build"),
    ]
    typescript = "import { Jwt } from './jwt'\nexport function f(t: string) {\n  return Jwt.verify(t)\n}\n"
    heads = [(r.name, r.kind, r.target) for r in refs_of("src/a.ts", typescript, "typescript") if r.line == 3]
    assert heads == [("Jwt", "name", "src.jwt.Jwt"), ("verify", "call", "src.jwt.Jwt.verify")]


def test_a_word_and_period_ending_a_comment_is_no_receiver():
    text = "import os\n\n\ndef f(mp):\n    # Then call it.\n    os.getcwd()\n"
    assert [(r.name, r.target) for r in refs_of("a.py", text, "python") if r.line == 6] == [
        ("getcwd", "os.getcwd")
    ]


def test_a_python_name_the_file_binds_is_a_use_where_a_value_is_read():
    text = (
        "from pkg import FLAG, LIMIT, items\n"  # 1
        "\n"
        "\n"
        "def f(n):\n"
        "    assert FLAG\n"  # 5
        "    if FLAG:\n"
        "        return not FLAG or n and LIMIT\n"
        "    for i in items:\n"
        "        n += items[i] * LIMIT\n"
        "    return n\n"  # 10
    )
    uses = [(r.line, r.name) for r in refs_of("a.py", text, "python") if r.line > 1]
    assert uses == [
        (5, "FLAG"),
        (6, "FLAG"),
        (7, "FLAG"),
        (7, "LIMIT"),
        (8, "items"),
        (9, "items"),
        (9, "LIMIT"),
    ]


def test_a_class_body_s_own_names_and_the_fields_of_its_bases_of_the_file():
    text = (
        "from pkg.ser import Serializer\n"  # 1
        "\n"
        "\n"
        "class Tag:\n"
        "    def __init__(self, serializer: Serializer):\n"  # 5
        "        self.serializer = serializer\n"
        "\n"
        "\n"
        "class PassList(Tag):\n"
        "    def to_json(self, value):\n"  # 10
        "        return self.serializer.tag(value)\n"
        "\n"
        "    tag = to_json\n"
    )
    refs = [(r.name, r.line, r.kind, r.scope, r.target) for r in refs_of("a.py", text, "python")]
    assert ("Serializer", 6, "field", "Tag.serializer", "pkg.ser.Serializer") in refs
    assert ("tag", 11, "call", "PassList.to_json", "pkg.ser.Serializer.tag") in refs
    assert ("to_json", 13, "name", "PassList", "=PassList.to_json") in refs
    text = "class A:\n    pass\n\n\nclass B:\n    a = A()\n"
    fields = [(r.name, r.scope, r.target) for r in refs_of("a.py", text, "python") if r.kind == "field"]
    assert fields == [("A", "B.a", "=A")]  # named as its class, so a question about A reads it


def test_what_a_python_function_returns_is_kept_as_its_result():
    text = (
        "from typing import Iterator\n"  # 1
        "from pkg.app import App\n"
        "\n"
        "\n"
        "def annotated() -> App:\n"  # 5
        "    return make()\n"
        "\n"
        "\n"
        "def made():\n"
        "    return App()\n"  # 10
        "\n"
        "\n"
        "def through_a_local():\n"
        "    app = App()\n"
        "    return app\n"  # 15
        "\n"
        "\n"
        "def yields() -> Iterator[App]:\n"
        "    yield App()\n"
        "\n"  # 20
        "\n"
        "class Factory:\n"
        "    def build(self):\n"
        "        return App()\n"
        "\n"  # 25
        "\n"
        "def use(factory: Factory):\n"
        "    made().run()\n"
        "    return factory.build().run()\n"
    )
    refs = refs_of("a.py", text, "python")
    assert [(r.name, r.line, r.scope, r.target) for r in refs if r.kind == "field"] == [
        ("App", 5, "annotated", "pkg.app.App"),
        ("App", 9, "made", "pkg.app.App"),
        ("App", 13, "through_a_local", "pkg.app.App"),
        ("App", 18, "yields", "pkg.app.App"),
        ("App", 23, "Factory.build", "pkg.app.App"),
    ]
    calls = [(r.line, r.target) for r in refs if r.name == "run"]
    # made()'s is read with the results when asked; Factory's build, a method of the file, declares it
    assert calls == [(28, "=made.run"), (29, "pkg.app.App.run")]


def test_pytest_fixtures_and_their_parameters_are_kept_as_keys_a_question_resolves():
    text = (
        "import pytest\n"  # 1
        "from pkg.app import App\n"
        "\n"
        "\n"
        "@pytest.fixture(name='client')\n"  # 5
        "def make_client(app) -> App:\n"
        "    return app\n"
        "\n"
        "\n"
        "@pytest.fixture\n"  # 10
        "def app(app):\n"
        "    made = App()\n"
        "    yield made\n"
        "\n"
        "\n"  # 15
        "def test_it(self, client, tmp_path):\n"
        "    client.run(tmp_path / 'x')\n"
        "\n"
        "\n"
        "def helper(client):\n"  # 20
        "    return client.run()\n"
    )
    refs = [(r.name, r.line, r.kind, r.scope, r.target) for r in refs_of("tests/conftest.py", text, "python")]
    kept = [r for r in refs if r[1] >= 5 and (r[2] not in ("decorator", "type", "call") or r[0] == "run")]
    assert kept == [
        ("@client", 6, "fixture", "make_client", "pkg.app.App"),  # named as its name= says
        ("app", 6, "name", "make_client", "@app"),
        ("App", 6, "field", "make_client", "pkg.app.App"),  # what make_client returns
        ("app", 7, "name", "make_client", "@app"),
        ("@app", 11, "fixture", "app", "pkg.app.App"),  # what it yields
        ("app", 11, "name", "app", "@^app"),  # a fixture of its own name: found past this file
        ("client", 16, "name", "test_it", "@client"),  # self is no fixture
        ("tmp_path", 16, "name", "test_it", "@tmp_path"),
        ("client", 17, "name", "test_it", "@client"),
        ("run", 17, "call", "test_it", "@client.run"),
        ("tmp_path", 17, "name", "test_it", "@tmp_path"),
        ("run", 21, "call", "helper", ""),  # not a test: client is a parameter of unknown type
    ]


def test_a_typescript_generic_is_its_type_less_its_arguments():
    text = (
        "import type { Router } from './router'\n"  # 1
        "import * as r from './router'\n"
        "export class Hono<T> implements Router<T>, r.Base<T> {\n"
        "  router: Router<T>\n"
        "  run() {\n"  # 5
        "    this.router.add('/')\n"
        "  }\n"
        "}\n"
        "export interface Smart<T> extends Router<T> {}\n"
    )
    refs = refs_of("src/hono.ts", text, "typescript")
    assert [(r.name, r.line, r.scope, r.target) for r in refs if r.kind == "base"] == [
        ("Router", 3, "Hono", "src.router.Router"),
        ("Base", 3, "Hono", "src.router.Base"),
        ("Router", 9, "Smart", "src.router.Router"),
    ]
    assert [(r.name, r.target) for r in refs if r.line == 6 and r.kind == "call"] == [
        ("add", "src.router.Router.add")
    ]


def test_a_lowercase_jsx_tag_is_an_element_of_the_host_not_a_use_of_a_name():
    text = (
        "import { html, Box } from './x'\n"  # 1
        "export const A = () => (\n"
        "  <html>\n"
        "    <Box />\n"
        "    <html.Head />\n"  # 5
        "  </html>\n"
        ")\n"
    )
    uses = [(r.name, r.line, r.target) for r in refs_of("a.tsx", text, "tsx") if r.kind != "import"]
    assert uses == [("Box", 4, "x.Box"), ("html", 5, "x.html"), ("Head", 5, "x.html.Head")]


def test_javascript_imports_exports_and_require():
    text = (
        "import def, { a as b } from './lib/x';\n"
        "import * as ns from '../y/index.js';\n"
        "const { c } = require('./z');\n"
        "export { b as d };\n"
        "export default function main() {\n"
        "  ns.f(b(), c());\n"
        "}\n"
    )
    refs = refs_of("src/app/main.js", text, "javascript")
    got = {(r.name, r.line, r.kind, r.target, r.binds) for r in refs}
    assert ("default", 1, "import", "src.app.lib.x.default", "") in got
    assert ("a", 1, "import", "src.app.lib.x.a", "") in got
    assert ("c", 3, "import", "src.app.z.c", "") in got
    assert ("main", 5, "export", "=main", "default") in got
    assert ("f", 6, "call", "src.y.f", "") in got
    assert ("a", 6, "call", "src.app.lib.x.a", "") in got


def test_a_file_s_references_are_rows_of_their_fields_in_line_order():
    text = (
        "void helper() {}\n"
        "struct A {\n"
        "  int operator%(int b) const {\n"  # a scope holding % (the rows are written from templates)
        "    helper();\n"
        "    return b;\n"
        "  }\n"
        "};\n"
    )
    rows = chunk_file("a.cpp", text, "cpp").refs
    assert rows == RefRows("helper\t4\tcall\tA::operator%\t=helper\t", ("helper",))
    assert rows.refs() == [Ref("helper", 4, "call", "A::operator%", "=helper", "")]
    assert ref_rows(rows.refs()) == rows


def test_a_key_is_the_end_of_the_defining_path():
    assert definition_keys("src/repolens/chunking/__init__.py", "Chunk", "python") == {
        "src.repolens.chunking.Chunk",
        "repolens.chunking.Chunk",
        "chunking.Chunk",
    }
    assert definition_keys("pkg/calc/sum.go", "(*Acc).Add", "go") == {"pkg.calc.Acc.Add", "calc.Acc.Add"}
    assert definition_keys("web/index.ts", "render", "typescript") == {"web.render"}
    # A Go package at the repository's top: no folder names it (go.mod's module path does, when asked).
    assert definition_keys("command.go", "(*Command).Root", "go") == {"~.Command.Root"}
    assert definition_keys("main.py", "run", "python") == {"main.run"}


def test_a_file_that_does_not_parse_keeps_its_chunks_and_has_no_references():
    result = chunk_file("broken.py", "def (:\n" * 50, "python")
    assert result.chunks and result.refs is None


# A local visible in less than its function: what the module binds under its name is
# still used elsewhere in the function. (path, text, language, name, the lines of its
# uses as the module's, the lines where the local is used)
BLOCK_LOCALS = {
    "python comprehension and lambda": (
        "a.py",
        "from m import item\n\ndef f(xs):\n    item()\n    g = lambda item: item\n"
        "    item.y\n    return [item.x for item in xs]\n",
        "python",
        "item",
        [4, 6],
        [5, 7],
    ),
    "typescript block const and catch": (
        "a.ts",
        "import { h } from './h';\nexport function f(x: number) {\n  h();\n  if (x) {\n    const h = 1;\n"
        "    return h;\n  }\n  try { h.go(); }\n  catch (h) { h.z; }\n  for (const h of [1]) { h.w; }\n}\n",
        "typescript",
        "h",
        [3, 8],
        [6, 9, 10],
    ),
    "javascript switch case": (
        "a.js",
        "import { h } from './h';\nexport function f(x) {\n"
        "  switch (x) { case 1: const h = 2; g(h); }\n  h();\n}\n",
        "javascript",
        "h",
        [4],
        [3],
    ),
    "go from its declaration and in its if": (
        "a.go",
        "package a\n\nfunc h() int { return 1 }\n\nfunc f() {\n\th()\n\tif h := 2; h > 1 {\n\t}\n"
        "\tg := func(h int) int { return h }\n\th()\n\th := h()\n\t_ = h\n\t_ = g\n}\n",
        "go",
        "h",
        [6, 10, 11],
        [7, 9, 12],
    ),
    "rust after its let and outside its block": (
        "a.rs",
        "fn h() -> i32 { 1 }\n\nfn f() {\n    h();\n    {\n        let h = 2;\n        g(h);\n    }\n"
        "    let c = |h| h;\n    let h = h();\n    g(h);\n}\n",
        "rust",
        "h",
        [4, 10],
        [7, 9, 11],
    ),
}


@pytest.mark.parametrize("case", sorted(BLOCK_LOCALS))
def test_a_local_of_a_block_hides_the_module_s_name_in_that_block_only(case: str):
    path, text, language, name, outer, local = BLOCK_LOCALS[case]
    found = {
        r.line
        for r in refs_of(path, text, language)
        if r.kind != "import" and name in (r.name, *r.target.split("."))
    }
    assert sorted(found) == outer, found
    assert not found & set(local)


# A class whose method ``user`` calls its method ``helper`` without a receiver.
SELF_CALLS = {
    "java": ("A.java", CALLS["java"][1]),
    "scala": ("a.scala", CALLS["scala"][1]),
    "groovy": ("a.groovy", CALLS["groovy"][1]),
    "csharp": ("a.cs", CALLS["csharp"][1]),
    "kotlin": ("a.kt", "class A {\n    fun helper() {}\n    fun user() {\n        helper()\n    }\n}\n"),
    "cpp": ("a.cpp", "class A {\n  void helper() {}\n  void user() {\n    helper();\n  }\n};\n"),
    "swift": ("a.swift", "class A {\n  func helper() {}\n  func user() {\n    helper()\n  }\n}\n"),
    "dart": ("a.dart", "class A {\n  void helper() {}\n  void user() {\n    helper();\n  }\n}\n"),
}


@pytest.mark.parametrize("language", sorted(SELF_CALLS))
def test_a_method_called_without_a_receiver_is_its_class_s_own(language: str):
    path, text = SELF_CALLS[language]
    found = [r for r in refs_of(path, text, language) if r.name.lower() == "helper"]
    own = "a.helper" if language == "csharp" else "=a.helper"  # C#: keyed by its qualified name
    assert [r.target.lower() for r in found] == [own]


def test_a_java_local_of_a_class_of_its_package_is_followed_to_its_methods():
    text = (
        "package p;\n"
        "class B {\n"
        "    void go(A a, String s) {\n"
        "        a.helper();\n"
        "        s.trim();\n"
        "    }\n"
        "    class Inner { void z() { go(null, null); } }\n"
        "}\n"
    )
    rows = targets("src/p/B.java", text, "java")
    assert rows[(4, "helper")] == "src.p.A.helper"  # A: not imported, so its package's
    assert rows[(5, "trim")] == ""  # String is java.lang's: a name match
    assert rows[(7, "go")] == "=B.go"  # a method of the class holding the inner class


STAR_IMPORTS = {
    "java": (
        "src/p/Main.java",
        "package p;\n\nimport q.*;\n\nclass Main {\n    void run(Object x) {\n"
        "        Helper.log(x);\n        Helper h = new Helper();\n        h.go();\n"  # 7-9
        "        Local.make();\n    }\n}\n",  # 10
    ),
    "kotlin": (
        "src/p/Main.kt",
        "package p\n\nimport q.*\n\nclass Main {\n    fun run(x: Any) {\n"
        "        Helper.log(x)\n        val h: Helper = Helper()\n        h.go()\n"  # 7-9
        "        Local.make()\n    }\n}\n",  # 10
    ),
}


@pytest.mark.parametrize("language", sorted(STAR_IMPORTS))
def test_java_and_kotlin_a_type_in_a_file_importing_a_package_wholesale_is_keyed_for_the_question(
    language: str,
):
    """import q.*; made every type the file does not bind a name match (its package's too):
    it is q's or the package's, which a question tells (?Helper)."""
    rows = [(r.line, r.name, r.target) for r in refs_of(*STAR_IMPORTS[language], language) if r.line > 6]
    assert sorted(set(rows)) == [
        (7, "log", "?Helper.log"),
        (8, "Helper", "?Helper"),
        (9, "go", "?Helper.go"),
        (10, "make", "?Local.make"),
    ]


def test_kotlin_s_default_imports_and_java_lang_are_not_the_package_s():
    """Regex("a"), Pair(1, 2), check(x), run { } in Kotlin, Throwable and NullPointerException
    in Java: each was keyed as its file's package's (src.p.Regex), which defines none of them.
    A call alone in a class naming a base may be an inherited method's: keyed as before."""
    kotlin = (
        "package p\n"
        "\n"
        "class A {\n"
        "    fun f(x: Any?, t: Task) {\n"
        '        val r = Regex("a")\n'  # 5
        "        val p: Pair<Int, Int> = Pair(1, 2)\n"
        "        check(x != null)\n"
        "        run { mutableListOf<Int>() }\n"
        "        t.run()\n"
        "        throw NotImplementedError()\n"  # 10
        "    }\n"
        "}\n"
        "\n"
        "class B : Base() {\n"
        "    fun g() { check(true) }\n"  # 15
        "}\n"
    )
    rows = sorted(
        (r.line, r.name, r.target) for r in refs_of("src/p/A.kt", kotlin, "kotlin") if r.kind != "field"
    )
    assert rows == [
        (4, "Task", "src.p.Task"),
        (9, "run", "src.p.Task.run"),
        (14, "Base", "src.p.Base"),
        (15, "check", "src.p.check"),
    ]
    java = (
        "package p;\n"
        "class A {\n"
        "    void f() throws InterruptedException {\n"
        "        Throwable t = new NullPointerException();\n"
        "        Number n = Local.count();\n"  # 5
        "    }\n"
        "}\n"
    )
    rows = sorted(
        (r.line, r.name, r.target) for r in refs_of("src/p/A.java", java, "java") if r.kind != "field"
    )
    assert rows == [(5, "count", "src.p.Local.count")]


def test_kotlin_s_default_functions_follow_one_rule_require_as_check():
    """require(x) and listOf() were dropped everywhere (an older list of builtins) while
    check(x) was kept in a class naming a base, which may define it: now every default
    function is dropped unless the repository may define it, kept as its package's in a
    class naming a base, as its own where the file defines or imports it. An object
    expression's base (object : Listener() in C.h) is no base of the class holding it."""
    kotlin = (
        "package p\n"
        "\n"
        "import q.println\n"
        "\n"
        "fun setOf(n: Int) = n\n"  # 5
        "\n"
        "class A {\n"
        "    fun f(x: Any?) {\n"
        "        require(x != null)\n"
        "        check(x != null)\n"  # 10
        "        listOf(1)\n"
        "        setOf(1)\n"
        "        println(x)\n"
        "        mapOf(1 to 2)\n"
        "    }\n"  # 15
        "}\n"
        "\n"
        "class B : Base() {\n"
        "    fun g(x: Any?) {\n"
        "        require(x != null)\n"  # 20
        "        check(x != null)\n"
        "        listOf(1)\n"
        "        mapOf(1 to 2)\n"
        "    }\n"
        "    fun mapOf(n: Int) = n\n"  # 25
        "}\n"
        "\n"
        "class C {\n"
        "    fun h(x: Any?) {\n"
        "        val o = object : Listener() {\n"  # 30
        "            override fun on() {}\n"
        "        }\n"
        "        require(x != null)\n"
        "    }\n"
        "}\n"  # 35
    )
    rows = sorted(
        (r.line, r.name, r.target)
        for r in refs_of("src/p/A.kt", kotlin, "kotlin")
        if r.kind == "call" and r.name != "to"
    )
    assert rows == [
        (12, "setOf", "=setOf"),
        (13, "println", "q.println"),
        (20, "require", "src.p.require"),
        (21, "check", "src.p.check"),
        (22, "listOf", "src.p.listOf"),
        (23, "mapOf", "=B.mapOf"),
    ]


def test_a_typescript_local_cast_with_as_or_made_by_a_call_with_a_non_null_assertion_is_typed():
    text = (
        "import { Positioned } from './w';\n"
        "import { make } from './m';\n"
        "export function f(m: any) {\n"
        "  if (m) {\n"
        "    const s = m.source as Positioned<string>;\n"  # 5
        "    s.start;\n"
        "    const p = make()!;\n"
        "    p.close();\n"
        "  }\n"
        "}\n"
    )
    rows = targets("a.ts", text, "typescript")
    assert rows[(6, "start")] == "w.Positioned.start"
    assert rows[(8, "close")] == "m.make.close"  # of what make returns


def test_typescript_array_elements_unions_this_chains_typeof_and_a_dynamic_import_are_keyed():
    text = (
        "import { P } from './p'\n"  # 1
        "import type { Core } from './core'\n"
        "export class W {\n"
        "  ps: readonly P[] = []\n"
        "  core: Core\n"  # 5
        "  one: P | Core | null\n"
        "  run(qs: Array<P>): P | undefined {\n"
        "    this.ps.forEach((p) => p.a())\n"
        "    qs.filter(q => q.b()).map(q => q.c())\n"
        "    for (const q of qs.filter(Boolean)) q.d()\n"  # 10
        "    this.core.log.warn()\n"
        "    return undefined\n"
        "  }\n"
        "  async load(): Promise<typeof P> {\n"
        "    const { M } = await import('./m')\n"  # 15
        "    return new M()\n"
        "  }\n"
        "  f(): void {\n"
        "    const { log, run: r } = this.core\n"  # 19
        "    const last = this.ps.find(Boolean)\n"
        "    last.z()\n"
        "  }\n"
        "}\n"
    )
    refs = refs_of("src/w.ts", text, "typescript")
    fields = sorted((r.scope, r.target) for r in refs if r.kind == "field")
    assert ("W.ps.[]", "src.p.P") in fields  # a field's element: its member []
    assert [t for scope, t in fields if scope == "W.one"] == ["src.core.Core", "src.p.P"]
    assert [t for scope, t in fields if scope == "W.run"] == ["src.p.P"]  # a union result's types
    rows = targets("src/w.ts", text, "typescript")
    assert rows[(8, "a")] == "src.p.P.a"
    assert rows[(9, "b")] == "src.p.P.b" and rows[(9, "c")] == "src.p.P.c"
    assert rows[(10, "d")] == "src.p.P.d"  # for ... of over the array a filter gives back
    assert rows[(11, "warn")] == "src.core.Core.log.warn"
    assert rows[(14, "P")] == "src.p.P"  # typeof P: a use of the value
    assert rows[(15, "M")] == rows[(16, "M")] == "src.m.M"
    assert rows[(19, "log")] == "src.core.Core.log"  # a member destructured: read
    assert rows[(19, "run")] == "src.core.Core.run"
    assert rows[(21, "z")] == "src.p.P.z"  # xs.find(...) gives an element


def test_a_typescript_local_s_chain_goes_through_a_field_its_file_types_as_self_s_does():
    """``ctx.checker.typeToString()``, ``ctx: SchemaCtx`` declaring ``checker: TypeChecker``
    in the file, was keyed ``=SchemaCtx.checker.typeToString`` where ``this.checker`` of
    the class was ``TypeChecker``'s: both are now (one switch, ``field_paths``)."""
    text = (
        "import type { TypeChecker } from 'typescript'\n"
        "interface SchemaCtx {\n"
        "  checker: TypeChecker\n"
        "}\n"
        "export function convert(ctx: SchemaCtx) {\n"  # 5
        "  return ctx.checker.typeToString()\n"
        "}\n"
        "export class Walk {\n"
        "  constructor(private ctx: SchemaCtx) {}\n"
        "  run() { return this.ctx.checker.typeToString() }\n"  # 10
        "}\n"
    )
    rows = targets("src/gen.ts", text, "typescript")
    assert rows[(6, "typeToString")] == rows[(10, "typeToString")] == "typescript.TypeChecker.typeToString"


def test_typescript_nested_for_of_loops_type_their_elements_at_every_build():
    """``for (const t of tasks) for (const a of t.notes) a.type``: the inner loop read
    before the outer one (py-tree-sitter gives a capture's nodes in a set's order) left
    ``a`` untyped at some builds."""
    text = (
        "import { Task } from './task'\n"
        "export function run(tasks: Task[]) {\n"
        "  for (const t of tasks) {\n"
        "    for (const a of t.notes) {\n"
        "      for (const b of a.parts) b.type()\n"  # 5
        "    }\n"
        "  }\n"
        "}\n"
    )
    found = {targets("src/run.ts", text, "typescript")[(5, "type")] for _ in range(30)}
    assert found == {"src.task.Task.notes.[].parts.[].type"}


def test_a_typescript_member_of_one_type_or_null_has_one_field_row():
    """``one: P | null`` is a field of ``P`` once: the union's rule added it again (and
    ``four: P<T> | Q<T>``, read as a ``P`` already, is a ``Q`` too)."""
    text = (
        "import { P } from './p'\n"
        "import { Q } from './q'\n"
        "export class W<T> {\n"
        "  one: P | null\n"
        "  two?: P | Q | undefined\n"  # 5
        "  four: P<T> | Q<T>\n"
        "}\n"
        "export interface I {\n"
        "  three: P | undefined\n"
        "}\n"
    )
    fields = [(r.scope, r.target) for r in refs_of("src/w.ts", text, "typescript") if r.kind == "field"]
    assert sorted(fields) == [
        ("I.three", "src.p.P"),
        ("W.four", "src.p.P"),
        ("W.four", "src.q.Q"),
        ("W.one", "src.p.P"),
        ("W.two", "src.p.P"),
        ("W.two", "src.q.Q"),
    ]


def test_a_typescript_class_s_own_filter_is_no_array_s_its_callback_takes_the_declared_type():
    """``r.filter((c) => c.ok())``, ``r`` of a class declaring ``filter(cb: (c: Ctx) =>
    boolean)``: ``c`` is the callback's declared parameter (``Router.filter.0.0``), not an
    element of an array ``r`` is not; an array the file declares gives its element."""
    text = (
        "import { Ctx } from './ctx'\n"  # 1
        "export class Router {\n"
        "  items: Ctx[] = []\n"
        "  filter(cb: (c: Ctx) => boolean): Router { return this }\n"
        "}\n"  # 5
        "export function go(r: Router, xs: Ctx[]) {\n"
        "  r.filter((c) => c.ok())\n"
        "  xs.map((x) => x.ok())\n"
        "  r.items.map((y) => y.ok())\n"
        "  const one = r.items.find(Boolean)\n"  # 10
        "  one.ok()\n"
        "}\n"
    )
    rows = targets("src/r.ts", text, "typescript")
    assert rows[(7, "ok")] == "=Router.filter.0.0.ok"  # (resolved to Ctx.ok by the field row)
    assert rows[(8, "ok")] == "src.ctx.Ctx.ok"  # a local declared an array
    assert rows[(9, "ok")] == "src.ctx.Ctx.ok"  # a field the file's class declares one
    assert rows[(11, "ok")] == "src.ctx.Ctx.ok"


def test_a_receiverless_call_of_an_inherited_method_is_a_call_on_this():
    java = (
        "package p;\n"
        "class Cat extends Animal {\n"
        "    void run() {\n"
        "        speak();\n"  # 4: Animal's, inherited: this.speak()
        "        new Foo();\n"  # 5: a class of the package, not a method
        "    }\n"
        "}\n"
    )
    rows = targets("src/p/Cat.java", java, "java")
    assert rows[(4, "speak")] == "=Cat.speak"
    assert rows[(5, "Foo")] == "src.p.Foo"
    ruby = (
        "class Cat < Animal\n"
        "  def helper\n"
        "  end\n"
        "  def user(x)\n"
        "    helper\n"  # 5: a call, without parentheses
        "    x\n"  # 6: a parameter
        "    speak\n"  # 7: inherited
        "    [1].each { |y| y }\n"  # 8: a block's parameter
        "    Cat.new\n"  # 9: a use of the class
        "  end\n"
        "end\n"
    )
    rows = targets("a.rb", ruby, "ruby")  # (keyed by qualified name)
    assert rows[(5, "helper")] == "Cat.helper"
    assert rows[(7, "speak")] == "Cat.speak"
    assert rows[(9, "Cat")] == "Cat"
    assert not {key for key in rows if key[0] in (6, 8) and key[1] in ("x", "y")}


def test_a_rust_impl_of_a_trait_is_no_definition_of_its_type_s_name():
    text = (
        "struct Circle {\n"
        "    r: f64,\n"
        "}\n"
        "\n"
        "impl Circle {\n"  # 5
        "    fn unit() -> f64 { 1.0 }\n"
        "    fn scale() -> f64 { Circle::unit() }\n"
        "}\n"
        "\n"
        "impl Clone for Circle {\n"  # 10
        "    fn clone(&self) -> Circle { Circle { r: self.r } }\n"
        "}\n"
        "\n"
        "fn make() -> Circle { Circle { r: 1.0 } }\n"  # 14
    )
    rows = {(r.line, r.name, r.kind): r.target for r in refs_of("a.rs", text, "rust")}
    assert rows[(7, "unit", "call")] == "=Circle.unit"
    assert rows[(7, "Circle", "type")] == "=Circle"  # the type a path's function is of
    assert rows[(11, "Circle", "type")] == rows[(14, "Circle", "call")] == "=Circle"


def test_a_class_s_own_name_and_its_namespace_s_names_are_found_up_qualified_names_of_any_separator():
    java = "package p;\nclass Item {\n  static class Builder {\n    Builder name() { return this; }\n  }\n}\n"
    rows = targets("src/p/Item.java", java, "java")
    assert rows[(4, "Builder")] == "=Item.Builder"  # the nested class, not a class of the package
    cpp = (
        "namespace geo {\nclass Shape {};\nclass Square : public Shape {\n"
        "  void f() { g(); }\n  void g() {}\n};\ndouble area(const Shape& s);\n}\n"
    )
    rows = targets("sq.cpp", cpp, "cpp")
    assert rows[(3, "Shape")] == "=geo.Shape"  # a class of the namespace holding the class
    assert rows[(4, "g")] == "=geo.Square.g"
    assert rows[(7, "Shape")] == "=geo.Shape"  # in the namespace's own body
    # Out of its class, in a file that does not define the class: its name is not its constructor's
    # but the class's of a header the file includes.
    cpp = '#include "sq.h"\n\nSquare::Square(int s) {}\n\nSquare Square::unit() {\n  return Square(1);\n}\n'
    rows = targets("sq.cpp", cpp, "cpp")
    assert rows[(5, "Square")] == rows[(6, "Square")] == "?Square"


def test_a_csharp_call_through_base_is_the_base_class_s():
    text = "class B : A {\n    protected override void Log() {\n        base.Log();\n    }\n}\n"
    rows = targets("a.cs", text, "csharp")
    assert rows[(3, "Log")] == "^B.Log"


def test_rust_module_paths_from_mod_declarations_crate_super_and_inline_modules():
    text = (
        "mod util;\n"
        "\n"
        "pub fn root() -> u32 {\n"
        "    util::double(2) + crate::util::double(3)\n"  # 4
        "}\n"
        "\n"
        "fn local() -> u32 { 1 }\n"
        "\n"
        "mod tests {\n"  # 9
        "    use super::*;\n"
        "    use super::util::double;\n"
        "\n"
        "    fn helper() {}\n"
        "\n"
        "    fn works() {\n"  # 15
        "        super::local();\n"
        "        helper();\n"
        "        inner::deep();\n"
        "    }\n"
        "\n"  # 20
        "    mod inner {\n"
        "        pub fn deep() {}\n"
        "    }\n"
        "}\n"
        "\n"  # 25
        "fn via_self() -> u32 {\n"
        "    self::local() + self::util::double(1)\n"  # 27: the module the path stands in
        "}\n"
        "\n"
        "struct S;\n"  # 30
        "impl S {\n"
        "    fn m(&self) -> u32 { self::local() + self.n() }\n"  # 32: in a method too
        "    fn n(&self) -> u32 { 1 }\n"
        "}\n"
    )
    rows = [(r.line, r.name, r.target) for r in refs_of("src/lib.rs", text, "rust")]
    doubles = [(4, "src.util.double"), (4, "util.double"), (11, "src.util.double"), (27, "src.util.double")]
    assert [(line, t) for line, n, t in rows if n == "double"] == doubles
    assert (10, "*", "src") in rows  # the module holding tests: lib.rs's
    assert (16, "local", "src.local") in rows
    assert (17, "helper", "=tests.helper") in rows  # an item of the inline module the use is in
    assert (18, "deep", "=tests.inner.deep") in rows
    assert [(line, t) for line, n, t in rows if n == "local"] == [
        (16, "src.local"),
        (27, "src.local"),
        (32, "src.local"),
    ]
    assert (32, "n", "=S.n") in rows  # self.n(): the method's receiver


def test_a_rust_local_made_by_a_constructor_or_a_declared_result_is_typed_where_its_let_is_visible():
    text = (
        "mod util;\n"
        "use crate::shapes::Circle;\n"
        "use clap::Command;\n"
        "\n"
        "struct Local { r: u32 }\n"  # 5
        "\n"
        "impl Local {\n"
        "    fn new() -> Self { Local { r: 1 } }\n"
        "    fn area(&self) -> u32 { self.r }\n"
        "}\n"  # 10
        "\n"
        "fn make() -> Local { Local::new() }\n"
        "\n"
        "fn f() {\n"
        "    let a = Circle::new(1);\n"  # 15
        "    a.area();\n"  # 16: T::new() makes a T
        "    let b = Local { r: 2 };\n"
        "    b.area();\n"
        "    let c = make();\n"
        "    c.area();\n"  # 20: what the file's make() declares it returns
        "    let d: Local = c;\n"
        "    d.area();\n"
        "    let a = grow(a);\n"
        "    a.area();\n"  # 24: a let of no known type hides the typed one
        '    let e = Command::new("x");\n'
        "    e.get_matches();\n"  # 26: another crate's type (this repository's, perhaps)
        "    Local::new().area();\n"
        "    let util = util::helper(util::SIZE);\n"  # 28: the module, until the let is over
        "    util.area();\n"
        "}\n"
    )
    rows = {(r.line, r.name, r.kind): r.target for r in refs_of("src/lib.rs", text, "rust")}
    assert rows[(16, "area", "call")] == "shapes.Circle.area"
    assert (
        rows[(18, "area", "call")]
        == rows[(20, "area", "call")]
        == rows[(22, "area", "call")]
        == "=Local.area"
    )
    assert rows[(27, "area", "call")] == "=Local.area"
    assert rows[(24, "area", "call")] == rows[(29, "area", "call")] == ""
    assert rows[(26, "get_matches", "call")] == "?clap.Command.get_matches"  # placed by a question
    assert rows[(28, "helper", "call")] == "src.util.helper"
    assert rows[(8, "Local", "field")] == rows[(12, "Local", "field")] == "=Local"  # -> Self, -> Local
    assert not any(k[2] == "field" and k[0] == 9 for k in rows)  # -> u32: the language's, no type


def test_a_rust_type_of_another_crate_types_its_locals_under_a_key_a_question_places():
    """``use clap::Arg;`` then ``let a = Arg::new("x"); a.get_id()``, ``Arg::new("x").short('s')``
    or ``fn f(a: &Arg)`` typed nothing: another crate's type, which may be the repository's own
    (clap's tests name clap by its crate's name), so ``refs Arg::short`` missed clap's tests and
    examples. Such a type is keyed ``?clap.Arg``: a question places it through the crate's name
    when the repository defines that crate (``Cargo.toml``), else the member stays a name match."""
    text = (
        "use clap::{Arg, Command};\n"
        "use std::rc::Rc;\n"
        "\n"
        "struct App { cmd: Command }\n"
        "\n"  # 5
        "fn f(a: &Arg, app: App) {\n"
        "    a.get_id();\n"
        '    let b = Arg::new("x");\n'
        "    b.get_id();\n"
        '    Arg::new("x").short(\'s\').long("l");\n'  # 10
        "    let c: Command = make();\n"
        "    c.get_name();\n"
        "    app.cmd.get_name();\n"
        "    let r = Rc::new(b);\n"
        "    r.get_id();\n"  # 15
        "}\n"
    )
    rows = {(r.line, r.name, r.kind): r.target for r in refs_of("tests/t.rs", text, "rust")}
    assert rows[(7, "get_id", "call")] == rows[(9, "get_id", "call")] == "?clap.Arg.get_id"
    assert rows[(10, "short", "call")] == "?clap.Arg.short"
    assert rows[(10, "long", "call")] == "?clap.Arg.short.long"  # one step a question follows
    assert rows[(12, "get_name", "call")] == "?clap.Command.get_name"
    assert rows[(4, "Command", "field")] == "?clap.Command"  # App.cmd: app.cmd.get_name()
    assert rows[(15, "get_id", "call")] == "?std.rc.Rc.get_id"  # std: no crate of any repository's


def test_a_rust_field_named_after_a_dot_is_an_access_row_a_path_or_a_call_is_not():
    """``self.short`` and ``Self::short`` were both ``attr`` rows, told apart by reading
    their line again when a question was asked. A member after a dot with no call is a
    field (a method is called, or named by a path): an ``access`` row, no use of a
    definition; ``x.short::<T>()`` is a call."""
    text = (
        "pub struct Arg {\n"
        "    short: Option<char>,\n"
        "}\n"
        "\n"
        "impl Arg {\n"  # 5
        "    pub fn short(mut self, short: char) -> Self {\n"
        "        self.short = Some(short);\n"  # 7: written
        "        self\n"
        "    }\n"
        "    fn get(&self) -> Option<char> {\n"  # 10
        "        let f = Self::short;\n"  # 11: a path
        '        println!("{:?}", self.short);\n'  # 12: in a macro
        "        self.short.clone().or(self.short::<u8>())\n"  # 13
        "    }\n"
        "}\n"
    )
    rows = {(r.line, r.name, r.kind): r.target for r in refs_of("a.rs", text, "rust")}
    assert rows[(7, "short", "access")] == rows[(12, "short", "access")] == "=Arg.short"
    assert rows[(11, "short", "attr")] == "=Arg.short"
    assert rows[(13, "short", "access")] == rows[(13, "short", "call")] == "=Arg.short"
    assert not any(kind == "attr" for line, name, kind in rows if name == "short" and line != 11)
    assert "access" in NO_USE_KINDS


def test_a_rust_path_from_a_crate_the_file_does_not_bind_is_keyed_as_its_use_would_be():
    """``clap::Arg::new(..)`` with no ``use`` had no target, where ``use clap::Arg;
    Arg::new(..)`` is ``clap.Arg.new``: a path's head the file does not bind, followed by
    ``::``, is a crate's name (a question places the repository's own: its Cargo.toml)."""
    text = (
        "use std::fmt;\n"
        "mod util;\n"
        "\n"
        "fn f(x: Other) -> clap::Command {\n"
        '    let a = clap::Arg::new("x");\n'  # 5
        "    ::clap_lex::RawArgs::new(x);\n"
        "    serde_json::to_string(x);\n"
        "    x.y::<u8>();\n"
        "    u64::from(1);\n"
        "    fmt::format(x)\n"  # 10
        "}\n"
        "\n"
        "mod inner {\n"
        "    use super::*;\n"
        "\n"  # 15
        "    fn g() {\n"
        "        helpers::f();\n"  # 17: perhaps a module the glob brings in
        "    }\n"
        "}\n"
    )
    rows = {(r.line, r.name, r.kind): r.target for r in refs_of("src/a.rs", text, "rust")}
    assert rows[(4, "Command", "type")] == "clap.Command"
    assert rows[(5, "new", "call")] == "clap.Arg.new"
    assert rows[(6, "new", "call")] == "clap_lex.RawArgs.new"
    assert rows[(7, "to_string", "call")] == "serde_json.to_string"
    assert rows[(10, "format", "call")] == "std.fmt.format"
    assert not any(line in (8, 9, 17) and target for (line, _, _), target in rows.items())


def test_a_rust_local_of_a_type_named_by_another_crate_s_full_path_is_typed_as_with_a_use():
    """``let a = clap::Arg::new("x"); a.get_id()`` (no ``use``) typed nothing, where ``use
    clap::Arg;`` types ``a`` ``?clap.Arg``: a type's path from a crate the file does not bind
    types a ``let``, a parameter and a result as its ``use`` would; not where a glob import may
    bring in a module of the path's head, nor a local's name."""
    text = (
        "fn f(p: &clap::Arg) -> clap::Command {\n"
        '    let a = clap::Arg::new("x");\n'
        "    a.get_id();\n"
        "    p.get_id();\n"
        "    let c: clap::Command = make();\n"  # 5
        "    c.get_name();\n"
        "    c\n"
        "}\n"
        "\n"
        "mod inner {\n"  # 10
        "    use super::*;\n"
        "\n"
        "    fn g() {\n"
        "        let h = helpers::Helper::new();\n"
        "        h.run();\n"  # 15
        "    }\n"
        "}\n"
    )
    want = {
        (3, "get_id", "call"): "?clap.Arg.get_id",
        (4, "get_id", "call"): "?clap.Arg.get_id",
        (6, "get_name", "call"): "?clap.Command.get_name",
        (1, "Command", "field"): "?clap.Command",  # what f returns
        (15, "run", "call"): "",
    }
    got = {(r.line, r.name, r.kind): r.target for r in refs_of("tests/t.rs", text, "rust")}
    assert {k: got.get(k) for k in want} == want


def test_a_rust_method_s_result_is_read_as_its_element_and_types_a_let_a_loop_and_a_chain():
    """``for a in cmd.get_arguments() { a.get_id() }`` and ``let a = cmd.find(x).unwrap();
    a.get_id()`` left ``get_id`` a name match: a method call's result was not read. What a
    function declares it returns is read as the element a caller reaches (through ``&``,
    ``Option``, ``Result``, ``Vec``, a slice, ``impl Iterator<Item = T>``, ...): its ``field``
    row; a method of a typed receiver keys its result by its path (``Command.find``: one step a
    question follows), and ``.unwrap()``, ``.expect()``, ``?``, ``.filter()`` after it are no
    step. Past a second unknown step, or after a field's path, the member stays a name match."""
    text = (
        "use crate::builder::{Arg, Command};\n"
        "\n"
        "pub struct Local;\n"
        "\n"
        "impl Local {\n"  # 5
        "    fn find(&self, id: u32) -> Option<&Arg> {\n"
        "        None\n"
        "    }\n"
        "    fn all(&self) -> impl Iterator<Item = &'_ Arg> + '_ {\n"
        "        [].iter()\n"  # 10
        "    }\n"
        "    fn f(&self, cmd: &Command) -> Result<Vec<Arg>, String> {\n"
        "        self.find(1).unwrap().get_id();\n"
        "        for a in self.all() {\n"
        "            a.get_id();\n"  # 15
        "        }\n"
        "        let g = cmd.find(2)?;\n"
        "        g.get_id();\n"
        '        cmd.find(3).expect("x").get_id();\n'
        "        cmd.app().find(4).get_id();\n"  # 20
        "        cmd.inner.find(5).get_id();\n"
        "        for b in cmd.get_arguments().filter(|a| a.is_set()) {\n"
        "            b.get_id();\n"
        "        }\n"
        "        b.get_id();\n"  # 25
        "        Ok(vec![])\n"
        "    }\n"
        "}\n"
    )
    rows = refs_of("src/a.rs", text, "rust")
    fields = {r.scope: r.target for r in rows if r.kind == "field"}
    assert fields == {"Local::find": "builder.Arg", "Local::all": "builder.Arg", "Local::f": "builder.Arg"}
    ids = {r.line: r.target for r in rows if r.name == "get_id"}
    assert ids == {
        13: "builder.Arg.get_id",
        15: "builder.Arg.get_id",
        18: "builder.Command.find.get_id",
        19: "builder.Command.find.get_id",
        20: "",
        21: "",
        23: "builder.Command.get_arguments.get_id",
        25: "",
    }


def test_a_rust_struct_s_field_of_a_named_type_types_self_s_member_of_that_name():
    """``struct App { cmd: Command }`` then ``self.cmd.get_name()`` had no typed receiver:
    a Rust struct's fields were not read. A field of a plain path's type (through ``Box``,
    ``Rc``, ``Arc``, whose methods are their content's) is a ``field`` row and types
    ``self.cmd``; ``Vec<Command>``, ``Option<Command>``, a type parameter do not."""
    text = (
        "use crate::builder::Command;\n"
        "\n"
        "pub struct App<'a, T> {\n"
        "    pub(crate) cmd: Command,\n"
        "    boxed: Box<Command>,\n"  # 5
        "    shared: std::rc::Rc<crate::builder::Command>,\n"
        "    many: Vec<Command>,\n"
        "    maybe: Option<Command>,\n"
        "    other: T,\n"
        "    name: &'a Command,\n"  # 10
        "}\n"
        "\n"
        "enum E {\n"
        "    V { cmd: Command },\n"
        "}\n"  # 15
        "\n"
        "impl<'a, T> App<'a, T> {\n"
        "    fn f(&self) {\n"
        "        self.cmd.get_name();\n"
        "        self.boxed.get_name();\n"  # 20
        "        self.shared.get_name();\n"
        "        self.name.get_name();\n"
        "        self.many.len();\n"
        "        self.maybe.map(|c| c.get_name());\n"
        "        self.other.get_name();\n"  # 25
        "        let cmd = 1;\n"
        "        cmd.get_name();\n"
        "    }\n"
        "}\n"
        "\n"  # 30
        "fn g(cmd: u8) {\n"
        "    for cmd in 0..1 {\n"
        "        cmd.get_name();\n"
        "    }\n"
        "}\n"
    )
    rows = {(r.line, r.name, r.kind): (r.scope, r.target) for r in refs_of("src/app.rs", text, "rust")}
    fields = {(line, scope): target for (line, _, kind), (scope, target) in rows.items() if kind == "field"}
    assert fields == {
        (4, "App.cmd"): "builder.Command",
        (5, "App.boxed"): "builder.Command",
        (6, "App.shared"): "builder.Command",
        (10, "App.name"): "builder.Command",
    }
    calls = {line: target for (line, name, kind), (_, target) in rows.items() if name == "get_name"}
    assert calls == {19: "builder.Command.get_name", 20: "builder.Command.get_name"} | {
        21: "builder.Command.get_name",
        22: "builder.Command.get_name",
        24: "",
        25: "",
        27: "",
        33: "",
    }


def test_a_rust_parameter_of_a_type_s_path_types_its_members_in_its_function_or_closure():
    """``fn render(cmd: &Command) { cmd.get_name(); }`` had no typed receiver: a Rust
    parameter was bound, never typed. One of a type's path (through ``&``, ``&'a mut``,
    ``Box``) is typed as ``let x: T`` is, a closure's in the closure; a type parameter,
    ``impl Trait``, a builtin's and an untyped closure's parameter are not."""
    text = (
        "use crate::builder::Command;\n"
        "\n"
        "fn render<T: Clone>(cmd: &Command, out: &mut Vec<u8>, b: Box<Command>, t: T, i: impl Fn()) {\n"
        "    cmd.get_name();\n"
        "    b.get_name();\n"  # 5
        "    t.get_name();\n"
        "    out.get_name();\n"
        "    let f = |c: &'static mut Command, d| c.get_name() + d.get_name();\n"
        "    [1].iter().map(|cmd| cmd.get_name());\n"
        "    c.get_name();\n"  # 10
        "    let cmd = 3;\n"
        "    cmd.get_name();\n"
        "}\n"
    )
    rows = {(r.line, r.name): r.target for r in refs_of("src/a.rs", text, "rust") if r.name == "get_name"}
    assert rows == {
        (4, "get_name"): "builder.Command.get_name",
        (5, "get_name"): "builder.Command.get_name",
        (6, "get_name"): "",
        (7, "get_name"): "",
        (8, "get_name"): "",  # d's, the last on the line: c's below
        (9, "get_name"): "",
        (10, "get_name"): "",
        (12, "get_name"): "",
    }
    line_8 = [r.target for r in refs_of("src/a.rs", text, "rust") if r.line == 8 and r.name == "get_name"]
    assert line_8 == ["builder.Command.get_name", ""]


def test_a_rust_builder_chain_is_typed_by_what_its_first_call_makes():
    """``Arg::new("x").short('s')`` had no typed receiver: the receiver's text holds the
    call's arguments. It is read from the tree, arguments left out: ``short`` is ``Arg``'s,
    a method of this file declaring ``-> Self`` keeps the chain typed, one of another
    file's is keyed by its path (``Arg.short.long``: one step a question follows), and past
    a second such step the member is unknown (a name match, as before)."""
    text = (
        "use crate::builder::Arg;\n"
        "\n"
        "pub struct Local;\n"
        "\n"
        "impl Local {\n"  # 5
        "    pub fn new(r: u32) -> Self { Local }\n"
        "    pub fn grow(self, by: u32) -> Self { self }\n"
        "    pub fn area(&self) -> u32 { 1 }\n"
        "}\n"
        "\n"  # 10
        "fn chain() {\n"
        '    Arg::new("x").short(\'s\').long("x").help("h");\n'
        "    Local::new(1).grow(2)\n"
        "        .grow(3)\n"
        "        .area();\n"  # 15
        "}\n"
    )
    rows = {(r.line, r.name): r.target for r in refs_of("src/a.rs", text, "rust") if r.kind == "call"}
    assert rows[(12, "short")] == "builder.Arg.short"
    assert rows[(12, "long")] == "builder.Arg.short.long"
    assert rows[(12, "help")] == ""
    assert rows[(13, "grow")] == rows[(14, "grow")] == "=Local.grow"
    assert rows[(15, "area")] == "=Local.area"


def test_an_arrow_separates_a_member_only_where_the_language_reads_it_so():
    java = (
        "package p;\n"
        "import q.Money;\n"
        "class A {\n"
        "    void f(java.util.List<Integer> xs) {\n"
        "        xs.forEach(x -> Money.format(x));\n"  # 5: a lambda's arrow
        "        xs.forEach(x->Money.format(x));\n"
        "    }\n"
        "}\n"
    )
    rows = targets("src/p/A.java", java, "java")
    assert rows[(5, "format")] == rows[(6, "format")] == "q.Money.format"
    rust = "mod client;\n\nfn f() -> client::C {\n    client::C::new()\n}\n"  # a result's arrow
    rows = targets("a.rs", rust, "rust")
    assert rows[(3, "C")] == "a.client.C"
    cpp = "class A {\n  void run() {}\n  void go() { this->run(); }\n};\n"  # a member's
    rows = targets("a.cpp", cpp, "cpp")
    assert rows[(3, "run")] == "=A.run"


def test_a_jvm_receiver_named_like_a_type_is_a_nested_class_or_a_class_of_the_package():
    java = (
        "package p;\n"
        "class A {\n"
        "    enum Kind { X; static Kind parse() { return X; } }\n"
        "    void f(Other items) {\n"
        "        B.make();\n"  # 5: a class of the package, not imported
        "        Kind.parse();\n"  # 6: a nested class
        "        String.valueOf(1);\n"  # 7: java.lang's
        "        items.add(1);\n"  # 8: a local
        "    }\n"
        "}\n"
    )
    calls = [(r.line, r.target) for r in refs_of("src/p/A.java", java, "java") if r.kind == "call"]
    assert calls[-4:] == [(5, "src.p.B.make"), (6, "=A.Kind.parse"), (7, ""), (8, "src.p.Other.add")]
    kotlin = 'package p\n\nfun f() {\n    Registry.register("x")\n}\n'
    rows = targets("src/p/F.kt", kotlin, "kotlin")
    assert rows[(4, "register")] == "src.p.Registry.register"


def test_java_fields_and_a_for_each_s_variable_are_typed():
    java = (
        "package p;\n"
        "import q.Checkout;\n"
        "class Cart {\n"
        "    private final Checkout checkout = new Checkout();\n"
        "    private java.util.List<Item> items;\n"
        "    void pay() {\n"
        "        checkout.pay(1);\n"  # 7: the field (this.checkout)
        "        this.checkout.pay(2);\n"
        "        for (Item item : items) {\n"
        "            item.price();\n"  # 10: the loop's variable
        "        }\n"
        "    }\n"
        "    void other(Other checkout) { checkout.pay(3); }\n"  # 13: a parameter hides the field
        "}\n"
    )
    calls = {(r.line, r.name): r.target for r in refs_of("src/p/Cart.java", java, "java") if r.kind == "call"}
    assert [calls[(7, "pay")], calls[(8, "pay")]] == ["q.Checkout.pay"] * 2
    assert calls[(10, "price")] == "src.p.Item.price"
    assert calls[(13, "pay")] == "src.p.Other.pay"


def test_java_a_var_made_by_new_is_typed():
    java = (
        "package p;\nclass A {\n    void f() {\n        var c = new Circle();\n        c.area();\n    }\n}\n"
    )
    assert targets("src/p/A.java", java, "java")[(5, "area")] == "src.p.Circle.area"


def test_kotlin_locals_parameters_and_properties_are_typed():
    """val x = Foo(), val y: Foo, a parameter, a constructor's val and a class's property
    had no type: each x.m() was a name match."""
    kotlin = (
        "package p\n"
        "import q.Sock\n"
        "import q.closeQuietly\n"
        "class A(val b: B, private var s: Sock?, plain: Foo) {\n"
        "    private val g = Foo()\n"  # 5
        "    fun go(p: Foo, vararg vs: Foo) {\n"
        "        val x = Foo()\n"
        "        val y: Foo = make()\n"
        "        x.m(); y.m(); p.m(); g.m(); this.g.m()\n"  # 9
        "        b.run(); s?.closeQuietly(); plain.m(); vs.m()\n"  # 10
        "        val z = make()\n"
        "        z.m()\n"  # 12: what make returns is not known
        "    }\n"
        "}\n"
    )
    rows = refs_of("src/p/A.kt", kotlin, "kotlin")
    calls = [(r.line, r.target) for r in rows if r.kind == "call" and r.line in (9, 10, 12)]
    assert calls == [
        *[(9, "src.p.Foo.m")] * 5,
        (10, "src.p.B.run"),
        (10, "q.closeQuietly"),  # an extension the file imports, whatever the receiver's type
        (10, ""),  # no val: no property
        (10, ""),  # vararg: an array
        (12, ""),
    ]
    fields = sorted((r.scope, r.target) for r in rows if r.kind == "field")
    assert fields == [("A.b", "src.p.B"), ("A.g", "src.p.Foo"), ("A.s", "q.Sock")]


def test_csharp_a_using_s_namespace_and_typed_locals():
    """A type the file does not bind is keyed ?Name (a namespace in scope: the question
    says which); a local, a parameter, a field, a property and a foreach variable are typed."""
    cs = (
        "using Billing.Models;\n"
        "using static System.Math;\n"
        "using Inv = Billing.Models.Invoice;\n"
        "namespace App {\n"
        "  class P {\n"  # 5
        "    private Invoice f;\n"
        "    public Line Prop { get; set; }\n"
        "    void Go(Invoice a) {\n"
        "      var x = new Invoice(); Invoice y = Invoice.Empty(); Invoice? n = x;\n"
        "      x.M(); y.M(); a.M(); f.M(); Prop.M(); Inv.Empty(); n.M();\n"  # 10
        "      foreach (Line e in es) { e.N(); }\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    rows = refs_of("a.cs", cs, "csharp")
    assert [(r.name, r.target) for r in rows if r.kind == "import"] == [
        ("*", "Billing.Models"),
        ("Invoice", "Billing.Models.Invoice"),
    ]
    assert [r.target for r in rows if r.line in (9, 10, 11) and r.kind == "call"] == [
        "?Invoice",
        "?Invoice.Empty",
        *["?Invoice.M"] * 4,
        "?Line.M",
        "Billing.Models.Invoice.Empty",
        "?Invoice.M",  # a nullable local: Invoice? n
        "?Line.N",
    ]
    assert sorted((r.scope, r.target) for r in rows if r.kind == "field") == [
        ("App.P.Prop", "?Line"),
        ("App.P.f", "?Invoice"),
    ]


def test_a_csharp_property_read_is_a_use_of_the_property():
    """A property was no definition, and a read of it named plainly (Total in its class) no
    use: only cart.Total and this.Total were rows. A local of its name hides it, a receiver
    named as a property named as its type (Status Status) may be the type's (Status.Draft),
    and an unknown member stays the name match it was."""
    cs = (
        "namespace Acme.Shop\n"
        "{\n"
        "    public enum Status { Draft, Sent }\n"
        "    public class Cart\n"
        "    {\n"  # 5
        "        public decimal Total { get; set; }\n"
        "        public int Count => 2;\n"
        "        public Status Status { get; }\n"
        "        public event EventHandler Changed;\n"
        "        public decimal Twice() { return Total * 2 + this.Total + Count; }\n"  # 10
        "        public bool Done(Status s) { Changed += OnIt; return Status == Status.Draft; }\n"
        "        decimal Shadow(decimal Total) { return Total; }\n"
        "    }\n"
        "    public class Till\n"
        "    {\n"  # 15
        "        public decimal Ring(Cart cart) { return cart.Total + cart.Count + cart.Missing; }\n"
        "    }\n"
        "}\n"
    )
    rows = refs_of("Cart.cs", cs, "csharp")
    uses = [(r.line, r.name, r.kind, r.scope, r.target) for r in rows if r.line >= 10]
    own = "Acme.Shop.Cart"
    assert uses == [
        (10, "Total", "name", f"{own}.Twice", f"{own}.Total"),
        (10, "Total", "attr", f"{own}.Twice", f"{own}.Total"),
        (10, "Count", "name", f"{own}.Twice", f"{own}.Count"),
        (11, "Status", "type", f"{own}.Done", "Acme.Shop.Status"),  # a type: the enum, not the property
        (11, "Changed", "name", f"{own}.Done", f"{own}.Changed"),
        (11, "Status", "name", f"{own}.Done", f"{own}.Status"),
        (11, "Draft", "attr", f"{own}.Done", "?Status.Draft"),
        (16, "Cart", "type", "Acme.Shop.Till.Ring", own),
        (16, "Total", "attr", "Acme.Shop.Till.Ring", "?Cart.Total"),
        (16, "Count", "attr", "Acme.Shop.Till.Ring", "?Cart.Count"),
        (16, "Missing", "attr", "Acme.Shop.Till.Ring", "?Cart.Missing"),
    ]
    # the property's type is still the class's field, for other files' cart.Status.x
    fields = sorted((r.scope, r.target) for r in rows if r.kind == "field")
    assert fields == [(f"{own}.Changed", "?EventHandler"), (f"{own}.Status", "?Status")]


def test_a_csharp_property_of_a_base_or_of_another_part_read_bare_is_a_use_of_it():
    """Total read plainly in a class deriving one that declares it, or in a part of a
    partial class whose other part (another file) declares it, made no row: the file
    declares no property of its name. Now it is this.Total's, as a call of an inherited
    method is; a local, a parameter or a field of the file hides it, a camelCase name is no
    property's, a receiver (Console.WriteLine, Status.Draft) or a name the file names as a
    type may be a type's (unknown), and what an initializer sets is the new object's."""
    cs = (
        "namespace Acme.Shop\n"
        "{\n"
        "    public class Cart : BaseCart\n"
        "    {\n"
        "        private int count;\n"  # 5
        "        public int Half() { return Total / 2 + count; }\n"
        "        int Local() { var Total = 1; return Total; }\n"
        "        void Log() { Console.WriteLine(Items[0]); Print(Name ?? Label); }\n"
        "        Foo Make() { Use(Foo.Empty, Widget); return new Foo { Bar = Baz }; }\n"
        "    }\n"  # 10
        "    public partial class Till\n"
        "    {\n"
        "        public bool Open() { return !Closed && Items?.Count > 0; }\n"
        "    }\n"
        "    public class Plain\n"  # 15
        "    {\n"
        "        public int Get() { return Total; }\n"
        "    }\n"
        "    class Widget { }\n"
        "}\n"  # 20
    )
    rows = refs_of("Cart.cs", cs, "csharp")
    names = [(r.line, r.name, r.target) for r in rows if r.kind == "name"]
    assert names == [
        (6, "Total", "Acme.Shop.Cart.Total"),
        (8, "Items", "Acme.Shop.Cart.Items"),
        (8, "Name", "Acme.Shop.Cart.Name"),
        (8, "Label", "Acme.Shop.Cart.Label"),
        (9, "Widget", "Acme.Shop.Widget"),  # the file's class
        (9, "Baz", "Acme.Shop.Cart.Baz"),
        (13, "Closed", "Acme.Shop.Till.Closed"),
        (13, "Items", "Acme.Shop.Till.Items"),
    ]


def test_a_csharp_use_on_a_line_several_definitions_share_is_in_the_one_holding_it():
    """A row names a line, not a column: every use on the line of a class written on one
    line was in its last method (Draw), Plot's call of Cart.Empty() too, and its locals
    were Draw's."""
    cs = (
        "namespace Acme.Scoped;\n"
        "\n"
        "public class Plotter { public void Plot(Point p) { var c = new Cart(); c.Add(p); Draw(p); }"
        " void Draw(Point q) { Cart.Empty(); } }\n"
    )
    rows = [(r.name, r.kind, r.scope, r.target) for r in refs_of("Plotter.cs", cs, "csharp")]
    plot, draw = "Acme.Scoped.Plotter.Plot", "Acme.Scoped.Plotter.Draw"
    assert rows == [
        ("Point", "type", plot, "?Point"),
        ("Cart", "call", plot, "?Cart"),
        ("Add", "call", plot, "?Cart.Add"),  # c is Plot's local, of a known type
        ("Draw", "call", plot, draw),
        ("Point", "type", draw, "?Point"),
        ("Empty", "call", draw, "?Cart.Empty"),
    ]


def test_a_dot_joining_strings_is_no_member_separator_in_php():
    php = (
        "<?php\n"
        "class A {\n"
        "  function f() {\n"
        "    return $this->g() . self::unit() . ' ' . static::unit();\n"
        "  }\n"
        "  static function unit() {}\n"
        "  function g() {}\n"
        "}\n"
    )
    found = [(r.name, r.target) for r in refs_of("a.php", php, "php") if r.line == 4]
    assert found == [("g", "=A.g"), ("unit", "=A.unit"), ("unit", "=A.unit")]


def test_a_php_use_of_a_function_or_a_constant_is_keyed_by_its_name():
    php = "<?php\nuse function App\\Shop\\helper;\nuse const App\\Shop\\MAX;\n\nhelper(MAX);\n"
    rows = targets("a.php", php, "php")
    assert [rows[(2, "helper")], rows[(3, "MAX")], rows[(5, "helper")]] == [
        "App.Shop.helper",
        "App.Shop.MAX",
        "App.Shop.helper",
    ]


def test_a_cpp_call_through_nested_namespaces_is_a_use():
    cpp = (
        "namespace util {\n"
        "namespace detail {\n"
        "int helper(int x) { return x; }\n"
        "}\n"
        "}\n"
        "\n"
        "int run() { return util::detail::helper(1) + ::util::detail::helper(2); }\n"
    )
    found = [(r.name, r.target) for r in refs_of("a.cpp", cpp, "cpp") if r.line == 7]
    assert found == [("helper", "=util.detail.helper")] * 2


def test_a_cpp_specialization_s_name_over_several_lines_keeps_each_row_on_one_line():
    """nlohmann/json's ``struct iterator_types <\\n It, ...>`` made targets holding line
    breaks: the file's rows could not be read back (impact of the header failed)."""
    cpp = (
        "namespace detail {\n"
        "template<typename It, typename = void>\n"
        "struct iterator_types {};\n"
        "template<typename It>\n"
        "struct iterator_types <\n"  # 5
        "    It,\n"
        "    void_t<typename It::difference_type>>\n"
        "{\n"
        "    using difference_type = typename It::difference_type;\n"
        "    difference_type d;\n"  # 10
        "};\n"
        "}\n"
    )
    rows = chunk_file("a.hpp", cpp, "cpp").refs
    assert rows is not None and len(rows.refs()) == len(rows.text.split("\n"))
    (target,) = {r.target for r in rows.refs() if r.line == 10}
    assert target.startswith("=detail.iterator_types <") and target.endswith(">>.difference_type")


def test_a_python_return_annotation_s_arrow_is_no_member_separator():
    text = (
        "import typing as t\n"
        "import m\n"
        "def f() -> m.T: pass\n"
        "def g() -> t.Iterator[int]:\n"
        "    return iter(())\n"
        "class A:\n"
        "    def h(self):\n"
        "        self.x = (\n"
        "            m.make()\n"
        "        )\n"
    )
    rows = {(r.line, r.name, r.kind): r.target for r in refs_of("a.py", text, "python")}
    assert rows[(3, "T", "type")] == "m.T"  # not f()'s result's m.T
    assert rows[(4, "Iterator", "attr")] == "typing.Iterator"
    assert rows[(9, "make", "call")] == "m.make"


def test_python_fields_and_locals_typed_by_a_method_s_result_a_member_s_read_or_a_with():
    text = (
        "from pkg.config import Config\n"  # 1
        "from pkg.sessions import Sessions\n"
        "import lib\n"
        "\n"
        "\n"  # 5
        "class App:\n"
        "    sessions: Sessions = make()\n"
        "\n"
        "    def __init__(self):\n"
        "        self.config = self.make_config()\n"  # 10
        "\n"
        "    def make_config(self) -> Config:\n"
        "        return Config()\n"
        "\n"
        "    def __enter__(self):\n"  # 15
        "        return self\n"
        "\n"
        "\n"
        "class Ctx:\n"
        "    def __init__(self, app: App):\n"  # 20
        "        self.app = app\n"
        "\n"
        "    def push(self):\n"
        "        self.app.config.load()\n"
        "        sessions = self.app.sessions\n"  # 25
        "        sessions.open()\n"
        "        config = self.made()\n"
        "        config.load()\n"
        "        same = config\n"
        "        same.load()\n"  # 30
        "        with lib.raises(ValueError) as info:\n"
        "            info.render()\n"
        "        with App() as app:\n"
        "            app.make_config()\n"
        "        del Config\n"  # 35
        "\n"
        "    def made(self):\n"
        "        config = self.app.make_config()\n"
        "        return config\n"
        "\n"  # 40
        "\n"
        "class Info:\n"
        '    def f(self) -> "lib.Generic[int]":\n'
        "        return 1\n"
        '    def g(self) -> "lib.Info[int]":\n'  # 45
        "        return 1\n"
        "\n"
        "\n"
        "class Pool:\n"
        "    def _get(self):\n"  # 50
        "        return self.pool.pop()\n"
        "\n"
        "    def use(self):\n"
        "        conn = self._get()\n"
        "        conn.close()\n"  # 55
    )
    refs = refs_of("a.py", text, "python")
    fields = {r.scope: r.target for r in refs if r.kind == "field"}
    assert fields["App.config"] == "pkg.config.Config"  # what make_config declares
    assert fields["App.__enter__"] == "=App"  # return self
    assert fields["Ctx.made"] == "pkg.config.Config"  # a local of a method's result, returned
    assert fields["Info.f"] == "lib.Generic" and fields["Info.g"] == "lib.Info"  # a generic's class
    rows = {(r.line, r.name): r.target for r in refs if r.kind != "field"}
    assert rows[(24, "load")] == "pkg.config.Config.load"  # self.app.config: two fields of known types
    assert rows[(26, "open")] == "pkg.sessions.Sessions.open"  # a local read from a field
    assert rows[(28, "load")] == "pkg.config.Config.load"  # self.made(): made returns make_config()'s
    assert rows[(30, "load")] == ""  # a copy of a local: its type is the function's, in no order
    assert rows[(32, "render")] == "lib.raises.__enter__.render"  # what raises's value's __enter__ returns
    assert rows[(34, "make_config")] == "=App.make_config"  # App's __enter__ returns self
    assert rows[(35, "Config")] == "pkg.config.Config"  # del names it
    assert rows[(55, "close")] == ""  # _get, the file's, says nothing of its result: a name match


def test_a_python_local_read_from_one_typed_later_in_its_function_is_read_a_second_time():
    text = (
        "from pkg.conn import Conn\n"  # 1
        "\n"
        "\n"
        "class App:\n"
        "    conn: Conn = make()\n"  # 5
        "\n"
        "\n"
        "class Ctx:\n"
        "    def __init__(self, app: App):\n"
        "        self.app = app\n"  # 10
        "\n"
        "    def run(self, prev=None):\n"
        "        for _ in range(2):\n"
        "            if prev is not None:\n"
        "                conn = prev.conn\n"  # 15
        "                conn.close()\n"
        "            prev = self.app\n"
    )
    refs = refs_of("a.py", text, "python")
    rows = {(r.line, r.name): r.target for r in refs if r.kind != "field"}
    # prev is typed after conn's line is first read: a local's type is its function's, in no order
    assert rows[(16, "close")] == "pkg.conn.Conn.close"


def test_a_member_of_a_typescript_private_field_is_the_field_s_type_s_not_a_local_s_of_its_name():
    text = (
        "import { HeaderRecord } from './h';\n"
        "import { Store } from './store';\n"
        "export class C {\n"
        "  #headers: Headers | undefined\n"
        "  #store: Store\n"  # 5
        "  f(headers: HeaderRecord, store: number) {\n"
        "    this.#headers.set('a', 'b')\n"  # 7: the private field's, of no known type
        "    headers.set('c', 'd')\n"  # 8: the parameter's
        "    this.#store.get('e')\n"  # 9: the private field's, of its declared type
        "    this.#store?.get('f')\n"
        "  }\n"
        "}\n"
    )
    rows = targets("a.ts", text, "typescript")
    assert rows[(7, "set")] == ""
    assert rows[(8, "set")] == "h.HeaderRecord.set"
    assert rows[(9, "get")] == rows[(10, "get")] == "store.Store.get"
    js = (
        "import { Store } from './store'\n"
        "export class C {\n"
        "  #store\n"
        "  constructor() { this.#store = new Store() }\n"
        "  f() { return this.#store.get('e') }\n"  # 5: as a field made in the constructor
        "}\n"
    )
    assert targets("a.js", js, "javascript")[(5, "get")] == "store.Store.get"


def test_a_file_s_rows_are_the_same_in_every_process(tmp_path):
    """The rows of fields found from captures py-tree-sitter gives in no
    fixed order (a TypeScript interface's call signatures) came out in
    another order in each process, so two builds of one file differed."""
    import subprocess
    import sys

    signatures = "\n".join(f"  <P{i} extends string>(path: P{i}, ...handlers: H[]): Hono" for i in range(10))
    source = tmp_path / "i.ts"
    source.write_text(
        f"import type {{ H, Hono }} from './types'\nexport interface Api {{\n{signatures}\n}}\n"
    )
    script = (
        "import sys\nfrom repolens.chunking.dispatch import chunk_file\n"
        "print(chunk_file('src/i.ts', open(sys.argv[1]).read(), 'typescript').refs.text)\n"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", script, str(source)], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(4)
    }
    assert len(runs) == 1 and "\tfield\t" in runs.pop()


def test_a_cpp_name_the_file_does_not_bind_is_keyed_for_the_headers_it_includes():
    """``make_widget(x)`` after ``#include "widget.h"`` was a name match (no key): which
    header declares it is the question's to say, so it is keyed ``?make_widget``."""
    cpp = '#include "widget.h"\n\nint run(int x) {\n  make_widget(x);\n  return Widget::create();\n}\n'
    rows = targets("main.cpp", cpp, "cpp")
    assert [rows[(4, "make_widget")], rows[(5, "create")]] == ["?make_widget", "?Widget.create"]
    assert (
        targets("main.c", '#include "w.h"\nint run(void) { return make(1); }\n', "c")[(2, "make")] == "?make"
    )
    assert targets("main.cpp", "int run(int x) { return make_widget(x); }\n", "cpp")[(1, "make_widget")] == ""


def test_a_cpp_class_member_declared_with_a_type_types_its_members():
    """``Widget m;`` in a class's body did not type ``m``: ``m.draw()``, ``p->draw()`` and
    ``this->m.draw()`` in its methods were name matches. A member's declared type is now its
    class's field (a ``field`` row, as in the other languages), a local shadowing it."""
    cpp = (
        "class Widget { public: void draw(); };\n"
        "class Game {\n"
        "  Widget m;\n"
        "  std::unique_ptr<Widget> p;\n"
        "  Widget* q, r;\n"  # 5
        "  void (*on_run)(int);\n"
        "  void run() { m.draw(); p->draw(); this->m.draw(); q->draw(); r.draw(); }\n"
        "  void walk();\n"
        "  void stop() { int m = 0; m.draw(); }\n"
        "};\n"  # 10
        "void Game::walk() { m.draw(); }\n"
        "void other() { m.draw(); }\n"
    )
    found = refs_of("game.cpp", cpp, "cpp")
    assert [(r.line, r.scope, r.target) for r in found if r.kind == "field"] == [
        (3, "Game.m", "=Widget"),
        (4, "Game.p", "=Widget"),
        (5, "Game.q", "=Widget"),
        (5, "Game.r", "=Widget"),
    ]
    calls = [(r.line, r.target) for r in found if r.name == "draw"]
    assert calls == [(7, "=Widget.draw")] * 5 + [(9, ""), (11, "=Widget.draw"), (12, "")]


def test_a_cpp_loop_variable_or_local_named_with_its_keyword_types_its_members():
    """``for (Sender& e : all) e.send(1, 2);`` and ``struct Sender s; s.send(1);`` were name
    matches (a range loop's variable and a type named with ``struct`` had no type); they are
    ``Sender``'s, as ``Sender s;`` is, so each overload has its own. ``auto&`` stays untyped."""
    cpp = (
        '#include "sender.h"\n'
        "void run(const std::vector<Sender>& all) {\n"
        "  for (Sender& e : all) { e.send(1, 2); }\n"
        "  for (const Sender* p : ptrs) p->send(1);\n"
        "  for (auto& a : all) { a.send(1); }\n"  # 5
        "  struct Sender s;\n"
        "  s.send(1);\n"
        "}\n"
    )
    rows = targets("main.cpp", cpp, "cpp")
    assert [rows[(line, "send")] for line in (3, 4, 5, 7)] == [
        "?Sender.send",
        "?Sender.send",
        "",
        "?Sender.send",
    ]


def test_a_cpp_member_used_bare_in_a_method_defined_apart_is_keyed_for_its_header():
    """``m.send(1)`` in ``void Widget::run() {...}``, ``Widget`` declared by a header the
    file includes, had no target: it is ``Widget``'s ``m``'s (``?Widget.m.send``), as
    ``this->m.send()`` is, which a question tries in the header. Not a local's, not a name
    the file writes before ``::``, not in a function of no class, not in a file including
    no header."""
    cpp = (
        '#include "widget.hpp"\n'
        "void ui::Widget::run() {\n"
        "  m.send(1);\n"
        "  this->m.send(1, 2);\n"
        "  int n = 0;\n"  # 5
        "  n.send(1);\n"
        "  m.q.send(1);\n"
        "  clock::now(); v.clock::now();\n"
        "}\n"
        "void other() { m.send(1); }\n"  # 10
    )
    rows = targets("run.cpp", cpp, "cpp")
    assert [rows[(line, "send")] for line in (3, 4, 6, 7, 10)] == [
        "?ui.Widget.m.send",
        "?ui.Widget.m.send",
        "",
        "?ui.Widget.m.q.send",
        "",
    ]
    assert rows[(8, "now")] == ""  # a namespace's or a type's, named so in the file
    assert targets("run.cpp", cpp.partition("\n")[2], "cpp")[(2, "send")] == ""


def test_a_cpp_local_declared_with_a_type_types_its_members():
    """``Widget w; w.draw();`` (and ``p->draw()``, ``p`` a ``Widget*``) was a name match: C++
    locals had no type; their members are now the type's."""
    cpp = (
        '#include "widget.h"\n'
        "#include <memory>\n"
        "void run(const Widget& r, Widget *q) {\n"
        "  Widget w;\n"
        "  w.draw();\n"  # 5
        "  Widget* p = new Widget();\n"
        "  p->draw();\n"
        "  auto a = Widget(1);\n"
        "  a.draw();\n"
        "  std::unique_ptr<Widget> u = std::make_unique<Widget>();\n"  # 10
        "  u->draw();\n"
        "  auto m = std::make_shared<Widget>();\n"
        "  m->draw();\n"
        "  r.draw(); q->draw();\n"
        "  auto n = make_widget(1);\n"  # 15
        "  n.draw();\n"
        "}\n"
    )
    rows = targets("main.cpp", cpp, "cpp")
    assert {line: rows[(line, "draw")] for line in (5, 7, 9, 11, 13, 14)} == dict.fromkeys(
        (5, 7, 9, 11, 13, 14), "?Widget.draw"
    )
    assert rows[(16, "draw")] == ""  # a function's result: its type is not known here
    own = "class Widget { public: void draw(); };\nvoid run() { Widget w; w.draw(); }\n"
    assert targets("w.cpp", own, "cpp")[(2, "draw")] == "=Widget.draw"
