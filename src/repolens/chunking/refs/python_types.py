"""Python's types that a plain walk of names misses: what functions return,
local classes, fields and locals of a method's result, what a class body names.

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

**fields and locals of a method's result or a member's read.** A field
assigned what a method of its class declares it returns (``self.config =
self.make_config()``) is of that type; a local made by a method of ``self``,
read from a member of a known type (``si = self.app.session_interface``),
copied from a fixture's parameter, or bound by ``with f() as x``
(``f.__enter__``) is typed by its path, through the file's fields where it
can (:func:`read_locals`, a rule of its own after :mod:`.fixtures`).

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
from collections.abc import Iterator, Sequence

import tree_sitter as ts

from repolens.chunking.refs import same_file_key
from repolens.chunking.refs.captures import in_file_order
from repolens.chunking.refs.extracting import Extracting, line_of, text
from repolens.chunking.refs.typed import TYPE_NAME, plain_type

# A generator's annotation: what it yields.
_YIELDS = re.compile(
    r"^(?:(?:typing|t|collections\.abc)\.)?(?:Async)?(?:Generator|Iterator|Iterable)\[\s*([^,\[\]]+?)\s*[,\]]"
)
# A generic class's annotation (``ExceptionInfo[BaseException]``): the class.
_GENERIC = re.compile(r"^([A-Za-z_][\w.]*)\[.*\]$")
# Modules of types that have no methods of the repository's own (``-> t.Any``).
_TYPING = ("typing.", "typing_extensions.", "collections.abc.")
# Nodes a return or yield of a function itself is never under.
_OTHER_BODIES = frozenset({"function_definition", "class_definition", "lambda", "decorated_definition"})


def extend(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Read a file's class bodies, type its locals made by its local classes,
    add its functions' results and the fields a method's result makes."""
    bases = in_file_order(caps.get("base", ()))
    typed = in_file_order(caps.get("typed", ()))
    class_bodies(ex, bases)
    local_classes(ex, bases, typed)
    returns(ex, in_file_order(caps.get("returns", ())))
    result_fields(ex, typed)


def later_locals(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Type the locals read from what a declaration does not name (run after
    :mod:`.fixtures`, whose parameters they may read): see :func:`read_locals`."""
    nodes = in_file_order([*caps.get("typed", ()), *caps.get("typed.read", ()), *caps.get("typed.with", ())])
    missed, typed, late = read_locals(ex, nodes)
    if not typed:
        return  # (nothing new to read a second time)
    # A function returning such a local (reporter = self.node_reporter(r); return reporter)
    # declares its result in turn, for a caller's local read again: two rounds, no fixpoint.
    # Only a return of a name just typed can say more than :func:`extend`'s reading did.
    names = {name for _, name in typed}
    again = [
        n
        for n in caps.get("returns", ())
        if n.type == "identifier" and not _a_call(n) and text(ex, n) in names
    ]
    fields = len(ex.fields)
    returns(ex, in_file_order(again))
    if missed and (late or len(ex.fields) > fields):  # a missed local may read a new field or local
        read_locals(ex, missed)


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
        owner, _, method = qualname.rpartition(".")  # a method's result: a field of its class
        if node.type == "type":
            key = annotated_type(ex, text(ex, node), fn)
        elif owner and text(ex, node) == ("cls" if _a_call(node) else "self"):
            key = same_file_key(owner)  # return self, return cls(...): a value of the method's class
        elif _a_call(node):
            key = ex.named_type(text(ex, node), fn)
        else:
            key = ex.typed.get((fn, text(ex, node)), "")
        if key and key[0] != "@" and not key.startswith(_TYPING):  # (not a fixture's: see .fixtures)
            ex.fields.setdefault((owner, method) if owner else (qualname, ""), (key, line_of(function)))
            if node.type == "type" and _context_manager(ex, function):  # with f() as x: what f yields
                ex.fields.setdefault((qualname, "__enter__"), (key, line_of(function)))


def _a_call(node: ts.Node) -> bool:
    """Whether ``node`` is what a call calls."""
    return node.parent is not None and node.parent.type == "call"


def annotated_type(ex: Extracting, annotation: str, fn: int) -> str:
    """The key of the class a return annotation names (what a generator yields;
    a generic class's, its arguments left out: ``"ExceptionInfo[E]"``; none of
    ``typing``'s or ``collections.abc``'s generics, ``List[X]``)."""
    annotation = annotation.strip()
    m = _YIELDS.match(annotation)
    annotation = m.group(1) if m else annotation
    key = ex.named_type(annotation, fn)
    generic = _GENERIC.match(plain_type(annotation)) if not key else None
    key = ex.named_type(generic.group(1), fn) if generic else key
    # (typing's List[X], Callable[[], X]: no class of the repository's, whose members a use means)
    return "" if generic and key.startswith(_TYPING) else key


def _context_manager(ex: Extracting, function: ts.Node) -> bool:
    """Whether ``function`` is decorated ``@contextmanager`` (``contextlib``'s, async too)."""
    decorated = function.parent
    if decorated is None or decorated.type != "decorated_definition":
        return False
    return any(
        c.type == "decorator" and text(ex, c).rstrip().endswith("contextmanager") for c in decorated.children
    )


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
    return next(filter(None, (_value_type(ex, value, fn) for value in returned_values(function))), "")


def returned_values(function: ts.Node) -> Iterator[ts.Node]:
    """What the function's own return and yield statements give, in the order of its text."""
    body = function.child_by_field_name("body")
    stack = list(reversed(body.named_children)) if body is not None else []
    while stack:
        node = stack.pop()
        if node.type in ("return_statement", "yield"):
            if node.named_child_count:
                yield node.named_children[0]
        elif node.type not in _OTHER_BODIES:
            stack.extend(reversed(node.named_children))


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


# -- fields and locals a method's result or a member's read makes ---------------------------


def _self_member(ex: Extracting, node: ts.Node | None) -> str:
    """The name of ``self.name`` (``cls.name``), "" for any other node."""
    if node is None or node.type != "attribute":
        return ""
    obj, attribute = node.child_by_field_name("object"), node.child_by_field_name("attribute")
    if obj is None or attribute is None or obj.type != "identifier" or text(ex, obj) not in ex.rs.self_names:
        return ""
    return text(ex, attribute)


def result_fields(ex: Extracting, typed: Sequence[ts.Node]) -> None:
    """A field assigned what a method of its class returns (``self.config =
    self.make_config()``, ``make_config`` declaring ``-> Config``) is of that
    type, as a type checker infers it: for ``app.config.from_file`` elsewhere."""
    for node in typed:
        field = _self_member(ex, node.child_by_field_name("left"))
        value = node.child_by_field_name("right")
        if not field or value is None or value.type != "call":
            continue
        method = _self_member(ex, value.child_by_field_name("function"))
        owner = ex.scopes.owner_class(ex.scopes.inner[line_of(node)]) if method else ""
        key = ex.field(owner, method) if owner else ""
        if key:
            ex.fields.setdefault((owner, field), (key, line_of(node)))


def read_locals(
    ex: Extracting, nodes: Sequence[ts.Node]
) -> tuple[list[ts.Node], list[tuple[int, str]], bool]:
    """Type a function's locals that a declaration does not: one made by a method
    of ``self`` (``r = self._open(x)``: what ``_open`` declares it returns, else
    the path ``=C._open`` where ``C`` does not define ``_open``), read from a
    member of a value of a known type (``si = self.app.session_interface``:
    ``Flask.session_interface``), copied from a fixture's parameter (``config =
    _config_for_test``; a local's type is its function's, not its place's), or
    bound by ``with f() as x`` (``f.__enter__``: what the ``__enter__`` of
    ``f``'s value returns; a ``@contextmanager``'s ``f`` declares it). A path is
    followed by a question as ``lib.session().get`` is; one through a member of
    a class of the file that the file does not type is none (a name match); a
    local typed otherwise keeps that type.

    Returns the nodes it could not type (only those a second reading may type),
    the locals it typed, and whether it typed one after missing a node (which that
    node may read: a local's type is its function's, not its place's)."""
    missed: list[ts.Node] = []
    typed: list[tuple[int, str]] = []
    late = False
    for node in nodes:
        entered = node.type == "with_item"
        if entered:  # with_item > as_pattern (value, as_pattern_target > identifier)
            pattern = node.child_by_field_name("value")
            parts = pattern.named_children if pattern is not None else []
            value, alias = (parts[0], parts[1]) if len(parts) == 2 else (None, None)
            var = alias.named_children[0] if alias is not None and alias.named_child_count == 1 else None
        else:
            var, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        if var is None or value is None or var.type != "identifier":
            continue
        line = line_of(node)
        fn, name = ex.scopes.function[line], text(ex, var)
        if fn >= 0 and (fn, name) not in ex.typed:
            key = _value_key(ex, value, fn, ex.scopes.inner[line], entered)
            key = ex.field_path(key, ("__enter__",)) if entered and key else key
            if key and not ex.unknown_member(key):  # (a path no question follows: a name match)
                ex.typed[(fn, name)] = key
                typed.append((fn, name))
                late = late or bool(missed)
            else:
                missed.append(node)
    return missed, typed, late


def _value_key(ex: Extracting, value: ts.Node, fn: int, at: int, entered: bool) -> str:
    """The key of the type of ``value`` for :func:`read_locals` ("" unknown): a
    typed local's, a member's of a known receiver, a call's result."""
    if value.type == "identifier":  # a fixture's parameter (a local's type is the function's, in no order)
        key = ex.typed.get((fn, text(ex, value)), "")
        return key if key[:1] == "@" else ""
    called = value.child_by_field_name("function") if value.type == "call" else value
    chain = text(ex, called) if called is not None and value.type in ("attribute", "call") else ""
    if not TYPE_NAME.fullmatch(chain):
        return ""
    recv, dot, member = chain.rpartition(".")
    if not dot:  # with Lock() as held: a class (or a function) the file binds
        key = ex.named_type(chain, fn) if entered else ""
        return key if key[:1] != "@" else ""
    if value.type == "call" and not entered and recv.partition(".")[0] not in ex.rs.self_names:
        return ""  # (made by another call: read with the declarations, .typed.read_typed)
    prefix = ex.receiver_prefix(recv, at, 0)  # as a receiver is read, through the file's fields
    return ex.field_path(prefix[:-1], (member,)) if prefix else ""
