"""Finding focused context: the enclosing definitions of a query's matches.

The search half of ``repolens focus`` (the rendering under budgets is
:mod:`repolens.reply.focus`). A *match* is a line of a chunk retrieval
returned (:func:`repolens.search.ranking.search`: the same ranking, legs
and settings as ``search``) that matches the query
(:func:`repolens.search.hits.matching_lines`, the same test as packets).
Each match is mapped to its innermost enclosing definition (function,
method, class, section...) from the index's symbol table; matches in code
outside any definition (imports, top-level statements, files chunked by
line windows) map to the chunk they are in, or to the run of top-level
lines between definitions around them. Several
matches in one definition make one candidate; candidates whose ranges
overlap without nesting are merged; a candidate inside another is resolved
by :func:`resolve_nesting`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.chunking import Chunk
from repolens.errors import PathError, UsageError
from repolens.search.filters import Filters, no_indexed_file
from repolens.search.hits import Hit, matching_lines
from repolens.search.query import ParsedQuery
from repolens.search.ranking import search
from repolens.store.base import IndexReader, SymbolRow
from repolens.validate import check_path_count, check_subpath

if TYPE_CHECKING:
    from repolens.settings import Settings

# Symbols that are part of top-level code rather than bounding it.
_NOT_BOUNDARIES = frozenset({"constant", "block", "section"})

# Per file: matched line -> (best retrieval score, the chunk it came from).
FileMatches = dict[int, tuple[float, Chunk]]


def resolve_paths(reader: IndexReader, paths: Sequence[str]) -> tuple[str, ...]:
    """Root-relative files or folders, each holding at least one indexed file.

    Read as a search's path filter reads them
    (:func:`repolens.validate.check_subpath`: ``./`` and ``//`` dropped,
    absolute paths inside the indexed root made relative), backslashes as
    slashes. Raises ``PathError`` for a path outside the root, with ``..``,
    or with nothing indexed at or under it.
    """
    if isinstance(paths, str):
        paths = (paths,)
    check_path_count("paths", paths)
    root = reader.meta().get("root", "")
    out: list[str] = []
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip():
            raise UsageError("path is empty: pass a file or folder relative to the repository root")
        given = raw.strip().replace("\\", "/")
        if ".." in given.split("/"):
            raise PathError(f"path {raw!r} contains '..': pass a path inside the repository root")
        if given.startswith("/") and not root:
            raise PathError(f"path {raw!r} is absolute and the index records no root: pass a relative path")
        try:
            p = check_subpath(given, root or None)
        except UsageError as exc:  # outside the root, or a control character
            raise PathError(str(exc)) from exc
        if p is None:
            return ()  # the whole repository: no restriction at all
        if not reader.has_path(p):
            raise no_indexed_file(reader, p, "paths")
        out.append(p)
    return tuple(dict.fromkeys(out))


def retrieve(
    reader: IndexReader, root: Path, query: str, settings: Settings, subpaths: Sequence[str], limit: int
) -> tuple[ParsedQuery, list[Hit]]:
    """The question as a search reads it (partial identifiers completed) and
    the best ``limit`` retrieval hits, best first, ranked as a search ranks
    them (:func:`repolens.search.ranking.search`, with ``settings``); with
    ``subpaths``, the best of one search per path."""
    if not subpaths:
        outcome = search(reader, root, query, settings, Filters(), limit=limit)
        return outcome.query, outcome.hits
    best: dict[int, Hit] = {}
    for p in subpaths:
        outcome = search(reader, root, query, settings, Filters(subpath=p), limit=limit)
        for h in outcome.hits:
            if h.cid not in best or h.score > best[h.cid].score:
                best[h.cid] = h
    return outcome.query, sorted(best.values(), key=lambda h: -h.score)[:limit]


def matches_by_file(hits: Sequence[Hit], tokens: frozenset[str]) -> dict[str, FileMatches]:
    """The matched lines of ``hits`` per file (files without one left out),
    each with its best score and the chunk it came from."""
    per_file: dict[str, FileMatches] = {}
    for hit in hits:
        lines = per_file.setdefault(hit.chunk.path, {})
        for n in matching_lines(hit.chunk, tokens):
            if n not in lines or hit.score > lines[n][0]:
                lines[n] = (hit.score, hit.chunk)
    return {p: m for p, m in per_file.items() if m}


@dataclass(slots=True, eq=False)
class Candidate:
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


def _innermost(syms: Sequence[SymbolRow], line: int) -> SymbolRow | None:
    best: SymbolRow | None = None
    for s in syms:
        if s.start_line <= line <= s.end_line and (
            best is None or s.end_line - s.start_line < best.end_line - best.start_line
        ):
            best = s
    return best


def candidates(reader: IndexReader, path: str, matches: FileMatches) -> list[Candidate]:
    """One candidate per enclosing definition (or chunk, outside any) of the matched lines."""
    syms = reader.symbols_of_file(path)
    by_key: dict[tuple[int, int, str, str], Candidate] = {}
    for line, (score, chunk) in sorted(matches.items()):
        sym = _innermost(syms, line)
        if sym is not None:
            key = (sym.start_line, sym.end_line, sym.kind, sym.qualname)
            fields_ = (sym.kind, sym.qualname, sym.signature, sym.language)
        elif chunk.kind == "window":
            key = (chunk.start_line, chunk.end_line, chunk.kind, chunk.qualname)
            fields_ = (chunk.kind, chunk.qualname, chunk.signature, chunk.language)
        else:
            # Top-level code: the run of lines around the match between
            # definitions (a packed chunk may also hold definitions).
            defs = [s for s in syms if s.kind not in _NOT_BOUNDARIES]
            start = max([chunk.start_line, *(s.end_line + 1 for s in defs if s.end_line < line)])
            end = min([chunk.end_line, *(s.start_line - 1 for s in defs if s.start_line > line)])
            key = (start, end, "block", "")
            fields_ = ("block", "", "", chunk.language)
        cand = by_key.get(key)
        if cand is None:
            kind, qual, sig, lang = fields_
            cand = Candidate(path, key[0], key[1], kind, qual, sig, lang, score, set())
            by_key[key] = cand
        cand.score = max(cand.score, score)
        cand.hit_lines.add(line)
    return _merge_overlaps(list(by_key.values()))


def _merge_overlaps(cands: list[Candidate]) -> list[Candidate]:
    """Merge candidates whose ranges overlap without one holding the other
    (overlapping line windows), so that no line is shown twice."""
    out: list[Candidate] = []
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


@dataclass(frozen=True)
class FocusCandidates:
    """What focus found: the paths it was restricted to, and per file its
    candidates, files best first (by their best candidate's score, then its
    number of matched lines)."""

    subpaths: tuple[str, ...]
    by_file: dict[str, list[Candidate]]
    ranked_files: list[str]


def find_candidates(
    reader: IndexReader,
    root: Path,
    query: str,
    settings: Settings,
    paths: Sequence[str],
    hit_candidates: int,
) -> FocusCandidates:
    """The candidates of ``query``'s matches among the best
    ``hit_candidates`` retrieval hits (:func:`retrieve`), within ``paths``
    (``PathError`` for a bad one, see :func:`resolve_paths`)."""
    subpaths = resolve_paths(reader, paths)
    parsed, hits = retrieve(reader, root, query, settings, subpaths, hit_candidates)
    per_file = matches_by_file(hits, parsed.tokens)
    cands = {path: candidates(reader, path, m) for path, m in per_file.items()}
    ranked = sorted(cands, key=lambda p: min((-c.score, -len(c.hit_lines)) for c in cands[p]))
    return FocusCandidates(subpaths, cands, ranked)


def resolve_nesting(
    cands: list[Candidate], whole_chars: Callable[[Candidate], int], share: int
) -> list[Candidate]:
    """A candidate inside another: the outer absorbs it if the outer shown
    whole (``whole_chars``) is within ``share`` chars, else the inner stays
    and becomes a hole of the outer. Outer candidates are decided first
    (largest first)."""
    alive = sorted(cands, key=lambda c: -(c.end - c.start))
    result: list[Candidate] = []
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
            if whole_chars(outer) <= share:
                for c in inner:
                    absorbed.add(id(c))
                    outer.score = max(outer.score, c.score)
                    outer.hit_lines |= c.hit_lines
            else:
                outer.holes = _union([(c.start, c.end) for c in inner])
        result.append(outer)
    return result


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def in_holes(n: int, holes: Sequence[tuple[int, int]]) -> bool:
    """Whether line ``n`` lies in one of ``holes`` (ranges shown by nested blocks)."""
    return bool(holes) and any(a <= n <= b for a, b in holes)
