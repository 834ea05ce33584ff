"""Tree-sitter grammars and what their nodes mean.

Each supported language has a :class:`LangSpec`: which PyPI grammar package
provides it (all are binary wheels with the parser compiled in: nothing is
downloaded at run time), which node types are definitions and of what kind,
how a definition's name and qualified name are found, and which sibling nodes
(doc comments, decorators, attributes) belong to the definition after them.

Kinds form a small fixed vocabulary (:data:`KINDS`). A node type maps either
to a kind (the name is the node's ``name`` field; classes, modules and other
containers have their members in the ``body`` field) or to a handler
function for anything less regular. Handlers get the node and the enclosing
:class:`Scope` and return a :class:`Found` or ``None`` (not a definition).

Qualified names follow each language's idiom: ``Class.method`` for most,
``Type::method`` for Rust and C++, ``(*Recv).Method`` / ``Recv.Method`` for
Go, ``Mod::Class#method`` / ``Mod::Class.method`` for Ruby, ``-[Class sel:]``
for Objective-C, ``Pkg::sub`` for Perl. Block-scoped namespaces are part of
the name (C++, C#, Rust ``mod``, TS ``namespace``, Ruby/Elixir/Julia/OCaml
modules); file-level package declarations (Java, Kotlin, Scala, Go, PHP) are
not.
"""

from __future__ import annotations

import functools
import importlib
import re
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata

import tree_sitter as ts
from tree_sitter import Node

KINDS = frozenset(
    {
        "function",
        "method",
        "class",
        "struct",
        "enum",
        "interface",
        "trait",
        "impl",
        "module",
        "type",
        "constant",
        "section",
        "block",
        "window",
    }
)
# Short names people type for a kind (keywords of the languages that define them).
KIND_ALIASES: dict[str, str] = {
    "func": "function",
    "fn": "function",
    "def": "function",
    "fun": "function",
    "cls": "class",
    "const": "constant",
    "mod": "module",
    "namespace": "module",
}
# Kinds whose bodies are searched for member definitions.
CONTAINER_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "impl", "module"})
# A function directly inside one of these is a method.
CLASS_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "impl"})


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a node sits: the qualified-name prefix and kind of its container."""

    qualname: str
    kind: str
    src: bytes
    spec: LangSpec


@dataclass(slots=True)
class Found:
    """A definition recognised by a spec.

    ``kind == ""`` means "not a definition, but look inside ``body`` as if
    its members were here" (an anonymous namespace, ``extern "C" {}``).
    """

    kind: str
    name: str
    name_node: Node | None = None
    body: Node | None = None  # where members are (containers only)
    qualname: str | None = None  # default: scope prefix + sep + name
    parent: str | None = None  # default: the scope's qualname
    child_prefix: str | None = None  # default: qualname (Rust impls: the type)
    end_node: Node | None = None  # last node when a definition spans siblings
    doc: str = ""
    members: list[tuple[str, str, Node]] = field(default_factory=list)  # (name, kind, node)


Handler = Callable[[Node, Scope], "Found | None"]


@dataclass(frozen=True)
class LangSpec:
    name: str  # repolens language name
    package: str  # PyPI distribution
    module: str  # import name
    entry: str = "language"  # function returning the grammar
    defs: Mapping[str, str | Handler] = field(default_factory=dict)
    # Definition wrappers: node type -> field holding the definition
    # ("" = last named child). The wrapper's range is the definition's.
    wrappers: Mapping[str, str] = field(default_factory=dict)
    # Nodes whose children are treated as siblings of the node
    # (node type -> field holding them, "" = the node itself).
    transparent: Mapping[str, str] = field(default_factory=dict)
    # Nodes that set the qualified-name prefix for the siblings after them
    # (C# ``namespace X;``, Perl ``package X;``).
    prefixes: Mapping[str, Handler] = field(default_factory=dict)
    # Sibling nodes that belong to the next definition when adjacent to it.
    attachments: frozenset[str] = frozenset({"comment"})
    # Among attachments, those whose text is documentation.
    comments: frozenset[str] = frozenset({"comment"})
    attachment_test: Callable[[Node, bytes], bool] | None = None
    sep: str = "."
    docstring: bool = False  # Python-style docstrings (first string in the body)
    merge_clauses: bool = False  # consecutive same-name definitions are one (Haskell, Elixir)


# -- helpers for handlers ------------------------------------------------


def text(node: Node | None, src: bytes) -> str:
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def qualify(prefix: str, name: str, sep: str) -> str:
    return f"{prefix}{sep}{name}" if prefix else name


def first_named(node: Node, *types: str) -> Node | None:
    for c in node.named_children:
        if c.type in types:
            return c
    return None


def _has_token(node: Node, token: str) -> bool:
    return any(c.type == token for c in node.children)


def _is_const_name(name: str) -> bool:
    return len(name) > 1 and name.isupper()


_GENERICS = re.compile(r"<.*>|\[.*\]")


def _strip_generics(name: str) -> str:
    return _GENERICS.sub("", name).strip()


# -- Python ----------------------------------------------------------------


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
    return Found("constant", name, left) if _is_const_name(name) else None


# -- JavaScript / TypeScript ---------------------------------------------

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
    if not scope.kind and node.children[0].type == "const" and _is_const_name(name):
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


# -- Go ----------------------------------------------------------------------


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
    base = _strip_generics(text(rtype, scope.src).lstrip("*").strip())
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


# -- Rust ------------------------------------------------------------------


def _rust_impl(node: Node, scope: Scope) -> Found | None:
    ty = node.child_by_field_name("type")
    if ty is None:
        return None
    tname = _strip_generics(text(ty, scope.src))
    trait = node.child_by_field_name("trait")
    label = f"impl {text(trait, scope.src)} for {tname}" if trait is not None else f"impl {tname}"
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


# -- C / C++ / Objective-C ---------------------------------------------------

_C_NAME_TYPES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
        "template_function",
        "primitive_type",
    }
)


def _c_declarator_name(node: Node | None) -> Node | None:
    for _ in range(12):
        if node is None:
            return None
        if node.type in _C_NAME_TYPES:
            return node
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            nxt = next(
                (c for c in node.named_children if c.type.endswith("declarator") or c.type in _C_NAME_TYPES),
                None,
            )
        node = nxt
    return None


def _c_function(node: Node, scope: Scope) -> Found | None:
    name_node = _c_declarator_name(node.child_by_field_name("declarator"))
    if name_node is None:
        return None
    full = text(name_node, scope.src)
    if name_node.type == "qualified_identifier" and "::" in full:
        owner, _, name = full.rpartition("::")
        qual = qualify(scope.qualname, full, "::")
        return Found("function", name, name_node, qualname=qual, parent=qualify(scope.qualname, owner, "::"))
    return Found("function", full, name_node)


_C_TAG_KINDS = {
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "class_specifier": "class",
}


def _c_tagged(node: Node, scope: Scope) -> Found | None:
    body = node.child_by_field_name("body")
    name_node = node.child_by_field_name("name")
    if body is None or name_node is None:
        return None
    return Found(_C_TAG_KINDS[node.type], text(name_node, scope.src), name_node, body=body)


def _c_typedef(node: Node, scope: Scope) -> Found | None:
    name_node = _c_declarator_name(node.child_by_field_name("declarator"))
    if name_node is None:
        return None
    ty = node.child_by_field_name("type")
    kind, body = "type", None
    if ty is not None and ty.type in _C_TAG_KINDS and ty.child_by_field_name("body") is not None:
        kind, body = _C_TAG_KINDS[ty.type], ty.child_by_field_name("body")
    # the signature starts at ``typedef``, not at the name after the body
    return Found(kind, text(name_node, scope.src), node, body=body)


def _c_macro(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    kind = "function" if node.type == "preproc_function_def" else "constant"
    return Found(kind, text(name_node, scope.src), name_node)


def _cpp_namespace(node: Node, scope: Scope) -> Found | None:
    body = node.child_by_field_name("body")
    name_node = node.child_by_field_name("name")
    if body is None:
        return None
    if name_node is None:
        return Found("", "", body=body)  # anonymous namespace: no name of its own
    return Found("module", text(name_node, scope.src), name_node, body=body)


def _cpp_template(node: Node, scope: Scope) -> Found | None:
    inner = node.named_children[-1] if node.named_child_count else None
    if inner is None:
        return None
    handler = scope.spec.defs.get(inner.type)
    if handler is None or isinstance(handler, str):
        return _generic(inner, scope, handler) if handler else None
    return handler(inner, scope)


def _cpp_field(node: Node, scope: Scope) -> Found | None:
    # ``class Inner {...};`` in a class body is a field_declaration without a declarator.
    ty = node.child_by_field_name("type")
    if ty is None or node.child_by_field_name("declarator") is not None or ty.type not in _C_TAG_KINDS:
        return None
    return _c_tagged(ty, scope)


def _objc_class(node: Node, scope: Scope) -> Found | None:
    name_node = first_named(node, "identifier", "type_identifier")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    if node.type in ("class_implementation", "category_implementation"):
        return Found(
            "impl", name, name_node, body=node, qualname=f"@implementation {name}", child_prefix=name
        )
    kind = "interface" if node.type == "protocol_declaration" else "class"
    return Found(kind, name, name_node, body=node)


def _objc_method(node: Node, scope: Scope) -> Found | None:
    parts: list[str] = []
    name_node = None
    for c in node.named_children:
        if c.type == "identifier":
            parts.append(text(c, scope.src))
            name_node = name_node or c
        elif c.type == "method_parameter" and parts:
            parts[-1] += ":"
    if not parts:
        return None
    sel = "".join(parts) if len(parts) == 1 or all(p.endswith(":") for p in parts) else " ".join(parts)
    sign = "+" if node.children and node.children[0].type == "+" else "-"
    qual = f"{sign}[{scope.qualname} {sel}]" if scope.qualname else sel
    return Found("method", sel, name_node, qualname=qual)


# -- C# ----------------------------------------------------------------------


def _cs_namespace_prefix(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    return Found("module", text(name_node, scope.src), name_node) if name_node is not None else None


# -- Ruby --------------------------------------------------------------------


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


# -- PHP ---------------------------------------------------------------------


def _php_const(node: Node, scope: Scope) -> Found | None:
    el = first_named(node, "const_element")
    name_node = first_named(el, "name") if el is not None else None
    return Found("constant", text(name_node, scope.src), name_node) if name_node is not None else None


def _php_namespace(node: Node, scope: Scope) -> Found | None:
    # Braced namespaces read like the file-level ``namespace X;``: not part of names.
    body = node.child_by_field_name("body")
    return Found("", "", body=body) if body is not None else None


# -- Kotlin ------------------------------------------------------------------


def _kt_class(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name") or first_named(node, "identifier", "type_identifier")
    if node.type == "companion_object":
        name = text(name_node, scope.src) if name_node is not None else "Companion"
    elif name_node is None:
        return None
    else:
        name = text(name_node, scope.src)
    kind = "class"
    if _has_token(node, "interface"):
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
        recv = _strip_generics(text(receiver, scope.src))
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


# -- Swift -------------------------------------------------------------------

_SWIFT_KINDS = {"class": "class", "actor": "class", "struct": "struct", "enum": "enum", "extension": "impl"}


def _swift_class(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    dk = node.child_by_field_name("declaration_kind")
    if name_node is None:
        return None
    name = _strip_generics(text(name_node, scope.src))
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


def _swift_named(name: str) -> Handler:
    def handler(node: Node, scope: Scope) -> Found | None:
        return Found("method", name, node)

    return handler


# -- Lua ---------------------------------------------------------------------


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


# -- Haskell -----------------------------------------------------------------


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


# -- Elixir ------------------------------------------------------------------

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


# -- Julia -------------------------------------------------------------------


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


# -- OCaml -------------------------------------------------------------------


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


# -- Zig ---------------------------------------------------------------------

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
    if _has_token(node, "const"):
        return Found("constant", name, name_node)
    return None


def _zig_test(node: Node, scope: Scope) -> Found | None:
    label = first_named(node, "string", "identifier")
    name = text(label, scope.src) if label is not None else ""
    return Found("function", f"test {name}".strip(), label or node)


# -- Dart --------------------------------------------------------------------


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


# -- Perl --------------------------------------------------------------------


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


# -- the generic rule --------------------------------------------------------


def _generic(node: Node, scope: Scope, kind: str) -> Found | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    body = node.child_by_field_name("body") if kind in CONTAINER_KINDS else None
    return Found(kind, text(name_node, scope.src), name_node, body=body)


def classify(node: Node, scope: Scope) -> Found | None:
    """The definition ``node`` is under ``scope``'s spec, or ``None``."""
    rule = scope.spec.defs.get(node.type)
    if rule is None:
        return None
    if isinstance(rule, str):
        return _generic(node, scope, rule)
    return rule(node, scope)


# -- the registry ------------------------------------------------------------

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

_C_DEFS: dict[str, str | Handler] = {
    "function_definition": _c_function,
    "struct_specifier": _c_tagged,
    "union_specifier": _c_tagged,
    "enum_specifier": _c_tagged,
    "type_definition": _c_typedef,
    "preproc_def": _c_macro,
    "preproc_function_def": _c_macro,
}
_C_TRANSPARENT = {
    "preproc_if": "",
    "preproc_ifdef": "",
    "preproc_else": "",
    "preproc_elif": "",
    "preproc_elifdef": "",
    "linkage_specification": "body",
    "declaration_list": "",
}
_CPP_DEFS: dict[str, str | Handler] = {
    **_C_DEFS,
    "class_specifier": _c_tagged,
    "namespace_definition": _cpp_namespace,
    "template_declaration": _cpp_template,
    "field_declaration": _cpp_field,
    "alias_declaration": "type",
    "concept_definition": "type",
}

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

SPECS: dict[str, LangSpec] = {
    s.name: s
    for s in (
        _PY,
        LangSpec(
            "javascript", "tree-sitter-javascript", "tree_sitter_javascript", defs=_JS_DEFS, **_JS_COMMON
        ),
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
            "java",
            "tree-sitter-java",
            "tree_sitter_java",
            defs=_JAVA_DEFS,
            transparent={"enum_body_declarations": ""},
            attachments=_JAVA_COMMENTS,
            comments=_JAVA_COMMENTS,
        ),
        LangSpec("c", "tree-sitter-c", "tree_sitter_c", defs=_C_DEFS, transparent=_C_TRANSPARENT),
        LangSpec(
            "cpp", "tree-sitter-cpp", "tree_sitter_cpp", defs=_CPP_DEFS, transparent=_C_TRANSPARENT, sep="::"
        ),
        LangSpec(
            "csharp",
            "tree-sitter-c-sharp",
            "tree_sitter_c_sharp",
            defs={
                "class_declaration": "class",
                "struct_declaration": "struct",
                "record_declaration": "class",
                "record_struct_declaration": "struct",
                "interface_declaration": "interface",
                "enum_declaration": "enum",
                "method_declaration": "method",
                "constructor_declaration": "method",
                "destructor_declaration": "method",
                "delegate_declaration": "type",
                "namespace_declaration": "module",
            },
            prefixes={"file_scoped_namespace_declaration": _cs_namespace_prefix},
        ),
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
                "secondary_constructor": _swift_named("constructor"),
            },
            attachments=_JAVA_COMMENTS,
            comments=_JAVA_COMMENTS,
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
                "init_declaration": _swift_named("init"),
                "deinit_declaration": _swift_named("deinit"),
                "typealias_declaration": "type",
            },
            attachments=frozenset({"comment", "multiline_comment"}),
            comments=frozenset({"comment", "multiline_comment"}),
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
        LangSpec(
            "ocaml",
            "tree-sitter-ocaml",
            "tree_sitter_ocaml",
            "language_ocaml",
            defs={
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
            },
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
        LangSpec(
            "objc",
            "tree-sitter-objc",
            "tree_sitter_objc",
            defs={
                **_C_DEFS,
                "class_interface": _objc_class,
                "class_implementation": _objc_class,
                "protocol_declaration": _objc_class,
                "method_declaration": _objc_method,
                "method_definition": _objc_method,
            },
            transparent={**_C_TRANSPARENT, "implementation_definition": ""},
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
}


def spec_for(language: str, path: str = "") -> LangSpec | None:
    """The spec for ``language`` (``path`` picks OCaml interfaces), or ``None``."""
    spec = SPECS.get(language)
    if spec is not None and language == "ocaml" and path.endswith(".mli"):
        return _ML_INTERFACE
    return spec


_ML_INTERFACE = LangSpec(
    "ocaml", "tree-sitter-ocaml", "tree_sitter_ocaml", "language_ocaml_interface", defs=SPECS["ocaml"].defs
)

# Parsers hold state while parsing: one per thread and grammar.
_local = threading.local()


@functools.cache
def load_language(module: str, entry: str) -> ts.Language | None:
    """The grammar from an installed wheel; ``None`` if it is missing or incompatible.

    Cached for the process: installed packages do not change under it.
    """
    try:
        capsule = getattr(importlib.import_module(module), entry)()
        if isinstance(capsule, int):  # perl's wheel returns a raw pointer (deprecated form)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return ts.Language(capsule)
        return ts.Language(capsule)
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


def parser_for(spec: LangSpec) -> ts.Parser | None:
    cache: dict[tuple[str, str], ts.Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    key = (spec.module, spec.entry)
    parser = cache.get(key)
    if parser is None:
        lang = load_language(spec.module, spec.entry)
        if lang is None:
            return None
        parser = cache[key] = ts.Parser(lang)
    return parser


def available_languages() -> list[str]:
    """Language names whose grammar is installed and loads."""
    return sorted(name for name, s in SPECS.items() if load_language(s.module, s.entry) is not None)


@functools.cache
def grammar_versions() -> tuple[tuple[str, str], ...]:
    """``(package, version)`` of tree-sitter and every grammar package, for index fingerprints."""
    out = []
    for pkg in sorted({"tree-sitter", *(s.package for s in SPECS.values())}):
        try:
            out.append((pkg, metadata.version(pkg)))
        except metadata.PackageNotFoundError:
            out.append((pkg, "-"))
    return tuple(out)
