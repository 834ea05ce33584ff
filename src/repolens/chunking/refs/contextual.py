"""TypeScript's contextual types: a callback's parameters typed by where it stands.

A function written without parameter types (``async function cors(c, next)``,
``(c) => c.json(...)``) takes them from the type expected where it stands;
the language service follows that, and so does this rule, as far as the
code names the types plainly (run once per TypeScript file after its
locals' types are read: the ``rules`` of :mod:`.specs`'s TypeScript):

**what declares a parameter's type.** A type alias of a function type
(``type MiddlewareHandler = (c: Context, next: Next) => ...``) declares
the type of each parameter by its position: a ``field`` row (no use)
scoped ``MiddlewareHandler.0``, its target ``Context``'s key, as a class
declares its fields. So does an alias of a union of such aliases of the
same file when they agree at a position (``type H = Handler |
MiddlewareHandler``), an interface's or type literal's call signatures
when all of them agree at a position (an overload whose parameter there
names no type of the file's stops it), and a function's or method's
parameter of a named type or of a function type (``f.1`` for ``f``'s
second parameter, ``f.1.0`` for the first parameter of a callback ``f``
takes second). A rest parameter ``...hs: H[]`` declares every position from
its own to ``REST_SPAN`` more, and a tuple ``...hs: [H, H]`` its members'.

**where a callback takes its type.** Its parameters without a type are typed
by position from the type expected where the function stands: returned by a
function declaring its result (``(): MiddlewareHandler => { return async
function (c, next) {...} }``, an arrow's body), the value of a declared
variable (``const h: MiddlewareHandler = (c) => ...``), in ``x as T`` or
``x satisfies T``, an argument of a call whose callee the file resolves
(``app.use('*', (c) => ...)``: ``c`` is ``Hono.use.1.0``), or a member of an
object literal itself so typed (``{ serialize: (v) => v }`` in an object
typed ``CombinedDataTransformer``: ``v`` is
``CombinedDataTransformer.serialize.0``). Such a key names a value by the
type that declares it and the path from there, as ``c.req`` with ``c:
Context`` does: :mod:`repolens.search.references` follows the ``field``
rows from a member's class down such paths when a question is asked
(``Context``'s ``res`` through ``MiddlewareHandler.0``), so nothing here
needs another file. A type the code does not name (an inferred one, a
generic's parameter) stops it: the parameter stays a name match.

**an object literal's members.** A member of an object literal whose type is
known so is a use of the type's member of its name (``serialize: (v) =>
v`` of ``DataTransformer.serialize``), as the language service counts it.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from repolens.chunking.refs import Ref, type_name
from repolens.chunking.refs.captures import in_file_order
from repolens.chunking.refs.extracting import Extracting, line_of, text
from repolens.chunking.refs.typed import ELEMENT, MEMBER_DECLARATIONS, TYPE_NAME, plain_type

# An array's methods taking a callback: the positions of its parameters given an element.
_ELEMENT_CALLBACKS = {
    **dict.fromkeys(
        (
            "forEach",
            "map",
            "filter",
            "some",
            "every",
            "flatMap",
            "find",
            "findIndex",
            "findLast",
            "findLastIndex",
        ),
        (0,),
    ),
    "sort": (0, 1),
    "toSorted": (0, 1),
    "reduce": (1,),
    "reduceRight": (1,),
}
# An array's methods giving one of its elements (or undefined).
_ONE_ELEMENT = frozenset({"find", "findLast", "at", "pop", "shift"})
# An array's methods giving an array of its elements back (``xs.filter(...)``).
_SAME_ARRAY = frozenset({"filter", "slice", "sort", "toSorted", "reverse", "toReversed", "concat"})
# A key through such a callback's parameter (``K.xs.map.0.0.name``: ``xs.map``'s first argument's
# first parameter), past the methods giving the array back (``K.xs.filter.map.0.0``).
_THROUGH_CALLBACK = re.compile(
    rf"(?:\.(?:{'|'.join(_SAME_ARRAY)}))*\.({'|'.join(_ELEMENT_CALLBACKS)})\.0\.(\d)(?=\.)"
)
# Positions past a rest parameter's own that it declares (``...handlers: H[]``).
REST_SPAN = 6
_FUNCTIONS = frozenset({"arrow_function", "function_expression"})
_PARAMETERS = frozenset({"required_parameter", "optional_parameter"})
# What stands between a function (or an object literal) and what types it, looked through.
_WRAPPERS = frozenset({"parenthesized_expression", "non_null_expression", "await_expression"})
# Nodes naming a function's parameters and result.
_SIGNATURES = frozenset(
    {
        "function_type",
        "call_signature",
        "method_signature",
        "function_declaration",
        "method_definition",
        "abstract_method_signature",
        "arrow_function",
        "function_expression",
    }
)


def contextual(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Set the ``field`` rows of the file's parameter types, the types of
    its callbacks' untyped parameters, and the uses its typed object
    literals' members make (see the module docstring)."""
    scopes = ex.fscopes
    if scopes is None:
        return
    aliases: dict[str, dict[int, str]] = {}
    for node in sorted(caps.get("alias", ()), key=lambda n: n.start_byte):
        _alias(ex, node, aliases)
    for node in sorted(caps.get("signatures", ()), key=lambda n: n.start_byte):
        _call_signatures(ex, node)
    if caps.get("dynamic"):
        functions = [n for n in caps.get("function", ()) if _named_function(n)]
        made = {text(ex, n.child_by_field_name("name")): n for n in functions}
        for node in caps["dynamic"]:
            _made_class(ex, node, made)
    for node in sorted(caps.get("made", ()), key=lambda n: n.start_byte):
        _made_by_call(ex, node)
    for node in sorted(caps.get("function", ()), key=lambda n: n.start_byte):
        _declared_parameters(ex, node)
        if node.type in _FUNCTIONS or node.type == "method_definition":
            _typed_by_context(ex, node)
    for node in sorted(caps.get("object", ()), key=lambda n: n.start_byte):
        _members_of(ex, node)
    for node in in_file_order(caps.get("typed", ())):
        if node.type in MEMBER_DECLARATIONS:
            _union_member(ex, node)
    for node in in_file_order(caps.get("destructured", ())):
        _destructured(ex, node)
    for node in in_file_order(caps.get("each", ())):  # an outer loop's element before an inner's
        _for_of(ex, node)


def _type_key(ex: Extracting, node: ts.Node | None) -> str:
    """The key of the type a type node names plainly ("" none: a builtin, a generic's parameter)."""
    if node is None:
        return ""
    if node.type == "type_annotation":
        node = node.named_child(0) if node.named_child_count else None
        if node is None:
            return ""
    name = plain_type(text(ex, node))
    if not TYPE_NAME.fullmatch(name) or name in ex.rs.builtins:
        return ""
    return ex.type_key(name, -1)


def _positions(ex: Extracting, params: ts.Node | None) -> dict[int, ts.Node]:
    """Each position of a parameter list -> the type node declared there (a rest
    parameter's element type at its position and ``REST_SPAN`` more; a
    tuple's members at theirs); ``this`` is no position."""
    out: dict[int, ts.Node] = {}
    if params is None:
        return out
    at = 0
    for p in params.named_children:
        if p.type not in _PARAMETERS:
            continue
        pattern = p.child_by_field_name("pattern")
        if pattern is not None and pattern.type == "this":
            continue
        annotation = p.child_by_field_name("type")
        kind = annotation.named_child(0) if annotation is not None and annotation.named_child_count else None
        if pattern is not None and pattern.type == "rest_pattern" and kind is not None:
            if kind.type == "array_type" and kind.named_child_count:
                for i in range(REST_SPAN + 1):
                    out[at + i] = kind.named_child(0)
            elif kind.type == "tuple_type":
                for i, member in enumerate(kind.named_children):
                    out[at + i] = member
            return out
        if kind is not None:
            out[at] = kind
        at += 1
    return out


def _parameter_types(ex: Extracting, params: ts.Node | None) -> dict[str, str]:
    """The declared type of each position (``"1"``), and of each parameter of a callback
    declared there by a function type (``"1.0"``): their keys where the code names them,
    "" where it does not (a generic's parameter, a builtin, a function type)."""
    out: dict[str, str] = {}
    for at, kind in _positions(ex, params).items():
        out[str(at)] = "" if kind.type == "function_type" else _type_key(ex, kind)
        if kind.type == "function_type":
            for inner, key in _parameter_types(ex, kind.child_by_field_name("parameters")).items():
                out[f"{at}.{inner}"] = key
    return out


def _declare(ex: Extracting, owner: str, types: dict[str, str], line: int) -> None:
    for path, key in types.items():
        if key:
            ex.fields.setdefault((owner, path), (key, line))


def _alias(ex: Extracting, node: ts.Node, aliases: dict[str, dict[int, str]]) -> None:
    """A type alias of a function type, or of a union of the file's such aliases."""
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name is None or value is None:
        return
    owner = text(ex, name)
    while value.type == "parenthesized_type" and value.named_child_count:
        value = value.named_child(0)
    if value.type == "function_type":
        types = _parameter_types(ex, value.child_by_field_name("parameters"))
    elif value.type == "union_type":
        types = _agreeing([aliases.get(plain_type(text(ex, m))) for m in _flattened(value, "union_type")])
        _union(ex, owner, value, line_of(name))  # type Child = string | JSXNode: c.toString() of each
    else:
        return
    aliases[owner] = types
    _declare(ex, owner, types, line_of(name))


def _flattened(node: ts.Node, kind: str) -> list[ts.Node]:
    """The members of a union or intersection type ``node`` (``kind``), nested ones flattened."""
    return [m for c in node.named_children for m in (_flattened(c, kind) if c.type == kind else [c])]


def _agreeing(signatures: list[dict[str, str] | None], *, overloads: bool = False) -> dict[str, str]:
    """The positions where every one of ``signatures`` (of :func:`_parameter_types`)
    declares the same named type; with ``overloads``, every one that has a parameter
    there (a call with more arguments than one takes is another's). None where one
    is unknown."""
    if not signatures or any(s is None for s in signatures):
        return {}
    known = [s for s in signatures if s is not None]
    out = {}
    for k in set().union(*known):
        top = k.partition(".")[0]
        having = [s.get(k, "") for s in known if top in s or not overloads]
        if having and having[0] and all(h == having[0] for h in having):
            out[k] = having[0]
    return out


def _call_signatures(ex: Extracting, node: ts.Node) -> None:
    """An interface's or a type alias's object type: its call signatures, where
    they all agree, and the parameters of its members of a function type
    (``cancel?: (reason: CancelReason) => unknown``: ``Runner.cancel.0``)."""
    up = node.parent
    if up is None or up.type not in ("interface_declaration", "type_alias_declaration"):
        return
    name = up.child_by_field_name("name")
    owner = text(ex, name) if name is not None else ""
    if not owner or ex.scopes.qualname(ex.scopes.inner[line_of(name)]) != owner:
        return
    signatures = [c for c in node.named_children if c.type == "call_signature"]
    if signatures:
        types = [_parameter_types(ex, s.child_by_field_name("parameters")) for s in signatures]
        types = _agreeing(types, overloads=True)
        _declare(ex, owner, types, line_of(signatures[0]))
    for member in node.named_children:
        member_name = member.child_by_field_name("name")
        annotation = member.child_by_field_name("type")
        if member.type != "property_signature" or member_name is None or annotation is None:
            continue
        kind = annotation.named_child(0) if annotation.named_child_count else None
        if kind is not None and kind.type == "function_type":
            types = _parameter_types(ex, kind.child_by_field_name("parameters"))
            _declare(ex, f"{owner}.{text(ex, member_name)}", types, line_of(member_name))
            # a method in all but syntax: the member a class's method implements (a member row)
            ex.members.append((owner, text(ex, member_name), line_of(member_name)))


def _named_function(node: ts.Node) -> bool:
    return node.type == "function_declaration" and node.child_by_field_name("name") is not None


def _made_class(ex: Extracting, node: ts.Node, functions: dict[str, ts.Node]) -> None:
    """``class C extends f()``, ``f`` a function of the file declaring that it
    returns a constructor type: ``C``'s members are those of the instances it
    makes (``{ on: OnHandlerInterface }``: field ``C.on``), a mapped type's
    (``{ [M in Methods]: HandlerInterface }``) any name's: field ``C.*``."""
    call = node.child_by_field_name("value")
    callee = call.child_by_field_name("function") if call is not None else None
    heritage = node.parent
    cls = heritage.parent if heritage is not None else None
    name = cls.child_by_field_name("name") if cls is not None else None
    made = functions.get(text(ex, callee)) if callee is not None else None
    result = made.child_by_field_name("return_type") if made is not None else None
    if name is None or result is None or not result.named_child_count:
        return
    owner = text(ex, name)
    if ex.scopes.qualname(ex.scopes.inner[line_of(name)]) != owner:
        return
    built = result.named_child(0)
    for sig in built.named_children if built.type == "object_type" else ():
        instance = sig.child_by_field_name("type") if sig.type == "construct_signature" else None
        if instance is None or not instance.named_child_count:
            continue
        value = instance.named_child(0)  # {...} & {...}: each part's members
        parts = _flattened(value, "intersection_type") if value.type == "intersection_type" else [value]
        for part in parts:
            for member in part.named_children if part.type == "object_type" else ():
                _instance_member(ex, owner, member)


def _instance_member(ex: Extracting, owner: str, member: ts.Node) -> None:
    annotation = next((c for c in member.named_children if c.type == "type_annotation"), None)
    key = _type_key(ex, annotation)
    if not key:
        return
    if member.type == "property_signature" and (name := member.child_by_field_name("name")) is not None:
        ex.fields.setdefault((owner, text(ex, name)), (key, line_of(member)))
    elif member.type == "index_signature":  # [M in Methods]: T, [k: string]: T: any member's type
        ex.fields.setdefault((owner, "*"), (key, line_of(member)))


def _declared_parameters(ex: Extracting, node: ts.Node) -> None:
    """A function's or method's typed parameters, by position (``f.1``): what
    a callback passed there is typed by; and what it declares it returns (a
    ``Promise``'s value: what ``await`` gives), for ``x = f()`` then ``x.name``.
    Only a definition's own (a symbol of its name holds it): a callback's
    are no callee's."""
    if node.type in _FUNCTIONS:
        up = node.parent
        name = up.child_by_field_name("name") if up is not None and up.type == "variable_declarator" else None
    else:
        name = node.child_by_field_name("name")
    if name is None:
        return
    inner = ex.scopes.inner[line_of(name)]
    if inner < 0 or ex.scopes.symbols[inner].name != text(ex, name):
        return
    owner = ex.scopes.qualname(inner)
    _declare(ex, owner, _parameter_types(ex, node.child_by_field_name("parameters")), line_of(name))
    result = node.child_by_field_name("return_type")
    kind = result.named_child(0) if result is not None and result.named_child_count else None
    if kind is not None and kind.type == "generic_type" and text(ex, kind).startswith("Promise<"):
        arguments = kind.child_by_field_name("type_arguments")
        one = arguments is not None and arguments.named_child_count == 1
        kind = arguments.named_child(0) if one else None
    if kind is not None and kind.type == "union_type":
        _union(ex, owner, kind, line_of(name))
        return
    key = _type_key(ex, kind)
    if key:
        ex.fields.setdefault((owner, ""), (key, line_of(name)))


def _union(ex: Extracting, scope: str, kind: ts.Node, line: int, read: str = "") -> None:
    """A function's result, a member or a type alias declared of a union (``A | B |
    undefined``): a ``field`` row of each type it names, for ``x = f(); x.name`` in any file (the
    language service counts a member used through a union as each type's that has
    it). No local of the file is typed so: no one type is its. ``read``: the key of a row
    the member has already (``P | null``: ``P``'s)."""
    for member in _flattened(kind, "union_type"):
        key = _type_key(ex, member)
        if key and key != read:
            ex.refs.append(Ref(type_name(key), line, "field", scope, key, ""))


def _union_member(ex: Extracting, node: ts.Node) -> None:
    """A class's field or an interface's property declared of a union: :func:`_union`, but
    for the type of the field row read already (``P | null``, ``A<T> | B<T>``: ``P``, ``A``)."""
    name, annotation = node.child_by_field_name("name"), node.child_by_field_name("type")
    kind = annotation.named_child(0) if annotation is not None and annotation.named_child_count else None
    if name is None or kind is None or kind.type != "union_type":
        return
    owner = ex.scopes.owner_class(ex.scopes.inner[line_of(name)])
    if owner:
        read = ex.fields.get((owner, text(ex, name)), ("",))[0]
        _union(ex, f"{owner}.{text(ex, name)}", kind, line_of(name), read)


def _made_by_call(ex: Extracting, node: ts.Node) -> None:
    """``const x = f(...)`` (or ``await f(...)``, ``f(...)!``) without a declared type: ``x`` is
    of what the callee returns, keyed by the callee (``=Pool.getPoolRunner``)."""
    name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if name is None or value is None or node.child_by_field_name("type") is not None:
        return
    while value.type in ("await_expression", "non_null_expression") and value.named_child_count:
        value = value.named_child(0)  # await f(), f()!
    if value.type != "call_expression":
        return
    key = _element_result(ex, value) or _callee_key(ex, value)
    if key:
        _type_local(ex, name, key, ex.visible(name))


def _unwrapped_parent(node: ts.Node) -> tuple[ts.Node | None, ts.Node]:
    """The node's parent past parentheses and the like, and the child of it that holds the node."""
    child, up = node, node.parent
    while up is not None and up.type in _WRAPPERS:
        child, up = up, up.parent
    return up, child


def _expected(ex: Extracting, node: ts.Node, depth: int = 0) -> str:
    """The key of the type expected where the expression ``node`` stands ("" unknown)."""
    up, child = _unwrapped_parent(node)
    if up is None or depth > 4:
        return ""
    kind = up.type
    if kind in ("as_expression", "satisfies_expression"):
        named = up.named_children
        return _type_key(ex, named[-1]) if len(named) > 1 and named[0] == child else ""
    if kind == "variable_declarator" and up.child_by_field_name("value") == child:
        return _type_key(ex, up.child_by_field_name("type"))
    if kind == "return_statement" or (kind == "arrow_function" and up.child_by_field_name("body") == child):
        holder = up if kind == "arrow_function" else _holder(ex, up)
        return _type_key(ex, holder.child_by_field_name("return_type")) if holder is not None else ""
    if kind == "pair" and up.child_by_field_name("value") == child:
        key = up.child_by_field_name("key")
        obj = up.parent
        if key is None or key.type != "property_identifier" or obj is None:
            return ""
        outer = _expected(ex, obj, depth + 1)
        return f"{outer}.{text(ex, key)}" if outer else ""
    if kind == "arguments":
        call = up.parent
        if call is None or call.type != "call_expression":
            return ""
        callee = _callee_key(ex, call)
        position = [c for c in up.named_children if c.type != "comment"].index(child)
        return f"{callee}.{position}" if callee else ""
    return ""


def _holder(ex: Extracting, node: ts.Node) -> ts.Node | None:
    """The function a ``return`` returns from."""
    scopes = ex.fscopes
    k = scopes.innermost(node.start_byte) if scopes is not None else -1
    return scopes.nodes[k] if k >= 0 else None


def _callee_key(ex: Extracting, call: ts.Node) -> str:
    """The key a call's callee resolves to in this file ("" unknown)."""
    callee = call.child_by_field_name("function")
    if callee is None:
        return ""
    line = line_of(call)
    at = ex.scopes.inner[line]
    fn = ex.scopes.function[line]
    if callee.type == "identifier":  # a callback's parameter of its name is not the callee
        name = text(ex, callee)
        return ex.type_key(name, fn) if not ex.bound_at(fn, name.encode(), callee.start_byte) else ""
    if callee.type != "member_expression":
        return ""
    obj, prop = callee.child_by_field_name("object"), callee.child_by_field_name("property")
    if obj is None or prop is None or not TYPE_NAME.fullmatch(recv := text(ex, obj)):
        return ""
    prefix = ex.receiver_prefix(recv, at, obj.start_byte)
    return prefix + text(ex, prop) if prefix else ""


def _typed_by_context(ex: Extracting, node: ts.Node) -> None:
    """Type a function's untyped parameters by the type expected where it stands."""
    params = node.child_by_field_name("parameters")
    single = node.child_by_field_name("parameter")  # c => ...
    if params is not None:
        untyped = [
            (i, p.child_by_field_name("pattern"))
            for i, p in enumerate(c for c in params.named_children if c.type in _PARAMETERS)
            if p.child_by_field_name("type") is None
        ]
    elif single is not None:
        untyped = [(0, single)]
    else:
        return
    untyped = [(i, p) for i, p in untyped if p is not None and p.type == "identifier"]
    if not untyped:
        return
    span = (node.start_byte, node.end_byte)
    # xs.map((x) => ...): x an element of xs, if the file declares xs an array; else the
    # type expected there first (r.filter((c) => ...), r's class declaring its own filter)
    elements = _element_callback(ex, node, declared=True)
    if node.type == "method_definition":  # an object literal's method: its type's member
        name, obj = node.child_by_field_name("name"), node.parent
        if name is None or obj is None or obj.type != "object":
            return
        outer = _expected(ex, obj)
        expected = f"{outer}.{text(ex, name)}" if outer else ""
    else:
        expected = "" if elements else _expected(ex, node)
    if expected:
        for i, pattern in untyped:
            _type_local(ex, pattern, f"{expected}.{i}", span)
        return
    # none expected: an element of what may be an array (this.a.xs.filter(...).map(...))
    elements = elements or _element_callback(ex, node)
    for i, pattern in untyped:
        if elements and i in elements[1]:
            _type_local(ex, pattern, elements[0], span)


def _type_local(ex: Extracting, pattern: ts.Node, key: str, span: tuple[int, int]) -> None:
    fn = ex.scopes.function[line_of(pattern)]
    name = text(ex, pattern)
    ex.typed[(fn, name)] = ex.typed.get((fn, name)) or key
    ex.scoped.setdefault((fn, name), []).append((*span, key))


def _called(ex: Extracting, call: ts.Node) -> tuple[ts.Node | None, str]:
    """The value a call's callee is a member of and the member's name (``xs.map(...)``:
    ``xs``, ``map``); (None, "") for another callee."""
    callee = call.child_by_field_name("function")
    if callee is None or callee.type != "member_expression":
        return None, ""
    obj, prop = callee.child_by_field_name("object"), callee.child_by_field_name("property")
    return (obj, text(ex, prop)) if obj is not None and prop is not None else (None, "")


def _element_of(ex: Extracting, value: ts.Node | None, *, declared: bool = False) -> str:
    """The key of an element of the array ``value`` names ("" unknown): a field's
    (``this.xs``, ``r.xs`` of the file's class: ``=C.xs.[]``, a field row of the element's
    type), a local's declared ``T[]`` (``T``), through the methods giving its elements back
    (``xs.filter(...)``: made ``=C.xs.filter``, xs's). With ``declared``, only an array the
    file declares; else a value it does not know gets ``V.[]``, which no field row declares
    unless ``V`` is an array (another file's ``C.xs``)."""
    while value is not None and value.type in ("call_expression", *_WRAPPERS) and value.named_child_count:
        if value.type != "call_expression":
            value = value.named_child(0)
            continue
        of, name = _called(ex, value)  # xs.filter(...).map(...), of xs.filter(...)
        if name not in _SAME_ARRAY:
            return ""
        value = of
    if value is None or not TYPE_NAME.fullmatch(recv := text(ex, value)):
        return ""
    line = line_of(value)
    at = ex.scopes.inner[line]
    head, _, field = recv.partition(".")
    if head in ex.rs.self_names and field and "." not in field:  # this.xs, xs: T[] of the class
        field_row = ex.fields.get((ex.scopes.owner_class(at), f"{field}.{ELEMENT}"))
        if field_row is not None:
            return field_row[0]
    prefix = ex.receiver_prefix(recv, at, value.start_byte)
    base = prefix[:-1]
    while (cut := base.rpartition("."))[1] and cut[2] in _SAME_ARRAY:
        base = cut[0]
    if not base:
        return ""
    if base.endswith(ELEMENT) and not base.endswith("." + ELEMENT):
        return base[: -len(ELEMENT)]  # a local's T[]
    owner, dot, field = base[1:].rpartition(".")
    field_row = ex.fields.get((owner, f"{field}.{ELEMENT}")) if base[:1] == "=" and dot else None
    if field_row is not None:  # r.xs, r of a class of the file declaring xs: T[]
        return field_row[0]
    return "" if declared else f"{base}.{ELEMENT}"


def _element_result(ex: Extracting, call: ts.Node) -> str:
    """``xs.find(...)``, ``xs.at(-1)``, ``xs.pop()``: the key of an element of ``xs`` ("" else)."""
    of, name = _called(ex, call)
    return _element_of(ex, of, declared=True) if name in _ONE_ELEMENT else ""


def _element_callback(
    ex: Extracting, node: ts.Node, *, declared: bool = False
) -> tuple[str, tuple[int, ...]] | tuple[()]:
    """A callback passed first to an array's method (``xs.map((x) => ...)``): the key of
    xs's element (:func:`_element_of`, ``declared`` so) and the positions of the
    callback's parameters it gives."""
    up, child = _unwrapped_parent(node)
    call = up.parent if up is not None and up.type == "arguments" else None
    if call is None or call.type != "call_expression" or up.named_children[:1] != [child]:
        return ()
    of, name = _called(ex, call)
    positions = _ELEMENT_CALLBACKS.get(name)
    element = _element_of(ex, of, declared=declared) if positions else ""
    return (element, positions) if element else ()


def as_element(key: str) -> str:
    """``key`` through an array's callback read as through the array's element
    (``K.xs.map.0.0.name``, ``K.xs.filter.map.0.0.name``: ``K.xs.[].name``; "" none). A
    callback over a value the file does not know an array (another file's ``C.xs``) takes
    the type expected there, keyed so: a question reads it as the element where a
    ``field`` row declares ``C.xs.[]``."""

    def element(m: re.Match[str]) -> str:
        return f".{ELEMENT}" if int(m[2]) in _ELEMENT_CALLBACKS[m[1]] else m[0]

    read = _THROUGH_CALLBACK.sub(element, key) if ".0." in key else key
    return read if read != key else ""


def _for_of(ex: Extracting, node: ts.Node) -> None:
    """``for (const x of xs)``: x an element of xs."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or not any(c.type == "of" for c in node.children):
        return
    element = _element_of(ex, right)
    if element:
        _type_local(ex, left, element, (node.start_byte, node.end_byte))


def _members_of(ex: Extracting, node: ts.Node) -> None:
    """The members of an object literal of a known type: uses of the type's members."""
    expected = ""
    for member in node.named_children:
        if member.type == "pair":
            key = member.child_by_field_name("key")
        elif member.type == "method_definition":
            key = member.child_by_field_name("name")
        else:
            continue
        if key is None or key.type != "property_identifier":
            continue
        expected = expected or _expected(ex, node)
        if not expected:
            return
        line = line_of(key)
        name = text(ex, key)
        scope = ex.scopes.qualname(ex.scopes.inner[line])
        ex.refs.append(Ref(name, line, "attr", scope, f"{expected}.{name}", ""))


_MEMBER_NAMES = frozenset({"shorthand_property_identifier_pattern", "property_identifier"})


def _destructured(ex: Extracting, node: ts.Node) -> None:
    """``const { method, url: u } = c.req``: a read of each member named of the value's
    type (``c.req.method``), as the language service counts it."""
    pattern, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    if pattern is None or value is None or not TYPE_NAME.fullmatch(recv := text(ex, value)):
        return
    line = line_of(value)
    at = ex.scopes.inner[line]
    prefix = ex.receiver_prefix(recv, at, value.start_byte)
    if not prefix:
        return
    scope = ex.scopes.qualname(at)
    for member in pattern.named_children:
        if member.type == "pair_pattern":
            member = member.child_by_field_name("key")
        elif member.type == "object_assignment_pattern":  # { a = 1 }
            member = member.child_by_field_name("left")
        if member is None or member.type not in _MEMBER_NAMES:
            continue
        name = text(ex, member)
        ex.refs.append(Ref(name, line_of(member), "attr", scope, prefix + name, ""))
