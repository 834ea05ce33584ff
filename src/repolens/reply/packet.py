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

import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from repolens.budget import (
    BLOCK_SEP,
    INDEXED_LINE_CHARS,
    NEXT_FILES,
    beside_its_marker,
    budget_marker,
    did_not_fit,
    header_and_line,
    line_cut_marker,
    more_did_not_fit,
    next_file_line,
    note_lines,
    trailer_reserve,
)
from repolens.chunking import Chunk
from repolens.chunking.labels import join_names, repeated_header_lines, signature_lines, split_names
from repolens.record import Record
from repolens.reply.block import (
    Block,
    LineRanker,
    RenderedBlock,
    best_line,
    body_lines,
    joined,
    render_block,
    shown_numbers,
)
from repolens.reply.files import FileEntry
from repolens.reply.prose import prose_lines
from repolens.search.hits import Hit, matching_lines, own_lines
from repolens.settings import Settings
from repolens.store.file_text import line_cut_by_the_index
from repolens.tokens import TermsIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NO_MATCH = "No matching chunks found."
# Lines shown of a hit found by meaning only (no word of the query in it).
MEANING_LINES = 8
# At most this share of the budget goes to pointers to the next files.
_POINTER_SHARE = 0.15
# The smallest share of the budget a block is given: below this a hit shows
# too little to be worth its header.
_MIN_SHARE = 500


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
        """The rendered blocks as they are (``text`` is the block's text in
        ``self.text``), the hits that did not fit, the notes and the next files."""
        data: dict[str, Any] = {
            "hits": [
                {
                    "path": r.block.path,
                    "start_line": r.block.start_line,
                    "end_line": r.block.end_line,
                    "score": round(r.block.score, 4),
                    "kind": r.block.kind,
                    "qualname": r.block.qualname,
                    "chunk_ids": list(r.block.chunk_ids),
                    "path_only": r.block.path_only,
                    **({"explain": r.block.explain} if r.block.explain else {}),
                    **({"stale": r.block.stale} if r.block.stale else {}),
                    "truncated": r.truncated,
                    "text": r.text,
                }
                for r in self.rendered
            ],
            "omitted": [
                {
                    "path": b.path,
                    "start_line": b.start_line,
                    "end_line": b.end_line,
                    "score": round(b.score, 4),
                }
                for b in self.omitted
            ],
            "notes": list(self.notes),
        }
        if self.pointers:
            data["next_files"] = [e.pointer_json() for e in self.pointers]
        return data


_DEFAULTS = Settings()


class PacketOptions(Record):
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
    keywords: tuple[str, ...] = ()  # text every hit holds (search --keyword): shown first

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


def shown_lines(
    chunk: Chunk, tokens: frozenset[str] | TermsIn, context: int, keywords: Sequence[str] = ()
) -> dict[int, str]:
    """Lines of the chunk that match the query (:func:`~repolens.search.hits.matching_lines`)
    or hold one of ``keywords`` (the text ``search --keyword`` required of it),
    plus ``context`` around.

    Empty when no line matches (the chunk matched through its path). A
    definition's first line (:func:`head_line`) is always shown with a
    match, so a hit deep in a long function still says which function it is.
    Part 2..n of a split definition repeats the definition's header at the
    top of its text; those lines are not the part's own and are left out
    (the block header names the definition).
    """
    matches = matching_lines(chunk, tokens)
    lines, start = own_lines(chunk), chunk.start_line
    if keywords:
        matches += [start + i for i, line in enumerate(lines) if any(k in line for k in keywords)]
    if not matches:
        return {}
    keep: set[int] = set()
    for n in matches:
        i = n - start
        keep.update(range(max(0, i - context), min(len(lines), i + context + 1)))
    head = head_line(chunk)
    if head:
        keep.add(head - start)
    return {start + i: lines[i] for i in sorted(keep)}


def head_line(chunk: Chunk) -> int:
    """The line that says which definition ``chunk`` is: the first line of
    its signature (below its decorators and doc comment, after a blank line
    packed in front of it), else its first non-blank line. 0 for a chunk that
    is no definition, and for part 2..n of a split one (its first line is
    the middle of a body; the block header names the definition)."""
    if not chunk.qualname or repeated_header_lines(chunk):
        return 0
    lines, start = own_lines(chunk), chunk.start_line
    rows = signature_lines(dict(enumerate(lines, start)), start, chunk.end_line, chunk.signature)
    if rows:
        return rows[0]
    return next((n for n, line in enumerate(lines, start) if line.strip()), start)


def leading_lines(chunk: Chunk, n: int) -> dict[int, str]:
    """The first ``n`` lines of the chunk that are its own (a split part's
    repeated header left out)."""
    return {chunk.start_line + i: line for i, line in enumerate(own_lines(chunk)[:n])}


def chunk_prose(chunk: Chunk) -> set[int]:
    """Line numbers of ``chunk`` that are wholly comment or docstring (a
    split part's repeated header is not among its lines)."""
    return {chunk.start_line + i for i in prose_lines(own_lines(chunk), chunk.language)}


def select_hits(
    hits: Sequence[Hit],
    tokens: frozenset[str] | TermsIn,
    top_k: int,
    context: int,
    keywords: Sequence[str] = (),
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
        lines = shown_lines(h.chunk, tokens, context, keywords)
        if not lines and "dense" in h.legs and "lexical" not in h.legs:
            lines = leading_lines(h.chunk, MEANING_LINES)
        if lines and line_cut_by_the_index(h.chunk):
            n = h.chunk.start_line
            lines = {**lines, n: f"{lines[n]}\n{line_cut_marker(h.chunk.path, n, INDEXED_LINE_CHARS)}"}
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
        head = next((n for n in map(head_line, chunks) if n in merged), 0)
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
                head=head,
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


# -- placing ------------------------------------------------------------------


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
    ranker: LineRanker,
    opts: PacketOptions,
) -> RenderedBlock | None:
    """``block`` rendered in ``room`` chars beside the trailer naming ``rest``
    (see :func:`_trailer_reserves`); the first block takes the most trailer
    that still lets it show its best line, else the most trailer it fits beside."""
    tries = []
    best = best_line(block, ranker)
    for reserve in _trailer_reserves(rest, room, first=first):
        left = room - reserve
        share = max(_MIN_SHARE, (left - len(BLOCK_SEP) * len(rest)) // (len(rest) + 1))
        if not opts.fair_share:
            share = opts.hit_max_chars
        r = render_block(block, left, min(opts.hit_max_chars, share), ranker, opts.context_lines)
        if r is not None and (not first or _shows(r, best)):
            return r
        tries.append(r)
    return next(filter(None, tries), None)


def _shows(r: RenderedBlock, line: int) -> bool:
    """A pointer, or a block that shows source line ``line``."""
    return r.block.path_only or line in shown_numbers(r.text)


def render_packet(
    query: str,
    hits: Sequence[Hit],
    tokens: Mapping[str, float] | frozenset[str],
    opts: PacketOptions,
    found_in: TermsIn | None = None,
) -> Packet:
    """The packet for ranked ``hits``; ``tokens`` are the query's tokens,
    optionally with weights (a line's relevance is the sum of its terms');
    ``found_in`` finds them in text (one :class:`~repolens.tokens.TermsIn`
    of them for the whole reply, which the pointers' evidence may share).

    Each block gets a fair share of what is left of the budget (what is left
    divided by the blocks still to come, at most ``hit_max_chars``), so the
    top hits all fit; a block that needs less leaves its share to the next.
    The best hit's best line (:func:`best_line`) and its header fit at every
    budget: when they do not beside the pointers to the next files, the
    pointers go; when not beside the notes either, the notes that do not fit
    go too (the JSON form keeps them all), and the hit shows that line alone.
    """
    weights: Mapping[str, float] = tokens if isinstance(tokens, Mapping) else dict.fromkeys(tokens, 1.0)
    ranker = LineRanker(weights, found_in, tuple(opts.keywords))
    notes = tuple(opts.notes)
    found = select_hits(hits, ranker.found_in, opts.top_k, opts.context_lines, opts.keywords)
    blocks = _blocks(found, opts.explain)
    if not blocks:
        note_text = note_lines(notes)
        text = NO_MATCH if not note_text else f"{note_text}{BLOCK_SEP}{NO_MATCH}"
        return Packet(query, [], [], text[: opts.max_chars], notes)
    named = {b.path for b in blocks}
    others = (e for e in opts.files(named) if e.path not in named)
    wanted = list(itertools.islice(others, max(0, opts.cite_files - len(named))))
    best = best_line(blocks[0], ranker)
    for entries in (wanted, []) if wanted else ([],):
        packet = _assemble(query, blocks, ranker, opts, notes, entries)
        if packet.rendered and _shows(packet.rendered[0], best):
            return packet
    return _bare(query, blocks, best, notes, opts.max_chars)


def _assemble(
    query: str,
    blocks: Sequence[Block],
    ranker: LineRanker,
    opts: PacketOptions,
    notes: tuple[str, ...],
    entries: Sequence[FileEntry],
) -> Packet:
    """The notes, the blocks that fit, the trailer naming the others, and the
    pointers to ``entries`` (what fits of them)."""
    note_text = note_lines(notes)
    budget = opts.max_chars - (len(note_text) + len(BLOCK_SEP) if note_text else 0)
    pointers, pointer_text = _pointers(entries, int(budget * _POINTER_SHARE))
    if pointer_text:
        budget -= len(pointer_text) + len(BLOCK_SEP)

    parts: list[str] = []
    rendered: list[RenderedBlock] = []
    used = 0
    omitted: list[Block] = []
    for i, block in enumerate(blocks):
        sep = len(BLOCK_SEP) if parts else 0
        rest = blocks[i + 1 :]
        r = _place(block, rest, budget - used - sep, not rendered, ranker, opts)
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


def _bare(query: str, blocks: Sequence[Block], best: int, notes: tuple[str, ...], max_chars: int) -> Packet:
    """The smallest packet: the best hit's header and its best line (the name
    left out of the header, then the line cut, when even they do not fit),
    then as far as they fit the budget marker naming the read of the whole
    span, the count of the other hits, and the notes."""
    block = blocks[0]
    if block.path_only:
        text = block.pointer()[:max_chars]
        pointer = RenderedBlock(block, text, True, budget_cut=True)
        return Packet(query, [pointer], list(blocks[1:]), text, notes)
    code, _, cut = dict(block.lines).get(best, "").partition("\n")  # a line the index cut: its marker
    line = f"{best}: {code}"
    header, bare = block.header(), block._replace(qualname="").header()
    # the line before the name: the span still cites it; the marker of a line the index cut
    # stays whole after it, the line cut shorter, while a few of its characters fit
    beside = beside_its_marker(line, cut, max_chars - len(bare) - 1, best) if cut else None
    text = header_and_line(header, bare, beside or line, best, max_chars)
    full = len(joined(block.header(), body_lines(block)))
    marker = budget_marker(block.path, block.start_line, block.end_line, full - len(text))
    if len(text) + 1 + len(marker) <= max_chars:
        text = f"{text}\n{marker}"
    parts = [text]
    count = more_did_not_fit("hit", len(blocks) - 1) if len(blocks) > 1 else ""
    if count and len(text) + len(BLOCK_SEP) + len(count) <= max_chars:
        parts.append(count)
    body = BLOCK_SEP.join(parts)
    kept = list(notes)
    while kept and len(note_lines(kept)) + len(BLOCK_SEP) + len(body) > max_chars:
        kept.pop()
    if kept:
        body = f"{note_lines(kept)}{BLOCK_SEP}{body}"
    rendered = RenderedBlock(block, text, True, budget_cut=True)
    return Packet(query, [rendered], list(blocks[1:]), body, notes)


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
