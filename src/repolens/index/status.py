"""What an index holds and how far it is behind the files on disk.

Freshness is computed, not remembered: the repository is discovered again
and compared with the index's file records (a stat per file; a hash only
when size or mtime moved), so ``status`` never claims an index is current
when it is not. A file the index does not hold is a change only if the
indexer would take it: files its content keeps out (binary, blank) are
remembered by the index with their size and mtime, and any other is read.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from repolens.budget import counted
from repolens.chunking.dispatch import chunker_identity
from repolens.discover import LoadedText, discover, file_hash, load_text
from repolens.fronts import say
from repolens.settings import Settings, load_settings
from repolens.store.base import IndexReader, Store


@dataclass
class IndexStatus:
    root: str
    index_dir: str
    generation: str
    files: int
    chunks: int
    symbols: int
    vectors_done: int
    vectors_total: int
    updated_at: str
    new: int
    modified: int
    deleted: int
    settings: dict[str, Any] = field(default_factory=dict)
    dense_search: str = ""  # exact, or the dense graph (IndexReader.dense_state), and why
    branch: str = ""  # the git branch the index was made from ("" outside git)
    history: str = ""  # what the history leg can draw on (see history_line)
    named_by: str = ""  # what named where the index lives (--store, REPOLENS_INDEX_DIR, ...)
    lag: str = ""  # read from a replica behind the primary's last published index (IndexReader.staleness)

    @property
    def changed(self) -> int:
        return self.new + self.modified + self.deleted

    def render(self) -> str:
        fresh = (
            "up to date"
            if not self.changed
            else f"{counted(self.changed, 'file')} changed on disk since "
            f"({self.new} new, {self.modified} modified, {self.deleted} deleted): "
            + ("the replica read lags (see the note)" if self.lag else f"{say('run index')} to refresh")
        )
        vectors = (
            f"{self.vectors_done}/{self.vectors_total} chunks"
            if self.settings.get("embed_identity")
            else "none (lexical only)"
        )
        lines = [
            f"index of {self.root} in {self.index_dir} ({self.generation}"
            + (f"; named by {self.named_by})" if self.named_by else ")"),
            f"files {self.files}, chunks {self.chunks}, symbols {self.symbols}, vectors {vectors}",
            *([f"dense search: {self.dense_search}"] if self.dense_search else []),
            f"history: {self.history}"
            + (": the history leg is off" if self.history.startswith("none") else ""),
            f"updated {self.updated_at}; {fresh}",
            "settings: " + ", ".join(f"{k}={v}" for k, v in self.settings.items()),
            *([f"note: {self.lag}"] if self.lag else []),
        ]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "changed": self.changed}


def index_status(store: Store, reader: IndexReader, settings: Settings | None = None) -> IndexStatus:
    settings = settings or load_settings(store.root)
    meta = reader.meta()
    records = reader.files()
    skips = reader.skipped_files()
    found = discover(
        store.root,
        max_file_bytes=settings.max_file_bytes,
        index_dir=store.local_folder,
        languages=settings.languages,
    )
    present = {src.path: src for src in found.files}
    new = modified = 0
    for path, src in present.items():
        rec = records.get(path)
        if rec is None:
            skip = skips.get(path)
            if skip is not None and (skip.size, skip.mtime_ns) == (src.size, src.mtime_ns):
                continue
            if isinstance(load_text(src.abs_path, max_file_bytes=settings.max_file_bytes), LoadedText):
                new += 1
        elif rec.size != src.size or rec.mtime_ns != src.mtime_ns:
            loaded = load_text(src.abs_path, max_file_bytes=settings.max_file_bytes)
            if not isinstance(loaded, LoadedText) or file_hash(loaded.data) != rec.hash:
                modified += 1
    deleted = sum(1 for path in records if path not in present)
    totals = reader.counts()
    done = reader.vector_count()
    shown = {
        "chunker": meta.get("chunker", chunker_identity(settings.chunker, settings.chunk_merge_lines)),
        "vectors": settings.vectors,
        "dense": settings.dense,
        "embed_identity": meta.get("embed_identity", ""),
        "embed_style": meta.get("embed_style", ""),
        "languages": meta.get("languages", ""),  # those the index holds ("": all)
        "symbol_boost": settings.symbol_boost,
        "priors": settings.priors,
        "top_k": settings.top_k,
        "max_chars": settings.max_chars,
    }
    return IndexStatus(
        root=str(store.root),
        index_dir=store.location,
        generation=reader.generation,
        files=totals["files"],
        chunks=totals["chunks"],
        symbols=totals["symbols"],
        vectors_done=int(done),
        vectors_total=totals["chunks"],
        updated_at=meta.get("updated_at", "unknown"),
        new=new,
        modified=modified,
        deleted=deleted,
        settings={k: v for k, v in shown.items() if v != ""},
        dense_search=reader.dense_state(settings.ann_min_vectors) if done else "",
        branch=meta.get("branch", ""),
        history=history_line(reader, store.root),
        named_by=store.named_by,
        lag=reader.staleness(),
    )


def history_line(reader: IndexReader, root: Path) -> str:
    """``4982 commits up to 422685d0bd``, or ``none (why)``; and how HEAD
    moved since, when it did."""
    from repolens.history.gitlog import moved_since

    state = reader.history_state()
    if state is None:
        return f"none (not read yet; {say('index')} reads it)"
    if not state.head:
        return f"none ({state.note})"
    line = f"{counted(state.commits, 'commit')} up to {state.head[:10]}"
    moved = moved_since(root, state.head)
    if moved is None:
        return line
    if moved.rewritten:
        return f"{line}, which HEAD no longer holds: {say('index')} reads it afresh"
    return f"{line}, behind HEAD by {counted(moved.newer, 'commit')}: {say('index')} reads it"
