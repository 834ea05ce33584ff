"""What a declaration says a name's type is: the type's text made plain, and
where a Go local so typed is visible (read by :mod:`.extract` for its
``typed`` captures: ``x = Cls()``, ``x: Cls``, a typed parameter, a field,
Go's ``x := &T{}`` and ``func f() *T``)."""

from __future__ import annotations

import re

import tree_sitter as ts

# A type's text, its decoration left out (``: Foo``, ``*pkg.T``, ``Optional[Foo]`` is not read).
_TYPE_NOISE = re.compile(r"^[:\s*&]+|\s+$")
# A plain (dotted) name: a type's text that :func:`plain_type` leaves as it is.
TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
# A type that may be absent (``Optional[T]``, ``T | None``, ``T | null``): ``T`` is what it names.
_OPTIONAL = re.compile(r"^(?:(?:typing|t)\.)?Optional\[\s*(.+?)\s*\]$")
_QUOTED = re.compile(r"^([\"'])(.+)\1$")  # a forward reference: x: "Cls"
_GO_CONTAINER = re.compile(r"^(?:\[\w*\]|map\[[^\]]*\]|(?:<-\s*)?chan(?:\s*<-)?\s+|\*)+")
_NONE_UNION = re.compile(r"\s*\|\s*(?:None|null|undefined)\b|\b(?:None|null|undefined)\s*\|\s*")


def plain_type(text: str) -> str:
    """A declared type's text, its decoration, quotes (a forward reference) and optionality left out;
    of Go's slice, array, map and channel, the element's (what ranging over one gives)."""
    text = _GO_CONTAINER.sub("", _TYPE_NOISE.sub("", text))
    m = _QUOTED.match(text)
    if m:
        text = m.group(2).strip()
    m = _OPTIONAL.match(text)
    if m:
        text = m.group(1)
    return _NONE_UNION.sub("", text).strip()


# Definitions whose ``typed`` capture is what they return (Go's result).
RESULT_DECLARING = frozenset({"function_declaration", "method_declaration"})


# Where a Go local stops being visible: the end of the block or statement holding its declaration.
_GO_BLOCKS = frozenset(
    {
        "block",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "communication_case",
        "expression_case",
        "type_case",
        "default_case",
        "func_literal",
        "source_file",
    }
)
_GO_FUNCTIONS = frozenset({"func_literal", "function_declaration", "method_declaration"})


def visible(node: ts.Node) -> tuple[int, int]:
    """The bytes where the local a Go ``typed`` node binds is visible: a
    parameter in its function (literal), a declared local from its
    declaration to the end of its block."""
    enclosing = _GO_FUNCTIONS if node.type == "parameter_declaration" else _GO_BLOCKS
    up = node.parent
    while up is not None and up.type not in enclosing:
        up = up.parent
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
    """What names the type a value is made of (Go's ``T{...}``, ``&T{...}``, ``v.(T)``: the ``T``)."""
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


def field_parameter(node: ts.Node) -> bool:
    """A TypeScript constructor parameter that is also a field (``private x: T``)."""
    return node.type in ("required_parameter", "optional_parameter") and any(
        c.type in ("accessibility_modifier", "readonly") for c in node.children
    )
