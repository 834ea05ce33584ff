"""Functions as scopes of their own locals, where a definition is not one
(TypeScript and JavaScript: an arrow callback, a function expression).

The extraction keys a local by the *definition* holding it (a function the
chunker made a symbol of), so in a test file, whose ``describe(() => ...)``
callbacks are no definitions, a ``const accepts`` in one callback would hide
the imported ``accepts`` in every other. With :class:`FunctionScopes` a
local is visible in the innermost function node holding its binding (a
parameter in its own function, a declared local in the function holding the
declaration), and a use is looked up where it stands: :meth:`where` gives
the use's innermost function (its start byte, -1 outside every function),
one value for every use in that function, so what a receiver means is still
worked out once per function and receiver.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import tree_sitter as ts

# A binding outside every function: visible from anywhere in the file.
EVERYWHERE = (-1, 1 << 62)


class FunctionScopes:
    """A file's function nodes (arrows, function expressions and declarations,
    methods, function types), as nested byte ranges."""

    def __init__(self, nodes: Sequence[ts.Node]) -> None:
        by_span = {(n.start_byte, n.end_byte): n for n in nodes}
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.parents: list[int] = []  # the innermost function holding each (-1 none)
        self.nodes: list[ts.Node] = []
        holding: list[int] = []
        for lo, hi in sorted(by_span, key=lambda s: (s[0], -s[1])):
            while holding and self.ends[holding[-1]] <= lo:
                holding.pop()
            self.parents.append(holding[-1] if holding else -1)
            holding.append(len(self.starts))
            self.starts.append(lo)
            self.ends.append(hi)
            self.nodes.append(by_span[(lo, hi)])

    def innermost(self, at: int) -> int:
        """The index of the innermost function holding byte ``at`` (-1 none):
        the last starting at or before it, else the functions holding that one."""
        k = bisect.bisect_right(self.starts, at) - 1
        ends, parents = self.ends, self.parents
        while k >= 0 and ends[k] <= at:
            k = parents[k]
        return k

    def where(self, at: int) -> int:
        """Where a use at byte ``at`` stands, as :meth:`visible` ranges hold it: its
        innermost function's start byte (-1 outside every function)."""
        k = self.innermost(at)
        return self.starts[k] if k >= 0 else -1

    def visible(self, at: int) -> tuple[int, int]:
        """The range of :meth:`where` values a local bound at byte ``at`` is visible
        from: its innermost function's bytes (``EVERYWHERE`` outside every function)."""
        k = self.innermost(at)
        return (self.starts[k], self.ends[k]) if k >= 0 else EVERYWHERE

    def enclosing(self, node: ts.Node) -> int:
        """The index of the innermost function holding ``node`` other than itself (-1 none)."""
        k = self.innermost(node.start_byte)
        while k >= 0 and self.starts[k] == node.start_byte and self.ends[k] == node.end_byte:
            k = self.parents[k]
        return k


def untyped_in_scope(
    bind_ranges: dict[tuple[int, bytes], list[tuple[int, int]]],
    typed: dict[tuple[int, str], str],
    scoped: dict[tuple[int, str], list[tuple[int, int, str]]],
) -> None:
    """Add each untyped binding of a typed local's name to ``scoped`` as a
    binding of no type where it is visible (``bind_ranges``: (function, name)
    -> its ranges): a callback's ``(c) =>`` is not another's ``(c: Context)``."""
    for (fn, raw), ranges in bind_ranges.items():
        name = raw.decode("utf-8", "replace")
        if (fn, name) in typed:
            scoped.setdefault((fn, name), []).extend((lo, hi, "") for lo, hi in ranges)
