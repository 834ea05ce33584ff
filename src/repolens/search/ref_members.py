"""A method's other declarations, and in TypeScript the members it is one with.

A method defined again in its class is the same member (TypeScript's
overloads, Python's property setter or ``typing.overload``). In TypeScript
a method is also one member with those it implements or overrides, up its
class's bases, and with every member implementing or overriding those, down
from them (:func:`related`): the language service counts their
declarations and their uses as references of each (``this.router.add``
with ``router: Router<T>`` is a reference of ``SmartRouter.add``, and so is
``RegExpRouter.add``'s declaration), and :mod:`repolens.search.references`
lists them (a declaration as a use of kind ``declaration``, in the
declaring method).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from repolens.chunking.refs import same_file_key
from repolens.record import Record
from repolens.search.kept import lines_of, symbols_in
from repolens.search.reexports import through_reexport
from repolens.search.ref_keys import ALIAS_ROUNDS, Class, Meaning, Read, aliased, defined, keys_of, spells
from repolens.store.base import IndexReader, RefRow, SymbolRow

# Rounds of classes followed up from a method's class, then down from those declaring it.
CLASS_ROUNDS = 3
# Classes of one round whose subclasses are read.
FAN_OUT = 200

# Methods a call of their class runs.
CONSTRUCTORS = frozenset({"__init__", "constructor", "new"})

# Languages where a method defined again in its class is the same member
# (TypeScript's overloads, Python's property setter or typing.overload).
REDEFINING_LANGUAGES = frozenset({"python", "typescript", "tsx"})
# Languages whose methods' declarations they implement or override are one
# member too (TypeScript's language service counts each as a reference).
DECLARING_LANGUAGES = frozenset({"typescript", "tsx"})


class Related(Record):
    """A TypeScript method's member as the language service sees it (see :func:`related`)."""

    members: list[SymbolRow]  # the other methods that are the same member: their declarations
    classes: list[Class]  # the classes whose instances have it: declaring it, or inheriting it
    # Interfaces' properties of a function type that are the same member (``member`` rows:
    # ``cancel?: (reason: string) => void``, no method but in syntax): their declarations.
    properties: list[RefRow]


def related(reader: IndexReader, method: SymbolRow, read: Read | None = None) -> Related:
    """The members ``method`` is one with, as TypeScript's language service
    finds references: the members of the classes and interfaces above its
    class that it implements or overrides (their bases as each file names
    them, up to ``CLASS_ROUNDS``), and every member implementing or
    overriding one of those or ``method`` itself, in the classes below them
    (as many rounds): a call through any of them (``this.router.add`` with
    ``router: Router<T>``, a sibling ``RegExpRouter``'s ``add``) may run it.
    Not upwards again from below (a class implementing two interfaces does
    not join their members), as the service does not. The classes below
    that do not define the method inherit it: theirs too."""
    name = method.name
    own = [
        (c.path, c.qualname, c.language)
        for c in defined(reader, method.parent, method.path)
        if c.kind not in ("function", "method")
    ]
    tops = list(own)  # the classes declaring the member, from which the ones below are found
    members: list[SymbolRow] = []
    properties: list[RefRow] = []
    for c in classes_above(reader, own):
        declaring = members_named(reader, c, name)
        declared = [] if declaring else _properties_named(reader, c, name)
        if declaring or declared:
            members += declaring
            properties += declared
            tops.append(c)
    classes = list(tops)
    seen = set(tops)  # (a class above that does not declare it is below one that does)
    frontier = tops
    for _ in range(CLASS_ROUNDS):
        of_classes = Meaning(reader=reader)
        for path, qualname, language in frontier[:FAN_OUT]:
            of_classes.add(path, qualname, language)
        below: list[Class] = []
        for use in aliased(reader, of_classes, read):
            c = (use.path, use.scope, use.language)
            if use.kind == "base" and use.scope and c not in seen and of_classes.means(use):
                seen.add(c)
                below.append(c)
                members += [s for s in members_named(reader, c, name) if s != method]
        classes += below
        frontier = below
        if not frontier:
            break
    return Related(members, classes, properties)


def classes_above(reader: IndexReader, own: list[Class]) -> Iterator[Class]:
    """The classes and interfaces above ``own``, each once: their bases as each file names
    them, round by round up to ``CLASS_ROUNDS``."""
    seen = set(own)
    frontier = own
    for _ in range(CLASS_ROUNDS):
        above: list[Class] = []
        for path, qualname, _language in frontier:
            for base in reader.refs_of_files([path]).get(path, []):
                if base.kind != "base" or base.scope != qualname or not base.target:
                    continue
                for cls in _declared(reader, base):
                    c = (cls.path, cls.qualname, cls.language)
                    if c not in seen:
                        seen.add(c)
                        above.append(c)
                        yield c
        frontier = above


def members_named(reader: IndexReader, cls: Class, name: str) -> list[SymbolRow]:
    """The methods ``name`` class ``cls`` defines (its overloads: several)."""
    member = f"{cls[1]}.{name}"
    return [s for s in symbols_in(reader, cls[0]) if s.qualname == member]


def _properties_named(reader: IndexReader, cls: Class, name: str) -> list[RefRow]:
    """The property ``name`` of a function type interface ``cls`` declares (its ``member`` row)."""
    member = f"{cls[1]}.{name}"
    rows = reader.refs_of_files([cls[0]]).get(cls[0], [])
    return [r for r in rows if r.kind == "member" and r.scope == member and r.name == name]


def declarations(reader: IndexReader, method: SymbolRow, family: Related | None = None) -> list[RefRow]:
    """The other declarations of ``method``'s member, as resolved uses of it
    (kind ``declaration``, in the declaring method): its other definitions
    in its class (overloads, a property's setter), and those of the members
    of ``family`` (:func:`related`)."""
    name = method.name
    if name in CONSTRUCTORS:  # a constructor is its class's own, never another's member
        return []
    key = same_file_key(method.qualname)

    def row(s: SymbolRow) -> RefRow:
        line = _name_line(reader, s)
        return RefRow(s.path, s.language, name, line, "declaration", s.qualname, key, "")

    out = [row(s) for s in symbols_in(reader, method.path) if s.qualname == method.qualname and s != method]
    if family is None:
        return out
    properties = [p._replace(kind="declaration", target=key) for p in family.properties]
    return out + [row(s) for s in family.members] + properties


_COMMENT_OR_DECORATOR = ("/*", "*", "//", "@", "#")


def _name_line(reader: IndexReader, s: SymbolRow) -> int:
    """The line of ``s`` where its name stands, its doc comment and
    decorators passed (a definition starts at them)."""
    lines = lines_of(reader, s.path)
    word = re.compile(rf"(?<![\w$]){re.escape(s.name)}(?![\w$])")
    for n in range(s.start_line, s.end_line + 1):
        text = lines.get(n, "").lstrip()
        if not text.startswith(_COMMENT_OR_DECORATOR) and word.search(text):
            return n
    return s.start_line


def _declared(reader: IndexReader, use: RefRow) -> list[SymbolRow]:
    """The classes a base use names: by its key, else (TypeScript's) through the modules
    re-exporting it (``implements Env`` of ``import type { Env } from '../types'``, which
    re-exports it from ``./environment``), one module at a time."""
    found = _declared_by_key(reader, use)
    for _ in range(ALIAS_ROUNDS if use.language in DECLARING_LANGUAGES else 0):
        if found or (use := through_reexport(reader, use)) is None:
            break
        found = _declared_by_key(reader, use)
    return found


def _declared_by_key(reader: IndexReader, use: RefRow) -> list[SymbolRow]:
    """The classes a base use names, by its key alone (no re-export followed)."""
    from repolens.store.base import NameMatch, SymbolFilters, normalize_symbol

    t = use.target
    found = reader.symbols(NameMatch(names=(normalize_symbol(use.name),)), SymbolFilters(), 100)
    found = [s for s in found if s.name == use.name and s.kind not in ("function", "method")]
    if t.startswith("="):
        return [s for s in found if s.path == use.path and same_file_key(s.qualname) == t]
    return [s for s in found if spells(t, keys_of(reader, s.path, s.qualname, s.language))]
