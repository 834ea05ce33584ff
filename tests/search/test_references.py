"""find_references and impact on a repository in four languages, in each store.

The fixture has, in Python, TypeScript, Go and Java: a call from another
file, an import under another name, a method called through ``self`` /
``this`` / the receiver, a local that shadows the definition's name, and
the name inside a string (which is no use). Every test runs against the
local store and PostgreSQL (``store_url``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from refs_replies import matched, uses

from repolens import service
from repolens.errors import NotFoundError, PathError, UsageError
from repolens.index.build import build_index
from repolens.search.kept import symbols_in
from repolens.search.ref_keys import other_names
from repolens.store import open_store

FILES = {
    "py/app/__init__.py": "",
    "py/app/util.py": (
        "def helper(x):\n"  # 1
        "    return x\n"
        "\n"
        "\n"
        "class Base:\n"  # 5
        "    def run(self):\n"
        "        return self.step()\n"
        "\n"
        "    def step(self):\n"  # 9
        "        return helper(0)\n"
    ),
    "py/app/main.py": (
        "from app.util import helper as assist\n"  # 1
        "from app import util\n"
        "from app.util import Base\n"
        "\n"
        "\n"
        "def go():\n"  # 6
        "    return assist(1)\n"
        "\n"
        "\n"
        "def go2():\n"  # 10
        "    return util.helper(2)\n"
        "\n"
        "\n"
        "def shadow():\n"  # 14
        "    helper = 3\n"
        "    return helper\n"
        "\n"
        "\n"
        "def words():\n"  # 19
        '    return "helper is a word here"\n'
        "\n"
        "\n"
        "def outer():\n"  # 23
        "    return go()\n"
        "\n"
        "\n"
        "class Child(Base):\n"  # 27
        "    def more(self):\n"
        "        return self.step()\n"
    ),
    "ts/src/math.ts": (
        "export function add(a: number, b: number): number {\n"  # 1
        "  return a + b;\n"
        "}\n"
        "\n"
        "export class Counter {\n"  # 5
        "  inc(): number {\n"
        "    return this.step();\n"
        "  }\n"
        "  step(): number {\n"  # 9
        "    return add(1, 2);\n"
        "  }\n"
        "}\n"
    ),
    "ts/src/use.ts": (
        'import { add as plus, Counter } from "./math";\n'  # 1
        "\n"
        "export function total(): number {\n"  # 3
        "  return plus(1, 2) + new Counter().inc();\n"
        "}\n"
        "\n"
        "function local(): number {\n"  # 7
        "  const add = (x: number) => x;\n"
        "  return add(1);\n"
        "}\n"
        "\n"
        'export const said = "add is a word here";\n'  # 12
    ),
    "go/calc/calc.go": (
        "package calc\n"  # 1
        "\n"
        "func Sum(a, b int) int {\n"  # 3
        "\treturn a + b\n"
        "}\n"
        "\n"
        "type Acc struct{}\n"  # 7
        "\n"
        "func (a *Acc) Add(x int) int {\n"  # 9
        "\treturn a.double(x)\n"
        "}\n"
        "\n"
        "func (a *Acc) double(x int) int {\n"  # 13
        "\treturn Sum(x, x)\n"
        "}\n"
    ),
    "go/main.go": (
        "package main\n"  # 1
        "\n"
        'import c "example.com/m/go/calc"\n'
        "\n"
        "func main() {\n"  # 5
        "\tc.Sum(1, 2)\n"
        '\ts := "Sum is a word here"\n'
        "\t_ = s\n"
        "}\n"
    ),
    "java/src/com/acme/Calc.java": (
        "package com.acme;\n"  # 1
        "\n"
        "public class Calc {\n"  # 3
        "    public static int sum(int a, int b) {\n"
        "        return a + b;\n"
        "    }\n"
        "\n"
        "    public int twice(int x) {\n"  # 8
        "        return this.sum(x, x);\n"
        "    }\n"
        "}\n"
    ),
    "java/src/com/acme/app/Main.java": (
        "package com.acme.app;\n"  # 1
        "\n"
        "import com.acme.Calc;\n"
        "\n"
        "public class Main {\n"  # 5
        "    int run() {\n"
        '        String s = "sum is a word here";\n'
        "        return Calc.sum(1, 2);\n"
        "    }\n"
        "}\n"
    ),
}


def indexed(root: Path, files: dict[str, str], write_tree) -> Path:
    write_tree(root, files)
    build_index(root, settings=None)
    return root


@pytest.fixture
def repo(tmp_path: Path, write_tree, store_url) -> Path:
    return indexed(tmp_path / "repo", FILES, write_tree)


def test_python_uses_across_files_under_another_name_and_not_a_local_or_a_string(repo: Path):
    text = service.find_references("helper", repo).text
    assert text.splitlines()[0] == "helper (function, py/app/util.py:1-2): 4 references in 2 files"
    assert uses(text) == [
        "py/app/main.py",
        "(module) 1: from app.util import helper as assist",
        "go 7: return assist(1)",
        "go2 11: return util.helper(2)",
        "py/app/util.py",
        "Base.step 10: return helper(0)",
    ]


def test_a_use_in_a_later_part_of_a_long_definition_is_quoted_from_its_own_line(tmp_path: Path, write_tree):
    """A definition over 120 lines is stored in parts that repeat its
    header: a use in a later part was quoted with the line before it (the
    line number right, its text not)."""
    body = "".join(f"    a = a + {i}\n" for i in range(130))
    root = indexed(
        tmp_path / "long",
        {"m.py": f"def helper(x):\n    return x\n\n\ndef big(a):\n{body}    return helper(a)\n"},
        write_tree,
    )
    assert uses(service.find_references("helper", root).text) == ["m.py", "big 136: return helper(a)"]
    callees = service.find_references("big", root, direction="callees").text
    assert callees.splitlines()[-1] == "   -> m.py:136: return helper(a)"


def test_rust_uses_inside_macro_calls(tmp_path: Path, write_tree):
    """println!, assert_eq!, vec!: their arguments are token trees, and a
    use there was never found (only the let line of the four); then a
    member's call there (``c.get()``, ``self.get()``) was lost, resolved or not."""
    main = (
        'mod util;\nuse util::helper;\n\nfn main() {\n    println!("{}", helper(5));\n'
        "    assert_eq!(helper(6), 6);\n    let v = vec![helper(7)];\n    let x = helper(8);\n"
        '    let local = 1;\n    println!("{}", local);\n'
        "    let c = util::Counter::new();\n"  # 11
        '    assert_eq!(c.get(), util::Counter::new().get());\n    println!("{}", unknown().get());\n}\n'
    )
    util = (
        "pub fn helper(x: i32) -> i32 { x }\n"
        "pub struct Counter { n: i32 }\n"
        "impl Counter {\n"
        "    pub fn new() -> Self { Counter { n: 0 } }\n"
        "    pub fn get(&self) -> i32 { self.n }\n"  # 5
        '    pub fn show(&self) { println!("{}", self.get()); }\n'
        "}\n"
    )
    root = indexed(tmp_path / "rust", {"src/util.rs": util, "src/main.rs": main}, write_tree)
    assert uses(service.find_references("helper", root).text) == [
        "src/main.rs",
        "(module) 2: use util::helper;",
        'main 5: println!("{}", helper(5));',
        "main 6: assert_eq!(helper(6), 6);",
        "main 7: let v = vec![helper(7)];",
        "main 8: let x = helper(8);",
    ]
    text = service.find_references("Counter.get", root).text
    in_main = "main 12: assert_eq!(c.get(), util::Counter::new().get());"  # a typed local, a made value
    in_util = 'Counter::show 6: pub fn show(&self) { println!("{}", self.get()); }'
    assert uses(text) == ["src/main.rs", in_main, "src/util.rs", in_util]
    assert 'main 13: println!("{}", unknown().get());' in matched(text)


def test_rust_a_method_through_a_local_made_by_its_type_s_constructor_in_another_file(
    tmp_path: Path, write_tree
):
    """``let c = Circle::new(1); c.area()`` was a name match: a Rust local had no type."""
    shapes = (
        "pub struct Circle { pub r: u32 }\n"
        "\n"
        "impl Circle {\n"
        "    pub fn new(r: u32) -> Self { Circle { r } }\n"
        "    pub fn area(&self) -> u32 { self.r * self.r }\n"
        "}\n"
    )
    main = (
        "mod shapes;\nuse crate::shapes::Circle;\n\nfn main() {\n    let c = Circle::new(2);\n"
        "    let s = Circle { r: 3 };\n    c.area() + s.area();\n}\n"
    )
    root = indexed(tmp_path / "rust", {"src/shapes.rs": shapes, "src/main.rs": main}, write_tree)
    text = service.find_references("Circle.area", root).text
    assert uses(text) == ["src/main.rs", "main 7: c.area() + s.area();"] and not matched(text)


def test_rust_a_method_through_a_struct_s_field_of_its_type(tmp_path: Path, write_tree):
    """``struct App { cmd: Command }`` then ``self.cmd.get_name()`` was a name match: a Rust
    struct's fields had no type. A field declared of a type's path (or a ``Box`` of one)
    types ``self.cmd`` and, in another file, ``a.cmd`` of an ``a: &App``; a ``Vec``
    of the type does not."""
    command = (
        "pub struct Command;\n\nimpl Command {\n    pub fn get_name(&self) -> u8 {\n        1\n    }\n}\n"
    )
    app = (
        "use crate::command::Command;\n\npub struct App {\n    pub cmd: Command,\n"
        "    boxed: Box<Command>,\n    all: Vec<Command>,\n}\n\nimpl App {\n"
        "    fn f(&self) -> u8 {\n        self.cmd.get_name() + self.boxed.get_name()\n    }\n\n"  # 11
        "    fn g(&self) -> u8 {\n        self.all.get_name()\n    }\n}\n"  # 15
    )
    main = (
        "mod app;\nmod command;\nuse crate::app::App;\n\n"
        "fn h(x: &App) -> u8 {\n    let a: &App = x;\n    a.cmd.get_name()\n}\n"  # 5
    )
    files = {"src/command.rs": command, "src/app.rs": app, "src/main.rs": main}
    text = service.find_references("Command.get_name", indexed(tmp_path / "rust", files, write_tree)).text
    in_app = "App::f 11: self.cmd.get_name() + self.boxed.get_name()"
    assert uses(text) == ["src/app.rs", in_app, "src/main.rs", "h 7: a.cmd.get_name()"]
    assert "App::g 15" in matched(text)


def test_rust_a_method_through_a_typed_parameter_and_a_builder_chain(tmp_path: Path, write_tree):
    """``fn render(a: &Arg) { a.long(..) }`` and ``Arg::new("x").short('s').long("y")`` were
    name matches: a parameter had no type, nor a chain whose calls have arguments. The
    parameter is typed as a ``let`` is; the chain's ``long`` is keyed ``Arg.short.long``
    and placed through ``short``'s declared ``-> Self`` (a ``field`` row of its result)."""
    arg = (
        "pub struct Arg;\n\nimpl Arg {\n"
        "    pub fn new(n: &str) -> Self {\n        Arg\n    }\n"
        "    pub fn short(self, c: char) -> Self {\n        self\n    }\n"
        "    pub fn long(self, l: &str) -> Self {\n        self\n    }\n}\n"
    )
    main = (
        "mod arg;\nuse crate::arg::Arg;\n\n"
        'fn render(a: Arg) -> Arg {\n    a.long("z")\n}\n\n'  # 5
        'fn main() {\n    render(Arg::new("x").short(\'s\').long("y"));\n}\n'  # 9
        '\nfn other(x: u8) {\n    x.long("w");\n}\n'  # 13
    )
    root = indexed(tmp_path / "rust", {"src/arg.rs": arg, "src/main.rs": main}, write_tree)
    text = service.find_references("Arg.long", root).text
    chained = 'main 9: render(Arg::new("x").short(\'s\').long("y"));'
    assert uses(text) == ["src/main.rs", 'render 5: a.long("z")', chained]
    assert "other 13" in matched(text)


def test_rust_new_is_no_constructor_its_type_s_literals_are_no_use_of_it(tmp_path: Path, write_tree):
    """A Rust type is made by its literal (``Circle { r }``); ``new`` is a function like
    another, called by its path, as rust-analyzer counts it: the literals and the type's
    other uses were listed as uses of ``Circle::new``, as a Python class's are of its
    ``__init__``."""
    shapes = (
        "pub struct Circle { pub r: u32 }\n"
        "\n"
        "impl Circle {\n"
        "    pub fn new(r: u32) -> Self { Circle { r } }\n"
        "}\n"
    )
    main = (
        "mod shapes;\nuse crate::shapes::Circle;\n\nfn main() {\n    let c = Circle::new(2);\n"  # 5
        "    let s = Circle { r: 3 };\n    let t: Circle = Circle { r: 4 };\n}\n"
    )
    root = indexed(tmp_path / "rust", {"src/shapes.rs": shapes, "src/main.rs": main}, write_tree)
    text = service.find_references("Circle.new", root).text
    assert uses(text) == ["src/main.rs", "main 5: let c = Circle::new(2);"] and not matched(text)


def test_rust_a_field_read_is_no_use_of_the_method_of_its_name(tmp_path: Path, write_tree):
    """clap's Arg has a field short and a method short: self.short (a read, row kind attr,
    as Self::short is) was listed as a use of Arg::short, and an unknown value's x.short as
    a name match. A Rust method is used by a call or a path, never by x.short alone (nor
    by a local of its name, a string's or a comment's)."""
    arg = (
        "pub struct Arg {\n    short: Option<char>,\n}\n\nimpl Arg {\n"
        "    pub fn short(mut self, short: char) -> Self {\n"  # 6
        "        self.short = Some(short);\n        self\n    }\n\n"
        "    pub fn get_short(&self) -> Option<char> {\n        self.short\n    }\n\n"  # 12
        "    pub fn twice(self) -> Self {\n        let f = Self::short;\n        f(self, 'b')\n    }\n\n"
        "    fn label(&self) -> (&str, Option<char>) {\n"
        '        ("short", self.short) // not short()\n    }\n}\n'
    )
    main = (
        "mod arg;\nuse crate::arg::Arg;\n\nfn main() {\n    let a = Arg::short;\n}\n"
        "\nfn peek(x: &Other) -> Option<char> {\n    x.short\n}\n"  # 9
    )
    root = indexed(tmp_path / "rust", {"src/arg.rs": arg, "src/main.rs": main}, write_tree)
    text = service.find_references("Arg.short", root).text
    wanted = [
        "src/arg.rs",
        "Arg::twice 16: let f = Self::short;",
        "src/main.rs",
        "main 5: let a = Arg::short;",
    ]
    assert uses(text) == wanted and "x.short" not in matched(text)


def test_rust_a_field_read_beside_a_call_of_its_name_on_an_unknown_value_is_no_use(
    tmp_path: Path, write_tree
):
    """A field read was told from a path to the method by its line, when a question was
    asked: a line reading ``self.short`` and calling ``short`` on a value of unknown type
    (or saying ``.short()`` in a block comment) made the read a resolved use. The read is
    an ``access`` row since it is written: the line is the unknown call's name match."""
    arg = (
        "pub struct Arg {\n    short: Option<char>,\n}\n\nimpl Arg {\n"
        "    pub fn short(mut self, short: char) -> Self {\n"  # 6
        "        self\n    }\n\n"
        "    fn pick(&self, x: &Other) -> Option<char> {\n"  # 10
        "        self.short.or(x.short('a').get())\n"
        "    }\n\n"
        "    fn note(&self) -> Option<char> {\n"  # 14
        "        self.short /* not .short() */\n"
        "    }\n}\n"
    )
    root = indexed(tmp_path / "rust", {"src/arg.rs": arg}, write_tree)
    text = service.find_references("Arg.short", root).text
    assert uses(text) == []
    assert "Arg::pick 11: self.short.or(x.short('a').get())" in matched(text) and "note" not in text


def test_rust_a_use_through_the_crate_s_name_from_its_tests_and_another_crate(tmp_path: Path, write_tree):
    """clap's tests spell ``use clap::Arg; Arg::new(..)``, its workspace's crates ``use
    clap_builder::Command``: a key under the crate's name (``clap.Arg.new``), which no
    definition had (a definition is keyed by its file's folders), so ``refs Arg::new``
    left them out, and ``crate::Arg::new()`` in ``lib.rs`` (kept as ``Arg.new``) too. The
    name is read from the nearest Cargo.toml (``-`` as ``_``; a ``[lib] name`` first);
    another crate's ``Arg`` stays out. A full path with no ``use`` (``my_crate::Arg::new()``,
    ``::my_crate::builder::Arg::new()``) had no target: it is keyed as the ``use`` is."""
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["app"]\n\n[package]\nname = "my-crate"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub mod builder;\npub use builder::Arg;\n\n"
        "pub fn inner() -> Arg {\n    crate::Arg::new()\n}\n",
        "src/builder.rs": "pub struct Arg {\n    n: u32,\n}\n\nimpl Arg {\n    pub fn new() -> Self {\n"
        "        Arg { n: 0 }\n    }\n}\n",
        "tests/t.rs": "use my_crate::Arg;\n\n#[test]\nfn t() {\n    let a = Arg::new();\n}\n",
        "tests/full.rs": "#[test]\nfn t() {\n    let a = my_crate::Arg::new();\n"
        "    let b = other::Arg::new();\n    ::my_crate::builder::Arg::new();\n}\n",
        "examples/e.rs": "use other::Arg;\n\nfn main() {\n    let a = Arg::new();\n}\n",
        "app/Cargo.toml": '[package]\nname = "app-cli"\n\n[lib]\nname = "apptools"\n',
        "app/src/lib.rs": "use my_crate::builder::Arg;\n\npub fn make() -> Arg {\n    Arg::new()\n}\n",
        "app/src/main.rs": "use apptools::make;\nuse app_cli::make as other;\n\n"
        "fn main() {\n    make();\n    other();\n}\n",
    }
    root = indexed(tmp_path / "rust", files, write_tree)
    assert uses(service.find_references("Arg.new", root).text) == [
        "app/src/lib.rs",
        "make 4: Arg::new()",
        "src/lib.rs",
        "inner 5: crate::Arg::new()",
        "tests/full.rs",
        "t 3: let a = my_crate::Arg::new();",
        "t 5: ::my_crate::builder::Arg::new();",
        "tests/t.rs",
        "t 5: let a = Arg::new();",
    ]
    assert uses(service.find_references("make", root).text) == [
        "app/src/main.rs",
        "(module) 1: use apptools::make;",
        "main 5: make();",
    ]


def test_rust_a_type_of_the_repository_s_own_crate_types_its_locals_in_its_tests(tmp_path: Path, write_tree):
    """clap's tests and examples ``use clap::Arg;`` then ``Arg::new("x").short('s')``, ``let a =
    Arg::new("x"); a.short('s')``, ``fn f(a: &Arg)``: another crate's type typed nothing, so
    ``refs Arg::short`` found them as name matches at best. A crate the repository defines (its
    Cargo.toml) types them as its own crate's type does; another crate's ``Arg`` (``other``,
    not in the repository) and ``std``'s ``Rc`` still type nothing: name matches."""
    files = {
        "Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub mod builder;\npub use builder::Arg;\n",
        "src/builder.rs": "pub struct Arg {\n    n: u32,\n}\n\nimpl Arg {\n"
        "    pub fn new(n: u32) -> Self {\n        Arg { n }\n    }\n\n"
        "    pub fn short(self, c: char) -> Self {\n        self\n    }\n\n"
        "    pub fn long(self, l: &str) -> Self {\n        self\n    }\n}\n\n"
        "pub struct Group;\n\nimpl Group {\n    pub fn short(self) -> Self {\n        self\n    }\n}\n",
        "tests/t.rs": "use my_crate::Arg;\n\n"
        "fn t(a: &Arg) {\n"
        "    a.clone().short('a');\n"  # 4: clone() gives a's type back
        "    let b = Arg::new(1);\n"
        "    b.short('b');\n"  # 6
        "    Arg::new(2).short('c').long(\"l\");\n"  # 7
        "}\n\n"
        "fn u(a: &Arg) {\n"
        '    a.long("x");\n'  # 11
        "}\n",
        "examples/e.rs": "use other::Arg;\nuse std::rc::Rc;\n\n"
        "fn main() {\n"
        "    let a = Arg::new(1);\n"
        "    a.short('o');\n"  # 6: another crate's: a name match
        "    let r = Rc::new(a);\n"
        "    r.short('r');\n"  # 8: std's pointer: a name match
        "}\n",
    }
    root = indexed(tmp_path / "rust", files, write_tree)
    short = service.find_references("Arg.short", root).text
    assert uses(short) == [
        "tests/t.rs",
        "t 4: a.clone().short('a');",
        "t 6: b.short('b');",
        "t 7: Arg::new(2).short('c').long(\"l\");",
    ]
    assert "a.short('o')" in matched(short) and "r.short('r')" in matched(short)
    group = service.find_references("Group.short", root).text  # b is an Arg: no name match of Group's
    assert "b.short('b')" not in group and "a.short('o')" in matched(group)
    assert uses(service.find_references("Arg.long", root).text) == [
        "tests/t.rs",
        "t 7: Arg::new(2).short('c').long(\"l\");",
        'u 11: a.long("x");',
    ]


def test_rust_a_local_of_the_crate_s_type_named_by_its_full_path_is_a_use_of_its_methods(
    tmp_path: Path, write_tree
):
    """clap's tests write ``let a = clap::Arg::new("x"); a.short('s')`` with no ``use``: ``a``
    was untyped, so ``refs Arg::short`` had it as a name match. It is typed as ``use
    my_crate::Arg;`` would type it; another crate's path (``other::Arg``) still types nothing
    the repository defines: a name match."""
    files = {
        "Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub mod builder;\npub use builder::Arg;\n",
        "src/builder.rs": "pub struct Arg;\n\nimpl Arg {\n"
        "    pub fn new(n: u32) -> Self {\n        Arg\n    }\n\n"
        "    pub fn short(self, c: char) -> Self {\n        self\n    }\n}\n",
        "tests/t.rs": "#[test]\nfn t() {\n    let a = my_crate::Arg::new(1);\n    a.short('a');\n"
        "    let o = other::Arg::new(2);\n    o.short('o');\n}\n",
    }
    text = service.find_references("Arg.short", indexed(tmp_path / "rust", files, write_tree)).text
    assert uses(text) == ["tests/t.rs", "t 4: a.short('a');"]
    assert "o.short('o')" in matched(text)


def test_rust_a_method_through_what_another_type_s_method_returns_in_a_loop_or_a_let(
    tmp_path: Path, write_tree
):
    """clap's ``for a in cmd.get_arguments() { a.get_id() }`` (``-> impl Iterator<Item =
    &Arg>``) and ``let f = cmd.find(x).unwrap(); f.get_id()`` (``-> Option<&Arg>``) were name
    matches: a method call's result had no type. The local is keyed by the call's path
    (``Command.find``), which a question follows through the declared result of ``Command``'s
    ``find``, read as its element: in the crate's source and, through the crate's name and
    its re-export, in its tests. Another type's ``get_id`` has none of them."""
    builder = (
        "pub struct Arg {\n    id: u32,\n}\n\nimpl Arg {\n"
        "    pub fn get_id(&self) -> u32 {\n        self.id\n    }\n}\n\n"
        "pub struct Command {\n    args: Vec<Arg>,\n}\n\nimpl Command {\n"
        "    pub fn get_arguments(&self) -> impl Iterator<Item = &Arg> {\n        self.args.iter()\n    }\n\n"
        "    pub fn find(&self, id: u32) -> Option<&Arg> {\n        self.args.first()\n    }\n}\n\n"
        "pub struct Group;\n\nimpl Group {\n    pub fn get_id(&self) -> u32 {\n        0\n    }\n}\n"
    )
    uses_of = (
        "(cmd: &Command) {\n    for a in cmd.get_arguments() {\n        a.get_id();\n    }\n"  # 3, 4
        "    let f = cmd.find(1).unwrap();\n    f.get_id();\n}\n"  # 7
    )
    files = {
        "Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub mod builder;\npub mod render;\npub use builder::{Arg, Command};\n",
        "src/builder.rs": builder,
        "src/render.rs": "use crate::builder::Command;\n\npub fn render" + uses_of,
        "tests/t.rs": "use my_crate::Command;\n\nfn t" + uses_of,
    }
    root = indexed(tmp_path / "rust", files, write_tree)
    expected: list[str] = []
    for path, function in (("src/render.rs", "render"), ("tests/t.rs", "t")):
        expected += [path, f"{function} 5: a.get_id();", f"{function} 8: f.get_id();"]
    assert uses(service.find_references("Arg.get_id", root).text) == expected
    group = service.find_references("Group.get_id", root).text
    assert uses(group) == [] and "a.get_id()" not in group


def test_rust_a_relative_use_of_a_module_of_the_crate_types_its_locals(tmp_path: Path, write_tree):
    """serde (the 2015 edition) writes ``use de::value::MapDeserializer;`` (no ``crate::``) and
    ``let m = MapDeserializer::new(); m.end()``: the path's head was taken for another crate's,
    so ``m.end()`` stayed a name match of ``MapDeserializer::end``. A head that is no crate but
    a module of the file's library (its root's, or the 2018 edition's child of the file's own
    module: ``use value::X`` in ``de/mod.rs``) is placed there; another crate's is not."""
    value = (
        "pub struct MapDeserializer;\n\nimpl MapDeserializer {\n"
        "    pub fn new() -> Self {\n        MapDeserializer\n    }\n\n"
        "    pub fn end(self) -> u8 {\n        0\n    }\n}\n"
    )
    body = "() -> u8 {\n    let m = MapDeserializer::new();\n    m.end()\n}\n"
    files = {
        "Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub mod de;\npub mod private;\npub mod other;\n",
        "src/de/mod.rs": "pub mod value;\nuse value::MapDeserializer;\n\npub fn g" + body,
        "src/de/value.rs": value,
        "src/private.rs": "use de::value::MapDeserializer;\n\npub fn f" + body,
        "src/other.rs": "use serde_json::MapDeserializer;\n\npub fn h" + body,
    }
    text = service.find_references("MapDeserializer.end", indexed(tmp_path / "rust", files, write_tree)).text
    assert uses(text) == ["src/de/mod.rs", "g 6: m.end()", "src/private.rs", "f 5: m.end()"]
    assert "h 5: m.end()" in matched(text)


def test_a_place_off_the_file_is_a_usage_error(repo: Path):
    """Line 0 and lines past the end said "No definition at ..." and exit 0,
    as a place with nothing defined there does."""
    from repolens.errors import UsageError

    for target in ("py/app/util.py:0", "py/app/util.py:500", "py/app/util.py:400-500"):
        with pytest.raises(
            UsageError, match=r"^py/app/util.py has \d+ lines as indexed: line (0|500|400) is not"
        ):
            service.find_references(target, repo)
    with pytest.raises(UsageError, match="line 500 is not one of them"):
        service.impact("py/app/util.py:500", repo)
    assert service.find_references("py/app/util.py:1", repo).text.startswith("helper (function")


def test_a_method_through_self_in_its_class_and_in_a_subclass(repo: Path):
    text = service.find_references("Base.step", repo).text
    assert uses(text) == [
        "py/app/main.py",
        "Child.more 29: return self.step()",
        "py/app/util.py",
        "Base.run 7: return self.step()",
    ]


def test_typescript_import_under_another_name_this_and_a_shadowing_local(repo: Path):
    text = service.find_references("ts/src/math.ts:1", repo).text
    assert uses(text) == [
        "ts/src/math.ts",
        "Counter.step 10: return add(1, 2);",
        "ts/src/use.ts",
        '(module) 1: import { add as plus, Counter } from "./math";',
        "total 4: return plus(1, 2) + new Counter().inc();",
    ]
    assert "Counter.inc 7: return this.step();" in service.find_references("Counter.step", repo).text
    assert service.find_references("ts/src/math.ts:1:17", repo).text == text  # as a compiler names a place


def test_go_package_import_renamed_and_a_receiver(repo: Path):
    text = service.find_references("go/calc/calc.go:3", repo).text
    assert uses(text) == [
        "go/calc/calc.go",
        "(*Acc).double 14: return Sum(x, x)",
        "go/main.go",
        "main 6: c.Sum(1, 2)",
    ]
    assert "(*Acc).Add 10: return a.double(x)" in service.find_references("go/calc/calc.go:13", repo).text


GO_MODULE = {
    "go.mod": "module example.com/tool/v2\n\ngo 1.21\n",
    "tool.go": (
        "package tool\n"  # 1
        "\n"
        "func WriteString(s string) {}\n"  # 3
        "\n"
        "type Command struct {\n"  # 5
        "\tparent   *Command\n"
        "\tchildren []*Command\n"
        "\tRun      func(string)\n"
        "}\n"
        "\n"  # 10
        "func (c *Command) AddCommand(cmds ...*Command) {}\n"  # 11
        "\n"
        "func NewCommand() *Command { return &Command{} }\n"  # 13
        "\n"
        "func (c *Command) Root() *Command { return c }\n"  # 15
        "\n"
        "func (c *Command) Walk(fn func(*Other)) {}\n"  # 17
        "\n"
        "type Other struct{}\n"  # 19
        "\n"
        "func (o *Other) AddCommand() {}\n"  # 21
    ),
    "help.go": 'package tool\n\nfunc help() {\n\tWriteString("x")\n}\n',
    "run.go": (
        "package tool\n"  # 1
        "\n"
        "func run(cmd *Command) {\n"  # 3
        "\tc := &Command{}\n"
        "\tc.AddCommand(cmd)\n"  # 5
        "\tn, err := NewCommand(), error(nil)\n"
        "\tn.AddCommand(c)\n"  # 7
        "\tcmd.Root().AddCommand(n)\n"
        "\tcmd.parent.AddCommand(n)\n"  # 9
        "\t_ = err\n"
        "\tfor _, sub := range cmd.children {\n"  # 11
        "\t\tsub.AddCommand(c)\n"
        "\t}\n"  # 13
        "\tfor i := range cmd.children {\n"
        "\t\t_ = i\n"  # 15
        "\t}\n"
        "\tc.Walk(func(c *Other) { c.AddCommand() })\n"  # 17
        "\tc.AddCommand(n)\n"
        "\t_ = Command{Run: WriteString}\n"  # 19
        "}\n"
        "\n"
        "func (c *Command) Execute() {\n"  # 22
        "\tc.AddCommand(c)\n"
        "}\n"
    ),
    "iface.go": (
        "package tool\n"  # 1
        "\n"
        "type Adder interface {\n"  # 3
        "\tAddCommand(cmds ...*Command)\n"
        "}\n"  # 5
        "\n"
        "type Both interface {\n"  # 7
        "\tAdder\n"
        "\tRoot() *Command\n"  # 9
        "}\n"
        "\n"
        "type Flusher interface {\n"  # 12
        "\tAddCommand() error\n"
        "}\n"  # 14
        "\n"
        "type Outer struct {\n"  # 16
        "\t*Command\n"
        "}\n"  # 18
        "\n"
        "func through(a Adder, b Both, f Flusher, o Outer) {\n"  # 20
        "\ta.AddCommand()\n"
        "\tb.AddCommand()\n"  # 22
        "\tf.AddCommand()\n"
        "\to.AddCommand()\n"  # 24
        "}\n"
        "\n"
        "type Holder struct {\n"  # 27
        "\ta Adder\n"
        "}\n"  # 29
        "\n"
        "func NewOuter() *Outer { return nil }\n"  # 31
        "\n"
        "func (h *Holder) run() {\n"  # 33
        "\th.a.AddCommand()\n"
        "\tNewOuter().AddCommand()\n"  # 35
        "\tDefault.AddCommand()\n"
        "}\n"
    ),
    "types.go": (
        "package tool\n"  # 1
        "\n"
        "type methodTyp uint\n"  # 3
        "\n"
        "type setter interface{ Set() }\n"  # 5
        "\n"
        "type impl struct{}\n"  # 7
    ),
    "handle.go": (
        "package tool\n"  # 1
        "\n"
        "func handle(setter setter, ms ...methodTyp) {}\n"  # 3
        "\n"
        "var _ setter = (*impl)(nil)\n"  # 5
        "\n"
        "var Default Adder = &Command{}\n"  # 7
    ),
    "doc/doc.go": (
        "package doc\n"  # 1
        "\n"
        'import "example.com/tool/v2"\n'
        "\n"
        "func Gen() {\n"  # 5
        '\ttool.WriteString("y")\n'
        "}\n"
    ),
}


@pytest.fixture
def go_module(tmp_path: Path, write_tree, store_url) -> Path:
    """A Go module whose package is the repository's top folder (its import path only go.mod says)."""
    return indexed(tmp_path / "gomod", GO_MODULE, write_tree)


def test_go_the_top_folder_package_from_its_other_files_and_by_its_module_path(go_module: Path):
    assert uses(service.find_references("tool.go:3", go_module).text) == [
        "help.go",
        'help 4: WriteString("x")',
        "run.go",
        "run 19: _ = Command{Run: WriteString}",
        "doc/doc.go",
        'Gen 6: tool.WriteString("y")',
    ]


def in_file(text: str, path: str) -> list[str]:
    """The lines of a references reply under the file ``path``."""
    listed = uses(text)
    start = listed.index(path)
    end = next((i for i in range(start + 1, len(listed)) if " " not in listed[i]), len(listed))
    return listed[start:end]


def test_go_types_after_a_variadic_s_dots_beside_a_local_of_their_name_and_in_a_conversion(go_module: Path):
    assert in_file(service.find_references("types.go:3", go_module).text, "handle.go") == [
        "handle.go",
        "handle 3: func handle(setter setter, ms ...methodTyp) {}",
    ]
    assert in_file(service.find_references("types.go:5", go_module).text, "handle.go") == [
        "handle.go",
        "handle 3: func handle(setter setter, ms ...methodTyp) {}",
        "(module) 5: var _ setter = (*impl)(nil)",
    ]
    assert in_file(service.find_references("types.go:7", go_module).text, "handle.go") == [
        "handle.go",
        "(module) 5: var _ setter = (*impl)(nil)",
    ]


def test_go_a_method_through_locals_fields_results_elements_and_receivers_not_a_closure_s(go_module: Path):
    assert in_file(service.find_references("tool.go:11", go_module).text, "run.go") == [
        "run.go",
        "run 5: c.AddCommand(cmd)",
        "run 7: n.AddCommand(c)",
        "run 8: cmd.Root().AddCommand(n)",
        "run 9: cmd.parent.AddCommand(n)",
        "run 12: sub.AddCommand(c)",
        "run 18: c.AddCommand(n)",
        "(*Command).Execute 23: c.AddCommand(c)",
    ]
    assert uses(service.find_references("tool.go:21", go_module).text) == [
        "run.go",
        "run 17: c.Walk(func(c *Other) { c.AddCommand() })",
    ]


def test_go_a_method_through_the_interfaces_its_type_has_the_methods_of_and_an_embedding_struct(
    go_module: Path,
):
    assert in_file(service.find_references("tool.go:11", go_module).text, "iface.go") == [
        "iface.go",
        "through 21: a.AddCommand()",
        "through 22: b.AddCommand()",
        "through 24: o.AddCommand()",
        "(*Holder).run 34: h.a.AddCommand()",
        "(*Holder).run 35: NewOuter().AddCommand()",
        "(*Holder).run 36: Default.AddCommand()",
    ]  # not f.AddCommand(): Flusher's AddCommand returns an error, Command's nothing


def test_java_import_static_call_and_this(repo: Path):
    text = service.find_references("Calc.sum", repo).text
    assert uses(text) == [
        "java/src/com/acme/Calc.java",
        "Calc.twice 9: return this.sum(x, x);",
        "java/src/com/acme/app/Main.java",
        "Main.run 8: return Calc.sum(1, 2);",
    ]


JAVA_SHAPES = {
    "src/com/acme/Shape.java": "package com.acme;\n\npublic interface Shape {\n    double area();\n}\n",
    "src/com/acme/Circle.java": (
        "package com.acme;\n\npublic class Circle implements Shape {\n"
        "    public double area() { return 3.0; }\n}\n"
    ),
    "src/com/acme/Square.java": (
        "package com.acme;\n\npublic class Square implements Shape {\n"
        "    public double area() { return 1.0; }\n}\n"
    ),
    "src/com/acme/Big.java": (
        "package com.acme;\n"
        "\n"
        "class Mid extends Circle {}\n"
        "\n"
        "class Big extends Circle {\n"  # 5
        "    public double area() { return 9.0; }\n"
        "}\n"
    ),
    "src/com/acme/Solid.java": (
        "package com.acme;\n\npublic abstract class Solid {\n    public abstract double volume();\n}\n"
        "\nclass Cube extends Solid {\n    public double volume() { return 1.0; }\n"
        "\n    double twice(Cube c) { return c.volume() * 2; }\n}\n"  # 10
    ),
    "src/com/app/Use.java": (
        "package com.app;\n"
        "\n"
        "import com.acme.Big;\n"
        "import com.acme.Circle;\n"
        "import com.acme.Shape;\n"
        "import com.acme.Square;\n"
        "\n"
        "class Use {\n"  # 8
        "    double total(Shape s, Circle c, Square q, Big b) {\n"
        "        double t = s.area();\n"
        "        t += c.area();\n"
        "        t += q.area();\n"
        "        return t + b.area();\n"  # 13
        "    }\n"
        "}\n"
    ),
}


def test_java_a_call_through_an_interface_is_its_implementations_and_theirs_the_interface_s(
    tmp_path: Path, write_tree, store_url
):
    """s.area() (s a Shape) was no use of Circle.area, nor c.area() (c a Circle) of
    Shape.area: each was another key's. As JDT counts them, a call through a type is a
    use of what the types above declare, and through an implementation of the abstract
    method it implements; not through Big, which overrides Circle's implementation."""
    root = indexed(tmp_path / "java", JAVA_SHAPES, write_tree)
    solid = ["src/com/acme/Solid.java", "Cube.twice 10: double twice(Cube c) { return c.volume() * 2; }"]
    through_shapes(root, "src/com/app/Use.java", "Use.total", "", solid)


def through_shapes(root: Path, use: str, scope: str, namespace: str, solid: list[str]) -> None:
    """The uses of the shapes' methods (``namespace``: C#'s ``I`` before ``Shape``, capitals):
    the calls through ``s``, ``c``, ``q`` and ``b`` in ``scope`` of ``use``; ``solid``
    Solid's volume's."""
    text = (root / use).read_text().splitlines()
    s, c, q, b = (
        f"{scope} {n}: {line.strip()}"
        for n, line in enumerate(text, 1)
        if re.search(r"\b[scqb]\.[aA]rea\(", line)
    )
    area, volume = ("Area", "Volume") if namespace else ("area", "volume")
    wanted = {
        f"{namespace}Shape.{area}": [use, s, c, q],
        f"Circle.{area}": [use, s, c],
        f"Big.{area}": [use, s, c, b],
        f"Solid.{volume}": solid,
    }
    for target, lines in wanted.items():
        assert uses(service.find_references(target, root).text) == lines, target


KOTLIN_SHAPES = {
    "src/com/acme/Shape.kt": "package com.acme\n\ninterface Shape {\n    fun area(): Double\n}\n",
    "src/com/acme/Circle.kt": (
        "package com.acme\n\nopen class Circle : Shape {\n    override fun area(): Double = 3.0\n}\n"
    ),
    "src/com/acme/Square.kt": (
        "package com.acme\n\nclass Square : Shape {\n    override fun area(): Double = 1.0\n}\n"
    ),
    "src/com/acme/Big.kt": (
        "package com.acme\n"
        "\n"
        "open class Mid : Circle()\n"
        "\n"
        "class Big : Circle() {\n"  # 5
        "    override fun area(): Double = 9.0\n"
        "}\n"
    ),
    "src/com/acme/Solid.kt": (
        "package com.acme\n\nabstract class Solid {\n    abstract fun volume(): Double\n}\n"
        "\nclass Cube : Solid() {\n    override fun volume(): Double = 1.0\n"
        "\n    fun twice(c: Cube): Double = c.volume() * 2\n}\n"  # 10
    ),
    "src/com/app/Use.kt": (
        "package com.app\n"
        "\n"
        "import com.acme.Big\n"
        "import com.acme.Circle\n"
        "import com.acme.Shape\n"
        "import com.acme.Square\n"
        "\n"
        "class Use {\n"  # 8
        "    fun total(s: Shape, c: Circle, q: Square, b: Big): Double {\n"
        "        var t = s.area()\n"
        "        t += c.area()\n"
        "        t += q.area()\n"
        "        return t + b.area()\n"  # 13
        "    }\n"
        "}\n"
    ),
}


def test_kotlin_a_call_through_an_interface_is_its_implementations_and_theirs_the_interface_s(
    tmp_path: Path, write_tree, store_url
):
    """As in Java, s.area() (s a Shape) was no use of Circle.area, nor c.area() (c a Circle)
    of Shape.area, nor Cube's c.volume() of the abstract Solid.volume: the rule was Java's
    only. Kotlin's language server counts them as JDT does."""
    root = indexed(tmp_path / "kt", KOTLIN_SHAPES, write_tree)
    solid = ["src/com/acme/Solid.kt", "Cube.twice 10: fun twice(c: Cube): Double = c.volume() * 2"]
    through_shapes(root, "src/com/app/Use.kt", "Use.total", "", solid)


CSHARP_SHAPES = {
    "src/Acme/Shapes.cs": (
        "namespace Acme\n"
        "{\n"
        "    public interface IShape\n"
        "    {\n"
        "        double Area();\n"  # 5
        "    }\n"
        "\n"
        "    public class Circle : IShape\n"
        "    {\n"
        "        public virtual double Area() { return 3.0; }\n"  # 10
        "    }\n"
        "\n"
        "    public class Square : IShape\n"
        "    {\n"
        "        public double Area() { return 1.0; }\n"  # 15
        "    }\n"
        "\n"
        "    public class Big : Circle\n"
        "    {\n"
        "        public override double Area() { return 9.0; }\n"  # 20
        "    }\n"
        "\n"
        "    public abstract class Solid\n"
        "    {\n"
        "        public abstract double Volume();\n"  # 25
        "    }\n"
        "\n"
        "    public class Cube : Solid\n"
        "    {\n"
        "        public override double Volume() { return 1.0; }\n"  # 30
        "\n"
        "        double Twice(Cube c) { return c.Volume() * 2; }\n"
        "    }\n"
        "}\n"
    ),
    "src/App/Use.cs": (
        "using Acme;\n"
        "\n"
        "namespace App\n"
        "{\n"
        "    class Use\n"  # 5
        "    {\n"
        "        double Total(IShape s, Circle c, Square q, Big b)\n"
        "        {\n"
        "            double t = s.Area();\n"
        "            t += c.Area();\n"  # 10
        "            t += q.Area();\n"
        "            return t + b.Area();\n"
        "        }\n"
        "    }\n"
        "}\n"
    ),
}


def test_csharp_a_call_through_an_interface_is_its_implementations_and_theirs_the_interface_s(
    tmp_path: Path, write_tree, store_url
):
    """As in Java, s.Area() (s an IShape) was only a name match of Circle.Area, and
    c.Area() (c a Circle) of IShape.Area, and Cube's c.Volume() of the abstract
    Solid.Volume: the rule was Java's only. Roslyn counts them as JDT does."""
    root = indexed(tmp_path / "cs", CSHARP_SHAPES, write_tree)
    solid = ["src/Acme/Shapes.cs", "Acme.Cube.Twice 32: double Twice(Cube c) { return c.Volume() * 2; }"]
    through_shapes(root, "src/App/Use.cs", "App.Use.Total", "I", solid)


CSHARP = {
    "src/Billing/Models/Invoice.cs": (
        "namespace Billing.Models\n"  # 1
        "{\n"
        "    public partial class Invoice\n"
        "    {\n"
        "        public decimal Total()\n"  # 5
        "        {\n"
        "            return Round(1);\n"
        "        }\n"
        "    }\n"
        "}\n"
    ),
    "src/Billing/Models/Invoice.Helpers.cs": (
        "namespace Billing.Models;\n"  # 1
        "\n"
        "public partial class Invoice\n"
        "{\n"
        "    private static decimal Round(decimal v) => v;\n"  # 5
        "\n"
        "    private bool Check() => Total() > 0;\n"
        "\n"
        "    public static Invoice Empty() => new Invoice();\n"
        "}\n"
    ),
    "src/App/Program.cs": (
        "using Inv = Billing.Models.Invoice;\n"  # 1
        "\n"
        "namespace App\n"
        "{\n"
        "    public static class Program\n"  # 5
        "    {\n"
        "        public static Inv Main() => Inv.Empty();\n"
        "    }\n"
        "}\n"
    ),
}


def test_csharp_a_definition_is_its_namespace_s_whatever_file_or_folder_holds_it(
    tmp_path: Path, write_tree, store_url
):
    """A C# key was its folder's (src.Billing.Models.Billing.Models.Invoice), which no
    using spells, and a partial class's member was the file's own (=...): its calls from
    the class's other files were lost."""
    root = indexed(tmp_path / "cs", CSHARP, write_tree)
    wanted = {
        "Invoice.Round": [
            "src/Billing/Models/Invoice.cs",
            "Billing.Models.Invoice.Total 7: return Round(1);",
        ],
        "Invoice.Total": [
            "src/Billing/Models/Invoice.Helpers.cs",
            "Billing.Models.Invoice.Check 7: private bool Check() => Total() > 0;",
        ],
        "Invoice.Empty": [
            "src/App/Program.cs",
            "App.Program.Main 7: public static Inv Main() => Inv.Empty();",
        ],
    }
    for target, lines in wanted.items():
        assert uses(service.find_references(target, root).text) == lines, target


def test_csharp_a_type_of_a_namespace_a_using_brings_in_and_typed_locals(
    tmp_path: Path, write_tree, store_url
):
    """using Billing.Models; was not followed, and a local, a parameter, a field or a
    property had no type: Invoice there, new Invoice(), Invoice.Empty() and x.Total()
    were name matches. A file whose namespaces do not hold Invoice keeps its name match."""
    files = {
        **CSHARP,
        "src/App/Report.cs": (
            "using System;\n"
            "using Billing.Models;\n"
            "\n"
            "namespace App\n"
            "{\n"  # 5
            "    public class Report\n"
            "    {\n"
            "        private Invoice last;\n"
            "        public Invoice Current { get; set; }\n"
            "\n"  # 10
            "        public decimal Sum(Invoice given)\n"
            "        {\n"
            "            var made = new Invoice();\n"
            "            Invoice empty = Invoice.Empty();\n"
            "            return made.Total() + empty.Total() + given.Total()\n"  # 15
            "                + last.Total() + Current.Total();\n"
            "        }\n"
            "    }\n"
            "}\n"
        ),
        "src/Other/Loose.cs": (
            "namespace Other\n{\n    class Loose\n    {\n"
            "        decimal F(Invoice i) => i.Total();\n    }\n}\n"
        ),
    }
    root = indexed(tmp_path / "cs", files, write_tree)
    total = service.find_references("Invoice.Total", root).text
    made, last = (
        "15: return made.Total() + empty.Total() + given.Total()",
        "16: + last.Total() + Current.Total();",
    )
    assert uses(total)[:3] == ["src/App/Report.cs", f"App.Report.Sum {made}", f"App.Report.Sum {last}"]
    assert "src/Other/Loose.cs" in matched(total)
    empty = uses(service.find_references("Invoice.Empty", root).text)
    assert empty[2:] == ["src/App/Report.cs", "App.Report.Sum 14: Invoice empty = Invoice.Empty();"]
    callees = service.find_references("Report.Sum", root, direction="callees").text
    assert "1. src/Billing/Models/Invoice.Helpers.cs:9 Billing.Models.Invoice.Empty (method)" in callees
    assert "1. src/Billing/Models/Invoice.cs:5 Billing.Models.Invoice.Total (method)" in callees


CSHARP_PROPERTIES = {
    "src/Shop/Cart.cs": (
        "namespace Acme.Shop\n"  # 1
        "{\n"
        "    public class Cart\n"
        "    {\n"
        "        public decimal Total { get; set; }\n"  # 5
        "        public event EventHandler Changed;\n"
        "        public static Cart Empty() => new Cart();\n"
        "\n"
        "        public decimal Twice() { return Total * 2; }\n"
        "    }\n"  # 10
        "}\n"
    ),
    "src/App/Till.cs": (
        "using Acme.Shop;\n"  # 1
        "\n"
        "namespace App\n"
        "{\n"
        "    public class Till\n"  # 5
        "    {\n"
        "        public decimal Ring(Cart cart)\n"
        "        {\n"
        "            cart.Changed += OnChanged;\n"
        "            return cart.Total;\n"  # 10
        "        }\n"
        "        void OnChanged(object s, EventArgs e) {}\n"
        "    }\n"
        "    public class Plotter { public void Plot() { var c = Cart.Empty(); } void Draw() {} }\n"
        "}\n"  # 15
    ),
}


def test_csharp_a_property_and_an_event_are_definitions_their_reads_uses(
    tmp_path: Path, write_tree, store_url
):
    """Cart.Total, a property, and Cart.Changed, an event, were no symbols: find_references
    found no definition to start from, and cart.Total no definition to mean."""
    root = indexed(tmp_path / "cs", CSHARP_PROPERTIES, write_tree)
    till, cart = "src/App/Till.cs", "src/Shop/Cart.cs"
    total = [till, "App.Till.Ring 10: return cart.Total;"]
    total += [cart, "Acme.Shop.Cart.Twice 9: public decimal Twice() { return Total * 2; }"]
    assert uses(service.find_references("Cart.Total", root).text) == total
    changed = service.find_references("Changed", root).text
    assert changed.splitlines()[0].startswith(f"Acme.Shop.Cart.Changed (method, {cart}:6-6)")
    assert uses(changed) == [till, "App.Till.Ring 9: cart.Changed += OnChanged;"]
    impact = service.impact("Cart.Total", root, depth=1).text
    assert "1. src/App/Till.cs:7 App.Till.Ring (method) <- attr at line 10" in impact


def test_csharp_a_use_in_a_class_written_on_one_line_is_in_the_method_holding_it(
    tmp_path: Path, write_tree, store_url
):
    """Rows name a line, not a column: every use on the line of a class written on one line
    was its last method's, so Cart.Empty() was called by Draw, not by Plot."""
    root = indexed(tmp_path / "cs", CSHARP_PROPERTIES, write_tree)
    callers = service.find_references("Cart.Empty", root, direction="callers").text
    assert "1. src/App/Till.cs:14 App.Plotter.Plot (method)" in callers
    assert "Plotter.Draw" not in callers


def test_csharp_a_property_read_bare_in_a_subclass_or_another_part_is_a_use_of_it(
    tmp_path: Path, write_tree, store_url
):
    """Total read plainly in a subclass of Cart, or in a part of the partial class Till in
    another file than the part declaring Open, made no row: neither was a use."""
    files = {
        **CSHARP_PROPERTIES,
        "src/Shop/Gift.cs": (
            "namespace Acme.Shop\n"
            "{\n"
            "    public class GiftCart : Cart\n"
            "    {\n"
            "        public decimal Wrapped() { return Total + 1; }\n"  # 5
            "    }\n"
            "}\n"
        ),
        "src/Shop/TillA.cs": "namespace Acme.Shop\n{\n    public partial class Till\n    {\n"
        "        public bool Open { get; set; }\n    }\n}\n",
        "src/Shop/TillB.cs": "namespace Acme.Shop\n{\n    public partial class Till\n    {\n"
        "        public bool Closed() => !Open;\n    }\n}\n",
    }
    root = indexed(tmp_path / "cs", files, write_tree)
    total = uses(service.find_references("Acme.Shop.Cart.Total", root).text)
    assert "Acme.Shop.GiftCart.Wrapped 5: public decimal Wrapped() { return Total + 1; }" in total
    assert uses(service.find_references("Acme.Shop.Till.Open", root).text) == [
        "src/Shop/TillB.cs",
        "Acme.Shop.Till.Closed 5: public bool Closed() => !Open;",
    ]


def test_kotlin_an_extension_function_is_imported_and_called_by_its_name(
    tmp_path: Path, write_tree, store_url
):
    """fun String.shout() is named String.shout: 'import com.acme.shout' and "x".shout()
    were no uses of it (the import a key of nothing, the call a name match)."""
    files = {
        "src/com/acme/Strings.kt": 'package com.acme\n\nfun String.shout(): String = this + "!"\n',
        "src/com/app/Main.kt": (
            "package com.app\n"
            "\n"
            "import com.acme.shout\n"
            "\n"
            "fun main() {\n"  # 5
            '    println("hi".shout())\n'
            "}\n"
        ),
    }
    root = indexed(tmp_path / "kt", files, write_tree)
    assert uses(service.find_references("shout", root).text) == [
        "src/com/app/Main.kt",
        "(module) 3: import com.acme.shout",
        'main 6: println("hi".shout())',
    ]
    callees = service.find_references("main", root, direction="callees").text.splitlines()[1:]
    assert callees[:1] == ["1. src/com/acme/Strings.kt:3 String.shout (function)"]


STARRED = {
    "java": {
        "src/q/Helper.java": "package q;\n\npublic class Helper {\n    static void log(Object x) {}\n}\n",
        "src/p/Local.java": "package p;\n\nclass Local {\n    static void make() {}\n}\n",
        "src/p/Main.java": (
            "package p;\n"
            "\n"
            "import q.*;\n"
            "\n"
            "class Main {\n"  # 5
            "    void run(Object x) {\n"
            "        Helper.log(x);\n"
            "        new Helper();\n"
            "        Local.make();\n"  # 9
            "    }\n"
            "}\n"
        ),
    },
    "kotlin": {
        "src/q/Helper.kt": "package q\n\nclass Helper {\n    companion object { fun log(x: Any) {} }\n}\n",
        "src/p/Local.kt": "package p\n\nobject Local {\n    fun make() {}\n}\n",
        "src/p/Main.kt": (
            "package p\n"
            "\n"
            "import q.*\n"
            "\n"
            "class Main {\n"  # 5
            "    fun run(x: Any) {\n"
            "        Helper.log(x)\n"
            "        Helper()\n"
            "        Local.make()\n"  # 9
            "    }\n"
            "}\n"
        ),
    },
}


@pytest.mark.parametrize("language", sorted(STARRED))
def test_java_and_kotlin_a_type_of_a_package_imported_wholesale_or_of_the_file_s_own(
    language: str, tmp_path: Path, write_tree, store_url
):
    """import q.*; then Helper.log(x): a name match, and so was Local.make() of the file's
    own package; each is now the definition's use."""
    root = indexed(tmp_path / language, STARRED[language], write_tree)
    main = f"src/p/Main.{'java' if language == 'java' else 'kt'}"
    logged = service.find_references("log", root).text
    assert uses(logged)[:2] == [main, "Main.run 7: Helper.log(x)" + (";" if language == "java" else "")]
    made = service.find_references("make", root).text
    assert uses(made) == [main, "Main.run 9: Local.make()" + (";" if language == "java" else "")]
    assert not matched(made)


OVERLOADS = {
    "src/p/Sock.java": (
        "package p;\n"
        "\n"
        "public class Sock {\n"
        "    void send(String data) {\n"  # 4
        "        send(data, 1);\n"
        "    }\n"
        "\n"
        "    void send(String data, int opcode) {}\n"  # 8
        "\n"
        "    void send(byte[] data, int opcode, boolean... fin) {}\n"  # 10
        "}\n"
    ),
    "src/p/Use.java": (
        "package p;\n"
        "\n"
        "class Use {\n"
        "    void go(Sock s) {\n"
        '        s.send("a");\n'  # 5
        '        s.send("b", 2);\n'
        "        s.send(new byte[0], 2,\n"
        "               true, false);\n"
        "        s.send(f(1, 2));\n"  # 9
        '        s.send("c", 3); s.send("d");\n'
        "    }\n"
        "\n"
        "    String f(int a, int b) { return null; }\n"
        "}\n"
    ),
}


@pytest.mark.parametrize(
    ("line", "calls"),
    [
        (4, ['Use.go 5: s.send("a");', "Use.go 9: s.send(f(1, 2));"]),
        (8, ["Sock.send 5: send(data, 1);", 'Use.go 6: s.send("b", 2);']),
        (10, ["Use.go 7: s.send(new byte[0], 2,"]),
    ],
)
def test_java_an_overload_s_calls_are_those_passing_what_it_takes(
    line: int, calls: list[str], tmp_path: Path, write_tree, store_url
):
    """send(data) and send(data, opcode) had the same answer: every call of either. A call
    is the overload's taking its count of arguments (a varargs one's when no other takes it
    exactly); one whose arguments are not read surely (two calls on its line) stays every
    overload's."""
    root = indexed(tmp_path / "java", OVERLOADS, write_tree)
    found = uses(service.find_references(f"src/p/Sock.java:{line}", root).text)
    assert [u for u in found if not u.endswith(".java") and " 10: " not in u] == calls
    assert 'Use.go 10: s.send("c", 3); s.send("d");' in found


# An overloaded method in each language whose overloads are told apart by their count of
# arguments (the file and its text), and which lines call each overload.
OVERLOADED = {
    "csharp": (
        "src/Sock.cs",
        "namespace P {\n"
        "public class Sock {\n"
        "    public void Send(string data) {}\n"  # 3
        "    public void Send(string data, int opcode, bool fin = false) {}\n"  # 4
        "    public void Send(byte[] data, int opcode, int x, params int[] more) {}\n"  # 5
        "}\n"
        "public static class Ext {\n"
        "    public static void Push(this Sock s, int a) {}\n"  # 8
        "    public static void Push(this Sock s, int a, int b) {}\n"
        "}\n"
        "class Use {\n"
        "    void Go(Sock s) {\n"
        '        s.Send("a");\n'  # 13
        '        s.Send("b", 2);\n'
        '        s.Send(fin: true, data: "c", opcode: 2);\n'  # 15
        "        s.Send(new byte[0], 2, 3, 4, 5);\n"
        "        s.Send(new Dictionary<string, int>().ToString(), 2);\n"  # 17
        "        Ext.Push(s, 1);\n"
        "        Ext.Push(s, 1, 2);\n"  # 19
        "    }\n"
        "}\n"
        "}\n",
    ),
    "kotlin": (
        "src/p/Sock.kt",
        "package p\n"
        "\n"
        "class Sock {\n"
        "    fun send(data: String) {}\n"  # 4
        "    fun send(data: String, opcode: Int, fin: Boolean = false) {}\n"  # 5
        "    fun send(data: ByteArray, vararg more: Int) {}\n"  # 6
        "    fun send(\n"  # 7
        "        a: Int,\n"
        "        b: Int,\n"
        "        c: Int,\n"
        "        block: () -> Unit,\n"
        "    ) {}\n"
        "}\n"
        "\n"
        "class Use {\n"
        "    fun go(s: Sock) {\n"
        '        s.send("a")\n'  # 17
        '        s.send("b", 2)\n'
        '        s.send(opcode = 2, data = "b", fin = true)\n'  # 19
        "        s.send(1, 2, 3) { println() }\n"
        "        s.send(ByteArray(0), 1, 2, 3, 4)\n"  # 21
        "        s.send(mapOf<String, Int>().toString(), 1)\n"
        "    }\n"
        "}\n",
    ),
    "cpp": (
        "src/sock.cpp",
        "class Sock {\n"
        "public:\n"
        "    void send(const char* data) {}\n"  # 3
        "    void send(const char* data, int opcode, bool fin = false) {}\n"
        "    void send(std::map<int, int> m, int a, int b, int c) {}\n"  # 5
        "    void go() {\n"
        '        send("a");\n'  # 7
        '        send("b", 2);\n'
        '        send("c", 2, true);\n'  # 9
        "        send({}, 1, 2, 3);\n"
        "    }\n"
        "};\n",
    ),
    "scala": (
        "src/p/Sock.scala",
        "package p\n"
        "\n"
        "class Sock {\n"
        "  def send(data: String): Unit = {}\n"  # 4
        "  def send(data: String, opcode: Int, fin: Boolean = false): Unit = {}\n"
        "  def send(data: Array[Byte], more: Int*): Unit = {}\n"  # 6
        "  def go(): Unit = {\n"
        '    send("a")\n'  # 8
        '    send("b", 2)\n'
        '    send("c", 2, true)\n'  # 10
        "    send(Array[Byte](), 1, 2, 3)\n"
        "  }\n"
        "}\n",
    ),
    "swift": (
        "src/Sock.swift",
        "class Sock {\n"
        "    func send(_ data: String) {}\n"  # 2
        "    func send(_ data: String, opcode: Int, fin: Bool = false) {}\n"
        "    func send(_ data: Int, _ more: Int...) {}\n"  # 4
        "    func go() {\n"
        '        send("a")\n'  # 6
        '        send("b", opcode: 2)\n'
        "        send(1, 2, 3, 4)\n"  # 8
        '        if send("c") { }\n'
        "    }\n"
        "}\n",
    ),
}


@pytest.mark.parametrize(
    ("language", "line", "calls"),
    [
        ("csharp", 3, [13, 17]),
        ("csharp", 4, [14, 15, 17]),
        ("csharp", 5, [16, 17]),
        ("csharp", 8, [18, 19]),
        ("kotlin", 4, [17, 22]),
        ("kotlin", 5, [18, 19, 22]),
        ("kotlin", 6, [21, 22]),
        ("kotlin", 7, [20, 22]),
        ("cpp", 3, [7]),
        ("cpp", 4, [8, 9]),
        ("cpp", 5, [10]),
        ("scala", 4, [8]),
        ("scala", 5, [9, 10]),
        ("scala", 6, [11]),
        ("swift", 2, [6, 9]),
        ("swift", 3, [7, 9]),
        ("swift", 4, [8, 9]),
    ],
)
def test_an_overload_s_calls_are_those_passing_what_it_takes_beyond_java(
    language: str, line: int, calls: list[int], tmp_path: Path, write_tree, store_url
):
    """Each overload had every call of its name (Java's only were told apart). A call is the
    overload's taking its count: a parameter with a default value makes a range, named
    arguments and labels count, Kotlin's trailing lambda is one more, a varargs one's when no
    other takes that count, and a Kotlin overload whose parameters stand one a line (its
    signature is `fun send`) is read from its lines. One whose comma may be a generic's
    (`mapOf<String, Int>()`), a Swift call a block follows (`if send("c") { }`) and a C#
    extension method's (`s.Push(1)` and `Ext.Push(s, 1)` are the same one) stay every
    overload's."""
    path, source = OVERLOADED[language]
    found = uses(
        service.find_references(f"{path}:{line}", indexed(tmp_path, {path: source}, write_tree)).text
    )
    assert [int(u.split()[1].rstrip(":")) for u in found if u != path] == calls


@pytest.mark.parametrize("named", ["", " Factory"])
def test_kotlin_a_companion_object_s_member_is_its_class_s(named: str, tmp_path: Path, write_tree, store_url):
    """Repo.create() and create() in Repo meant Repo.create, and the definition is
    Repo.Companion.create (Repo.Factory.create in companion object Factory): none of its
    uses was found."""
    files = {
        "src/com/acme/Repo.kt": (
            "package com.acme\n"
            "\n"
            "class Repo {\n"
            "    fun copy(): Repo = create()\n"  # 4
            "\n"
            f"    companion object{named} {{\n"
            "        fun create(): Repo = Repo()\n"
            "    }\n"
            "}\n"
        ),
        "src/com/app/Main.kt": "package com.app\n\nimport com.acme.Repo\n\nfun main() = Repo.create()\n",
    }
    root = indexed(tmp_path / "kt", files, write_tree)
    found = uses(service.find_references("create", root).text)
    called = service.find_references("Repo.copy", root, direction="callees").text.splitlines()[1:2]
    in_repo, in_main = "Repo.copy 4: fun copy(): Repo = create()", "main 5: fun main() = Repo.create()"
    assert found == ["src/com/acme/Repo.kt", in_repo, "src/com/app/Main.kt", in_main]
    holder = named.strip() or "Companion"
    assert called == [f"1. src/com/acme/Repo.kt:7 Repo.{holder}.create (method)"]


def test_kotlin_s_other_names_are_one_function_s_for_every_question(tmp_path: Path, write_tree, store_url):
    """An extension function's name and a named companion object's member's were worked
    out in three places (a question's meaning, a definition's keys, a use's definition):
    one function says them, and a file's own key never means its extension function by its
    bare name (fun shout() beside fun String.shout(): main's shout() is the first's)."""
    files = {
        "src/com/acme/Repo.kt": (
            "package com.acme\n"
            "\n"
            "class Repo {\n"
            "    companion object Factory {\n"
            "        fun create(): Repo = Repo()\n"  # 5
            "    }\n"
            "}\n"
            "\n"
            "fun String.shout(): String = this\n"
            'fun shout(): String = "!"\n'  # 10
            "\n"
            "fun main() = shout()\n"
        ),
    }
    root = indexed(tmp_path / "kt", files, write_tree)
    reader = open_store(root, None).open_reader()
    named = {s.qualname: s for s in symbols_in(reader, "src/com/acme/Repo.kt")}
    extension, create = named["String.shout"], named["Repo.Factory.create"]
    assert other_names(reader, extension) == ("shout",)
    assert other_names(reader, extension, own_file=True) == ()
    assert other_names(reader, create) == other_names(reader, create, own_file=True) == ("Repo.create",)
    assert other_names(reader, named["shout"]) == other_names(reader, named["Repo"]) == ()
    callees = service.find_references("main", root, direction="callees").text.splitlines()[1:]
    assert [c for c in callees if c[:1].isdigit()] == ["1. src/com/acme/Repo.kt:10 shout (function)"]


@pytest.mark.parametrize(("line", "calls"), [(4, [11, 14]), (5, [12]), (6, [13])])
def test_kotlin_a_call_with_a_trailing_lambda_and_no_parentheses_passes_one_argument(
    line: int, calls: list[int], tmp_path: Path, write_tree, store_url
):
    """s.on { } (no parentheses) was a call whose arguments were not read: every overload's.
    It passes one, the lambda, and s.on(1) { } two."""
    path = "src/p/Bus.kt"
    source = (
        "package p\n"
        "\n"
        "class Bus {\n"
        "    fun on(block: () -> Unit) {}\n"  # 4
        "    fun on(n: Int, block: () -> Unit) {}\n"
        "    fun on(a: Int, b: Int, block: () -> Unit) {}\n"  # 6
        "}\n"
        "\n"
        "class Use {\n"
        "    fun go(s: Bus) {\n"
        "        s.on { println() }\n"  # 11
        "        s.on(1) { println() }\n"
        "        s.on(1, 2) {\n"  # 13
        "            s.on(block = {})\n"
        "        }\n"
        "    }\n"
        "}\n"
    )
    found = uses(
        service.find_references(f"{path}:{line}", indexed(tmp_path, {path: source}, write_tree)).text
    )
    assert [int(u.split()[1].rstrip(":")) for u in found if u != path] == calls


RUBY = {
    "lib/shop/item.rb": (
        "module Shop\n"  # 1
        "  class Item\n"
        "    def price\n"
        "      1\n"
        "    end\n"  # 5
        "\n"
        "    def label(extra = price)\n"
        '      "#{price} " + extra.to_s\n'
        "    end\n"
        "  end\n"  # 10
        "\n"
        "  class Discounted < Item\n"
        "    def describe(items)\n"
        "      items.each { |price| price }\n"
        "      label + Shop::Money.format(price)\n"  # 15
        "    end\n"
        "  end\n"
        "end\n"
    ),
    "lib/shop/money.rb": "module Shop\n  module Money\n    def self.format(v) = v\n  end\nend\n",
}


def test_ruby_a_method_called_bare_in_an_expression_and_not_a_block_s_parameter_elsewhere(
    tmp_path: Path, write_tree, store_url
):
    """A Ruby method called without a receiver or parentheses inside an expression
    ("#{price}", label + x, f(price), a default value) was no use, and a block's
    parameter hid the method of its name in the whole method."""
    root = indexed(tmp_path / "rb", RUBY, write_tree)
    wanted = {
        "Item#price": [
            "lib/shop/item.rb",
            "Shop::Item#label 7: def label(extra = price)",
            'Shop::Item#label 8: "#{price} " + extra.to_s',
            "Shop::Discounted#describe 15: label + Shop::Money.format(price)",
        ],
        "Item#label": ["lib/shop/item.rb", "Shop::Discounted#describe 15: label + Shop::Money.format(price)"],
    }
    for target, lines in wanted.items():
        assert uses(service.find_references(target, root).text) == lines, target


def test_ruby_a_module_reopened_in_another_file_is_one_module(tmp_path: Path, write_tree, store_url):
    """Shop::Money.format in a file reopening module Shop was keyed as that file's own
    (=Shop.Money.format), where Money is another file's: the use was lost."""
    root = indexed(tmp_path / "rb", RUBY, write_tree)
    assert uses(service.find_references("Money.format", root).text)[1:] == [
        "Shop::Discounted#describe 15: label + Shop::Money.format(price)"
    ]


PHP = {
    "src/Shop/Item.php": (
        "<?php\n"
        "\n"
        "namespace App\\Shop;\n"
        "\n"
        "class Item\n"  # 5
        "{\n"
        "    public static function unit(): string\n"
        "    {\n"
        "        return 'EUR';\n"
        "    }\n"  # 10
        "}\n"
        "\n"
        "function helper(Item $item): string\n"
        "{\n"
        "    return $item::unit();\n"  # 15
        "}\n"
    ),
    "src/Cart.php": (
        "<?php\n"
        "\n"
        "namespace App;\n"
        "\n"
        "use App\\Shop\\Item as Product;\n"  # 5
        "use function App\\Shop\\helper;\n"
        "\n"
        "function add(Product $p): string\n"
        "{\n"
        "    return helper($p) . Product::unit();\n"  # 10
        "}\n"
    ),
}


def test_php_a_definition_is_keyed_by_its_file_s_namespace(tmp_path: Path, write_tree, store_url):
    """A PHP definition was keyed by its path (src.Shop.Item.Item), which no use
    statement spells: 'use App\\Shop\\Item as Product' and every use of Product, of
    helper, were no uses of anything, not even name matches."""
    root = indexed(tmp_path / "php", PHP, write_tree)
    wanted = {
        "Item.unit": ["src/Cart.php", "add 10: return helper($p) . Product::unit();"],
        "helper": [
            "src/Cart.php",
            "(module) 6: use function App\\Shop\\helper;",
            "add 10: return helper($p) . Product::unit();",
        ],
    }
    for target, lines in wanted.items():
        assert uses(service.find_references(target, root).text) == lines, target


def test_php_a_file_s_second_namespace_keys_the_definitions_in_it(tmp_path: Path, write_tree, store_url):
    """A definition under a file's second namespace (a statement or a block) was keyed by
    the first: use App\\Billing\\Invoice, Invoice::total() and tax() were no uses of it."""
    files = {
        "src/lib.php": (
            "<?php\nnamespace App\\Shop;\n\nclass Item\n{\n"
            "    public static function unit(): int { return 1; }\n}\n"
            "\nnamespace App\\Billing;\n\nclass Invoice\n{\n"  # 9
            "    public static function total(): int { return 1; }\n}\n\nfunction tax(): int { return 2; }\n"
        ),
        "src/blocks.php": (
            "<?php\nnamespace App\\Geo {\n    class Point { }\n}\n\nnamespace App\\Time {\n"
            "    class Clock\n    {\n        public static function now(): int { return 0; }\n    }\n}\n"
        ),
        "src/use.php": (
            "<?php\nnamespace App;\n\nuse App\\Shop\\Item;\n"
            "use App\\Billing\\Invoice;\nuse App\\Time\\Clock;\n"
            "use function App\\Billing\\tax;\n\nfunction run(): int\n{\n"  # 9
            "    return Item::unit() + Invoice::total() + Clock::now() + tax();\n}\n"
        ),
    }
    root = indexed(tmp_path / "php", files, write_tree)
    call = "run 11: return Item::unit() + Invoice::total() + Clock::now() + tax();"
    wanted = {
        "Item.unit": ["src/use.php", call],
        "Invoice.total": ["src/use.php", call],
        "tax": ["src/use.php", "(module) 7: use function App\\Billing\\tax;", call],
        "Clock.now": ["src/use.php", call],
    }
    for target, lines in wanted.items():
        assert uses(service.find_references(target, root).text) == lines, target


def test_php_a_class_named_without_a_namespace_is_the_namespace_s_it_is_named_in(
    tmp_path: Path, write_tree, store_url
):
    """new Item() and Item::make() in another file of namespace App\\Shop were name
    matches: only a use statement named another file's class."""
    item = (
        "<?php\nnamespace App\\{};\n\nclass Item\n{{\n"
        "    public static function make(): Item {{ return new Item(); }}\n}}\n"
    )
    cart = (
        "<?php\nnamespace App\\Shop;\n\nclass Cart\n{\n    public function add(Item $x)\n    {\n"
        "        new Item();\n        Item::make();\n        \\App\\Other\\Item::make();\n    }\n}\n"
    )
    files = {
        "src/Shop/Item.php": item.format("Shop"),
        "src/Other/Item.php": item.format("Other"),
        "src/Shop/Cart.php": cart,
    }
    root = indexed(tmp_path / "php", files, write_tree)
    made = service.find_references("src/Shop/Item.php:6", root).text
    assert uses(made) == ["src/Shop/Cart.php", "Cart.add 9: Item::make();"]
    assert "Cart.add 10: \\App\\Other\\Item::make();" in matched(made)  # (its receiver: all of the name)
    assert "Cart.add 6: public function add(Item $x)" in uses(
        service.find_references("src/Shop/Item.php:4", root).text
    )
    assert "Cart.add 9" not in service.find_references("src/Other/Item.php:6", root).text


def test_kotlin_an_inherited_method_called_without_a_receiver_in_a_subclass(
    tmp_path: Path, write_tree, store_url
):
    """rename() in a subclass of Repo was keyed as a function of the package (a file
    cannot tell), and was lost: Kotlin calls the inherited member first."""
    files = {
        "src/com/acme/Repo.kt": "package com.acme\n\nopen class Repo {\n    fun rename() {}\n}\n",
        "src/com/acme/Cached.kt": (
            "package com.acme\n\nclass Cached : Repo() {\n    fun warm() {\n        rename()\n    }\n}\n"
            "\nfun outside() {\n    rename()\n}\n"  # 9-11: no class's: the package's rename
        ),
    }
    root = indexed(tmp_path / "kt", files, write_tree)
    assert uses(service.find_references("Repo.rename", root).text) == [
        "src/com/acme/Cached.kt",
        "Cached.warm 5: rename()",
    ]


def test_a_method_through_a_subclass_a_package_re_exports(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "py/lib/__init__.py": "from lib.core import App as App\n",
            "py/lib/scaffold.py": "class Scaffold:\n    def route(self):\n        return 1\n",
            "py/lib/core.py": "from lib.scaffold import Scaffold\n\n\nclass App(Scaffold):\n    pass\n",
            "py/site.py": "import lib\n\napp = lib.App()\n\n\n@app.route\ndef index():\n    return 1\n",
        },
    )
    build_index(repo)
    assert uses(service.find_references("Scaffold.route", repo).text) == ["py/site.py", "index 6: @app.route"]


def test_a_method_through_a_field_of_a_typed_object_in_another_file(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "ts/src/request.ts": "export class Req {\n  header(name: string): string { return name }\n}\n",
            "ts/src/context.ts": (
                "import { Req } from './request'\n"
                "export class Context {\n  req: Req\n  constructor(r: Req) { this.req = r }\n}\n"
            ),
            "ts/src/mw.ts": (
                "import type { Context } from './context'\n"
                "export function mw(c: Context) {\n  return c.req.header('b')\n}\n"
            ),
            "py/app/req.py": "class Request:\n    def blueprint(self):\n        return 1\n",
            "py/app/ctx.py": (
                "from app.req import Request\n\n\nclass Ctx:\n"
                "    def __init__(self, request: Request):\n        self.request = request\n"
            ),
            "py/app/view.py": (
                "from app.ctx import Ctx\n\n\ndef f(c: Ctx):\n    return c.request.blueprint()\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("Req.header", repo).text) == [
        "ts/src/mw.ts",
        "mw 3: return c.req.header('b')",
    ]
    assert uses(service.find_references("Request.blueprint", repo).text) == [
        "py/app/view.py",
        "f 5: return c.request.blueprint()",
    ]


def test_a_python_property_setter_is_a_reference_of_its_getter(repo: Path, write_tree):
    prop = (
        "class F:\n    @property\n    def debug(self):\n        return 1\n\n"
        "    @debug.setter\n    def debug(self, v):\n        pass\n"
    )
    write_tree(repo, {"py/app/prop.py": prop})
    build_index(repo)
    assert uses(service.find_references("py/app/prop.py:3", repo).text) == [
        "py/app/prop.py",
        "F.debug 7: def debug(self, v):",
    ]


def test_typescript_overloads_and_the_members_a_method_implements_or_overrides(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "ts/src/router.ts": (
                "export interface Router {\n"  # 1
                "  match(path: string): number\n"
                "}\n"
                "export class Req {\n"
                "  /** The values of one key. */\n"  # 5
                "  queries(key: string): string[]\n"
                "  queries(key?: string) {\n"
                "    return []\n"
                "  }\n"
                "}\n"
            ),
            "ts/src/trie.ts": (
                "import type { Router } from './router'\n"  # 1
                "export class Trie implements Router {\n"
                "  match(path: string): number { return 1 }\n"
                "}\n"
                "export class Sub extends Trie {\n"  # 5
                "  match(path: string): number { return 2 }\n"
                "}\n"
            ),
        },
    )
    build_index(repo)
    assert uses(service.find_references("Trie.match", repo).text) == [
        "ts/src/router.ts",
        "Router.match 2: match(path: string): number",
        "ts/src/trie.ts",
        "Sub.match 6: match(path: string): number { return 2 }",
    ]
    assert uses(service.find_references("ts/src/router.ts:7", repo).text) == [
        "ts/src/router.ts",
        "Req.queries 6: queries(key: string): string[]",  # the line of its name, not of its comment
    ]
    assert "constructor" not in service.find_references("Sub.match", repo).text


ROUTERS = {
    "ts/src/router.ts": (
        "export interface Router<T> {\n"  # 1
        "  add(path: string, handler: T): void\n"
        "  match(path: string): T[]\n"
        "}\n"
    ),
    "ts/src/smart.ts": (
        "import type { Router } from './router'\n"  # 1
        "export class SmartRouter<T> implements Router<T> {\n"
        "  add(path: string, handler: T): void {}\n"
        "  match(path: string): T[] { return [] }\n"
        "}\n"  # 5
    ),
    "ts/src/regexp.ts": (
        "import type { Router } from './router'\n"  # 1
        "export class RegExpRouter<T> implements Router<T> {\n"
        "  add(path: string, handler: T): void {}\n"
        "  match(path: string): T[] { return [] }\n"
        "}\n"  # 5
    ),
    "ts/src/hono.ts": (
        "import type { Router } from './router'\n"  # 1
        "import { RegExpRouter } from './regexp'\n"
        "export class Hono<T> {\n"
        "  router: Router<T>\n"
        "  other = new RegExpRouter<T>()\n"  # 5
        "  constructor(router: Router<T>) {\n"
        "    this.router = router\n"
        "  }\n"
        "  on(path: string, handler: T) {\n"
        "    this.router.add(path, handler)\n"  # 10
        "    this.other.add(path, handler)\n"
        "    return this.router.match(path)\n"
        "  }\n"
        "}\n"
    ),
    "ts/src/app.ts": (
        "import { Hono } from './hono'\n"  # 1
        "export function register(app: Hono<string>) {\n"
        "  app.router.add('/', 'h')\n"
        "}\n"
    ),
    "ts/src/shapes.ts": (
        "export class Shape {\n"  # 1
        "  area(): number { return 0 }\n"
        "}\n"
        "export class Square extends Shape {\n"
        "  area(): number { return 4 }\n"  # 5
        "}\n"
        "export class Circle extends Shape {\n"
        "  area(): number { return 3 }\n"
        "}\n"
        "export class Dot extends Shape {}\n"  # 10
        "export function total(s: Shape, q: Square, c: Circle, d: Dot) {\n"
        "  s.area()\n"
        "  q.area()\n"
        "  c.area()\n"
        "  return d.area()\n"  # 15
        "}\n"
    ),
}


def test_typescript_a_method_is_met_through_the_interface_it_implements_as_the_language_service_counts(
    repo: Path, write_tree
):
    write_tree(repo, ROUTERS)
    build_index(repo)
    # the members one implements or overrides, and every member implementing or overriding
    # those, are one member: their declarations and their uses (tsserver's references)
    expected = [
        "ts/src/app.ts",
        "register 3: app.router.add('/', 'h')",
        "ts/src/hono.ts",
        "Hono.on 10: this.router.add(path, handler)",
        "Hono.on 11: this.other.add(path, handler)",
        "ts/src/regexp.ts",
        "RegExpRouter.add 3: add(path: string, handler: T): void {}",
        "ts/src/router.ts",
        "Router.add 2: add(path: string, handler: T): void",
    ]
    assert uses(service.find_references("SmartRouter.add", repo).text) == expected
    assert uses(service.find_references("ts/src/router.ts:2", repo).text) == [
        *expected[:7],
        "ts/src/smart.ts",
        "SmartRouter.add 3: add(path: string, handler: T): void {}",
    ]
    assert uses(service.find_references("RegExpRouter.match", repo).text) == [
        "ts/src/hono.ts",
        "Hono.on 12: return this.router.match(path)",
        "ts/src/router.ts",
        "Router.match 3: match(path: string): T[]",
        "ts/src/smart.ts",
        "SmartRouter.match 4: match(path: string): T[] { return [] }",
    ]
    # an override: the base's member, its other overrides and what inherits it (Dot)
    assert uses(service.find_references("Square.area", repo).text) == [
        "ts/src/shapes.ts",
        "Shape.area 2: area(): number { return 0 }",
        "Circle.area 8: area(): number { return 3 }",
        "total 12: s.area()",
        "total 13: q.area()",
        "total 14: c.area()",
        "total 15: return d.area()",
    ]


def test_typescript_an_element_of_an_array_a_field_declares_and_this_chains_past_a_field(
    tmp_path: Path, write_tree, store_url
):
    """``this.projects.map(p => p.start())`` (``projects: Project[]``), a ``for ... of``
    over a filtered array, ``this.core.log.warn()`` (a field's field), ``const { warn } =
    this.core.log`` and ``typeof f`` in a type were no uses of ``Project.start``, ``Log.warn``
    and ``f``: the language service's."""
    files = {
        "src/project.ts": "export class Project {\n  start(): void {}\n}\n",
        "src/log.ts": "export class Log {\n  warn(m: string): void {}\n}\nexport function f(): void {}\n",
        "src/core.ts": (
            "import { Project } from './project'\n"  # 1
            "import { Log } from './log'\n"
            "export class Core {\n"
            "  projects: Project[] = []\n"
            "  readonly log: Log\n"  # 5
            "  run(): void {\n"
            "    this.projects.map(p => p.start())\n"
            "  }\n"
            "}\n"
        ),
        "src/watch.ts": (
            "import { Core } from './core'\n"  # 1
            "import { f } from './log'\n"
            "export class Watch {\n"
            "  constructor(private core: Core) {}\n"
            "  run(list: Array<Core>): void {\n"  # 5
            "    const some = this.core.projects.filter((p) => p.start())\n"
            "    for (const p of some) { p.start() }\n"
            "    this.core.log.warn('x')\n"
            "    list.forEach((c) => c.run())\n"
            "    const { warn } = this.core.log\n"  # 10
            "  }\n"
            "}\n"
            "export type G = ReturnType<typeof f>\n"
        ),
    }
    root = indexed(tmp_path / "repo", files, write_tree)
    found = uses(service.find_references("Project.start", root).text)
    assert found[:2] == ["src/core.ts", "Core.run 7: this.projects.map(p => p.start())"]
    assert found[2:] == [
        "src/watch.ts",
        "Watch.run 6: const some = this.core.projects.filter((p) => p.start())",
        "Watch.run 7: for (const p of some) { p.start() }",
    ]
    assert uses(service.find_references("Log.warn", root).text) == [
        "src/watch.ts",
        "Watch.run 8: this.core.log.warn('x')",
        "Watch.run 10: const { warn } = this.core.log",
    ]
    assert "Watch.run 9: list.forEach((c) => c.run())" in uses(service.find_references("Core.run", root).text)
    assert uses(service.find_references("f", root).text)[-1] == "G 13: export type G = ReturnType<typeof f>"


def test_typescript_a_class_s_own_filter_method_is_no_array_s(tmp_path: Path, write_tree, store_url):
    """``r.filter((c) => c.ok())``, ``Router`` declaring ``filter(cb: (c: Ctx) => boolean)``,
    was no use of ``Ctx.ok`` (its callback was taken for an array's, ``r`` an array of
    nothing); ``this.core.items.map((i) => i.ok())`` of another file's ``items: Ctx[]`` still is."""
    files = {
        "src/ctx.ts": "export class Ctx {\n  ok(): boolean { return true }\n}\n",
        "src/router.ts": (
            "import { Ctx } from './ctx'\n"
            "export class Router {\n"
            "  items: Ctx[] = []\n"
            "  filter(cb: (c: Ctx) => boolean): Router { return this }\n"
            "}\n"
        ),
        "src/app.ts": (
            "import { Router } from './router'\n"  # 1
            "export class App {\n"
            "  constructor(private core: Router) {}\n"
            "  run(r: Router): void {\n"
            "    r.filter((c) => c.ok())\n"  # 5
            "    this.core.items.map((i) => i.ok())\n"
            "    const some = this.core.items.filter(Boolean)\n"
            "    some.forEach((s) => s.ok())\n"
            "  }\n"
            "}\n"
        ),
    }
    root = indexed(tmp_path / "repo", files, write_tree)
    text = service.find_references("Ctx.ok", root).text
    assert text.splitlines()[0].endswith("): 3 references in 1 file")
    assert uses(text) == [
        "src/app.ts",
        "App.run 5: r.filter((c) => c.ok())",  # Router.filter.0.0, a Ctx
        "App.run 6: this.core.items.map((i) => i.ok())",  # Router.items.map.0.0: an element
        "App.run 8: some.forEach((s) => s.ok())",  # Router.items.filter.forEach.0.0: one too
    ]


def test_typescript_a_member_through_a_union_result_and_a_dynamic_import(
    tmp_path: Path, write_tree, store_url
):
    """``const t = s.find(id); t.spec()`` with ``find(): Case | Suite | undefined`` (and
    ``t: Task``, ``type Task = Case | Suite``) was no use of ``Case.spec`` nor ``Suite.spec``,
    and ``const { Mocker } = await import('./mocker')`` no import of ``Mocker``: the
    language service counts both."""
    files = {
        "src/tasks.ts": (
            "export class Case {\n  spec(): void {}\n}\n"
            "export class Suite {\n  spec(): void {}\n}\n"  # 4
            "export class State {\n"  # 7
            "  find(id: string): Case | Suite | undefined { return undefined }\n"
            "}\n"
            "export type Task = Case | Suite\n"
        ),
        "src/mocker.ts": "export class Mocker {}\n",
        "src/core.ts": (
            "import { State, Task } from './tasks'\n"  # 1
            "export class Core {\n"
            "  constructor(private state: State) {}\n"
            "  async rerun(id: string): Promise<void> {\n"
            "    const task = this.state.find(id)\n"  # 5
            "    task?.spec()\n"
            "    const { Mocker } = await import('./mocker')\n"
            "    new Mocker()\n"
            "  }\n"
            "}\n"  # 10
            "export function run(t: Task): void { t.spec() }\n"
        ),
    }
    root = indexed(tmp_path / "repo", files, write_tree)
    for method in ("Case.spec", "Suite.spec"):
        found = uses(service.find_references(method, root).text)
        assert found == [
            "src/core.ts",
            "Core.rerun 6: task?.spec()",
            "run 11: export function run(t: Task): void { t.spec() }",
        ]
    assert uses(service.find_references("Mocker", root).text) == [
        "src/core.ts",
        "Core.rerun 7: const { Mocker } = await import('./mocker')",
        "Core.rerun 8: new Mocker()",
    ]


def test_typescript_a_method_implements_an_interface_its_file_imports_through_a_re_export(
    tmp_path: Path, write_tree, store_url
):
    """``class NodeEnv implements Env`` with ``import type { Env } from '../types'``
    (``types/index.ts`` re-exporting it from ``./env``): a call through an ``Env`` and its
    property's declaration were no uses of ``NodeEnv.remove``; the language service's."""
    files = {
        "src/types/env.ts": "export interface Env {\n  remove: (path: string) => void\n}\n",
        "src/types/index.ts": "import type { Env } from './env'\n\nexport type { Env }\n",
        "src/node/env.ts": "import type { Env } from '../types'\n"
        + "export class NodeEnv implements Env {\n  remove(path: string): void {}\n}\n",
        "src/state.ts": "import type { Env } from './types'\nexport class State {\n"
        + "  constructor(private env: Env) {}\n  save(): void { this.env.remove('x') }\n}\n",
    }
    root = indexed(tmp_path / "repo", files, write_tree)
    found = uses(service.find_references("NodeEnv.remove", root).text)
    assert found[:2] == ["src/state.ts", "State.save 4: save(): void { this.env.remove('x') }"]
    assert found[2:] == ["src/types/env.ts", "Env.remove 2: remove: (path: string) => void"]


def test_a_recursive_call_on_the_definitions_first_line_is_a_use(tmp_path: Path, write_tree):
    """Every use on a definition's first line was dropped, as its own name
    is: a one-line recursive function's call to itself too."""
    files = {
        "a.py": "def f(n): return f(n - 1) if n else 0\n\n\ndef g():\n    return f(3)\n",
        "c.c": "int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }\n",
    }
    root = indexed(tmp_path / "rec", files, write_tree)
    assert uses(service.find_references("f", root).text) == [
        "a.py",
        "f 1: def f(n): return f(n - 1) if n else 0",
        "g 5: return f(3)",
    ]
    assert service.find_references("fact", root).text.splitlines()[0] == (
        "fact (function, c.c:1-1): 1 reference in 1 file"
    )


def test_a_super_call_is_a_callee_as_it_is_a_caller(tmp_path: Path, write_tree):
    """--callers of Model.save listed Child.save's super().save(), and
    --callees of Child.save said 0 definitions."""
    models = (
        "class Model:\n    def save(self):\n        return 1\n\n\n"
        "class Child(Model):\n    def save(self):\n        return super().save()\n"
    )
    root = indexed(tmp_path / "super", {"pkg/models.py": models}, write_tree)
    assert service.find_references("Child.save", root, direction="callees").text.splitlines()[1:] == [
        "1. pkg/models.py:2 Model.save (method)",
        "   -> pkg/models.py:8: return super().save()",
    ]


RENAMED = {
    "pkg/sub/models.py": (
        "class Model:\n    def save(self):\n        return 1\n\n\ndef build(x):\n    return x\n"
    ),
    "pkg/sub/__init__.py": "from .models import Model as Thing\n",
    "pkg/__init__.py": "from .sub import Thing as BaseModel\nfrom .sub.models import build as make\n",
    "use.py": (
        "from pkg import BaseModel, make\n\n\ndef create():\n    m = BaseModel()\n    return make(m.save())\n"
    ),
    "src/models.ts": "export class Model {}\n",
    "src/index.ts": 'export { Model as Entity } from "./models";\n',
    "src/use.ts": (
        'import { Entity } from "./index";\n\nexport function create() {\n  return new Entity();\n}\n'
    ),
}


def test_a_callee_through_a_module_re_exporting_it_under_another_name(tmp_path: Path, write_tree, store_url):
    """--callees of create said nothing of BaseModel() (Model, re-exported as
    Thing, then as BaseModel): only definitions named as the call were looked at,
    where --callers of Model found it."""
    root = indexed(tmp_path / "renamed", RENAMED, write_tree)
    assert service.find_references("use.py:4", root, direction="callees").text.splitlines()[1:] == [
        "1. pkg/sub/models.py:1 Model (class)",
        "   -> use.py:5: m = BaseModel()",
        "1. pkg/sub/models.py:6 build (function)",
        "   -> use.py:6: return make(m.save())",
        "1. pkg/sub/models.py:2 Model.save (method)",
        "   -> use.py:6: return make(m.save())",
    ]
    assert service.find_references("src/use.ts:3", root, direction="callees").text.splitlines()[1:] == [
        "1. src/models.ts:1 Model (class)",
        "   -> src/use.ts:4: return new Entity();",
    ]


def test_callers_and_callees_at_depth_two(repo: Path):
    callers = service.find_references("helper", repo, direction="callers", depth=2).text
    assert callers.splitlines() == [
        "callers of helper (function, py/app/util.py:1-2), depth 2: 6 definitions in 2 files",
        "1. py/app/main.py:6 go (function)",
        "   <- py/app/main.py:7: return assist(1)",
        "1. py/app/main.py:10 go2 (function)",
        "   <- py/app/main.py:11: return util.helper(2)",
        "1. py/app/util.py:9 Base.step (method)",
        "   <- py/app/util.py:10: return helper(0)",
        "2. py/app/main.py:23 outer (function)",
        "   <- py/app/main.py:24: return go()",
        "2. py/app/main.py:28 Child.more (method)",
        "   <- py/app/main.py:29: return self.step()",
        "2. py/app/util.py:6 Base.run (method)",
        "   <- py/app/util.py:7: return self.step()",
    ]
    callees = service.find_references("outer", repo, direction="callees", depth=2).text
    assert callees.splitlines() == [
        "callees of outer (function, py/app/main.py:23-24), depth 2: 2 definitions in 2 files",
        "1. py/app/main.py:6 go (function)",
        "   -> py/app/main.py:24: return go()",
        "2. py/app/util.py:1 helper (function)",
        "   -> py/app/main.py:7: return assist(1)",
    ]


def test_impact_of_lines_lists_what_reaches_them_and_the_tests_apart(repo: Path, write_tree):
    write_tree(
        repo, {"py/tests/test_main.py": "from app.main import go\n\n\ndef test_go():\n    assert go() == 1\n"}
    )
    build_index(repo)
    text = service.impact("py/app/util.py:1-2", repo).text
    assert text.splitlines()[0] == (
        "impact of py/app/util.py (helper), depth 2: 7 definitions in 2 files, 1 test file"
    )
    assert "1. py/app/main.py:6 go (function) <- call at line 7" in text
    assert "2. py/app/main.py:23 outer (function) <- call at line 24" in text
    assert text.splitlines()[-3:] == [
        "tests (run them with run_tests):",
        "py/tests/test_main.py: (module), test_go",
        '  run_tests runner=pytest args=["py/tests/test_main.py"]',
    ]


def test_impact_ranks_what_more_uses_reach_first_at_each_depth(repo: Path, write_tree):
    write_tree(
        repo,
        {
            "py/app/twice.py": (
                "from app.util import helper\n\n\ndef both():\n"
                "    one = helper(1)\n    return one + helper(2)\n"
            )
        },
    )
    build_index(repo)
    lines = service.impact("helper", repo, depth=1).text.splitlines()
    assert lines == [
        "impact of py/app/util.py (helper), depth 1: 6 definitions in 3 files, 0 test files",
        "1. py/app/twice.py:4 both (function) <- call at line 5 (2 uses)",
        "1. py/app/main.py (module) <- import at line 1",
        "1. py/app/main.py:6 go (function) <- call at line 7",
        "1. py/app/main.py:10 go2 (function) <- call at line 11",
        "1. py/app/twice.py (module) <- import at line 1",
        "1. py/app/util.py:9 Base.step (method) <- call at line 10",
    ]


def test_impact_s_last_line_counts_the_definitions_and_test_files_it_leaves_out(repo: Path, write_tree):
    """It said "... 6 more entries did not fit" for 4 definitions and 1 test file,
    the tests' heading counted among them."""
    users = "".join(f"\n\ndef user_{i}():\n    return helper({i})\n" for i in range(8))
    write_tree(
        repo,
        {
            "py/app/users.py": f"from app.util import helper\n{users}",
            "py/tests/test_users.py": (
                "from app.util import helper\n\n\ndef test_it():\n    assert helper(1)\n"
            ),
        },
    )
    build_index(repo)
    text = service.impact("helper", repo, depth=1, max_chars=700).text
    lines = text.splitlines()
    assert lines[0] == "impact of py/app/util.py (helper), depth 1: 13 definitions in 3 files, 1 test file"
    shown = [line for line in lines if line.startswith("1. ")]
    left = 13 - len(shown)
    assert 0 < left < 13 and len(text) <= 700
    assert lines[-1].startswith(f"... {left} more definitions did not fit: "), text
    # the tests a change reaches keep their room: what to run next
    assert (
        "py/tests/test_users.py: (module), test_it" in lines
        and 'run_tests runner=pytest args=["py/tests/test_users.py"]' in text
    )
    assert lines[-4] == "tests (run them with run_tests):"


TOP_LEVEL = {
    "py/app/registry.py": "from app.util import helper\n\nhelper(0)\n",  # runs helper when imported
    "py/app/boot.py": "from app import registry\n",
    "py/app/cli.py": "from app import main\n\n\ndef run():\n    return main.go()\n",
}


def test_impact_of_lines_at_a_module_top_level_reaches_its_importers(repo: Path, write_tree):
    write_tree(repo, TOP_LEVEL)
    build_index(repo)
    assert service.impact("py/app/main.py:1-3", repo).text.splitlines() == [
        "impact of py/app/main.py (top level), depth 2: 1 definition in 1 file, 0 test files",
        "1. py/app/cli.py (module) <- import at line 1",
    ]
    whole = service.impact("py/app/main.py", repo, depth=1).text.splitlines()
    assert whole[0].startswith("impact of py/app/main.py (top level, go, go2 and 5 more), depth 1")
    assert "1. py/app/cli.py:4 run (function) <- call at line 5" in whole
    assert service.impact("py/app/main.py:4", repo).text == (
        "No definition or top-level use at py/app/main.py:4."
    )


def test_impact_of_a_cpp_header_reaches_the_files_including_it(tmp_path: Path, write_tree):
    """#include was read as nothing: impact of a header reached no file including it. The
    prototype it declares is a definition too, whose callers it reaches."""
    header = "#pragma once\n#include <string>\n\nint helper(int x);\n"
    files = {
        "src/util.h": header,
        "src/util.cpp": '#include "util.h"\n\nint helper(int x) { return x; }\n',
        "src/app.cpp": '#include <vector>\n#include "util.h"\n\nint run() { return helper(1); }\n',
        "src/other.cpp": '#include "../src/util.h"\n',  # (against its folder)
    }
    root = indexed(tmp_path / "cpp", files, write_tree)
    assert service.impact("src/util.h", root, depth=1).text.splitlines()[1:] == [
        "1. src/app.cpp (module) <- import at line 2",
        "1. src/app.cpp:4 run (function) <- call at line 4",
        "1. src/other.cpp (module) <- import at line 1",
        "1. src/util.cpp (module) <- import at line 1",
    ]


def test_a_use_at_a_module_top_level_carries_impact_on_to_its_importers(repo: Path, write_tree):
    write_tree(repo, TOP_LEVEL)
    build_index(repo)
    text = service.impact("helper", repo).text
    assert "1. py/app/registry.py (module) <- import at line 1 (2 uses)" in text
    assert "2. py/app/boot.py (module) <- import at line 1" in text
    # an import alone changes nothing at the importer's top level: cli.py imports main, not helper
    assert "py/app/cli.py (module)" not in text


def test_impact_is_a_tool_of_its_own_and_find_references_points_to_it(repo: Path):
    import asyncio

    from mcp import Client

    from repolens.server.tools import build_server

    async def session() -> list:
        async with Client(build_server({"app": repo})) as client:
            return [
                await client.call_tool("impact", {"target": "py/app/util.py:1-2", "depth": 1}),
                await client.call_tool("find_references", {"target": "helper", "direction": "impact"}),
            ]

    impact, refs = asyncio.run(session())
    assert not impact.is_error
    assert impact.content[0].text == service.impact("py/app/util.py:1-2", repo, depth=1).text
    assert refs.is_error
    assert refs.content[0].text == (
        "direction must be callers or callees, not 'impact' (leave it out for every use); "
        "what a change reaches is the impact tool"  # a tool, not the command (repolens impact)
    )


def test_an_edited_file_has_its_references_refreshed(repo: Path, write_tree):
    write_tree(repo, {"py/app/main.py": FILES["py/app/main.py"].replace("return go()", "return go2()")})
    build_index(repo)
    text = service.find_references("go2", repo).text
    assert "outer 24: return go2()" in text
    assert "outer" not in service.find_references("py/app/main.py:6", repo).text


def test_a_question_asked_again_and_again_answers_the_same_until_its_files_change(repo: Path, write_tree):
    """The files a question reads are kept as read (decompressed, then after many reads as
    their uses by name): asked many times, each answer is the first, until a file changes."""
    questions = ["helper", "Base.step", "ts/src/math.ts:1", "Counter.step", "go/calc/calc.go:3", "go2"]
    first = {q: service.find_references(q, repo).text for q in questions}
    for _ in range(20):
        assert {q: service.find_references(q, repo).text for q in questions} == first
    write_tree(repo, {"py/app/main.py": FILES["py/app/main.py"].replace("return go()", "return go2()")})
    build_index(repo)
    assert "outer 24: return go2()" in service.find_references("go2", repo).text
    assert "outer 24: return go2()" not in first["go2"]


def test_a_reply_keeps_to_its_budget_and_names_what_did_not_fit(repo: Path):
    text = service.find_references("helper", repo, max_chars=200).text
    assert len(text) <= 200
    assert "did not fit" in text


def test_bad_arguments_say_what_to_pass(repo: Path):
    with pytest.raises(UsageError, match="depth must be between 1 and 3"):
        service.find_references("helper", repo, direction="callers", depth=4)
    with pytest.raises(UsageError, match="direction must be callers or callees"):
        service.find_references("helper", repo, direction="up")
    with pytest.raises(PathError, match="no indexed file"):
        service.find_references("nope/missing.py:3", repo)
    # a file at the top (no folder in its path) is a file too, not a name to look up
    with pytest.raises(PathError, match=r"no indexed file is under 'missing\.py'"):
        service.find_references("missing.py:3", repo)
    with pytest.raises(PathError, match=r"no indexed file is under 'missing\.py'"):
        service.impact("missing.py:1-2", repo)
    with pytest.raises(PathError, match=r"no indexed file is under 'py/app/missing\.py'"):
        service.impact("py/app/missing.py", repo)  # impact takes a bare path


NO_SUCH_NAME = (
    "no definition matches 'no_such_name': find_symbol (repolens symbols) lists near names; "
    "pass one, or a place path:line, as {target}"
)


def test_a_name_no_definition_matches_is_an_error_in_every_front(repo: Path):
    """refs and impact of a name that matches no definition printed "No
    definition matches ..." and exited 0, and MCP did not set isError, where
    an unknown chunk id or repository is an error: now one line, exit 1 and
    isError, naming where near names are found (the tool alone over MCP,
    whose caller runs no command). A place no definition holds is still an
    answer."""
    import asyncio
    import subprocess
    import sys

    from mcp import Client

    from repolens.server.tools import build_server

    for navigate in (service.find_references, service.impact):
        with pytest.raises(NotFoundError) as caught:
            navigate("no_such_name", repo)
        assert str(caught.value) == NO_SUCH_NAME.format(target="target")
    for command in ("refs", "impact"):
        done = subprocess.run(
            [sys.executable, "-m", "repolens", command, "no_such_name", "--root", str(repo)],
            capture_output=True,
            text=True,
        )
        assert (done.returncode, done.stdout) == (1, ""), done.stderr
        assert done.stderr == f"error: {NO_SUCH_NAME.format(target='TARGET')}\n"

    async def session() -> list:
        async with Client(build_server({"app": repo})) as client:
            return [
                await client.call_tool("find_references", {"target": "no_such_name"}),
                await client.call_tool("impact", {"target": "no_such_name"}),
                await client.call_tool("find_references", {"target": "no_such_name", "repo": ["app", "app"]}),
            ]

    for result in asyncio.run(session()):
        over_mcp = NO_SUCH_NAME.replace("find_symbol (repolens symbols)", "find_symbol")
        assert result.is_error and result.content[0].text == over_mcp.format(target="`target`")
    assert service.find_references("py/app/util.py:3", repo).text == "No definition at py/app/util.py:3."


SHAPES = {
    "go.mod": "module example.com/shapes\n\ngo 1.21\n",
    "shapes.go": (
        "package shapes\n"
        "\n"
        "type Shape interface {\n"  # 3
        "\tArea() float64\n"
        "}\n"
        "\n"
        "type Rect struct{ W, H float64 }\n"  # 7
        "\n"
        "func (r Rect) Area() float64 { return r.W * r.H }\n"  # 9
        "\n"
        "type Circle struct{ R float64 }\n"  # 11
        "\n"
        "func (c *Circle) Area() float64 { return c.R * c.R }\n"  # 13
        "\n"
        "func Total(s Shape) float64 { return s.Area() + Rect{1, 2}.Area() }\n"  # 15
    ),
    "store.py": "class SessionStore:\n    def save(self):\n        return 1\n",
}


def test_a_qualified_name_means_a_definition_of_that_class_or_none_naming_the_near_ones(
    tmp_path: Path, write_tree, store_url
):
    """``Shape.Area`` answered for ``Rect.Area`` (the lookup takes a qualifier part
    that starts a longer one: ``shapes`` of shapes.go), and ``Store.save`` for
    ``SessionStore.save``; a Go interface's method is no definition of its own."""
    root = indexed(tmp_path / "shapes", SHAPES, write_tree)
    for target, near in (
        ("Shape.Area", "Rect.Area (method, shapes.go:9) or (*Circle).Area (method, shapes.go:13)"),
        ("Store.save", "SessionStore.save (method, store.py:2)"),
    ):
        for navigate in (service.find_references, service.impact):
            with pytest.raises(NotFoundError) as caught:
                navigate(target, root)
            assert str(caught.value) == f"no definition matches {target!r}; did you mean {near}?"
    assert service.find_references("Circle.Area", root).text.startswith(
        "(*Circle).Area (method, shapes.go:13-13)"
    )
    rect = service.find_references("Rect.Area", root, direction="callers").text
    assert rect.startswith("callers of Rect.Area (method, shapes.go:9-9)")
    assert service.find_references("shapes.Total", root).text.startswith("Total (function, shapes.go:15-15)")


def test_several_repositories_answer_in_one_reply_each_path_named(repo: Path, tmp_path: Path, write_tree):
    from repolens.search.fanout import Target

    other = tmp_path / "other"
    write_tree(other, {"lib.py": "def helper(x):\n    return x\n\n\ndef user():\n    return helper(1)\n"})
    build_index(other)
    reply = service.find_references_across(
        "helper", [Target("app", repo), Target("lib", other)], max_chars=4000
    )
    assert "app:py/app/main.py" in reply.text and "lib:lib.py" in reply.text
    assert "  user 6: return helper(1)" in reply.text
    assert len(reply.text) <= 4000


def test_a_definition_no_one_uses_is_an_answer_in_every_repository_asked(
    repo: Path, tmp_path: Path, write_tree
):
    """A repository whose definition has no use answers "0 references" (and
    its impact "nothing reaches it"), not "No definition matches", beside
    the repositories that do not define the name."""
    from repolens.search.fanout import Target

    other = tmp_path / "other"
    write_tree(other, {"tax.py": "def tax(x):\n    return x\n"})
    build_index(other)
    targets = [Target("app", repo), Target("lib", other)]
    refs = service.find_references_across("tax", targets, max_chars=4000)
    assert "lib:tax.py:1-2" in refs.text and "0 references" in refs.text
    assert "No definition matches" not in refs.text
    assert refs.found == 0 and refs.matched
    impact = service.find_references_across("tax", targets, impact_of=True, max_chars=4000)
    assert "impact of lib:tax.py" in impact.text
    with pytest.raises(NotFoundError, match=r"^no definition matches 'no_such_name': "):
        service.find_references_across("no_such_name", targets, max_chars=4000)
    # a repository with no index answers nothing: said as such, not as a name that matches nothing
    bare = tmp_path / "bare"
    bare.mkdir()
    with pytest.raises(NotFoundError, match=r"^no definition matches 'no_such_name'; bare did not answer: "):
        service.find_references_across("no_such_name", [*targets, Target("bare", bare)], max_chars=4000)
    with pytest.raises(NotFoundError, match=r"^no repository could answer: bare did not answer: "):
        service.find_references_across("tax", [Target("bare", bare)], max_chars=4000)


def test_impact_in_several_repositories_names_the_run_tests_call_of_each_test(
    repo: Path, tmp_path: Path, write_tree, monkeypatch
):
    """Over several repositories every path is labelled (``lib:test_tax.py``),
    but run_tests takes a repository and a path inside it: the call a test
    file shows names both, and runs as written."""
    import json
    import re
    import sys

    from repolens import testrun
    from repolens.search.fanout import Target

    monkeypatch.setenv("REPOLENS_TEST_PYTHON", sys.executable)
    other = tmp_path / "other"
    write_tree(
        other,
        {
            "tax.py": "def tax(x):\n    return x\n",
            "test_tax.py": "from tax import tax\n\n\ndef test_tax():\n    assert tax(1) == 1\n",
        },
    )
    build_index(other)
    roots = {"app": repo, "lib": other}
    text = service.find_references_across(
        "tax", [Target(key, root) for key, root in roots.items()], impact_of=True, max_chars=4000
    ).text
    assert "lib:test_tax.py: (module), test_tax" in text
    call = re.search(r"^  run_tests runner=(\S+) args=(\[.*\]) repo=(\S+)$", text, re.M)
    assert call, text
    runner, args, key = call.group(1), json.loads(call.group(2)), call.group(3)
    assert (runner, args, key) == ("pytest", ["test_tax.py"], "lib")
    assert testrun.run_tests(roots[key], runner, args).exit_code == 0


def test_a_line_naming_the_definition_twice_is_one_use(tmp_path: Path, write_tree):
    write_tree(
        tmp_path,
        {
            "Main.java": (
                "class Main {\n"
                "    static int f(int a) { return a; }\n"
                "    public static void main(String[] args) {\n"
                "        Main m = new Main();\n"  # 4: the type and the constructor
                "        f(f(1));\n"  # 5: two calls
                "    }\n"
                "}\n"
            ),
        },
    )
    build_index(tmp_path)
    main = service.find_references("Main", tmp_path).text
    assert uses(main) == ["Main.java", "Main.main 4: Main m = new Main();"]
    assert "1 reference in 1 file" in main
    assert uses(service.find_references("Main.f", tmp_path).text) == ["Main.java", "Main.main 5: f(f(1));"]


def test_a_cpp_use_resolves_to_the_definition_of_a_header_the_file_includes(tmp_path: Path, write_tree):
    """``make_widget(x)``, ``w.draw()`` and ``Widget::create()`` in a file including
    "widget.h" were name matches; they are uses of widget.cpp's definitions (a header and its
    source file share a key), not of another file's function of the same name."""
    files = {
        "src/widget.h": "#pragma once\nclass Widget {\npublic:\n  void draw();\n"
        "  static Widget create();\n};\nWidget make_widget(int x);\n",
        "src/widget.cpp": '#include "widget.h"\n\nvoid Widget::draw() {}\n\n'
        "Widget Widget::create() { return Widget(); }\n\nWidget make_widget(int x) { return Widget(); }\n",
        "src/main.cpp": '#include "widget.h"\n\nint run(int x) {\n  make_widget(x);\n'
        "  Widget w;\n  w.draw();\n  Widget* p = new Widget();\n  p->draw();\n  Widget::create();\n"
        "  return 0;\n}\n",
        "src/other.cpp": "void draw() {}\nvoid make_widget(int x) {}\n",
    }
    root = indexed(tmp_path / "cpp", files, write_tree)
    assert uses(service.find_references("src/widget.cpp:7", root).text) == [
        "src/main.cpp",
        "run 4: make_widget(x);",
    ]
    other = service.find_references("src/other.cpp:2", root).text
    assert uses(other) == [] and "run 4: make_widget(x);" in matched(other)
    assert uses(service.find_references("Widget.draw", root).text) == [
        "src/main.cpp",
        "run 6: w.draw();",
        "run 8: p->draw();",
    ]
    assert uses(service.find_references("Widget.create", root).text) == [
        "src/main.cpp",
        "run 9: Widget::create();",
    ]


# A class declared in a header, its members defined in source files of other names.
CPP_APART = {
    "include/widget.hpp": "#pragma once\n"
    "class Sender {\npublic:\n  void send(int a);\n  void send(int a, int b);\n};\n"  # 4, 5
    "class Widget {\npublic:\n  void draw();\n  void helper();\n  void run();\n  Sender m;\n};\n"  # 9-12
    "Widget make_widget(int a,\n                   int b);\n",
    "src/sender.cpp": '#include "widget.hpp"\n\nvoid Sender::send(int a) {}\n\n'
    "void Sender::send(int a, int b) {}\n",
    "src/widget.cpp": '#include "widget.hpp"\n\nvoid Widget::draw() {\n  helper();\n}\n\n'
    "void Widget::helper() {}\nWidget make_widget(int a, int b) { return Widget(); }\n",
    "src/main.cpp": '#include "widget.hpp"\n\nint main() {\n  Sender s;\n  s.send(1, 2);\n'
    "  Sender* p = new Sender();\n  p->send(3);\n  Widget w;\n  w.draw();\n  return 0;\n}\n",
}


def test_a_cpp_member_defined_out_of_its_class_is_listed_first_and_one_with_its_declaration(
    tmp_path: Path, write_tree
):
    """``void Sender::send(int a) {}`` in sender.cpp was a function, listed after its
    declaration in widget.hpp, and had none of the declaration's uses (the files share no key):
    ``refs Sender.send`` read the declaration, and the definition had 0 references. The
    definition is a method, listed first; a declaration and its definitions in the files
    including its header are one, and each overload has the calls passing its count."""
    root = indexed(tmp_path / "cpp", CPP_APART, write_tree)
    listed = service.find_symbol("Widget.draw", root).text
    assert listed.index("src/widget.cpp:3-5 method") < listed.index("include/widget.hpp:9")
    made = service.find_symbol("make_widget", root).text  # a declaration over two lines
    assert made.index("src/widget.cpp:8") < made.index("include/widget.hpp:14")
    # a class is no declaration without its body: listed before its constructor, as its shorter name
    ctor = {"src/ctor.cpp": '#include "widget.hpp"\n\nWidget::Widget(int size) {}\n'}
    root = indexed(tmp_path / "ctor", {**CPP_APART, **ctor}, write_tree)
    named = service.find_symbol("Widget", root).text
    assert named.index("include/widget.hpp:7-") < named.index("src/ctor.cpp:3")
    assert "src/sender.cpp:3" in service.find_references("Sender.send", root).text.splitlines()[0]
    for one, two in (
        ("src/sender.cpp:3", "src/sender.cpp:5"),
        ("include/widget.hpp:4", "include/widget.hpp:5"),
    ):
        assert uses(service.find_references(one, root).text) == ["src/main.cpp", "main 7: p->send(3);"]
        assert uses(service.find_references(two, root).text) == ["src/main.cpp", "main 5: s.send(1, 2);"]
    helper = ["src/widget.cpp", "Widget::draw 4: helper();"]
    assert (
        uses(service.find_references("include/widget.hpp:10", root).text) == helper
    )  # widget.cpp's =Widget.helper
    assert uses(service.find_references("Widget.helper", root).text) == helper


def test_a_cpp_member_used_bare_in_a_method_defined_apart_is_its_class_s(tmp_path: Path, write_tree):
    """``m.send(1)`` and ``this->m.send(1, 2)`` in ``void Widget::run() {...}``, a file other
    than the header declaring ``Widget`` (and its field ``Sender m;``), were name matches: the
    file does not know ``m``'s type. They are ``Widget``'s ``m``'s, which the header types, and
    so each overload of ``Sender::send`` has its own."""
    run = (
        '#include "widget.hpp"\n\nvoid Widget::run() {\n  m.send(1);\n  this->m.send(1, 2);\n  helper();\n}\n'
    )
    root = indexed(tmp_path / "cpp", {**CPP_APART, "src/run.cpp": run}, write_tree)
    one, two = (
        uses(service.find_references(t, root).text) for t in ("src/sender.cpp:3", "include/widget.hpp:5")
    )
    assert one == ["src/main.cpp", "main 7: p->send(3);", "src/run.cpp", "Widget::run 4: m.send(1);"]
    assert two == [
        "src/main.cpp",
        "main 5: s.send(1, 2);",
        "src/run.cpp",
        "Widget::run 5: this->m.send(1, 2);",
    ]
    helper = uses(service.find_references("Widget.helper", root).text)
    assert helper == [
        "src/run.cpp",
        "Widget::run 6: helper();",
        "src/widget.cpp",
        "Widget::draw 4: helper();",
    ]


def test_a_cpp_method_declared_in_its_class_is_found_and_has_the_uses_of_its_definition(
    tmp_path: Path, write_tree
):
    """A method declared in its class's body (``void draw();``) and a header's prototype were
    no symbols: ``Widget.draw`` found only a source file's definition, and a header-only
    API nothing. The declaration and the definition now share a name, each listed, and the
    uses of either are the same; ``m.draw()`` through a member ``Widget m;`` is one."""
    files = {
        "include/widget.hpp": "#pragma once\nclass Widget {\npublic:\n  void draw();\n"
        "  int size() const;\n};\nWidget make_widget(int x);\n",
        "src/widget.cpp": '#include "widget.hpp"\n\nvoid Widget::draw() {}\n',
        "src/main.cpp": '#include "widget.hpp"\n\nclass Game {\n  Widget m;\n  void run() {\n'
        "    m.draw();\n    m.size();\n    make_widget(1);\n  }\n};\n",
    }
    root = indexed(tmp_path / "cpp", files, write_tree)
    listed = service.find_symbol("Widget.draw", root).text
    assert "include/widget.hpp:4" in listed and "src/widget.cpp:3" in listed
    assert "include/widget.hpp:5" in service.find_symbol("Widget.size", root).text
    for target in ("include/widget.hpp:4", "src/widget.cpp:3"):
        assert uses(service.find_references(target, root).text) == ["src/main.cpp", "Game::run 6: m.draw();"]
    size = service.find_references("Widget.size", root).text  # declared only: a header-only API
    assert uses(size) == ["src/main.cpp", "Game::run 7: m.size();"]
    assert uses(service.find_references("make_widget", root).text) == [
        "src/main.cpp",
        "Game::run 8: make_widget(1);",
    ]
