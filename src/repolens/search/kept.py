"""What a question works out of an index's files, kept while the index's content stays.

The rules that resolve references across files ask the same things again and
again: a walk through types reads one file's definitions in every round, every
definition of a Go or Rust file asks for the index's ``go.mod`` or ``Cargo.toml``
files, each use of a Rust method's name the line it stands on. :func:`per_index`
keeps such an answer by :meth:`IndexReader.cache_key` (which changes with the
index's content, so nothing kept goes stale) and the call's other arguments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from repolens.store.base import IndexReader, SymbolRow
from repolens.store.file_text import file_lines

P = ParamSpec("P")
V = TypeVar("V")

# What a process keeps of one kind at most: of one per index (a process asks one or a few), of
# one per file.
INDEXES_HELD = 16
FILES_HELD = 20_000
# A file's lines weigh more than its definitions: fewer are kept.
_LINES_HELD = 1_000

_MISSING = object()


def per_index(
    held: int,
) -> Callable[[Callable[Concatenate[IndexReader, P], V]], Callable[Concatenate[IndexReader, P], V]]:
    """Keep what the decorated ``f(reader, *args)`` returns by the reader's index content and
    ``args``; all of it is dropped at once when ``held`` answers are kept (a process asks one
    or a few indexes, and a question mostly asks again what it asked just now). What is kept
    is shared: a caller never changes it."""

    def keep(make: Callable[Concatenate[IndexReader, P], V]) -> Callable[Concatenate[IndexReader, P], V]:
        kept: dict[tuple[object, ...], V] = {}

        @functools.wraps(make)
        def kept_make(reader: IndexReader, *args: P.args, **kwargs: P.kwargs) -> V:
            key = (reader.cache_key(), *args, *sorted(kwargs.items()))
            value = kept.get(key, _MISSING)
            if value is _MISSING:
                if len(kept) >= held:
                    kept.clear()
                value = kept[key] = make(reader, *args, **kwargs)
            return value  # type: ignore[return-value]

        return kept_make

    return keep


@per_index(FILES_HELD)
def symbols_in(reader: IndexReader, path: str) -> list[SymbolRow]:
    """``reader.symbols_of_file(path)``: a walk asks for the same files many times."""
    return reader.symbols_of_file(path)


@per_index(_LINES_HELD)
def lines_of(reader: IndexReader, path: str) -> dict[int, str]:
    """The lines of ``path`` (1-based) as the index holds them (:func:`file_lines` of its
    chunks): the rules of several questions read the same file's lines."""
    return file_lines(reader.chunks_of_file(path))


def text_of(reader: IndexReader, path: str) -> str:
    """The text of ``path`` as the index holds it (:func:`lines_of`, joined): a manifest a rule
    parses whole (``go.mod``, ``Cargo.toml``)."""
    lines = lines_of(reader, path)
    return "\n".join(lines.get(n, "") for n in range(1, max(lines, default=0) + 1))
