"""Argument checks shared by the core functions the adapters call."""

from __future__ import annotations

from collections.abc import Mapping, Set

from repolens.chunk.grammars import KIND_ALIASES, KINDS
from repolens.chunk.languages import LANGUAGE_ALIASES, LANGUAGES
from repolens.errors import UsageError


def check_int(name: str, value: object, lo: int, hi: int) -> int:
    """``value`` when it is a whole number in ``[lo, hi]``; else a one-line
    ``UsageError`` naming the argument and its bounds (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be an integer between {lo} and {hi}")
    if not lo <= value <= hi:
        raise UsageError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


def check_choice(what: str, value: object, choices: Set[str], aliases: Mapping[str, str]) -> str | None:
    """The canonical spelling of ``value`` (case and surrounding space ignored,
    an alias mapped to its name); None for None or blank. Anything else is a
    ``UsageError`` listing the choices and the aliases: a filter that names
    nothing real must not answer "nothing found"."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string")
    key = value.strip().lower()
    if not key:
        return None
    if key in choices:
        return key
    if key in aliases:
        return aliases[key]
    shown = repr(value) if len(value) <= 60 else repr(value[:60]) + "..."
    raise UsageError(
        f"unknown {what} {shown}: use one of {', '.join(sorted(choices))} (or {', '.join(aliases)})"
    )


def check_language(value: object) -> str | None:
    """A language filter: a name of :data:`repolens.chunk.languages.LANGUAGES` or an alias (``py``)."""
    return check_choice("language", value, LANGUAGES, LANGUAGE_ALIASES)


def check_kind(value: object) -> str | None:
    """A kind filter: a name of :data:`repolens.chunk.grammars.KINDS` or an alias (``func``)."""
    return check_choice("kind", value, KINDS, KIND_ALIASES)
