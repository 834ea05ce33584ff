"""``explain`` as a chart: each hit's legs and the learned model's features.

The page shows the packet an agent gets, so it reads the explanation from
that packet: the ``explain:`` line under each hit's header, written by
:meth:`repolens.search.hits.Hit.explain` (``tests/server/test_page_view.py``
parses what that method writes, so the two cannot drift apart)::

    explain: lexical #1 30.7, dense #4 0.812; fused 30.7 x prior 1.00 (source) + file 6.01
        -> learned 2.55 (file_tuned_best +0.78, chunk_terms +0.57) x spread 0.80 (2nd in its file) = 1

A chart has one bar per leg (its length: 1/rank in that leg, so a leg's
first hit is a full bar, as reciprocal rank fusion counts it) and one per
feature the learned model credits (signed: right for a feature that raised
the score, left for one that lowered it, scaled to the largest on the
page). The geometry is computed here and drawn by the template as inline
SVG: attributes, no ``style``, no script, so the page's
Content-Security-Policy allows it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

PREFIX = "explain: "
_LEG = re.compile(r"(?P<name>[\w-]+) #(?P<rank>\d+) (?P<score>[-+\d.e]+|nan|inf)")
_LEARNED = re.compile(r"-> learned (?P<score>[-+\d.e]+)(?: \((?P<moved>[^)]*)\))?")
_MOVED = re.compile(r"(?P<name>[\w.-]+) (?P<delta>[-+][\d.e]+)")
_FINAL = re.compile(r" = (?P<score>[-+\d.e]+)(?:;|$)")

# The chart's geometry (SVG user units).
WIDTH = 420
LABEL = 150  # the labels' column
BAR = WIDTH - LABEL - 60  # the longest bar; its value is written after it
ROW = 16


@dataclass(frozen=True)
class Leg:
    name: str
    rank: int
    score: float


@dataclass(frozen=True)
class Explained:
    """One hit's ``explain:`` line, read."""

    legs: tuple[Leg, ...]
    moved: tuple[tuple[str, float], ...]  # the learned model's features, signed, strongest first
    learned: float | None
    score: float | None


def parse(line: str) -> Explained | None:
    """An ``explain:`` line as :class:`Explained`; None for any other line."""
    if not line.startswith(PREFIX):
        return None
    body = line[len(PREFIX) :]
    legs_text, _, steps = body.partition("; ")
    legs = tuple(Leg(m["name"], int(m["rank"]), _number(m["score"])) for m in _LEG.finditer(legs_text))
    learned = _LEARNED.search(steps)
    moved: tuple[tuple[str, float], ...] = ()
    if learned and learned["moved"]:
        moved = tuple((m["name"], float(m["delta"])) for m in _MOVED.finditer(learned["moved"]))
    final = _FINAL.search(steps)
    return Explained(
        legs=legs,
        moved=moved,
        learned=_number(learned["score"]) if learned else None,
        score=_number(final["score"]) if final else None,
    )


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


@dataclass(frozen=True)
class Bar:
    """One row of a chart: its label, value text, and the bar's x and width."""

    y: int
    label: str
    value: str
    x: float
    width: float
    sign: str  # "leg", "up" or "down": the bar's CSS class


@dataclass(frozen=True)
class Chart:
    bars: tuple[Bar, ...]
    height: int
    width: int = WIDTH
    label_width: int = LABEL
    middle: float = LABEL + BAR / 2

    @property
    def has_features(self) -> bool:
        return any(b.sign != "leg" for b in self.bars)


def chart(explained: Explained, largest_move: float) -> Chart:
    """The bars of one hit; ``largest_move``: the largest |feature move| of
    the page's hits, so that the hits' feature bars compare."""
    bars: list[Bar] = []
    y = 0
    for leg in explained.legs:
        bars.append(
            Bar(y, f"{leg.name} #{leg.rank}", f"{leg.score:.3g}", LABEL, BAR / max(leg.rank, 1), "leg")
        )
        y += ROW
    half = BAR / 2
    for name, delta in explained.moved:
        width = half * abs(delta) / largest_move if largest_move > 0 else 0.0
        x = LABEL + half if delta >= 0 else LABEL + half - width
        bars.append(Bar(y, name, f"{delta:+.2f}", x, width, "up" if delta >= 0 else "down"))
        y += ROW
    return Chart(tuple(bars), max(y, ROW))


def largest_move(explained: Sequence[Explained]) -> float:
    return max((abs(d) for e in explained for _, d in e.moved), default=0.0)
