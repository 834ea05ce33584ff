"""Rust's locals made by a constructor: ``let x = Foo::new()``, ``Foo { .. }``.

Run once per Rust file after its locals' types are read (the ``rules`` of
:mod:`.specs`'s Rust, on the ``made`` captures: a ``let`` binding a name to
a call or a struct literal, with no type of its own; a ``let x: T`` is read
with the other typed declarations, :mod:`.typed`). The local's type is what
the value names, as far as the file says it:

- a struct literal ``T { .. }``, a tuple struct ``T(..)`` (a name written as
  a type is): ``T``;
- an associated function that makes its type by the language's convention
  (``T::new()``, ``T::default()``, ``T::new_x()``, ``T::with_x()``): ``T``,
  keyed as a direct ``T::f()`` is (a type the file imports through another
  module's ``pub use`` is found so);
- a function of this file declaring its result (``f()``, ``T::f()``): that
  result;
- a method of a typed value (``cmd.find(x)``, ``self.args()``): the result
  this file's type declares, else the call's path (``Command.find``: what
  ``Command``'s ``find`` returns, one step a question follows through its
  ``field`` row), ``.unwrap()``, ``.expect()``, ``?``, ``.iter()`` after it
  no step (:data:`SAME_ELEMENT`); so is a ``for`` loop's variable over one,
  in the loop (:func:`loops`).

What a function declares it returns is read as the element a caller reaches
(:func:`element_type`: ``Option<&Arg>``, ``impl Iterator<Item = &Arg>``,
``&[Arg]`` are ``Arg``; ``-> Self`` its impl's type), a ``field`` row of the
function (:func:`results`).
Any other call (``T::parse()`` of a type of another file, ``m::f()``, whose
result the file cannot see, a method's past a second unknown step) leaves the
local untyped: its members stay name matches, which a key no question can
place would hide. So does an enum's
variant ``E::V(..)``: an enum's methods are mostly its traits' (``derive``),
which no question finds through it. A type
another crate defines (``use clap::Command``) is keyed ``?clap.Command``:
the repository's own crate named from its tests, perhaps, which only a
question can tell (``repolens.search.cargo``); another's types nothing there
(see ``type_key``). A ``let`` binding the name again hides the local where it is visible
(``RefSpec.shadowing_lets``). :func:`result_type` types a call's result the
same way where a member is read of it (``T::new().m()``; ``x.f().m()``:
``Targets._member_prefix``). :func:`struct_fields`
types a struct's fields as they are declared (``cmd: Command``: ``self.cmd.f()``
is ``Command``'s ``f``), a ``field`` row each, for another file's ``app.cmd.f()``
too. Nothing here needs another file.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from repolens.chunking.refs.captures import in_file_order
from repolens.chunking.refs.extracting import Extracting, line_of, text
from repolens.chunking.refs.scoping import EVERYWHERE, rust_span
from repolens.chunking.refs.typed import plain_type

# Methods giving their value's type back: ``Clone``'s; after a call's result, which is read as
# its element (``element_type``: ``Option<&Arg>`` is an ``Arg``), what unwraps or iterates it.
SAME_VALUE = frozenset({"clone", "to_owned"})
SAME_ELEMENT = frozenset(
    {"unwrap", "expect", "unwrap_or_default", "as_ref", "as_mut", "as_deref", "as_deref_mut"}
    | {"iter", "iter_mut", "into_iter", "cloned", "copied", "rev", "filter", "skip", "take"}
    | {"peekable", "by_ref", "next", "next_back"}
)
# Associated functions that make a value of their type, by Rust's conventions (prefixes end in _).
_CONSTRUCTORS = frozenset({"new", "default"})
_CONSTRUCTOR_PREFIXES = ("new_", "with_")
# A pointer whose methods are its content's (``Box<T>``, ``Rc<T>``, ``Arc<T>`` dereference to ``T``):
# a field of one is typed by ``T``. Any other generic is its own type (``Vec<T>``, ``Option<T>``).
_POINTER = re.compile(r"(?:(?:std|alloc)::(?:boxed|rc|sync)::)?(?:Box|Rc|Arc)\s*<\s*(.+?)\s*>")

# A reference's decoration before its type (``&``, ``&'a``, ``&mut``), for a pointer inside one.
_REFERENCE = re.compile(r"^(?:&\s*(?:'\w+\s+)?(?:mut\s+)?)+")


def made(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Type the file's locals made by a constructor or a call (see the module docstring)."""
    for node in in_file_order(caps.get("made", ())):
        pattern, value = node.child_by_field_name("pattern"), node.child_by_field_name("value")
        if pattern is None or value is None:
            continue
        fn = ex.scopes.function[line_of(pattern)]
        key = _made_type(ex, value, fn)
        if key:
            _typed_local(ex, fn, text(ex, pattern), ex.visible(node), key)


def loops(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Type a ``for`` loop's variable over a call's result (the ``looped`` captures: ``for a
    in cmd.get_arguments()``), in the loop's body: a result is read as its element's type
    (:func:`element_type`), so ``a`` is an ``Arg``. Over a plain value (``for a in args``) the
    element's type is not read."""
    for node in in_file_order(caps.get("looped", ())):
        pattern, value = node.child_by_field_name("pattern"), node.child_by_field_name("value")
        body = node.child_by_field_name("body")
        if pattern is None or value is None or body is None or value.type not in _RESULTS:
            continue
        fn = ex.scopes.function[line_of(pattern)]
        key = _called_type(ex, value)
        if key:
            _typed_local(ex, fn, text(ex, pattern), (body.start_byte, body.end_byte), key)


# What makes a value a call's result: a call, a call's ``?``.
_RESULTS = frozenset({"call_expression", "try_expression"})


def _made_type(ex: Extracting, value: ts.Node, fn: int) -> str:
    """The key of the type (or of the function whose result) ``value`` makes ("" unknown)."""
    if value.type == "struct_expression":
        name = value.child_by_field_name("name")
        return _key(ex, text(ex, name), fn) if name is not None else ""
    callee = value.child_by_field_name("function")
    if callee is not None and callee.type in ("identifier", "scoped_identifier"):
        return result_type(ex, text(ex, callee), fn)
    return _called_type(ex, value)


def _called_type(ex: Extracting, value: ts.Node) -> str:
    """The key of what a chain of calls ``value`` returns, as a member after it is resolved
    (``cmd.find(x).unwrap()``: ``cmd``'s type's ``find``'s result; "" unknown)."""
    recv = _receiver(ex, value)
    if "(" not in recv:
        return ""
    line = line_of(value)
    prefix = ex.receiver_prefix(recv, ex.scopes.at(line, value.start_byte), value.start_byte)
    return prefix[:-1]


def result_type(ex: Extracting, called: str, fn: int) -> str:
    """The key of the type a call of the path ``called`` makes in function ``fn`` ("" unknown;
    see the module docstring): of ``let x = T::new()`` and ``T::new().g`` alike."""
    called = called.replace(" ", "")
    declared = ex.fields.get((called, ""))  # a function of this file declaring its result
    if declared is not None:
        return declared[0]
    *path, last = called.split("::")
    owner = path[-1] if path else ""
    if "." in called or not last:
        return ""  # a method's call (x.f()): what it returns is not read
    if last[:1].isupper():  # T(..), m::T(..): the tuple struct (E::V(..): an enum's, not followed)
        return "" if owner[:1].isupper() else _key(ex, called, fn)
    if owner[:1].isupper() and (last in _CONSTRUCTORS or last.startswith(_CONSTRUCTOR_PREFIXES)):
        return _key(ex, "::".join(path), fn)  # T::new(): T
    return ""


def results(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """What each function of the file declares it returns (the ``result`` captures), read as
    the element a caller reaches (:func:`element_type`): a ``field`` row of the function's
    name, for ``f().g``, ``x.f().g`` and ``let y = x.f()`` here and in other files
    (``-> Self``: its impl's type)."""
    for node in in_file_order(caps.get("result", ())):
        declared = node.child_by_field_name("return_type")
        if declared is None:
            continue
        line = line_of(node)
        key = ex.named_type(element_type(text(ex, declared)), ex.scopes.function[line])
        if key:
            ex.fields.setdefault((ex.scopes.qualname(ex.scopes.inner[line]), ""), (key, line))


# Generics whose value a caller reaches its element through: ``?``, ``.unwrap()``, a ``for``
# loop, a pointer's dereference (``Result<T, E>``: its first argument, ``T``).
_HOLDERS = frozenset({"Option", "Result", "Vec", "Box", "Rc", "Arc"})
# ``impl Iterator<Item = T>`` (``dyn``, ``DoubleEndedIterator``, ``+ '_``): its ``T``.
_ITERATOR = re.compile(r"(?:impl|dyn)\s+(?:\w+::)*\w*Iterator\s*<\s*Item\s*=\s*(.+?)\s*>(?:\s*\+.*)?", re.S)
_GENERIC = re.compile(r"(?:\w+::)*(\w+)\s*<(.*)>", re.S)
_LIFETIME = re.compile(r"'\w+")


def element_type(declared: str) -> str:
    """The type a value of the type ``declared`` holds, as its methods are reached: through
    ``&``, ``&mut``, ``Option``, ``Result``, ``Vec``, a slice, ``impl Iterator<Item = T>``,
    ``Box``, ``Rc``, ``Arc`` (``Option<&[Arg]>``: ``Arg``); any other type is its own."""
    kind = declared.strip()
    for _ in range(8):  # (a few wrappers deep)
        kind = _REFERENCE.sub("", kind).strip()
        if kind.startswith("[") and kind.endswith("]"):
            kind = _top_level(kind[1:-1], ";")[0]
            continue
        m = _ITERATOR.fullmatch(kind)
        if m is not None and len(_top_level(m.group(1), ",")) == 1:
            kind = m.group(1)
            continue
        m = _GENERIC.fullmatch(kind)
        arguments = _top_level(m.group(2), ",") if m is not None and m.group(1) in _HOLDERS else []
        arguments = [a for a in arguments if not _LIFETIME.fullmatch(a)]
        if not arguments:
            return kind
        kind = arguments[0]
    return kind


def _top_level(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets, each part stripped."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([":
            depth += 1
        elif c in ">)]" and not (c == ">" and text[i - 1 : i] == "-"):
            depth -= 1
        elif c == separator and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _key(ex: Extracting, name: str, fn: int) -> str:
    """The key of the type ``name`` names in function ``fn``, as a declaration's is read
    (``Extracting.named_type``); "" for one of the language's own (``Vec``, ``Self``)."""
    return "" if plain_type(name) in ex.rs.builtins else ex.named_type(name, fn)


def _typed_local(ex: Extracting, fn: int, local: str, span: tuple[int, int], key: str) -> None:
    """Record that ``local`` of function ``fn`` is of the type ``key`` where ``span`` says
    (its first binding's type where no span holds a use: ``Extracting.typed``)."""
    ex.typed[(fn, local)] = ex.typed.get((fn, local)) or key
    ex.scoped.setdefault((fn, local), []).append((*span, key))


def struct_fields(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Type the fields of the file's structs (the ``field.typed`` captures) by their declared
    type, when it is a type's path (or a pointer to one: ``_POINTER``), so that
    ``self.cmd.get_name()`` is ``Command``'s (``RefSpec.typed_fields`` would make each a local
    of its name too: ``for cmd in ..`` is no ``Command``)."""
    for node in in_file_order(caps.get("field.typed", ())):
        name, declared = node.child_by_field_name("name"), node.child_by_field_name("type")
        if name is None or declared is None:
            continue
        line = line_of(node)
        owner = ex.scopes.owner_class(ex.scopes.inner[line])
        kind = text(ex, declared)
        pointer = _POINTER.fullmatch(kind.strip())
        key = _key(ex, pointer.group(1) if pointer else kind, ex.scopes.function[line])
        if owner and key:
            ex.fields.setdefault((owner, text(ex, name)), (key, line))


def parameters(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Type the file's parameters of a type's path (the ``param.typed`` captures), as a ``let
    x: T`` is, or of a reference or pointer to one (``&T``, ``&'a mut T``, ``Box<T>``): a
    function's in it, a closure's in the closure (``render(cmd: &Command)``: ``cmd.get_name()``
    is ``Command``'s). A type parameter (``T``), ``impl Trait``, ``dyn Trait`` name no type the
    file binds, so type nothing."""
    for node in in_file_order(caps.get("param.typed", ())):
        pattern, declared = node.child_by_field_name("pattern"), node.child_by_field_name("type")
        if pattern is None or declared is None:
            continue
        fn = ex.scopes.function[line_of(pattern)]
        kind = _REFERENCE.sub("", text(ex, declared).strip())
        pointer = _POINTER.fullmatch(kind)
        key = _key(ex, pointer.group(1) if pointer else kind, fn)
        if not key:
            continue
        _typed_local(ex, fn, text(ex, pattern), rust_span(pattern) or EVERYWHERE, key)  # a closure's: in it


def chains(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Read from the tree the receivers of members after a call that a receiver's text does
    not give (the ``chained`` captures: ``Arg::new("x").short('s')``, whose call has
    arguments), as ``Arg::new()`` (``Extracting.chains``): what the call makes types the
    member as ``T::new().m`` is typed."""
    for node in caps.get("chained", ()):
        value, field = node.child_by_field_name("value"), node.child_by_field_name("field")
        if value is None or field is None:
            continue
        recv = _receiver(ex, value)
        if recv and recv != text(ex, value):
            ex.chains[field.start_byte] = recv[::-1].encode()


def _receiver(ex: Extracting, node: ts.Node, depth: int = 0) -> str:
    """A receiver's text, its calls' arguments and its spaces left out ("" none: not a chain
    of paths, members and calls)."""
    if depth > 64:
        return ""
    if node.type in ("identifier", "self", "scoped_identifier"):
        name = "".join(text(ex, node).split())
        return name if _PATH.fullmatch(name) else ""
    if node.type == "field_expression":
        value, field = node.child_by_field_name("value"), node.child_by_field_name("field")
        head = _receiver(ex, value, depth + 1) if value is not None else ""
        return f"{head}.{text(ex, field)}" if head and field is not None else ""
    if node.type == "call_expression":
        callee = node.child_by_field_name("function")
        head = _receiver(ex, callee, depth + 1) if callee is not None else ""
        return f"{head}()" if head else ""
    if node.type == "try_expression" and node.named_child_count == 1:  # f()?: f()'s element
        return _receiver(ex, node.named_child(0), depth + 1)
    return ""


_PATH = re.compile(r"(?:::)?\w+(?:::\w+)*")
