"""What the reference rules outside :mod:`.extract` are written against.

:class:`RefSpec` is a language's query and the switches the extraction
reads (each language's is in :mod:`.specs`); :class:`Extracting` is the part
of one file's extraction (:mod:`.extract`) that the rules of other modules
read and set (the typed captures, :mod:`.typed`; a language's own rules,
run once its locals' types are read: ``RefSpec.rules``, Python's
:mod:`.python_types` and :mod:`.fixtures`); :class:`Scopes` says which
definition and function hold each line. Apart from the extraction, so that
the modules it runs import nothing that imports them.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import tree_sitter as ts

from repolens.chunking import Symbol
from repolens.chunking.refs import Ref
from repolens.chunking.refs.imports import ImportHandler
from repolens.chunking.refs.scoping import FunctionScopes

# Kinds of definition whose body binds local names.
FUNCTION_KINDS = frozenset({"function", "method"})


class Scopes:
    """For each line: the innermost definition holding it, and the function that owns its locals.

    A row names a use's line, not its column, and most lines are in one definition; on a
    line where definitions start or end beside each other (C#'s ``class P { void A() {...}
    void B() {} }``) the last to start on it is no answer for what stands before it. With
    the definitions' byte spans (``spans``, in the order of ``symbols``), :meth:`at` tells
    them apart there, :attr:`shared` says which lines need it."""

    def __init__(
        self, symbols: Sequence[Symbol], nlines: int, spans: Sequence[tuple[int, int]] | None = None
    ) -> None:
        self.symbols = symbols
        inner = [-1] * (nlines + 2)
        for i, s in enumerate(symbols):  # parents come before their members
            lo, hi = max(s.start_line, 0), min(s.end_line, nlines + 1)
            if hi >= lo:
                inner[lo : hi + 1] = [i] * (hi - lo + 1)
        self.inner = inner
        # by definition: the function that owns its locals (the last: outside every definition)
        owner = [i if s.kind in FUNCTION_KINDS else -1 for i, s in enumerate(symbols)]
        owner.append(-1)  # inner[line] == -1: outside every definition
        self.owner = owner
        self.function = list(map(owner.__getitem__, inner))
        # line -> (start byte, end byte, definition) of each definition holding it, parents first
        self.shared: dict[int, list[tuple[int, int, int]]] = {}
        if spans is not None and len(spans) == len(symbols):
            self._share(spans)

    def _share(self, spans: Sequence[tuple[int, int]]) -> None:
        """Fill :attr:`shared`: the lines on which two definitions start or end."""
        ends = Counter(line for s in self.symbols for line in {s.start_line, s.end_line})
        lines = sorted(line for line, n in ends.items() if n > 1)
        if not lines:
            return
        for i, s in enumerate(self.symbols):
            for k in range(bisect.bisect_left(lines, s.start_line), bisect.bisect_right(lines, s.end_line)):
                self.shared.setdefault(lines[k], []).append((*spans[i], i))

    def at(self, line: int, byte: int) -> int:
        """The innermost definition holding byte ``byte`` of line ``line`` (-1 none)."""
        held = self.shared.get(line)
        if held is None:
            return self.inner[line]
        found = -1
        for start, end, i in held:  # parents first: the last holding it is the innermost
            if start <= byte < end:
                found = i
        return found

    def function_of(self, node: ts.Node) -> int:
        """The function owning the locals where ``node`` stands (-1 none)."""
        return self.owner[self.at(node.start_point[0] + 1, node.start_byte)]

    def qualname(self, i: int) -> str:
        return self.symbols[i].qualname if i >= 0 else ""

    def owner_class(self, i: int) -> str:
        """The class whose ``self`` a use in definition ``i`` means ("" outside one)."""
        if i < 0:
            return ""
        s = self.symbols[i]
        if s.kind in FUNCTION_KINDS:
            return s.parent
        return "" if s.kind in ("module", "constant") else s.qualname


def text(ex: Extracting, node: ts.Node) -> str:
    """A node's source text, as a rule reads a name or a type."""
    return ex.src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def line_of(node: ts.Node) -> int:
    """A node's line, from 1 as a ``Ref`` counts."""
    return node.start_point[0] + 1


class Extracting(Protocol):
    """What the rules outside :mod:`.extract` read and set of one file's extraction."""

    rs: RefSpec
    src: bytes
    path: str
    scopes: Scopes
    symbols: Sequence[Symbol]
    module: dict[str, str]  # the names the module binds: its top-level definitions, its imports
    typed: dict[tuple[int, str], str]  # (function, local) -> the key of its type
    # With block scopes: (function, local) -> (from byte, to byte, key) of each typed binding.
    scoped: dict[tuple[int, str], list[tuple[int, int, str]]]
    fields: dict[tuple[str, str], tuple[str, int]]  # (class, field) -> its type's key, line
    members: list[tuple[str, str, int]]  # Go: (interface, method, line) of its method set
    class_names: dict[tuple[str, str], str]  # (class, name) -> its member's key, in its body
    bases: dict[str, list[str]]  # class -> its bases of this file (qualified names)
    shadowed: dict[tuple[int, str], frozenset[str]]  # (function, local) -> its local class's names
    fixture_params: dict[tuple[int, str], str]  # (function, parameter) -> its fixture's key
    refs: list[Ref]  # rows other than the uses (imports, fields, fixtures), in any order
    # Where a member's name starts -> its receiver, reversed as the main loop reads one, its calls'
    # arguments left out (Rust's ``Arg::new("x").short('s')``: ``Arg::new()``), from the tree.
    chains: dict[int, bytes]
    fscopes: FunctionScopes | None  # with function scopes: the file's functions (:mod:`.scoping`)

    def type_key(self, text: str, fn: int, typed: dict[tuple[int, str], str] | None = None) -> str:
        """The key of the type (or callee) ``text`` names in function ``fn`` ("" unknown)."""
        ...

    def named_type(self, text: str, fn: int) -> str:
        """The key of a type or callee named ``text`` in function ``fn`` (its
        declared form made plain; "" unknown, or a local of the function)."""
        ...

    def receiver_prefix(self, recv: str, at: int, where: int) -> str:
        """What ``recv.name`` in definition ``at`` resolves to, less the name ("" unknown),
        ``where`` the use stands (with block scopes)."""
        ...

    def bound_at(self, fn: int, raw: bytes, where: int) -> bool:
        """Whether ``raw`` is a local of function ``fn`` visible ``where`` a use stands."""
        ...

    def field(self, owner: str, name: str) -> str:
        """The key of the type of ``owner``'s field (or method's result) ``name``, declared in it
        or in a base class of this file ("" unknown)."""
        ...

    def field_path(self, base: str, names: Sequence[str]) -> str:
        """The key of ``names`` read one after the other from a value of the type ``base``
        (through the file's fields of a known type, then a path)."""
        ...

    def unknown_member(self, key: str) -> bool:
        """Whether ``key`` is a path through a member of a class of this file of no known type."""
        ...

    def visible(self, node: ts.Node) -> tuple[int, int]:
        """Where the local a ``typed`` node binds is visible (with block scopes)."""
        ...

    def function_at(self, line: int) -> tuple[int, str, str]:
        """The function owning ``line``'s locals (-1 none), the qualified name of
        the innermost definition holding it, and that function's name."""
        ...


# A language's own rule: what it reads and sets of a file's extraction, given its query's captures.
Rule = Callable[[Extracting, dict[str, list[ts.Node]]], None]


@dataclass(frozen=True)
class RefSpec:
    """A language's reference rules: its query (the capture names of :mod:`.extract`) and switches."""

    language: str
    query: str
    imports: ImportHandler | None = None
    self_names: frozenset[str] = frozenset({"self", "this"})
    super_names: frozenset[str] = frozenset({"super"})
    # Names never kept as a name match (the language's own), unless the file binds them.
    builtins: frozenset[str] = frozenset()
    # Functions every file sees without an import (Kotlin's default imports: ``check(x)``,
    # ``run { }``, ``require(x)``, ``listOf()``): one named alone that the file does not bind
    # is no reference, not its package's, but in a class naming a base (which may define it);
    # after a receiver the name is any method's (``task.run()``: a name match).
    default_functions: frozenset[str] = frozenset()
    # An unresolved name in a call or type means the package's own (Go, Java, ...):
    # the other files of the folder see it without an import.
    package: bool = False
    # Fields of a ``typed`` capture naming a local and its type (or the call making it).
    typed_fields: tuple[tuple[str, str], ...] = ()
    # A file's top-level names and its types' members are its package's, not the file's
    # (Go: a type's methods may be declared in any file of its folder): keyed by the package.
    package_members: bool = False
    # A call's result is keyed by its callee (``x.f().g``: ``g`` of what ``f`` returns),
    # which the language declares (Go's results: ``field`` rows of the function).
    call_results: bool = False
    # ``self.a.b.name`` (``x.a.b.name``, x of a class of the file): a member of what a field of
    # a known type holds, keyed by the path from that type (``Flask.config.name``), which a
    # question follows one step (Python's, TypeScript's ``this.a.b.name``).
    field_paths: bool = False
    # A local is visible in its block or function literal only (Go's closures rebind names):
    # a typed local is looked up where the use stands.
    block_scopes: bool = False
    # A function node is a scope of its own locals, a definition or not (TypeScript's
    # callbacks: :mod:`.scoping`); its ``function`` captures are those nodes.
    function_scopes: bool = False
    # Where a ``bind.block`` local is visible (:mod:`.scoping`): a block, a comprehension,
    # from its declaration on. None: the language captures none.
    bind_span: Callable[[ts.Node], tuple[int, int] | None] | None = None
    # A method calls its class's members without a receiver (Java's ``helper()``):
    # a name its class (or a class holding it) defines is that member.
    implicit_self: bool = False
    # What the language's own rules add once its locals' types are read, in order
    # (Python's results, local classes, class bodies, then pytest's fixtures).
    rules: tuple[Rule, ...] = ()
    # A chain of members breaks its lines before a dot, never after one (Python).
    dots_lead_lines: bool = False
    # ``->`` may separate a member from its receiver (C's ``p->x``, PHP's ``$o->f()``); where it
    # never does (a lambda's or a result's arrow: Java's ``x -> Money.format(x)``) it is no part
    # of a receiver.
    arrow_members: bool = True
    # ``.`` may separate a member from its receiver; where it joins strings instead (PHP's
    # ``$this->g() . self::unit()``, Perl's) it is no part of a receiver.
    dot_members: bool = True
    # A member's name may start with ``#`` (JavaScript's private ``this.#x``): part of a
    # receiver's name, not the end of the receiver.
    private_members: bool = False
    # An array's declared element type (``xs: T[]``, ``Array<T>``) is kept (a field's ``C.xs.[]``,
    # a local's key ending ``[]``: :mod:`.typed`) for what a callback over it or a ``for ... of``
    # takes (:mod:`.contextual`, TypeScript's rule): TypeScript's.
    array_elements: bool = False
    # A call on a value, of a function the file imports by name or declares on a receiver
    # type, is that function, whatever the value's type (Kotlin's extension functions:
    # ``"x".shout()`` after ``import a.shout``, ``socket.closeQuietly()`` with ``socket:
    # Socket``; the members of another file's type are not known here). Not on a type's name
    # (``Platform.get()``: its companion's).
    extension_calls: bool = False
    # A language whose files hold modules (Rust's ``mod tests { ... }``): a path's parts as a
    # key's, its leading ``crate``/``super`` resolved against the parts naming the module it
    # stands in (``super::f()``, ``crate::a::f()``); a use in such a module sees its items.
    module_path: Callable[[list[str], list[str]], list[str]] | None = None
    # A type the file does not bind may be one of a namespace it brings in wholesale (C#'s
    # ``using Billing.Models;``) or of one holding the use, or of none: keyed ``?Invoice``
    # (``?Invoice.Total`` for its member), which a question tries in each. With ``package``
    # (Java's ``import q.*;``, Kotlin's ``import q.*``) only in a file importing one wholesale,
    # where it is its package's or that one's; in any other, its package's.
    namespaces: bool = False
    # A name the file does not bind may be declared by a header it includes (C, C++: ``#include
    # "widget.h"``, then ``make_widget(x)``, ``Widget w``, ``Widget::create()``): keyed ``?name``
    # in a file including one, which a question tries in each header it includes (the header's
    # key, as its source file shares it: ``widget.make_widget``) and each namespace holding the use.
    included: bool = False
    # A ``let`` binds a name again in its block (Rust's shadowing ``let x = x.build()``): a
    # typed ``let``'s local is visible where its ``bind.block`` span says, and a binding of
    # no known type hides it there as a callback's parameter does (``untyped_in_scope``).
    # A type another crate defines (``Binding.foreign``) is keyed ``?`` and its path
    # (``?clap.Command``): it may be the repository's own crate's, named from its tests (``use
    # clap::Command``), which a question places by the crate's name (``repolens.search.cargo``),
    # or another crate's, a smart pointer's (``Rc<T>``) whose methods are its content's perhaps:
    # the members of such a local stay name matches.
    shadowing_lets: bool = False
    # A class named without its namespace is the namespace's the use is in (PHP's ``namespace
    # App\Shop;``: ``new Item()``, ``Item::make()``, ``Item $x`` are ``App\Shop\Item``'s; the
    # ``namespace`` captures say where each starts), a function is not (it falls back to the
    # global one); a name after a ``\`` is a qualified name's last, no receiver but the whole name.
    namespace_classes: bool = False
    # The key of the type a call of a path makes, by the language's conventions ("" unknown;
    # Rust's ``T::new()``: ``T``), given the extraction, the path and the function: ``T::new().g``
    # is ``g`` of it (where ``call_results`` keys it by the callee instead).
    result_type: Callable[[Extracting, str, int], str] | None = None
    # Definitions share lines (C#'s one-line ``class P { void A() {...} void B() {} }``): a use
    # on such a line is in the definition whose bytes hold it (:meth:`Scopes.at`).
    byte_scopes: bool = False
    # A name where a type's stands (a type, a receiver's head) is never one of the methods of
    # the class it is in (C#: ``Status x`` beside a property ``public Status Status``, which is
    # a method, is the enum's). Not where a class's constructor is a method of its name (C++).
    typed_apart: bool = False
    # A member named after a dot and not called is a field, never a method (Rust: a method is
    # called, ``x.short(``, or named by a path, ``Self::short``): its row is an ``access``
    # (``ACCESS_KIND``), no use of a definition.
    field_access: bool = False
