"""What a packed chunk says about itself, as the readers of an index parse it back.

:mod:`repolens.chunking.pack` writes these forms; the read path (hits, packets,
chunks) reads them, without loading the packer: a part of a split
definition repeats its header lines, and a chunk holding several
definitions is labelled with their names, and a definition's signature is
found again among its lines.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.chunking import Chunk

_NAMES_SHOWN = 3
# How far below a definition's start its signature line may be (decorators,
# doc comments, attributes in front of it), and how many lines it may span.
_SIGNATURE_SEARCH = 60
_MAX_SIGNATURE_LINES = 5


def repeated_header_lines(chunk: Chunk) -> int:
    """How many lines at the start of ``chunk.text`` repeat its definition's header.

    Parts 2..n of a split definition start with the header; their line range
    is the part's own. 0 for every other chunk.
    """
    return max(0, chunk.text.count("\n") + 1 - (chunk.end_line - chunk.start_line + 1))


def join_names(names: list[str], more: int = 0) -> str:
    """``a, b, c (+2 more)``: the label of a chunk holding several definitions
    (``more`` counts further ones not in ``names``)."""
    more += max(0, len(names) - _NAMES_SHOWN)
    return ", ".join(names[:_NAMES_SHOWN]) + (f" (+{more} more)" if more else "")


_MORE = r" \(\+(\d+) more\)$"  # compiled at first use: a search needs none


def split_names(label: str) -> tuple[list[str], int]:
    """The inverse of :func:`join_names`: (names shown, how many more)."""
    m = re.search(_MORE, label)
    shown = label[: m.start()] if m else label
    return [n for n in shown.split(", ") if n], int(m.group(1)) if m else 0


def signature_lines(lines: dict[int, str], start: int, end: int, signature: str) -> list[int]:
    """The rows of a definition's signature: the first line whose text begins
    the stored signature, and the lines after it that continue it."""

    def squash(s: str) -> str:
        return " ".join(s.split())

    target = squash(signature)
    if not target:
        return []
    for n in range(start, min(end, start + _SIGNATURE_SEARCH) + 1):
        first = squash(lines.get(n, ""))
        stem = first.rstrip("{:=(").rstrip()  # a lone ``{`` begins every signature: not a match
        if not stem or not (target.startswith(stem) or first.startswith(target)):
            continue
        rows, acc = [n], first
        m = n + 1
        while m <= end and len(rows) < _MAX_SIGNATURE_LINES and len(acc) < len(target):
            nxt = squash(lines.get(m, ""))
            joined = f"{acc} {nxt}"
            if not nxt or not target.startswith(joined.rstrip("{:=(").rstrip()):
                break
            rows.append(m)
            acc = joined
            m += 1
        return rows
    return []
