"""What a grammar spec is made of: kinds, :class:`LangSpec`, and the helpers handlers share.

A spec maps a node type either to a kind (the name is the node's ``name``
field; containers have their members in the ``body`` field: the generic
rule of :func:`classify`) or to a handler function for anything less
regular. Handlers get the node and the enclosing :class:`Scope` and return a
:class:`Found` or ``None`` (not a definition).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from repolens.record import Record

# Kinds whose bodies are searched for member definitions.
CONTAINER_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "impl", "module"})
# A function directly inside one of these is a method.
CLASS_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "impl"})


class Scope(Record):
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
    """The source text of ``node`` ("" for None)."""
    if node is None:
        return ""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def qualify(prefix: str, name: str, sep: str) -> str:
    """``name`` under the qualified-name ``prefix`` ("" at the top level)."""
    return f"{prefix}{sep}{name}" if prefix else name


def first_named(node: Node, *types: str) -> Node | None:
    """The first named child of ``node`` of one of ``types``."""
    for c in node.named_children:
        if c.type in types:
            return c
    return None


def has_token(node: Node, token: str) -> bool:
    """Whether ``node`` has a direct child of type ``token`` (a keyword)."""
    return any(c.type == token for c in node.children)


def is_const_name(name: str) -> bool:
    """``MAX_SIZE``: the upper-case spelling that marks a module constant."""
    return len(name) > 1 and name.isupper()


_GENERICS = re.compile(r"<.*>|\[.*\]")


def strip_generics(name: str) -> str:
    """``Map<K, V>`` -> ``Map``: a receiver or impl type without its parameters."""
    return _GENERICS.sub("", name).strip()


def named_method(name: str) -> Handler:
    """A handler for a node that is always the method ``name`` (``init``, ``constructor``)."""

    def handler(node: Node, scope: Scope) -> Found | None:
        return Found("method", name, node)

    return handler


# -- the generic rule ------------------------------------------------------


def generic(node: Node, scope: Scope, kind: str) -> Found | None:
    """The rule for a node type mapped to ``kind``: named by its ``name`` field, members in ``body``."""
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
        return generic(node, scope, rule)
    return rule(node, scope)
