"""Keep an index equal to the repository: discover -> diff -> chunk -> store.

One operation, :func:`build_index`, serves three cases:

* **refresh** (an index exists and was built with the same settings): the
  published generation is updated in place. Only what changed is read:
  new, modified, deleted (and so renamed) files. An unchanged file costs a
  stat, and a hash only when its size or mtime moved. Chunks whose text did
  not change keep their id and their vectors.
* **build** (no index, or ``rebuild``, or a change of chunking, tokenizer or
  schema, said in one line): a fresh generation is filled beside the
  published one and swapped in atomically when complete.
* **resume**: a build that was interrupted left ``gen-N.building``; the
  next run continues it instead of starting over.

Work is committed in batches of whole files. A reader sees, for every file,
either its old or its new chunks, never a mix within a file. SQLite commits
first, then tantivy; the ``lex_pending`` outbox replays whatever a crash
left between the two (:func:`reconcile_lexical`).
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.chunk import chunker_identity
from repolens.discover import (
    Discovery,
    SkipReason,
    SourceFile,
    discover,
    discover_paths,
    nothing_to_index,
)
from repolens.errors import IndexCorruptError, IndexVersionError
from repolens.index.prepare import Job, Prepared, Skipped, Unchanged, prepare_all
from repolens.reply.budget import counted
from repolens.settings import Settings, load_embed_config, load_settings
from repolens.store import check_versions, format_versions, resolve_root
from repolens.store.local import sqlite as sq
from repolens.store.local.handle import DB_NAME, IndexHandle
from repolens.store.local.layout import IndexLayout, resolve_index_dir

if TYPE_CHECKING:
    from repolens.index.vectors import VectorReport
    from repolens.models import Embedder

# A batch is committed to both stores when it holds this many files or this
# many bytes of source: big enough that commits are not the bottleneck, small
# enough that an interrupted run loses little.
BATCH_FILES = 500
BATCH_BYTES = 8 << 20

ProgressFn = Callable[[int, int], None]


@dataclass
class IndexReport:
    root: Path
    index_dir: Path
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

    def summary(self) -> str:
        """The short report ``repolens index`` prints."""
        if self.mode == "refresh":
            head = (
                f"refreshed {self.index_dir}: {self.added} new, {self.changed} changed, "
                f"{self.deleted} deleted, {self.unchanged} unchanged files in {self.seconds:.2f}s; "
                f"index holds {counted(self.files, 'file')}, {counted(self.chunks, 'chunk')}"
            )
        else:
            verb = "resumed and indexed" if self.mode == "resume" else "indexed"
            head = (
                f"{verb} {counted(self.files, 'file')} ({counted(self.lines, 'line')}, "
                f"{counted(self.chunks, 'chunk')}, {counted(self.symbols, 'symbol')}) "
                f"in {self.seconds:.1f}s -> {self.index_dir}"
            )
        out = [head]
        if self.reason:
            out.append(f"rebuilt: {self.reason}")
        if self.skipped:
            parts = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(self.skipped.items()))
            out.append(f"skipped: {parts}")
        if self.notes:
            parts = ", ".join(f"{n} {note.replace('_', ' ')}" for note, n in sorted(self.notes.items()))
            out.append(f"notes: {parts}")
        if self.vectors is not None:
            out.append(self.vectors.summary())
        return "\n".join(out)


def index_identity(settings: Settings) -> dict[str, str]:
    """What an index's content depends on; any difference means rebuild."""
    return {**{k: str(v) for k, v in format_versions().items()}, "chunker": chunker_identity(settings)}


def rebuild_reason(gen: Path, settings: Settings) -> str:
    """Why the generation cannot be refreshed in place ("" when it can)."""
    try:
        db = sq.open_reader(gen / DB_NAME)
    except IndexCorruptError as exc:
        return _unreadable(exc.problem)
    try:
        meta = sq.read_meta(db)
    except Exception as exc:  # a damaged file: rebuild, never misread
        return _unreadable(type(exc).__name__)
    finally:
        db.close()
    for key, want in index_identity(settings).items():
        have = meta.get(key)
        if have != want:
            what = key.replace("_version", " version").replace("chunker", "chunking")
            return f"{what} changed ({have or 'unknown'} -> {want})"
    if meta.get("state") != "ready":
        return "the index was never completed"
    return ""


def _unreadable(detail: str) -> str:
    return f"the index could not be read ({detail})"


def build_index(
    root: str | Path | None,
    *,
    index_dir: str | Path | None = None,
    settings: Settings | None = None,
    rebuild: bool = False,
    progress: ProgressFn | None = None,
    vector_progress: ProgressFn | None = None,
    lock_wait: float = 0.0,
    paths: Collection[str] | None = None,
) -> IndexReport:
    """Bring the index of ``root`` up to date (see the module docstring),
    then (when the ``vectors`` setting is on) fill its missing vectors.

    ``paths`` (root-relative) says that only those paths can have changed
    (the watcher knows which files were saved): a refresh then looks at just
    them, and at the indexed files under those that are gone (a deleted
    folder). Whenever that cannot be exact (no index yet, settings changed,
    not a git work tree, a path that is a folder or a symlink) the whole
    tree is discovered as usual.

    Raises ``NothingToIndexError`` (and leaves any previous index as it was)
    when no file qualifies, ``IndexLockedError`` when another writer runs,
    ``EmbedderError`` when the configured model cannot be used.
    """
    started = time.monotonic()
    root_path = resolve_root(root)
    settings = settings or load_settings(root_path)
    layout = IndexLayout(root_path, resolve_index_dir(root_path, index_dir))
    layout.ensure_dir()
    with layout.write_lock(wait=lock_wait):
        current = layout.current_generation()
        reason = "--rebuild" if rebuild else (rebuild_reason(current, settings) if current else "")
        found = None
        scope = None
        if paths is not None and current is not None and not reason:
            found = discover_paths(
                root_path, paths, max_file_bytes=settings.max_file_bytes, index_dir=layout.index_dir
            )
            scope = frozenset(paths) if found is not None else None
        if found is None:
            found = discover(root_path, max_file_bytes=settings.max_file_bytes, index_dir=layout.index_dir)
        report = IndexReport(
            root_path, layout.index_dir, skipped=Counter(found.skipped), discovery=found.mode
        )
        embedder = _embedder(root_path) if settings.vectors else None
        reused = 0
        if not found.files and scope is None:  # nothing would survive: refuse before touching any index
            raise nothing_to_index(found, Counter())
        target = current
        if current is not None and not reason:
            report.mode = "refresh"
            layout.collect_garbage()
            try:
                _sync(current, found, settings, report, progress, create=False, scope=scope)
            except IndexCorruptError as exc:  # a damaged store is rebuilt, not patched
                reason = _unreadable(exc.problem)
                report = IndexReport(root_path, layout.index_dir, skipped=Counter(found.skipped))
        if target is None or reason:
            report.reason = reason

            building = _resumable(layout, settings) if not rebuild else None
            layout.collect_garbage(keep=building)
            if building is None:
                building = layout.new_building_dir()
            else:
                report.mode = "resume"
            try:
                _sync(building, found, settings, report, progress, create=True)
                if report.files == 0:
                    raise nothing_to_index(found, report.content_skipped)
                if embedder is not None and current is not None:
                    reused = _reuse_vectors(building, current, embedder, settings)
            except BaseException as exc:
                # An interrupted build is kept for the next run to resume;
                # one that cannot succeed is removed.
                if not isinstance(exc, KeyboardInterrupt):
                    shutil.rmtree(building, ignore_errors=True)
                raise
            target = layout.publish(building)
            layout.collect_garbage()
        if embedder is not None:
            report.vectors = _embed(target, embedder, settings, vector_progress)
            report.vectors.reused += reused
    report.seconds = time.monotonic() - started
    return report


def _resumable(layout: IndexLayout, settings: Settings) -> Path | None:
    """The newest interrupted build made with the same settings, if any."""
    for building in reversed(layout.building_dirs()):
        try:
            db = sq.open_reader(building / DB_NAME)
            try:
                meta = sq.read_meta(db)
            finally:
                db.close()
        except Exception:
            continue
        if (
            all(meta.get(k) == v for k, v in index_identity(settings).items())
            and meta.get("state") == "building"
        ):
            return building
    return None


# -- syncing one generation with the discovered files ---------------------------


def _sync(
    gen: Path,
    found: Discovery,
    settings: Settings,
    report: IndexReport,
    progress: ProgressFn | None,
    *,
    create: bool,
    scope: frozenset[str] | None = None,
) -> None:
    """Make ``gen`` hold exactly the discovered files (within ``scope``, when
    given), batch by batch."""
    handle = IndexHandle.create(gen) if create else IndexHandle.open(gen, report.root, write=True)
    try:
        if create and not sq.read_meta(handle.db):
            sq.write_meta(
                handle.db,
                {
                    **index_identity(settings),
                    "root": str(report.root),
                    "created_at": _now(),
                    "state": "building",
                },
            )
        else:
            check_versions(sq.read_meta(handle.db), report.root)
        reconcile_lexical(handle)
        try:
            _apply_changes(handle, found, settings, report, progress, scope)
        except BaseException:
            # Stopped mid-batch (Ctrl-C, cancellation, an error): the open
            # batch is undone in both stores; committed batches stay, and the
            # next run carries on from them.
            if handle.db.in_transaction:
                handle.db.execute("ROLLBACK")
            handle.lex.abort()
            raise
        totals = sq.counts(handle.db)

        report.files, report.chunks, report.symbols = totals["files"], totals["chunks"], totals["symbols"]
        report.bytes, report.lines = totals["bytes"], totals["lines"]
        sq.write_meta(handle.db, {"state": "ready", "updated_at": _now(), **totals})
    finally:
        handle.close()


def _apply_changes(
    handle: IndexHandle,
    found: Discovery,
    settings: Settings,
    report: IndexReport,
    progress: ProgressFn | None,
    scope: frozenset[str] | None = None,
) -> None:
    db = handle.db
    records = sq.file_records(db)
    skips = sq.skipped_files(db)
    present = {src.path for src in found.files}
    deleted = [records[path] for path in _vanished(records, present, scope)]
    work: list[tuple[SourceFile, sq.FileRecord | None]] = []
    for src in found.files:
        rec = records.get(src.path)
        skip = skips.get(src.path)
        if rec is not None and rec.size == src.size and rec.mtime_ns == src.mtime_ns:
            report.unchanged += 1
        elif rec is None and skip is not None and (skip.size, skip.mtime_ns) == (src.size, src.mtime_ns):
            report.skipped[skip.reason] += 1  # still what it was when it was read: not read again
        else:
            work.append((src, rec))
    total = len(work) + len(deleted)
    batch = _Batch(handle)
    for rec in deleted:
        batch.begin()
        _delete_file(handle, rec.id)
        report.deleted += 1
        batch.done(rec.size)
    if gone := _vanished(skips, present, scope):
        batch.begin()
        sq.forget_skipped(db, gone)
        batch.done(0)
    jobs = [
        Job(
            path=src.path,
            abs_path=str(src.abs_path),
            known_hash=rec.hash if rec is not None else "",
            max_file_bytes=found.max_file_bytes,
            mode=settings.chunker,
            merge_lines=settings.chunk_merge_lines,
        )
        for src, rec in work
    ]
    for i, ((src, rec), result) in enumerate(zip(work, prepare_all(jobs), strict=True)):
        batch.begin()
        _remember_skip(db, src, result, skips)
        if isinstance(result, Skipped):
            report.skipped[result.reason] += 1
            report.content_skipped[result.reason] += 1
            if rec is not None:  # it was indexed; now it is empty, binary, ...
                _delete_file(handle, rec.id)
                report.deleted += 1
        elif isinstance(result, Unchanged):
            assert rec is not None
            db.execute("UPDATE files SET size=?, mtime_ns=? WHERE id=?", (src.size, src.mtime_ns, rec.id))
            report.unchanged += 1
        else:
            kept = _vectors_by_id(db, rec.id) if rec is not None else {}
            if rec is not None:
                _delete_file(handle, rec.id)
            _add_file(handle, src, result, report, kept)
            if rec is None:
                report.added += 1
            else:
                report.changed += 1
        batch.done(0 if isinstance(result, Skipped) else src.size)  # bytes written
        if progress:
            progress(len(deleted) + i + 1, total)
    batch.flush()


def _vanished(indexed: Collection[str], present: set[str], scope: frozenset[str] | None) -> list[str]:
    """The ``indexed`` paths no longer on disk: all of them, or with a
    ``scope`` only those in it or under a scope path that is gone (a deleted
    folder)."""
    if scope is None:
        return [path for path in indexed if path not in present]
    gone = tuple(p for p in scope if p not in present)
    under = tuple(p.rstrip("/") + "/" for p in gone)
    return [p for p in indexed if p not in present and (p in gone or p.startswith(under))]


# Skip reasons that only the content decides: while size and mtime stay, so
# does the verdict. (An unreadable file may become readable with no change to
# either; a file too large for one setting may fit another.)
_CONTENT_SKIPS = frozenset({SkipReason.BINARY, SkipReason.EMPTY})


def _remember_skip(
    db, src: SourceFile, result: Prepared | Skipped | Unchanged, skips: Mapping[str, sq.SkippedFile]
) -> None:
    """Record (or forget) that ``src`` is kept out of the index by its content."""
    if isinstance(result, Skipped) and result.reason in _CONTENT_SKIPS:
        sq.set_skipped(db, sq.SkippedFile(src.path, result.reason, src.size, src.mtime_ns))
    elif src.path in skips:
        sq.forget_skipped(db, [src.path])


class _Batch:
    """Groups file updates into transactions of ``BATCH_FILES`` / ``BATCH_BYTES``."""

    def __init__(self, handle: IndexHandle) -> None:
        self.handle = handle
        self.open = False
        self.files = self.bytes = 0

    def begin(self) -> None:
        if not self.open:
            self.handle.db.execute("BEGIN")
            self.open = True

    def done(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files >= BATCH_FILES or self.bytes >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.open:
            _bump_versions(self.handle.db)
            commit(self.handle)
            self.open = False
        self.files = self.bytes = 0


def _delete_file(handle: IndexHandle, file_id: int) -> None:
    """Remove a file from both stores (SQLite first; tantivy mirrors the order)."""
    handle.lex.delete(sq.delete_file(handle.db, file_id))


def _vectors_by_id(db, file_id: int) -> dict[str, bytes]:
    rows = db.execute(
        "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.cid = c.cid WHERE c.file_id = ?", (file_id,)
    )
    return dict(rows.fetchall())


def _add_file(
    handle: IndexHandle,
    src: SourceFile,
    prepared: Prepared,
    report: IndexReport,
    kept_vectors: dict[str, bytes],
) -> None:
    flags = []
    if prepared.replaced:
        flags.append("decoded_with_replacement")
        report.notes["decoded_with_replacement"] += 1
    if prepared.parse_error:
        flags.append("parse_error")
        report.notes["parse_errors"] += 1
    cids = sq.insert_file(
        handle.db,
        path=src.path,
        hash=prepared.digest,
        size=src.size,
        mtime_ns=src.mtime_ns,
        language=prepared.language,
        lines=prepared.lines,
        flags=",".join(flags),
        chunks=prepared.chunks,
        symbols=prepared.symbols,
    )
    if kept_vectors:  # an edit elsewhere in the file keeps these chunks' vectors
        rows = [
            (cid, kept_vectors[c.id])
            for cid, c in zip(cids, prepared.chunks, strict=True)
            if c.id in kept_vectors
        ]
        handle.db.executemany("INSERT INTO vectors(cid, vec) VALUES(?, ?)", rows)
    handle.lex.add_fields(zip(cids, prepared.fields, strict=True))


def _bump_versions(db) -> None:
    """Tell cached readers (dense matrix, path index, remembered queries)
    that content moved."""
    for key in ("vectors_version", "content_version"):
        db.execute(
            "INSERT INTO meta(key, value) VALUES(?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (key,),
        )

    sq.write_meta(db, {"updated_at": _now()})


def commit(handle: IndexHandle) -> None:
    """Commit SQLite, then tantivy, then drain the outbox: a crash between
    any two steps leaves ``lex_pending`` rows for the next writer to replay."""
    handle.db.execute("COMMIT")
    handle.lex.commit()
    pending = sq.pending_lexical(handle.db)
    if pending:
        handle.db.execute("BEGIN")
        sq.clear_pending(handle.db, [cid for cid, _ in pending])
        handle.db.execute("COMMIT")


def reconcile_lexical(handle: IndexHandle) -> int:
    """Replay the outbox left by a crash between the SQLite and tantivy commits.

    Every pending key is deleted from tantivy and re-added when its chunk
    still exists, so a replay is idempotent. Returns how many were replayed.
    """
    pending = sq.pending_lexical(handle.db)
    if not pending:
        return 0
    cids = [cid for cid, _ in pending]
    handle.lex.delete(cids)
    stored = sq.chunks_by_cid(handle.db, cids)
    handle.lex.add((cid, s.chunk) for cid, s in stored.items())
    handle.lex.commit()
    handle.db.execute("BEGIN")
    sq.clear_pending(handle.db, cids)
    handle.db.execute("COMMIT")
    return len(cids)


# -- vectors ----------------------------------------------------------------------


def _embedder(root: Path) -> Embedder | None:
    from repolens.models import make_embedder  # numpy, onnxruntime: loaded only when vectors are wanted

    return make_embedder(load_embed_config(root))


def _reuse_vectors(building: Path, previous: Path, embedder: Embedder, settings: Settings) -> int:
    from repolens.index import vectors

    handle = IndexHandle.open(building, write=True)
    try:
        vectors.bind_embedder(handle.db, embedder, settings.embed_style)
        return vectors.copy_from(handle, previous / DB_NAME, embedder.identity, settings.embed_style)
    except IndexVersionError:
        return 0
    finally:
        handle.close()


def _embed(gen: Path, embedder: Embedder, settings: Settings, progress: ProgressFn | None) -> VectorReport:
    from repolens.index import vectors
    from repolens.store.local import ann

    handle = IndexHandle.open(gen, write=True)
    cache = Path(settings.embed_cache).expanduser() if settings.embed_cache else None
    try:
        dropped = vectors.drop_if_other_model(handle.db, embedder, settings.embed_style)
        report = vectors.fill(
            handle, embedder, style=settings.embed_style, cache_dir=cache, progress=progress
        )
        report.reason = dropped
        if not report.interrupted:
            report.ann = ann.sync(handle, settings.ann_min_vectors)
        return report
    except KeyboardInterrupt:  # batches done so far are committed: the next run resumes
        done, total = vectors.coverage(handle.db)
        return vectors.VectorReport(done=done, total=total, interrupted=True)
    finally:
        handle.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
