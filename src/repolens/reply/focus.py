"""Focused context: the whole definitions around the matches of a query.

Backs ``repolens focus QUERY [--path P ...]`` and the MCP tool
``get_focused_context``. Where an evidence packet shows the matching lines of
the top chunks, this shows, for each match, its innermost enclosing
definition (function, method, class, section...) from the index's symbol
table, whole when the budget allows. Matches in code outside any definition
(imports, top-level statements, files chunked by line windows) show the
chunk they are in.

A *match* is a line that contains a query token (the test of
:func:`repolens.reply.packet.shown_lines`), in a chunk that retrieval returned
(:func:`repolens.search.search_index`, the same as ``search``).

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

Matched lines are flagged in the block header (``matched:``, runs of lines
as ``A-B``), so every body line keeps the packets' ``N: text`` form.

Budgets: at most ``max_files`` files, ``blocks_per_file`` blocks per file and
``max_blocks`` blocks, and the reply never exceeds ``max_chars``. A
definition larger than the budget left is shown trimmed: its signature line(s)
and the matched lines with ``context_lines`` around, every other stretch named
by an omission marker, and a final budget marker naming the ``read_snippet``
call from its first omitted line to its end. If even that does not fit, it
keeps as many matched lines as fit, those with the most distinct query tokens
first (budget marker last), and the blocks after it are listed in the
trailer, with those left out by the count budgets.

Blocks are ranked by the best retrieval score of their matches, then by the
number of matched lines. Several matches in one definition make one block.
When a definition holds another chosen one (a class-level line and a method
of that class), the outer one absorbs the inner when it is small enough
(its whole text within ``max_chars`` divided by the number of blocks asked
for); otherwise both stay, and the outer one is shown trimmed, with the inner
one's lines left to the inner block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from repolens.chunk import Chunk
from repolens.chunk.pack import repeated_header_lines
from repolens.errors import PathError, UsageError
from repolens.reply.budget import budget_marker, did_not_fit, omitted_marker
from repolens.reply.chunk import file_lines
from repolens.search import Filters, Hit, search_index
from repolens.search.query import ParsedQuery, parse_query
from repolens.store.base import IndexReader, StoredChunk
from repolens.tokens import tokenize
from repolens.validate import MAX_CONTEXT_LINES, check_budget, check_int

NO_MATCH = "No matching definitions found."
_SEP = "\n\n"
_TRAILER_RESERVE = 400
# The trailer names what was left out, not all of it: up to ~10 refs, then
# "and N more" (the JSON form lists every omitted block).
_TRAILER_MAX = 800
_MATCHED_SHOWN = 12
_MAX_SIGNATURE_LINES = 5
# Matched lines tried, strongest first, when a block must be cut to fit.
_MAX_CUT_TRIALS = 200
# How far below a definition's start its signature line may be (decorators,
# doc comments, attributes in front of it).
_SIGNATURE_SEARCH = 60


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


# -- arguments -------------------------------------------------------------------


def resolve_paths(reader: IndexReader, paths: Sequence[str]) -> tuple[str, ...]:
    """Root-relative files or folders, each holding at least one indexed file.

    Absolute paths inside the indexed root are made relative. Raises
    ``PathError`` for a path outside the root, with ``..``, or with nothing
    indexed at or under it.
    """
    if isinstance(paths, str):
        paths = (paths,)
    root = reader.meta().get("root", "")
    out: list[str] = []
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip():
            raise UsageError("path is empty: pass a file or folder relative to the repository root")
        p = raw.strip().replace("\\", "/")
        if p.startswith("/"):
            pure = PurePosixPath(p)
            if not root or not pure.is_relative_to(root):
                raise PathError(f"path {raw!r} is outside the indexed root {root}: pass a relative path")
            p = pure.relative_to(root).as_posix()
        if ".." in p.split("/"):
            raise PathError(f"path {raw!r} contains '..': pass a path inside the repository root")
        while p.startswith("./"):
            p = p[2:]
        p = p.strip("/")
        if p in ("", "."):
            return ()  # the whole repository: no restriction at all
        if not reader.has_path(p):
            raise PathError(
                f"nothing is indexed at {p!r}: pass a file or folder relative to the repository root"
            )
        out.append(p)
    return tuple(dict.fromkeys(out))


# -- matches -----------------------------------------------------------------------


def _retrieve(reader: IndexReader, parsed: ParsedQuery, subpaths: Sequence[str], limit: int) -> list[Hit]:
    """Retrieval hits, best first; with ``subpaths``, the best of one search per path."""
    if not subpaths:
        return search_index(reader, parsed, limit=limit).hits
    best: dict[int, Hit] = {}
    for p in subpaths:
        for h in search_index(reader, parsed, limit=limit, filters=Filters(subpath=p)).hits:
            if h.cid not in best or h.score > best[h.cid].score:
                best[h.cid] = h
    return sorted(best.values(), key=lambda h: -h.score)[:limit]


def matching_lines(chunk: Chunk, tokens: frozenset[str]) -> list[int]:
    """Line numbers of ``chunk`` that contain a query token.

    Lines repeating a split definition's header at the top of parts 2..n
    are not the part's own and never match.
    """
    lines = chunk.text.split("\n")
    header = repeated_header_lines(chunk)
    return [
        chunk.start_line + i
        for i, line in enumerate(lines[header:])
        if chunk.start_line + i <= chunk.end_line and tokens.intersection(tokenize(line))
    ]


@dataclass(slots=True)
class _Sym:
    start: int
    end: int
    kind: str
    qualname: str
    signature: str
    language: str


@dataclass(slots=True, eq=False)
class _Cand:
    """A block being built: mutable until the nesting is resolved."""

    path: str
    start: int
    end: int
    kind: str
    qualname: str
    signature: str
    language: str
    score: float
    hit_lines: set[int]
    holes: list[tuple[int, int]] = field(default_factory=list)


def _symbols_of(reader: IndexReader, path: str) -> list[_Sym]:
    return [
        _Sym(int(r.start_line), int(r.end_line), r.kind, r.qualname, r.signature, r.language)
        for r in reader.symbols_of_file(path)
    ]


# Symbols that are part of top-level code rather than bounding it.
_NOT_BOUNDARIES = frozenset({"constant", "block", "section"})


def _innermost(syms: Sequence[_Sym], line: int) -> _Sym | None:

    best: _Sym | None = None
    for s in syms:
        if s.start <= line <= s.end and (best is None or s.end - s.start < best.end - best.start):
            best = s
    return best


def _candidates(reader: IndexReader, path: str, matches: dict[int, tuple[float, Chunk]]) -> list[_Cand]:
    """One candidate per enclosing definition (or chunk, outside any) of the matched lines."""
    syms = _symbols_of(reader, path)
    by_key: dict[tuple[int, int, str, str], _Cand] = {}
    for line, (score, chunk) in sorted(matches.items()):
        sym = _innermost(syms, line)
        if sym is not None:
            key = (sym.start, sym.end, sym.kind, sym.qualname)
            fields_ = (sym.kind, sym.qualname, sym.signature, sym.language)
        elif chunk.kind == "window":
            key = (chunk.start_line, chunk.end_line, chunk.kind, chunk.qualname)
            fields_ = (chunk.kind, chunk.qualname, chunk.signature, chunk.language)
        else:
            # Top-level code: the run of lines around the match between
            # definitions (a packed chunk may also hold definitions).

            defs = [s for s in syms if s.kind not in _NOT_BOUNDARIES]
            start = max([chunk.start_line, *(s.end + 1 for s in defs if s.end < line)])
            end = min([chunk.end_line, *(s.start - 1 for s in defs if s.start > line)])

            key = (start, end, "block", "")
            fields_ = ("block", "", "", chunk.language)

        cand = by_key.get(key)
        if cand is None:
            kind, qual, sig, lang = fields_
            cand = _Cand(path, key[0], key[1], kind, qual, sig, lang, score, set())
            by_key[key] = cand
        cand.score = max(cand.score, score)
        cand.hit_lines.add(line)
    return _merge_overlaps(list(by_key.values()))


def _merge_overlaps(cands: list[_Cand]) -> list[_Cand]:
    """Merge candidates whose ranges overlap without one holding the other
    (overlapping line windows), so that no line is shown twice."""
    out: list[_Cand] = []
    for c in sorted(cands, key=lambda c: (c.start, -c.end)):
        for o in out:
            overlap = c.start <= o.end and o.start <= c.end
            nested = (o.start <= c.start and c.end <= o.end) or (c.start <= o.start and o.end <= c.end)
            if overlap and not nested:
                o.start, o.end = min(o.start, c.start), max(o.end, c.end)
                if (o.kind, o.qualname) != (c.kind, c.qualname):
                    o.kind = "merged" if o.kind != c.kind else o.kind
                    o.qualname, o.signature = "", ""
                o.score = max(o.score, c.score)
                o.hit_lines |= c.hit_lines
                break
        else:
            out.append(c)
    return out if len(out) == len(cands) else _merge_overlaps(out)


# -- the file text -------------------------------------------------------------------


@dataclass
class _FileText:
    chunks: list[StoredChunk]
    lines: dict[int, str]

    numbered_cache: dict[int, str] = field(default_factory=dict)

    def numbered(self, n: int) -> str:
        """Line ``n`` as shown: ``N: text`` (cached per call of focused_context)."""
        out = self.numbered_cache.get(n)
        if out is None:
            out = self.numbered_cache[n] = f"{n}: {self.lines.get(n, '')}"
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
    return _FileText(chunks, file_lines(chunks))


def _resolve_nesting(cands: list[_Cand], text: _FileText, share: int) -> list[_Cand]:
    """A candidate inside another: the outer absorbs it if the outer's whole
    text is within ``share`` chars, else the inner stays and becomes a hole
    of the outer. Outer candidates are decided first (largest first)."""
    alive = sorted(cands, key=lambda c: -(c.end - c.start))
    result: list[_Cand] = []
    absorbed: set[int] = set()
    for i, outer in enumerate(alive):
        if id(outer) in absorbed:
            continue
        inner = [
            c
            for c in alive[i + 1 :]
            if id(c) not in absorbed and outer.start <= c.start and c.end <= outer.end
        ]
        if inner:
            whole = len(_header_estimate(outer)) + text.size(outer.start, outer.end)
            if whole <= share:
                for c in inner:
                    absorbed.add(id(c))
                    outer.score = max(outer.score, c.score)
                    outer.hit_lines |= c.hit_lines
            else:
                outer.holes = _union([(c.start, c.end) for c in inner])
        result.append(outer)
    return result


def _header_estimate(c: _Cand) -> str:
    return f"{c.path}:{c.start}-{c.end} {c.kind} {c.qualname} (score {c.score:.2f}) matched: 0000, 0000"


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _in_holes(n: int, holes: Sequence[tuple[int, int]]) -> bool:
    return bool(holes) and any(a <= n <= b for a, b in holes)


def _freeze_unread(c: _Cand) -> FocusBlock:
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


def _freeze(c: _Cand, text: _FileText) -> FocusBlock:
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
        matched=tuple(sorted(n for n in c.hit_lines if not _in_holes(n, c.holes))),
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
        if not first or not (target.startswith(first.rstrip("{:=(").rstrip()) or first.startswith(target)):
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


def _signature_rows(b: FocusBlock, text: _FileText) -> set[int]:
    rows = set(signature_lines(text.lines, b.start_line, b.end_line, b.signature))
    if not rows and b.qualname and b.kind not in ("block", "window", "merged"):
        rows.add(b.start_line)
    return {n for n in rows if not _in_holes(n, b.holes)}


def _around(n: int, context: int, b: FocusBlock) -> set[int]:
    lo, hi = max(b.start_line, n - context), min(b.end_line, n + context)
    return {m for m in range(lo, hi + 1) if not _in_holes(m, b.holes)}


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
    own = [n for n in range(b.start_line, b.end_line + 1) if not _in_holes(n, b.holes)]
    own_chars = sum(len(text.numbered(n)) + 1 for n in own)
    sig = _signature_rows(b, text)
    rows = set(sig)
    for n in b.matched:
        rows |= _around(n, context, b)
    trimmed = _layout(b, header, text, rows, own_chars)
    if len(trimmed) <= limit:
        return RenderedFocusBlock(b, trimmed, False, False)
    rows = sig if len(_layout(b, header, text, sig, own_chars)) <= limit else set()
    if len(_layout(b, header, text, rows, own_chars)) > limit:
        return None

    def strength(n: int) -> int:
        return len(tokens.intersection(tokenize(text.lines.get(n, ""))))

    for n in sorted(b.matched, key=lambda n: (-strength(n), n))[:_MAX_CUT_TRIALS]:
        for extra in (_around(n, context, b), {n}):
            trial = rows | extra
            if len(_layout(b, header, text, trial, own_chars)) <= limit:
                rows = trial
                break
    return RenderedFocusBlock(b, _layout(b, header, text, rows, own_chars), False, True)


def _trailer(blocks: Sequence[FocusBlock], limit: int) -> str:
    return did_not_fit("block", [b.ref() for b in blocks], limit)


# -- the operation ------------------------------------------------------------------------


def focused_context(
    reader: IndexReader,
    query: str,
    *,
    paths: Sequence[str] = (),
    max_files: int = 3,
    blocks_per_file: int = 3,
    max_blocks: int = 6,
    max_chars: int = 8000,
    hit_candidates: int = 50,
    context_lines: int = 2,
) -> FocusResult:
    """The enclosing definitions of ``query``'s matches; see the module docstring.

    ``paths`` (files or folders, root-relative) restrict the matches.
    Bounds: ``max_files``, ``blocks_per_file`` 1-50, ``max_blocks`` 1-100,
    ``max_chars`` 200-1,000,000, ``hit_candidates`` (retrieval hits
    examined) 1-1000, ``context_lines`` 0-50. Raises ``UsageError`` for an
    empty query or a bound out of range, ``PathError`` for a bad path.
    """
    if not isinstance(query, str) or not query.strip():
        raise UsageError("query is empty: pass a question or an identifier to focus on")
    check_int("max_files", max_files, 1, 50)
    check_int("blocks_per_file", blocks_per_file, 1, 50)
    check_int("max_blocks", max_blocks, 1, 100)
    check_budget(max_chars)
    check_int("hit_candidates", hit_candidates, 1, 1000)
    check_int("context_lines", context_lines, 0, MAX_CONTEXT_LINES)
    subpaths = resolve_paths(reader, paths)
    parsed = parse_query(query)
    tokens = parsed.tokens

    # Matched lines per file, each with its best score and the chunk it came from.
    per_file: dict[str, dict[int, tuple[float, Chunk]]] = {}
    for hit in _retrieve(reader, parsed, subpaths, hit_candidates):
        lines = per_file.setdefault(hit.chunk.path, {})
        for n in matching_lines(hit.chunk, tokens):
            if n not in lines or hit.score > lines[n][0]:
                lines[n] = (hit.score, hit.chunk)
    per_file = {p: m for p, m in per_file.items() if m}
    if not per_file:
        return FocusResult(query, subpaths, (), (), NO_MATCH)

    cands = {path: _candidates(reader, path, m) for path, m in per_file.items()}
    share = max_chars // max(1, min(max_blocks, sum(len(c) for c in cands.values())))
    # Only the best ``max_files`` files can be shown: only they are read back
    # from the index; the others go to the trailer as they are.
    ranked_files = sorted(cands, key=lambda p: min((-c.score, -len(c.hit_lines)) for c in cands[p]))
    texts: dict[str, _FileText] = {}
    blocks: list[FocusBlock] = []
    for path in ranked_files[:max_files]:
        text = texts[path] = _load_text(reader, path)
        for c in _resolve_nesting(cands[path], text, share):
            blocks.append(_freeze(c, text))
    for path in ranked_files[max_files:]:
        blocks.extend(_freeze_unread(c) for c in cands[path])
    blocks.sort(key=lambda b: (-b.score, -len(b.matched), b.path, b.start_line))

    chosen: list[FocusBlock] = []
    omitted: list[FocusBlock] = []
    files: list[str] = []
    per_file_count: dict[str, int] = {}
    for b in blocks:
        new_file = b.path not in files
        if (
            len(chosen) >= max_blocks
            or (new_file and len(files) >= max_files)
            or per_file_count.get(b.path, 0) >= blocks_per_file
        ):
            omitted.append(b)
            continue
        if new_file:
            files.append(b.path)
        per_file_count[b.path] = per_file_count.get(b.path, 0) + 1
        chosen.append(b)
    return _assemble(query, subpaths, chosen, omitted, texts, max_chars, context_lines, tokens)


def _assemble(
    query: str,
    subpaths: tuple[str, ...],
    chosen: list[FocusBlock],
    omitted: list[FocusBlock],
    texts: dict[str, _FileText],
    max_chars: int,
    context: int,
    tokens: frozenset[str],
) -> FocusResult:
    parts: list[str] = []
    rendered: list[RenderedFocusBlock] = []
    left_out: list[FocusBlock] = []
    used = 0
    for i, b in enumerate(chosen):
        sep = len(_SEP) if parts else 0
        rest = [*chosen[i + 1 :], *omitted]
        # Room is kept for a trailer naming what follows; capped so that a
        # long tail cannot starve the first blocks.
        trailer = _trailer(rest, min(max_chars - used, _TRAILER_RESERVE))
        reserve = len(_SEP) + len(trailer) if trailer else 0
        r = render_focus_block(b, texts[b.path], max_chars - used - sep - reserve, context, tokens)
        if r is None:
            left_out = list(chosen[i:])
            break
        parts.append(r.text)
        rendered.append(r)
        used += sep + len(r.text)
        if r.budget_cut:
            left_out = list(chosen[i + 1 :])
            break
    not_shown = [*left_out, *omitted]
    trailer = _trailer(not_shown, min(_TRAILER_MAX, max_chars - used - (len(_SEP) if parts else 0)))
    if trailer:
        parts.append(trailer)
    text = _SEP.join(parts) if parts else NO_MATCH
    return FocusResult(query, subpaths, tuple(rendered), tuple(not_shown), text[:max_chars])
