"""Java's overloads told apart by how many arguments a call passes.

A use's row says which name it calls and the key it resolves to, not its
arguments: ``send(data)`` and ``send(data, opcode)`` resolve to the same key,
``Sock.send``, whichever overload is asked about. The line a call stands on
is in the index (:func:`repolens.search.kept.lines_of`), and so is each
overload's signature: a call whose arguments are counted, and which another
overload of the class takes but the one asked does not, is that one's. A
call whose arguments are not read surely (two calls of the name on its line,
a string or bracket not closed a few lines on) stays every overload's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from repolens.search.kept import lines_of, symbols_in
from repolens.store.base import IndexReader, RefRow, SymbolRow

# Languages whose methods are overloaded by their parameters' count (and types: not read here).
OVERLOADING_LANGUAGES = frozenset({"java"})
# Lines after a call's first read for its closing parenthesis.
CALL_LINES = 6

_OPEN, _CLOSE = "([{", ")]}"
_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')

# How many parameters a method takes, and whether its last is a varargs one (``int... xs``).
Arity = tuple[int, bool]


def _arguments(text: str) -> int | None:
    """How many top-level comma-separated items ``text`` (after an opening parenthesis) holds
    before its closing one; None when it does not close."""
    depth, count, seen = 0, 0, False
    for c in _QUOTED.sub('""', text):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            if depth == 0:
                return count + 1 if seen else 0
            depth -= 1
        elif c == "," and depth == 0:
            count += 1
        if not c.isspace():
            seen = True
    return None


def declared(signature: str) -> Arity | None:
    """The :data:`Arity` of a method's signature (None: no parameter list read)."""
    head = re.sub(r"<[^<>()]*>", "", signature)  # Map<K, V> m: a generic's commas are no parameters'
    at = head.find("(")
    n = _arguments(head[at + 1 :]) if at >= 0 else None
    if n is None:
        return None
    return n, "..." in head[at:]


def _chosen(arities: Sequence[Arity], n: int) -> set[Arity]:
    """Those of ``arities`` a call passing ``n`` arguments may be, as Java chooses: one taking
    exactly ``n`` and no varargs, else a varargs one taking ``n`` (``n - 1`` or more)."""
    exact = {a for a in arities if a == (n, False)}
    return exact or {a for a in arities if a[1] and n >= a[0] - 1}


def passed(reader: IndexReader, row: RefRow) -> int | None:
    """How many arguments the call ``row`` passes (None: not read surely)."""
    lines = lines_of(reader, row.path)
    text = lines.get(row.line, "")
    calls = [m.end() for m in re.finditer(rf"(?<![\w$]){re.escape(row.name)}\s*\(", text)]
    if len(calls) != 1:
        return None
    rest = [text[calls[0] :], *(lines.get(row.line + i, "") for i in range(1, CALL_LINES))]
    return _arguments("\n".join(rest))


class Overloads:
    """The other overloads of a method in its class, to tell which calls are theirs."""

    def __init__(self, reader: IndexReader, definition: SymbolRow) -> None:
        self.reader = reader
        self.own: Arity | None = None
        self.others: list[Arity] = []
        if definition.language not in OVERLOADING_LANGUAGES or definition.kind != "method":
            return
        same = [s for s in symbols_in(reader, definition.path) if s.qualname == definition.qualname]
        others = [s for s in same if s.start_line != definition.start_line and s.kind == definition.kind]
        own = declared(definition.signature)
        arities = [a for a in map(declared, (s.signature for s in others)) if a is not None]
        if own is not None and any(a != own for a in arities):
            self.own, self.others = own, [a for a in arities if a != own]

    def another_s(self, row: RefRow) -> bool:
        """Whether the call ``row`` passes a count of arguments the method does not take and
        another overload does."""
        if self.own is None or row.kind != "call":
            return False
        n = passed(self.reader, row)
        if n is None:
            return False
        chosen = _chosen([self.own, *self.others], n)
        return bool(chosen) and self.own not in chosen


def own_calls(reader: IndexReader, definition: SymbolRow, rows: Sequence[RefRow]) -> list[RefRow]:
    """``rows`` but the calls of another overload of ``definition`` (:class:`Overloads`)."""
    overloads = Overloads(reader, definition)
    if overloads.own is None:
        return list(rows)
    return [r for r in rows if not overloads.another_s(r)]
