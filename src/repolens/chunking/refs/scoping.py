"""Functions as scopes of their own locals, where a definition is not one
(TypeScript and JavaScript: an arrow callback, a function expression).

The extraction keys a local by the *definition* holding it (a function the
chunker made a symbol of), so in a test file, whose ``describe(() => ...)``
callbacks are no definitions, a ``const accepts`` in one callback would hide
the imported ``accepts`` in every other. With :class:`FunctionScopes` a
local is visible in the innermost function node holding its binding (a
parameter in its own function, a declared local in the function holding the
declaration), and a use is looked up where it stands: :meth:`where` gives
the use's innermost function (its start byte, -1 outside every function),
one value for every use in that function, so what a receiver means is still
worked out once per function and receiver.

A local visible in less than its whole function (a block's ``const``, a
comprehension's variable, Go's ``x :=`` and Rust's ``let`` from where they
stand) is captured ``bind.block``, and the language's ``bind_span`` below
says the bytes it is visible in, so a use of the module's name of the same
elsewhere in the function is still a use of it.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import tree_sitter as ts

# A binding outside every function: visible from anywhere in the file.
EVERYWHERE = (-1, 1 << 62)


class FunctionScopes:
    """A file's function nodes (arrows, function expressions and declarations,
    methods, function types), as nested byte ranges."""

    def __init__(self, nodes: Sequence[ts.Node]) -> None:
        by_span = {(n.start_byte, n.end_byte): n for n in nodes}
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.parents: list[int] = []  # the innermost function holding each (-1 none)
        self.nodes: list[ts.Node] = []
        holding: list[int] = []
        for lo, hi in sorted(by_span, key=lambda s: (s[0], -s[1])):
            while holding and self.ends[holding[-1]] <= lo:
                holding.pop()
            self.parents.append(holding[-1] if holding else -1)
            holding.append(len(self.starts))
            self.starts.append(lo)
            self.ends.append(hi)
            self.nodes.append(by_span[(lo, hi)])

    def innermost(self, at: int) -> int:
        """The index of the innermost function holding byte ``at`` (-1 none):
        the last starting at or before it, else the functions holding that one."""
        k = bisect.bisect_right(self.starts, at) - 1
        ends, parents = self.ends, self.parents
        while k >= 0 and ends[k] <= at:
            k = parents[k]
        return k

    def where(self, at: int) -> int:
        """Where a use at byte ``at`` stands, as :meth:`visible` ranges hold it: its
        innermost function's start byte (-1 outside every function)."""
        k = self.innermost(at)
        return self.starts[k] if k >= 0 else -1

    def visible(self, at: int) -> tuple[int, int]:
        """The range of :meth:`where` values a local bound at byte ``at`` is visible
        from: its innermost function's bytes (``EVERYWHERE`` outside every function)."""
        k = self.innermost(at)
        return (self.starts[k], self.ends[k]) if k >= 0 else EVERYWHERE

    def enclosing(self, node: ts.Node) -> int:
        """The index of the innermost function holding ``node`` other than itself (-1 none)."""
        k = self.innermost(node.start_byte)
        while k >= 0 and self.starts[k] == node.start_byte and self.ends[k] == node.end_byte:
            k = self.parents[k]
        return k


def untyped_in_scope(
    bind_ranges: dict[tuple[int, bytes], list[tuple[int, int]]],
    typed: dict[tuple[int, str], str],
    scoped: dict[tuple[int, str], list[tuple[int, int, str]]],
) -> None:
    """Add each untyped binding of a typed local's name to ``scoped`` as a
    binding of no type where it is visible (``bind_ranges``: (function, name)
    -> its ranges): a callback's ``(c) =>`` is not another's ``(c: Context)``."""
    for (fn, raw), ranges in bind_ranges.items():
        name = raw.decode("utf-8", "replace")
        if (fn, name) in typed:
            scoped.setdefault((fn, name), []).extend((lo, hi, "") for lo, hi in ranges)


Span = tuple[int, int] | None  # the bytes a local is visible in; None: its whole function


def up_to(node: ts.Node, types: frozenset[str]) -> ts.Node | None:
    """The nearest ancestor of ``node`` of one of ``types`` (None: none)."""
    up = node.parent
    while up is not None and up.type not in types:
        up = up.parent
    return up


_PYTHON_SCOPES = frozenset(
    {"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression", "lambda"}
)


def python_span(node: ts.Node) -> Span:
    """A comprehension's variable or a lambda's parameter: in the comprehension or lambda."""
    up = up_to(node, _PYTHON_SCOPES)
    return (up.start_byte, up.end_byte) if up is not None else None


_JS_OUTSIDE_BLOCKS = frozenset({"program", "export_statement"})


def javascript_span(node: ts.Node) -> Span:
    """A ``let``/``const`` in the block (or ``for``) holding it, hoisted to its start;
    a ``catch`` parameter in its clause; ``for (const x of ...)``'s in the loop."""
    up = node.parent
    if up is None:
        return None
    if up.type == "for_in_statement":
        kind = up.child_by_field_name("kind")
        return (up.start_byte, up.end_byte) if kind is not None and kind.type in ("let", "const") else None
    if up.type != "catch_clause":  # the declarator's declaration, then what holds it
        up = up.parent.parent if up.parent is not None else None
        if up is not None and up.type in ("switch_case", "switch_default"):
            up = up.parent  # a case's declaration is the whole switch body's
    if up is None or up.type in _JS_OUTSIDE_BLOCKS:
        return None
    return up.start_byte, up.end_byte


# Where a Go local stops being visible: the end of the block or statement holding its declaration.
GO_BLOCKS = frozenset(
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
GO_FUNCTIONS = frozenset({"func_literal", "function_declaration", "method_declaration"})


def go_span(node: ts.Node) -> Span:
    """A declared local from the end of its declaration (``x := x + 1`` reads the
    outer ``x``) to the end of its block; a function literal's parameter in it."""
    decl = node.parent
    if decl is None:
        return None
    if decl.type == "parameter_declaration":
        up = up_to(decl, GO_FUNCTIONS)
        return (up.start_byte, up.end_byte) if up is not None and up.type == "func_literal" else None
    if decl.type == "expression_list" and decl.parent is not None:
        decl = decl.parent
    up = decl if decl.type == "type_switch_statement" else up_to(decl, GO_BLOCKS)
    if up is None or up.type == "source_file":
        return None  # the package's: visible everywhere
    if decl.type == "type_switch_statement":  # switch v := v.(type): the value is read outside
        value = decl.child_by_field_name("value")
        return (value.end_byte if value is not None else node.end_byte), up.end_byte
    return decl.end_byte, up.end_byte


_RUST_BLOCKS = frozenset({"block", "source_file"})


def rust_span(node: ts.Node) -> Span:
    """A ``let`` from the end of its statement (``let x = x?`` reads the outer ``x``)
    to the end of its block; a closure's parameter (typed or not) in the closure."""
    decl = node.parent
    if decl is not None and decl.type == "parameter":  # |c: &Command|
        decl = decl.parent
    if decl is None or decl.type == "parameters":  # a function's: in all of it
        return None
    if decl.type == "closure_parameters":
        closure = decl.parent
        return (closure.start_byte, closure.end_byte) if closure is not None else None
    up = up_to(decl, _RUST_BLOCKS)
    if up is None or up.type == "source_file":
        return None
    return decl.end_byte, up.end_byte


_RUBY_BLOCKS = frozenset({"block", "do_block", "lambda"})


def ruby_span(node: ts.Node) -> Span:
    """A block's or a lambda's parameter: in the block (``items.each { |price| ... }``)."""
    up = up_to(node, _RUBY_BLOCKS)
    return (up.start_byte, up.end_byte) if up is not None else None
