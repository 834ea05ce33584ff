"""Evidence packets: the reply an agent reads.

A packet shows, for each of the top hits, the path, the line span and score,
and only the lines that contain a query term plus a little context. Every
stretch of the span that is not shown is named by an omission marker, and
every marker that cuts text names the exact ``read_snippet`` call that
expands it. The whole reply never exceeds ``max_chars``.

Format contract (tests assert it)::

    src/auth.py:10-42 function Store.save (score 12.30)
    ... (lines 10-11 omitted)
    12: def save(self, session):
    ...
    ... (truncated at 4000 chars; use read_snippet src/auth.py 30 42 to expand)

    src/util.py:1-80 (path match only; use read_snippet src/util.py 1 80)

    ... 2 more hits did not fit: src/a.py:1-40 (score 3.10), src/b.py:7-9 (score 2.00)
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from repolens.chunk import Chunk
from repolens.chunk.labels import join_names, repeated_header_lines, split_names
from repolens.reply.budget import (
    BLOCK_SEP,
    NEXT_FILES,
    budget_marker,
    did_not_fit,
    more_did_not_fit,
    next_file_line,
    omitted_marker,
    trailer_reserve,
    truncated_marker,
)
from repolens.reply.files import FileEntry
from repolens.reply.json import packet_json
from repolens.reply.prose import prose_lines
from repolens.search.hits import Hit, matching_lines, own_lines
from repolens.settings import Settings
from repolens.tokens import tokens_by_line

NO_MATCH = "No matching chunks found."
# Lines shown of a hit found by meaning only (no word of the query in it).
MEANING_LINES = 8
# At most this share of the budget goes to pointers to the next files.
_POINTER_SHARE = 0.15
# The smallest share of the budget a block is given: below this a hit shows
# too little to be worth its header.
_MIN_SHARE = 500
_NAME_MAX = 80


class Block(NamedTuple):
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


class RenderedBlock(NamedTuple):
    """A block as the packet shows it, and whether the budget cut it."""

    block: Block
    text: str
    truncated: bool  # cut by the per-hit cap or by the packet budget
    budget_cut: bool = False  # cut by the packet budget: later blocks cannot follow


@dataclass(frozen=True)
class Packet:
    """An evidence packet: its text, and the blocks shown and left out."""

    query: str
    rendered: list[RenderedBlock]
    omitted: list[Block]
    text: str
    notes: tuple[str, ...] = ()
    pointers: tuple[FileEntry, ...] = ()  # the next files, named after the hits

    def to_json(self) -> dict[str, Any]:
        """See :func:`repolens.reply.json.packet_json`."""
        return packet_json(self)


_DEFAULTS = Settings()


class PacketOptions(NamedTuple):
    """How a packet is rendered; the defaults are :class:`Settings`' own."""

    top_k: int = _DEFAULTS.top_k
    max_chars: int = _DEFAULTS.max_chars
    hit_max_chars: int = _DEFAULTS.hit_max_chars
    context_lines: int = _DEFAULTS.context_lines
    fair_share: bool = _DEFAULTS.fair_share
    explain: bool = False
    notes: Sequence[str] = ()
    # the next best files after the hits' own, as one-line pointers, up to
    # this many files named in all (0: none); taken in order from
    # ``files(paths the hits name)``, lazily: an entry's evidence costs a
    # tokenization, so entries after those taken are never computed
    cite_files: int = _DEFAULTS.cite_files
    files: Callable[[Collection[str]], Iterable[FileEntry]] = lambda named: ()

    @classmethod
    def from_settings(cls, settings: Settings, **given: Any) -> PacketOptions:
        """The options ``settings`` ask for (a hit never gets more than the
        whole budget), with ``given`` on top."""
        values: dict[str, Any] = {
            "top_k": settings.top_k,
            "max_chars": settings.max_chars,
            "hit_max_chars": min(settings.hit_max_chars, settings.max_chars),
            "context_lines": settings.context_lines,
            "fair_share": settings.fair_share,
            "cite_files": settings.cite_files,
        }
        return cls(**{**values, **given})


# -- selecting and trimming -------------------------------------------------


def shown_lines(chunk: Chunk, tokens: frozenset[str], context: int) -> dict[int, str]:
    """Lines of the chunk that match the query (:func:`~repolens.search.hits.matching_lines`),
    plus ``context`` around.

    Empty when no line matches (the chunk matched through its path). A
    definition's first line (its signature) is always shown with a match,
    so a hit deep in a long function still says which function it is. Part
    2..n of a split definition repeats the definition's header at the top of
    its text; those lines are not the part's own and are left out (the block
    header names the definition).
    """
    matches = matching_lines(chunk, tokens)
    if not matches:
        return {}
    lines, start = own_lines(chunk), chunk.start_line
    keep: set[int] = set()
    for n in matches:
        i = n - start
        keep.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    if chunk.qualname and not repeated_header_lines(chunk):
        keep.add(0)
    return {start + i: lines[i] for i in sorted(keep)}


def leading_lines(chunk: Chunk, n: int) -> dict[int, str]:
    """The first ``n`` lines of the chunk that are its own (a split part's
    repeated header left out)."""
    return {chunk.start_line + i: line for i, line in enumerate(own_lines(chunk)[:n])}


def chunk_prose(chunk: Chunk) -> set[int]:
    """Line numbers of ``chunk`` that are wholly comment or docstring (a
    split part's repeated header is not among its lines)."""
    return {chunk.start_line + i for i in prose_lines(own_lines(chunk), chunk.language)}


def select_hits(
    hits: Sequence[Hit], tokens: frozenset[str], top_k: int, context: int
) -> list[tuple[Hit, dict[int, str]]]:
    """The first ``top_k`` hits in rank order, each with its shown lines.

    A hit with no matching line matched through its path; it is kept (as a
    pointer, with no lines) only when no text hit of the same file was seen.
    A hit only the dense leg found matched by meaning, not words: it shows
    its first lines (the signature and doc comment say what it is).
    Lines are computed lazily, in rank order, so a long candidate list costs
    nothing past the hits that are shown.
    """
    out: list[tuple[Hit, dict[int, str]]] = []
    text_paths: set[str] = set()
    for h in hits:
        lines = shown_lines(h.chunk, tokens, context)
        if not lines and "dense" in h.legs and "lexical" not in h.legs:
            lines = leading_lines(h.chunk, MEANING_LINES)
        if lines:
            text_paths.add(h.chunk.path)
        elif h.chunk.path in text_paths:
            continue
        out.append((h, lines))
        if len(out) >= top_k:
            break
    return [(h, lines) for h, lines in out if lines or h.chunk.path not in text_paths]


def _blocks(selected: Sequence[tuple[Hit, dict[int, str]]], explain: bool = False) -> list[Block]:
    """Merge hits of one file whose shown ranges overlap or touch (or whose
    spans overlap), so no line is shown twice."""
    groups: list[list[tuple[Hit, dict[int, str]]]] = []
    for item in selected:
        hit, lines = item
        for group in groups:
            lead_lines = group[0][1]
            if not lines or not lead_lines or group[0][0].chunk.path != hit.chunk.path:
                continue
            if any(_touches(hit, lines, other, olines) for other, olines in group):
                group.append(item)
                break
        else:
            groups.append([item])
    blocks = []
    for group in groups:
        best = group[0][0]  # hits arrive in rank order
        merged: dict[int, str] = {}
        for _, lines in group:
            merged.update(lines)
        chunks = [h.chunk for h, _ in group]
        kind, qualname = _label(chunks)
        blocks.append(
            Block(
                path=best.chunk.path,
                start_line=min(c.start_line for c in chunks),
                end_line=max(c.end_line for c in chunks),
                score=best.score,
                kind=kind,
                qualname=qualname,
                chunk_ids=tuple(c.id for c in chunks),
                lines=tuple(sorted(merged.items())),
                path_only=not merged,
                prose=frozenset(n for c in chunks for n in chunk_prose(c)),
                explain=best.explain() if explain else "",
                stale=next((h.stale for h, _ in group if h.stale), ""),
            )
        )
    return blocks


def _label(chunks: Sequence[Chunk]) -> tuple[str, str]:
    """Kind and name of a block of ``chunks`` (best first). The parts of one
    definition split for size and merged back are that definition again; a
    block of several definitions is ``merged`` and names them, best first."""
    if len({(c.kind, c.qualname) for c in chunks}) == 1:
        return chunks[0].kind, chunks[0].qualname
    names: list[str] = []
    more = 0
    for c in chunks:  # a packed chunk's name is already a list: a, b (+2 more)
        shown, extra = split_names(c.qualname)
        names += shown
        more += extra
    return "merged", join_names(list(dict.fromkeys(names)), more)


def _touches(a: Hit, alines: dict[int, str], b: Hit, blines: dict[int, str]) -> bool:
    ca, cb = a.chunk, b.chunk
    if ca.start_line <= cb.end_line and cb.start_line <= ca.end_line:
        return True
    if not alines or not blines:
        return False
    return min(alines) <= max(blines) + 1 and min(blines) <= max(alines) + 1


# -- rendering ---------------------------------------------------------------


def _pieces(block: Block, numbers: Iterable[int]) -> Iterator[int | tuple[int, int]]:
    """The body of ``block`` showing the lines ``numbers`` (ascending): each
    shown line's number, and ``(a, b)`` for every stretch of the span left
    out (before a line, or after the last). :func:`_body` writes it;
    :class:`_BodySize` counts the same pieces."""
    expect = block.start_line
    for n in numbers:
        if n > expect:
            yield (expect, n - 1)
        yield n
        expect = n + 1
    if expect <= block.end_line:
        yield (expect, block.end_line)


def _body(block: Block, keep: set[int] | None = None) -> list[str]:
    """Body lines (``N: text``) for the shown lines in ``keep`` (all when
    None), with an omission marker for every stretch of the span left out."""
    texts = dict(block.lines)
    numbers = [n for n, _ in block.lines if keep is None or n in keep]
    return [
        omitted_marker(*piece) if isinstance(piece, tuple) else f"{piece}: {texts[piece]}"
        for piece in _pieces(block, numbers)
    ]


def _joined(header: str, body: list[str], tail: str = "") -> str:
    return "\n".join([header, *body, tail] if tail else [header, *body])


class _BodySize:
    """``len`` of what :func:`_body` gives for a growing ``keep``, each line
    counted with the newline that joins it, without building the text:
    :func:`_fit` asks for every line it tries to add, and a long chunk has
    hundreds, so a trial costs what it changes (the stretches it splits),
    not a walk of the whole body. ``sizes``: the length of each line as
    :func:`_body` writes it. The pieces are :func:`_pieces`'s: shown lines
    and the omitted stretches between them."""

    def __init__(self, block: Block, sizes: Mapping[int, int]) -> None:
        self.start, self.end, self.sizes = block.start_line, block.end_line, sizes
        self.keep: set[int] = set()
        self._ascending: list[int] = []  # keep, sorted
        self.size = self._gap(self.start, self.end)

    @staticmethod
    def _gap(a: int, b: int) -> int:
        return 1 + len(omitted_marker(a, b)) if a <= b else 0

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


def _fit(block: Block, cap: int, weights: Mapping[str, float], context: int) -> tuple[str, bool]:
    """The block within ``cap`` chars, keeping its most relevant lines.

    When everything does not fit, matching lines are taken best first (code
    before comments and docstrings, which say in words what the code does
    and so hold a question's words more often; then by the summed weight of
    the distinct query terms on them), each with its context (for a code
    line, the code around it), plus the signature line of a definition;
    everything else of the
    span is marked omitted, and a last marker names the read for the whole
    span. Returns (text, was_cut); text is longer than ``cap`` only when not
    even the header and the marker fit (the caller checks).
    """
    header = block.header()
    full = _joined(header, _body(block))
    if len(full) <= cap:
        return full, False
    tail = truncated_marker(block.path, block.start_line, block.end_line, cap)
    room = cap - len(header) - 1 - len(tail)  # what the body may take beside the header and the tail
    sizes = {n: len(f"{n}: {text}") for n, text in block.lines}
    numbers = [n for n, _ in block.lines]
    position = {n: i for i, n in enumerate(numbers)}
    scored = []
    for n, found in zip(numbers, tokens_by_line([text for _, text in block.lines], weights), strict=True):
        # Summed in a fixed order: a set's order follows the hash seed, and float sums
        # in another order can break a tie differently from one run to the next. (A
        # term without a weight added 0.0 when it was summed too: the same sum.)
        score = sum(weights[t] for t in dict.fromkeys(found))
        if score > 0:
            scored.append((n in block.prose, -score, n))
    body = _BodySize(block, sizes)
    if block.qualname and numbers and numbers[0] == block.start_line:
        body.add([block.start_line])  # the signature says what the block is
    for prose, _, n in sorted(scored):
        i = position[n]
        # the context of a code line is code: a docstring next to it is not
        group = {m for m in numbers[max(0, i - context) : i + context + 1] if prose or m not in block.prose}
        if body.with_lines(group) <= room:
            body.add(group)
        elif n not in body.keep and body.with_lines([n]) <= room:
            body.add([n])
    return _joined(header, _body(block, body.keep), tail), True


def render_block(
    block: Block, limit: int, cap: int, weights: Mapping[str, float], context: int
) -> RenderedBlock | None:
    """Render one block within its share ``cap`` and the ``limit`` left in
    the packet; None when not even its header and a marker fit."""
    if block.path_only:
        text = block.pointer()
        return RenderedBlock(block, text, False) if len(text) <= limit else None
    if cap <= limit:
        text, cut = _fit(block, cap, weights, context)
        if len(text) <= limit:
            return RenderedBlock(block, text, cut)
    # The packet's budget runs out inside this block: cut at a line boundary.
    full = _joined(block.header(), _body(block))
    kept = [block.header()]
    size = len(kept[0])
    nxt = block.start_line
    for line in _body(block):
        n = _line_number(line)
        if n is not None:
            nxt = n
        tail = budget_marker(block.path, nxt, block.end_line, len(full) - size)
        if size + 1 + len(line) + 1 + len(tail) > limit:
            break
        kept.append(line)
        size += 1 + len(line)
        nxt = n + 1 if n is not None else nxt
    tail = budget_marker(block.path, min(nxt, block.end_line), block.end_line, len(full) - size)
    if len(kept) == 1 and size + 1 + len(tail) > limit:
        return None
    kept.append(tail)
    return RenderedBlock(block, "\n".join(kept), True, budget_cut=True)


def _line_number(line: str) -> int | None:
    head, sep, _ = line.partition(": ")
    return int(head) if sep and head.isdigit() else None


def _trailer(blocks: Sequence[Block], limit: int) -> str:
    return did_not_fit("hit", [b.ref() for b in blocks], limit)


def _trailer_reserves(rest: Sequence[Block], room: int, *, first: bool) -> list[int]:
    """Room to keep for the trailer that names the blocks after this one,
    most first. It is capped so that a long tail of hits cannot starve the
    first ones; and the best hit comes before the list of the others: for
    it, the trailer may shrink to a count, or go, when that lets it show
    lines."""
    if not rest:
        return [0]
    reserves = [trailer_reserve("hit", [b.ref() for b in rest], room)]
    if first:
        reserves += [len(BLOCK_SEP) + len(more_did_not_fit("hit", len(rest))), 0]
    return sorted(set(reserves), reverse=True)


def _place(
    block: Block,
    rest: Sequence[Block],
    room: int,
    first: bool,
    weights: Mapping[str, float],
    opts: PacketOptions,
) -> RenderedBlock | None:
    """``block`` rendered in ``room`` chars beside the trailer naming ``rest``
    (see :func:`_trailer_reserves`); the first block takes the most trailer
    that still lets it show lines, else the most trailer it fits beside."""
    tries = []
    for reserve in _trailer_reserves(rest, room, first=first):
        left = room - reserve
        share = max(_MIN_SHARE, (left - len(BLOCK_SEP) * len(rest)) // (len(rest) + 1))
        if not opts.fair_share:
            share = opts.hit_max_chars
        r = render_block(block, left, min(opts.hit_max_chars, share), weights, opts.context_lines)
        if r is not None and (not first or _shows_lines(r)):
            return r
        tries.append(r)
    return next(filter(None, tries), None)


def _shows_lines(r: RenderedBlock) -> bool:
    """A pointer, or a block that shows at least one of its lines."""
    return r.block.path_only or any(_line_number(line) is not None for line in r.text.split("\n")[1:])


def render_packet(
    query: str, hits: Sequence[Hit], tokens: Mapping[str, float] | frozenset[str], opts: PacketOptions
) -> Packet:
    """The packet for ranked ``hits``; ``tokens`` are the query's tokens,
    optionally with weights (a line's relevance is the sum of its terms').

    Each block gets a fair share of what is left of the budget (what is left
    divided by the blocks still to come, at most ``hit_max_chars``), so the
    top hits all fit; a block that needs less leaves its share to the next.
    """
    weights: Mapping[str, float] = tokens if isinstance(tokens, Mapping) else dict.fromkeys(tokens, 1.0)
    token_set = frozenset(weights)
    notes = tuple(opts.notes)
    note_text = "\n".join(f"note: {n}" for n in notes)
    budget = opts.max_chars - (len(note_text) + len(BLOCK_SEP) if note_text else 0)
    blocks = _blocks(select_hits(hits, token_set, opts.top_k, opts.context_lines), opts.explain)
    if not blocks:
        text = NO_MATCH if not note_text else f"{note_text}{BLOCK_SEP}{NO_MATCH}"
        return Packet(query, [], [], text[: opts.max_chars], notes)
    named = {b.path for b in blocks}
    others = (e for e in opts.files(named) if e.path not in named)
    wanted = list(itertools.islice(others, max(0, opts.cite_files - len(named))))
    pointers, pointer_text = _pointers(wanted, int(budget * _POINTER_SHARE))
    if pointer_text:
        budget -= len(pointer_text) + len(BLOCK_SEP)

    parts: list[str] = []
    rendered: list[RenderedBlock] = []
    used = 0
    omitted: list[Block] = []
    for i, block in enumerate(blocks):
        sep = len(BLOCK_SEP) if parts else 0
        rest = blocks[i + 1 :]
        r = _place(block, rest, budget - used - sep, not rendered, weights, opts)
        if r is None:
            omitted = list(blocks[i:])
            break
        parts.append(r.text)
        rendered.append(r)
        used += sep + len(r.text)
        if r.budget_cut:
            omitted = list(rest)
            break
    trailer = _trailer(omitted, budget - used - len(BLOCK_SEP))
    if trailer:
        parts.append(trailer)
    if pointer_text:
        parts.append(pointer_text)
    text = BLOCK_SEP.join(parts)
    if note_text:
        text = f"{note_text}{BLOCK_SEP}{text}"
    return Packet(query, rendered, omitted, text, notes, pointers)


def _pointers(entries: Sequence[FileEntry], limit: int) -> tuple[tuple[FileEntry, ...], str]:
    """The next best files, one line each (where to read, and why), as many
    as fit in ``limit`` chars, best first."""
    lines = [NEXT_FILES]
    shown: list[FileEntry] = []
    size = len(NEXT_FILES)
    for e in entries:
        line = next_file_line(e.path, e.best[0], e.best[1], e.reason())
        if size + 1 + len(line) > limit:
            break
        lines.append(line)
        shown.append(e)
        size += 1 + len(line)
    return (tuple(shown), "\n".join(lines)) if shown else ((), "")
