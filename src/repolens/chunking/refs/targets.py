"""Where a use leads: the key a name or a receiver means in a file (see :mod:`.extract`).

:class:`Targets` is the half of a file's extraction that answers, from what
the file binds (its definitions, imports, typed locals, fields, namespaces),
what ``name`` or ``recv.name`` at a place means: a key of this file
(``=Q``), of a module or package (``a.b.Q``), of a base class (``^Q``), of a
namespace in scope (``?Q``), or nothing (a name match). The extraction
(:class:`repolens.chunking.refs.extract._Extraction`) reads the captures and
sets the state below; these methods only read it, and are memoised there by
receiver and definition, so each is worked out once per file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from repolens.chunking import Symbol
from repolens.chunking.refs import (
    COMPANION,
    IN_NAMESPACES,
    companion_object,
    enclosing,
    module_parts,
    namespace_at,
    receivers,
    same_file_key,
    split_key,
)
from repolens.chunking.refs.extracting import FUNCTION_KINDS, RefSpec, Scopes
from repolens.chunking.refs.rust_types import SAME_ELEMENT, SAME_VALUE
from repolens.chunking.refs.scoping import FunctionScopes
from repolens.chunking.refs.typed import TYPE_NAME, plain_type

# Heads of a path that name a module from the one a use stands in (Rust's crate::, super::).
PATH_HEADS = frozenset({"crate", "super"})
# A name before ``::`` (C++'s ``std::sort``, ``system_clock::now``): a namespace's or a type's.
_QUALIFIER = re.compile(rb"([A-Za-z_]\w*)\s*::")


class Targets:
    """What a name or a receiver means in one file; the state is the extraction's."""

    rs: RefSpec
    src: bytes
    path: str
    symbols: Sequence[Symbol]
    scopes: Scopes
    package: str
    qualified: bool  # keyed by qualified name, not by file (QUALIFIED_LANGUAGES)
    module: dict[str, str]  # the names the module binds -> their keys
    modules_bound: set[str]
    foreign: set[str]
    file_namespaces: list[tuple[int, str]]
    local_imports: dict[tuple[int, str], str]
    star: bool
    includes: bool
    globs: set[str]
    typed: dict[tuple[int, str], str]
    scoped: dict[tuple[int, str], list[tuple[int, int, str]]]
    fields: dict[tuple[str, str], tuple[str, int]]
    binds: set[tuple[int, bytes]]
    fscopes: FunctionScopes | None
    bind_ranges: dict[tuple[int, bytes], list[tuple[int, int]]]
    class_members: set[tuple[str, str]] | None
    kinds: dict[str, str]
    methods: set[tuple[str, str]]  # (class, name) of the file's methods, with class_members
    receivers: dict[int, str]
    bases: dict[str, list[str]]
    shadowed: dict[tuple[int, str], frozenset[str]]
    hidden: dict[tuple[bytes, int, int], frozenset[str]]
    owner: list[int]
    qualifiers: frozenset[str] | None  # C++: the names the file writes before ``::``, when asked

    def bound_at(self, fn: int, raw: bytes, where: int) -> bool:
        """:meth:`_bound_at`, for the language's own rules."""
        return (fn, raw) in self.binds and self._bound_at(fn, raw, where)

    def _bound_at(self, fn: int, raw: bytes, where: int) -> bool:
        """Whether ``raw``, bound locally in function ``fn``, is visible ``where`` a use
        stands: its byte, or with function scopes its function's
        (:meth:`.scoping.FunctionScopes.where`), but for a name :meth:`_shadows` names.
        Always where every binding of it is its function's."""
        ranges = self.bind_ranges.get((fn, raw))
        return ranges is None or any(lo <= where < hi for lo, hi in ranges)

    def function_at(self, line: int) -> tuple[int, str, str]:
        """The function owning ``line``'s locals (-1 none), the qualified name of
        the innermost definition holding it, and that function's name."""
        fn = self.scopes.function[line]
        own = self.symbols[fn].name if fn >= 0 else ""
        return fn, self.scopes.qualname(self.scopes.inner[line]), own

    def _class_of(self, at: int) -> str:
        """The class whose body definition ``at`` is ("" none)."""
        return self.symbols[at].qualname if at >= 0 and self.symbols[at].kind == "class" else ""

    def _own_key(self, qualname: str, container: bool = True) -> str:
        """The key of a definition of this file: ``=Q``, its package's (``package_members``),
        or its qualified name (:data:`QUALIFIED_LANGUAGES`: but a function's outside every
        namespace, ``container`` False, which is the file's own)."""
        if self.rs.package_members:
            return f"{self.package}.{'.'.join(split_key(qualname))}"
        if self.qualified and (len(parts := split_key(qualname)) > 1 or container):
            return ".".join(parts)
        return same_file_key(qualname)

    def _own_prefix(self, qualname: str) -> str:
        """:meth:`_own_key` of a member of ``qualname``, less the member's name."""
        head = f"{self.package}." if self.rs.package_members else "" if self.qualified and qualname else "="
        return head + "".join(p + "." for p in split_key(qualname))

    def _read_members(self) -> set[tuple[str, str]]:
        """:attr:`class_members` and :attr:`kinds`, read from the file's definitions when first asked."""
        if self.class_members is None:
            self.class_members = {(s.parent, s.name) for s in self.symbols if s.parent}
            self.kinds = {s.qualname: s.kind for s in self.symbols}
            members = [(s.parent, s.name, s.kind in FUNCTION_KINDS) for s in self.symbols if s.parent]
            self.methods = {(c, n) for c, n, method in members if method}
            self.methods -= {(c, n) for c, n, method in members if not method}  # also a nested type
            if self.rs.language == "kotlin":  # a companion object's members are its class's
                holders = {s.parent for s in self.symbols if s.parent and s.parent.endswith("." + COMPANION)}
                holders |= {s.qualname for s in self.symbols if s.parent and companion_object(s.signature)}
                self.class_members |= {
                    (enclosing(s.parent), s.name) for s in self.symbols if s.parent in holders
                }
        return self.class_members

    def _own_member(self, at: int, name: str, a_type: bool = False) -> str:
        """The key of ``name`` as a member of the class definition ``at`` is in, or of a
        class holding that one, that this file defines ("" none). ``a_type``: ``name`` is
        named as a type is (a type, a receiver's head), which no method is where the language
        says so (``RefSpec.typed_apart``: a C# property named as its type, ``public Status
        Status``, leaves ``Status x`` the type's)."""
        class_members = self._read_members()
        a_type = a_type and self.rs.typed_apart
        owner = self.scopes.owner_class(at)
        if not owner and at >= 0 and self.symbols[at].kind == "module":  # a namespace's body
            owner = self.symbols[at].qualname
        while owner:
            if name == split_key(owner)[-1]:  # the class itself (a member of its name is its constructor)
                return self._own_key(owner) if owner in self.kinds else ""  # (C++'s out of its class)
            if (owner, name) in class_members and not (a_type and (owner, name) in self.methods):
                return self._own_prefix(owner) + name
            owner = enclosing(owner)
        return ""

    def _declared_elsewhere(self, owner: str, member: str) -> str:
        """What ``member.name`` means in a method of ``owner`` defined out of its class (C++'s
        ``void Widget::run() { this->m.draw(); }``) where the file does not declare the class
        but includes a header, which may: ``m`` of ``Widget`` as declared there, keyed ``?``
        (``?Widget.m.``), which a question tries in each header the file includes, and there
        meets the class's field of a known type. "" elsewhere (the class's own file knows
        its fields), and for a name the file qualifies (``system_clock::now()``)."""
        if not (owner and self.includes and self.rs.included):
            return ""
        self._read_members()
        if owner in self.kinds:
            return ""
        if self.qualifiers is None:  # (read once per file)
            self.qualifiers = frozenset(m.group(1).decode() for m in _QUALIFIER.finditer(self.src))
        if member in self.qualifiers:
            return ""  # std::sort(), system_clock::now(): a namespace's, a type's
        return IN_NAMESPACES + "".join(p + "." for p in (*split_key(owner), member))

    def _namespace(self, at: int) -> str:
        """The key of the namespace definition ``at`` is in ("" none, or the global one): the
        last to start before it (PHP's ``namespace App\\Shop;``, or a ``namespace X { }`` block)."""
        return namespace_at(self.file_namespaces, self.symbols[at].start_line if at >= 0 else 1 << 30)

    def unbound_key(self, name: str, at: int, *, namespaced: bool = True, in_namespace: bool = True) -> str:
        """The key of ``name``, which the file does not bind, used in definition ``at`` ("" none:
        a name match), where the language looks for such a name: its package (Java's ``B.make()``
        of a class not imported, in a file importing no package wholesale), else a namespace in
        scope (``?Invoice``, when ``namespaced`` and named as a type is: a C# ``using``'s, or
        Java's ``import q.*;``'s or the package's; C's and C++'s of a header the file includes),
        else the namespace the use is in (PHP's
        ``Item::make()``, when ``in_namespace``: not where the name may be a function's, which
        is the global one's). The one rule of a type's name, a receiver's and a plain name's."""
        if self.rs.package and self.package and not self.star:
            return f"{self.package}.{name}"
        if self.rs.namespaces and namespaced and name[:1].isupper():
            return IN_NAMESPACES + name
        if self.includes:  # C, C++: of a header the file includes, whatever its case
            return IN_NAMESPACES + name
        if in_namespace and self.file_namespaces and (ns := self._namespace(at)):
            return f"{ns}.{name}"
        return ""

    def _inline_module(self, at: int) -> str:
        """The qualified name of the innermost module definition ``at`` is in
        (Rust's ``mod tests { ... }``; "" none: the file's)."""
        self._read_members()
        qualname = self.symbols[at].qualname if at >= 0 else ""
        while qualname and self.kinds.get(qualname) != "module":
            qualname = enclosing(qualname)
        return qualname

    def _module_item(self, at: int, name: str) -> str:
        """The key of ``name`` as an item of the inline module ``at`` is in ("" none)."""
        module = self._inline_module(at)
        return self._own_prefix(module) + name if module and (module, name) in self._read_members() else ""

    def type_key(self, text: str, fn: int, typed: dict[tuple[int, str], str] | None = None) -> str:
        """The key of the type (or callee) ``text`` names in function ``fn`` ("" unknown): a name
        the function or the module binds; with ``typed`` and call results, a typed local's."""
        parts = receivers.CHAIN_SEP.split(text)
        head = parts[0]
        if head in PATH_HEADS and self.rs.module_path is not None:  # crate::a::T, super::f()
            here = [*module_parts(self.path, self.rs.language), *split_key(self._inline_module(fn))]
            return ".".join(self.rs.module_path(parts, here))
        base = self.local_imports.get((fn, head)) if fn >= 0 else None
        base = base or self.module.get(head)
        if not base and self.rs.module_path is not None and fn >= 0:
            base = self._module_item(fn, head)  # an item of the inline module holding the function
        if not base and head == "Self" and head in self.rs.self_names and fn >= 0:  # Rust: the impl's type
            owner = self.scopes.owner_class(fn)
            base = (self.module.get(owner) or self._own_key(owner)) if owner else ""
        if not base and typed and self.rs.call_results:  # x := c.Root(): what Root of c's type returns
            base = typed.get((fn, head)) or typed.get((-1, head))
        if (
            not base
            and head not in self.rs.builtins
            and head not in self.rs.default_functions
            and (len(parts) == 1 or not self.rs.package)
        ):
            base = self.unbound_key(head, fn)  # a type of the package, of a namespace in scope
        rust_path = self.rs.module_path is not None and len(parts) > 1
        crate = not base and rust_path and self._a_crate("::".join(parts), head, fn, 0)
        if crate:
            base = head  # clap::Arg: another crate's path, as with use clap::Arg
        if not base or (head in self.modules_bound and len(parts) == 1):
            return ""
        if head in self.foreign or crate:  # another crate's type, a question places (RefSpec.shadowing_lets)
            return IN_NAMESPACES + ".".join([base, *parts[1:]])
        return ".".join([base, *parts[1:]])

    def named_type(self, text: str, fn: int) -> str:
        """The key of a type or callee named ``text`` in function ``fn`` (its
        declared form made plain; "" unknown, or a local of the function)."""
        text = plain_type(text)
        head = text.partition(".")[0]
        if (fn, head.encode()) in self.binds and (fn, head) not in self.local_imports:
            return ""
        return self.type_key(text, fn) if TYPE_NAME.fullmatch(text) else ""

    def _field(self, owner: str, field: str, depth: int = 3) -> tuple[str, int] | None:
        """The type of ``owner``'s field, declared in it or in a base class of this file."""
        found = self.fields.get((owner, field))
        if found is None and depth:
            for base in self.bases.get(owner, ()):
                found = self._field(base, field, depth - 1)
                if found is not None:
                    break
        return found

    def field(self, owner: str, name: str) -> str:
        """:meth:`_field`'s key, for a rule (Python's fields of a method's result)."""
        found = self._field(owner, name)
        return found[0] if found is not None else ""

    def field_path(self, base: str, names: Sequence[str]) -> str:
        """The key of ``names`` read one after the other from a value of the type ``base``:
        through this file's classes' fields of a known type, then as a path from the last."""
        for i, name in enumerate(names):
            found = self._field(base[1:], name) if base[:1] == "=" else None
            if found is None:
                return ".".join([base, *names[i:]])
            base = found[0]
        return base

    def unknown_member(self, key: str) -> bool:
        """Whether ``key`` is a path from a class of this file through a member whose type
        the file does not say (``=Pool.headers``): no question can follow it further."""
        if key[:1] != "=":
            return False
        self._read_members()
        return self.kinds.get(key[1:]) != "class"

    def _typed_at(self, fn: int, name: str, start: int) -> str:
        """The type of the local ``name`` at byte ``start``: with block scopes, of the
        innermost binding holding it ("" none: a closure's parameter of the same name
        is not the function's local)."""
        bindings = self.scoped.get((fn, name))
        if not bindings:
            return self.typed[(fn, name)]
        holding = [b for b in bindings if b[0] <= start < b[1]]
        return max(holding)[2] if holding else ""

    def _module_self(self, recv: str, head: str, start: int) -> bool:
        """Whether a receiver starting ``self`` is the module the use stands in (Rust's
        ``self::f()``, ``self::a::f()``), not a method's receiver (``self.x``): by the
        separator after it, in ``recv`` or before the name at byte ``start`` (block scopes)."""
        if head != "self":
            return False
        if len(recv) > len(head):
            return recv[len(head) :].lstrip().startswith("::")
        return self.src[max(start - 8, 0) : start].rstrip().endswith(b"::")

    def _a_crate(self, recv: str, head: str, at: int, start: int) -> bool:
        """Whether ``head``, a receiver's first name that the file does not bind, names a crate
        (Rust's ``clap::Arg::new()``, ``serde_json::to_string()``): a path's head (``::`` after
        it), no type of the language's (``u64::from``), and no glob import (``use super::*``)
        visible where the use stands that may bring in a module of its name."""
        if not head.isidentifier() or head[:1].isupper() or head in self.rs.builtins:
            return False
        after = recv[len(head) :].lstrip()
        if after and not after.startswith("::"):
            return False
        if not after and not self.src[max(start - 8, 0) : start].rstrip().endswith(b"::"):
            return False
        if self.globs:
            module = self._inline_module(at)
            scope = self.symbols[at].qualname if at >= 0 else ""
            while scope != module and scope:
                if scope in self.globs:
                    return False
                scope = enclosing(scope)
            return module not in self.globs
        return True

    def _receiver_prefix(self, key: tuple[bytes, int, int]) -> str:
        """:meth:`_member_prefix` of a receiver as read back from the text
        (reversed; ``b"?"`` for none that is a name) in definition ``at``, at
        byte ``start`` (0 but with block scopes)."""
        reversed_recv, at, start = key
        recv = reversed_recv[::-1].decode("utf-8", "replace") if reversed_recv != b"?" else "?"
        prefix = self._member_prefix(recv, at, start)
        if prefix and self.shadowed:  # a local made by a class of its function: not what it redefines
            head, _, rest = recv.partition(".")
            defined = self.shadowed.get((self.owner[at], head))
            if defined is not None and not rest:
                self.hidden[key] = defined  # (the member's name decides)
            elif defined is not None and rest.partition(".")[0] in defined:
                return ""
        return prefix

    def receiver_prefix(self, recv: str, at: int, where: int) -> str:
        """:meth:`_member_prefix`, for the language's own rules."""
        return self._member_prefix(recv, at, where)

    def _chained(self, base: str, rest: str, unsure: bool = False) -> str:
        """What a member of ``rest`` after a value of the type ``base`` resolves to, less the
        name (``RefSpec.result_type``: ``T::new().a().b``, ``base`` ``T``, ``rest`` ``.a()``):
        a method of this file's type declaring its result (``-> Self``) keeps the chain typed;
        one of another file's is keyed by its path (``T.a.b``: ``b`` of what ``T``'s ``a``
        returns, as ``call_results`` keys ``x.f().g``), which a question follows one step
        (a field row of ``a``'s result); past a second such step (``unsure``: ``base`` is one
        already), unknown (""). A call giving its value's type back (``.clone()``; after a
        result, which is read as its element, ``.unwrap()``, ``.iter()``, ..., Rust's
        :data:`.rust_types.SAME_ELEMENT`) is no step."""
        *called, tail = rest.split("()")
        stepped = False
        for hop in called:
            parts = receivers.CHAIN_SEP.split(hop)[1:]
            if not parts or not all(parts):
                return ""  # f()(): a call of a call's result
            own = "::".join([*split_key(base[1:]), parts[0]]) if base[:1] == "=" else ""  # Rust's T::a
            declared = self.fields.get((own, "")) if own else None
            if declared is not None and len(parts) == 1:
                base, stepped = declared[0], True  # a method of this file's type: its declared result
                continue
            if len(parts) == 1 and (parts[0] in SAME_VALUE or (stepped and parts[0] in SAME_ELEMENT)):
                continue
            if unsure:
                return ""
            base, unsure, stepped = ".".join([base, *parts]), True, True
        return ".".join([base, *receivers.CHAIN_SEP.split(tail)[1:]]) + "."

    def _member_prefix(self, recv: str, at: int, start: int) -> str:
        """What ``recv.name`` in definition ``at`` resolves to, less the
        name: the target is this prefix and the name ("" when unresolved).
        The same for every name of one receiver in one definition, so it is
        worked out once for them all."""
        rs = self.rs
        if recv in rs.super_names:
            owner = self.scopes.owner_class(at)
            return "^" + "".join(p + "." for p in split_key(owner)) if owner else ""
        if recv == "?":
            return ""
        if "(" in recv:
            if rs.result_type is not None:  # T::new().g: g of the type the call makes
                called, _, rest = recv.partition("()")
                base = rs.result_type(self, called, self.owner[at])
                if base:
                    return self._chained(base, rest)
                value, dot, method = called.rpartition(".")
                prefix = self._member_prefix(value, at, start) if dot and "(" not in value else ""
                if not prefix:
                    return ""
                # x.f().g: g of what f of x's type returns (x.y.f(): a path already, one step)
                head = value.partition(".")[0]
                path = len(receivers.CHAIN_SEP.split(value)) > 1 and head not in rs.self_names
                return self._chained(prefix[:-1], f".{method}(){rest}", unsure=path)
            if not rs.call_results:
                return ""
            recv = recv.replace("()", "")  # x.f().g: g of what f returns
            if "(" in recv:
                return ""
        fn = self.owner[at]
        parts = receivers.CHAIN_SEP.split(recv)
        head = parts[0]
        if rs.module_path is not None and (head in PATH_HEADS or self._module_self(recv, head, start)):
            # super::f(), crate::a::f(), self::a::f()
            here = [*module_parts(self.path, rs.language), *split_key(self._inline_module(at))]
            return "".join(p + "." for p in rs.module_path(parts, here))
        if head in rs.self_names or (fn >= 0 and self.receivers.get(fn) == head):
            owner = self.scopes.owner_class(at)
            if owner and (len(parts) == 1 or rs.package_members):  # r.x.name: x a field or method of r's type
                return self._own_prefix(".".join([owner, *parts[1:]]))
            deep = len(parts) == 2 or rs.field_paths
            field = self._field(owner, parts[1]) if owner and deep else None
            path = self.field_path(field[0], parts[2:]) if field else ""
            if path and not (len(parts) > 2 and self.unknown_member(path)):
                return path + "."  # self.x.name, x a field of a known type (self.x.y.name: the path from it)
            return self._declared_elsewhere(owner, parts[1]) if len(parts) == 2 else ""
        base = self.local_imports.get((fn, head)) if fn >= 0 else None
        fscopes = self.fscopes is not None
        if base is None and (fn, head) in self.typed:
            base = self._typed_at(fn, head, start)
            if not base and (fscopes or rs.shadowing_lets) and not self._bound_at(fn, head.encode(), start):
                base = None  # a local of another function or block: not this one's
        elif base is None and (fn, head.encode()) in self.binds and self._bound_at(fn, head.encode(), start):
            return ""  # a local variable: its type is not known here
        if base is None and rs.implicit_self and fn >= 0 and (-1, head) not in self.typed:
            # a field of the method's class, not a module-level name (C++'s ``m.draw()``; Java's
            # fields are module-level typed names too, read below as they were)
            field = self._field(owner, head) if (owner := self.scopes.owner_class(at)) else None
            base = field[0] if field else None
        if base is None and fscopes and fn >= 0 and (-1, head) in self.typed:
            base = self._typed_at(-1, head, start) or None  # the module's, visible here
        if base is None:  # a module-level local of a known type (app = Flask()), else a name of the module
            base = (None if fscopes else self.typed.get((-1, head))) or self.module.get(head)
        if (  # C++'s m.draw() in void Widget::run() {...}, Widget another file's: this->m's
            not base
            and rs.included
            and fn >= 0
            and not head[:1].isupper()
            and head not in rs.builtins
            and not (self.qualifiers and any(p in self.qualifiers for p in parts[1:]))
            and (prefix := self._declared_elsewhere(self.scopes.owner_class(at), head))
        ):
            return prefix + "".join(p + "." for p in parts[1:])
        if not base and rs.module_path is not None:
            base = self._module_item(at, head)  # a module the inline module holding the use defines
            if not base and self._a_crate(recv, head, at, start):
                base = head  # clap::Arg::new(): as with use clap::Arg
        if not base and rs.package_members and not self.star and head not in rs.builtins:
            base = f"{self.package}.{head}"  # a variable of the package (another file's var V T)
        if not base and head[:1].isupper() and head not in rs.builtins:  # named as a type is
            if rs.implicit_self:
                base = self._own_member(at, head, a_type=True)  # a class the class holds (Kind.parse())
            base = base or self.unbound_key(head, at)  # B.make(), Invoice.Empty(), PHP's Item::make()
        if not base:
            return ""
        if rs.field_paths:  # app.config.name, app a Flask: Flask's field config, of a known type
            return self.field_path(base, parts[1:]) + "."
        return ".".join([base, *parts[1:]]) + "."
