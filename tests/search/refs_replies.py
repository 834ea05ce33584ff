"""Reading a ``find_references`` reply in the references tests."""

from __future__ import annotations


def uses(text: str) -> list[str]:
    """The ``path`` and ``scope line`` lines of a references reply, before the name matches."""
    head = text.split("name matches (same name")[0]
    return [
        line.strip() for line in head.splitlines()[1:] if line.strip() and not line.startswith("also defined")
    ]


def matched(text: str) -> str:
    """The name matches part of a references reply ("" none)."""
    _, _, tail = text.partition("name matches (same name")
    return tail
