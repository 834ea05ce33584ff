"""C++'s typed locals and fields: rules of :data:`repolens.chunking.refs.specs.CPP` (run by
:mod:`.extract` once a file's captures are read), so that ``w.draw()`` and ``p->draw()``
are members of the type the function declares ``w`` and ``p`` of, as a typed local is in
the other languages (:func:`.typed.read_typed`). C++ declares a local's type before its
name, with the name inside declarators (``Widget* p = ...``, ``const Widget& r``), which
the generic reading of a (name, type) pair of fields does not see through. A class's
members are typed the same way (:func:`class_fields`), as its fields, so that ``m.draw()``
and ``this->m.draw()`` in its methods are ``Widget``'s."""

from __future__ import annotations

import tree_sitter as ts

from repolens.chunking.refs.extracting import Extracting
from repolens.chunking.refs.typed import TYPE_NAME

# Smart pointers whose ``->`` reaches their content: ``std::unique_ptr<Widget> p; p->draw()``.
_POINTERS = frozenset({"unique_ptr", "shared_ptr"})
# Calls that make one of them: ``auto p = std::make_unique<Widget>(...)``.
_MAKERS = frozenset({"make_unique", "make_shared"})
# The kinds of the file's definitions whose members a local of their type has.
_CLASSES = frozenset({"class", "struct"})
# A declared name: a local's, a field's.
_NAMES = frozenset({"identifier", "field_identifier"})
# A type named with its keyword (``struct Widget w;``, ``class Widget* p;``).
_ELABORATED = frozenset({"struct_specifier", "class_specifier", "union_specifier"})
# Declarators around a declared name (``*p``, ``&r``, ``p = ...``).
_DECLARATORS = frozenset({"init_declarator", "pointer_declarator", "reference_declarator"})


def typed_locals(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """The locals and parameters of a function declared with a type (``Widget w;``, ``Widget*
    p = ...``, ``const Widget& r``, ``std::unique_ptr<Widget> u``, ``for (Widget& w : all)``,
    ``struct Widget w;``) or made by a type's
    constructor (``auto w = Widget(...)``, ``new Widget``, ``std::make_unique<Widget>()``):
    their type's key in ``ex.typed``, a later declaration of a name winning. A call of a name
    that is no type of the file's and starts in lower case may be a function's: no type."""
    classes = _classes(ex)
    for node in sorted(caps.get("cpp.typed", ()), key=lambda n: n.start_byte):
        fn = ex.scopes.function[node.start_point[0] + 1]
        if fn < 0:
            continue  # a declaration outside functions: a global, a prototype's parameter
        kind = node.child_by_field_name("type")
        for declarator in node.children_by_field_name("declarator"):
            name, value = _declared(declarator)
            if name is None:
                continue
            key = _class_key(ex, _type_name(ex, kind, value, classes), fn, classes)
            if key:
                ex.typed[(fn, ex.src[name.start_byte : name.end_byte].decode("utf-8", "replace"))] = key


def class_fields(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """The members a class's body declares with a type (``Widget m;``, ``Widget* q;``,
    ``std::unique_ptr<Widget> p;``): the class's fields, as the other languages record theirs
    (a ``field`` row, and ``Extracting.fields``, which the class's methods read a bare ``m`` and
    ``this->m`` through). A method declared there (``void draw();``) declares no field."""
    classes = _classes(ex)
    for node in sorted(caps.get("cpp.field", ()), key=lambda n: n.start_byte):
        line = node.start_point[0] + 1
        owner = ex.scopes.owner_class(ex.scopes.inner[line])
        if not owner or ex.scopes.function[line] >= 0:
            continue
        kind = node.child_by_field_name("type")
        for declarator in node.children_by_field_name("declarator"):
            name, _ = _declared(declarator)
            key = _class_key(ex, _type_name(ex, kind, None, classes), -1, classes) if name is not None else ""
            if key and name is not None:
                field = ex.src[name.start_byte : name.end_byte].decode("utf-8", "replace")
                ex.fields.setdefault((owner, field), (key, line))


def _classes(ex: Extracting) -> frozenset[str]:
    """The qualified names of the file's classes and structs, once per file (each typed
    declaration asks)."""
    return frozenset(s.qualname for s in ex.symbols if s.kind in _CLASSES)


def _class_key(ex: Extracting, text: str, fn: int, classes: frozenset[str]) -> str:
    """The key of the type ``text`` names in function ``fn`` ("" unknown, or one of the file's
    definitions that is none of its ``classes``): a local's as :meth:`Extracting.named_type`
    reads it, a field's (``fn`` -1) as the file's top level does, which the locals of code
    outside functions (``TEST_CASE("x") { age a = ...; }``) do not hide."""
    if fn >= 0:
        key = ex.named_type(text, fn) if text else ""
    else:
        key = ex.type_key(text, fn) if text and TYPE_NAME.fullmatch(text) else ""
    return key if key[:1] != "=" or _a_class(classes, key[1:]) else ""


def _a_class(classes: frozenset[str], key: str) -> bool:
    """Whether the file's definition ``key`` (dotted) is one of its ``classes`` (a class or a
    struct): not an alias (``using json = nlohmann::json;``, whose members are another file's
    type's)."""
    return key.replace(".", "::") in classes


def _declared(node: ts.Node | None) -> tuple[ts.Node | None, ts.Node | None]:
    """The name a declarator declares and the value it is given (None none)."""
    value = None
    while node is not None and node.type in _DECLARATORS:
        if node.type == "init_declarator":
            value = node.child_by_field_name("value")
        inner = node.child_by_field_name("declarator")
        node = (
            inner
            if inner is not None
            else next((c for c in node.named_children if c.type.endswith(("identifier", "declarator"))), None)
        )
    return (node, value) if node is not None and node.type in _NAMES else (None, None)


def _type_name(ex: Extracting, kind: ts.Node | None, value: ts.Node | None, classes: frozenset[str]) -> str:
    """The dotted name of the type ``kind`` names, or ``value`` makes when ``kind`` is ``auto``
    (a call of a capitalised name or of one of the file's ``classes``)."""
    if kind is not None and kind.type == "placeholder_type_specifier":
        if value is None:
            return ""
        if value.type == "new_expression":
            return _named(ex, value.child_by_field_name("type"))
        if value.type != "call_expression":
            return ""
        callee = value.child_by_field_name("function")
        made = _named(ex, callee, pointer=True)
        if not made or made == _named(ex, callee):  # Widget(...), not std::make_unique<Widget>()
            return made if made.rpartition(".")[2][:1].isupper() or _a_class(classes, made) else ""
        return made
    return _named(ex, kind, pointer=True)


def _named(ex: Extracting, node: ts.Node | None, pointer: bool = False) -> str:
    """The dotted name of a type (``ns::Widget``: ``ns.Widget``), its template's arguments left
    out; with ``pointer``, of a smart pointer's content (``std::unique_ptr<Widget>``: ``Widget``)."""
    if node is None:
        return ""
    if node.type in ("template_type", "template_function"):
        name = node.child_by_field_name("name")
        args = node.child_by_field_name("arguments")
        base = _named(ex, name)
        if pointer and base.rpartition(".")[2] in (_POINTERS | _MAKERS) and args is not None:
            first = args.named_children[0] if args.named_child_count else None
            if first is not None and first.type == "type_descriptor":
                first = first.child_by_field_name("type")
            return _named(ex, first)
        return base
    if node.type == "qualified_identifier":
        scope, name = node.child_by_field_name("scope"), node.child_by_field_name("name")
        inner = _named(ex, name, pointer)
        if scope is None or not inner:
            return inner
        if pointer and inner != _named(ex, name):  # std::unique_ptr<Widget>: the content's
            return inner
        head = ex.src[scope.start_byte : scope.end_byte].decode("utf-8", "replace")
        return f"{head.replace('::', '.')}.{inner}"
    if node.type in _ELABORATED and node.child_by_field_name("body") is None:  # struct Widget w;
        return _named(ex, node.child_by_field_name("name"))
    if node.type in ("type_identifier", "identifier", "namespace_identifier"):
        return ex.src[node.start_byte : node.end_byte].decode("utf-8", "replace")
    return ""
