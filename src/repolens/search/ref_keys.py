"""What means a definition, and the uses read by the names it goes by.

The parts of :mod:`repolens.search.references` that its rules share (those
of :mod:`repolens.search.ref_members` too): a definition's keys
(:func:`keys_of`: its module's path from any folder down, Go's module
path), a :class:`Meaning` (the keys, ``=Q`` forms and ``super()`` forms
that mean one definition), the uses of its names read in bulk with the keys
of its re-exports followed (:func:`aliased`); what they read of a file is kept
while the index's content stays (:mod:`repolens.search.kept`).

A walk through TypeScript's types (:func:`repolens.search.references._of_type`)
pairs every key of a type with every path from it to the method, six types
deep: those keys are held as pairs of sets (:class:`Pairs`, :class:`Paths`),
never spelled out, and the uses read for a question (:class:`Read`) are kept
by the last name of their target (:func:`tip`), so that a type's round goes
through the few that may mean it, not every use read so far.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from repolens.chunking.refs import (
    IN_NAMESPACES,
    companion_object,
    definition_keys,
    enclosing,
    extension_function,
    qualname_forms,
    split_key,
)
from repolens.chunking.refs.contextual import as_element
from repolens.search import cargo, golang, php
from repolens.search.kept import FILES_HELD, per_index, symbols_in
from repolens.search.ref_namespaces import namespace_targets
from repolens.store.base import IndexReader, RefRow, SymbolRow

B = TypeVar("B", str, tuple[str, str])  # a key's base: a key, or a file and an =Q form

# Rounds of re-exports followed (a package re-exporting a subpackage's re-export ...).
ALIAS_ROUNDS = 4

# Languages whose files may use each other's names: a name match is looked for among them.
_FAMILIES = (
    frozenset({"javascript", "typescript", "tsx"}),
    frozenset({"c", "cpp", "objc"}),
    frozenset({"java", "kotlin", "scala", "groovy"}),
)


# Languages whose keys through an array's callback are read as through its element too.
_ELEMENTS_READ = frozenset({"typescript", "tsx"})


def family(language: str) -> frozenset[str]:
    """The languages whose files may name a definition written in ``language``."""
    return next((f for f in _FAMILIES if language in f), frozenset({language}))


class Pairs(Generic[B]):
    """Pairs (base, path) held as products: each set of bases added with a set of paths, every
    base with every path, is indexed by its smaller side and looked up from both."""

    def __init__(self) -> None:
        self.by_base: dict[B, list[frozenset[str]]] = {}
        self.by_path: dict[str, list[frozenset[B]]] = {}

    def __bool__(self) -> bool:
        return bool(self.by_base or self.by_path)

    def add(self, bases: frozenset[B], paths: frozenset[str]) -> None:
        if len(bases) <= len(paths):
            for base in bases:
                self.by_base.setdefault(base, []).append(paths)
        else:
            for path in paths:
                self.by_path.setdefault(path, []).append(bases)

    def holds(self, base: B, path: str) -> bool:
        held = self.by_base.get(base)
        if held is not None and any(path in paths for paths in held):
            return True
        bases = self.by_path.get(path)
        return bases is not None and any(base in b for b in bases)


@dataclass
class Meaning:
    """What means one definition: keys from other files, ``=Q`` forms by file,
    and ``^C`` (``super()`` in class ``C``) forms by file. Its sets only grow: what
    it keeps worked out of them (its tips, its keys by module, its patterns by
    their ends) is brought up to date as they grow."""

    keys: set[str] = field(default_factory=set)
    full: set[str] = field(default_factory=set)  # the longest keys: an import may spell more before them
    same: set[tuple[str, str]] = field(default_factory=set)
    supers: set[tuple[str, str]] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    # Keys with one member of any name (``P.*.S``: a mapped type's member), as (``P.``, ``.S``,
    # the names the type declares otherwise: not the mapped type's).
    wild: set[tuple[str, str, frozenset[str]]] = field(default_factory=set)
    # Keys made of a base and a path from it to the method (``K`` and ``.req.header``), held as
    # the pairs (:class:`Pairs`), not spelled out: a walk through TypeScript's types pairs
    # thousands of keys with thousands of paths (:class:`Paths`). The same of the longest keys,
    # and of the ``=Q`` forms (their bases (file, ``=Q``)).
    tails: Pairs[str] = field(default_factory=Pairs)
    full_tails: Pairs[str] = field(default_factory=Pairs)
    same_tails: Pairs[tuple[str, str]] = field(default_factory=Pairs)
    constructs: bool = False  # a constructor: of its class's uses, only the calls are its own
    reader: IndexReader | None = None  # where a key only other files say is read (Go's module path)
    # The keys by module (``a.b`` -> ``c`` of ``a.b.c``) for ``export *``, and the keys they hold:
    # kept up to date as keys come (:func:`follow_aliases`), not rebuilt for every round.
    _modules: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _indexed: set[str] = field(default_factory=set, repr=False)
    # The paths of tails, by their part before their last dot (``.req`` of ``.req.header``).
    _stems: dict[str, list[tuple[str, str]]] = field(default_factory=dict, repr=False)
    _paths: set[str] = field(default_factory=set, repr=False)
    _wild_at: dict[tuple[str, str], list[frozenset[str]]] = field(default_factory=dict, repr=False)
    _wild_of: set[tuple[str, str, frozenset[str]]] | None = field(default=None, repr=False)
    _wild_count: int = field(default=0, repr=False)
    _tips: tuple[tuple[int, int, int], set[str]] | None = field(default=None, repr=False)

    def add(self, path: str, qualname: str, language: str) -> bool:
        """Add the keys of ``qualname`` in ``path``; whether any was new."""
        before = len(self.keys) + len(self.same)
        keys = keys_of(self.reader, path, qualname, language)
        self.keys |= keys
        if keys:
            self.full.add(max(keys, key=len))
        self.same.update((path, "=" + form) for form in qualname_forms(qualname, language))
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

    def _in_tails(self, key: str) -> bool:
        """Whether ``key`` is a base and a path of :attr:`tails` (tried from each of its dots)."""
        dot = key.find(".")
        while dot >= 0:
            if self.tails.holds(key[:dot], key[dot:]):
                return True
            dot = key.find(".", dot + 1)
        return False

    def _in_same(self, path: str, key: str) -> bool:
        """Whether (``path``, ``key``) is in :attr:`same`, or a base and a path of :attr:`same_tails`."""
        if (path, key) in self.same:
            return True
        dot = key.find(".") if self.same_tails else -1
        while dot >= 0:
            if self.same_tails.holds((path, key[:dot]), key[dot:]):
                return True
            dot = key.find(".", dot + 1)
        return False

    def _spells_full(self, target: str) -> bool:
        """Whether ``target`` ends with ``.`` and a key of :attr:`full` or :attr:`full_tails`
        (looked up from each of its dots: a target has a few, a walk thousands of keys)."""
        full, tails = self.full, self.full_tails
        if len(full) <= 2:  # a type's own (one or two keys): fewer steps than its dots
            for key in full:
                n = len(key)
                if len(target) > n and target[-n - 1] == "." and target.endswith(key):
                    return True
        else:
            dot = target.find(".")
            while dot >= 0:
                if target[dot + 1 :] in full:
                    return True
                dot = target.find(".", dot + 1)
        if not tails:
            return False
        dots = [i for i, c in enumerate(target) if c == "."]
        for n, start in enumerate(dots):
            for dot in dots[n + 1 :]:  # the base between this dot and a later one, the path from there
                if tails.holds(target[start + 1 : dot], target[dot:]):
                    return True
        return False

    def means(self, ref: RefRow) -> bool:
        t = ref.target
        if not t:
            return False
        if t[0] == IN_NAMESPACES:  # C#'s ?Invoice.Total: Invoice of a namespace in scope
            return self.reader is not None and any(
                self._means(ref.path, c) for c in namespace_targets(self.reader, ref)
            )
        if self._means(ref.path, t):
            return True
        # TypeScript: a callback over another file's array, keyed as expected where it stands
        if ref.language in _ELEMENTS_READ and (element := as_element(t)) and self._means(ref.path, element):
            return True
        # Rust: crate::Arg in a library's source (kept as Arg) is <crate>::Arg, its root's re-export.
        if ref.language == "rust" and self.reader is not None and t[0] not in "=^":
            spelled = cargo.crate_target(self.reader, ref.path, t)
            return bool(spelled) and self._means(ref.path, spelled)
        return False

    def _means(self, path: str, t: str) -> bool:
        if t[0] == "=":
            return self._in_same(path, t)
        if t[0] == "^":
            return (path, t[1:]) in self.supers
        if t in self.keys or (self.tails and self._in_tails(t)):
            return True
        # An import of Go's ``host/module/dir`` or a monorepo's package spells more than the path:
        # ``t`` ends with ``.`` and a key of ``full``.
        if (self.full or self.full_tails) and self._spells_full(t):
            return True
        return bool(self.wild) and self._in_wild(t)

    def _in_wild(self, target: str) -> bool:
        """Whether ``target`` is a key of :attr:`wild`: ``P.`` and ``.S`` around one name (two
        of its dots in a row), not a declared one. The patterns by (``P.``, ``.S``), made
        again when :attr:`wild` grew: a walk through mapped types holds thousands."""
        if self._wild_of is not self.wild or self._wild_count != len(self.wild):
            at: dict[tuple[str, str], list[frozenset[str]]] = {}
            for pre, post, declared in self.wild:
                at.setdefault((pre, post), []).append(declared)
            self._wild_at, self._wild_of, self._wild_count = at, self.wild, len(self.wild)
        at = self._wild_at
        start = target.find(".")
        while start >= 0:
            end = target.find(".", start + 1)
            if end < 0:
                return False
            if end > start + 1:
                held = at.get((target[: start + 1], target[end:]))
                if held is not None:
                    middle = target[start + 1 : end]
                    if any(middle not in declared for declared in held):
                        return True
            start = end
        return False

    def tips(self) -> set[str] | None:
        """The :func:`tip` of every target this means (None: too many kinds of key to say, or
        too many keys to be worth it)."""
        if self.wild or self.supers or self.tails or self.full_tails or self.same_tails:
            return None
        sizes = (len(self.keys), len(self.full), len(self.same))
        if sum(sizes) > _TIPPED:
            return None
        if (
            self._tips is None or self._tips[0] != sizes
        ):  # (the sets only grow: the same sizes, the same sets)
            found = {tip(k) for k in self.keys} | {tip(k) for k in self.full} | {tip(k) for _, k in self.same}
            self._tips = (sizes, found)
        return self._tips[1]

    def in_module(self, module: str) -> set[str]:
        """The names ``n`` of every key ``module.n`` (the keys as :meth:`index_modules` last
        saw them, and those of :attr:`tails`)."""
        names = set(self._modules.get(module, ()))
        if not self._stems:
            return names
        dot = len(module)  # a path's part before its last dot is "" or module[dot:], dot one of module's
        while dot >= 0:
            base = module[:dot]
            for path, name in self._stems.get(module[dot:], ()):
                if self.tails.holds(base, path):
                    names.add(name)
            dot = module.rfind(".", 0, dot)
        return names

    def modules(self) -> Iterable[str]:
        """The modules :meth:`in_module` finds a name of, but through :attr:`tails`."""
        return self._modules.keys()

    def index_modules(self) -> None:
        """Bring the keys by module up to date with :attr:`keys` (only the keys new since)."""
        for key in self.keys - self._indexed:
            module, _, name = key.rpartition(".")
            self._modules.setdefault(module, set()).add(name)
        self._indexed |= self.keys


class Paths:
    """What a walk adds to a :class:`Meaning` with each of some paths from a value to the
    method: a key of every base and path (:meth:`extend`), a longest key (:meth:`add_full`),
    an ``=Q`` form (:meth:`add_same`). A pair with no ``*`` (no pattern) is held as its base
    and path (:attr:`Meaning.tails`, added by :meth:`close`), the others spelled out as
    :meth:`Meaning.extend` has them: a type's bases are paired with its paths once, not
    every base with every path."""

    def __init__(self, meaning: Meaning, paths: Iterable[str]) -> None:
        self.meaning = meaning
        self.paths = list(paths)
        self.plain = [p for p in self.paths if p.startswith(".") and "*" not in p]
        self.other = [p for p in self.paths if not (p.startswith(".") and "*" not in p)]
        self.keys: set[str] = set()
        self.full: set[str] = set()
        self.same: set[tuple[str, str]] = set()

    def extend(self, bases: Iterable[str], declared: frozenset[str] = frozenset()) -> None:
        """``meaning.extend(b + p for b in bases for p in paths, declared)``."""
        plain = [b for b in bases if "*" not in b]
        self.keys.update(plain)
        spelled = [b + p for b in bases if "*" in b for p in self.paths]
        spelled += [b + p for b in plain for p in self.other]
        if spelled:
            self.meaning.extend(spelled, declared)

    def add_full(self, bases: Iterable[str], starred: bool = True) -> None:
        """``meaning.full |= {b + p for b in bases for p in paths}`` (``starred``: a key
        with a ``*`` too)."""
        plain = [b for b in bases if "*" not in b]
        self.full.update(plain)
        full = self.meaning.full
        full.update(b + p for b in plain for p in self.other if starred or "*" not in p)
        if starred:
            full.update(b + p for b in bases if "*" in b for p in self.paths)

    def add_same(self, path: str, key: str) -> None:
        """``meaning.same |= {(path, key + p) for p in paths}``."""
        self.same.add((path, key))
        self.meaning.same.update((path, key + p) for p in self.other)

    def close(self) -> None:
        """Add the pairs held (the paths once, as one set, for each base)."""
        m = self.meaning
        paths = frozenset(self.plain)
        if not paths:
            return
        m.tails.add(frozenset(self.keys), paths)
        m.full_tails.add(frozenset(self.full), paths)
        m.same_tails.add(frozenset(self.same), paths)
        if self.keys:
            for path in paths - m._paths:
                stem, _, name = path.rpartition(".")
                m._stems.setdefault(stem, []).append((path, name))
            m._paths |= paths


# The keys, longest keys and =Q forms a Meaning's tips are worked out for at most (those of a
# type and its re-exports are a few dozen).
_TIPPED = 200


# A class as a walk holds it: its file, qualified name, language.
Class = tuple[str, str, str]


def qualname_key(qualname: str) -> str:
    return ".".join(split_key(qualname))


# definition_keys is pure (a path's and a name's strings): a walk asks it for the same fields' types
# in every round, and a question for those of the one before.
_definition_keys = functools.lru_cache(maxsize=1 << 14)(definition_keys)


def keys_of(reader: IndexReader | None, path: str, qualname: str, language: str) -> frozenset[str]:
    """:func:`definition_keys`, and the key an importing file spells where the file's
    path does not say it: for Go its module's path (from the index's ``go.mod``
    files), for Rust its crate's name (from the ``Cargo.toml`` files), for PHP the
    namespace the file declares (``use App\\Shop\\Item``)."""
    keys = _definition_keys(path, qualname, language)
    if reader is None:
        return keys
    imported = ""
    if language == "go":
        imported = golang.import_key(reader, path, qualname)
    elif language == "rust":
        imported = cargo.import_key(reader, path, qualname)
    elif language == "php":
        return keys | php.import_keys(reader, path, qualname)
    return keys | {imported} if imported else keys


# Languages whose definitions go by other names than their qualified one (:func:`other_names`):
# Kotlin's extension functions (``fun String.shout()``, imported and called as ``shout``) and
# members of a named companion object (``A.build()``).
_OTHER_NAMING = frozenset({"kotlin"})


def other_names(reader: IndexReader, s: SymbolRow, *, own_file: bool = False) -> tuple[str, ...]:
    """The qualified names Kotlin gives definition ``s`` besides its own: an extension
    function's name, which files import and call it by (``shout`` of ``fun String.shout()``),
    and a member's of a companion object named otherwise than ``Companion``, its class's
    (``A.build`` of ``A.Factory.build`` in ``companion object Factory``: ``A.build()``).
    ``own_file``: only those its own file's keys spell (``=A.build``; the file keys its
    extension function by its qualified name, ``=String.shout``)."""
    if s.language not in _OTHER_NAMING:
        return ()
    if not s.parent:
        return (s.name,) if extension_function(s) and not own_file else ()
    if enclosing(s.parent) and s.parent in _companions(reader, s.path):
        return (f"{enclosing(s.parent)}.{s.name}",)
    return ()


@per_index(FILES_HELD)
def _companions(reader: IndexReader, path: str) -> frozenset[str]:
    """The qualified names of a Kotlin file's companion objects (of a name's first definition:
    one whose signature declares it), worked out once per file: each of its members asks."""
    first: dict[str, bool] = {}
    for h in symbols_in(reader, path):
        first.setdefault(h.qualname, companion_object(h.signature))
    return frozenset(q for q, companion in first.items() if companion)


def symbol_keys(reader: IndexReader, s: SymbolRow) -> frozenset[str]:
    """:func:`keys_of` a definition and of its :func:`other_names`."""
    keys = keys_of(reader, s.path, s.qualname, s.language)
    for name in other_names(reader, s):
        keys |= keys_of(reader, s.path, name, s.language)
    return keys


class Read:
    """The uses read so far for one question, and the names they were read by; apart, by
    their place among them, those binding a name (the re-exports :func:`follow_aliases`
    goes through) and those of a class's base or a field's type (what a walk through types
    goes through), each by the last name of its target (:func:`tip`): each round of a walk
    would otherwise go through every use again."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int, str, str, str, str], RefRow] = {}
        self.names: set[str] = set()
        self.typing: dict[tuple[str, int, str, str, str, str], RefRow] = {}
        self._typing_by_tip: dict[str, list[tuple[int, tuple[str, int, str, str, str, str]]]] = {}
        self.binding: dict[int, tuple[RefRow, str]] = {}  # by place among rows, with its tip
        self._binding_at: dict[tuple[str, int, str, str, str, str], int] = {}
        self._binding_by_tip: dict[str, list[int]] = {}
        self._stars: dict[str, list[int]] = {}  # export * (every name of a module), by module

    def add(self, row: RefRow) -> None:
        key = (row.path, row.line, row.name, row.target, row.kind, row.scope)
        held = self.rows.get(key)
        self.rows[key] = row
        if row.kind in TYPING_KINDS:
            if key not in self.typing:
                self._typing_by_tip.setdefault(tip(row.target), []).append((len(self.typing), key))
            self.typing[key] = row
        if held is not None and held.binds != row.binds:
            # Two uses of one name on a line, binding different names, share a key: the last
            # read is kept, in the place of the first.
            self._index_binding()
        elif held is not None and row.binds:
            self.binding[self._binding_at[key]] = (row, tip(row.target))
        elif row.binds:
            self._add_binding(len(self.rows) - 1, key, row)

    def _add_binding(self, place: int, key: tuple[str, int, str, str, str, str], row: RefRow) -> None:
        row_tip = tip(row.target)
        self.binding[place] = (row, row_tip)
        self._binding_at[key] = place
        self._binding_by_tip.setdefault(row_tip, []).append(place)
        if row.binds == "*":
            self._stars.setdefault(row.target, []).append(place)

    def _index_binding(self) -> None:
        self.binding, self._binding_at, self._binding_by_tip, self._stars = {}, {}, {}, {}
        for place, (key, row) in enumerate(self.rows.items()):
            if row.binds:
                self._add_binding(place, key, row)

    def binding_places(self, tips: set[str] | None, after: int = -1) -> list[int]:
        """The places after ``after`` of the uses binding a name whose target's tip is one of
        ``tips`` (None: every one), in order."""
        if tips is None:
            return [p for p in self.binding if p > after]
        return sorted(p for t in tips for p in self._binding_by_tip.get(t, ()) if p > after)

    def star_places(self, modules: Iterable[str] | None = None, after: int = -1) -> list[int]:
        """The places after ``after`` of the ``export *`` of one of ``modules`` (None: of any)."""
        if modules is None:
            return sorted(p for places in self._stars.values() for p in places if p > after)
        return sorted(p for m in modules for p in self._stars.get(m, ()) if p > after)

    def typing_of(self, meaning: Meaning) -> list[RefRow]:
        """The typing uses ``meaning`` may mean (those whose target's last name is one of its
        keys'), in the order read: :attr:`typing` but those it cannot mean."""
        tips = meaning.tips()
        if tips is None:
            return list(self.typing.values())
        found = sorted(k for t in tips for k in self._typing_by_tip.get(t, ()))
        return [self.typing[key] for _, key in found]


# The kinds of use naming a type a walk through types follows: a class's base, a field's type.
TYPING_KINDS = frozenset({"base", "field"})


def tip(key: str) -> str:
    """The last name of a key or target (``c`` of ``a.b.c``, ``=c``, ``^b.c``): a target a
    :class:`Meaning` means has the tip of one of its keys."""
    return key.rpartition(".")[2].lstrip("=^?")


def aliased(reader: IndexReader, meaning: Meaning, read: Read | None = None) -> list[RefRow]:
    """The uses of ``meaning``'s names (those ``read`` holds are not read
    again), after adding the keys of every re-export among them (to a
    fixpoint, at most ``ALIAS_ROUNDS`` rounds)."""
    return list(read_aliased(reader, meaning, read).rows.values())


def read_aliased(reader: IndexReader, meaning: Meaning, read: Read | None = None) -> Read:
    """:func:`aliased`, the uses left in ``read`` (a walk goes through some of them only)."""
    read = read or Read()
    for _ in range(ALIAS_ROUNDS + 1):
        wanted = sorted((meaning.names | {"*"}) - read.names)
        if wanted:
            read.names.update(wanted)
            for row in reader.refs_named(wanted):
                read.add(row)
        if not follow_aliases(read, meaning) and not (meaning.names - read.names):
            break
    return read


def follow_aliases(read: Read, meaning: Meaning) -> bool:
    """Add the keys of every re-export of what ``meaning`` means among ``read``'s uses, in
    the order read; whether any was new. Only the re-exports that may mean it are gone
    through: those whose target's :func:`tip` is one of ``meaning``'s (those of a tip it
    takes on the way, after the place it took it), and the ``export *`` of a module one of
    its keys is in (as they stand at the first ``export *``)."""
    grew = False
    tips = meaning.tips()
    places = read.binding_places(tips)
    places += read.star_places()[:1]  # where the keys by module are taken
    heapq.heapify(places)
    indexed = False
    done: set[int] = set()
    while places:
        place = heapq.heappop(places)
        if place in done:
            continue
        done.add(place)
        row, row_tip = read.binding[place]
        if row.binds == "*":  # export * from / from x import *: every name of the module, re-exported
            if not indexed:
                meaning.index_modules()
                indexed = True
                modules = None if meaning.tails else meaning.modules()
                for later in read.star_places(modules, place):
                    heapq.heappush(places, later)
            added = False
            for name in meaning.in_module(row.target):
                added |= meaning.add(row.path, name, row.language)
        else:
            added = (
                (tips is None or row_tip in tips)
                and meaning.means(row)
                and meaning.add(row.path, row.binds, row.language)
            )
        if not added:  # (none added: no key, longest key or =Q form of another tip)
            continue
        grew = True
        now = meaning.tips()
        if tips is not None and now is not tips:
            for later in read.binding_places(None if now is None else now - tips, place):
                heapq.heappush(places, later)
        tips = now
    return grew


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
