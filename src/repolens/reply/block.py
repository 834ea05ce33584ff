"""One hit of a packet, rendered within its share of the budget.

A :class:`Block` is one hit (or several merged chunks of one file) with the
lines it may show; :func:`render_block` writes it as the packet shows it
(format: :mod:`repolens.reply.packet`), keeping its most relevant lines when
it does not fit whole: the best line first (:func:`best_line`), then the
line naming the definition, then the other matching lines with their
context, every stretch left out named by a marker.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping

from repolens.budget import budget_marker, omitted_marker, truncated_marker
from repolens.record import Record
from repolens.tokens import TermsIn

# A name over this many characters (a deep markdown section path) is cut in
# the header, so that the header leaves room for lines at small budgets.
_NAME_MAX = 80


class Block(Record):
    """One rendered hit (possibly several merged chunks of one file)."""

    path: str
    start_line: int
    end_line: int
    score: float
    kind: str
    qualname: str
    chunk_ids: tuple[str, ...]
    lines: tuple[tuple[int, str], ...]  # shown lines, ascending
    path_only: bool = False
    prose: frozenset[int] = frozenset()  # line numbers wholly comment or docstring
    explain: str = ""  # set when the packet explains its ranking
    stale: str = ""  # set when the file changed since indexing and lines may not hold
    head: int = 0  # the line naming the definition (packet.head_line); 0: none

    def header(self) -> str:
        """``path:start-end kind name (score S)``; a name over ``_NAME_MAX``
        characters (a deep markdown section path) is cut, so that the header
        leaves room for lines at small budgets (the JSON form keeps it whole)."""
        name = self.qualname
        if len(name) > _NAME_MAX:
            name = name[: _NAME_MAX - 3] + "..."
        label = f" {self.kind} {name}" if name else ""
        head = f"{self.path}:{self.start_line}-{self.end_line}{label} (score {self.score:.2f})"
        if self.stale:
            head += f" ({self.stale})"

        return f"{head}\n{self.explain}" if self.explain else head

    def pointer(self) -> str:
        return (
            f"{self.path}:{self.start_line}-{self.end_line} (path match only; use read_snippet "
            f"{self.path} {self.start_line} {self.end_line})"
        )

    def ref(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line} (score {self.score:.2f})"


class RenderedBlock(Record):
    """A block as the packet shows it, and whether the budget cut it."""

    block: Block
    text: str
    truncated: bool  # cut by the per-hit cap or by the packet budget
    budget_cut: bool = False  # cut by the packet budget: later blocks cannot follow


def _pieces(block: Block, numbers: Iterable[int]) -> Iterator[int | tuple[int, int]]:
    """The body of ``block`` showing the lines ``numbers`` (ascending): each
    shown line's number, and ``(a, b)`` for every stretch of the span left
    out (before a line, or after the last). :func:`body_lines` writes it;
    :class:`BodySize` counts the same pieces."""
    expect = block.start_line
    for n in numbers:
        if n > expect:
            yield (expect, n - 1)
        yield n
        expect = n + 1
    if expect <= block.end_line:
        yield (expect, block.end_line)


def body_lines(block: Block, keep: set[int] | None = None) -> list[str]:
    """Body lines (``N: text``) for the shown lines in ``keep`` (all when
    None), with an omission marker for every stretch of the span left out."""
    texts = dict(block.lines)
    numbers = [n for n, _ in block.lines if keep is None or n in keep]
    return [
        omitted_marker(*piece) if isinstance(piece, tuple) else f"{piece}: {texts[piece]}"
        for piece in _pieces(block, numbers)
    ]


def joined(header: str, body: list[str], tail: str = "") -> str:
    return "\n".join([header, *body, tail] if tail else [header, *body])


class BodySize:
    """``len`` of what :func:`body_lines` gives for a growing ``keep``, each line
    counted with the newline that joins it, without building the text:
    :func:`fit_block` asks for every line it tries to add, and a long chunk has
    hundreds, so a trial costs what it changes (the stretches it splits),
    not a walk of the whole body. ``sizes``: the length of each line as
    :func:`body_lines` writes it. The pieces are :func:`_pieces`'s: shown lines
    and the omitted stretches between them; with ``open_end`` the stretch
    that ends the span is not counted (the budget marker names it instead)."""

    def __init__(self, block: Block, sizes: Mapping[int, int], *, open_end: bool = False) -> None:
        self.start, self.end, self.sizes = block.start_line, block.end_line, sizes
        self.open_end = open_end
        self.keep: set[int] = set()
        self._ascending: list[int] = []  # keep, sorted
        self.size = self._gap(self.start, self.end)

    def _gap(self, a: int, b: int) -> int:
        if a > b or (self.open_end and b == self.end):
            return 0
        return 1 + len(omitted_marker(a, b))

    def with_lines(self, new: Iterable[int]) -> int:
        """The size were the lines ``new`` kept too."""
        size = self.size
        kept = self._ascending
        added = sorted(set(new) - self.keep)
        i = 0
        while i < len(added):
            at = bisect.bisect_left(kept, added[i])  # the stretch between kept[at - 1] and kept[at]
            lo = kept[at - 1] + 1 if at else self.start
            hi = kept[at] - 1 if at < len(kept) else self.end
            size -= self._gap(lo, hi)
            expect = lo
            while i < len(added) and added[i] <= hi:
                n = added[i]
                size += self._gap(expect, n - 1) + 1 + self.sizes[n]
                expect = n + 1
                i += 1
            size += self._gap(expect, hi)
        return size

    def add(self, new: Iterable[int]) -> None:
        new = set(new)
        self.size = self.with_lines(new)
        self.keep |= new
        self._ascending = sorted(self.keep)


class LineRanker:
    """A reply's ranking of its blocks' matching lines, most relevant first:
    code before comments and docstrings (which say in words what the code
    does, and so hold a question's words more often), then by the summed
    weight of the distinct query terms on them. ``weights`` are the query's
    terms; ``found_in`` finds them in lines (one per reply: each distinct
    piece of code is split once for all its hits). A block's ranking is made
    once, however often it is placed and fitted."""

    __slots__ = ("_ranked", "found_in", "keywords", "weights")

    def __init__(
        self, weights: Mapping[str, float], found_in: TermsIn | None = None, keywords: tuple[str, ...] = ()
    ) -> None:
        self.weights = weights
        self.found_in = found_in if found_in is not None else TermsIn(frozenset(weights))
        self.keywords = keywords  # text every hit holds (search --keyword): its lines first
        self._ranked: dict[int, tuple[Block, list[int]]] = {}  # by id(block), the block kept alive

    def ranked(self, block: Block) -> list[int]:
        """``block``'s matching lines, most relevant first."""
        known = self._ranked.get(id(block))
        if known is not None and known[0] is block:
            return known[1]
        weights = self.weights
        scored = []
        texts = [text for _, text in block.lines]
        keywords = self.keywords
        for (n, text), found in zip(block.lines, self.found_in.terms_by_line(texts), strict=True):
            # Summed in a fixed order: a set's order follows the hash seed, and float sums
            # in another order can break a tie differently from one run to the next. (A
            # term without a weight added 0.0 when it was summed too: the same sum.)
            score = sum(weights[t] for t in dict.fromkeys(found))
            held = bool(keywords) and any(k in text for k in keywords)
            if score > 0 or held:
                scored.append((not held, n in block.prose, -score, n))
        ranked = [n for *_, n in sorted(scored)]
        self._ranked[id(block)] = (block, ranked)
        return ranked


def best_line(block: Block, ranker: LineRanker) -> int:
    """The line a block must show if it shows one: its most relevant
    matching line, else (a hit found by meaning) its first shown line; 0
    for a pointer."""
    ranked = ranker.ranked(block)
    return ranked[0] if ranked else block.lines[0][0] if block.lines else 0


def fit_block(
    block: Block, cap: int, ranker: LineRanker, context: int, *, budget: bool = False
) -> tuple[str, bool]:
    """The block within ``cap`` chars, keeping its most relevant lines.

    When everything does not fit, the best line (:func:`best_line`) comes
    first, then the line naming the definition (:attr:`Block.head`), then
    matching lines best first (:meth:`LineRanker.ranked`), each with its context
    (for a code line, the code around it); everything else of the span is
    marked omitted, and a last marker names the read for the whole span: the
    per-hit cap's, or with ``budget`` the packet budget's, which names the
    read from the first line after the last one shown when the lines left
    out end the span. Returns (text, was_cut); text is longer than ``cap``
    only when not even the header and the marker fit (the caller checks).
    """
    header = block.header()
    full = joined(header, body_lines(block))
    if len(full) <= cap:
        return full, False
    path, start, end = block.path, block.start_line, block.end_line
    # the marker at its longest (the most digits) sets the room for the body
    longest = budget_marker(path, end, end, len(full)) if budget else truncated_marker(path, start, end, cap)
    room = cap - len(header) - 1 - len(longest)
    sizes = {n: len(f"{n}: {text}") for n, text in block.lines}
    numbers = [n for n, _ in block.lines]
    position = {n: i for i, n in enumerate(numbers)}
    ranked = ranker.ranked(block)
    body = BodySize(block, sizes, open_end=budget)
    best = ranked[0] if ranked else numbers[0]  # as best_line, from the ranking made here
    for first in (best, block.head):  # what the hit is, then where
        if first in position and body.with_lines([first]) <= room:
            body.add([first])
    for n in ranked:
        i = position[n]
        prose = n in block.prose
        # the context of a code line is code: a docstring next to it is not
        group = {m for m in numbers[max(0, i - context) : i + context + 1] if prose or m not in block.prose}
        if body.with_lines(group) <= room:
            body.add(group)
        elif n not in body.keep and body.with_lines([n]) <= room:
            body.add([n])
    lines = body_lines(block, body.keep)
    if not budget:
        return joined(header, lines, truncated_marker(path, start, end, cap)), True
    last = max(body.keep, default=start - 1)
    if last < end:  # the stretch after the last line shown is the budget marker's
        lines.pop()
    shown = joined(header, lines)
    read_from = last + 1 if last < end else start
    return f"{shown}\n{budget_marker(path, read_from, end, len(full) - len(shown))}", True


def render_block(
    block: Block, limit: int, cap: int, ranker: LineRanker, context: int
) -> RenderedBlock | None:
    """Render one block within its share ``cap`` and the ``limit`` left in
    the packet; None when it cannot show one of its lines. When the packet's
    budget runs out inside it, it keeps its most relevant lines that fit and
    ends with the budget marker (``budget_cut``: no block may follow)."""
    if block.path_only:
        text = block.pointer()
        return RenderedBlock(block, text, False) if len(text) <= limit else None
    if cap <= limit:
        text, cut = fit_block(block, cap, ranker, context)
        shown = shown_numbers(text) if len(text) <= limit else set()
        best = best_line(block, ranker)
        if best not in shown:
            # The cap cannot show the best line (one nearly as long as the cap): the cap that
            # just shows it, not the packet's budget, which would end the packet at this hit.
            wider = _cap_for_best_line(block, ranker, best)
            if cap < wider <= limit:
                text_wider, cut_wider = fit_block(block, wider, ranker, context)
                if len(text_wider) <= limit and best in shown_numbers(text_wider):
                    return RenderedBlock(block, text_wider, cut_wider)
        if shown:
            return RenderedBlock(block, text, cut)
    text, cut = fit_block(block, limit, ranker, context, budget=True)
    if len(text) > limit or not shown_numbers(text):
        return None
    return RenderedBlock(block, text, cut, budget_cut=cut)


def _cap_for_best_line(block: Block, ranker: LineRanker, best: int) -> int:
    """The least cap :func:`fit_block` shows ``block``'s ``best`` line within:
    its header, the line, the stretches left out around it and the marker."""
    text = dict(block.lines).get(best, "")
    around = 2 * (1 + len(omitted_marker(block.start_line, block.end_line)))
    marker = truncated_marker(block.path, block.start_line, block.end_line, 10**9)
    return len(block.header()) + 1 + len(f"{best}: {text}") + around + 1 + len(marker)


def shown_numbers(text: str) -> set[int]:
    """The source lines a rendered block shows (its header and markers are none)."""
    return {n for line in text.split("\n")[1:] if (n := _line_number(line)) is not None}


def _line_number(line: str) -> int | None:
    head, sep, _ = line.partition(": ")
    return int(head) if sep and head.isdigit() else None
