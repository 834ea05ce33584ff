"""The wording every reply shares: markers for text left out, the trailer
that names what did not fit, and counted nouns.

These texts are a contract (agents and tests read them; the README quotes
them), so each exists here once and every reply (packets, focus, chunks,
file overviews, symbol lookups) builds its markers from these functions.
"""

from __future__ import annotations

from collections.abc import Sequence


def counted(n: int, noun: str, plural: str = "") -> str:
    """``1 hit``, ``2 hits``; ``plural`` for nouns that do not take an ``s``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def omitted_marker(a: int, b: int) -> str:
    """A stretch of a shown span that is left out."""
    return f"... (line {a} omitted)" if a == b else f"... (lines {a}-{b} omitted)"


def truncated_marker(path: str, start: int, end: int, cap: int) -> str:
    """A hit cut by the per-hit cap; names the read that shows the rest."""
    return f"... (truncated at {cap} chars; use read_snippet {path} {start} {end} to expand)"


def budget_marker(path: str, start: int, end: int, dropped: int) -> str:
    """A hit cut because the reply's budget ran out."""
    return f"... (budget: {dropped} chars omitted; use read_snippet {path} {start} {end} to expand)"


def diff_marker(n: int, commit: str, path: str) -> str:
    """Changed lines of a commit left out of a history reply; names the command that shows them."""
    return f"... ({counted(n, 'more changed line')}; git show {commit} -- {path})"


def more_did_not_fit(noun: str, n: int) -> str:
    """The shortest trailer: ``... 3 more hits did not fit``."""
    return f"... {counted(n, 'more ' + noun)} did not fit"


def did_not_fit(noun: str, refs: Sequence[str], limit: int) -> str:
    """``... 3 more hits did not fit: a, b, and 1 more`` within ``limit`` chars.

    Names as many of ``refs`` (best first) as fit, then counts the rest; at
    its shortest it is ``... 3 more hits did not fit``, and empty when not
    even that fits.
    """
    n = len(refs)
    if not n:
        return ""
    head = more_did_not_fit(noun, n)
    for k in range(n, 0, -1):
        rest = f", and {n - k} more" if k < n else ""
        text = f"{head}: {', '.join(refs[:k])}{rest}"
        if len(text) <= limit:
            return text
    return head if len(head) <= limit else ""


# The head of a packet's last lines: the next best files after the hits.
NEXT_FILES = "next files (read_snippet PATH START END to read one):"


def next_file_line(path: str, start: int, end: int, reason: str) -> str:
    """One pointer to a file a packet names without showing it: its best span and why."""
    return f"{path}:{start}-{end} ({reason})"
