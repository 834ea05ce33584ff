"""Typed locals and fields that the generic reader (:func:`.typed.read_typed`) misses.

That reader takes a declaration's name and type from the fields its grammar
names. Kotlin's grammar names none (``val x: Foo``, ``val x = Foo()``, a
parameter, a constructor's ``val b: B``); C#'s puts each name and value in a
declarator below the declaration's type (``Foo x = ...``); and Java's and
C#'s ``var x = new Foo()`` say the type in the value alone. Each of these
languages' rule (``RefSpec.rules``, run once the generic reader is done) reads
its ``typed`` captures itself, and records what it finds as that reader does:
a function's local in ``typed`` by (function, name), and a name declared
outside every function (a class's field or property, a Kotlin file's
``val``) in ``typed`` by (-1, name), as a Java field is, and as its class's
field (a ``field`` row) when a class holds it, so that ``obj.x.m()`` in
another file finds the type of ``x``.

Nothing here needs another file.
"""

from __future__ import annotations

import tree_sitter as ts

from repolens.chunking.refs.captures import in_file_order
from repolens.chunking.refs.extracting import Extracting, line_of, text

# Kotlin's type nodes a declaration may name (``Foo``, ``Foo?``).
_KOTLIN_TYPES = frozenset({"user_type", "nullable_type"})
_DECLARATION, _CALL, _NAME = (
    frozenset({"variable_declaration"}),
    frozenset({"call_expression"}),
    frozenset({"identifier"}),
)
# Java's and C#'s expression making a value of a named type: ``new Foo()``.
_CREATIONS = frozenset({"object_creation_expression"})
# C#'s declarations of a class's members that are definitions (chunking.grammars.c_family).
_CS_MEMBERS = frozenset({"property_declaration", "event_declaration"})


def declare(
    ex: Extracting, node: ts.Node, name: str, type_node: ts.Node | None, member: bool = False
) -> None:
    """Record that ``name``, declared by ``node``, is of the type (or made by calling the
    constructor) ``type_node`` names, as :func:`.typed.read_typed` records a declaration.
    ``member``: ``node`` declares a member of its class that is a definition of its own (a C#
    property, an event), whose lines are its, not a function's holding a local."""
    if type_node is None or not name:
        return
    if type_node.type == "nullable_type":  # Foo?: a Foo or null (Kotlin's user_type, C#'s name)
        type_node = type_node.named_children[0] if type_node.named_child_count else None
        if type_node is None:
            return
    line = line_of(node)
    at = ex.scopes.at(line, node.start_byte)
    fn = -1 if member else ex.scopes.owner[at]
    key = ex.named_type(text(ex, type_node), fn)
    if not key:
        return
    if fn < 0:
        owner = ex.scopes.owner_class(at)
        if owner:
            ex.fields.setdefault((owner, name), (key, line))
    ex.typed[(fn, name)] = key  # (in the order of the text: a later declaration wins)


def _named_child(node: ts.Node, types: frozenset[str]) -> ts.Node | None:
    return next((c for c in node.named_children if c.type in types), None)


def kotlin(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Kotlin's ``val x: Foo``, ``val x = Foo()`` (a callee named as a type is: a
    constructor), a parameter ``x: Foo`` (not ``vararg``: an array of them), a ``for (x: Foo
    in ...)``, and a constructor's property ``class A(val b: B)`` (one without ``val``/``var``
    is no property)."""
    for node in in_file_order(caps.get("typed", ())):
        if node.type == "class_parameter" and not any(c.type in ("val", "var") for c in node.children):
            continue
        before = node.prev_named_sibling
        if (
            node.type == "parameter"
            and before is not None
            and before.type == "parameter_modifiers"
            and b"vararg" in ex.src[before.start_byte : before.end_byte]
        ):
            continue  # vararg xs: Foo is an array of Foo
        if node.type == "property_declaration":
            var = _named_child(node, _DECLARATION)
            if var is None or _named_child(var, _KOTLIN_TYPES) is not None:
                continue  # a destructuring, or a declared type (its variable_declaration's)
            call = _named_child(node, _CALL)
            callee = call.named_child(0) if call is not None and call.named_child_count else None
            if callee is None or callee.type not in ("identifier", "navigation_expression"):
                continue
            if not text(ex, callee).rpartition(".")[2][:1].isupper():
                continue  # a function's call: what it returns is not known here
            name_node, type_node = _named_child(var, _NAME), callee
        else:
            name_node, type_node = _named_child(node, _NAME), _named_child(node, _KOTLIN_TYPES)
        if name_node is not None:
            declare(ex, node, text(ex, name_node), type_node)


def _created(value: ts.Node | None) -> ts.Node | None:
    """The type a value made by ``new Foo(...)`` is of (None: another value)."""
    return value.child_by_field_name("type") if value is not None and value.type in _CREATIONS else None


def java(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Java's ``var x = new Foo()`` (a declared type is the generic reader's)."""
    for node in in_file_order(caps.get("typed", ())):
        kind = node.child_by_field_name("type")
        if node.type != "local_variable_declaration" or kind is None or text(ex, kind) != "var":
            continue
        for declarator in node.children_by_field_name("declarator"):
            name = declarator.child_by_field_name("name")
            if name is not None:
                declare(ex, node, text(ex, name), _created(declarator.child_by_field_name("value")))


def csharp(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """C#'s ``Foo x``, ``var x = new Foo()``, a parameter, a ``foreach (Foo x in ...)``,
    and a field, property or event of a class."""
    for node in in_file_order(caps.get("typed", ())):
        kind = node.child_by_field_name("type")
        if kind is None:
            continue
        implicit = kind.type == "implicit_type"
        if node.type == "variable_declaration":
            event = node.parent is not None and node.parent.type == "event_field_declaration"
            for declarator in node.named_children:
                if declarator.type != "variable_declarator":
                    continue
                name = declarator.child_by_field_name("name")
                value = declarator.named_children[-1] if declarator.named_child_count > 1 else None
                if name is not None:
                    declare(ex, node, text(ex, name), _created(value) if implicit else kind, event)
        elif not implicit:  # a parameter, a property, a foreach's variable
            name = node.child_by_field_name("name") or node.child_by_field_name("left")
            if name is not None and name.type == "identifier":
                declare(ex, node, text(ex, name), kind, node.type in _CS_MEMBERS)
