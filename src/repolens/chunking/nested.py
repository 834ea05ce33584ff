"""Functions defined inside functions, as symbols for lookup.

The chunker collects the definitions of a file's top level and of its
containers (classes, modules, impls): those are chunked. A function
defined inside another (a closure, a helper, hono's ``dispatch`` inside
``compose``, sphinx's ``make_xref`` inside ``_parse_annotation``) stays
inside its enclosing function's chunk, as it should, but was no symbol:
``find_symbol dispatch`` found nothing, and a search for the name did not
know which chunk defines it. Here each such function becomes a symbol,
named under the function that holds it (``compose.dispatch``), whose
lines are its own; its chunk is the enclosing function's.

Definitions are found from the keywords they start with in the functions'
bodies (``def``, ``function``, ``fn``, ``fun``, ``func``: a regular
expression, then the node at each match and up to two of its parents),
kept when the grammar spec calls them functions; so a JavaScript ``const f
= () => ...`` (no keyword) is not one, as every local would be a
candidate. The cost is a scan of the bodies' bytes and a little Python per
nested function.
The extraction does not know them (its rows are the same as before): a
question makes the uses of the name inside the holder its references
(``repolens.search.references``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence

import tree_sitter as ts

from repolens.chunking import Symbol
from repolens.chunking.grammars import CLASS_KINDS, LangSpec, Scope, classify, qualify
from repolens.chunking.pack import Def

_FUNCTION_KINDS = frozenset({"function", "method"})


# A keyword that may start a function's definition, in the languages that nest them.
_KEYWORD = re.compile(rb"(?<![\w$])(?:def|function|fn|func|fun|sub)(?![\w$])")


def _candidates(tree: ts.Tree, types: frozenset[str], outer: Sequence[Def], src: bytes) -> list[ts.Node]:
    """The function nodes inside the bodies of ``outer``, in file order,
    found from the keywords a definition starts with: each keyword's node
    and up to two of its parents (``def`` in ``function_definition``,
    ``function`` in ``function_declaration``). No walk of the tree: a query's
    walk of the whole tree cost a tenth of a file's chunking."""
    root = tree.root_node
    found: dict[int, ts.Node] = {}
    for d in outer:
        if not isinstance(d.ref, tuple):
            continue
        body = d.ref[1] if d.ref[1] is not None else d.ref[0]  # (const f = () => {...}: no body field)
        for m in _KEYWORD.finditer(src, body.start_byte, body.end_byte):
            node = root.descendant_for_byte_range(m.start(), m.end())
            for _ in range(3):
                if node is None:
                    break
                if node.type in types:
                    found.setdefault(node.start_byte, node)
                    break
                node = node.parent
    return [found[k] for k in sorted(found)]


def _functions(defs: Sequence[Def]) -> list[Def]:
    """The function and method definitions among ``defs`` and their members."""
    out: list[Def] = []
    stack = list(defs)
    while stack:
        d = stack.pop()
        if d.kind in _FUNCTION_KINDS:
            out.append(d)
        stack.extend(d.children)
    return out


def nested_symbols(
    tree: ts.Tree,
    src: bytes,
    spec: LangSpec,
    defs: Sequence[Def],
    path: str,
    language: str,
    signature: Callable[[ts.Node], str],
) -> list[Symbol]:
    """The functions defined inside the functions of ``defs`` (at any depth,
    each named under the innermost named function holding it), in file
    order; ``signature(node)`` is a definition's header on one line."""
    if spec.merge_clauses:
        return []  # a function's clauses are nodes of their own (Haskell, Elixir): no nesting to tell
    # node types mapped to functions, and those a handler classifies (a Kotlin or Lua
    # function, a JavaScript ``const f = function () {}``): kept when it says "function"
    types = frozenset(t for t, kind in spec.defs.items() if kind == "function" or not isinstance(kind, str))
    outer = _functions(defs)
    if not types or not outer:
        return []
    # Enclosing functions by their first row; nested ones join as they are found (file order).
    spans = sorted((d.start, d.end, d.qualname) for d in outer)
    known = {d.ref[0].start_byte for d in outer if isinstance(d.ref, tuple)}  # their nodes
    starts = [s for s, _, _ in spans]
    out: list[Symbol] = []
    nodes = _candidates(tree, types, outer, src)
    for node in nodes:
        row, end = node.start_point[0], node.end_point[0]
        if node.start_byte in known:
            continue  # a definition the chunker collected
        holder = _innermost(spans, starts, row, end)
        if holder is None or _in_class(node, spec, types):
            continue  # not inside a function (the chunker's own level), or a local class's method
        found = classify(node, Scope(holder, "function", src, spec))
        if found is None or found.kind != "function" or not found.name:
            continue
        qual = qualify(holder, found.name, spec.sep)
        header = signature(node)
        out.append(Symbol(found.name, qual, "function", path, row + 1, end + 1, header, holder, language))
        i = bisect.bisect_right(starts, row)
        spans.insert(i, (row, end, qual))
        starts.insert(i, row)
    return out


def _in_class(node: ts.Node, spec: LangSpec, functions: frozenset[str]) -> bool:
    """Whether a class holds ``node`` nearer than any function does."""
    p = node.parent
    while p is not None and p.type not in functions:
        if spec.defs.get(p.type) in CLASS_KINDS:
            return True
        p = p.parent
    return False


def _innermost(spans: list[tuple[int, int, str]], starts: list[int], row: int, end: int) -> str | None:
    """The qualified name of the innermost span holding rows ``row``..``end``
    and starting before ``row``: spans nest or are apart, so the first one
    holding them, going back from ``row``, is the innermost."""
    for i in range(bisect.bisect_left(starts, row) - 1, -1, -1):
        _, stop, qual = spans[i]
        if end <= stop:
            return qual
    return None
