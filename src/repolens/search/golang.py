"""Go's rules that need other files, for :mod:`repolens.search.references`.

* **Import paths**: a Go file imports a package by its module's path (the
  ``module`` line of the nearest ``go.mod`` above the package's folder)
  followed by the folder below that module's root: ``github.com/spf13/cobra``
  is the top folder of the repository whose ``go.mod`` says ``module
  github.com/spf13/cobra``. A file alone cannot say it (its path has no
  module in it, and the top folder has no folder name at all), so the index
  keys a package by its folders (:func:`repolens.chunking.refs.definition_keys`),
  and the key an importing file spells is added here, from the ``go.mod``
  files the index holds, when a question is asked.
* **Interfaces**: a type implements an interface by having its methods, which
  no declaration says; a method's type is checked against the interfaces
  declaring its name (their ``member`` rows) when a question is asked, so a
  call through one of them (``r.Use``, ``r`` a ``Router``) is a use.
* A method may be declared in another file than its type (any file of the
  package's folder).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from repolens.chunking.refs import split_key
from repolens.search.kept import INDEXES_HELD, lines_of, per_index, text_of
from repolens.store.base import IndexReader, NameMatch, RefRow, SymbolFilters, SymbolRow, normalize_symbol

_MODULE_LINE = re.compile(r"^module\s+\"?([^\s\"]+)", re.MULTILINE)


@per_index(INDEXES_HELD)
def module_roots(reader: IndexReader) -> dict[str, list[str]]:
    """The folder of each ``go.mod`` the index holds ("" the repository's
    top) -> its module path's parts; read once per index content."""
    roots = {}
    for path in reader.paths():
        if path == "go.mod" or path.endswith("/go.mod"):
            m = _MODULE_LINE.search(text_of(reader, path))
            if m:
                roots[path.removesuffix("go.mod").rstrip("/")] = split_key(m.group(1))
    return roots


def import_key(reader: IndexReader, path: str, qualname: str) -> str:
    """The key a file importing the package of ``path`` spells for its
    definition ``qualname`` (module path, folder below the module's root,
    name), "" when no ``go.mod`` holds ``path``."""
    roots = module_roots(reader)
    if not roots:
        return ""
    folder = PurePosixPath(path).parent.parts
    for i in range(len(folder), -1, -1):
        module = roots.get("/".join(folder[:i]))
        if module is not None:
            return ".".join([*module, *folder[i:], *split_key(qualname)])
    return ""


# Interfaces declaring a method's name whose method sets are checked for one question.
INTERFACES = 200


def types_named(reader: IndexReader, name: str, path: str) -> list[SymbolRow]:
    """The types called ``name`` in the package (the folder) of ``path``: a
    Go method may be declared in another file than its type."""
    folder = _folder(path)
    found = reader.symbols(
        NameMatch(names=(normalize_symbol(name),)), SymbolFilters(language="go", path=folder or None), 50
    )
    return [
        s
        for s in found
        if s.name == name and s.kind not in ("function", "method") and _folder(s.path) == folder
    ]


def implemented(reader: IndexReader, method: SymbolRow, rows: Iterable[RefRow]) -> list[tuple[str, str]]:
    """The interfaces (their file, qualified name) that declare ``method``'s
    name with as many parameters and results, and whose every declared
    method ``method``'s type has, in its package: Go's types implement an
    interface by having its methods, so a call through the interface may run
    this method. Among ``rows`` (the uses of its name read so far) are the
    interfaces' ``member`` rows; the other methods' signatures are not
    compared, nor are methods an interface embeds from another required
    (so a type may be counted that lacks one)."""
    name, owner = method.name, method.parent
    own = _shape(method.signature, name)
    declaring = sorted(
        {(r.path, r.scope[: -len(name) - 1], r.line) for r in rows if r.kind == "member" and r.name == name}
    )[:INTERFACES]
    if not declaring or not owner or own is None:
        return []
    paths = sorted({p for p, _, _ in declaring})
    members = reader.refs_of_files(paths)
    texts = {p: lines_of(reader, p) for p in paths}
    needs = {
        (p, i): {r.name for r in members.get(p, ()) if r.kind == "member" and r.scope == f"{i}.{r.name}"}
        for p, i, line in declaring
        if _shape(texts[p].get(line, ""), name) == own
    }
    folder = _folder(method.path)
    wanted = tuple(sorted({normalize_symbol(n) for need in needs.values() for n in need}))
    found = reader.symbols(
        NameMatch(names=wanted), SymbolFilters(language="go", kind="method", path=folder or None), None
    )
    has = {s.name for s in found if s.parent == owner and _folder(s.path) == folder}
    return [key for key, need in needs.items() if need and need <= has]


def _shape(text: str, name: str) -> tuple[int, int] | None:
    """How many parameters and results a method's signature (``func (r *T)
    Name(a, b int) error``) or an interface's method line (``Name(int)
    (int, error)``) has; None when it cannot be read."""
    at = re.search(rf"\b{re.escape(name)}\s*\(", text)
    if at is None:
        return None
    params, rest = _balanced(text, at.end() - 1)
    results = rest.split("//")[0].strip().rstrip("{").strip()
    if results.startswith("("):
        results = _balanced(results, 0)[0]
        return _count(params), _count(results)
    return _count(params), 1 if results else 0


def _balanced(text: str, start: int) -> tuple[str, str]:
    """The text inside the parentheses opening at ``start``, and what follows them."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start + 1 : i], text[i + 1 :]
    return text[start + 1 :], ""


def _count(listed: str) -> int:
    """The entries of a parameter or result list (``a, b int`` is two), commas inside brackets not counted."""
    if not listed.strip():
        return 0
    depth, n = 0, 1
    for ch in listed:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        n += ch == "," and depth == 0
    return n


def _folder(path: str) -> str:
    folder = str(PurePosixPath(path).parent)
    return "" if folder == "." else folder
