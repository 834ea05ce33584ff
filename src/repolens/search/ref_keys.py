"""What means a definition, and the uses read by the names it goes by.

The parts of :mod:`repolens.search.references` that its rules share (those
of :mod:`repolens.search.ref_members` too): a definition's keys
(:func:`keys_of`: its module's path from any folder down, Go's module
path), a :class:`Meaning` (the keys, ``=Q`` forms and ``super()`` forms
that mean one definition), the uses of its names read in bulk with the keys
of its re-exports followed (:func:`aliased`), and a file's definitions, kept
while the index's content stays (:func:`symbols_in`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from repolens.chunking.refs import definition_keys, same_file_key, split_key
from repolens.search import golang
from repolens.store.base import IndexReader, RefRow, SymbolRow

# Rounds of re-exports followed (a package re-exporting a subpackage's re-export ...).
ALIAS_ROUNDS = 4

# Languages whose files may use each other's names: a name match is looked for among them.
_FAMILIES = (
    frozenset({"javascript", "typescript", "tsx"}),
    frozenset({"c", "cpp", "objc"}),
    frozenset({"java", "kotlin", "scala", "groovy"}),
)


def family(language: str) -> frozenset[str]:
    """The languages whose files may name a definition written in ``language``."""
    return next((f for f in _FAMILIES if language in f), frozenset({language}))


@dataclass
class Meaning:
    """What means one definition: keys from other files, ``=Q`` forms by file,
    and ``^C`` (``super()`` in class ``C``) forms by file."""

    keys: set[str] = field(default_factory=set)
    full: set[str] = field(default_factory=set)  # the longest keys: an import may spell more before them
    same: set[tuple[str, str]] = field(default_factory=set)
    supers: set[tuple[str, str]] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    # Keys with one member of any name (``P.*.S``: a mapped type's member), as (``P.``, ``.S``,
    # the names the type declares otherwise: not the mapped type's).
    wild: set[tuple[str, str, frozenset[str]]] = field(default_factory=set)
    constructs: bool = False  # a constructor: of its class's uses, only the calls are its own
    reader: IndexReader | None = None  # where a key only other files say is read (Go's module path)

    def add(self, path: str, qualname: str, language: str) -> bool:
        """Add the keys of ``qualname`` in ``path``; whether any was new."""
        before = len(self.keys) + len(self.same)
        keys = keys_of(self.reader, path, qualname, language)
        self.keys |= keys
        if keys:
            self.full.add(max(keys, key=len))
        self.same.add((path, same_file_key(qualname)))
        self.names.add(split_key(qualname)[-1] if split_key(qualname) else qualname)
        return len(self.keys) + len(self.same) != before

    def extend(self, keys: Iterable[str], declared: frozenset[str] = frozenset()) -> None:
        """Add ``keys``; one with a member of any name (``.*.``) as a pattern, but
        for the names ``declared`` otherwise."""
        for k in keys:
            pre, star, post = k.partition(".*.")
            if not star:
                self.keys.add(k)
            elif "*" not in post:
                self.wild.add((pre + ".", "." + post, declared))

    def means(self, ref: RefRow) -> bool:
        t = ref.target
        if not t:
            return False
        if t[0] == "=":
            return (ref.path, t) in self.same
        if t[0] == "^":
            return (ref.path, t[1:]) in self.supers
        if t in self.keys:
            return True
        # An import of Go's ``host/module/dir`` or a monorepo's package spells more than the path:
        # ``t`` ends with ``.`` and a key of ``full``, looked up from each of its dots (a walk
        # through many types holds thousands of keys; a target has a few dots).
        if self.full:
            dot = t.find(".")
            while dot >= 0:
                if t[dot + 1 :] in self.full:
                    return True
                dot = t.find(".", dot + 1)
        return bool(self.wild) and any(_one_between(t, *w) for w in self.wild)


def _one_between(target: str, pre: str, post: str, declared: frozenset[str]) -> bool:
    """Whether ``target`` is ``pre``, one name but ``declared``, then ``post``."""
    if not (target.startswith(pre) and target.endswith(post)):
        return False
    middle = target[len(pre) : len(target) - len(post)]
    return bool(middle) and "." not in middle and middle not in declared


# A class as a walk holds it: its file, qualified name, language.
Class = tuple[str, str, str]


def qualname_key(qualname: str) -> str:
    return ".".join(split_key(qualname))


def keys_of(reader: IndexReader | None, path: str, qualname: str, language: str) -> frozenset[str]:
    """:func:`definition_keys`, and for Go the key an importing file spells
    (its module's path, from the index's ``go.mod`` files)."""
    keys = definition_keys(path, qualname, language)
    if language == "go" and reader is not None:
        imported = golang.import_key(reader, path, qualname)
        if imported:
            keys = keys | {imported}
    return keys


class Read:
    """The uses read so far for one question, and the names they were read by."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int, str, str, str, str], RefRow] = {}
        self.names: set[str] = set()


def aliased(reader: IndexReader, meaning: Meaning, read: Read | None = None) -> list[RefRow]:
    """The uses of ``meaning``'s names (those ``read`` holds are not read
    again), after adding the keys of every re-export among them (to a
    fixpoint, at most ``ALIAS_ROUNDS`` rounds)."""
    read = read or Read()
    for _ in range(ALIAS_ROUNDS + 1):
        wanted = sorted((meaning.names | {"*"}) - read.names)
        if wanted:
            read.names.update(wanted)
            for row in reader.refs_named(wanted):
                read.rows[(row.path, row.line, row.name, row.target, row.kind, row.scope)] = row
        if not follow_aliases(read.rows.values(), meaning) and not (meaning.names - read.names):
            break
    return list(read.rows.values())


def follow_aliases(rows: Iterable[RefRow], meaning: Meaning) -> bool:
    """Add the keys of every re-export of what ``meaning`` means; whether any was new."""
    grew = False
    stars: dict[str, set[str]] | None = None  # a module's key -> the names meant in it
    for row in rows:
        if not row.binds:
            continue
        if row.binds == "*":  # export * from / from x import *: every name of the module, re-exported
            if stars is None:
                stars = {}
                for key in meaning.keys:
                    module, _, name = key.rpartition(".")
                    stars.setdefault(module, set()).add(name)
            for name in stars.get(row.target, ()):
                grew |= meaning.add(row.path, name, row.language)
        elif meaning.means(row):
            grew |= meaning.add(row.path, row.binds, row.language)
    return grew


_SYMBOLS: dict[tuple[str, str], list[SymbolRow]] = {}
_SYMBOLS_HELD = 20_000


def symbols_in(reader: IndexReader, path: str) -> list[SymbolRow]:
    """``reader.symbols_of_file(path)``, kept while the index's content
    stays (keyed by :meth:`IndexReader.cache_key`; emptied when it holds
    ``_SYMBOLS_HELD`` files): a walk asks for the same files many times."""
    key = (reader.cache_key(), path)
    rows = _SYMBOLS.get(key)
    if rows is None:
        if len(_SYMBOLS) >= _SYMBOLS_HELD:
            _SYMBOLS.clear()
        rows = _SYMBOLS[key] = reader.symbols_of_file(path)
    return rows


def defined_in(reader: IndexReader, paths: Sequence[str]) -> set[tuple[str, str]]:
    """(path, qualified name as a key) of every definition of ``paths``."""
    return {(s.path, qualname_key(s.qualname)) for path in paths for s in symbols_in(reader, path)}


def defined(reader: IndexReader, qualname: str, path: str) -> list[SymbolRow]:
    """The definitions named ``qualname`` in ``path``."""
    want = qualname_key(qualname)
    return [s for s in symbols_in(reader, path) if qualname_key(s.qualname) == want]


def spells(target: str, keys: frozenset[str]) -> bool:
    """Whether ``target`` is one of ``keys``, or spells more before their longest (a
    monorepo's package, Go's ``host/module/dir``)."""
    return target in keys or (bool(keys) and target.endswith("." + max(keys, key=len)))
