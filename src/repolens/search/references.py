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
  (subclasses are found the same way: uses of the class as a base). In
  TypeScript (:mod:`repolens.search.ref_members`) it is one member with
  those it implements or overrides and every member implementing or
  overriding them: their uses and declarations are its own.
* **Go** (:mod:`repolens.search.golang`): a package is also meant by the
  path its module's ``go.mod`` gives it, and a method by a call through an
  interface its type has every method of; a struct embedding a type is one
  of its subclasses.
* **Rust** (:mod:`repolens.search.cargo`): a crate's library is also
  named by the crate's name its ``Cargo.toml`` gives (``use clap::Arg``
  in its tests and its workspace's other crates), and ``crate::X`` in its
  source is that name's ``X``; a local of a type so named (``?clap.Arg``)
  is that type's where the repository defines the crate.
* **PHP** (:mod:`repolens.search.php`): a definition is also named by the
  namespace its file declares it in (``use App\\Shop\\Item``).
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

from repolens.chunking.refs import (
    IN_NAMESPACES,
    NO_USE_KINDS,
    module_parts,
    package_key,
    same_file_key,
    split_key,
)
from repolens.record import Record
from repolens.search import cargo, golang
from repolens.search.arity import own_calls
from repolens.search.kept import lines_of, symbols_in
from repolens.search.ref_fixtures import Fixtures
from repolens.search.ref_keys import (
    Class,
    Meaning,
    Paths,
    Read,
    aliased,
    defined,
    defined_in,
    family,
    keys_of,
    other_names,
    qualname_key,
    read_aliased,
)
from repolens.search.ref_members import (
    CONSTRUCTORS,
    DECLARING_LANGUAGES,
    REDEFINING_LANGUAGES,
    classes_above,
    declarations,
    members_named,
    related,
)
from repolens.search.ref_namespaces import included
from repolens.search.symbols import PROTOTYPING
from repolens.store.base import IndexReader, NameMatch, RefRow, SymbolFilters, SymbolRow, normalize_symbol

# Rounds of subclasses followed for a method's inherited uses.
CLASS_ROUNDS = 3
# Rounds of types followed from a method's class through the fields and parameters declaring
# a value of it (c.req.header: Context.req, then MiddlewareHandler.0 of Context; hono's
# app.get('/', (c) => c.req.query()): Context, H, HandlerInterface, Hono's base, Hono), by
# the method's language: TypeScript's callbacks take their types from their context
# (chunking/refs/contextual.py), several types away. Elsewhere one round, the fields of the
# method's own class and its subclasses': six rounds found 6 more of jedi's 1,184 Python
# uses and cost sympy's Expr methods a minute each (541 types read for one question). Rust two:
# a method of another type returning the class (Command::find -> Option<&Arg>) is reached through
# that type's keys and re-exports (clap's tests: ?clap.Command.find.get_id, clap.Command a pub use).
# Python three, within TYPES_READ: a field's owner is followed for its re-exports and the values
# declared of it (app.config.from_file: Flask.config, then flask.Flask), and its subclasses' for a
# field a base declares (@app.cli.command(): Scaffold.cli, Scaffold, then its subclass Flask).
FIELD_ROUNDS = {"typescript": 6, "tsx": 6, "rust": 2, "python": 3}
# Types read after the first round, in all: a question's bound where a type is everywhere.
# Python's fewer: its values' types are a few steps from the method (a field's owner, its
# re-exports and subclasses), and a popular class's are many (corpus-1m's sympy and Django).
TYPES_READ = 120
TYPES_READ_OF = {"python": 30}
# Paths from a type to the method followed in all (a type with many fields of one type).
PATHS = 2_000
# Subclasses of one round whose re-exports are followed (sympy's Expr has hundreds:
# reading every use of each name would cost seconds for the few a package re-exports).
ALIASED_SUBCLASSES = 30
# Definitions one step of a walk may fan out to (a name defined in hundreds of places).
FAN_OUT = 200


class Resolved(Record):
    """The uses of one definition: resolved to it, and name matches."""

    definition: SymbolRow
    resolved: list[RefRow]
    name_matches: list[RefRow]


def references(reader: IndexReader, definition: SymbolRow) -> Resolved:
    """Every use of ``definition`` (see the module docstring), each list in
    path and line order; the definition's own name at its first line is
    not a use."""
    meaning = Meaning(reader=reader)
    meaning.add(definition.path, definition.qualname, definition.language)
    for other in _declared_apart(reader, definition):  # C++'s void draw(); and void Widget::draw() {...}
        meaning.add(other.path, other.qualname, other.language)
    for name in other_names(reader, definition):  # Kotlin's shout of String.shout, A.build of A.Factory.build
        meaning.add(definition.path, name, definition.language)
    if (  # new C() and C() call the constructor; Rust's new is a function like another
        definition.name in CONSTRUCTORS and definition.parent and definition.language not in _NO_CONSTRUCTORS
    ):
        for cls in defined(reader, definition.parent, definition.path):
            meaning.add(cls.path, cls.qualname, cls.language)
            meaning.constructs = True
    read = Read()
    fixtures = Fixtures(reader)  # a test's parameters and their members: pytest's fixtures
    rows = fixtures.resolve(aliased(reader, meaning, read))
    members = None  # TypeScript: the members a method is one with (the language service's references)
    if (
        definition.kind == "method"
        and definition.parent
        and definition.language in DECLARING_LANGUAGES
        and definition.name not in CONSTRUCTORS
    ):
        members = related(reader, definition)
    bare: dict[str, list[tuple[str, str]]] = {}  # Kotlin's calls in subclasses, keyed as the package's
    if definition.kind == "method" and definition.parent and _unmet(rows, meaning, definition.name):
        # Only uses resolved to another key can mean the method through its
        # class (a subclass's self.x, the class's re-exports): a popular
        # class's subclasses and importers are read only when there is one.
        # Go: the uses of the classes' names read once for the three walks (its types are few; a
        # Python hierarchy's are many, and a shared read would be gone through again each round).
        of_classes = Read() if definition.language == "go" else None
        subclasses = _inherited(reader, definition, meaning, of_classes)
        bare = _bare_calls(subclasses, definition.name)
        if definition.language == "go":  # embedding and interfaces: Go's types are followed like its class
            others = subclasses + _through_interfaces(reader, definition, meaning, rows, of_classes)
        elif members is not None:  # through the interfaces and classes it is one member with
            others = subclasses + members.classes
            for path, qualname, language in members.classes:
                meaning.add(path, f"{qualname}.{definition.name}", language)
        elif definition.language in OVERRIDING_LANGUAGES:  # through the types above declaring it
            others = subclasses + _overridden(reader, definition, meaning)
        else:  # (a popular Python class's subclasses would cost seconds, for no use found)
            others = []
        _through_class_aliases(reader, definition, meaning, others, of_classes)
        rows = fixtures.resolve(aliased(reader, meaning, read))
    own = family(definition.language)
    resolved: list[RefRow] = []
    matches: list[RefRow] = []
    if definition.kind == "method" and definition.parent and definition.language in REDEFINING_LANGUAGES:
        resolved += declarations(reader, definition, members)
    first_line: list[RefRow] = []  # on the definition's first line: its own name, or a recursive call
    for row in sorted(rows, key=lambda r: (r.path, r.line)):
        if row.kind in NO_USE_KINDS:
            continue
        if row.path == definition.path and row.line == definition.start_line and row.kind != "import":
            if meaning.means(row):
                first_line.append(row)
            continue
        if meaning.means(row) or (bare and _calls_inherited(row, bare)):
            if not meaning.constructs or row.name == definition.name or row.kind == "call":
                resolved.append(row)
        elif row.name == definition.name and row.language in own and _unsure(reader, row):
            matches.append(row)
    if first_line:
        resolved += _calls_on_its_first_line(reader, definition, first_line)
    if matches and (holder := _holder(reader, definition)) is not None:
        # A function defined in a function (repolens.chunking.nested) is named only inside
        # its holder, where the extraction kept its uses as name matches: those are its own.
        lines = range(holder.start_line, holder.end_line + 1)
        elsewhere: list[RefRow] = []
        for m in matches:
            (resolved if m.path == holder.path and m.line in lines else elsewhere).append(m)
        matches = elsewhere
    resolved = own_calls(reader, definition, resolved)  # Java: not another overload's send(a, b)
    resolved.sort(key=lambda r: (r.path, r.line))
    return Resolved(definition, *_one_per_line([r for r in resolved if r.name != "*"], matches))


# Languages with no constructor: a type is made by its literal (Rust's ``Circle { r }``), and
# ``new`` is a function called by its path, never through its type's other uses.
_NO_CONSTRUCTORS = frozenset({"rust"})


def _unsure(reader: IndexReader, row: RefRow) -> bool:
    """Whether ``row`` is resolved to no definition from its file: none, or a type of a namespace
    in scope (``?Invoice.Total``) that is not the one asked (its namespace may be a ``global
    using`` of another file's). A Rust member of another crate's type is sure where the
    repository defines the crate (``?clap.Arg.get_id``), as one of the crate's own type is."""
    if not row.target or row.target[0] != IN_NAMESPACES:
        return not row.target
    return row.language != "rust" or not cargo.own_crate_target(reader, row.target, row.path)


def _one_per_line(resolved: list[RefRow], matches: list[RefRow]) -> tuple[list[RefRow], list[RefRow]]:
    """The uses, one per line, as a reader (and a language server) counts them:
    ``Main m = new Main();`` names ``Main`` twice, ``f(f(x))`` calls ``f``
    twice, and each is one line to read; a line resolved is no name match."""
    lines: set[tuple[str, int]] = set()
    kept: tuple[list[RefRow], list[RefRow]] = ([], [])
    for rows, out in zip((resolved, matches), kept, strict=True):
        for r in rows:
            if (r.path, r.line) not in lines:
                lines.add((r.path, r.line))
                out.append(r)
    return kept


def _calls_on_its_first_line(reader: IndexReader, definition: SymbolRow, rows: list[RefRow]) -> list[RefRow]:
    """The use (one a line: :func:`_one_per_line`) meaning ``definition`` on
    its own first line beyond its own name, when that line names it again (a
    one-line recursive function, ``def f(n): return f(n - 1) if n else 0``,
    calls itself there)."""
    text = lines_of(reader, definition.path).get(definition.start_line, "")
    if len(re.findall(rf"(?<![\w$]){re.escape(definition.name)}(?![\w$])", text)) < 2:
        return []
    return sorted(rows, key=lambda r: r.kind != "call")[:1]


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


def _declared_apart(reader: IndexReader, definition: SymbolRow) -> list[SymbolRow]:
    """The other declarations and definitions of a C or C++ function or method: those of its
    qualified name in a header its file includes (``void draw();`` in ``widget.hpp``, for
    ``void Widget::draw() {...}`` in a source file including it), or in a file including
    its own. One function with it: a use of either is a use of each (a header and a source
    file of other names share no key, and a use in the source file is keyed ``=Q``)."""
    if definition.language not in PROTOTYPING or definition.kind not in ("function", "method"):
        return []
    want = qualname_key(definition.qualname)
    named = reader.symbols(NameMatch(names=(normalize_symbol(definition.name),)), SymbolFilters(), FAN_OUT)
    others = [
        s
        for s in named
        if s.path != definition.path
        and s.language in PROTOTYPING
        and s.kind in ("function", "method")
        and qualname_key(s.qualname) == want
    ]
    if not others:
        return []
    own, includes = _module_keys(definition), set(included(reader, definition.path))
    return [s for s in others if includes & _module_keys(s) or own & set(included(reader, s.path))]


def _module_keys(s: SymbolRow) -> set[str]:
    """The keys an ``#include`` of ``s``'s file may spell (``widget``, ``include.widget``)."""
    parts = module_parts(s.path, s.language)
    return {".".join(parts[i:]) for i in range(len(parts))}


def _classes_of(reader: IndexReader, method: SymbolRow) -> list[SymbolRow]:
    """The class of ``method``: in its file, or for Go (whose methods may be
    declared in another file than their type) in its package's folder, or for
    C++ (a method defined out of its class, ``void Widget::draw() {...}``) in
    the header declaring it."""
    found = [c for c in defined(reader, method.parent, method.path) if c.kind not in ("function", "method")]
    if found or method.language not in ("go", "cpp"):
        return found
    if method.language == "cpp":
        paths = dict.fromkeys(s.path for s in _declared_apart(reader, method))
        held = (c for p in paths for c in defined(reader, method.parent, p))
        return [c for c in held if c.kind not in ("function", "method")]
    return golang.types_named(reader, method.parent, method.path)


def _through_interfaces(
    reader: IndexReader, method: SymbolRow, meaning: Meaning, uses: list[RefRow], read: Read | None = None
) -> list[Class]:
    """Go: add ``I.name`` for every interface ``I`` the method's type
    implements (:func:`golang.implemented`), and for every interface
    embedding one of those: a call through it (``r.Use``, ``r`` a
    ``Router``) may run this method, as gopls counts it. Those interfaces,
    for the fields and functions of their type (``c.Writer.Flush()``)."""
    out: list[Class] = []
    for path, interface in golang.implemented(reader, method, uses):
        meaning.add(path, f"{interface}.{method.name}", "go")
        out.append((path, interface, "go"))
        of_interface = Meaning(reader=reader)
        of_interface.add(path, interface, "go")
        for use in aliased(reader, of_interface, read):
            if use.kind == "base" and use.scope and of_interface.means(use):
                meaning.add(use.path, f"{use.scope}.{method.name}", "go")
                out.append((use.path, use.scope, "go"))
    return out


# Languages whose file keys a call without a receiver as a function of its package when its
# class does not define the name (Kotlin's, Scala's top-level functions): the language calls
# the member the class inherits first, which only the question knows.
_PACKAGE_CALLING = frozenset({"kotlin", "scala"})


def _bare_calls(subclasses: Sequence[Class], name: str) -> dict[str, list[tuple[str, str]]]:
    """By file, (subclass, target) of the calls of ``name`` without a receiver in each
    subclass inheriting it, in a language of ``_PACKAGE_CALLING`` (keyed as its package's)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path, scope, language in subclasses:
        if language in _PACKAGE_CALLING:
            out.setdefault(path, []).append((scope, f"{package_key(path, language)}.{name}"))
    return out


def _calls_inherited(row: RefRow, bare: dict[str, list[tuple[str, str]]]) -> bool:
    """Whether ``row`` is a call without a receiver in a subclass :func:`_bare_calls` holds."""
    return row.kind == "call" and any(
        row.target == target and (row.scope == scope or row.scope.startswith(scope + "."))
        for scope, target in bare.get(row.path, ())
    )


def _unmet(rows: Iterable[RefRow], meaning: Meaning, name: str) -> bool:
    """Whether a use of ``name`` among ``rows`` is resolved to a key that does not mean the definition."""
    return any(r.name == name and r.target and not meaning.means(r) for r in rows)


def _through_class_aliases(
    reader: IndexReader,
    method: SymbolRow,
    meaning: Meaning,
    subclasses: Sequence[Class] = (),
    read: Read | None = None,
) -> None:
    """Add ``K.name`` for every key ``K`` of the method's class re-exported
    elsewhere (``flask.Flask`` for ``src/flask/app.py``'s ``Flask``): a typed
    local (``app = flask.Flask()``) names the method through it; and
    ``O.x.name`` for every class ``O`` declaring a field ``x`` of the
    method's class (``c.req.header``, ``c: Context``, ``req: HonoRequest``),
    or a function ``O`` returning one (Go's ``New().GET``, Python's
    ``requests.session().get``: through the function's re-exports too); the
    same for each of ``subclasses``, classes that have the method too (Go's
    ``Engine`` embedding ``RouterGroup``, an interface it implements). Then
    the same from each such type ``O`` in turn (and from its subclasses),
    ``FIELD_ROUNDS`` deep in TypeScript (at most ``TYPES_READ`` types after
    the first round): a value of ``O`` declared by another type's field or
    parameter is one more way to the method
    (``MiddlewareHandler.0.req.header``: TypeScript's callback typed by its
    context, :mod:`repolens.chunking.refs.contextual`). Each type is read
    once a round, for every path from it."""
    read = read if read is not None else Read()
    classes = [(c.path, c.qualname, c.language) for c in _classes_of(reader, method)]
    start = "." + method.name
    frontier: dict[Class, set[str]] = {c: {start} for c in [*classes, *subclasses[:ALIASED_SUBCLASSES]]}
    seen = {(c, start) for c in frontier}
    budget = TYPES_READ_OF.get(method.language, TYPES_READ)
    functions_of: dict[str, frozenset[str]] = {}  # a file's functions, by qualified name
    # Python follows subclasses a round further: one met on the way (its values are its base's)
    # that declares the path's first member itself (overrides the method, redeclares the field)
    # is not followed for it (a use through it is of its own member); and the types read after
    # the first round are those declaring a field first (the rounds exist for them, Flask.config:
    # a popular class's subclasses would crowd them out).
    python = method.language == "python"
    through_field: set[Class] = set()  # (Python's) the types met as a field's owner
    for round_ in range(FIELD_ROUNDS.get(method.language, 1)):
        below: dict[Class, set[str]] = {}
        ordered = list(frontier.items())
        if python:
            ordered.sort(key=lambda item: item[0] not in through_field)  # (stable: else in row order)
        types = ordered[:FAN_OUT]
        if round_:
            types = types[:budget]
            budget -= len(types)
        for cls, suffixes in types:
            for owner, prefix in _of_type(reader, meaning, cls, suffixes, read, functions_of):
                if len(seen) >= PATHS:  # (the keys are added all the same: the next round is bounded)
                    continue
                subclass = python and not prefix  # (a field's owner has the path to the field)
                fields = _declared_fields(reader, owner[0], owner[1]) if subclass else frozenset()
                for suffix in suffixes:
                    path = prefix + suffix
                    if subclass and _redeclares(reader, owner, path, fields):
                        continue
                    if (owner, path) not in seen and len(seen) < PATHS:
                        seen.add((owner, path))
                        below.setdefault(owner, set()).add(path)
                        if python and prefix:
                            through_field.add(owner)
        frontier = below
        if not frontier:
            break


def _of_type(
    reader: IndexReader,
    meaning: Meaning,
    cls: Class,
    suffixes: set[str],
    read: Read,
    functions_of: dict[str, frozenset[str]],
) -> list[tuple[Class, str]]:
    """Add ``K + suffix`` for every key ``K`` of a value of class ``cls`` and
    each of ``suffixes`` (the paths from such a value to the method): the
    class's own keys and re-exports, its fields' (``Context.req``) and
    functions' (``f`` returning it, through their re-exports). Returns the
    types to follow next, each with the part of the path from it before
    ``suffixes`` (each path is that part and one of ``suffixes``): those
    declaring such a field (a type's, not a function's parameter: no value
    is of a function's type), and the subclasses of ``cls``. ``functions_of``:
    the functions of each file met so far (filled as files are met)."""
    path, qualname, language = cls
    of_class = Meaning(reader=reader)
    of_class.add(path, qualname, language)
    rows = read_aliased(reader, of_class, read).typing_of(of_class)
    declared = _declared_fields(reader, path, qualname) if any(".*." in s for s in suffixes) else frozenset()
    paths = Paths(meaning, suffixes)
    paths.extend(of_class.keys, declared)
    paths.add_full(of_class.full, starred=False)
    returning = Meaning(reader=reader)  # functions re-exported elsewhere (from .sessions import session)
    passed: dict[str, Meaning] = {}  # the same, of functions taking a value of it (by the path to it)
    owners: list[tuple[Class, str]] = []
    for row in rows:  # a field of this class's type: obj.field.name, obj of the owning class
        if row.kind == "base" and row.scope and of_class.means(row):  # a subclass: its values are cls's
            owners.append(((row.path, row.scope, row.language), ""))
        if row.kind != "field" or not of_class.means(row):
            continue
        head, dot, rest = row.scope.partition(".")
        if not dot and row.language == "rust":  # a method's result (Command::find): through its type
            head, dot, rest = row.scope.rpartition("::")
        keys = keys_of(reader, row.path, row.scope, row.language)
        declared = _declared_fields(reader, row.path, head) if "*" in row.scope else frozenset()
        paths.extend(keys, declared)
        if "*" not in row.scope:
            if keys:
                paths.add_full((max(keys, key=len),))
            paths.add_same(row.path, same_file_key(row.scope))
        if row.language == "rust" and row.path == path and split_key(row.scope)[:-1] == split_key(qualname):
            # A builder's method returning its type (-> Self): through the type's re-exports too
            # (clap's tests: Arg::new("x").short('s').long(..), ?clap.Arg.short.long).
            paths.extend({f"{k}.{split_key(row.scope)[-1]}" for k in of_class.keys})
            continue  # (its own type: no other to follow)
        if "." not in row.scope and row.language in _REEXPORTING and len(returning.names) < FAN_OUT:
            returning.add(row.path, row.scope, row.language)
        if not dot:
            continue
        if row.path not in functions_of:
            symbols = symbols_in(reader, row.path)
            functions_of[row.path] = frozenset(s.qualname for s in symbols if s.kind == "function")
        if head not in functions_of[row.path]:
            owners.append(((row.path, head, row.language), f".{rest}"))
        elif row.language in _REEXPORTING and len(passed) < FAN_OUT:  # f.1.0: f's re-exports too
            passed.setdefault(rest, Meaning(reader=reader)).add(row.path, head, row.language)
    paths.close()
    if returning.names:
        passed[""] = returning
    for rest, functions in passed.items():
        before, longest = set(functions.keys), set(functions.full)
        read_aliased(reader, functions, read)
        via = Paths(meaning, [f".{rest}{suffix}" if rest else suffix for suffix in suffixes])
        via.extend(functions.keys - before)
        via.add_full(functions.full - longest)  # the longest keys only
        via.close()
    return owners


def _redeclares(reader: IndexReader, cls: Class, path: str, fields: frozenset[str]) -> bool:
    """Whether the class ``cls`` declares the first member of ``path`` itself: a method of
    its own (``Flask.add_url_rule``) or one of its ``fields`` (``self.cli = FlaskGroup()``)."""
    first = path[1:].partition(".")[0]
    return first in fields or bool(defined(reader, f"{cls[1]}.{first}", cls[0]))


def _declared_fields(reader: IndexReader, path: str, owner: str) -> frozenset[str]:
    """The members a type of ``path`` declares by name (``field`` rows ``owner.x``): a
    mapped type's member (``owner.*``) is none of those."""
    rows = reader.refs_of_files([path]).get(path, [])
    prefix = owner + "."
    return frozenset(
        r.scope[len(prefix) :] for r in rows if r.kind == "field" and r.scope.startswith(prefix)
    ) - {"*"}


# Languages whose modules re-export what they import (a function's other keys).
_REEXPORTING = frozenset({"python", "javascript", "typescript", "tsx"})


def _inherited(
    reader: IndexReader, method: SymbolRow, meaning: Meaning, read: Read | None = None
) -> list[Class]:
    """Add what means ``method`` through the subclasses of its class: their
    ``self.name`` where they do not define ``name`` (an override is met by
    its own subclasses, not this method's), and their ``super().name``; the
    subclasses that inherit it. Below an abstract method (:func:`_abstract`) the
    first class of each line defining it implements it: a call through that class
    is the abstract method's too, as JDT counts it (not through one overriding that
    implementation again). One read of uses per round of subclasses, whatever their number."""
    classes = _classes_of(reader, method)
    name = method.name
    abstract = {(c.path, c.qualname) for c in classes if _abstract(method, c)}  # above any implementation
    seen: set[tuple[str, str]] = set()
    out: list[Class] = []
    for _ in range(CLASS_ROUNDS):
        if not classes:
            return out
        of_classes = Meaning(reader=reader)
        of_abstract = Meaning(reader=reader)
        for cls in classes[:FAN_OUT]:
            of_classes.add(cls.path, cls.qualname, cls.language)
            if (cls.path, cls.qualname) in abstract:
                of_abstract.add(cls.path, cls.qualname, cls.language)
        subclasses = []
        for use in aliased(reader, of_classes, read):
            if (
                use.kind == "base"
                and use.scope
                and (use.path, use.scope) not in seen
                and of_classes.means(use)
            ):
                seen.add((use.path, use.scope))
                subclasses.append((use.path, use.scope, use.language, of_abstract.means(use)))
        defines = defined_in(reader, sorted({p for p, _, _, _ in subclasses}))
        classes = []
        inheriting = Meaning(reader=reader)
        for path, scope, language, below_abstract in subclasses:
            key = qualname_key(f"{scope}.{name}")
            meaning.supers.add((path, key))
            if (path, key) not in defines and below_abstract:
                abstract.add((path, scope))  # (an abstract class between: still none implementing it)
            elif (path, key) in defines and not below_abstract:
                continue
            meaning.add(path, f"{scope}.{name}", language)
            inheriting.add(path, scope, language)
            out.append((path, scope, language))
            classes.extend(s for s in symbols_in(reader, path) if s.qualname == scope)
        if inheriting.keys and len(inheriting.names) <= ALIASED_SUBCLASSES:
            # A subclass re-exported elsewhere (flask.Flask for src/flask/app.py's
            # Flask) names the method through that key too: app = flask.Flask(); app.route.
            before = set(inheriting.keys)
            aliased(reader, inheriting, read)
            suffix = "." + name
            meaning.keys |= {k + suffix for k in inheriting.keys - before}
            meaning.full |= {k + suffix for k in inheriting.keys - before}
    return out


# Languages whose calls through a type are uses of the methods it declares as of those its
# subtypes implement (JDT's references: ``s.area()``, ``s`` a ``Shape``, may run ``Circle.area``;
# ``c.area()``, ``c`` a ``Circle``, runs what ``Shape.area`` declares). Kotlin's language
# server and Roslyn count an ``override`` of an interface's, abstract or open member the same way.
OVERRIDING_LANGUAGES = frozenset({"java", "kotlin", "csharp"})


def _abstract(method: SymbolRow, cls: SymbolRow) -> bool:
    """Whether ``method`` of ``cls`` declares what its subclasses implement, in a language of
    ``OVERRIDING_LANGUAGES``: an interface's (a default method, a Kotlin body, too) or one said
    ``abstract`` (Kotlin's and C#'s ``open`` / ``virtual`` are not: a subclass inherits them)."""
    if method.language not in OVERRIDING_LANGUAGES:
        return False
    return cls.kind == "interface" or "abstract" in method.signature.partition("(")[0].split()


def _overridden(reader: IndexReader, method: SymbolRow, meaning: Meaning) -> list[Class]:
    """Add ``S.name`` for every class or interface ``S`` above the method's class declaring
    ``name`` (the method overrides or implements it): a call through ``S`` may run this
    method, as JDT (and Kotlin's and C#'s servers) count it. Those classes, for the fields and
    functions of their type."""
    own = [(c.path, c.qualname, c.language) for c in _classes_of(reader, method)]
    out: list[Class] = []
    for cls in classes_above(reader, own):
        if members_named(reader, cls, method.name):
            meaning.add(cls[0], f"{cls[1]}.{method.name}", cls[2])
            out.append(cls)
    return out


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
    meaning = Meaning(reader=reader)
    for s in top:
        meaning.add(s.path, s.qualname, s.language)
    parts = module_parts(path, language)
    if parts:
        keys = {".".join(parts[i:]) for i in range(len(parts))}
        meaning.keys |= keys
        meaning.full.add(".".join(parts))
        meaning.names.add(parts[-1])
    by_file: dict[str, list[RefRow]] = {}
    for row in sorted(aliased(reader, meaning), key=lambda r: (r.path, r.line)):
        if row.path != path and row.name != "*" and row.kind not in NO_USE_KINDS and meaning.means(row):
            by_file.setdefault(row.path, []).append(row)
    out: list[RefRow] = []
    for rows in by_file.values():
        at_top = [r for r in rows if not r.scope]
        out.extend(at_top or rows)
    return out
