"""Focused context: the whole definitions around the matches of a query, rendered.

Backs ``repolens focus QUERY [--path P ...]`` and the MCP tool
``get_focused_context``. Where an evidence packet shows the matching lines of
the top chunks, this shows, for each match, its innermost enclosing
definition (function, method, class, section...) from the index's symbol
table, whole when the budget allows. Matches in code outside any definition
(imports, top-level statements, files chunked by line windows) show the
chunk they are in.

Finding the definitions is :mod:`repolens.search.focus` (a *match* is a
line of a retrieved chunk that matches the query, the same test as packets;
the chunks are a search's, ranked as ``search`` ranks them, with the
repository's settings); this module chooses among them under the budgets
and renders them.

Format contract (tests assert it)::

    src/auth/session.py:14-15 method SessionStore.save (score 4.10) matched: 14-15
    14:     def save(self, session_id, data):
    15:         self._sessions[session_id] = (time.time(), data)

    src/big.py:1-204 function big_function (score 2.00) matched: 150
    ... (line 1 omitted)
    2: def big_function(x):
    ... (lines 3-147 omitted)
    148:     total += x * 145
    ...
    ... (budget: 5230 chars omitted; use read_snippet src/big.py 1 204 to expand)

    ... 2 more blocks did not fit: src/a.py:1-40 function f, src/b.py:7-9 block
    ... 5 more blocks past max_blocks=6: src/c.py:3-9 function g, and 4 more

Matched lines are flagged in the block header (``matched:``, runs of lines
as ``A-B``), so every body line keeps the packets' ``N: text`` form. A line
the index holds only the start of (over ``INDEXED_LINE_CHARS``: data, a
minified bundle) is followed, as in a packet, by the marker naming the read
of the whole line; where the line must be cut to fit, it is cut, the marker
kept whole.

Budgets: at most ``max_files`` files, ``blocks_per_file`` blocks per file and
``max_blocks`` blocks, and the reply never exceeds ``max_chars`` (each
``FOCUS_*`` in :mod:`repolens.budget` when the caller names none). A
definition larger than the budget left is shown trimmed: its signature line(s)
and the matched lines with ``context_lines`` around, every other stretch named
by an omission marker, and a final budget marker naming the ``read_snippet``
call from its first omitted line to its end. If even that does not fit, it
keeps as many matched lines as fit, those with the most distinct query tokens
first (budget marker last), and the blocks after it are listed in the
trailer; those the count budgets left out follow, on a line that names the
budgets. The best block always shows its best line (its strongest matched
line): for it the trailer shrinks to a count, or goes, and at the smallest
budgets it is its header, that line and the read of the whole block.

Blocks are ranked by the best retrieval score of their matches, then by the
number of matched lines. Several matches in one definition make one block.
When a definition holds another chosen one (a class-level line and a method
of that class), the outer one absorbs the inner when it is small enough
(its whole text within ``max_chars`` divided by the number of blocks asked
for); otherwise both stay, and the outer one is shown trimmed, with the inner
one's lines left to the inner block.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.budget import (
    BLOCK_SEP,
    FOCUS_BLOCKS_PER_FILE,
    FOCUS_MAX_BLOCKS,
    FOCUS_MAX_CHARS,
    FOCUS_MAX_FILES,
    INDEXED_LINE_CHARS,
    beside_its_marker,
    budget_marker,
    did_not_fit,
    header_and_line,
    line_cut_marker,
    more_did_not_fit,
    omitted_marker,
    trailer_reserve,
)
from repolens.chunking.labels import signature_lines
from repolens.search.focus import Candidate, find_candidates, in_holes, resolve_nesting
from repolens.search.query import parse_query
from repolens.search.staleness import changed_files, stale_note
from repolens.store.base import IndexReader, StoredChunk
from repolens.store.file_text import file_lines, line_cut_by_the_index
from repolens.tokens import tokenize
from repolens.validate import MIN_BUDGET, check_budget, check_int, check_query

if TYPE_CHECKING:
    from repolens.settings import Settings

NO_MATCH = "No matching definitions found."
# The trailer names what was left out, not all of it: up to ~10 refs, then
# "and N more" (the JSON form lists every omitted block).
_TRAILER_MAX = 800
_MATCHED_SHOWN = 12
# Matched lines tried, strongest first, when a block must be cut to fit.
_MAX_CUT_TRIALS = 200
# Retrieval hits whose matched lines are looked at.
HIT_CANDIDATES = 50


@dataclass(frozen=True, slots=True)
class FocusBlock:
    """One definition (or chunk) chosen for the reply."""

    path: str
    start_line: int
    end_line: int
    kind: str
    qualname: str
    signature: str
    language: str
    score: float
    matched: tuple[int, ...]  # matching lines inside the block, ascending
    chunk_ids: tuple[str, ...]  # stored chunks overlapping the block
    holes: tuple[tuple[int, int], ...] = ()  # ranges shown by nested blocks instead

    def label(self) -> str:
        return f" {self.kind} {self.qualname}" if self.qualname else f" {self.kind}"

    def header(self) -> str:
        matched = f" matched: {_runs(self.matched)}" if self.matched else ""
        return f"{self.ref()} (score {self.score:.2f}){matched}"

    def ref(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}{self.label()}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "kind": self.kind,
            "qualname": self.qualname,
            "signature": self.signature,
            "language": self.language,
            "score": round(self.score, 4),
            "matched_lines": list(self.matched),
            "chunk_ids": list(self.chunk_ids),
        }


@dataclass(frozen=True, slots=True)
class RenderedFocusBlock:
    block: FocusBlock
    text: str
    whole: bool  # every line of the definition is shown
    budget_cut: bool  # cut at a line boundary: nothing could follow it


@dataclass(frozen=True)
class FocusResult:
    query: str
    paths: tuple[str, ...]
    rendered: tuple[RenderedFocusBlock, ...]
    omitted: tuple[FocusBlock, ...]
    text: str

    def render(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "paths": list(self.paths),
            "blocks": [
                {**r.block.to_json(), "whole": r.whole, "truncated": not r.whole, "text": r.text}
                for r in self.rendered
            ],
            "omitted": [b.to_json() for b in self.omitted],
        }


# -- the file text -------------------------------------------------------------------


@dataclass
class _FileText:
    path: str
    chunks: list[StoredChunk]
    lines: dict[int, str]
    cut: frozenset[int] = frozenset()  # lines the index holds only the start of

    numbered_cache: dict[int, str] = field(default_factory=dict)

    def numbered(self, n: int) -> str:
        """Line ``n`` as shown: ``N: text``, and for a line the index cut, the
        packet's marker naming the read of the whole line (cached per call
        of focused_context)."""
        out = self.numbered_cache.get(n)
        if out is None:
            out = f"{n}: {self.lines.get(n, '')}"
            if n in self.cut:
                out += f"\n{line_cut_marker(self.path, n, INDEXED_LINE_CHARS)}"
            self.numbered_cache[n] = out
        return out

    def size(self, start: int, end: int) -> int:
        """Characters of lines ``start..end`` rendered ``N: text``, newline included."""
        return sum(len(self.numbered(n)) + 1 for n in range(start, end + 1))

    def chunk_ids(self, start: int, end: int) -> tuple[str, ...]:
        return tuple(
            s.chunk.id for s in self.chunks if s.chunk.start_line <= end and start <= s.chunk.end_line
        )


def _load_text(reader: IndexReader, path: str) -> _FileText:
    chunks = reader.chunks_of_file(path)
    cut = frozenset(s.chunk.start_line for s in chunks if line_cut_by_the_index(s.chunk))
    return _FileText(path, chunks, file_lines(chunks), cut)


def _whole_chars(c: Candidate, text: _FileText) -> int:
    """About what ``c`` costs shown whole: its header and every line."""
    return len(_header_estimate(c)) + text.size(c.start, c.end)


def _header_estimate(c: Candidate) -> str:
    return f"{c.path}:{c.start}-{c.end} {c.kind} {c.qualname} (score {c.score:.2f}) matched: 0000, 0000"


def _freeze_unread(c: Candidate) -> FocusBlock:
    """A block of a file that cannot be shown (beyond ``max_files``): the
    lines retrieval matched, no chunk ids."""
    return FocusBlock(
        c.path,
        c.start,
        c.end,
        c.kind,
        c.qualname,
        c.signature,
        c.language,
        c.score,
        tuple(sorted(c.hit_lines)),
        (),
    )


def _freeze(c: Candidate, text: _FileText) -> FocusBlock:
    """The block for a candidate. Its matched lines are those of the chunks
    retrieval returned (absorbed nested candidates included), not every line
    with a query token: a big class must not list the bodies of all its
    methods, only its own lines that were hits."""
    return FocusBlock(
        path=c.path,
        start_line=c.start,
        end_line=c.end,
        kind=c.kind,
        qualname=c.qualname,
        signature=c.signature,
        language=c.language,
        score=c.score,
        matched=tuple(sorted(n for n in c.hit_lines if not in_holes(n, c.holes))),
        chunk_ids=text.chunk_ids(c.start, c.end),
        holes=tuple(c.holes),
    )


# -- rendering -------------------------------------------------------------------------


def _runs(lines: Sequence[int]) -> str:
    """``12, 14-16, 40``; more than a dozen runs end with ``(+N more)``."""
    runs: list[tuple[int, int]] = []
    for n in lines:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:_MATCHED_SHOWN]]
    rest = len(runs) - _MATCHED_SHOWN
    return ", ".join(shown) + (f" (+{rest} more)" if rest > 0 else "")


def _signature_rows(b: FocusBlock, text: _FileText) -> set[int]:
    rows = set(signature_lines(text.lines, b.start_line, b.end_line, b.signature))
    if not rows and b.qualname and b.kind not in ("block", "window", "merged"):
        rows.add(b.start_line)
    return {n for n in rows if not in_holes(n, b.holes)}


def _around(n: int, context: int, b: FocusBlock) -> set[int]:
    lo, hi = max(b.start_line, n - context), min(b.end_line, n + context)
    return {m for m in range(lo, hi + 1) if not in_holes(m, b.holes)}


def _layout(b: FocusBlock, header: str, text: _FileText, rows: set[int], own_chars: int) -> str:
    """``header``, the ``rows`` with omission markers between, and the budget marker."""
    out = [header]
    expect = b.start_line
    shown_chars = 0
    first_hidden: int | None = None
    for n in sorted(rows):
        if n > expect:
            out.append(omitted_marker(expect, n - 1))
            first_hidden = expect if first_hidden is None else first_hidden
        line = text.numbered(n)
        out.append(line)
        shown_chars += len(line) + 1
        expect = n + 1
    if expect <= b.end_line:
        out.append(omitted_marker(expect, b.end_line))
        first_hidden = expect if first_hidden is None else first_hidden
    # The marker's read starts at the first line not shown here (lines of
    # nested blocks count: reading them back is harmless) and counts only
    # this block's own lines.
    start = first_hidden if first_hidden is not None else b.start_line
    out.append(budget_marker(b.path, start, b.end_line, own_chars - shown_chars))
    return "\n".join(out)


def render_focus_block(
    b: FocusBlock, text: _FileText, limit: int, context: int, tokens: frozenset[str]
) -> RenderedFocusBlock | None:
    """``b`` within ``limit`` chars, or None if not even its header and the
    budget marker fit.

    Whole if it fits (and no nested block shows part of it). Else trimmed:
    signature and every matched line with ``context`` lines around. Else
    (``budget_cut``) as many matched lines as fit, strongest first (most
    distinct query tokens, then earliest), each with its context if that
    fits, else alone.
    """
    header = b.header()
    if not b.holes:
        whole = "\n".join([header, *(text.numbered(n) for n in range(b.start_line, b.end_line + 1))])
        if len(whole) <= limit:
            return RenderedFocusBlock(b, whole, True, False)
    own = [n for n in range(b.start_line, b.end_line + 1) if not in_holes(n, b.holes)]
    own_chars = sum(len(text.numbered(n)) + 1 for n in own)
    sig = _signature_rows(b, text)
    rows = set(sig)
    for n in b.matched:
        rows |= _around(n, context, b)
    trimmed = _layout(b, header, text, rows, own_chars)
    if len(trimmed) <= limit:
        return RenderedFocusBlock(b, trimmed, False, False)
    if len(_layout(b, header, text, set(), own_chars)) > limit:
        return None
    # The strongest matched line first (the best line, which the reply's
    # first block always shows), then the signature, then the others.
    strongest = sorted(b.matched, key=lambda n: (-_strength(text, n, tokens), n))[:_MAX_CUT_TRIALS]
    rows: set[int] = set()
    for _, tries in itertools.chain(
        [(n, (_around(n, context, b), {n})) for n in strongest[:1]],
        [(0, (sig,))],
        [(n, (_around(n, context, b), {n})) for n in strongest[1:]],
    ):
        for extra in tries:
            trial = rows | extra
            if len(_layout(b, header, text, trial, own_chars)) <= limit:
                rows = trial
                break
    if not rows:
        return None  # not one line of it fits
    return RenderedFocusBlock(b, _layout(b, header, text, rows, own_chars), False, True)


def _strength(text: _FileText, n: int, tokens: frozenset[str]) -> int:
    """How many distinct query tokens line ``n`` holds."""
    return len(tokens.intersection(tokenize(text.lines.get(n, ""))))


def best_line(b: FocusBlock, text: _FileText, tokens: frozenset[str]) -> int:
    """The line of ``b`` a reply shows when it shows one: the matched line
    with the most distinct query tokens (the first of equals), else its
    first line."""
    if not b.matched:
        return b.start_line
    return min(b.matched, key=lambda n: (-_strength(text, n, tokens), n))


def _shows(r: RenderedFocusBlock, line: int) -> bool:
    return f"\n{line}: " in r.text


def _smallest(b: FocusBlock, text: _FileText, tokens: frozenset[str], max_chars: int) -> RenderedFocusBlock:
    """The best block at its smallest: its header and its best line (the
    header without its matched lines, then the line cut, when even they do
    not fit), then the budget marker as far as it fits."""
    best = best_line(b, text, tokens)
    own = [n for n in range(b.start_line, b.end_line + 1) if not in_holes(n, b.holes)]
    own_chars = sum(len(text.numbered(n)) + 1 for n in own)
    line = text.numbered(best)
    bare_header = f"{b.ref()} (score {b.score:.2f})"
    if best in text.cut and len(bare_header) + 1 + len(line) > max_chars:
        plain = f"{best}: {text.lines.get(best, '')}"
        marker = line_cut_marker(text.path, best, INDEXED_LINE_CHARS)
        line = beside_its_marker(plain, marker, max_chars - len(bare_header) - 1, best) or plain
    shown = header_and_line(b.header(), bare_header, line, best, max_chars)
    marker = budget_marker(b.path, b.start_line, b.end_line, own_chars - len(line) - 1)
    if len(shown) + 1 + len(marker) <= max_chars:
        shown = f"{shown}\n{marker}"
    return RenderedFocusBlock(b, shown, False, True)


def _trailer(left_out: Sequence[FocusBlock], limited: Sequence[FocusBlock], limits: str, limit: int) -> str:
    """What the reply does not show: the blocks the character budget left
    out (``did not fit``), then those past the count budgets ``limits``
    (``max_blocks=2`` ...: raising them shows more), in ``limit`` chars."""
    first = did_not_fit("block", [b.ref() for b in left_out], limit)
    room = limit - len(first) - 1 if first else limit
    second = did_not_fit("block", [b.ref() for b in limited], room, why=f"past {limits}")
    return "\n".join(t for t in (first, second) if t)


# -- the operation ------------------------------------------------------------------------


def focused_context(
    reader: IndexReader,
    root: Path,
    query: str,
    settings: Settings,
    *,
    paths: Sequence[str] = (),
    max_files: int = FOCUS_MAX_FILES,
    blocks_per_file: int = FOCUS_BLOCKS_PER_FILE,
    max_blocks: int = FOCUS_MAX_BLOCKS,
    max_chars: int = FOCUS_MAX_CHARS,
    hit_candidates: int = HIT_CANDIDATES,
) -> FocusResult:
    """The enclosing definitions of ``query``'s matches; see the module docstring.

    The matches are found among the first ``hit_candidates`` hits of a
    search of ``query`` in the repository at ``root``, ranked as
    ``settings`` say (:func:`repolens.search.focus.retrieve`: the ranking of
    ``search``), and shown with ``settings.context_lines`` around them.
    ``paths`` (files or folders, root-relative) restrict the matches.
    Bounds: ``max_files``, ``blocks_per_file`` 1-50, ``max_blocks`` 1-100,
    ``max_chars`` 200-1,000,000, ``hit_candidates`` 1-1000. Raises
    ``UsageError`` for an empty query or a bound out of range, ``PathError``
    for a bad path.
    """
    check_query(query)
    check_int("max_files", max_files, 1, 50)
    check_int("blocks_per_file", blocks_per_file, 1, 50)
    check_int("max_blocks", max_blocks, 1, 100)
    check_budget(max_chars)
    check_int("hit_candidates", hit_candidates, 1, 1000)
    context_lines = settings.context_lines
    parsed = parse_query(query, weighted=settings.query_weights)
    found = find_candidates(reader, root, query, settings, paths, hit_candidates)
    subpaths, cands = found.subpaths, found.by_file
    if not cands:
        return FocusResult(query, subpaths, (), (), NO_MATCH)

    share = max_chars // max(1, min(max_blocks, sum(len(c) for c in cands.values())))
    # Only the best ``max_files`` files can be shown: only they are read back
    # from the index; the others go to the trailer as they are.
    texts: dict[str, _FileText] = {}
    blocks: list[FocusBlock] = []
    for path in found.ranked_files[:max_files]:
        text = texts[path] = _load_text(reader, path)
        whole = functools.partial(_whole_chars, text=text)
        for c in resolve_nesting(cands[path], whole, share):
            blocks.append(_freeze(c, text))
    for path in found.ranked_files[max_files:]:
        blocks.extend(_freeze_unread(c) for c in cands[path])
    blocks.sort(key=lambda b: (-b.score, -len(b.matched), b.path, b.start_line))

    chosen: list[FocusBlock] = []
    omitted: list[FocusBlock] = []
    limits: dict[str, int] = {}  # the count budgets that left a block out
    files: list[str] = []
    per_file_count: dict[str, int] = {}
    for b in blocks:
        new_file = b.path not in files
        over = {
            "max_blocks": (max_blocks, len(chosen) >= max_blocks),
            "max_files": (max_files, new_file and len(files) >= max_files),
            "blocks_per_file": (blocks_per_file, per_file_count.get(b.path, 0) >= blocks_per_file),
        }
        if any(hit for _, hit in over.values()):
            limits.update((name, value) for name, (value, hit) in over.items() if hit)
            omitted.append(b)
            continue
        if new_file:
            files.append(b.path)
        per_file_count[b.path] = per_file_count.get(b.path, 0) + 1
        chosen.append(b)
    named = ", ".join(f"{name}={value}" for name, value in limits.items())
    # The definitions shown are the index's: say which files moved since, within the budget.
    changed = changed_files(root, reader, (b.path for b in chosen))
    note = f"note: {stale_note(changed)}" if changed else ""
    if note and max_chars - len(note) - len(BLOCK_SEP) < MIN_BUDGET:
        note = "note: cited files changed since indexing"
    room = max_chars - len(note) - len(BLOCK_SEP) if note else max_chars
    result = _assemble(query, subpaths, chosen, omitted, named, texts, room, context_lines, parsed.tokens)
    return replace(result, text=f"{note}{BLOCK_SEP}{result.text}") if note else result


def _assemble(
    query: str,
    subpaths: tuple[str, ...],
    chosen: list[FocusBlock],
    omitted: list[FocusBlock],
    limits: str,
    texts: dict[str, _FileText],
    max_chars: int,
    context: int,
    tokens: frozenset[str],
) -> FocusResult:
    """The chosen blocks in ``max_chars``, best first, then the trailer. The
    best block always shows its best line: it takes the most trailer that
    still lets it (down to none), else it is shown at its smallest."""
    parts: list[str] = []
    rendered: list[RenderedFocusBlock] = []
    left_out: list[FocusBlock] = []
    used = 0
    for i, b in enumerate(chosen):
        sep = len(BLOCK_SEP) if parts else 0
        rest = [*chosen[i + 1 :], *omitted]
        # Room is kept for a trailer naming what follows; capped so that a
        # long tail cannot starve the first blocks.
        reserves = [trailer_reserve("block", [b.ref() for b in rest], max_chars - used)]
        if i == 0 and rest:
            reserves += [len(BLOCK_SEP) + len(more_did_not_fit("block", len(rest))), 0]
        r = None
        for reserve in reserves:
            r = render_focus_block(b, texts[b.path], max_chars - used - sep - reserve, context, tokens)
            if i > 0 or (r is not None and _shows(r, best_line(b, texts[b.path], tokens))):
                break
        else:
            r = _smallest(b, texts[b.path], tokens, max_chars)
        if r is None:
            left_out = list(chosen[i:])
            break
        parts.append(r.text)
        rendered.append(r)
        used += sep + len(r.text)
        if r.budget_cut:
            left_out = list(chosen[i + 1 :])
            break
    room = min(_TRAILER_MAX, max_chars - used - (len(BLOCK_SEP) if parts else 0))
    trailer = _trailer(left_out, omitted, limits, room)
    if trailer:
        parts.append(trailer)
    text = BLOCK_SEP.join(parts) if parts else NO_MATCH
    return FocusResult(query, subpaths, tuple(rendered), (*left_out, *omitted), text[:max_chars])
