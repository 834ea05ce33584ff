"""Imports flow one way, between modules and between packages, and no module
is named like a standard-library module.

The module graph of ``src/repolens`` is read from the source with ``ast``
(nothing is imported). Module A imports module B when A's text holds an
``import`` or ``from ... import`` statement naming B, wherever it stands:

* at module level, inside a function (a lazy import, put off so that a
  command loads less, still ties A to B), or under ``if TYPE_CHECKING:``
  (a type A names from B is a dependency of A's text all the same);
* relative imports are resolved against A's package; ``from P import x`` is
  an import of ``P.x`` when that is a module, else of ``P``;
* importing ``a.b.c`` runs ``a/__init__.py`` and ``a/b/__init__.py`` first,
  so it counts as an import of each package holding ``a.b.c`` too, except
  the packages that hold A itself (they are already running when A runs).

A circle is two modules reaching each other along those imports; each is
printed with the line of every import along it. A module (or package) whose
own name is a standard-library module's, by ``sys.stdlib_module_names`` and
the modules Python 3.13 removed (this project supports 3.11, which has
them), is refused too: a ``json.py`` is the standard library's ``json`` to
whatever runs with its folder on ``sys.path``, and to a reader's eye.

Between packages the same imports must run down :data:`PACKAGE_ORDER` (the
pipeline of STYLE.md, the base modules below it, the use cases and
adapters above); the test prints that order, and each import running back
up (the file, line and module it names). A store's backends are named only
inside ``store/``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

SRC = Path(__file__).resolve().parents[1] / "src"

# PEP 594: deprecated in 3.11, removed in 3.13 (and so missing from that
# interpreter's sys.stdlib_module_names).
REMOVED_IN_313 = frozenset(
    {"aifc", "audioop", "cgi", "cgitb", "chunk", "crypt", "imghdr", "lib2to3", "mailcap", "msilib", "nis"}
    | {"nntplib", "ossaudiodev", "pipes", "sndhdr", "spwd", "sunau", "telnetlib", "uu", "xdrlib"}
)
STDLIB_NAMES = frozenset(sys.stdlib_module_names) | REMOVED_IN_313


class Import(NamedTuple):
    """One module reaching another: ``named`` is what the statement at
    ``path:line`` names (``target`` itself, or a module inside it)."""

    target: str
    path: Path
    line: int
    named: str


def module_files(src: Path) -> dict[str, Path]:
    """Every module under ``src``, by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _named(
    node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, modules: dict[str, Path]
) -> Iterator[str]:
    """The modules of ``modules`` that one import statement names."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in modules)
        return
    if node.level:
        package = importer.split(".") if is_package else importer.split(".")[:-1]
        base = package[: len(package) - node.level + 1]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    submodules = [f"{source}.{alias.name}" for alias in node.names]
    yield from (name for name in submodules if name in modules)
    if source in modules and not all(name in modules for name in submodules):
        yield source


def import_graph(src: Path) -> dict[str, dict[str, Import]]:
    """For each module, the modules it imports (see the module docstring),
    each with the first statement that does."""
    modules = module_files(src)
    graph: dict[str, dict[str, Import]] = {}
    for name, path in modules.items():
        edges: dict[str, Import] = {}
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        statements = (n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom))
        for node in sorted(statements, key=lambda n: n.lineno):
            for target in _named(node, name, path.name == "__init__.py", modules):
                parts = target.split(".")
                holders = (".".join(parts[:i]) for i in range(1, len(parts)))
                running = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
                for reached in [*(h for h in holders if h in modules and h not in running), target]:
                    if reached != name:
                        edges.setdefault(reached, Import(reached, path, node.lineno, target))
        graph[name] = edges
    return graph


def circles(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def shortest_circle(graph: dict[str, dict[str, Import]], group: list[str]) -> list[Import]:
    """One shortest way from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    came: dict[str, tuple[str, Import] | None] = {start: None}
    queue = [start]
    for v in queue:
        for w, edge in sorted(graph[v].items()):
            if w == start:
                way = [edge]
                while (step := came[v]) is not None:
                    v, before = step
                    way.append(before)
                return way[::-1]
            if w in members and w not in came:
                came[w] = (v, edge)
                queue.append(w)
    raise AssertionError(f"no circle through {start}")


def describe(graph: dict[str, dict[str, Import]], group: list[str], base: Path) -> str:
    """The group, and one way round it: each import's file and line."""
    lines = [f"circle of {len(group)} modules: {', '.join(group)}; one way round:"]
    for edge in shortest_circle(graph, group):
        runs = f" (importing {edge.named} runs it)" if edge.named != edge.target else ""
        lines.append(f"    {edge.path.relative_to(base)}:{edge.line} imports {edge.target}{runs}")
    return "\n".join(lines)


def test_no_module_imports_itself_back_around_a_circle() -> None:
    graph = import_graph(SRC)
    assert len(graph) > 100 and sum(map(len, graph.values())) > 300  # the whole tree was read
    found = [describe(graph, group, SRC.parent) for group in circles(graph)]
    assert not found, "import circles in src/repolens:\n" + "\n".join(found)


def test_no_module_is_named_like_a_standard_library_module() -> None:
    named = sorted(name for name in module_files(SRC) if name.rpartition(".")[2] in STDLIB_NAMES)
    assert named == [], f"modules named like a standard-library module (rename them): {', '.join(named)}"


def test_the_graph_counts_every_kind_of_import(tmp_path: Path) -> None:
    """The rules of the module docstring, on a package made here: a lazy
    import, one for type checking only, a relative one and a package's
    ``__init__`` each close a circle; a sibling import inside one package
    does not count its package."""
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f():\n    from pkg import b\n",
        "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n",
        "pkg/sub/__init__.py": "from pkg.sub.leaf import X\n",
        "pkg/sub/leaf.py": "from pkg.sub import Y\nfrom . import other\n",
        "pkg/sub/other.py": "import pkg.sub.leaf\n",
        "pkg/c.py": "from pkg.sub.other import Z\n",
        "pkg/d.py": "from pkg import c\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path)
    assert {k: sorted(v) for k, v in graph.items()} == {
        "pkg": [],
        "pkg.a": ["pkg.b"],
        "pkg.b": ["pkg.a"],
        "pkg.c": ["pkg.sub", "pkg.sub.other"],
        "pkg.d": ["pkg.c"],
        "pkg.sub": ["pkg.sub.leaf"],
        "pkg.sub.leaf": ["pkg.sub", "pkg.sub.other"],
        "pkg.sub.other": ["pkg.sub.leaf"],
    }
    assert circles(graph) == [["pkg.a", "pkg.b"], ["pkg.sub", "pkg.sub.leaf", "pkg.sub.other"]]
    assert describe(graph, ["pkg.sub", "pkg.sub.leaf", "pkg.sub.other"], tmp_path).splitlines() == [
        "circle of 3 modules: pkg.sub, pkg.sub.leaf, pkg.sub.other; one way round:",
        "    pkg/sub/__init__.py:1 imports pkg.sub.leaf",
        "    pkg/sub/leaf.py:1 imports pkg.sub",
    ]


# -- the order of the packages ------------------------------------------------------

# The packages of src/repolens (a top-level module counts as a package of its
# own; ``repolens`` is the package's own __init__), bottom first: the pipeline
# of STYLE.md (discover -> chunking -> index -> store <- search -> reply) as
# an import order, the base modules below it, the use cases and the adapters
# above. A package imports itself and the packages on lines below its own,
# never one on its own line or above (``index`` and ``search`` are siblings:
# the read path never imports the write path, nor the other way round).
PACKAGE_ORDER: tuple[tuple[str, ...], ...] = (
    ("fronts",),  # what a reply tells its caller to run, in the words of the caller's front
    # what every stage words with
    ("repolens", "errors", "hashing", "record", "roles", "tokens", "lines", "budget"),
    ("chunking",),  # a file's text into chunks: the languages and kinds validate checks against
    ("validate",),  # every argument check and bound
    ("settings",),  # defaults <- config file <- environment <- arguments
    ("discover", "models", "testrun"),  # which files; the embedders; allow-listed test runs
    ("store",),  # where an index lives: the Store interface and its backends
    ("history",),  # a branch's commits, into the store
    ("index", "search"),  # the write path; the read path (legs, fusion, across repositories)
    ("reply",),  # hits into text under a budget
    ("branches",),  # several repositories and branches: names, roots, compare, refresh --all
    ("service",),  # the use cases every adapter calls
    ("ops", "server"),  # adapters: status, doctor and set-up; the MCP server
    ("cli",),  # the command line (it starts the server: serve)
    ("__main__",),
)
# Where a store's data actually lives: only the store package itself imports these.
STORE_BACKENDS = ("repolens.store.local", "repolens.store.postgres")


def package_of(module: str) -> str:
    """``repolens.search.ranking`` -> ``search``; ``repolens`` -> ``repolens``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def back_arrows(
    graph: dict[str, dict[str, Import]], order: tuple[tuple[str, ...], ...]
) -> list[tuple[str, Import]]:
    """(importer, import) for every module's first import of each package on
    its own package's line of ``order`` or above it."""
    level = {package: n for n, line in enumerate(order) for package in line}
    found: dict[tuple[str, str], Import] = {}
    for module, edges in sorted(graph.items()):
        for target, edge in sorted(edges.items(), key=lambda item: item[1].line):
            mine, theirs = package_of(module), package_of(target)
            if mine != theirs and level[theirs] >= level[mine]:
                found.setdefault((module, theirs), edge)
    return [(module, edge) for (module, _), edge in found.items()]


def shown_order(order: tuple[tuple[str, ...], ...]) -> str:
    """The order as the test prints it, top first."""
    return "\n".join(f"  {' | '.join(line)}" for line in reversed(order))


def describe_arrow(edge: Import, importer: str, base: Path) -> str:
    return f"    {edge.path.relative_to(base)}:{edge.line}: {package_of(importer)} imports {edge.named}"


def test_packages_import_only_the_packages_below_them() -> None:
    graph = import_graph(SRC)
    placed = {package for line in PACKAGE_ORDER for package in line}
    assert sorted({package_of(m) for m in graph} - placed) == [], "place every package in PACKAGE_ORDER"
    allowed = (
        f"allowed package order (each line imports only the lines below it):\n{shown_order(PACKAGE_ORDER)}"
    )
    print(allowed)
    found = [describe_arrow(edge, module, SRC.parent) for module, edge in back_arrows(graph, PACKAGE_ORDER)]
    assert found == [], "\n".join(["imports running back up the package order:", *found, allowed])


def test_only_the_store_imports_a_store_backend() -> None:
    graph = import_graph(SRC)
    found = [
        describe_arrow(edge, module, SRC.parent)
        for module, edges in graph.items()
        if package_of(module) != "store"
        for target, edge in edges.items()
        if target.startswith(STORE_BACKENDS)
    ]
    why = "a store backend named outside store/ (put it behind repolens.store.base.Store):"
    assert found == [], "\n".join([why, *found])


def test_an_import_up_the_order_is_found(tmp_path: Path) -> None:
    """The check on a package made here: a lazy import of a package above,
    and one of a sibling on the same line, are arrows back up; an import of
    a package below, or inside one's own package, is not."""
    files = {
        "repolens/__init__.py": "",
        "repolens/low/__init__.py": "",
        "repolens/low/a.py": "from repolens.low import b\n",
        "repolens/low/b.py": "def f():\n    from repolens.high import c\n",
        "repolens/high/__init__.py": "",
        "repolens/high/c.py": "from repolens.low.a import X\nfrom repolens.side import d\n",
        "repolens/side/__init__.py": "",
        "repolens/side/d.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    order = (("repolens",), ("low",), ("high", "side"))
    arrows = back_arrows(import_graph(tmp_path), order)
    assert [describe_arrow(edge, module, tmp_path) for module, edge in arrows] == [
        "    repolens/high/c.py:2: high imports repolens.side.d",
        "    repolens/low/b.py:2: low imports repolens.high.c",
    ]
