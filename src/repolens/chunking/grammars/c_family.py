"""The C family: C, C++, Objective-C and C#."""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from tree_sitter import Node

from repolens.chunking.grammars.base import (
    CLASS_KINDS,
    Found,
    Handler,
    LangSpec,
    Scope,
    first_named,
    generic,
    qualify,
    text,
)

# -- C / C++ / Objective-C ------------------------------------------------------


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


# A namespace's name where the file names one (``namespace ui {``, ``using namespace ui;``,
# ``namespace fs = std::filesystem;``, ``namespace a::b {``).
_NAMESPACE = re.compile(rb"\bnamespace\s+([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*)")


@functools.lru_cache(maxsize=4)
def _namespaces(src: bytes) -> frozenset[str]:
    """The names the file gives namespaces, ``std`` always: read once per file (each
    out-of-class definition asks; a file's ``src`` is one object, its hash kept)."""
    found = {"std"}
    for m in _NAMESPACE.finditer(src):
        found.update(p.strip() for p in m.group(1).decode("utf-8", "replace").split("::"))
    return frozenset(found)


def _c_function(node: Node, scope: Scope) -> Found | None:
    """A function's definition, or (C++) a member's out of its class, ``void Widget::draw()
    {...}``: a method, as its declaration in the class's body is, so that what is said of
    methods (its class's other members, its overloads) is said of both; ``void ui::f() {...}``,
    ``ui`` a namespace the file names, is a function."""
    name_node = _c_declarator_name(node.child_by_field_name("declarator"))
    if name_node is None:
        return None
    full = text(name_node, scope.src)
    if name_node.type == "qualified_identifier" and "::" in full:
        owner, _, name = full.rpartition("::")
        qual = qualify(scope.qualname, full, "::")
        last = owner.rpartition("::")[2].partition("<")[0].strip()
        kind = "function" if last in _namespaces(scope.src) else "method"
        return Found(kind, name, name_node, qualname=qual, parent=qualify(scope.qualname, owner, "::"))
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
        return generic(inner, scope, handler) if handler else None
    return handler(inner, scope)


def _cpp_field(node: Node, scope: Scope) -> Found | None:
    # ``class Inner {...};`` in a class body is a field_declaration without a declarator.
    ty = node.child_by_field_name("type")
    if node.child_by_field_name("declarator") is not None:
        return _cpp_member(node, scope)  # ``void draw();``: a method declared (not ``int n;``)
    if ty is None or ty.type not in _C_TAG_KINDS:
        return None
    return _c_tagged(ty, scope)


# Statements a macro the parser does not know may leave read as a declaration (``for (...)``
# after ``JSON_HEDLEY_NON_NULL(2)``, in nlohmann/json's lexer): no function's name.
_STATEMENTS = frozenset({"for", "if", "while", "switch", "return", "do", "else", "sizeof"})
# What a function's declarator may be wrapped in: its result's ``*`` and ``&`` (``Widget& f();``).
_RESULT_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator"})


def _declares_function(declarator: Node | None, src: bytes) -> bool:
    """Whether ``declarator`` declares a function (``draw()``, ``*make(int)``, ``&operator=(...)``),
    not a variable (``n``, ``(*callback)(int)``: a pointer to one)."""
    while declarator is not None and declarator.type in _RESULT_DECLARATORS:
        declarator = declarator.named_children[-1] if declarator.named_child_count else None
    if declarator is None or declarator.type != "function_declarator":
        return False
    name = declarator.child_by_field_name("declarator")
    return name is not None and name.type in _C_NAME_TYPES and text(name, src) not in _STATEMENTS


def _c_prototype(node: Node, scope: Scope) -> Found | None:
    """A function declared without its body, in a header (``Widget make_widget(int);``: the API
    the header declares, its definition in a source file the header may not name) or a class's
    body. Named as its definition is (``Widget::draw``), so a symbol's query finds both. Not
    in a function's body (:mod:`repolens.chunking.nested`): ``Widget w();`` is a local."""
    if scope.kind == "function" or not _declares_function(node.child_by_field_name("declarator"), scope.src):
        return None
    return _c_function(node, scope)


def _cpp_member(node: Node, scope: Scope) -> Found | None:
    """A method declared in a class's body (``void draw();``, ``~Widget();``), in any file: a
    prototype outside classes is one only in a header (in a source file, a forward declaration
    of the file's own function)."""
    return _c_prototype(node, scope) if scope.kind in CLASS_KINDS else None


def _objc_class(node: Node, scope: Scope) -> Found | None:
    name_node = first_named(node, "identifier", "type_identifier")
    if name_node is None:
        return None
    name = text(name_node, scope.src)
    if node.type in ("class_implementation", "category_implementation"):
        # kind "impl" already says @implementation: the name is the class's
        return Found("impl", name, name_node, body=node, child_prefix=name)
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


# -- C# -------------------------------------------------------------------------


def _cs_namespace_prefix(node: Node, scope: Scope) -> Found | None:
    name_node = node.child_by_field_name("name")
    return Found("module", text(name_node, scope.src), name_node) if name_node is not None else None


def _cs_accessors(node: Node) -> Node | None:
    """Where a property's, an indexer's or an event's code is: its ``{ get; set; }`` or ``=> x``
    (its header stops there, as a method's stops at its body)."""
    accessors = node.child_by_field_name("accessors")
    if accessors is not None:
        return accessors
    value = node.child_by_field_name("value")
    return value if value is not None and value.type == "arrow_expression_clause" else None


def _cs_property(node: Node, scope: Scope) -> Found | None:
    """A property (``Total { get; set; }``, ``Count => n``) or an event with accessors: a
    method, as a Dart getter or a TypeScript ``get`` is, since its accessors are code
    called by ``cart.Total`` as a method is by ``cart.Add()``."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    return Found("method", text(name_node, scope.src), name_node, body=_cs_accessors(node))


def _cs_indexer(node: Node, scope: Scope) -> Found | None:
    """An indexer, ``this[int i]``: named ``this``, as it is declared."""
    keyword = next((c for c in node.children if c.type == "this"), None)
    return Found("method", "this", keyword, body=_cs_accessors(node)) if keyword is not None else None


def _cs_event_field(node: Node, scope: Scope) -> Found | None:
    """``public event EventHandler Changed;`` (``A, B;``: one each): members of the class, as
    an event with accessors is, that ``cart.Changed += f`` uses."""
    declaration = first_named(node, "variable_declaration")
    names = [
        n
        for d in (declaration.named_children if declaration is not None else ())
        if d.type == "variable_declarator" and (n := d.child_by_field_name("name")) is not None
    ]
    if not names:
        return None
    found = Found("method", text(names[0], scope.src), names[0])
    if len(names) > 1:
        found.members = [(text(n, scope.src), "method", n) for n in names]
    return found


# -- specs ------------------------------------------------------------------

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
    "declaration": _cpp_member,  # in a class's body: ``~Widget();``
    "alias_declaration": "type",
    "concept_definition": "type",
}


_C = LangSpec("c", "tree-sitter-c", "tree_sitter_c", defs=_C_DEFS, transparent=_C_TRANSPARENT)
_CPP = LangSpec(
    "cpp", "tree-sitter-cpp", "tree_sitter_cpp", defs=_CPP_DEFS, transparent=_C_TRANSPARENT, sep="::"
)

# Headers, read with their prototypes: ``spec_for`` picks these by the file's extension.
HEADER_EXTENSIONS = (".h", ".hh", ".hpp", ".hxx")
C_HEADER = replace(_C, defs={**_C_DEFS, "declaration": _c_prototype})
CPP_HEADER = replace(_CPP, defs={**_CPP_DEFS, "declaration": _c_prototype})


SPECS: tuple[LangSpec, ...] = (
    _C,
    _CPP,
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
            "property_declaration": _cs_property,
            "event_declaration": _cs_property,
            "indexer_declaration": _cs_indexer,
            "event_field_declaration": _cs_event_field,
        },
        prefixes={"file_scoped_namespace_declaration": _cs_namespace_prefix},
    ),
)
