"""Argument checks shared by the core functions the adapters call."""

from __future__ import annotations

from repolens.errors import UsageError


def check_int(name: str, value: object, lo: int, hi: int) -> int:
    """``value`` when it is a whole number in ``[lo, hi]``; else a one-line
    ``UsageError`` naming the argument and its bounds (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be an integer between {lo} and {hi}")
    if not lo <= value <= hi:
        raise UsageError(f"{name} must be between {lo} and {hi}, got {value}")
    return value
