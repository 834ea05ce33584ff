"""What a chunker is and what it makes of a file: the chunking side of
:mod:`repolens.chunking`, which the read path never loads (creating a frozen
dataclass compiles its methods; a search that re-chunks nothing needs none
of these)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from repolens.chunking import Chunk, Symbol
from repolens.chunking.refs import RefRows


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    """What a chunker makes of one file: its chunks, the definitions found,
    whether parsing failed, and the uses of names (:mod:`repolens.chunking.refs`)."""

    chunks: list[Chunk]
    symbols: list[Symbol] = field(default_factory=list)
    parse_error: bool = False
    refs: RefRows | None = None


class Chunker(Protocol):
    """Anything that can cut a file into chunks.

    ``name`` and ``version`` are recorded in the index: a different chunker
    means the stored chunks are stale and must be rebuilt.
    """

    name: str
    version: int

    def chunk(self, path: str, text: str, language: str) -> ChunkedFile: ...


ChunkFn = Callable[[str, str, str], ChunkedFile]
