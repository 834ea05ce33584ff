"""Turn a file's definitions into chunks that tile the file.

Shared by the syntax chunker (definitions from tree-sitter) and the markdown
chunker (sections from headings). Input: the file's lines and a tree of
:class:`Def` (0-based, inclusive row ranges, siblings ordered and disjoint).
Output: chunks whose line ranges partition the file: every line is in
exactly one chunk, except that a line longer than ``MAX_CHARS`` is data
whose head alone is indexed (see :mod:`repolens.chunking.text`).

The rules, in order:

* A definition that fits the bounds (``MAX_LINES`` lines, ``MAX_CHARS``
  characters) is one chunk, nested definitions included.
* A bigger definition with nested definitions (a class, a namespace, a
  section with subsections) is flattened: its own lines before, between and
  after the nested ones become pieces owned by it, and each nested definition
  is handled by these same rules.
* A bigger definition without nested ones is split into parts at break rows
  (statement starts, paragraph starts). Parts 2..n carry the definition's
  header line(s) prepended to their ``text``, so a hit in part 3 still shows
  which function it is; their ``start_line``/``end_line`` stay the part's true
  range, so ``text`` then has more lines than the range
  (see :func:`repolens.chunking.labels.repeated_header_lines`).
* Lines between definitions (imports, statements, fields) are gap pieces.
  Blank lines and lone closers (``}``, ``end``) go to the piece before them.
* Consecutive small pieces with the same owner are packed together up to
  ``TARGET_LINES``: gaps, and definitions of at most ``merge_max_lines``
  lines (one-line constants, getters). A packed chunk that holds only
  definitions names them all in ``qualname`` (``a, b, c (+2 more)``,
  :func:`repolens.chunking.labels.join_names`).
* A chunk is named by the innermost definitions it holds. Blank lines and
  closers packed with definitions do not count: a method packed with the
  blank line after a long neighbour is that method (kind, name, signature).
  A packed chunk with other code is a ``block`` naming its definitions,
  except a chunk that holds a class's (or namespace's) first line, or no
  definition at all: that one is labelled with the class. A hit in a method
  thus names the method, and a stale hit finds the method again, not the
  class's head.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate

from repolens.chunking import Chunk
from repolens.chunking.labels import join_names
from repolens.chunking.text import MAX_CHARS, MAX_LINES, TARGET_LINES, WindowChunker, window_chunks

# Kinds whose big instances dissolve into the surrounding code when packing:
# a namespace's header line belongs with the imports above it, not alone.
NAMESPACE_KINDS = frozenset({"module"})

MAX_HEADER_LINES = 3
# Non-blank lines of code before a big definition that join its chunk.
TINY_GAP_LINES = 2
MAX_HEADER_CHARS = 400

# Lines that carry no content of their own: blank, or only closing
# punctuation / ``end`` (optionally followed by a line comment).
_TRIVIAL = re.compile(r"\s*(?:(?:[\]\[{}();,]+|end[;.]?|@end)\s*(?:(?://|#|--).*)?)?")
_NO_OVERLAP = WindowChunker(overlap=0)


@dataclass(slots=True, eq=False)
class Def:
    """One definition (or markdown section) found by a chunker.

    ``start``/``end`` are 0-based inclusive rows and include the leading
    decorators and doc comments. ``head``..``head_end`` are the header rows
    repeated in front of split parts (-1: none). ``members`` lists extra
    names declared together (a Go ``const (...)`` group) as
    ``(name, qualname, kind, start, end)`` for the symbol table.
    ``ref`` is the chunker's own handle (a tree-sitter node) for
    ``breaks_for``.
    """

    kind: str
    name: str
    qualname: str
    parent: str
    start: int
    end: int
    signature: str = ""
    doc: str = ""
    head: int = -1
    head_end: int = -1
    children: list[Def] = field(default_factory=list)
    members: list[tuple[str, str, str, int, int]] = field(default_factory=list)
    ref: object = None


@dataclass(slots=True, eq=False)
class _Piece:
    start: int
    end: int
    d: Def | None  # None: lines that are no definition
    owner: Def | None  # the definition whose body holds this piece
    group: Def | None  # nearest owner that is not a namespace: packing boundary
    small: bool


class Packer:
    """Chunks for one file; see the module docstring for the rules."""

    def __init__(
        self,
        path: str,
        language: str,
        lines: list[str],
        *,
        gap_breaks: list[int] | None = None,
        breaks_for: Callable[[Def], list[int]] | None = None,
        merge_max_lines: int = 2,
    ) -> None:
        self.path = path
        self.language = language
        self.lines = lines
        # cum[i]: characters (with newlines) of lines[:i].
        self.cum = list(accumulate(map((1).__add__, map(len, lines)), initial=0))
        self.gap_breaks = sorted(set(gap_breaks or ()))
        self.breaks_for = breaks_for
        self.merge_max_lines = merge_max_lines
        self.chunks: list[Chunk] = []

    # -- public ---------------------------------------------------------

    def pack(self, defs: list[Def]) -> list[Chunk]:
        n = len(self.lines)
        if n == 0:
            return []
        pieces: list[_Piece] = []
        self._flatten(defs, 0, n - 1, None, None, pieces)
        pieces = self._absorb_trivial(pieces)
        run: list[_Piece] = []
        for p in pieces:
            if p.small and run and run[0].group is p.group:
                run.append(p)
                continue
            if not p.small and run and run[0].group is p.group and self._is_tiny_header(run, p):
                # A bare ``## Usage`` or ``namespace x {`` line is no chunk of
                # its own: it introduces the definition after it.
                p.start, run = run[0].start, []
            self._flush(run)
            run = [p] if p.small else []
            if not p.small:
                assert p.d is not None
                self._emit_def(p.d, p.start, p.end)
        self._flush(run)
        return self.chunks

    # -- flattening -----------------------------------------------------

    def _chars(self, s: int, e: int) -> int:
        return self.cum[e + 1] - self.cum[s]

    def _fits(self, s: int, e: int) -> bool:
        return e - s + 1 <= MAX_LINES and self._chars(s, e) <= MAX_CHARS

    def _flatten(
        self, defs: list[Def], rs: int, re_: int, owner: Def | None, group: Def | None, out: list[_Piece]
    ) -> None:
        cur = rs
        for d in defs:
            if d.start < cur or d.start > re_:
                continue  # overlapping or out of range: its lines stay in the gap
            end = min(d.end, re_)
            if d.start > cur:
                out.append(_Piece(cur, d.start - 1, None, owner, group, True))
            if d.children and not self._fits(d.start, end):
                inner = group if d.kind in NAMESPACE_KINDS else d
                self._flatten(d.children, d.start, end, d, inner, out)
            else:
                small = end - d.start + 1 <= self.merge_max_lines
                out.append(_Piece(d.start, end, d, owner, group, small))
            cur = end + 1
        if cur <= re_:
            out.append(_Piece(cur, re_, None, owner, group, True))

    def _is_tiny_header(self, run: list[_Piece], nxt: _Piece) -> bool:
        """``run`` is just the first line(s) of the container that ``nxt`` is in."""
        if nxt.owner is None or any(p.d is not None or p.owner is not nxt.owner for p in run):
            return False
        rows = range(run[0].start, run[-1].end + 1)
        return (
            len(rows) <= 2 * TINY_GAP_LINES
            and sum(1 for i in rows if self.lines[i].strip()) <= TINY_GAP_LINES
        )

    def _is_trivial(self, s: int, e: int) -> bool:
        match = _TRIVIAL.fullmatch
        return all(match(self.lines[i]) for i in range(s, e + 1))

    def _absorb_trivial(self, pieces: list[_Piece]) -> list[_Piece]:
        out: list[_Piece] = []
        lead = -1  # start row of trivial lines waiting for a next piece
        for p in pieces:
            if p.d is None and self._is_trivial(p.start, p.end):
                if out and p.end - out[-1].start < MAX_LINES:
                    out[-1].end = p.end
                    continue
                if not out and p.end - p.start < MAX_LINES:
                    lead = p.start if lead < 0 else lead
                    continue
            if lead >= 0:
                p.start, lead = lead, -1
            out.append(p)
        if lead >= 0:  # a file of only blank lines / closers
            out.append(_Piece(lead, len(self.lines) - 1, None, None, None, True))
        return out

    # -- emitting -------------------------------------------------------

    def _flush(self, run: list[_Piece]) -> None:
        acc: list[_Piece] = []
        for p in run:
            if p.d is None and not self._fits(p.start, p.end):
                self._emit_pack(acc)
                acc = []
                self._emit_gap(p)
                continue
            if acc and (
                p.end - acc[0].start + 1 > TARGET_LINES or self._chars(acc[0].start, p.end) > MAX_CHARS
            ):
                self._emit_pack(acc)
                acc = []
            acc.append(p)
        self._emit_pack(acc)

    def _emit_pack(self, acc: list[_Piece]) -> None:
        if not acc:
            return
        s, e = acc[0].start, acc[-1].end
        defs = [p.d for p in acc if p.d is not None]
        # Blank lines and closers are no code of their own: a method packed
        # with the blank line after a long one is that method alone.
        if defs and all(p.d is not None or self._is_trivial(p.start, p.end) for p in acc):
            if len(defs) == 1:
                self._add(s, e, _meta(defs[0]))
                return
            kinds = {d.kind for d in defs}
            kind = kinds.pop() if len(kinds) == 1 else "block"
            group = acc[0].group
            meta = (
                kind,
                join_names([d.name for d in defs]),
                join_names([d.qualname for d in defs]),
                "",
                group.qualname if group is not None else defs[0].parent,
                "",
            )
            self._add(s, e, meta)
            return
        self._add(s, e, self._gap_meta(acc, defs))

    def _gap_meta(self, acc: list[_Piece], defs: list[Def]) -> tuple[str, str, str, str, str, str]:
        """The label of lines that are no definition, packed with ``defs``.

        Lines of a class (or namespace) are labelled with it when the chunk
        holds its first line or no definition of its own; otherwise the
        chunk is named by the definitions it holds, innermost first.
        """
        s, e = acc[0].start, acc[-1].end
        owner = acc[0].group
        if owner is None and len({id(p.owner) for p in acc}) == 1:
            owner = acc[0].owner
        if owner is not None and (not defs or s <= owner.start <= e):
            return _meta(owner)
        if not defs:
            return ("block", "", "", "", "", "")
        # No signature: the block is more than the definition (a signature
        # would weigh its words as the block's own in the lexical index).
        return (
            "block",
            join_names([d.name for d in defs]),
            join_names([d.qualname for d in defs]),
            "",
            "",
            "",
        )

    def _emit_gap(self, p: _Piece) -> None:
        meta = self._gap_meta([p], [])
        lo = bisect.bisect_right(self.gap_breaks, p.start)
        hi = bisect.bisect_right(self.gap_breaks, p.end)
        for s, e in self._split(p.start, p.end, self.gap_breaks[lo:hi], TARGET_LINES, 0, 0):
            self._add(s, e, meta)

    def _emit_def(self, d: Def, s: int, e: int) -> None:
        meta = _meta(d)
        if self._fits(s, e):
            self._add(s, e, meta)
            return
        header = ""
        if 0 <= d.head <= d.head_end and d.head >= s:
            hs = self.lines[d.head : min(d.head_end, d.head + MAX_HEADER_LINES - 1) + 1]
            header = "\n".join(hs)
            if len(header) > MAX_HEADER_CHARS:
                header = hs[0][:MAX_HEADER_CHARS]
        breaks = self.breaks_for(d) if self.breaks_for is not None else []
        hlines = header.count("\n") + 1 if header else 0
        hchars = len(header) + 1 if header else 0
        parts = self._split(s, e, breaks, MAX_LINES, hlines, hchars)
        for i, (ps, pe) in enumerate(parts):
            self._add(ps, pe, meta, header if i and header and ps > d.head_end else "")

    def _split(
        self, s: int, e: int, breaks: list[int], target: int, hlines: int, hchars: int
    ) -> list[tuple[int, int]]:
        """Cut rows ``s..e`` into parts within the bounds, at break rows if possible.

        A break row is a row a part may start at. Parts are balanced: the
        range is divided into as many parts as the bounds need, and each cut
        goes to the break nearest the even share. Without a usable break the
        cut falls after a blank line, else at the bound.
        """
        max_lines = max(1, MAX_LINES - hlines)
        max_chars = max(1, MAX_CHARS - hchars)
        total_lines = e - s + 1
        total_chars = self._chars(s, e)
        nparts = max(-(-total_lines // max_lines), -(-total_chars // max_chars), 1)
        share_lines = min(target, -(-total_lines // nparts))
        share_chars = -(-total_chars // nparts)
        parts: list[tuple[int, int]] = []
        start = s
        while start <= e:
            if e - start + 1 <= max_lines and self._chars(start, e) <= max_chars:
                parts.append((start, e))
                break
            # hard: last row keeping the part within the bounds
            hard = min(start + max_lines - 1, bisect.bisect_right(self.cum, self.cum[start] + max_chars) - 2)
            hard = max(hard, start)
            soft = min(
                hard,
                start + share_lines - 1,
                bisect.bisect_right(self.cum, self.cum[start] + share_chars) - 2,
            )
            soft = max(soft, start)
            cut = self._choose_cut(start, soft, hard, breaks)
            parts.append((start, cut))
            start = cut + 1
        return parts

    def _choose_cut(self, start: int, soft: int, hard: int, breaks: list[int]) -> int:
        # A break b means "a part may start at row b": the cut is b - 1.
        lo = bisect.bisect_right(breaks, start)
        hi = bisect.bisect_right(breaks, hard + 1)
        cands = breaks[lo:hi]
        if cands:
            i = bisect.bisect_right(cands, soft + 1)
            below = cands[i - 1] if i else None
            if below is not None and below - start >= (soft - start + 1) // 2:
                return below - 1
            if i < len(cands):
                return cands[i] - 1
            return cands[-1] - 1
        for r in range(hard, start, -1):  # after a blank line
            if not self.lines[r - 1].strip():
                return r - 1
        return hard

    def _add(self, s: int, e: int, meta: tuple[str, str, str, str, str, str], header: str = "") -> None:
        kind, name, qualname, signature, parent, doc = meta
        text = "\n".join(self.lines[s : e + 1])
        if header:
            text = header + "\n" + text
        if len(text) <= MAX_CHARS or (s == e and len(self.lines[s]) <= MAX_CHARS):
            self.chunks.append(
                Chunk(
                    self.path, s + 1, e + 1, text, self.language, kind, name, qualname, signature, parent, doc
                )
            )
            return
        # Only an over-long line gets here: its head is kept, as the window chunker does.
        for c in window_chunks(self.path, "", self.language, _NO_OVERLAP, s + 1, self.lines[s : e + 1]):
            self.chunks.append(
                Chunk(
                    c.path,
                    c.start_line,
                    c.end_line,
                    c.text,
                    c.language,
                    kind,
                    name,
                    qualname,
                    signature,
                    parent,
                    doc,
                )
            )


def _meta(d: Def) -> tuple[str, str, str, str, str, str]:
    return (d.kind, d.name, d.qualname, d.signature, d.parent, d.doc)
