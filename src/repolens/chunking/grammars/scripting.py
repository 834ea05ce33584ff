"""Scripting languages: Python, Ruby, PHP, Lua, Bash, Perl, Julia."""

from __future__ import annotations

import re

from tree_sitter import Node

from repolens.chunking.grammars.base import (
    Found,
    Handler,
    LangSpec,
    Scope,
    first_named,
    is_const_name,
    qualify,
    text,
)

# -- Python ---------------------------------------------------------------------


def _py_constant(node: Node, scope: Scope) -> Found | None:
    if scope.kind or node.named_child_count != 1:
        return None
    a = node.named_children[0]
    if a.type != "assignment":
        return None
    left = a.child_by_field_name("left")
    if left is None or left.type != "identifier":
        return None
    name = text(left, scope.src)
    return Found("constant", name, left) if is_const_name(name) else None


# -- Ruby -----------------------------------------------------------------------


def _rb_class(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    kind = "module" if node.type == "module" else "class"
    return Found(
        kind,
        name,
        name_node,
        body=node.child_by_field_name("body"),
        qualname=qualify(scope.qualname, name, "::"),
    )


def _rb_method(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    if node.type == "singleton_method":
        return Found("method", name, name_node, qualname=qualify(scope.qualname, name, "."))
    if scope.kind:
        return Found("method", name, name_node, qualname=f"{scope.qualname}#{name}")
    return Found("function", name, name_node)


def _rb_constant(node: Node, scope: Scope) -> Found | None:
    left = node.child_by_field_name("left")
    if left is None or left.type != "constant":
        return None
    name = text(left, scope.src)
    return Found("constant", name, left, qualname=qualify(scope.qualname, name, "::"))


# -- PHP ------------------------------------------------------------------------


def _php_const(node: Node, scope: Scope) -> Found | None:
    el = first_named(node, "const_element")
    name_node = first_named(el, "name") if el is not None else None
    return Found("constant", text(name_node, scope.src), name_node) if name_node is not None else None


def _php_namespace(node: Node, scope: Scope) -> Found | None:
    # Braced namespaces read like the file-level ``namespace X;``: not part of names.
    body = node.child_by_field_name("body")
    return Found("", "", body=body) if body is not None else None


# -- Lua ------------------------------------------------------------------------


def _lua_function(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    full = text(name_node, scope.src)
    if name_node.type == "method_index_expression":
        m = name_node.child_by_field_name("method")
        return Found("method", text(m, scope.src), name_node, qualname=full, parent=full.rpartition(":")[0])
    if name_node.type == "dot_index_expression":
        f = name_node.child_by_field_name("field")
        return Found("function", text(f, scope.src), name_node, qualname=full, parent=full.rpartition(".")[0])
    return Found("function", full, name_node)


def _lua_assignment(node: Node, scope: Scope) -> Found | None:
    stmt = node if node.type == "assignment_statement" else first_named(node, "assignment_statement")
    if stmt is None:
        return None
    targets = first_named(stmt, "variable_list")
    values = first_named(stmt, "expression_list")
    if targets is None or values is None or targets.named_child_count != 1 or values.named_child_count != 1:
        return None
    if values.named_children[0].type != "function_definition":
        return None
    target = targets.named_children[0]
    full = text(target, scope.src)
    if target.type == "identifier":
        return Found("function", full, target)
    if target.type == "dot_index_expression":
        return Found(
            "function", full.rpartition(".")[2], target, qualname=full, parent=full.rpartition(".")[0]
        )
    return None


# -- Perl -----------------------------------------------------------------------


def _pl_package(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    block = first_named(node, "block")
    if block is not None:
        return Found("module", name, name_node, body=block, qualname=name)
    return None


def _pl_prefix(node: Node, scope: Scope) -> Found | None:
    if first_named(node, "block") is not None:
        return None
    name_node = node.child_by_field_name("name")
    name = text(name_node, scope.src)
    return Found("module", "" if name == "main" else name, name_node)


# -- Julia ----------------------------------------------------------------------


def _jl_callee(node: Node | None) -> Node | None:
    for _ in range(6):
        if node is None:
            return None
        if node.type in ("identifier", "field_expression", "operator"):
            return node
        if node.type in (
            "signature",
            "where_expression",
            "typed_expression",
            "call_expression",
            "parametrized_type_expression",
        ):
            node = node.named_children[0] if node.named_child_count else None
            continue
        return None
    return None


def _jl_function(node: Node, scope: Scope) -> Found | None:
    name_node = _jl_callee(first_named(node, "signature"))
    if name_node is None:
        return None
    full = text(name_node, scope.src)
    return Found("function", full.rpartition(".")[2], name_node, qualname=qualify(scope.qualname, full, "."))


def _jl_assignment(node: Node, scope: Scope) -> Found | None:
    # ``f(x) = ...``: the short function form.
    left = node.named_children[0] if node.named_child_count else None
    if left is None or left.type not in ("call_expression", "where_expression"):
        return None
    name_node = _jl_callee(left)
    if name_node is None:
        return None
    full = text(name_node, scope.src)
    return Found("function", full.rpartition(".")[2], name_node, qualname=qualify(scope.qualname, full, "."))


def _jl_type(kind: str) -> Handler:
    def handler(node: Node, scope: Scope) -> Found | None:
        head = first_named(node, "type_head")
        if head is None:
            return None
        name = re.split(r"[\s{<]", text(head, scope.src).strip(), maxsplit=1)[0]
        return Found(kind, name, head)

    return handler


def _jl_module(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name") or first_named(node, "identifier")
    return (
        Found("module", text(name_node, scope.src), name_node, body=node) if name_node is not None else None
    )


def _jl_const(node: Node, scope: Scope) -> Found | None:
    a = first_named(node, "assignment")
    name_node = first_named(a, "identifier") if a is not None else None
    return Found("constant", text(name_node, scope.src), name_node) if name_node is not None else None


# -- specs ------------------------------------------------------------------

_PY = LangSpec(
    "python",
    "tree-sitter-python",
    "tree_sitter_python",
    defs={
        "function_definition": "function",
        "class_definition": "class",
        "expression_statement": _py_constant,
    },
    wrappers={"decorated_definition": "definition"},
    docstring=True,
)


SPECS: tuple[LangSpec, ...] = (
    _PY,
    LangSpec(
        "ruby",
        "tree-sitter-ruby",
        "tree_sitter_ruby",
        defs={
            "class": _rb_class,
            "module": _rb_class,
            "method": _rb_method,
            "singleton_method": _rb_method,
            "assignment": _rb_constant,
        },
        sep="::",
    ),
    LangSpec(
        "php",
        "tree-sitter-php",
        "tree_sitter_php",
        "language_php",
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "function_definition": "function",
            "const_declaration": _php_const,
            "namespace_definition": _php_namespace,
        },
    ),
    LangSpec("bash", "tree-sitter-bash", "tree_sitter_bash", defs={"function_definition": "function"}),
    LangSpec(
        "lua",
        "tree-sitter-lua",
        "tree_sitter_lua",
        defs={
            "function_declaration": _lua_function,
            "variable_declaration": _lua_assignment,
            "assignment_statement": _lua_assignment,
        },
    ),
    LangSpec(
        "perl",
        "tree-sitter-perl",
        "tree_sitter_perl",
        defs={"subroutine_declaration_statement": "function", "package_statement": _pl_package},
        prefixes={"package_statement": _pl_prefix},
        attachments=frozenset({"comment", "pod"}),
        comments=frozenset({"comment", "pod"}),
        sep="::",
    ),
    LangSpec(
        "julia",
        "tree-sitter-julia",
        "tree_sitter_julia",
        defs={
            "function_definition": _jl_function,
            "macro_definition": _jl_function,
            "struct_definition": _jl_type("struct"),
            "abstract_definition": _jl_type("type"),
            "primitive_definition": _jl_type("type"),
            "module_definition": _jl_module,
            "const_statement": _jl_const,
            "assignment": _jl_assignment,
        },
        attachments=frozenset({"line_comment", "block_comment", "string_literal"}),
        comments=frozenset({"line_comment", "block_comment", "string_literal"}),
    ),
)
