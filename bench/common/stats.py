"""Percentiles and markdown tables, as every benchmark prints them."""

from __future__ import annotations

from collections.abc import Sequence


def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank: the value at
    ``round(q * (n - 1))`` in sorted order, so ``pct(v, 0.5)`` is a median that
    is one of the values); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms_pct(seconds: Sequence[float], q: float) -> float:
    """:func:`pct` of durations in seconds, in milliseconds."""
    return pct(seconds, q) * 1000


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def fmt(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals; ``-`` for NaN (nothing measured)."""
    return "-" if x != x else f"{x:.{digits}f}"
