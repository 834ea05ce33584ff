"""A method's other declarations: the same member defined again, implemented or overridden.

A method defined again in its class is the same member (TypeScript's
overloads, Python's property setter or ``typing.overload``), and in
TypeScript so is the member of a base class or interface it implements or
overrides, and the member of a class extending or implementing its class:
the language service counts each declaration as a reference, so
:mod:`repolens.search.references` lists them among a method's uses (kind
``declaration``, in the declaring method).
"""

from __future__ import annotations

import re

from repolens.chunking.refs import same_file_key
from repolens.search.ref_keys import Meaning, aliased, defined, keys_of, spells, symbols_in
from repolens.store.base import IndexReader, RefRow, SymbolRow

# Methods a call of their class runs.
CONSTRUCTORS = frozenset({"__init__", "constructor", "new"})

# Languages where a method defined again in its class is the same member
# (TypeScript's overloads, Python's property setter or typing.overload).
REDEFINING_LANGUAGES = frozenset({"python", "typescript", "tsx"})
# Languages whose methods' declarations they implement or override are one
# member too (TypeScript's language service counts each as a reference).
DECLARING_LANGUAGES = frozenset({"typescript", "tsx"})


def declarations(reader: IndexReader, method: SymbolRow, *, related: bool) -> list[RefRow]:
    """The other declarations of ``method``'s member, as resolved uses of it
    (kind ``declaration``, in the declaring method): its other definitions
    in its class (overloads, a property's setter); with ``related``, the
    member of a base class or interface of its class (its bases as the
    class's file names them), and the member in the classes extending or
    implementing its class or those bases (one round). A few reads: the
    class's file, the bases' names, their subclasses' files."""
    name = method.name
    if name in CONSTRUCTORS:  # a constructor is its class's own, never another's member
        return []
    key = same_file_key(method.qualname)
    texts: dict[str, dict[int, str]] = {}

    def row(s: SymbolRow) -> RefRow:
        line = _name_line(reader, s, texts)
        return RefRow(s.path, s.language, name, line, "declaration", s.qualname, key, "")

    out = [row(s) for s in symbols_in(reader, method.path) if s.qualname == method.qualname and s != method]
    if not related:
        return out
    roots = Meaning(reader=reader)
    for cls in defined(reader, method.parent, method.path):
        roots.add(cls.path, cls.qualname, cls.language)
    for base in reader.refs_of_files([method.path]).get(method.path, []):
        if base.kind != "base" or base.scope != method.parent or not base.target:
            continue
        for cls in _declared(reader, base):
            roots.add(cls.path, cls.qualname, cls.language)
            member = f"{cls.qualname}.{name}"
            out += [row(s) for s in symbols_in(reader, cls.path) if s.qualname == member]
    seen = {(method.path, method.parent)}
    for use in aliased(reader, roots):
        if use.kind == "base" and use.scope and (use.path, use.scope) not in seen and roots.means(use):
            seen.add((use.path, use.scope))
            member = f"{use.scope}.{name}"
            out += [row(s) for s in symbols_in(reader, use.path) if s.qualname == member and s != method]
    return out


_COMMENT_OR_DECORATOR = ("/*", "*", "//", "@", "#")


def _name_line(reader: IndexReader, s: SymbolRow, texts: dict[str, dict[int, str]]) -> int:
    """The line of ``s`` where its name stands, its doc comment and
    decorators passed (a definition starts at them); ``texts`` holds the
    lines of the files read so far (from the index's chunks)."""
    lines = texts.get(s.path)
    if lines is None:
        lines = texts[s.path] = {}
        for stored in reader.chunks_of_file(s.path):
            c = stored.chunk
            for i, t in enumerate(c.text.split("\n")):
                lines.setdefault(c.start_line + i, t)
    word = re.compile(rf"(?<![\w$]){re.escape(s.name)}(?![\w$])")
    for n in range(s.start_line, s.end_line + 1):
        text = lines.get(n, "").lstrip()
        if not text.startswith(_COMMENT_OR_DECORATOR) and word.search(text):
            return n
    return s.start_line


def _declared(reader: IndexReader, use: RefRow) -> list[SymbolRow]:
    """The classes a base use names, by its key alone (no re-export followed)."""
    from repolens.store.base import NameMatch, SymbolFilters, normalize_symbol

    t = use.target
    found = reader.symbols(NameMatch(names=(normalize_symbol(use.name),)), SymbolFilters(), 100)
    found = [s for s in found if s.name == use.name and s.kind not in ("function", "method")]
    if t.startswith("="):
        return [s for s in found if s.path == use.path and same_file_key(s.qualname) == t]
    return [s for s in found if spells(t, keys_of(reader, s.path, s.qualname, s.language))]
