"""Ranked file overview: which files to open, and why.

For broad exploration an agent first wants the handful of files that matter,
not their lines. Chunk hits are aggregated per file: a decayed sum of chunk
scores (the best chunk counts fully, the next ones less, so a file with one
strong hit is not buried by a file with many weak ones), scaled by a prior
on the file's role (source over tests, docs and generated code) so source
wins when scores are close. Each file comes with its evidence: how many
hits, which query terms it contains, which definitions it holds that the
query names, and its role.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator, Sequence

from repolens.budget import BLOCK_SEP, counted, more_did_not_fit, note_lines
from repolens.record import Record
from repolens.roles import DEFINITION_KINDS, OVERVIEW_WEIGHT, path_role
from repolens.search.hits import Hit
from repolens.search.query import ParsedQuery
from repolens.tokens import TermsIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The terms a file matches are read from its best few hits only: tokenizing
# every hit of every named file was a third of a warm search.
EVIDENCE_HITS = 3
# A packet's pointer to a next file names the lines of the file's best hit:
# its terms are those lines' (what the agent finds there if it reads them),
# which also reads a third of the text (~3% of a warm search).
POINTER_EVIDENCE_HITS = 1
_DECAY = 0.5  # weight of the k-th best chunk of a file: _DECAY ** k


class FileEntry(Record):
    """One file of a ranked file overview, with the evidence that ranked it."""

    path: str
    score: float
    hits: int
    terms: tuple[str, ...]  # query words found in the file's best hits (ranked_files)
    terms_total: int
    defines: tuple[str, ...]  # definitions among the hits that the query names
    role: str
    best: tuple[int, int]  # line range of the best hit

    def reason(self) -> str:
        parts = [f"{len(self.terms)} of {self.terms_total} terms"]
        if self.defines:
            shown = ", ".join(self.defines[:3]) + (
                f" +{len(self.defines) - 3}" if len(self.defines) > 3 else ""
            )
            parts.append(f"defines {shown}")
        parts.append(f"{self.role} file")
        return ", ".join(parts)

    def line(self) -> str:
        return (
            f"{self.path} (score {self.score:.2f}, {counted(self.hits, 'hit')}, "
            f"best {self.best[0]}-{self.best[1]}): "
            f"{self.reason()}"
        )

    def pointer_json(self) -> dict[str, Any]:
        """The entry as a packet's pointer to a next file."""
        return {
            "path": self.path,
            "start_line": self.best[0],
            "end_line": self.best[1],
            "reason": self.reason(),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "score": round(self.score, 4),
            "hits": self.hits,
            "terms_matched": list(self.terms),
            "terms_total": self.terms_total,
            "defines": list(self.defines),
            "role": self.role,
            "best_lines": list(self.best),
            "reason": self.reason(),
        }


def file_overview(
    hits: Sequence[Hit], query: ParsedQuery, limit: int = 10, found_in: TermsIn | None = None
) -> list[FileEntry]:
    """The top ``limit`` files of a ranked chunk list, with their evidence."""
    return list(itertools.islice(ranked_files(hits, query, found_in=found_in), limit))


def ranked_files(
    hits: Sequence[Hit],
    query: ParsedQuery,
    exclude: Collection[str] = (),
    found_in: TermsIn | None = None,
    evidence_hits: int = EVIDENCE_HITS,
) -> Iterator[FileEntry]:
    """Every file of a ranked chunk list but ``exclude``, best first, each
    with its evidence: the query's terms in its best ``evidence_hits`` hits.

    Ranking the files is cheap; the evidence reads the text of a file's hits,
    so it is gathered as the entries are taken, for those files only.
    ``found_in``: a :class:`~repolens.tokens.TermsIn` of the query's tokens
    that the reply shares (each piece of code split once).
    """
    by_file: dict[str, list[Hit]] = {}
    for h in hits:
        by_file.setdefault(h.chunk.path, []).append(h)
    scored = []
    for path, file_hits in by_file.items():
        ordered = sorted(file_hits, key=lambda h: -h.relevance)
        role = path_role(path)
        score = sum(h.relevance * _DECAY**k for k, h in enumerate(ordered)) * OVERVIEW_WEIGHT.get(role, 1.0)
        scored.append((score, path, role, ordered))
    scored.sort(key=lambda item: -item[0])  # stable: equal scores keep rank order
    surface = {t.token: t.surface or t.token for t in query.terms}
    wanted = frozenset(surface)
    if found_in is None or found_in.terms != wanted:
        found_in = TermsIn(wanted)
    named = {i.lower().replace("_", "") for i in query.identifiers}
    for score, path, role, ordered in scored:
        if path in exclude:
            continue
        found: set[str] = set()
        defines: list[str] = []
        for k, h in enumerate(ordered):
            c = h.chunk
            if k < evidence_hits and len(found) < len(surface):
                found.update(found_in(c.text))
            defined = str(h.factors.get("defines", ""))  # from the symbol leg
            if not defined and c.kind in DEFINITION_KINDS and c.name.lower().replace("_", "") in named:
                defined = c.qualname
            if defined and defined not in defines:
                defines.append(defined)
        yield FileEntry(
            path=path,
            score=score,
            hits=len(ordered),
            terms=tuple(surface[t] for t in surface if t in found),
            terms_total=len(surface),
            defines=tuple(defines),
            role=role,
            best=(ordered[0].chunk.start_line, ordered[0].chunk.end_line),
        )


NO_FILES = "No matching files found."


def render_files(
    entries: Sequence[FileEntry], max_chars: int, footer: str = "", notes: Sequence[str] = ()
) -> str:
    """The search's ``notes`` (as many as leave room for the first file),
    then one line per file, best first, never over ``max_chars``."""
    first = f"1. {entries[0].line()}" if entries else NO_FILES
    kept = list(notes)
    while kept and len(note_lines(kept)) + len(BLOCK_SEP) + len(first) + len(footer) + 1 > max_chars:
        kept.pop()
    head = f"{note_lines(kept)}{BLOCK_SEP}" if kept else ""
    if not entries:
        return f"{head}{NO_FILES}" + (f"\n{footer}" if footer else "")
    lines: list[str] = []
    size = len(head) + (len(footer) + 1 if footer else 0)
    for i, e in enumerate(entries):
        line = f"{i + 1}. {e.line()}"
        rest = len(entries) - i - 1
        tail = more_did_not_fit("file", rest) if rest else ""
        if size + len(line) + 1 + (len(tail) + 1 if tail else 0) > max_chars:
            lines.append(more_did_not_fit("file", len(entries) - i))
            break
        lines.append(line)
        size += len(line) + 1
    if footer:
        lines.append(footer)
    return (head + "\n".join(lines))[:max_chars]
