"""Languages of the JVM: Java, Kotlin, Scala, Groovy."""

from __future__ import annotations

from tree_sitter import Node

from repolens.chunking.grammars.base import (
    Found,
    Handler,
    LangSpec,
    Scope,
    first_named,
    has_token,
    named_method,
    strip_generics,
    text,
)

# -- Kotlin ---------------------------------------------------------------------


def _kt_class(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name") or first_named(node, "identifier", "type_identifier")
    if node.type == "companion_object":
        name = text(name_node, scope.src) if name_node is not None else "Companion"
    elif name_node is None:
        return None
    else:
        name = text(name_node, scope.src)
    kind = "class"
    if has_token(node, "interface"):
        kind = "interface"
    else:
        mods = first_named(node, "modifiers")
        if mods is not None and b"enum" in scope.src[mods.start_byte : mods.end_byte]:
            kind = "enum"
    body = first_named(node, "class_body", "enum_class_body")
    return Found(kind, name, name_node, body=body)


def _kt_function(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    receiver = None
    for c in node.named_children:
        if c == name_node:
            break
        if c.type in ("user_type", "nullable_type", "receiver_type"):
            receiver = c
    if receiver is not None and not scope.kind:
        recv = strip_generics(text(receiver, scope.src))
        return Found("function", name, name_node, qualname=f"{recv}.{name}")
    return Found("function", name, name_node)


def _kt_property(node: Node, scope: Scope) -> Found | None:
    if scope.kind:
        return None
    mods = first_named(node, "modifiers")
    if mods is None or b"const" not in scope.src[mods.start_byte : mods.end_byte]:
        return None
    decl = first_named(node, "variable_declaration")
    name_node = first_named(decl, "identifier", "simple_identifier") if decl is not None else None
    return Found("constant", text(name_node, scope.src), name_node) if name_node is not None else None


# -- specs ------------------------------------------------------------------

_JAVA_DEFS: dict[str, str | Handler] = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "class",
    "annotation_type_declaration": "interface",
    "method_declaration": "method",
    "constructor_declaration": "method",
    "compact_constructor_declaration": "method",
}

_JAVA_COMMENTS = frozenset({"line_comment", "block_comment", "comment"})


SPECS: tuple[LangSpec, ...] = (
    LangSpec(
        "java",
        "tree-sitter-java",
        "tree_sitter_java",
        defs=_JAVA_DEFS,
        transparent={"enum_body_declarations": ""},
        attachments=_JAVA_COMMENTS,
        comments=_JAVA_COMMENTS,
    ),
    LangSpec(
        "kotlin",
        "tree-sitter-kotlin",
        "tree_sitter_kotlin",
        defs={
            "class_declaration": _kt_class,
            "object_declaration": _kt_class,
            "companion_object": _kt_class,
            "function_declaration": _kt_function,
            "property_declaration": _kt_property,
            "type_alias": "type",
            "secondary_constructor": named_method("constructor"),
        },
        attachments=_JAVA_COMMENTS,
        comments=_JAVA_COMMENTS,
    ),
    LangSpec(
        "scala",
        "tree-sitter-scala",
        "tree_sitter_scala",
        defs={
            "class_definition": "class",
            "object_definition": "class",
            "trait_definition": "trait",
            "enum_definition": "enum",
            "function_definition": "function",
            "function_declaration": "function",
            "type_definition": "type",
            "package_object": "module",
        },
        attachments=frozenset({"comment", "block_comment"}),
        comments=frozenset({"comment", "block_comment"}),
    ),
    LangSpec(
        "groovy",
        "tree-sitter-groovy",
        "tree_sitter_groovy",
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "method",
            "function_definition": "function",
        },
        attachments=_JAVA_COMMENTS,
        comments=_JAVA_COMMENTS,
    ),
)
