"""Find a file's references on the tree its chunker parsed (see :mod:`repolens.chunking.refs`).

One tree-sitter query per language (:mod:`.specs`) captures, in one pass
of the tree in C, the *name* nodes that matter, under shared capture names:

``call``       the name a call calls (``f`` of ``f()``, ``a.b.f()``, ``Type::f()``)
``base``       a base class or implemented interface
``decorator``  a decorator or annotation
``type``       a type named in an annotation, a declaration, a ``new``
``attr``       the name of an attribute or member access (``obj.name``)
``name``       a plain identifier where a value is passed on (an argument, a
               returned or assigned value): kept only when the file binds
               that name (a definition or an import of its own)
``bind``       a name a function binds locally (a parameter, an assignment):
               a use of it there is not a reference to anything outside
``skip``       a name node that is no use (a definition's own name)
``import``     an import statement, read by the language's handler (:mod:`.imports`)
``self``       a method's receiver variable (Go), read as ``self``
``call.self``  a call without a receiver that means ``this.f()`` when no
               definition of the class, the module or an import names it
               (a method a Java class inherits); a ``call`` otherwise
``name.member`` a plain identifier read or written where a value stands
               (C#'s ``return Total * 2;``): a ``name``, kept only when the
               file declares a ``property`` of that name (a C# property or
               event), which means ``this.Total`` there
``property``   the name of such a property where it is declared
``open``       a class's bases (in its declaration, not an object expression's),
               or its ``partial``: a capitalised ``name.member`` read in it that
               the file does not declare means ``this.Total`` all the same (a
               base's property, another part's); a default function called in
               it (Kotlin's ``check()``) may be one it inherits

A use is keyed by where its name starts; its kind is the first of call,
base, decorator, type, attr, name that captured it. Its receiver is the
chain of names before it (``a.b`` of ``a.b.f``), read back from the text.

Only name nodes are captured, never whole expressions: a file has about one
use per line of code, and after tree-sitter's pass (and the node objects
py-tree-sitter makes of its captures) each costs a few Python operations:
the captures are read in bulk, and a use's row is written from what was
worked out once per file for its name (or its receiver) in its definition.

Resolution within the file, in order: a name bound by an import in the same
function, then a local (skipped), then a name the module binds (its own
top-level definitions, its imports); ``self.x`` / ``this.x`` to the
enclosing class, ``super().x`` to its bases; ``mod.x`` through the import
that bound ``mod``. Anything else is a name match.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence

import tree_sitter as ts

from repolens.chunking import Symbol
from repolens.chunking.grammars import LangSpec, load_language
from repolens.chunking.refs import (
    ACCESS_KIND,
    QUALIFIED_LANGUAGES,
    Ref,
    RefRows,
    clean_scope,
    enclosing,
    extension_function,
    package_key,
    receivers,
    ref_row,
    same_file_key,
    split_key,
    type_name,
)
from repolens.chunking.refs.captures import (
    START,
    in_file_order,
    no_cyclic_collection,
    outside,
    text_of,
)
from repolens.chunking.refs.extracting import FUNCTION_KINDS, RefSpec, Scopes
from repolens.chunking.refs.imports import Binding
from repolens.chunking.refs.scoping import FunctionScopes, untyped_in_scope
from repolens.chunking.refs.specs import REF_SPECS
from repolens.chunking.refs.targets import Targets
from repolens.chunking.refs.typed import read_typed
from repolens.chunking.refs.uses import Uses

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Captures naming a type where a namespace's may be meant (RefSpec.namespaces): not a decorator
# (C#'s [Obsolete] names ObsoleteAttribute).
_TYPE_CAPTURES = frozenset({"type", "call", "base"})
# Captures naming a type, never a method (RefSpec.implicit_self: Targets._own_member).
_TYPE_NAMES = frozenset({"type", "base"})


def _row_order(ref: Ref) -> tuple[int, bool, Ref]:
    """A reference's place among a file's: by line, a field's or member's after the uses."""
    return ref[1], ref[2] in ("field", "member"), ref


# The heads of a path naming a module from where it stands (with ``RefSpec.module_path``).
def _a_type(reversed_recv: bytes) -> bool:
    """Whether a receiver (reversed, as the main loop reads it) starts with a type's name
    (``Platform.get()``), not a value's (``socket``, ``this``, a constant's ``EMPTY``)."""
    head = reversed_recv.rpartition(b".")[2][::-1]
    return head[:1].isupper() and not head.isupper()


class _Memo(dict):
    """A dict that makes a missing value with ``make(key)`` and keeps it: a
    hit costs one lookup in C."""

    def __init__(self, make: Callable[[Any], Any]) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.make(key)
        return value


# Captures of a name without a receiver that means ``this.name`` when nothing the file binds
# names it (a member the class inherits, or another part of it declares), by their use's kind.
_SELF_CAPTURES = {"call.self": "call", "name.self": "name"}
_LOCAL = "local"  # a template's stand-in: the name is a local's (see _Extraction._plain_row)


def _escaped(text: str) -> str:
    """``text`` inside a ``%`` template."""
    return text.replace("%", "%%")


@functools.cache
def _query(module: str, entry: str, language: str) -> ts.Query | None:
    lang = load_language(module, entry)
    spec = REF_SPECS.get(language)
    if lang is None or spec is None:
        return None
    return ts.Query(lang, spec.query)


def extract_refs(
    tree: ts.Tree,
    src: bytes,
    spec: LangSpec,
    path: str,
    symbols: Sequence[Symbol],
    nlines: int,
    spans: Callable[[], Sequence[tuple[int, int]]] | None = None,
) -> RefRows | None:
    """The references of one parsed file (see the module docstring); None
    for none, or a language without a reference spec. ``spans()``: the bytes
    of each of ``symbols``' definitions (see :class:`.extracting.Scopes`),
    asked only of a language whose spec reads them (``RefSpec.byte_scopes``)."""
    rs = REF_SPECS.get(spec.name)
    query = _query(spec.module, spec.entry, spec.name) if rs is not None else None
    if rs is None or query is None:
        return None
    extraction = _Extraction(rs, src, path, symbols, nlines, spans() if rs.byte_scopes and spans else None)
    with no_cyclic_collection():
        return extraction.run(ts.QueryCursor(query).captures(tree.root_node))


def _reexport(node: ts.Node) -> bool:
    """An ``export`` statement that only names what it exports (``export { a } from``)."""
    return node.child_by_field_name("source") is not None or any(
        c.type == "export_clause" for c in node.named_children
    )


class _Extraction(Uses, Targets):
    def __init__(
        self,
        rs: RefSpec,
        src: bytes,
        path: str,
        symbols: Sequence[Symbol],
        nlines: int,
        spans: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        self.rs = rs
        self.src = src
        self.path = path
        self.scopes = Scopes(symbols, nlines, spans)
        self.package = package_key(path, rs.language)
        self.qualified = rs.language in QUALIFIED_LANGUAGES  # keyed by qualified name, not by file
        # Names the module binds: its top-level definitions, then its imports. An impl
        # (Rust's ``impl Clone for Circle``, Dart's ``extension on T``) is named after its
        # type but labelled otherwise: its name means the type, not the impl.
        self.module: dict[str, str] = {
            s.name: self._own_key(s.qualname, s.kind not in FUNCTION_KINDS)
            for s in symbols
            if not s.parent and s.kind != "impl"
        }
        for s in symbols:
            if not s.parent and s.kind == "impl":
                self.module.setdefault(s.name, self._own_key(s.name))
        self.modules_bound: set[str] = set()  # names bound to a module, not to a definition in it
        self.foreign: set[str] = set()  # names the module binds from another crate (Rust)
        self.file_namespaces: list[tuple[int, str]] = []  # (first line, key) of each namespace (PHP)
        self.local_imports: dict[tuple[int, str], str] = {}
        self.star = False  # an import of every name of a module: an unknown name may be one
        self.includes = False  # a C or C++ #include: a header it names may declare an unknown name
        self.globs: set[str] = set()  # the definitions holding such an import ("" the file)
        self.typed: dict[tuple[int, str], str] = {}  # (function, local) -> the key of its type
        # With block scopes: (function, local) -> (from byte, to byte, key) of each typed binding.
        self.scoped: dict[tuple[int, str], list[tuple[int, int, str]]] = {}
        self.fields: dict[tuple[str, str], tuple[str, int]] = {}  # (class, field) -> its type's key, line
        self.members: list[tuple[str, str, int]] = []  # Go: (interface, method, line) of its method set
        self.binds: set[tuple[int, bytes]] = set()  # (function, name) of the names bound locally
        # With function scopes (rs.function_scopes): the file's functions, and where each
        # (function, name) bound locally is visible (ranges of FunctionScopes.where).
        self.fscopes: FunctionScopes | None = None
        self.bind_ranges: dict[tuple[int, bytes], list[tuple[int, int]]] = {}
        self.partial: set[bytes] = set()  # the names of locals visible in less than their function
        self.block_spans: dict[int, tuple[int, int]] = {}  # where such a local's name starts -> its bytes
        self.class_members: set[tuple[str, str]] | None = None  # (class, member) of the file, when asked
        self.kinds: dict[str, str] = {}  # the file's definitions' kinds by qualified name, with class_members
        self.methods: set[tuple[str, str]] = set()  # (class, name) of its methods, with class_members
        self.receivers: dict[int, str] = {}  # function -> its receiver variable (Go)
        self.qualifiers: frozenset[str] | None = None  # C++: the names written before ::, when asked
        # What a language's own rules add (rs.rules; Python's :mod:`.python_types`, :mod:`.fixtures`):
        self.symbols = symbols
        self.fixture_params: dict[tuple[int, str], str] = {}  # (function, parameter) -> its fixture's key
        self.class_names: dict[tuple[str, str], str] = {}  # (class, name) -> its member's key, in its body
        self.bases: dict[str, list[str]] = {}  # class -> its bases of this file (qualified names)
        self.opened: set[str] = set()  # the classes naming a base, or said partial (``open``)
        self.shadowed: dict[tuple[int, str], frozenset[str]] = {}  # (function, local) -> its class's names
        self.hidden: dict[tuple[bytes, int, int], frozenset[str]] = {}  # such a receiver -> those names
        self.refs: list[Ref] = []  # of imports, fields and members (the uses are rows: see run)
        self.chains: dict[int, bytes] = {}  # a member's start -> its receiver read from the tree (Rust)
        self.padded = b""  # the source after a NUL byte, and the bytes ending a member's separator: see run
        self.separator_ends: frozenset[int] = frozenset()
        self.names: set[str] = set()  # the names of the rows
        self.owner = self.scopes.owner
        # by definition (the last: outside every one), its name as a row holds it
        self.scope_names = [clean_scope(s.qualname) for s in symbols]
        self.scope_names.append("")

    def run(self, caps: dict[str, list[ts.Node]]) -> RefRows | None:
        """The file's references as rows (None for none).

        The loop below runs once per use (a million-line corpus holds ~1.3
        million), so it does little: the captures are read in bulk before it
        (``map`` over the nodes, no Python frame per node), a use writes its
        row at once (no :class:`Ref` made, then formatted), and what its row
        depends on besides its line (its name or its receiver, and the
        definition it is in) is worked out once per file."""
        src = self.src
        inner = self.scopes.inner
        shared = self.scopes.shared  # lines several definitions share: a use's is by its byte
        if self.rs.function_scopes:
            self.fscopes = FunctionScopes(caps.get("function", ()))
        skip_ranges = self._imports(in_file_order(caps.get("import", ())))
        if self.rs.namespace_classes:  # PHP: where each namespace of the file starts, and its key
            for node in caps.get("namespace", ()):
                name = node.child_by_field_name("name")
                key = ".".join(split_key(src[name.start_byte : name.end_byte].decode())) if name else ""
                self.file_namespaces.append((node.start_point[0] + 1, key))
            self.file_namespaces.sort()
        excluded = self._locals(caps.get("bind", ()), caps.get("bind.block", ()))
        excluded.update(map(START, caps.get("skip", ())))
        self.receivers = self._receivers(in_file_order(caps.get("self", ())))
        self.typed = read_typed(self, in_file_order(caps.get("typed", ())))
        for rule in self.rs.rules:
            rule(self, caps)
        self.opened = self._open_classes(caps.get("open", ()))
        fscopes = self.fscopes
        if fscopes is not None or self.rs.shadowing_lets:
            untyped_in_scope(self.bind_ranges, self.typed, self.scoped)
        # a member's name: padded[start] (the byte before it; none before the first) in separator_ends
        padded = self.padded = b"\0" + src
        receiver, separator_ends = receivers.reader(self.rs)
        self.separator_ends = separator_ends
        uses = self._uses(caps, excluded)
        shadows = self._shadows()
        bind_ranges = self.bind_ranges
        builtins = self.rs.builtins
        scope_names = self.scope_names
        names = self.names
        text = text_of(src)
        reversed_src = src[::-1]
        size = len(src)
        block_scopes = self.rs.block_scopes
        accesses = self.rs.field_access
        members = _Memo(self._receiver_prefix)  # (reversed receiver, definition, 0) -> target less the name
        hidden = self.hidden
        plain = _Memo(self._plain_row)  # (capture, name, definition) -> its rows' template, None for none
        outer = _Memo(lambda k: self._type_row(*k))  # the same, of a name not a local where it stands
        owner = self.owner
        extensions = self._extensions() if self.rs.extension_calls else {}
        chains = self.chains
        rows: list[str] = []
        lines: list[int] = []
        for start in outside(sorted(uses), skip_ranges):
            capture, node = uses[start]
            line = node.start_point[0] + 1
            at = inner[line] if not shared or line not in shared else self.scopes.at(line, start)
            name = text[start : node.end_byte]
            if not name.isidentifier():  # a name holding its own receiver (Perl's Foo::g), or $x
                template = self._odd_row(capture, name, at, node)
            elif padded[start] in separator_ends and src[max(start - 3, 0) : start] != b"...":
                # a member (not a spread's or variadic's name): its receiver is read back from the text
                m = receiver.match(reversed_src, size - start, size - start + receivers.RECEIVER_BYTES)
                recv = m.group(1) if m is not None else b"?"
                if chains:  # a receiver whose calls have arguments (Rust's builder chains)
                    recv = chains.get(start, recv)
                # with block scopes a local's type depends on where the use stands
                where = fscopes.where(start) if fscopes is not None else start if block_scopes else 0
                head = receivers.HEAD_REVERSED.search(recv) if shadows else None
                if head is not None and head.group() in shadows:
                    where = start  # a local of a block, named as something else the file binds
                key = (recv, at, where)
                prefix = members[key]
                if prefix and hidden and name in hidden.get(key, ()):
                    prefix = ""  # a member a local class defines over its base's
                if prefix and extensions and capture == "call" and name in extensions and not _a_type(recv):
                    # x.closeQuietly(), x a value of a known type, closeQuietly imported: the extension
                    rows.append(f"{name}\t{line}\tcall\t{scope_names[at]}\t{extensions[name]}\t")
                elif prefix:
                    kind = "attr" if capture == "name" else capture
                    if (
                        kind == "attr"
                        and accesses
                        and (padded[start] == 46 or node.type == "field_identifier")
                    ):
                        kind = ACCESS_KIND  # x.f (a macro's: .f): a field, no method
                    rows.append(f"{name}\t{line}\t{kind}\t{scope_names[at]}\t{prefix}{name}\t")
                elif capture == "attr" or capture == "name" or name in builtins:
                    continue  # obj.field of an unknown obj: a name match too weak to keep
                else:
                    extended = extensions.get(name, "") if capture == "call" else ""  # x.shout(): shout's
                    rows.append(f"{name}\t{line}\t{capture}\t{scope_names[at]}\t{extended}\t")
                lines.append(line)
                names.add(name)
                continue
            elif capture == "attr":
                continue  # an expression (or a spaced-out chain): not a name to follow
            else:
                template = plain[(capture, name, at)]
                if (  # a local of another function or block than the one the use stands in?
                    template is _LOCAL and bind_ranges and not self._bound_at(owner[at], name.encode(), start)
                ):
                    template = outer[(capture, name, at)]
                if template is _LOCAL:  # a local's name: no reference, unless it names a type
                    template = self._type_row(capture, name, at) if node.type == "type_identifier" else None
            if template is not None:
                rows.append(template % line)
                lines.append(line)
        # A field of a declared type, for other files' obj.field.name (kind field: never a use).
        for (owner, field), (key, line) in self.fields.items():  # field "": what a function returns
            scope = f"{owner}.{field}" if field else owner
            self.refs.append(Ref(type_name(key), line, "field", scope, key, ""))
        # A method an interface declares (kind member: never a use), for the types implementing it.
        for owner, method, line in self.members:
            self.refs.append(Ref(method, line, "member", f"{owner}.{method}", self._own_key(owner), ""))
        rows = self._with_refs(rows, lines)
        return RefRows("\n".join(rows), tuple(sorted(names))) if rows else None

    def _extensions(self) -> dict[str, str]:
        """The functions a call with a receiver of unknown type may be (``RefSpec.extension_calls``):
        those the file imports by name, and its own declared on a receiver type
        (Kotlin's ``fun String.shout()``), by name -> key."""
        out = {
            name: key
            for name, key in self.module.items()
            if key and key[0] != "=" and name not in self.modules_bound and name[:1].islower()
        }
        for s in self.symbols:
            if extension_function(s):
                out.setdefault(s.name, self._own_key(s.qualname))
        return out

    def _with_refs(self, rows: list[str], lines: list[int]) -> list[str]:
        """``rows`` (of uses, at ``lines``) with those of ``self.refs`` (the
        imports, then the fields and members) among them by line: on one
        line, imports before uses before the rest (a stable sort of them all,
        in that order)."""
        if not self.refs:
            return rows
        out: list[str] = []
        done = 0
        # by line, imports first, then each line's in a fixed order: the fields' and members'
        # are found from captures in no fixed order (py-tree-sitter's), the rows must be
        for ref in sorted(self.refs, key=_row_order):
            line = ref[1]
            after = ref[2] in ("field", "member")
            at = bisect.bisect_right(lines, line) if after else bisect.bisect_left(lines, line)
            out.extend(rows[done:at])
            done = max(done, at)
            out.append(ref_row(ref))
            self.names.add(ref[0])
        out.extend(rows[done:])
        return out

    def _plain_row(self, key: tuple[str, str, int]) -> str | None:
        """The template of the rows of a use of a name without a receiver
        (``capture``, ``name``, in definition ``at``), None when it is no
        reference, ``_LOCAL`` when the name is a local's (no reference but
        where a type is named)."""
        capture, name, at = key
        if capture in _SELF_CAPTURES:
            return self._plain_template(_SELF_CAPTURES[capture], name, at, name.encode(), receiverless=True)
        return self._plain_template(capture, name, at, name.encode())

    def _type_row(self, capture: str, name: str, at: int) -> str | None:
        """:meth:`_plain_row` of a type named like a local (a type is never a local), or of a
        name where no local of its name is visible."""
        if capture in _SELF_CAPTURES:
            kind = _SELF_CAPTURES[capture]
            return self._plain_template(kind, name, at, name.encode(), a_type=True, receiverless=True)
        return self._plain_template(capture, name, at, name.encode(), a_type=True)

    def _plain_template(
        self,
        capture: str,
        name: str,
        at: int,
        raw: bytes,
        *,
        a_type: bool = False,
        receiverless: bool = False,
    ) -> str | None:
        fn = self.owner[at]
        if fn >= 0 and (fn, name) in self.local_imports:
            target = self.local_imports[(fn, name)]
        elif fn >= 0 and (fn, name) in self.fixture_params:  # a test's parameter: a pytest fixture
            target = self.fixture_params[(fn, name)]
        elif (fn, raw) in self.binds and not a_type:
            return _LOCAL  # a local of the function: no reference
        elif fn < 0 and self.class_names and (self._class_of(at), name) in self.class_names:
            target = self.class_names[(self._class_of(at), name)]  # a class body's own member
        elif self.rs.implicit_self and (member := self._own_member(at, name, capture in _TYPE_NAMES)):
            target = member  # a member of its own class, called without a receiver
        elif self.rs.module_path is not None and (member := self._module_item(at, name)):
            target = member  # an item of the inline module the use is in
        else:
            target = self.module.get(name, "")
            if target and name in self.modules_bound:
                return None  # the module itself, not a definition
        if not target and receiverless and name not in self.rs.builtins:
            owner = self.scopes.owner_class(at)
            target = self._own_prefix(owner) + name if owner else ""  # this.name, of a base class
        if not target:
            if (capture == "name" and not self.rs.package_members) or name in self.rs.builtins:
                return None  # a plain word the file does not bind: noise
            if name in self.rs.default_functions and not self._inherits(at):
                return None  # the language's own (Kotlin's check()), no function of the package
            # new Invoice(), Invoice x: of a namespace in scope; new Item(): of the one it is in
            a_class = capture != "call" or name[:1].isupper()
            target = self.unbound_key(name, at, namespaced=capture in _TYPE_CAPTURES, in_namespace=a_class)
        return self._template(name, capture, at, target)

    def _inherits(self, at: int) -> bool:
        """Whether definition ``at`` is in a class naming a base (or in one a class naming one
        holds): a name called alone there (``run()``) may be a member it inherits before the
        language's own function, so it is keyed as its package's as ever (a question tells an
        inherited method's: ``references._calls_inherited``)."""
        owner = self.scopes.owner_class(at)
        while owner:
            if owner in self.opened:
                return True
            owner = enclosing(owner)
        return False

    def _odd_row(self, capture: str, raw: str, at: int, node: ts.Node) -> str | None:
        """The template of the row of a name that holds its receiver (Perl's
        ``Foo::g``) or is no identifier (``$x``), None when it is no
        reference: what the main loop does, for these few."""
        m = receivers.LAST_NAME.search(raw)
        if m is None:
            return None
        name, recv = m.group(1), receivers.CHAIN_SEP.sub(".", raw[: m.start()]).strip(".:\\")
        if not recv:
            template = self._plain_template(capture, name, at, raw.encode())
            if template is _LOCAL:
                a_type = node.type == "type_identifier"
                return self._plain_template(capture, name, at, raw.encode(), a_type=True) if a_type else None
            return template
        kind = "attr" if capture == "name" else capture
        prefix = self._member_prefix(recv, at, node.start_byte)
        if not prefix and kind == "attr":
            return None
        if kind == "attr" and self.rs.field_access and node.type == "field_identifier":
            kind = ACCESS_KIND  # (x.r#type)
        return self._template(name, kind, at, prefix + name if prefix else "")

    def _template(self, name: str, kind: str, at: int, target: str) -> str | None:
        """The row of a use less its line, ``template % line`` makes it; None
        for a name match of a builtin."""
        if not target:
            if name in self.rs.builtins:
                return None
        elif target[0] not in "=^@?":
            name = target.rpartition(".")[2]  # an alias (import x as y) is a use of x
        self.names.add(name)
        scope = self.scope_names[at]
        return f"{_escaped(name)}\t%d\t{kind}\t{_escaped(scope)}\t{_escaped(target)}\t"

    # -- imports -------------------------------------------------------------
    def _imports(self, nodes: Sequence[ts.Node]) -> list[tuple[int, int]]:
        """Read the import statements; their byte ranges (which hold no other use)."""
        handler = self.rs.imports
        ranges = []
        for node in nodes:
            if node.type != "export_statement" or _reexport(node):  # export function f() {...} holds code
                ranges.append((node.start_byte, node.end_byte))
            if handler is None:
                continue
            line = node.start_point[0] + 1
            at = self.scopes.at(line, node.start_byte)
            fn, scope = self.scopes.owner[at], self.scopes.qualname(at)
            for b in handler(node, self.src, self.path):
                self._bind(b, fn, scope)
        ranges.sort()
        return ranges

    def _bind(self, b: Binding, fn: int, scope: str) -> None:
        if b.export:  # export default function f() {...}: the statement is the module's, not f's
            fn, scope = -1, ""
        if not b.bound and self.rs.included:  # #include "widget.h"
            self.includes = True
        if b.bound == "*":
            self.star = True
            self.globs.add(scope)
        elif b.bound and not (b.export and b.bound == b.used):  # export { x }: x is bound already
            if fn >= 0:
                self.local_imports[(fn, b.bound)] = b.target
            else:
                self.module[b.bound] = b.target
                if not b.used:
                    self.modules_bound.add(b.bound)
                if b.foreign:
                    self.foreign.add(b.bound)
        if b.used:
            kind = "export" if b.export else "import"
            target = b.target or self.module.get(b.used, same_file_key(b.used))
            binds = b.bound if fn < 0 and (b.reexport or b.export) else ""
            self.refs.append(Ref(b.used, b.line, kind, scope, target, binds))

    def _receivers(self, nodes: Sequence[ts.Node]) -> dict[int, str]:
        """The receiver variable of each method that names one (Go's ``func (r *T)``)."""
        out = {}
        for node in nodes:
            at = self.scopes.function[node.start_point[0] + 1]
            if at >= 0:
                out[at] = self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")
        return out
