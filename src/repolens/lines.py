"""A file's lines as the index numbers them.

Line N is the N-th ``"\\n"``-separated line, as git, grep, editors and
tree-sitter count it. ``str.splitlines`` also breaks at a lone CR, form
feeds, ``\\x1c``-``\\x1e``, ``\\x85`` and U+2028/U+2029, so a file holding
one (a form feed between sections of older Python and C sources) would be
numbered one way by its chunks and symbols and another by a read of its
lines: everything that cites a line or reads one splits here.
"""

from __future__ import annotations


def source_lines(text: str) -> list[str]:
    """The lines of ``text``, split at ``\\n`` only: a trailing newline adds
    no empty line, and a ``\\r`` before a newline is dropped (a lone ``\\r``
    is a character of its line)."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if "\r" in text:
        lines = [x[:-1] if x.endswith("\r") else x for x in lines]
    return lines
