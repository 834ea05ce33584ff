"""Functional languages: Haskell, Elixir, OCaml."""

from __future__ import annotations

from tree_sitter import Node

from repolens.chunking.grammars.base import (
    Found,
    Handler,
    LangSpec,
    Scope,
    first_named,
    text,
)

# -- Haskell --------------------------------------------------------------------


def _hs_instance(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    pats = node.child_by_field_name("patterns")
    label = text(name_node, scope.src) + (" " + text(pats, scope.src) if pats is not None else "")
    return Found("impl", label, name_node)


def _hs_named(kind: str) -> Handler:
    # Type classes and instances keep their members in the chunk; no member walk.
    def handler(node: Node, scope: Scope) -> Found | None:
        name_node = node.child_by_field_name("name")
        return Found(kind, text(name_node, scope.src), name_node) if name_node is not None else None

    return handler


# -- Elixir ---------------------------------------------------------------------


_EX_DEFS = {
    "def": "function",
    "defp": "function",
    "defmacro": "function",
    "defmacrop": "function",
    "defguard": "function",
    "defguardp": "function",
    "defdelegate": "function",
    "defn": "function",
    "defmodule": "module",
    "defprotocol": "interface",
    "defimpl": "impl",
}
_EX_ATTACH = frozenset({"doc", "spec", "impl", "deprecated", "since", "tag", "decorate", "dialyzer"})


def _ex_call(node: Node, scope: Scope) -> Found | None:
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier":
        return None
    kw = text(target, scope.src)
    kind = _EX_DEFS.get(kw)
    args = first_named(node, "arguments")
    if kind is None or args is None or args.named_child_count == 0:
        return None
    first = args.named_children[0]
    if kind in ("module", "interface", "impl"):
        name = text(first, scope.src)
        if kind == "impl":
            kw_node = first_named(args, "keywords")
            if kw_node is not None and kw_node.named_child_count:
                pair = kw_node.named_children[0]
                val = pair.child_by_field_name("value")
                if val is not None:
                    name = f"{name}.{text(val, scope.src)}"
        return Found(kind, name, first, body=first_named(node, "do_block"))
    head = first
    if head.type == "binary_operator":  # def f(x) when guard
        head = head.child_by_field_name("left") or head
    if head.type == "call":
        head = head.child_by_field_name("target") or head
    if head.type != "identifier":
        return None
    return Found(kind, text(head, scope.src), head)


def _ex_attachment(node: Node, src: bytes) -> bool:
    if node.type == "comment":
        return True
    if node.type != "unary_operator" or src[node.start_byte : node.start_byte + 1] != b"@":
        return False
    operand = node.child_by_field_name("operand")
    if operand is None:
        return False
    target = operand.child_by_field_name("target") if operand.type == "call" else operand
    return text(target, src) in _EX_ATTACH


# -- OCaml ----------------------------------------------------------------------


def _ml_value(node: Node, scope: Scope) -> Found | None:
    b = first_named(node, "let_binding")
    if b is None:
        return None
    pat = b.child_by_field_name("pattern")
    if pat is None or pat.type not in ("value_name", "operator_name", "parenthesized_operator"):
        return None
    body = b.child_by_field_name("body")
    is_fn = first_named(b, "parameter") is not None or (
        body is not None and body.type in ("fun_expression", "function_expression")
    )
    return Found("function" if is_fn else "constant", text(pat, scope.src), pat)


def _ml_binding(binding: str, name_types: tuple[str, ...], kind: str, walk: bool) -> Handler:
    def handler(node: Node, scope: Scope) -> Found | None:
        b = first_named(node, binding)
        if b is None:
            return None
        name_node = b.child_by_field_name("name") or first_named(b, *name_types)
        if name_node is None:
            return None
        body = b.child_by_field_name("body") if walk else None
        return Found(kind, text(name_node, scope.src), name_node, body=body)

    return handler


def _ml_method(node: Node, scope: Scope) -> Found | None:
    name_node = first_named(node, "method_name")
    return Found("method", text(name_node, scope.src), name_node) if name_node is not None else None


def _ml_val_spec(node: Node, scope: Scope) -> Found | None:
    name_node = first_named(node, "value_name")
    return Found("function", text(name_node, scope.src), name_node) if name_node is not None else None


# -- specs ------------------------------------------------------------------

_HS_DEFS: dict[str, str | Handler] = {
    "function": "function",
    "bind": "function",
    "data_type": "type",
    "newtype": "type",
    "type_synonym": "type",
    "type_family": "type",
    "data_family": "type",
    "class": _hs_named("trait"),
    "instance": _hs_instance,
    "foreign_import": "function",
}


_ML_DEFS: dict[str, str | Handler] = {
    "value_definition": _ml_value,
    "type_definition": _ml_binding("type_binding", ("type_constructor",), "type", False),
    "module_definition": _ml_binding("module_binding", ("module_name",), "module", True),
    "module_type_definition": _ml_binding(
        "module_type_definition", ("module_type_name",), "interface", False
    ),
    "class_definition": _ml_binding("class_binding", ("class_name",), "class", True),
    "method_definition": _ml_method,
    "external": _ml_val_spec,
    "value_specification": _ml_val_spec,
}

SPECS: tuple[LangSpec, ...] = (
    LangSpec(
        "haskell",
        "tree-sitter-haskell",
        "tree_sitter_haskell",
        defs=_HS_DEFS,
        transparent={"declarations": "", "imports": ""},
        attachments=frozenset({"comment", "haddock", "signature", "pragma"}),
        comments=frozenset({"comment", "haddock"}),
        merge_clauses=True,
    ),
    LangSpec(
        "elixir",
        "tree-sitter-elixir",
        "tree_sitter_elixir",
        defs={"call": _ex_call},
        attachments=frozenset({"comment", "unary_operator"}),
        attachment_test=_ex_attachment,
        merge_clauses=True,
    ),
    LangSpec(
        "ocaml",
        "tree-sitter-ocaml",
        "tree_sitter_ocaml",
        "language_ocaml",
        defs=_ML_DEFS,
    ),
)

# ``.mli`` files: the same definitions, parsed with the interface grammar.
OCAML_INTERFACE = LangSpec(
    "ocaml", "tree-sitter-ocaml", "tree_sitter_ocaml", "language_ocaml_interface", defs=_ML_DEFS
)
