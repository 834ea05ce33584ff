"""What a search returns: ranked :class:`Hit` values in a :class:`SearchOutcome`,
and which lines of a hit's chunk match the question (:func:`matching_lines`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from repolens.chunking import Chunk
from repolens.chunking.labels import repeated_header_lines
from repolens.search.filters import Filters
from repolens.search.query import ParsedQuery
from repolens.tokens import TermsIn, lines_with_token


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked chunk, with how its score came about."""

    cid: int
    chunk: Chunk
    score: float
    # Per leg: (rank starting at 1, the leg's own score); for --explain.
    legs: dict[str, tuple[int, float]] = field(default_factory=dict)
    # How the final score came about: fused legs, role prior, file evidence.
    factors: dict[str, float | str] = field(default_factory=dict)
    # Set when the cited file changed since indexing (see repolens.search.freshness).
    stale: str = ""

    def explain(self) -> str:
        """One line: each leg's rank and score, then every step from the fused
        score to ``score`` (the one that decided the order), in the order
        applied: role prior, file evidence, the reranker's vote, the spread
        over files."""
        legs = ", ".join(f"{name} #{rank} {score:.3g}" for name, (rank, score) in self.legs.items())
        f = self.factors
        steps = [f"fused {f.get('fused', self.score):.3g}"]
        if "prior" in f:
            steps.append(f"x prior {f['prior']:.2f} ({f.get('role', '')})")
        if f.get("file"):
            steps.append(f"+ file {f['file']:.3g}")
        if "learned" in f:
            moved = f" ({f['moved']})" if f.get("moved") else ""
            steps.append(f"-> learned {f['learned']:.3g}{moved}")
        if "vote" in f:
            steps.append(f"-> rerank vote {f['vote']:.3g}")
        if "spread" in f:
            steps.append(f"x spread {f['spread']:.2f} ({_ordinal(int(f.get('nth', 0)))} in its file)")
        if "across" in f:  # a search of several repositories: the score they are ranked by
            steps.append(f"-> across {f['across']:.3g}")
        line = f"explain: {legs or 'no leg'}; {' '.join(steps)} = {self.score:.3g}"
        return f"{line}; history: {f['history']}" if f.get("history") else line

    @property
    def relevance(self) -> float:
        """The score before the spread over files lowered it: what the chunk
        is worth on its own (a file overview sums these per file)."""
        return self.score / float(self.factors.get("spread", 1.0))


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class SearchOutcome:
    """One search: the parsed question, its filters, the ranked hits, and
    the notes a reply prints above them (a missing or partial leg, a search
    that could not be remembered, cited files that changed since indexing).

    Mutable (freshening replaces ``hits``, later steps add notes), and a
    plain class: a dataclass compiles its generated methods (unused here)
    when created, which every new process pays (docs/benchmarks.md)."""

    __slots__ = ("filters", "hits", "notes", "query")

    def __init__(
        self,
        query: ParsedQuery,
        hits: list[Hit],
        notes: list[str] | None = None,
        filters: Filters | None = None,
    ) -> None:
        self.query = query
        self.hits = hits
        self.notes = [] if notes is None else notes
        self.filters = Filters() if filters is None else filters


def own_lines(chunk: Chunk) -> list[str]:
    """The lines of ``chunk``'s text that are its own, the first at
    ``chunk.start_line``: parts 2..n of a split definition repeat the
    definition's header at the top of their text, and those lines are not
    theirs (see :func:`repolens.chunking.labels.repeated_header_lines`). There
    are never more of them than the chunk's span has lines."""
    lines = chunk.text.split("\n")
    header = repeated_header_lines(chunk)
    return lines[header:] if header else lines


def matching_lines(chunk: Chunk, tokens: frozenset[str] | TermsIn) -> list[int]:
    """Line numbers of ``chunk``'s own lines that contain a query token:
    THE test of a matching line, for packets (which lines to show) and for
    focus (which definitions to show). ``tokens`` may come as a
    :class:`~repolens.tokens.TermsIn` of them, which a reply asks of all its
    hits (each piece of code split once)."""
    start, lines = chunk.start_line, own_lines(chunk)
    found = tokens.lines_with_term(lines) if isinstance(tokens, TermsIn) else lines_with_token(lines, tokens)
    return [start + i for i in found]
