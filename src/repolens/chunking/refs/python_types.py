"""Python's rules that a plain walk of names misses: what a class body names.

Run once per Python file after its locals' types are read (:func:`extend`,
the first of the ``rules`` of :mod:`.specs`'s Python), on the captures of the file's
one query:

**class bodies.** A name in a class body, outside its methods, is the
class's own member first (``tag = to_json`` with ``to_json`` a method of
the class), then the module's; a class's bases of the same file are kept,
so that ``self.x.name`` finds the field ``x`` a base declares
(``self.serializer.tag`` in a subclass of ``Tag``, which declares
``serializer: Serializer``).

Nothing here needs another file.
"""

from __future__ import annotations

from collections.abc import Sequence

import tree_sitter as ts

from repolens.chunking.refs import same_file_key
from repolens.chunking.refs.extracting import Extracting


def extend(ex: Extracting, caps: dict[str, list[ts.Node]]) -> None:
    """Read a file's class bodies: their own names, their bases of the file."""
    class_bodies(ex, caps.get("base", ()))


def text(ex: Extracting, node: ts.Node) -> str:
    return ex.src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def line_of(node: ts.Node) -> int:
    return node.start_point[0] + 1


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
