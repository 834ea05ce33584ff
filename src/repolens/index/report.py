"""What an indexing run did: the report ``repolens index``, ``index_repo``
and the watcher print, apart from the run itself so that the adapters and the
replies read it without loading the indexer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.budget import counted

if TYPE_CHECKING:
    from repolens.history.sync import HistoryReport
    from repolens.index.vectors import VectorReport

ProgressFn = Callable[[int, int], None]


@dataclass
class IndexReport:
    root: Path
    location: str  # where the index lives (Store.location)
    mode: str = "build"  # build, refresh or resume
    reason: str = ""  # why a build instead of a refresh
    files: int = 0  # files in the index afterwards
    chunks: int = 0
    symbols: int = 0
    bytes: int = 0
    lines: int = 0
    added: int = 0
    changed: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    content_skipped: Counter[str] = field(default_factory=Counter)  # the part of skipped found by reading
    notes: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    discovery: str = "git"
    vectors: VectorReport | None = None
    branch: str = ""  # the git branch of the work tree, as recorded in the index ("" outside git)
    files_reused: int = 0  # files copied from a sibling branch's index instead of chunked
    chunks_reused: int = 0  # their chunks
    vectors_copied: int = 0  # their vectors (same model and style)
    history: HistoryReport | None = None
    languages: str = ""  # how the languages setting changed since the last run ("" when it did not)
    vectors_dropped: bool = False  # rebuilt without the vectors the old index had

    def summary(self) -> str:
        """The short report ``repolens index`` prints."""
        if self.mode == "refresh":
            head = (
                f"refreshed {self.location}: {self.added} new, {self.changed} changed, "
                f"{self.deleted} deleted, {self.unchanged} unchanged files in {self.seconds:.2f}s; "
                f"index holds {counted(self.files, 'file')}, {counted(self.chunks, 'chunk')}"
            )
        else:
            verb = "resumed and indexed" if self.mode == "resume" else "indexed"
            head = (
                f"{verb} {counted(self.files, 'file')} ({counted(self.lines, 'line')}, "
                f"{counted(self.chunks, 'chunk')}, {counted(self.symbols, 'symbol')}) "
                f"in {self.seconds:.1f}s -> {self.location}"
            )
        out = [head]
        if self.reason:
            out.append(f"rebuilt: {self.reason}")
        if self.languages:
            out.append(
                f"languages changed ({self.languages}): files of the others removed, of the new ones added"
            )
        if self.skipped:
            parts = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(self.skipped.items()))
            out.append(f"skipped: {parts}")
        if self.notes:
            parts = ", ".join(f"{n} {note.replace('_', ' ')}" for note, n in sorted(self.notes.items()))
            out.append(f"notes: {parts}")
        if self.files_reused:
            out.append(
                f"reused from sibling branches: {counted(self.files_reused, 'file')}, "
                f"{counted(self.chunks_reused, 'chunk')}, {counted(self.vectors_copied, 'vector')}"
            )
        if self.history is not None and self.history.mode != "unchanged":
            out.append(self.history.summary())
        if self.vectors is not None:
            out.append(self.vectors.summary())
        if self.vectors_dropped:
            out.append(
                "vectors: none in the rebuilt index, which had them: "
                "index with --vectors, or set vectors = true, to embed it"
            )
        return "\n".join(out)
