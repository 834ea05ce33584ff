"""Build an index: discover -> read -> chunk -> store, then publish atomically.

A build writes a fresh generation beside the published one (see
``store.layout``), committing in batches, and swaps it in only when it is
complete. Searches running meanwhile keep reading the previous generation;
a crash leaves that generation current and untouched.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.chunk import ChunkedFile, chunk_file, chunking_config
from repolens.chunk.languages import language_for
from repolens.config import Settings, load_embed_config, load_settings
from repolens.discover import Discovery, LoadedText, SourceFile, discover, load_text, nothing_to_index
from repolens.store import DB_NAME, IndexHandle, format_versions
from repolens.store import sqlite as sq
from repolens.store.layout import IndexLayout, resolve_index_dir, resolve_root

if TYPE_CHECKING:
    from repolens.embed import Embedder
    from repolens.vectors import VectorReport

# A batch is committed to both stores when it holds this many files or this
# many bytes of source: big enough that commits are not the bottleneck, small
# enough that an interrupted run loses little.
BATCH_FILES = 2000
BATCH_BYTES = 16 << 20

ProgressFn = Callable[[int, int], None]
ChunkFn = Callable[[str, str, str], ChunkedFile]


@dataclass
class IndexReport:
    root: Path
    index_dir: Path
    files: int = 0
    chunks: int = 0
    symbols: int = 0
    bytes: int = 0
    lines: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    mode: str = "git"
    vectors: VectorReport | None = None

    def summary(self) -> str:
        """The one-paragraph report ``repolens index`` prints."""
        out = [
            f"indexed {self.files} files ({self.lines} lines, {self.chunks} chunks, "
            f"{self.symbols} symbols) in {self.seconds:.1f}s -> {self.index_dir}"
        ]
        if self.skipped:
            parts = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(self.skipped.items()))
            out.append(f"skipped: {parts}")
        if self.notes:
            parts = ", ".join(f"{n} {note.replace('_', ' ')}" for note, n in sorted(self.notes.items()))
            out.append(f"notes: {parts}")
        if self.vectors is not None:
            out.append(self.vectors.summary())
        return "\n".join(out)


def file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def make_chunker(settings: Settings) -> ChunkFn:
    mode, merge = settings.chunker, settings.chunk_merge_lines
    return lambda path, text, language: chunk_file(path, text, language, mode=mode, merge_lines=merge)


def chunker_identity(settings: Settings) -> str:
    name, version = chunking_config(settings.chunker, settings.chunk_merge_lines)
    return f"{name}/v{version}"


def build_index(
    root: str | Path | None,
    *,
    index_dir: str | Path | None = None,
    settings: Settings | None = None,
    progress: ProgressFn | None = None,
    vector_progress: ProgressFn | None = None,
) -> IndexReport:
    """Index ``root`` from scratch and publish the result, then (when the
    ``vectors`` setting is on) fill its dense vectors.

    The lexical index is searchable as soon as it is published; vectors
    are committed in batches after that, reusing those of unchanged chunks
    from the previous generation. Ctrl-C during embedding keeps what is done
    (``report.vectors.interrupted``). Raises ``NothingToIndexError`` (and
    leaves any previous index as it was) when no file qualifies,
    ``IndexLockedError`` when another writer runs, ``EmbedderError`` when the
    configured model cannot be used.
    """
    started = time.monotonic()
    root_path = resolve_root(root)
    settings = settings or load_settings(root_path)
    layout = IndexLayout(root_path, resolve_index_dir(root_path, index_dir))
    layout.ensure_dir()
    with layout.write_lock():
        layout.collect_garbage()
        found = discover(root_path, max_file_bytes=settings.max_file_bytes, index_dir=layout.index_dir)
        report = IndexReport(root_path, layout.index_dir, skipped=Counter(found.skipped), mode=found.mode)
        embedder = _embedder(root_path) if settings.vectors else None
        previous = layout.current_generation()
        building = layout.new_building_dir()
        try:
            content_skips = _fill(building, found, settings, report, progress)
            if report.files == 0:
                raise nothing_to_index(found, content_skips)
            reused = _reuse_vectors(building, previous, embedder, settings) if embedder else 0
        except BaseException:
            shutil.rmtree(building, ignore_errors=True)
            raise
        final = layout.publish(building)
        layout.collect_garbage()
        if embedder is not None:
            report.vectors = _embed(final, embedder, settings, vector_progress)
            report.vectors.reused += reused
    report.seconds = time.monotonic() - started
    return report


def _embedder(root: Path) -> Embedder | None:
    from repolens.embed import make_embedder  # numpy, onnxruntime: loaded only when vectors are wanted

    return make_embedder(load_embed_config(root))


def _reuse_vectors(building: Path, previous: Path | None, embedder: Embedder, settings: Settings) -> int:
    from repolens import vectors

    if previous is None:
        return 0
    handle = IndexHandle.open(building)
    try:
        vectors.bind_embedder(handle.db, embedder, settings.embed_style)
        return vectors.copy_from(handle, previous / DB_NAME, embedder.identity, settings.embed_style)
    finally:
        handle.close()


def _embed(gen: Path, embedder: Embedder, settings: Settings, progress: ProgressFn | None) -> VectorReport:
    from repolens import vectors

    handle = IndexHandle.open(gen)
    cache = Path(settings.embed_cache).expanduser() if settings.embed_cache else None
    try:
        return vectors.fill(handle, embedder, style=settings.embed_style, cache_dir=cache, progress=progress)
    except KeyboardInterrupt:  # batches done so far are committed: the next run resumes
        done, total = vectors.coverage(handle.db)
        return vectors.VectorReport(done=done, total=total, interrupted=True)
    finally:
        handle.close()


def _fill(
    building: Path, found: Discovery, settings: Settings, report: IndexReport, progress: ProgressFn | None
) -> Counter[str]:
    """Read, chunk and store every discovered file; return the content skips
    (binary, empty, ...) counted while reading."""
    files = found.files
    content_skips: Counter[str] = Counter()
    handle = IndexHandle.create(building)
    chunk = make_chunker(settings)
    try:
        sq.write_meta(
            handle.db,
            {
                **format_versions(),
                "root": str(report.root),
                "chunker": chunker_identity(settings),
                "created_at": _now(),
                "state": "building",
            },
        )
        batch_files = batch_bytes = 0
        handle.db.execute("BEGIN")
        for i, src in enumerate(files):
            loaded = load_text(src.abs_path, max_file_bytes=found.max_file_bytes)
            if not isinstance(loaded, LoadedText):
                content_skips[str(loaded)] += 1
                report.skipped[str(loaded)] += 1
                continue
            _add_file(handle, src, loaded, chunk, report)
            batch_files += 1
            batch_bytes += src.size
            if batch_files >= BATCH_FILES or batch_bytes >= BATCH_BYTES:
                _commit(handle)
                handle.db.execute("BEGIN")
                batch_files = batch_bytes = 0
            if progress:
                progress(i + 1, len(files))
        _commit(handle)
        totals = sq.counts(handle.db)
        report.symbols = totals["symbols"]
        sq.write_meta(handle.db, {"state": "ready", "updated_at": _now(), **totals})
    finally:
        handle.close()
    return content_skips


def _add_file(
    handle: IndexHandle, src: SourceFile, loaded: LoadedText, chunk: ChunkFn, report: IndexReport
) -> None:
    language = language_for(src.path)
    chunked = chunk(src.path, loaded.text, language)
    chunks = chunked.chunks
    flags = []
    if loaded.replaced:
        flags.append("decoded_with_replacement")
        report.notes["decoded_with_replacement"] += 1
    if chunked.parse_error:
        flags.append("parse_error")
        report.notes["parse_errors"] += 1
    cids = sq.insert_file(
        handle.db,
        path=src.path,
        hash=file_hash(loaded.data),
        size=src.size,
        mtime_ns=src.mtime_ns,
        language=language,
        lines=loaded.lines,
        flags=",".join(flags),
        chunks=chunks,
        symbols=chunked.symbols,
    )
    handle.lex.add(zip(cids, chunks, strict=True))
    report.files += 1
    report.chunks += len(chunks)
    report.bytes += src.size
    report.lines += loaded.lines


def _commit(handle: IndexHandle) -> None:
    """Commit SQLite, then tantivy, then drain the outbox: a crash between
    any two steps leaves ``lex_pending`` rows for the next writer to replay."""
    handle.db.execute("COMMIT")
    handle.lex.commit()
    pending = sq.pending_lexical(handle.db)
    if pending:
        handle.db.execute("BEGIN")
        sq.clear_pending(handle.db, [cid for cid, _ in pending])
        handle.db.execute("COMMIT")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
