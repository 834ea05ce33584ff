"""A test run's budgets (timeout, output size): defaults, bounds, and the checks every entry point shares.

Kept apart so that ``runners``, ``arguments``, ``output`` and ``run_tests``
check a root or a budget, and quote a bad value in an error message, the same
way without importing each other.
"""

from __future__ import annotations

from repolens.errors import UsageError
from repolens.validate import MAX_BUDGET, MIN_BUDGET

DEFAULT_TIMEOUT_S = 300.0
MIN_TIMEOUT_S = 1.0
MAX_TIMEOUT_S = 3600.0
TIMEOUT_EXIT_CODE = 124  # what coreutils `timeout` reports; agents know it

DEFAULT_MAX_CHARS = 4000
DEFAULT_MAX_LINES = 200
DEFAULT_TAIL_LINES = 40
DEFAULT_CONTEXT = 1
_BOUNDS: dict[str, tuple[float, float]] = {
    "timeout_s": (MIN_TIMEOUT_S, MAX_TIMEOUT_S),
    "max_chars": (MIN_BUDGET, MAX_BUDGET),
    "max_lines": (1, 10_000),
    "tail_lines": (1, 1_000),
    "context": (0, 10),
}


def check_bounds(**values: float) -> None:
    """``UsageError`` unless every budget (a key of ``_BOUNDS``) is in its bounds; booleans are refused."""
    for key, value in values.items():
        lo, hi = _BOUNDS[key]
        kinds = (int, float) if key == "timeout_s" else (int,)
        if isinstance(value, bool) or not isinstance(value, kinds) or not lo <= value <= hi:
            what = "a number" if key == "timeout_s" else "an integer"
            raise UsageError(f"{key} must be {what} between {lo:,.0f} and {hi:,.0f}, got {show(value)}")


def show(value: object) -> str:
    """``repr(value)`` cut to 60 characters: how a bad value is quoted in an error message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
