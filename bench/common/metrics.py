"""Scoring for the development set, exactly as ``shared/bench/README.md`` defines it.

A system's answer to one query is a ranked list of :class:`Hit`: a file and
the line ranges the agent was shown (or pointed at) for it. Pure functions,
no I/O, so they can be checked by hand on a single query.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MAX_FILES = 10  # the README scores the first 10 distinct files / 10 hits
LINE_HITS = 5  # Line@5 looks at the first 5 hits


@dataclass(frozen=True)
class Hit:
    """One ranked hit: a file and the 1-based inclusive line ranges it covers.

    repolens: one block of the packet (one range). rg baseline: one file with
    its ``-C2`` context groups (several ranges).
    """

    path: str
    ranges: tuple[tuple[int, int], ...]
    # The lines the agent reads, as ranges, when fewer than ``ranges`` (a
    # repolens block shows only some lines of its span); None: all of them.
    shown: tuple[tuple[int, int], ...] | None = None
    # A pointer names a file and a span but shows no line (a packet's "next
    # files"): it counts for the file metrics, not for Line@5.
    pointer: bool = False


@dataclass
class Answer:
    """What one system returned for one query."""

    hits: list[Hit] = field(default_factory=list)
    chars: int = 0
    latency_ms: float | None = None
    note: str = ""  # why the answer is empty or degraded (index failed, error, ...)
    extra: dict = field(default_factory=dict)


def distinct_files(hits: Iterable[Hit]) -> list[str]:
    """Files of ``hits`` in first-appearance order."""
    return list(dict.fromkeys(h.path for h in hits))


def first_gold_rank(files: Sequence[str], gold_files: Iterable[str]) -> int | None:
    """1-based rank of the first gold file among the first ``MAX_FILES`` files."""
    gold = set(gold_files)
    for rank, path in enumerate(files[:MAX_FILES], 1):
        if path in gold:
            return rank
    return None


def all_gold_within(files: Sequence[str], gold_files: Iterable[str], k: int) -> bool:
    """Acc@k: every gold file is among the first ``k`` distinct files."""
    return set(gold_files) <= set(files[:k])


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def line_hit(hits: Sequence[Hit], gold: Iterable[dict], k: int = LINE_HITS) -> bool:
    """Line@k: one of the first ``k`` hits has a range overlapping a gold entry of the same file.

    ``gold`` holds dicts with ``path``, ``start_line``, ``end_line``
    (``gold_ranges`` and/or ``gold_functions`` entries).
    """
    by_path: dict[str, list[tuple[int, int]]] = {}
    for g in gold:
        by_path.setdefault(g["path"], []).append((g["start_line"], g["end_line"]))
    for hit in [h for h in hits if not h.pointer][:k]:
        for r in hit.ranges:
            if any(_overlaps(r, g) for g in by_path.get(hit.path, ())):
                return True
    return False


def functions_hit(hits: Sequence[Hit], functions: Iterable[dict], k: int = LINE_HITS) -> float | None:
    """Func@k: every gold function (``gold_functions``: the definitions
    enclosing the changed lines) overlaps one of the first ``k`` hits, the
    function-level Acc@k of SWE-bench localisation; None when the question
    has none (a change outside any definition), so it is left out of the mean."""
    wanted = {(g["path"], g["start_line"], g["end_line"]) for g in functions}
    if not wanted:
        return None
    shown = [h for h in hits if not h.pointer][:k]
    return float(
        all(
            any(h.path == path and any(_overlaps(r, (a, b)) for r in h.ranges) for h in shown)
            for path, a, b in wanted
        )
    )


def shown_hit(hit: Hit) -> Hit:
    """``hit`` reduced to the lines it shows."""
    return hit if hit.shown is None else Hit(hit.path, hit.shown)


def line_ranges(numbers: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Sorted line numbers as maximal ranges: 1, 2, 3, 7 -> (1, 3), (7, 7)."""
    out: list[list[int]] = []
    for n in sorted(set(numbers)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return tuple((a, b) for a, b in out)


def score(answer: Answer, query: dict) -> dict:
    """Per-query metrics of ``answer`` against ``query``'s gold fields (never ``source``)."""
    files = distinct_files(answer.hits)
    rank = first_gold_rank(files, query["gold_files"])
    return {
        "files": files[:MAX_FILES],
        "first_gold_rank": rank,
        "acc1": float(all_gold_within(files, query["gold_files"], 1)),
        "acc5": float(all_gold_within(files, query["gold_files"], 5)),
        "acc10": float(all_gold_within(files, query["gold_files"], 10)),
        "mrr": 1.0 / rank if rank else 0.0,
        "line5": float(line_hit(answer.hits, query["gold_ranges"])),
        # lenient: the enclosing definitions count too (empty for module-level changes)
        "line5_fn": float(line_hit(answer.hits, [*query["gold_ranges"], *query["gold_functions"]])),
        # all the changed definitions shown (None: the question has no gold function)
        "func5": functions_hit(answer.hits, query.get("gold_functions", ())),
        # strict: a gold line is among the lines shown, not just inside a hit's span
        "shown5": float(line_hit([shown_hit(h) for h in answer.hits], query["gold_ranges"])),
        # lines the first 5 hits claim (Line@5 is easier for wide blocks)
        "span5": sum(
            b - a + 1 for h in [h for h in answer.hits if not h.pointer][:LINE_HITS] for a, b in h.ranges
        ),
        "chars": answer.chars,
        "latency_ms": answer.latency_ms,
    }


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def summarize(rows: Sequence[dict]) -> dict:
    """Means of the quality metrics, and median/p90/mean of chars and latency, over ``rows``."""
    chars = [r["chars"] for r in rows]
    lat = [r["latency_ms"] for r in rows if r["latency_ms"] is not None]
    out = {"n": len(rows)}
    for key in ("acc1", "acc5", "acc10", "mrr", "line5", "line5_fn", "shown5"):
        out[key] = mean([r[key] for r in rows])
    out["func5"] = mean([r["func5"] for r in rows if r.get("func5") is not None])
    out |= {
        "span5_p50": statistics.median([r["span5"] for r in rows]) if rows else math.nan,
        "chars_p50": statistics.median(chars) if chars else math.nan,
        "chars_p90": percentile(chars, 0.9),
        "chars_mean": mean(chars),
        "lat_p50": statistics.median(lat) if lat else math.nan,
        "lat_p90": percentile(lat, 0.9),
    }
    return out
