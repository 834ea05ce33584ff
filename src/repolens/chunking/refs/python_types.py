"""Python's types that a plain walk of names misses: what functions return,
local classes, what a class body names.

Run once per Python file after its locals' types are read (:func:`extend`,
the first of the ``rules`` of :mod:`.specs`'s Python, before pytest's
fixtures, :mod:`.fixtures`), on the captures of the file's one query:

**what a function returns.** A function or method whose return annotation
names a class, or that returns ``X(...)`` or a local of a known type, has
that class as its result: a ``field`` row (no use) scoped to the function
(a method's: its class's field of the method's name), its target the
class's key, as Go's declared results are. A local made by calling a
function (``s = requests.session()``, or ``requests.session().get``) has the
function's key as its type, as a local made by calling a class has the
class's; a question about ``Session.get`` reads the ``field`` rows of
``Session`` and adds the function's keys to what means it
(:mod:`repolens.search.references`).

**local classes.** A class defined in a function with one base
(``class MyFlask(flask.Flask)`` in a test) is no symbol; a local made by
calling it (``app = MyFlask(__name__)``) has its base's type for every
member the local class does not define itself (``@app.route`` is
``flask.Flask.route``).

**class bodies.** A name in a class body, outside its methods, is the
class's own member first (``tag = to_json`` with ``to_json`` a method of
the class), then the module's; a class's bases of the same file are kept,
so that ``self.x.name`` finds the field ``x`` a base declares
(``self.serializer.tag`` in a subclass of ``Tag``, which declares
``serializer: Serializer``).

Nothing here needs another file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import tree_sitter as ts

from repolens.chunking.refs import same_file_key
from repolens.chunking.refs.captures import in_file_order
from repolens.chunking.refs.extracting import Extracting, line_of, text

# A generator's annotation: what it yields.
_YIELDS = re.compile(
    r"^(?:(?:typing|t|collections\.abc)\.)?(?:Async)?(?:Generator|Iterator|Iterable)\[\s*([^,\[\]]+?)\s*[,\]]"
)
# Modules of types that have no methods of the repository's own (``-> t.Any``).
_TYPING = ("typing.", "typing_extensions.", "collections.abc.")
# Nodes a return or yield of a function itself is never under.
_OTHER_BODIES = frozenset({"function_definition", "class_definition", "lambda", "decorated_definition"})


def extend(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Read a file's class bodies, type its locals made by its local classes,
    add its functions' results."""
    bases = in_file_order(caps.get("base", ()))
    class_bodies(ex, bases)
    local_classes(ex, bases, in_file_order(caps.get("typed", ())))
    returns(ex, in_file_order(caps.get("returns", ())))


def function_name(ex: Extracting, function: ts.Node) -> str:
    name = function.child_by_field_name("name")
    return text(ex, name) if name is not None else ""


# -- what a function returns ----------------------------------------------------------


def returns(ex: Extracting, nodes: Sequence[ts.Node]) -> None:
    """The result of each function or method of the file that says what it
    returns, as a ``field`` row: ``nodes`` are return annotations, and what
    return statements return (the callee of a call, or a name), in the
    order of the file (the first known one is the result)."""
    for node in nodes:
        function = _function_of(node)
        if function is None:
            continue
        fn, qualname, own = ex.function_at(line_of(function))
        if fn < 0 or own != function_name(ex, function):
            continue  # a function nested in another: no symbol of its own
        if node.type == "type":
            key = annotated_type(ex, text(ex, node), fn)
        elif node.parent is not None and node.parent.type == "call":
            key = ex.named_type(text(ex, node), fn)
        else:
            key = ex.typed.get((fn, text(ex, node)), "")
        if key and key[0] != "@" and not key.startswith(_TYPING):  # (not a fixture's: see .fixtures)
            owner, _, method = qualname.rpartition(".")  # a method's result: a field of its class
            ex.fields.setdefault((owner, method) if owner else (qualname, ""), (key, line_of(function)))


def annotated_type(ex: Extracting, annotation: str, fn: int) -> str:
    """The key of the class a return annotation names (what a generator yields)."""
    annotation = annotation.strip()
    m = _YIELDS.match(annotation)
    return ex.named_type(m.group(1) if m else annotation, fn)


def _function_of(node: ts.Node) -> ts.Node | None:
    """The function a return annotation or a returned value belongs to."""
    up = node.parent
    while up is not None and up.type not in _OTHER_BODIES:
        up = up.parent
    return up if up is not None and up.type == "function_definition" else None


def returned_value_type(ex: Extracting, function: ts.Node, fn: int) -> str:
    """The key of the first class ``function`` returns or yields (its
    annotation first): a walk of its body, for the few functions that need
    it (pytest's fixtures, which yield as often as they return)."""
    annotation = function.child_by_field_name("return_type")
    if annotation is not None:
        return annotated_type(ex, text(ex, annotation), fn)
    body = function.child_by_field_name("body")
    stack = list(reversed(body.named_children)) if body is not None else []
    while stack:
        node = stack.pop()
        if node.type in ("return_statement", "yield"):
            value = node.named_children[0] if node.named_child_count else None
            key = _value_type(ex, value, fn) if value is not None else ""
            if key:
                return key
        elif node.type not in _OTHER_BODIES:
            stack.extend(reversed(node.named_children))
    return ""


def _value_type(ex: Extracting, value: ts.Node, fn: int) -> str:
    if value.type == "call":
        callee = value.child_by_field_name("function")
        return ex.named_type(text(ex, callee), fn) if callee is not None else ""
    if value.type == "identifier":
        key = ex.typed.get((fn, text(ex, value)), "")
        return "" if key.startswith("@") else key
    return ""


# -- local classes ---------------------------------------------------------------------


def local_classes(ex: Extracting, bases: Sequence[ts.Node], typed: Sequence[ts.Node]) -> None:
    """Type the locals made by a class defined in their function (one base, known)."""
    classes: dict[tuple[int, str], tuple[str, frozenset[str]]] = {}
    for base in bases:
        arguments = base.parent
        if arguments is not None and arguments.type == "attribute":
            arguments = arguments.parent
        cls = arguments.parent if arguments is not None else None
        if cls is None or cls.type != "class_definition" or arguments.named_child_count != 1:
            continue
        fn, _, _ = ex.function_at(line_of(cls))
        name = cls.child_by_field_name("name")
        if fn < 0 or name is None:
            continue
        key = ex.named_type(text(ex, arguments.named_children[0]), fn)
        if key and key[0] != "@":
            classes[(fn, text(ex, name))] = (key, _members(ex, cls))
    if not classes:
        return
    for node in typed:
        var, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        if var is None or value is None or var.type != "identifier" or value.type != "call":
            continue
        fn, _, _ = ex.function_at(line_of(node))
        callee = value.child_by_field_name("function")
        found = classes.get((fn, text(ex, callee))) if callee is not None else None
        if found is not None:
            local = text(ex, var)
            ex.typed[(fn, local)] = found[0]
            ex.shadowed[(fn, local)] = found[1]


def _members(ex: Extracting, cls: ts.Node) -> frozenset[str]:
    """The names a class body defines (methods, class attributes)."""
    body = cls.child_by_field_name("body")
    out = set()
    for child in body.named_children if body is not None else ():
        if child.type == "decorated_definition":
            child = child.child_by_field_name("definition") or child
        if child.type in ("function_definition", "class_definition"):
            out.add(function_name(ex, child))
        elif child.type == "expression_statement" and child.named_child_count:
            assignment = child.named_children[0]
            left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
            if left is not None and left.type == "identifier":
                out.add(text(ex, left))
    return frozenset(out)


# -- class bodies ----------------------------------------------------------------------


def class_bodies(ex: Extracting, bases: Sequence[ts.Node]) -> None:
    """The names each class body binds (its members: a use there outside a
    method means them first), and each class's bases of the file (a plain
    name the module defines, ``class PassList(Tag)``)."""
    ex.class_names = {(s.parent, s.name): same_file_key(s.qualname) for s in ex.symbols if s.parent}
    for node in bases:
        arguments = node.parent
        if arguments is None or arguments.type != "argument_list":
            continue  # (pkg.Base: another file's)
        key = ex.module.get(text(ex, node), "")
        if key.startswith("="):
            _, cls, _ = ex.function_at(line_of(node))
            ex.bases.setdefault(cls, []).append(key[1:])
