"""Overloads told apart by how many arguments a call passes.

A use's row says which name it calls and the key it resolves to, not its
arguments: ``send(data)`` and ``send(data, opcode)`` resolve to the same key,
``Sock.send``, whichever overload is asked about. The line a call stands on
is in the index (:func:`repolens.search.kept.lines_of`), and so is each
overload's signature: a call whose arguments are counted, and which another
overload of the class takes but the one asked does not, is that one's. A
call whose arguments are not read surely (two calls of the name on its line,
a string or bracket not closed a few lines on, a ``<`` that may open a
generic's arguments) stays every overload's, and so does a call an overload
may take either way: a parameter with a default value makes a method take a
range of counts, and which of two taking the same count is chosen depends on
the arguments' types, which are not read here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from repolens.search.kept import lines_of, symbols_in
from repolens.store.base import IndexReader, RefRow, SymbolRow

# Languages whose methods are overloaded by their parameters' count (and types: not read here).
# Dart has no overloads; Swift's are told by their labels too, which count as arguments.
OVERLOADING_LANGUAGES = frozenset({"java", "csharp", "kotlin", "cpp", "scala", "swift"})
# Where a block after a call's closing parenthesis is one more argument (Kotlin's trailing
# lambda), and where it may be that or a statement's body (Swift: ``if f(x) { ... }``).
_TRAILING_LAMBDA = frozenset({"kotlin"})
_TRAILING_UNSURE = frozenset({"swift"})
# Lines after a call's (or a declaration's) first read for its closing parenthesis.
CALL_LINES = 6

_OPEN, _CLOSE = "([{", ")]}"
_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_GENERIC = re.compile(r"<[^<>()]*>")
# Tokens holding ``<`` or ``>`` that open or close no generic's arguments.
_NOT_ANGLE = re.compile(r"->|=>|<=|>=|<<|>>")
# A varargs parameter by its keyword: Kotlin's ``vararg xs: Int``, C#'s ``params int[] xs``.
_VARARG_WORD = re.compile(r"(?<![\w$])(?:vararg|params)\s")
# C#'s extension method: its first parameter is the receiver, ``s.F(a)`` or ``Ext.F(s, a)``.
_RECEIVER = re.compile(r"this\s")

# The counts of arguments a method takes: at least the first, at most the second (None:
# any more, a varargs one's).
Arity = tuple[int, int | None]


def _items(text: str) -> tuple[list[tuple[str, bool]], str] | None:
    """The top-level comma-separated items ``text`` (after an opening parenthesis) holds
    before its closing one, each with whether it has an ``=`` of its own (a parameter's
    default value), and the text after that parenthesis; None when it does not close. An
    empty last item (a trailing comma) is none."""
    text = _QUOTED.sub('""', text)
    depth, items, item, assigned = 0, [], "", False
    for at, c in enumerate(text):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            if depth == 0:
                if item.strip() or items:
                    items.append((item, assigned))
                if items and not items[-1][0].strip():
                    items.pop()
                return items, text[at + 1 :]
            depth -= 1
        elif c == "," and depth == 0:
            items.append((item, assigned))
            item, assigned = "", False
            continue
        elif c == "=" and depth == 0:
            assigned = True
        item += c
    return None


def _vararg(parameter: str, language: str) -> bool:
    """Whether ``parameter`` takes any count of arguments (``int... xs``, ``xs: Int*``)."""
    if "..." in parameter or _VARARG_WORD.search(parameter):
        return True
    return language == "scala" and parameter.split("=")[0].rstrip().endswith("*")


def declared(signature: str, language: str = "java") -> Arity | None:
    """The :data:`Arity` of a method's signature (None: no parameter list read, or a C#
    extension method's, whose count depends on how it is called)."""
    head = _GENERIC.sub("", signature)  # Map<K, V> m: a generic's commas are no parameters'
    at = head.find("(")
    read = _items(head[at + 1 :]) if at >= 0 else None
    if read is None:
        return None
    parameters = [(p.strip(), default) for p, default in read[0]]
    if parameters == [("void", False)]:  # C's and C++'s f(void) takes none
        return 0, 0
    if parameters and _RECEIVER.match(parameters[0][0]):
        return None
    varargs = [p for p, _ in parameters if _vararg(p, language)]
    least = sum(1 for p, default in parameters if not default and not _vararg(p, language))
    return least, None if varargs else len(parameters)


def _signature(reader: IndexReader, symbol: SymbolRow) -> str:
    """``symbol``'s signature, or the lines it starts on when its parameters stand on lines
    of their own and the signature kept none (Kotlin's ``fun send``)."""
    if "(" in symbol.signature:
        return symbol.signature
    lines = lines_of(reader, symbol.path)
    text = "\n".join(lines.get(symbol.start_line + i, "") for i in range(CALL_LINES))
    named = re.search(rf"(?<![\w$]){re.escape(symbol.name)}\s*\(", text)
    return text[named.start() :] if named else symbol.signature


def _takes(arity: Arity, n: int) -> bool:
    return arity[0] <= n and (arity[1] is None or n <= arity[1])


def _chosen(arities: Sequence[Arity], n: int) -> set[Arity]:
    """Those of ``arities`` a call passing ``n`` arguments may be: those taking ``n`` with
    no varargs, else a varargs one taking ``n`` (as Java, C# and Kotlin prefer a method
    called without expanding its varargs)."""
    fixed = {a for a in arities if a[1] is not None and _takes(a, n)}
    return fixed or {a for a in arities if a[1] is None and _takes(a, n)}


def passed(reader: IndexReader, row: RefRow) -> int | None:
    """How many arguments the call ``row`` passes (None: not read surely)."""
    lines = lines_of(reader, row.path)
    text = lines.get(row.line, "")
    opening = "[({]" if row.language in _TRAILING_LAMBDA else r"\("  # Kotlin's f { }: no parentheses
    calls = [m.end() for m in re.finditer(rf"(?<![\w$]){re.escape(row.name)}\s*{opening}", text)]
    if len(calls) != 1:
        return None
    if text[calls[0] - 1] == "{":
        return 1  # the lambda alone
    rest = [text[calls[0] :], *(lines.get(row.line + i, "") for i in range(1, CALL_LINES))]
    read = _items("\n".join(rest))
    if read is None:
        return None
    arguments, after = read
    for argument, _ in arguments[:-1]:  # f(new HashMap<K, V>()): a generic's comma, or a < b?
        bare = _NOT_ANGLE.sub("", argument)
        if bare.count("<") > bare.count(">"):
            return None
    if after.lstrip().startswith("{"):
        if row.language in _TRAILING_UNSURE:
            return None
        if row.language in _TRAILING_LAMBDA:
            return len(arguments) + 1
    return len(arguments)


def _overloads(reader: IndexReader, definition: SymbolRow) -> tuple[Arity, list[Arity]] | None:
    """The :data:`Arity` of ``definition`` and those of its class's other overloads taking
    other counts; None when there are none (or its own is not read): every call is its own."""
    language = definition.language
    if language not in OVERLOADING_LANGUAGES or definition.kind != "method":
        return None
    same = [s for s in symbols_in(reader, definition.path) if s.qualname == definition.qualname]
    others = [s for s in same if s.start_line != definition.start_line and s.kind == definition.kind]
    own = declared(_signature(reader, definition), language)
    arities = [a for a in (declared(_signature(reader, s), language) for s in others) if a is not None]
    if own is None or all(a == own for a in arities):
        return None
    return own, [a for a in arities if a != own]


def own_calls(reader: IndexReader, definition: SymbolRow, rows: Sequence[RefRow]) -> list[RefRow]:
    """``rows`` but the calls of another overload of ``definition``: a call passing a count
    of arguments the method does not take and another overload does."""
    overloads = _overloads(reader, definition)
    if overloads is None:
        return list(rows)
    own, others = overloads

    def another_s(row: RefRow) -> bool:
        n = passed(reader, row) if row.kind == "call" else None
        if n is None:
            return False
        chosen = _chosen([own, *others], n)
        return bool(chosen) and own not in chosen

    return [r for r in rows if not another_s(r)]
