"""Languages of the web front end: JavaScript, TypeScript (and TSX), Dart."""

from __future__ import annotations

from tree_sitter import Node

from repolens.chunking.grammars.base import (
    Found,
    Handler,
    LangSpec,
    Scope,
    first_named,
    is_const_name,
    text,
)

# -- JavaScript / TypeScript ----------------------------------------------------


_JS_FUNCTION_VALUES = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
        "generator_function_expression",
    }
)


def _js_variable(node: Node, scope: Scope) -> Found | None:
    decls = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(decls) != 1:
        return None
    name_node = decls[0].child_by_field_name("name")
    if name_node is None or name_node.type != "identifier":
        return None
    name = text(name_node, scope.src)
    value = decls[0].child_by_field_name("value")
    if value is not None:
        if value.type in _JS_FUNCTION_VALUES:
            return Found("function", name, name_node)
        if value.type in ("class", "class_expression"):
            return Found("class", name, name_node, body=value.child_by_field_name("body"))
    if not scope.kind and node.children[0].type == "const" and is_const_name(name):
        return Found("constant", name, name_node)
    return None


def _js_field(node: Node, scope: Scope) -> Found | None:
    # ``handle = () => {...}`` in a class body: a method in all but syntax.
    value = node.child_by_field_name("value")
    if value is None or value.type not in _JS_FUNCTION_VALUES:
        return None
    name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
    return Found("method", text(name_node, scope.src), name_node) if name_node is not None else None


def _ts_module(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name_node is None or body is None:
        return None
    name = text(name_node, scope.src).strip("'\"")
    return Found("module", name, name_node, body=body)


# -- Dart -----------------------------------------------------------------------


def _dart_paired(kind: str) -> Handler:
    # Dart puts a function's signature and body side by side as siblings.
    def handler(node: Node, scope: Scope) -> Found | None:
        sig = node
        if node.type == "method_signature" and node.named_child_count:
            sig = node.named_children[0]
        name_node = sig.child_by_field_name("name") or first_named(sig, "identifier")
        if name_node is None:
            return None
        nxt = node.next_named_sibling
        end = nxt if nxt is not None and nxt.type == "function_body" else None
        return Found(kind, text(name_node, scope.src), name_node, end_node=end)

    return handler


def _dart_class(kind: str) -> Handler:
    def handler(node: Node, scope: Scope) -> Found | None:
        name_node = node.child_by_field_name("name") or first_named(node, "identifier", "type_identifier")
        body = node.child_by_field_name("body") or first_named(node, "class_body", "extension_body")
        if name_node is None:
            return None
        name = text(name_node, scope.src)
        if node.type == "extension_declaration" and node.child_by_field_name("name") is None:
            return Found(
                "impl", name, name_node, body=body, qualname=f"extension on {name}", child_prefix=name
            )
        return Found(kind, name, name_node, body=body)

    return handler


# -- specs ------------------------------------------------------------------

_JS_DEFS: dict[str, str | Handler] = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "lexical_declaration": _js_variable,
    "variable_declaration": _js_variable,
    "field_definition": _js_field,
}

_TS_DEFS: dict[str, str | Handler] = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": _ts_module,
    "module": _ts_module,
    "function_signature": "function",
    "abstract_method_signature": "method",
    "method_signature": "method",
    "public_field_definition": _js_field,
}

_JS_COMMON = {
    "wrappers": {"export_statement": "declaration", "ambient_declaration": ""},
    "attachments": frozenset({"comment", "decorator"}),
}


SPECS: tuple[LangSpec, ...] = (
    LangSpec("javascript", "tree-sitter-javascript", "tree_sitter_javascript", defs=_JS_DEFS, **_JS_COMMON),
    LangSpec(
        "typescript",
        "tree-sitter-typescript",
        "tree_sitter_typescript",
        "language_typescript",
        defs=_TS_DEFS,
        **_JS_COMMON,
    ),
    LangSpec(
        "tsx",
        "tree-sitter-typescript",
        "tree_sitter_typescript",
        "language_tsx",
        defs=_TS_DEFS,
        **_JS_COMMON,
    ),
    LangSpec(
        "dart",
        "tree-sitter-dart",
        "tree_sitter_dart",
        defs={
            "function_signature": _dart_paired("function"),
            "getter_signature": _dart_paired("function"),
            "setter_signature": _dart_paired("function"),
            "method_signature": _dart_paired("method"),
            "class_definition": _dart_class("class"),
            "mixin_declaration": _dart_class("class"),
            "extension_declaration": _dart_class("impl"),
            "enum_declaration": "enum",
            "type_alias": "type",
        },
        attachments=frozenset({"comment", "documentation_comment", "annotation", "marker_annotation"}),
        comments=frozenset({"comment", "documentation_comment"}),
    ),
)
