"""A query's captures, read cheaply: a file holds about one use per line of
code, and py-tree-sitter makes a node object of each capture, so their
positions are read in bulk (``map`` over the nodes, no Python frame per
node), a file's text is cut by byte offsets without decoding each slice, and
the cyclic garbage collector waits while they live (see :mod:`.extract`)."""

from __future__ import annotations

import bisect
import contextlib
import gc
import operator
from collections.abc import Iterator, Sequence

import tree_sitter as ts

# Read off many nodes at once with map (no Python frame per node).
START = operator.attrgetter("start_byte")
END = operator.attrgetter("end_byte")
POINT = operator.attrgetter("start_point")
ROW = operator.itemgetter(0)
NEXT = (1).__add__


def in_file_order(nodes: Sequence[ts.Node]) -> list[ts.Node]:
    """``nodes`` by where they start. py-tree-sitter (0.26) gathers a
    capture name's nodes in a set, so they come in an order that changes
    from one run to the next (the typed assignments of one file in 20 orders
    in 20 runs), and what a later import or assignment binds replaces an
    earlier one's: read in file order, a file's references are the same at
    every build."""
    return sorted(nodes, key=START)


@contextlib.contextmanager
def no_cyclic_collection() -> Iterator[None]:
    """The cyclic garbage collector off while a file's references are found.

    A file's captures and rows are thousands of objects alive at once (a
    node per capture); made with the collector on, they are counted, moved
    to older generations and make full passes over the process's heap
    frequent, for no garbage: they hold no cycle and go by reference
    counting when the file is done (corpus-1m's index: 36.1 -> 35.5 s of
    CPU, one paired run). Only the collections wait: nothing is kept from
    being freed."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def outside(starts: list[int], ranges: list[tuple[int, int]]) -> list[int]:
    """``starts`` (sorted) but those in one of ``ranges`` (import statements,
    sorted; a start in the last range starting at or before it). Most files
    have their imports first: only the starts between the first range's
    start and the last end are looked at."""
    if not ranges:
        return starts
    firsts = [r[0] for r in ranges]
    lo = bisect.bisect_left(starts, firsts[0])
    hi = bisect.bisect_left(starts, max(r[1] for r in ranges))
    kept = []
    for start in starts[lo:hi]:
        k = bisect.bisect_right(firsts, start) - 1
        if start >= ranges[k][1]:
            kept.append(start)
    starts[lo:hi] = kept
    return starts


class _Utf8Slices:
    """A file's bytes, sliced by byte offsets into text (see :func:`text_of`)."""

    __slots__ = ("src",)

    def __init__(self, src: bytes) -> None:
        self.src = src

    def __getitem__(self, span: slice) -> str:
        return self.src[span].decode("utf-8", "replace")


def text_of(src: bytes) -> str | _Utf8Slices:
    """``src`` to slice by byte offsets into text: the decoded text itself
    when it is ASCII (most files: its offsets are the bytes'), else each
    slice decoded as it is cut."""
    return src.decode("ascii") if src.isascii() else _Utf8Slices(src)
