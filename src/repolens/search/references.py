"""Who uses a definition, and what a definition uses: references resolved across files.

Each file's references were extracted and resolved within that file when it
was indexed (:mod:`repolens.chunking.refs`); what needs other files is done
here, when a question is asked, so an edit to one file changes only that
file's rows:

* **keys**: a definition is meant by every key :func:`definition_keys`
  gives (its module's path from any folder down, then its qualified name),
  by ``=Q`` in its own file, and by the keys of its **re-exports**: a
  module-level import or export that resolves to it (``from .base import
  Model`` in a package's ``__init__``, ``export { a as b }``) makes the
  re-exporting module's name for it one more key, followed to a fixpoint.
* **classes**: a method is also meant by ``self.name`` in a subclass that
  does not define ``name`` itself, and by ``super().name`` in a subclass
  (subclasses are found the same way: uses of the class as a base).
* **Go** (:mod:`repolens.search.golang`): a package is also meant by the
  path its module's ``go.mod`` gives it, and a method by a call through an
  interface its type has every method of; a struct embedding a type is one
  of its subclasses.
* **pytest fixtures** (:mod:`repolens.search.ref_fixtures`): a test's
  parameter, its uses and the members reached through it are keyed by the
  fixture's name (``@app``, ``@app.route``), made the key of the fixture
  its file sees (its own, a ``conftest.py`` up its folders, pytest's
  plugins) and of what that fixture returns.
* a use whose target is none of these but whose name is the definition's is
  a **name match** (a call on an object of unknown type, a language whose
  imports are not followed), kept apart and labelled so; a use resolved to
  another definition is not one.

:func:`references` answers for one definition, :func:`importers` for a
module; the walks over them (callers, callees, impact) are
:mod:`repolens.search.ref_walks`. Every answer is a bounded number of
store reads, by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from repolens.chunking.refs import NO_USE_KINDS, definition_keys, module_parts, same_file_key, split_key
from repolens.record import Record
from repolens.search import golang
from repolens.search.ref_fixtures import Fixtures
from repolens.store.base import IndexReader, RefRow, SymbolRow

# Rounds of re-exports followed (a package re-exporting a subpackage's re-export ...).
ALIAS_ROUNDS = 4
# Rounds of subclasses followed for a method's inherited uses.
CLASS_ROUNDS = 3
# Subclasses of one round whose re-exports are followed (sympy's Expr has hundreds:
# reading every use of each name would cost seconds for the few a package re-exports).
ALIASED_SUBCLASSES = 30
# Definitions one step of a walk may fan out to (a name defined in hundreds of places).
FAN_OUT = 200
# Methods a call of their class runs.
CONSTRUCTORS = frozenset({"__init__", "constructor", "new"})
# Languages whose files may use each other's names: a name match is looked for among them.
_FAMILIES = (
    frozenset({"javascript", "typescript", "tsx"}),
    frozenset({"c", "cpp", "objc"}),
    frozenset({"java", "kotlin", "scala", "groovy"}),
)


def family(language: str) -> frozenset[str]:
    """The languages whose files may name a definition written in ``language``."""
    return next((f for f in _FAMILIES if language in f), frozenset({language}))


class Resolved(Record):
    """The uses of one definition: resolved to it, and name matches."""

    definition: SymbolRow
    resolved: list[RefRow]
    name_matches: list[RefRow]


@dataclass
class _Meaning:
    """What means one definition: keys from other files, ``=Q`` forms by file,
    and ``^C`` (``super()`` in class ``C``) forms by file."""

    keys: set[str] = field(default_factory=set)
    full: set[str] = field(default_factory=set)  # the longest keys: an import may spell more before them
    same: set[tuple[str, str]] = field(default_factory=set)
    supers: set[tuple[str, str]] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
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

    def means(self, ref: RefRow) -> bool:
        t = ref.target
        if not t:
            return False
        if t[0] == "=":
            return (ref.path, t) in self.same
        if t[0] == "^":
            return (ref.path, t[1:]) in self.supers
        # An import of Go's ``host/module/dir`` or a monorepo's package spells more than the path.
        return t in self.keys or any(t.endswith("." + f) for f in self.full)


# A class as a walk holds it: its file, qualified name, language.
_Class = tuple[str, str, str]


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


def references(reader: IndexReader, definition: SymbolRow) -> Resolved:
    """Every use of ``definition`` (see the module docstring), each list in
    path and line order; the definition's own name at its first line is
    not a use."""
    meaning = _Meaning(reader=reader)
    meaning.add(definition.path, definition.qualname, definition.language)
    if definition.name in CONSTRUCTORS and definition.parent:  # new C() and C() call the constructor
        for cls in defined(reader, definition.parent, definition.path):
            meaning.add(cls.path, cls.qualname, cls.language)
            meaning.constructs = True
    read = _Read()
    fixtures = Fixtures(reader)  # a test's parameters and their members: pytest's fixtures
    rows = fixtures.resolve(_aliased(reader, meaning, read))
    if definition.kind == "method" and definition.parent and _unmet(rows, meaning, definition.name):
        # Only uses resolved to another key can mean the method through its
        # class (a subclass's self.x, the class's re-exports): a popular
        # class's subclasses and importers are read only when there is one.
        # Go: the uses of the classes' names read once for the three walks (its types are few; a
        # Python hierarchy's are many, and a shared read would be gone through again each round).
        of_classes = _Read() if definition.language == "go" else None
        subclasses = _inherited(reader, definition, meaning, of_classes)
        if definition.language == "go":  # embedding and interfaces: Go's types are followed like its class
            related = subclasses + _through_interfaces(reader, definition, meaning, rows, of_classes)
        else:  # (a popular Python class's subclasses would cost seconds, for no use found)
            related = []
        _through_class_aliases(reader, definition, meaning, related, of_classes)
        rows = fixtures.resolve(_aliased(reader, meaning, read))
    own = family(definition.language)
    resolved: list[RefRow] = []
    matches: list[RefRow] = []
    if definition.kind == "method" and definition.parent and definition.language in _REDEFINING_LANGUAGES:
        resolved += _declarations(reader, definition, related=definition.language in _DECLARING_LANGUAGES)
    for row in sorted(rows, key=lambda r: (r.path, r.line)):
        if row.kind in NO_USE_KINDS or (
            row.path == definition.path and row.line == definition.start_line and row.kind != "import"
        ):
            continue
        if meaning.means(row):
            if not meaning.constructs or row.name == definition.name or row.kind == "call":
                resolved.append(row)
        elif not row.target and row.name == definition.name and row.language in own:
            matches.append(row)
    if matches and (holder := _holder(reader, definition)) is not None:
        # A function defined in a function (repolens.chunking.nested) is named only inside
        # its holder, where the extraction kept its uses as name matches: those are its own.
        lines = range(holder.start_line, holder.end_line + 1)
        inside = [m for m in matches if m.path == holder.path and m.line in lines]
        resolved += inside
        matches = [m for m in matches if m not in inside]
    resolved.sort(key=lambda r: (r.path, r.line))
    return Resolved(definition, [r for r in resolved if r.name != "*"], matches)


def _holder(reader: IndexReader, definition: SymbolRow) -> SymbolRow | None:
    """The function ``definition`` is defined in, when it is one's (None otherwise)."""
    if definition.kind != "function" or not definition.parent:
        return None
    return next(
        (
            s
            for s in defined(reader, definition.parent, definition.path)
            if s.kind in ("function", "method") and s.start_line < definition.start_line <= s.end_line
        ),
        None,
    )


# Languages where a method defined again in its class is the same member
# (TypeScript's overloads, Python's property setter or typing.overload).
_REDEFINING_LANGUAGES = frozenset({"python", "typescript", "tsx"})
# Languages whose methods' declarations they implement or override are one
# member too (TypeScript's language service counts each as a reference).
_DECLARING_LANGUAGES = frozenset({"typescript", "tsx"})


def _declarations(reader: IndexReader, method: SymbolRow, *, related: bool) -> list[RefRow]:
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
    roots = _Meaning(reader=reader)
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
    for use in _aliased(reader, roots):
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


def _classes_of(reader: IndexReader, method: SymbolRow) -> list[SymbolRow]:
    """The class of ``method``: in its file, or for Go (whose methods may be
    declared in another file than their type) in its package's folder."""
    found = [c for c in defined(reader, method.parent, method.path) if c.kind not in ("function", "method")]
    if found or method.language != "go":
        return found
    return golang.types_named(reader, method.parent, method.path)


def _through_interfaces(
    reader: IndexReader, method: SymbolRow, meaning: _Meaning, uses: list[RefRow], read: _Read | None = None
) -> list[_Class]:
    """Go: add ``I.name`` for every interface ``I`` the method's type
    implements (:func:`golang.implemented`), and for every interface
    embedding one of those: a call through it (``r.Use``, ``r`` a
    ``Router``) may run this method, as gopls counts it. Those interfaces,
    for the fields and functions of their type (``c.Writer.Flush()``)."""
    out: list[_Class] = []
    for path, interface in golang.implemented(reader, method, uses):
        meaning.add(path, f"{interface}.{method.name}", "go")
        out.append((path, interface, "go"))
        of_interface = _Meaning(reader=reader)
        of_interface.add(path, interface, "go")
        for use in _aliased(reader, of_interface, read):
            if use.kind == "base" and use.scope and of_interface.means(use):
                meaning.add(use.path, f"{use.scope}.{method.name}", "go")
                out.append((use.path, use.scope, "go"))
    return out


def _unmet(rows: Iterable[RefRow], meaning: _Meaning, name: str) -> bool:
    """Whether a use of ``name`` among ``rows`` is resolved to a key that does not mean the definition."""
    return any(r.name == name and r.target and not meaning.means(r) for r in rows)


class _Read:
    """The uses read so far for one question, and the names they were read by."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int, str, str, str], RefRow] = {}
        self.names: set[str] = set()


def _aliased(reader: IndexReader, meaning: _Meaning, read: _Read | None = None) -> list[RefRow]:
    """The uses of ``meaning``'s names (those ``read`` holds are not read
    again), after adding the keys of every re-export among them (to a
    fixpoint, at most ``ALIAS_ROUNDS`` rounds)."""
    read = read or _Read()
    for _ in range(ALIAS_ROUNDS + 1):
        wanted = sorted((meaning.names | {"*"}) - read.names)
        if wanted:
            read.names.update(wanted)
            for row in reader.refs_named(wanted):
                read.rows[(row.path, row.line, row.name, row.target, row.kind)] = row
        if not _follow_aliases(read.rows.values(), meaning) and not (meaning.names - read.names):
            break
    return list(read.rows.values())


def _through_class_aliases(
    reader: IndexReader,
    method: SymbolRow,
    meaning: _Meaning,
    subclasses: Sequence[_Class] = (),
    read: _Read | None = None,
) -> None:
    """Add ``K.name`` for every key ``K`` of the method's class re-exported
    elsewhere (``flask.Flask`` for ``src/flask/app.py``'s ``Flask``): a typed
    local (``app = flask.Flask()``) names the method through it; and
    ``O.x.name`` for every class ``O`` declaring a field ``x`` of the
    method's class (``c.req.header``, ``c: Context``, ``req: HonoRequest``),
    or a function ``O`` returning one (Go's ``New().GET``, Python's
    ``requests.session().get``: through the function's re-exports too); the
    same for each of ``subclasses``, classes that have the method too (Go's
    ``Engine`` embedding ``RouterGroup``, an interface it implements)."""
    suffix = "." + method.name
    classes = [(c.path, c.qualname, c.language) for c in _classes_of(reader, method)]
    for path, qualname, language in [*classes, *subclasses[:ALIASED_SUBCLASSES]]:
        of_class = _Meaning(reader=reader)
        of_class.add(path, qualname, language)
        rows = _aliased(reader, of_class, read)
        meaning.keys |= {k + suffix for k in of_class.keys}
        meaning.full |= {k + suffix for k in of_class.full}
        returning = _Meaning(reader=reader)  # functions re-exported elsewhere (from .sessions import session)
        for row in rows:  # a field of this class's type: obj.field.name, obj of the owning class
            if row.kind == "field" and of_class.means(row):
                keys = keys_of(reader, row.path, row.scope, row.language)
                meaning.keys |= {k + suffix for k in keys}
                meaning.full |= {max(keys, key=len) + suffix} if keys else set()
                meaning.same.add((row.path, same_file_key(row.scope) + suffix))
                if "." not in row.scope and row.language in _REEXPORTING and len(returning.names) < FAN_OUT:
                    returning.add(row.path, row.scope, row.language)
        if returning.names:
            before = set(returning.keys)
            _aliased(reader, returning, read)
            meaning.keys |= {k + suffix for k in returning.keys - before}
            meaning.full |= {k + suffix for k in returning.keys - before}


# Languages whose modules re-export what they import (a function's other keys).
_REEXPORTING = frozenset({"python", "javascript", "typescript", "tsx"})


def _follow_aliases(rows: Iterable[RefRow], meaning: _Meaning) -> bool:
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


def _inherited(
    reader: IndexReader, method: SymbolRow, meaning: _Meaning, read: _Read | None = None
) -> list[_Class]:
    """Add what means ``method`` through the subclasses of its class: their
    ``self.name`` where they do not define ``name`` (an override is met by
    its own subclasses, not this method's), and their ``super().name``; the
    subclasses that inherit it. One read of uses per round of subclasses,
    whatever their number."""
    classes = _classes_of(reader, method)
    name = method.name
    seen: set[tuple[str, str]] = set()
    out: list[_Class] = []
    for _ in range(CLASS_ROUNDS):
        if not classes:
            return out
        of_classes = _Meaning(reader=reader)
        for cls in classes[:FAN_OUT]:
            of_classes.add(cls.path, cls.qualname, cls.language)
        subclasses = []
        for use in _aliased(reader, of_classes, read):
            if (
                use.kind == "base"
                and use.scope
                and (use.path, use.scope) not in seen
                and of_classes.means(use)
            ):
                seen.add((use.path, use.scope))
                subclasses.append((use.path, use.scope, use.language))
        defines = _defined_in(reader, sorted({p for p, _, _ in subclasses}))
        classes = []
        inheriting = _Meaning(reader=reader)
        for path, scope, language in subclasses:
            key = qualname_key(f"{scope}.{name}")
            meaning.supers.add((path, key))
            if (path, key) in defines:
                continue
            meaning.add(path, f"{scope}.{name}", language)
            inheriting.add(path, scope, language)
            out.append((path, scope, language))
            classes.extend(s for s in symbols_in(reader, path) if s.qualname == scope)
        if inheriting.keys and len(inheriting.names) <= ALIASED_SUBCLASSES:
            # A subclass re-exported elsewhere (flask.Flask for src/flask/app.py's
            # Flask) names the method through that key too: app = flask.Flask(); app.route.
            before = set(inheriting.keys)
            _aliased(reader, inheriting, read)
            suffix = "." + name
            meaning.keys |= {k + suffix for k in inheriting.keys - before}
            meaning.full |= {k + suffix for k in inheriting.keys - before}
    return out


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


def _defined_in(reader: IndexReader, paths: Sequence[str]) -> set[tuple[str, str]]:
    """(path, qualified name as a key) of every definition of ``paths``."""
    return {(s.path, qualname_key(s.qualname)) for path in paths for s in symbols_in(reader, path)}


def defined(reader: IndexReader, qualname: str, path: str) -> list[SymbolRow]:
    """The definitions named ``qualname`` in ``path``."""
    want = qualname_key(qualname)
    return [s for s in symbols_in(reader, path) if qualname_key(s.qualname) == want]


def definition_at(reader: IndexReader, path: str, line: int) -> SymbolRow | None:
    """The innermost definition of ``path`` holding ``line`` (None: no definition there)."""
    holding = [s for s in symbols_in(reader, path) if s.start_line <= line <= s.end_line]
    holding = [s for s in holding if s.kind != "section"]
    return min(holding, key=lambda s: (s.end_line - s.start_line, -s.start_line), default=None)


def definitions_in(reader: IndexReader, path: str, start: int, end: int) -> list[SymbolRow]:
    """The definitions a line range touches: those inside it, else the innermost holding it."""
    rows = [s for s in symbols_in(reader, path) if s.kind != "section"]
    inside = [s for s in rows if s.start_line <= end and s.end_line >= start]
    innermost = definition_at(reader, path, start)
    if innermost is not None and innermost.start_line <= start and innermost.end_line >= end:
        return [innermost, *(s for s in inside if s != innermost and s.start_line > innermost.start_line)]
    return inside


def top_level_uses(reader: IndexReader, path: str, start: int = 1, end: int | None = None) -> list[RefRow]:
    """The uses on lines ``start``-``end`` of ``path`` outside every
    definition (an import, a call at a module's top level): code of the
    module itself, which runs when another file imports it."""
    rows = reader.refs_of_files([path]).get(path, [])
    return [r for r in rows if not r.scope and start <= r.line and (end is None or r.line <= end)]


def importers(reader: IndexReader, path: str) -> list[RefRow]:
    """The uses in other files of the module ``path`` or of a name its top
    level defines (through re-exports too). A file that imports it at its
    own top level gives those imports; a file that uses it only inside
    definitions (a function's import, Go's package calls) gives those uses."""
    top = [s for s in symbols_in(reader, path) if not s.parent and s.kind != "section"]
    language = top[0].language if top else None
    if language is None:
        own = reader.refs_of_files([path]).get(path, [])
        language = own[0].language if own else None
    if language is None:
        return []
    meaning = _Meaning(reader=reader)
    for s in top:
        meaning.add(s.path, s.qualname, s.language)
    parts = module_parts(path, language)
    if parts:
        keys = {".".join(parts[i:]) for i in range(len(parts))}
        meaning.keys |= keys
        meaning.full.add(".".join(parts))
        meaning.names.add(parts[-1])
    by_file: dict[str, list[RefRow]] = {}
    for row in sorted(_aliased(reader, meaning), key=lambda r: (r.path, r.line)):
        if row.path != path and row.name != "*" and row.kind not in NO_USE_KINDS and meaning.means(row):
            by_file.setdefault(row.path, []).append(row)
    out: list[RefRow] = []
    for rows in by_file.values():
        at_top = [r for r in rows if not r.scope]
        out.extend(at_top or rows)
    return out


def spells(target: str, keys: frozenset[str]) -> bool:
    """Whether ``target`` is one of ``keys``, or spells more before their longest (a
    monorepo's package, Go's ``host/module/dir``)."""
    return target in keys or (bool(keys) and target.endswith("." + max(keys, key=len)))
