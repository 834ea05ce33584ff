"""PHP's namespaces, for :mod:`repolens.search.references`.

A PHP file declares the namespace its definitions are in (``namespace App\\Shop;``
statements, or ``namespace X { }`` blocks, several to a file) and other files name
them by it (``use App\\Shop\\Item``): a key the file's path does not give
(:func:`repolens.chunking.refs.definition_keys`). Where a definition is declared is
read here from the file's stored lines when a question is asked, by the rule the
file's own uses were keyed by when it was indexed
(:func:`repolens.chunking.refs.namespace_at`).
"""

from __future__ import annotations

import re

from repolens.chunking.refs import namespace_at, split_key
from repolens.search.kept import FILES_HELD, lines_of, per_index, symbols_in
from repolens.store.base import IndexReader

_NAMESPACE_LINE = re.compile(r"\s*namespace(?:\s+([\w\\]+))?\s*[;{]")


def import_keys(reader: IndexReader, path: str, qualname: str) -> frozenset[str]:
    """The keys another file spells for the definition ``qualname`` of ``path``: the
    namespace it is declared in, then its name (``App.Shop.Item``); none in the global one.
    A name the file defines in two namespaces has both; one it does not define, the file's
    first namespace's."""
    starts = _namespace_starts(reader, path)
    if not starts:
        return frozenset()
    parts = split_key(qualname)
    namespaces = _declared_in(reader, path).get(parts[0] if parts else "")
    if namespaces is None:
        namespaces = frozenset({starts[0][1]})
    return frozenset(".".join([ns, *parts]) for ns in namespaces if ns)


@per_index(FILES_HELD)
def _namespace_starts(reader: IndexReader, path: str) -> list[tuple[int, str]]:
    """(first line, key) of each namespace a PHP file declares, in line order."""
    found = []
    for line, text in sorted(lines_of(reader, path).items()):
        if m := _NAMESPACE_LINE.match(text):
            found.append((line, ".".join(split_key(m.group(1) or ""))))
    return found


@per_index(FILES_HELD)
def _declared_in(reader: IndexReader, path: str) -> dict[str, frozenset[str]]:
    """The namespaces a PHP file's definitions are declared in, by the first part of their
    qualified names (a class's members are where the class is): worked out once per file,
    where each key of each definition asks."""
    starts = _namespace_starts(reader, path)
    found: dict[str, set[str]] = {}
    for s in symbols_in(reader, path):
        parts = split_key(s.qualname)
        found.setdefault(parts[0] if parts else "", set()).add(namespace_at(starts, s.start_line))
    return {head: frozenset(namespaces) for head, namespaces in found.items()}
