"""What a declaration says a name's type is: the ``typed`` captures of a
file's query read (:func:`read_typed`: ``x = Cls()``, ``x: Cls``, a typed
parameter, a field, Go's ``x := &T{}``, ``func f() *T`` and interfaces'
methods), the type's text made plain, and where a Go local so typed is
visible. Run by :mod:`.extract` on its extraction of one file (what it
reads and sets of it: :class:`.extracting.Extracting`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import tree_sitter as ts

from repolens.chunking.refs.extracting import Extracting
from repolens.chunking.refs.scoping import GO_BLOCKS, GO_FUNCTIONS, up_to

# A type's text, its decoration left out (``: Foo``, ``*pkg.T``, ``Optional[Foo]`` is not read).
_TYPE_NOISE = re.compile(r"^(?:[:\s*&]|mut\s|(?<=&)'\w+\s)+|\s+$")  # (Rust's &'a mut T too)
# A plain (dotted) name: a type's text that :func:`plain_type` leaves as it is.
TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
# A type that may be absent (``Optional[T]``, ``T | None``, ``T | null``): ``T`` is what it names.
_OPTIONAL = re.compile(r"^(?:(?:typing|t)\.)?Optional\[\s*(.+?)\s*\]$")
_QUOTED = re.compile(r"^([\"'])(.+)\1$")  # a forward reference: x: "Cls"
_GO_CONTAINER = re.compile(r"^(?:\[\w*\]|map\[[^\]]*\]|(?:<-\s*)?chan(?:\s*<-)?\s+|\*)+")
_NONE_UNION = re.compile(r"\s*\|\s*(?:None|null|undefined)\b|\b(?:None|null|undefined)\s*\|\s*")
# A generic type's arguments (``Router<T>``, ``Map<K, V>``): the type is the generic's.
_TYPE_ARGUMENTS = re.compile(r"\s*<.*>$")


# An array's type (TypeScript's ``T[]``, ``readonly T[]``, ``Array<T>``, ``ReadonlyArray<T>``): T.
_ARRAY = re.compile(
    r"^(?:readonly\s+)?([\w$.]+)(?:<.*>)?\[\]$|^(?:Readonly)?Array<\s*([\w$.]+)(?:<.*>)?\s*>$"
)
# The path from an array to its element in a key (a field ``C.xs.[]`` of the element's type), and
# the end of a local's key whose value is an array of the key's type (``T[]``).
ELEMENT = "[]"


def element_type(text: str) -> str:
    """The element type an array type's text names plainly ("" none: no array)."""
    m = _ARRAY.match(_TYPE_NOISE.sub("", text))
    return (m.group(1) or m.group(2)) if m else ""


def plain_type(text: str) -> str:
    """A declared type's text, its decoration, quotes (a forward reference), optionality and
    type arguments left out; of Go's slice, array, map and channel, the element's (what
    ranging over one gives)."""
    text = _GO_CONTAINER.sub("", _TYPE_NOISE.sub("", text))
    m = _QUOTED.match(text)
    if m:
        text = m.group(2).strip()
    m = _OPTIONAL.match(text)
    if m:
        text = m.group(1)
    return _TYPE_ARGUMENTS.sub("", _NONE_UNION.sub("", text).strip()).replace("::", ".")


# TypeScript's declarations of a member (a class's field, an interface's property): no local.
MEMBER_DECLARATIONS = frozenset({"public_field_definition", "property_signature"})

# Definitions whose ``typed`` capture is what they return (Go's result; Rust's: ``rust_types.results``).
RESULT_DECLARING = frozenset({"function_declaration", "method_declaration"})


def visible(node: ts.Node) -> tuple[int, int]:
    """The bytes where the local a Go ``typed`` node binds is visible: a
    parameter in its function (literal), a declared local from its
    declaration to the end of its block."""
    up = up_to(node, GO_FUNCTIONS if node.type == "parameter_declaration" else GO_BLOCKS)
    if up is None:
        return 0, 1 << 62
    return (up.start_byte if node.type == "parameter_declaration" else node.start_byte), up.end_byte


def first_listed(node: ts.Node | None) -> ts.Node | None:
    """The first of a list (Go's ``x, err := f()``, a result list ``(T, error)``'s type), else the node."""
    if node is None or node.type not in ("expression_list", "parameter_list"):
        return node
    if not node.named_child_count:
        return None
    first = node.named_child(0)
    if first is not None and first.type == "parameter_declaration":
        return first.child_by_field_name("type")
    return first


def made_by(node: ts.Node | None) -> ts.Node | None:
    """What names the type a value is made of (Go's ``T{...}``, ``&T{...}``, ``v.(T)``;
    TypeScript's ``v as T``: the ``T``)."""
    if node is not None and node.type == "as_expression" and node.named_child_count == 2:
        return node.named_child(1)
    if (
        node is not None
        and node.type == "unary_expression"
        and node.child_count
        and node.child(0).type == "&"
    ):
        node = node.child_by_field_name("operand")
    if node is not None and node.type in ("composite_literal", "type_assertion_expression"):
        return node.child_by_field_name("type")  # x := v.(*T)
    return node


def assigns_a_name(node: ts.Node) -> bool:
    """An assignment of a plain name (``self.x = x``)."""
    right = node.child_by_field_name("right")
    return right is not None and right.type == "identifier"


# TypeScript's parameters: outside a function, a function type's (no field, no local).
_PARAMETERS = frozenset({"required_parameter", "optional_parameter"})


def field_parameter(node: ts.Node) -> bool:
    """A TypeScript constructor parameter that is also a field (``private x: T``)."""
    return node.type in ("required_parameter", "optional_parameter") and any(
        c.type in ("accessibility_modifier", "readonly") for c in node.children
    )


def read_typed(ex: Extracting, nodes: Sequence[ts.Node]) -> dict[tuple[int, str], str]:
    """The locals whose type their function says (read from ``ex``'s ``typed``
    captures, in the text's order): ``x = Cls(...)``, ``x: Cls``,
    a parameter ``x: Cls`` (``Cls`` resolved as a name of the file is).
    A class's fields go to ``ex.fields``: ``self.x = Cls(...)`` or
    ``self.x: Cls`` in a method, ``x: Cls`` in the class body, and a
    TypeScript field or constructor parameter property (``private x: Cls``)."""
    out: dict[tuple[int, str], str] = {}
    fields = ex.rs.typed_fields
    src = ex.src
    scopes = ex.scopes
    # self.x = x after the rest: x's type is the local's (a typed parameter), known by then
    # in the order of the text (the captures' order is not): a local's later binding wins
    for node in sorted(nodes, key=lambda n: (assigns_a_name(n), n.start_byte)):
        line = node.start_point[0] + 1
        fn = scopes.function[line]
        if fn < 0 and node.type == "parameter_declaration":
            continue  # Go: a parameter of a function type or an interface's method, no local
        if node.type == "method_elem":  # Go: an interface's method
            _interface_method(ex, node, line)
            continue
        for var_field, type_field in fields:
            var = node.child_by_field_name(var_field) if var_field else node.named_child(0)
            kind = node.child_by_field_name(type_field)
            if var is None or kind is None:
                continue
            if var.type == "variable_declarator":  # Java: int x = ..., the name inside
                var = var.child_by_field_name("name")
                if var is None:
                    continue
            if node.type == "range_clause":  # for i, x := range xs: x is an element (i an index, a key)
                var = (
                    var.named_child(1)
                    if var.type == "expression_list" and var.named_child_count > 1
                    else None
                )
            var, kind = first_listed(var), made_by(first_listed(kind))
            if var is None or kind is None:
                break
            named = kind.type == "identifier"  # self.x = x: the type of the local x
            if kind.type in ("call", "new_expression", "call_expression"):
                kind = kind.child_by_field_name("function") or kind.child_by_field_name("constructor")
                if kind is None:
                    continue
            text = src[kind.start_byte : kind.end_byte].decode("utf-8", "replace")
            element = element_type(text) if ex.rs.array_elements and not named else ""
            if element:  # xs: T[]: a field's element is its member [], a local's key ends []
                text = element
            if not TYPE_NAME.fullmatch(text):  # a plain (dotted) name is its own plain type
                text = plain_type(text)
                if not TYPE_NAME.fullmatch(text):
                    break
            key = out.get((fn, text), "") if named else ex.type_key(text, fn, out)
            if not key:
                break
            if named and ex.rs.array_elements and key.endswith(ELEMENT):
                key, element = key[: -len(ELEMENT)], text  # this.xs = xs, xs: T[]
            name = src[var.start_byte : var.end_byte].decode("utf-8", "replace")
            if node.type in RESULT_DECLARING:  # func f() *T: what f returns, for f().x elsewhere
                ex.fields.setdefault((scopes.qualname(scopes.inner[line]), ""), (key, line))
                break
            if fn < 0 and node.type == "var_spec":  # Go: var V T at the top, for V.x in the package's files
                ex.fields.setdefault((name, ""), (key, line))
            elif (
                fn < 0
                and ex.rs.language == "python"
                and name.isidentifier()
                and not scopes.owner_class(scopes.inner[line])
            ):  # a module's global of a declared type (app = Flask(), current_app: "Flask" = ...):
                # for the importers' current_app.make_response, through its re-exports too
                ex.fields.setdefault((name, ""), (key, line))
            head, dot, field = name.partition(".")
            if dot and head in ex.rs.self_names and "." not in field:
                owner = scopes.owner_class(scopes.inner[line])  # self.x = Cls() in a method
            elif field_parameter(node) or (fn < 0 and node.type not in _PARAMETERS):
                owner, field = scopes.owner_class(scopes.inner[line]), name  # x: Cls in a class
            else:
                owner = ""
            if owner:
                ex.fields.setdefault((owner, f"{field}.{ELEMENT}" if element else field), (key, line))
            if element:
                key += ELEMENT
            if not dot and not (ex.rs.function_scopes and node.type in MEMBER_DECLARATIONS):
                out[(fn, name)] = key
                if ex.rs.block_scopes:
                    ex.scoped.setdefault((fn, name), []).append((*ex.visible(node), key))
            break
    return out


def _interface_method(ex: Extracting, node: ts.Node, line: int) -> None:
    """A method of a Go interface: in its method set (a ``member`` row), and
    what it returns as the interface's field (``r.With().Get``)."""
    owner = ex.scopes.owner_class(ex.scopes.inner[line])
    name = node.child_by_field_name("name")
    if not owner or name is None:
        return
    method = ex.src[name.start_byte : name.end_byte].decode("utf-8", "replace")
    ex.members.append((owner, method, line))
    result = first_listed(node.child_by_field_name("result"))
    if result is not None:
        text = plain_type(ex.src[result.start_byte : result.end_byte].decode("utf-8", "replace"))
        key = ex.type_key(text, -1) if TYPE_NAME.fullmatch(text) else ""
        if key:
            ex.fields.setdefault((owner, method), (key, line))
