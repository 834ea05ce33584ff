"""Compiled systems languages: Go, Rust, Zig, Swift."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from repolens.chunking.grammars.base import (
    Found,
    LangSpec,
    Scope,
    first_named,
    has_token,
    named_method,
    qualify,
    strip_generics,
    text,
)

# -- Go -------------------------------------------------------------------------


def _go_method(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    recv = node.child_by_field_name("receiver")
    if name_node is None or recv is None:
        return None
    name = text(name_node, scope.src)
    param = first_named(recv, "parameter_declaration")
    rtype = param.child_by_field_name("type") if param is not None else None
    if rtype is None:
        return Found("method", name, name_node)
    pointer = rtype.type == "pointer_type"
    base = strip_generics(text(rtype, scope.src).lstrip("*").strip())
    qual = f"(*{base}).{name}" if pointer else f"{base}.{name}"
    return Found("method", name, name_node, qualname=qual, parent=base)


_GO_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _go_type(node: Node, scope: Scope) -> Found | None:
    specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
    return _go_group(specs, scope, lambda s: _GO_TYPE_KINDS.get(_type_of(s), "type"))


def _type_of(spec: Node) -> str:
    t = spec.child_by_field_name("type")
    return t.type if t is not None else ""


def _go_const(node: Node, scope: Scope) -> Found | None:
    specs = [c for c in node.named_children if c.type == "const_spec"]
    return _go_group(specs, scope, lambda s: "constant")


def _go_group(specs: list[Node], scope: Scope, kind_of: Callable[[Node], str]) -> Found | None:
    named = [(s, s.child_by_field_name("name")) for s in specs]
    named = [(s, n) for s, n in named if n is not None]
    if not named:
        return None
    spec0, name0 = named[0]
    kind = kind_of(spec0) if len(named) == 1 else ("constant" if kind_of(spec0) == "constant" else "type")
    found = Found(kind, text(name0, scope.src), name0)
    if len(named) > 1:
        found.members = [(text(n, scope.src), kind_of(s), s) for s, n in named]
    return found


# -- Rust -----------------------------------------------------------------------


def _rust_impl(node: Node, scope: Scope) -> Found | None:
    ty = node.child_by_field_name("type")
    if ty is None:
        return None
    tname = strip_generics(text(ty, scope.src))
    trait = node.child_by_field_name("trait")
    # The kind says "impl": the name does not repeat it (a header reads
    # ``impl Store for Cache``, not ``impl impl Store for Cache``).
    label = f"{text(trait, scope.src)} for {tname}" if trait is not None else tname
    prefix = qualify(scope.qualname, tname, "::")
    return Found(
        "impl",
        tname,
        ty,
        body=node.child_by_field_name("body"),
        qualname=qualify(scope.qualname, label, "::"),
        child_prefix=prefix,
    )


def _rust_mod(node: Node, scope: Scope) -> Found | None:
    body = node.child_by_field_name("body")
    name_node = node.child_by_field_name("name")
    if body is None or name_node is None:
        return None  # ``mod foo;`` declares a file, defines nothing here
    return Found("module", text(name_node, scope.src), name_node, body=body)


def _rust_attachment(node: Node, src: bytes) -> bool:
    if node.type == "attribute_item":
        return True
    if node.type in ("line_comment", "block_comment"):
        # //! and /*! document the enclosing item, not the next one
        return src[node.start_byte + 2 : node.start_byte + 3] != b"!"
    return False


# -- Zig ------------------------------------------------------------------------


_ZIG_TYPES = {
    "struct_declaration": "struct",
    "union_declaration": "struct",
    "opaque_declaration": "struct",
    "enum_declaration": "enum",
    "error_set_declaration": "type",
}


def _zig_variable(node: Node, scope: Scope) -> Found | None:
    name_node = first_named(node, "identifier")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    for c in node.named_children:
        kind = _ZIG_TYPES.get(c.type)
        if kind is not None:
            return Found(kind, name, name_node, body=c if kind != "type" else None)
        if c.type == "builtin_function" and text(c, scope.src).startswith("@import"):
            return None
    if has_token(node, "const"):
        return Found("constant", name, name_node)
    return None


def _zig_test(node: Node, scope: Scope) -> Found | None:
    label = first_named(node, "string", "identifier")
    name = text(label, scope.src) if label is not None else ""
    return Found("function", f"test {name}".strip(), label or node)


# -- Swift ----------------------------------------------------------------------


_SWIFT_KINDS = {"class": "class", "actor": "class", "struct": "struct", "enum": "enum", "extension": "impl"}


def _swift_class(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    dk = node.child_by_field_name("declaration_kind")
    if name_node is None:
        return None
    name = strip_generics(text(name_node, scope.src))
    kind = _SWIFT_KINDS.get(text(dk, scope.src), "class")
    body = node.child_by_field_name("body")
    if kind == "impl":
        return Found(
            "impl",
            name,
            name_node,
            body=body,
            qualname=qualify(scope.qualname, f"extension {name}", "."),
            child_prefix=qualify(scope.qualname, name, "."),
        )
    return Found(kind, name, name_node, body=body)


# -- specs ------------------------------------------------------------------

SPECS: tuple[LangSpec, ...] = (
    LangSpec(
        "go",
        "tree-sitter-go",
        "tree_sitter_go",
        defs={
            "function_declaration": "function",
            "method_declaration": _go_method,
            "type_declaration": _go_type,
            "const_declaration": _go_const,
        },
    ),
    LangSpec(
        "rust",
        "tree-sitter-rust",
        "tree_sitter_rust",
        defs={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "union_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "impl_item": _rust_impl,
            "mod_item": _rust_mod,
            "const_item": "constant",
            "static_item": "constant",
            "type_item": "type",
            "macro_definition": "function",
        },
        transparent={"foreign_mod_item": "body"},
        attachments=frozenset({"attribute_item", "line_comment", "block_comment"}),
        comments=frozenset({"line_comment", "block_comment"}),
        attachment_test=_rust_attachment,
        sep="::",
    ),
    LangSpec(
        "zig",
        "tree-sitter-zig",
        "tree_sitter_zig",
        defs={
            "function_declaration": "function",
            "variable_declaration": _zig_variable,
            "test_declaration": _zig_test,
        },
    ),
    LangSpec(
        "swift",
        "tree-sitter-swift",
        "tree_sitter_swift",
        defs={
            "class_declaration": _swift_class,
            "protocol_declaration": "interface",
            "function_declaration": "function",
            "protocol_function_declaration": "method",
            "init_declaration": named_method("init"),
            "deinit_declaration": named_method("deinit"),
            "typealias_declaration": "type",
        },
        attachments=frozenset({"comment", "multiline_comment"}),
        comments=frozenset({"comment", "multiline_comment"}),
    ),
)
