"""Where a file's uses stand: the other half of its extraction (see :mod:`.extract`).

:class:`Uses` reads the captures for what is a use at all, before any is
resolved (:class:`~repolens.chunking.refs.targets.Targets` says what one
means): the names bound locally and where they are visible (no use there,
and a local's name is no reference), the names whose locals a block
shadows, and each use's capture by where it starts (the first capture of
:data:`USE_CAPTURES` wins; a plain name only when the file binds it; C#'s
bare property reads). The extraction
(:class:`repolens.chunking.refs.extract._Extraction`) runs them in order and
keeps the state they set.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat

import tree_sitter as ts

from repolens.chunking.refs.captures import END, NEXT, POINT, ROW, START
from repolens.chunking.refs.extracting import RefSpec, Scopes
from repolens.chunking.refs.scoping import EVERYWHERE, FunctionScopes
from repolens.chunking.refs.typed import visible

# Capture names that make a use, in the order their kind wins.
USE_CAPTURES = ("call", "base", "decorator", "type", "attr", "name")
# Where a ``call`` capture names the type of the object made (C#'s ``new Foo()``).
_CREATIONS = frozenset({"object_creation_expression"})


class Uses:
    """Which captures are uses, and the locals that are not; the state is the extraction's."""

    rs: RefSpec
    src: bytes
    scopes: Scopes
    fscopes: FunctionScopes | None
    module: dict[str, str]
    local_imports: dict[tuple[int, str], str]
    typed: dict[tuple[int, str], str]
    fixture_params: dict[tuple[int, str], str]
    class_names: dict[tuple[str, str], str]
    binds: set[tuple[int, bytes]]
    bind_ranges: dict[tuple[int, bytes], list[tuple[int, int]]]
    partial: set[bytes]
    block_spans: dict[int, tuple[int, int]]
    opened: set[str]
    padded: bytes
    separator_ends: frozenset[int]

    def _locals(self, nodes: Sequence[ts.Node], block: Sequence[ts.Node]) -> set[int]:
        """Sets ``self.binds``, the (function, name) of each name bound
        locally (``nodes`` in their whole function, ``block`` where the
        language's ``bind_span`` says), and ``self.bind_ranges`` where
        that is less than the whole function; returns where those names
        stand (no use there)."""
        spans: dict[int, tuple[int, int] | None] = {}
        if block and self.rs.bind_span is not None:
            spans = dict(zip(map(START, block), map(self.rs.bind_span, block), strict=False))
        whole = len(nodes)  # the block's come after
        nodes = [*nodes, *block]
        starts = list(map(START, nodes))
        functions = list(map(self.scopes.function.__getitem__, map(NEXT, map(ROW, map(POINT, nodes)))))
        if self.scopes.shared:  # a line several definitions share: by the name's byte
            shared = self.scopes.shared
            for i, node in enumerate(nodes):
                if node.start_point[0] + 1 in shared:
                    functions[i] = self.scopes.function_of(node)
        raws = list(map(self.src.__getitem__, map(slice, starts, map(END, nodes))))
        self.binds = set(zip(functions, raws, strict=False))
        fscopes = self.fscopes
        partial = {
            (functions[i], raws[i]) for i in range(whole, len(nodes)) if spans.get(starts[i]) is not None
        }
        if fscopes is not None or partial:
            ranges = self.bind_ranges
            for bound, at in zip(zip(functions, raws, strict=False), starts, strict=False):
                span = spans.get(at)
                if span is None and fscopes is None and bound not in partial:
                    continue  # visible in its whole function, as every binding of its name there
                if span is None:
                    span = fscopes.visible(at) if fscopes is not None else EVERYWHERE
                ranges.setdefault(bound, []).append(span)
        self.partial = {raw for _, raw in partial}
        self.block_spans = {at: span for at, span in spans.items() if span is not None}
        return set(starts)

    def _shadows(self) -> frozenset[bytes]:
        """The names, reversed (as the main loop reads a receiver), of locals
        visible in less than their function that the file also binds
        otherwise (the module, an import, a typed local): a member of one
        is looked up where it stands, not once for its whole function."""
        if not self.partial:
            return frozenset()
        named = {n.encode() for n in self.module}
        named.update(n.encode() for _, n in self.local_imports)
        named.update(n.encode() for _, n in self.typed)
        return frozenset(raw[::-1] for raw in self.partial & named)

    def visible(self, node: ts.Node) -> tuple[int, int]:
        """Where the local a ``typed`` node binds is visible (see :attr:`scoped`)."""
        if self.fscopes is not None:
            span = self.block_spans.get(node.start_byte)  # a typed const of a block: in it
            return span if span is not None else self.fscopes.visible(node.start_byte)
        if self.rs.shadowing_lets:  # a typed let's local: where its name's bind span says
            var = node.child_by_field_name("pattern")
            span = self.block_spans.get(var.start_byte) if var is not None else None
            return span if span is not None else EVERYWHERE
        return visible(node)

    def _uses(self, caps: dict[str, list[ts.Node]], excluded: set[int]) -> dict[int, tuple[str, ts.Node]]:
        """Where each use starts -> its capture and node: the first capture
        of USE_CAPTURES wins (so they are laid over each other from the
        last), and a plain name is kept only when the file binds it: most are
        locals, dropped here before they cost a use's work."""
        uses: dict[int, tuple[str, ts.Node]] = {}
        for capture in reversed(USE_CAPTURES[:-1]):
            nodes = caps.get(capture)
            if nodes:
                uses.update(zip(map(START, nodes), zip(repeat(capture), nodes, strict=False), strict=False))
        for node in caps.get("call.self", ()):
            start = node.start_byte
            if start not in excluded and uses.get(start, ("call",))[0] == "call":
                uses[start] = ("call.self", node)
        for start in excluded.intersection(uses):
            del uses[start]
        nodes = caps.get("name")
        if nodes and self.rs.package_members:  # Go: a name the file does not bind may be its package's
            for start, node in zip(map(START, nodes), nodes, strict=False):
                if start not in uses and start not in excluded:
                    uses[start] = ("name", node)
        elif nodes:
            bound = {n.encode() for n in self.module} | {n.encode() for _, n in self.local_imports}
            bound |= {n.encode() for _, n in self.fixture_params}
            in_classes = {n.encode() for _, n in self.class_names} - bound  # outside functions only
            function = self.scopes.function
            starts = list(map(START, nodes))
            raws = list(map(self.src.__getitem__, map(slice, starts, map(END, nodes))))
            kept = map(bound.__contains__, raws)
            if in_classes:
                kept = (
                    k or (r in in_classes and function[n.start_point[0] + 1] < 0)
                    for k, r, n in zip(kept, raws, nodes, strict=False)
                )
            for start, node in compress(zip(starts, nodes, strict=False), kept):
                if start not in uses and start not in excluded:
                    uses[start] = ("name", node)
        members, properties = caps.get("name.member"), caps.get("property", ())
        if members and (properties or self.opened):
            others = self._not_members(caps) if self.opened else set()
            self._member_reads(members, properties, self.opened, others, uses, excluded)
        return uses

    def _not_members(self, caps: dict[str, list[ts.Node]]) -> set[bytes]:
        """The names the file declares as a class's fields or names as types (``Foo x``,
        ``new Foo()``, a base): a plain one is no property a class inherits."""
        src = self.src
        out = {raw for fn, raw in self.binds if fn < 0}
        made = [n for n in caps.get("call", ()) if n.parent is not None and n.parent.type in _CREATIONS]
        for node in (*caps.get("type", ()), *caps.get("base", ()), *made):
            out.add(src[node.start_byte : node.end_byte])
        return out

    def _open_classes(self, nodes: Sequence[ts.Node]) -> set[str]:
        """The classes of the file naming a base or said ``partial`` (``nodes``: the ``open``
        captures, their base lists and those modifiers): a member the file does not declare
        may be theirs (C#'s inherited property reads), and a default function called alone
        there may be one they inherit (Kotlin's). By where each stands, in its declaration
        (Kotlin's has no name field to read)."""
        at, owner_class = self.scopes.at, self.scopes.owner_class
        out = {owner_class(at(node.start_point[0] + 1, node.start_byte)) for node in nodes}
        out.discard("")
        return out

    def _member_reads(
        self,
        nodes: Sequence[ts.Node],
        properties: Sequence[ts.Node],
        opened: set[str],
        others: set[bytes],
        uses: dict[int, tuple[str, ts.Node]],
        excluded: set[int],
    ) -> None:
        """Add to ``uses`` the plain names among ``nodes`` that the file declares a
        property of (``Total`` meaning ``this.Total``), as names: the rule of a name the
        class defines keeps them (a local of the name hides it). Not a receiver named as
        its property's type is (C#'s ``public Status Status``: ``Status.Draft`` may be the
        type's member), which stays unknown. In a class of ``opened`` (naming a base, or
        ``partial``) a capitalised name the file declares nothing of and names as no type
        (``others``) is ``this.Total`` all the same (``name.self``): a property of a base or
        of another part, as properties are named; not a receiver (``Console.WriteLine``: a
        type's name reads the same), nor what an object initializer sets (``new Foo { Bar =
        1 }``: the new object's)."""
        src = self.src
        names: set[bytes] = set()
        typed_so: set[bytes] = set()  # properties named as their type
        for n in properties:
            name = src[n.start_byte : n.end_byte]
            names.add(name)
            declared = n.parent.child_by_field_name("type") if n.parent is not None else None
            if declared is not None and src[declared.start_byte : declared.end_byte] == name:
                typed_so.add(name)
        for node in nodes:
            start = node.start_byte
            raw = src[start : node.end_byte]
            if start in uses or start in excluded:
                continue
            receiver = node.parent is not None and node.parent.type == "member_access_expression"
            if raw not in names:
                if opened and self._inherited_read(node, raw, receiver, others, opened):
                    uses[start] = ("name.self", node)
                continue
            if raw in typed_so and receiver:
                continue
            uses[start] = ("name", node)

    def _inherited_read(
        self, node: ts.Node, raw: bytes, receiver: bool, others: set[bytes], opened: set[str]
    ) -> bool:
        """Whether the plain name ``raw`` at ``node`` may be a property a class of ``opened``
        holding it inherits or declares in another part (see :meth:`_member_reads`)."""
        if (
            receiver
            or not raw[:1].isupper()
            or raw in others
            or self.padded[node.start_byte] in self.separator_ends  # the main loop's member
        ):
            return False
        parent = node.parent
        if (
            parent is not None
            and parent.type == "assignment_expression"
            and parent.parent is not None
            and parent.parent.type == "initializer_expression"
            and node.start_byte == parent.start_byte
        ):
            return False  # new Foo { Bar = 1 }: the new object's Bar
        return self.scopes.owner_class(self.scopes.at(node.start_point[0] + 1, node.start_byte)) in opened
