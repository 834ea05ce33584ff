"""Keep an index equal to the repository: discover -> diff -> chunk -> store.

One operation, :func:`build_index`, serves three cases:

* **refresh** (an index exists and was built with the same settings): the
  published generation is updated in place. Only what changed is read:
  new, modified, deleted (and so renamed) files. An unchanged file costs a
  stat, and a hash only when its size or mtime moved, or when it had been
  modified just before the run that read it (a write in the same timestamp
  tick would have left both as they were: see
  :meth:`~repolens.discover.listing.Discovery.kept_mtime`). Chunks whose
  text did not change keep their id and their vectors.
* **build** (no index, or ``rebuild``, or a change of chunking, tokenizer or
  schema, said in one line): a fresh generation is filled beside the
  published one and swapped in atomically when complete.
* **resume**: a build that was interrupted left ``gen-N.building``; the
  next run continues it instead of starting over.

A build commits its work in batches of whole files through the store's
:class:`~repolens.store.base.IndexWriter`, so an interrupted one resumes; a
refresh is one batch, so one that fails (a full disk, Ctrl-C) leaves the
index as it was. A reader sees, for every file, either its old or its new
chunks, never a mix within a file; whatever a crash left half-written
between the parts of the store is repaired by the next writer
(:meth:`~repolens.store.base.IndexWriter.reconcile`). A refresh of the whole
tree first reads every page of the index (``verify``): a damaged index is
rebuilt, not patched.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.chunking.dispatch import chunker_identity
from repolens.discover import (
    Discovery,
    SkipReason,
    SourceFile,
    discover,
    discover_paths,
    nothing_to_index,
)
from repolens.discover.worktree import head_facts
from repolens.errors import IndexCorruptError, NothingToIndexError, RepolensError, StoreUnavailableError
from repolens.history.sync import sync_history
from repolens.index.prepare import Job, Prepared, Skipped, Unchanged, forked_workers, prepare_all
from repolens.index.report import IndexReport, ProgressFn
from repolens.index.reuse import Donors
from repolens.index.space import full_disk_said
from repolens.models.embed_config import load_embed_config
from repolens.settings import CHUNKING_SETTINGS, Settings, chunking_settings, load_settings
from repolens.store import open_store
from repolens.store.base import LEXICAL_PIECES, FileRecord, IndexWriter, SkippedFile, Store
from repolens.store.identity import GIT_ROOT_KEY, check_identity, holds, identity_of, recorded_identity
from repolens.store.versions import format_versions

if TYPE_CHECKING:
    from repolens.index.forked import ForkedPool
    from repolens.models import Embedder

# A batch is committed to both stores when it holds this many files or this
# many bytes of source: big enough that commits are not the bottleneck, small
# enough that an interrupted run loses little.
BATCH_FILES = 500
BATCH_BYTES = 8 << 20


def index_identity(settings: Settings) -> dict[str, str]:
    """What an index's content depends on; any difference means rebuild."""
    return {
        **{k: str(v) for k, v in format_versions().items()},
        "chunker": chunker_identity(settings.chunker, settings.chunk_merge_lines),
    }


def rebuild_reason(store: Store, generation: str, settings: Settings) -> str:
    """Why the generation cannot be refreshed in place ("" when it can)."""
    try:
        meta = store.generation_meta(generation)
    except IndexCorruptError as exc:  # a damaged store: rebuild, never misread
        return _unreadable(exc.problem)
    for key, want in index_identity(settings).items():
        have = meta.get(key)
        if have != want:
            what = key.replace("_version", " version").replace("chunker", "chunking")
            return f"{what} changed ({have or 'unknown'} -> {want})"
    if meta.get("state") != "ready":
        return "the index was never completed"
    return ""


def holds_vectors(store: Store) -> bool:
    """Whether the published index of ``store`` was embedded (its meta names
    an embedder): a refresh of it keeps its vectors, the changed chunks
    embedded too, whatever the ``vectors`` setting says."""
    try:
        current = store.current()
        return current is not None and bool(store.generation_meta(current).get("embed_identity"))
    except RepolensError:  # no index, or one that cannot be read: a build says why
        return False


_UNREADABLE = "the index could not be read"


def _unreadable(detail: str) -> str:
    return f"{_UNREADABLE} ({detail})"


def build_index(
    root: str | Path | None,
    *,
    index_dir: str | Path | None = None,
    store: Store | None = None,
    settings: Settings | None = None,
    rebuild: bool = False,
    progress: ProgressFn | None = None,
    vector_progress: ProgressFn | None = None,
    lock_wait: float = 0.0,
    paths: Collection[str] | None = None,
    siblings: Sequence[Store] | None = None,
    compact: bool = True,
) -> IndexReport:
    """Bring the index of ``root`` up to date (see the module docstring),
    then (when the ``vectors`` setting is on) fill its missing vectors.
    The index is ``store``, else the local one in ``index_dir``.

    ``paths`` (root-relative) says that only those paths can have changed
    (the watcher knows which files were saved): a refresh then looks at just
    them, and at the indexed files under those that are gone (a deleted
    folder). Whenever that cannot be exact (no index yet, settings changed,
    not a git work tree, a path that is a folder or a symlink) the whole
    tree is discovered as usual.

    ``compact``: a refresh leaves an index that ranks as a fresh build
    (deleted chunks gone from BM25's statistics); the watcher says False, so
    a save costs no rewrite, and compacts when saves pause
    (:func:`repolens.index.watch.compact_index`).

    Files that a sibling branch's index holds with the same content are
    copied from it, and missing vectors are taken from siblings by chunk
    (:mod:`repolens.index.reuse`): ``siblings`` are those stores, None
    finds them (the other worktrees of the repository).

    Raises ``NothingToIndexError`` (and leaves any previous index as it was)
    when no file qualifies, ``IndexLockedError`` when another writer runs,
    ``EmbedderError`` when the configured model cannot be used.
    """
    started = time.monotonic()
    if store is None:
        store = open_store(root, index_dir)
    root_path = store.root
    settings = settings or load_settings(root_path)
    with (
        full_disk_said(store, settings, rebuild=rebuild),
        store.write_lock(wait=lock_wait),
        contextlib.ExitStack() as cleanup,
    ):
        current = store.current()
        recorded = _check_holder(store, current)
        reason = "--rebuild" if rebuild else (rebuild_reason(store, current, settings) if current else "")
        found = None
        scope = None
        own = store.local_folder
        limits = {
            "max_file_bytes": settings.max_file_bytes,
            "index_dir": own,
            "languages": settings.languages,
        }
        # Another languages setting than the index was built with: the whole tree is looked at.
        was = _languages_of(recorded) if current is not None and not reason else None
        if paths is not None and current is not None and not reason and was == settings.languages:
            found = discover_paths(root_path, paths, **limits)
            scope = frozenset(paths) if found is not None else None
        if found is None:
            found = discover(root_path, **limits)
        report = IndexReport(root_path, store.location, skipped=Counter(found.skipped), discovery=found.mode)
        if was is not None and was != settings.languages:
            report.languages = f"{', '.join(was) or 'all'} -> {', '.join(settings.languages) or 'all'}"
        embedder = _embedder(root_path) if settings.vectors else None
        embed = (embedder.identity, settings.embed_style) if embedder is not None else None
        # The watcher's refresh of a few saved files never looks for siblings.
        donors = None if scope is not None else Donors(store, siblings, index_identity(settings), embed)
        if donors is not None:
            cleanup.callback(donors.close)
        branch = head_facts(root_path)
        report.branch = branch.get("branch", "")
        reused = 0
        if not found.files and scope is None:  # nothing would survive: refuse before touching any index
            raise nothing_to_index(found, Counter())
        target = current
        if current is not None and not reason:
            report.mode = "refresh"
            store.collect_garbage()
            try:
                _sync(
                    store,
                    current,
                    found,
                    settings,
                    report,
                    progress,
                    create=False,
                    scope=scope,
                    donors=donors,
                    compact=compact,
                )
            except IndexCorruptError as exc:  # a damaged store is rebuilt, not patched
                reason = _unreadable(exc.problem)
                report = IndexReport(
                    root_path, store.location, skipped=Counter(found.skipped), branch=report.branch
                )
        if target is not None and not reason:
            _record_identity(store, target, recorded)
        if target is None or reason:
            report.reason = reason

            building = _resumable(store, settings) if not rebuild else None
            store.collect_garbage(keep=building)
            if building is None:
                building = store.new_generation()
            else:
                report.mode = "resume"
            try:
                # Every discovered file is to be read (but those a sibling gives):
                # worker processes, when worth it, are forked now, before the writer opens.
                with forked_workers(sum(src.size for src in found.files), store.lock_sockets()) as workers:
                    _sync(
                        store,
                        building,
                        found,
                        settings,
                        report,
                        progress,
                        create=True,
                        donors=donors,
                        workers=workers,
                    )
                if report.files == 0:
                    raise nothing_to_index(found, report.content_skipped)
                # (a damaged index's vectors may be damaged too: embedded anew)
                if embedder is not None and current is not None and not reason.startswith(_UNREADABLE):
                    from repolens.index import vectors  # numpy: only when vectors are wanted

                    reused = vectors.reuse_vectors(store, building, current, embedder, settings)
            except BaseException as exc:
                # An interrupted build (Ctrl-C, a store server that went
                # away) is kept for the next run to resume; one that cannot
                # succeed is removed.
                if not isinstance(exc, (KeyboardInterrupt, StoreUnavailableError)):
                    store.discard(building)
                raise
            store.publish(building)
            target = building
            store.collect_garbage()
            # an index embedded once (--vectors) and rebuilt with the setting off: said, not silent
            report.vectors_dropped = embedder is None and bool(recorded.get("embed_identity"))
        if embedder is not None:
            from repolens.index import vectors

            report.vectors = vectors.embed_generation(
                store, target, embedder, settings, vector_progress, donors
            )
            report.vectors.reused += reused
    report.seconds = time.monotonic() - started
    return report


def _check_holder(store: Store, current: str | None) -> dict[str, str]:
    """The meta of the published generation, after checking that it holds
    this repository (``IndexIdentityError`` when another one's: a key or
    folder given to two repositories); {} when there is none, or it cannot
    be read (then it is rebuilt)."""
    if current is None:
        return {}
    try:
        meta = store.generation_meta(current)
    except IndexCorruptError:
        return {}
    check_identity(meta, store)
    return meta


def _ours(meta: Mapping[str, str], store: Store) -> bool:
    """Whether an interrupted build is this repository's to resume (not one
    another repository left under the same key)."""
    recorded = recorded_identity(dict(meta))
    return store.foreign_fix() is None or recorded is None or holds(recorded, store.root)


def _record_identity(store: Store, generation: str, meta: Mapping[str, str]) -> None:
    """Record the repository's identity in a refreshed generation that lacks
    it (written before identities were) or names another folder (the
    repository moved); asking git for it walks the history, so only then."""
    if GIT_ROOT_KEY in meta and meta.get("root") == str(store.root):
        return
    writer = store.open_writer(generation)
    try:
        writer.write_meta(identity_of(store.root).meta())
    finally:
        writer.close()


def _languages_of(meta: Mapping[str, str]) -> tuple[str, ...]:
    """The languages setting a generation (its ``meta``) was last synced with
    (() for all; an index written before the setting existed holds every language)."""
    recorded = meta.get("languages", "")
    return tuple(recorded.split(",")) if recorded else ()


def _resumable(store: Store, settings: Settings) -> str | None:
    """The newest interrupted build made with the same settings, if any."""
    for building in reversed(store.building()):
        try:
            meta = store.generation_meta(building)
        except Exception:
            continue
        if (
            all(meta.get(k) == v for k, v in index_identity(settings).items())
            and meta.get("state") == "building"
            and _ours(meta, store)
        ):
            return building
    return None


# -- syncing one generation with the discovered files ---------------------------


def _sync(
    store: Store,
    gen: str,
    found: Discovery,
    settings: Settings,
    report: IndexReport,
    progress: ProgressFn | None,
    *,
    create: bool,
    scope: frozenset[str] | None = None,
    donors: Donors | None = None,
    workers: ForkedPool | None = None,
    compact: bool = True,
) -> None:
    """Make ``gen`` hold exactly the discovered files (within ``scope``, when
    given): a new generation (``create``) batch by batch, a published one in
    one batch, compacted when ``compact`` (see :func:`build_index`) even if
    nothing changed; ``workers`` prepare them when given (see
    :func:`~repolens.index.prepare.prepare_all`)."""
    writer = store.open_writer(gen, create=create)
    try:
        if create and not writer.meta():
            writer.write_meta(
                {
                    **index_identity(settings),
                    **identity_of(report.root).meta(),
                    CHUNKING_SETTINGS: chunking_settings(settings),
                    "created_at": _now(),
                    "state": "building",
                }
            )
        writer.reconcile()
        if not create and scope is None:
            writer.verify()
        pieces = sum(src.size for src in found.files) // LEXICAL_PIECES if create else 0
        batch = _Batch(writer, whole=not create, compact=compact, lexical_bytes=pieces)
        try:
            _apply_changes(writer, found, settings, report, progress, scope, donors, workers, batch)
        except BaseException:
            # Stopped mid-batch (Ctrl-C, cancellation, a full disk): the open
            # batch is undone everywhere; a build's committed batches stay,
            # and the next run carries on from them.
            writer.abort()
            raise
        if compact and not create:  # what refreshes that did not compact left
            writer.compact()
        # the branch's commits, kept with the code they describe (repolens.history)
        report.history = sync_history(writer, report.root, settings.history_commits)
        totals = writer.counts()

        report.files, report.chunks, report.symbols = totals["files"], totals["chunks"], totals["symbols"]
        report.bytes, report.lines = totals["bytes"], totals["lines"]
        branch = {"branch": report.branch} if report.branch else {}
        languages = ",".join(settings.languages)  # what _languages_of reads back
        writer.write_meta(
            {"state": "ready", "updated_at": _now(), **totals, **branch, "languages": languages}
        )
    finally:
        writer.close()


def _apply_changes(
    writer: IndexWriter,
    found: Discovery,
    settings: Settings,
    report: IndexReport,
    progress: ProgressFn | None,
    scope: frozenset[str] | None = None,
    donors: Donors | None = None,
    workers: ForkedPool | None = None,
    batch: _Batch | None = None,
) -> None:
    """Apply the changes between the index and ``found``, in ``batch``'s
    batches (by default of ``BATCH_FILES`` / ``BATCH_BYTES``)."""
    records = writer.files()
    skips = writer.skipped_files()
    present = {src.path for src in found.files}
    deleted = [records[path] for path in _vanished(records, present, scope)]
    work: list[tuple[SourceFile, FileRecord | None]] = []
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
    batch = batch or _Batch(writer)
    for rec in deleted:
        batch.begin()
        writer.delete_file(rec.id)
        report.deleted += 1
        batch.done(rec.size)
    if gone := _vanished(skips, present, scope):
        batch.begin()
        writer.forget_skipped(gone)
        batch.done(0)
    reused = donors.take(work, found.max_file_bytes) if donors is not None and work else {}
    jobs = [
        Job(
            path=src.path,
            abs_path=str(src.abs_path),
            known_hash=rec.hash if rec is not None else "",
            max_file_bytes=found.max_file_bytes,
            mode=settings.chunker,
            merge_lines=settings.chunk_merge_lines,
            size=src.size,
        )
        for src, rec in work
        if src.path not in reused
    ]
    # Closed here, whatever stops the loop (a cancelled MCP call raises from
    # ``progress``): its pool shuts down in this thread, not in whichever one
    # the garbage collector runs in (the pool's own: "cannot join current thread").
    with contextlib.closing(prepare_all(jobs, workers)) as prepared:
        for i, (src, rec) in enumerate(work):
            copied = reused.get(src.path)
            result = copied.prepared if copied is not None else next(prepared)
            batch.begin()
            mtime = found.kept_mtime(src)
            _remember_skip(writer, src, mtime, result, skips)
            if isinstance(result, Skipped):
                report.skipped[result.reason] += 1
                report.content_skipped[result.reason] += 1
                if rec is not None:  # it was indexed; now it is empty, binary, ...
                    writer.delete_file(rec.id)
                    report.deleted += 1
            elif isinstance(result, Unchanged):
                assert rec is not None
                writer.touch_file(rec.id, src.size, mtime)
                report.unchanged += 1
            else:
                kept = writer.vectors_of_file(rec.id) if rec is not None else {}
                if copied is not None:
                    kept.update(copied.vectors)
                    report.files_reused += 1
                    report.chunks_reused += len(result.chunks)
                    report.vectors_copied += len(copied.vectors)
                if rec is not None:
                    writer.delete_file(rec.id)
                _add_file(writer, src, mtime, result, report, kept)
                if rec is None:
                    report.added += 1
                else:
                    report.changed += 1
            batch.done(0 if isinstance(result, Skipped) else src.size, src.size)  # bytes written, read
            if progress:
                progress(len(deleted) + i + 1, total)
    if batch.whole and writer.in_batch and writer.counts()["files"] == 0:
        # A refresh would publish an empty index (the last files deleted,
        # binary or empty now): refused as a build is, the index kept as it was.
        if scope is None:
            raise nothing_to_index(found, report.content_skipped)
        raise NothingToIndexError(
            f"nothing to index in {found.root}: these changes would leave the index with no file "
            "(kept as it was); run `repolens index` for why"
        )
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
    writer: IndexWriter,
    src: SourceFile,
    mtime: int,
    result: Prepared | Skipped | Unchanged,
    skips: Mapping[str, SkippedFile],
) -> None:
    """Record (or forget) that ``src`` is kept out of the index by its content."""
    if isinstance(result, Skipped) and result.reason in _CONTENT_SKIPS:
        writer.set_skipped(SkippedFile(src.path, result.reason, src.size, mtime))
    elif src.path in skips:
        writer.forget_skipped([src.path])


class _Batch:
    """Groups file updates into batches of ``BATCH_FILES`` / ``BATCH_BYTES``
    (into one when ``whole``), committed compacted or not (:func:`build_index`).

    The lexical index's documents wait until the batches since its last
    commit make a piece: ``lexical_bytes`` of the discovered files gone
    through, indexed or skipped (a build's share, see ``repolens.store.base.LEXICAL_PIECES``),
    and no less than a batch, so that a small build still commits once. The
    last batch commits them all."""

    def __init__(
        self, writer: IndexWriter, *, whole: bool = False, compact: bool = True, lexical_bytes: int = 0
    ) -> None:
        self.writer = writer
        self.whole = whole
        self.compact = compact
        self.lexical_bytes = lexical_bytes
        self.files = self.bytes = self.seen = 0  # the open batch's files, bytes written, bytes read
        self.before = (0, 0, 0)  # the same, of the committed batches whose lexical documents wait

    def begin(self) -> None:
        if not self.writer.in_batch:
            self.writer.begin()

    def done(self, size: int, seen: int | None = None) -> None:
        """A file done: ``size`` bytes written, of ``seen`` read (by default the same)."""
        self.files += 1
        self.bytes += size
        self.seen += size if seen is None else seen
        if not self.whole and (self.files >= BATCH_FILES or self.bytes >= BATCH_BYTES or self._piece()):
            self.flush(last=False)

    def _since_lexical(self) -> tuple[int, int, int]:
        files, written, seen = self.before
        return files + self.files, written + self.bytes, seen + self.seen

    def _piece(self) -> bool:
        """Whether the batches since the lexical index's last commit make a piece."""
        files, written, seen = self._since_lexical()
        return 0 < self.lexical_bytes <= seen and (files >= BATCH_FILES or written >= BATCH_BYTES)

    def flush(self, *, last: bool = True) -> None:
        if self.writer.in_batch:
            lexical = last or not self.lexical_bytes or self._piece()
            self.writer.commit(compact=self.compact, lexical=lexical)
            self.before = (0, 0, 0) if lexical else self._since_lexical()
        self.files = self.bytes = self.seen = 0


def _add_file(
    writer: IndexWriter,
    src: SourceFile,
    mtime: int,
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
    writer.add_file(
        path=src.path,
        hash=prepared.digest,
        size=src.size,
        mtime_ns=mtime,  # Discovery.kept_mtime: RACY_MTIME when it may still change unseen
        language=prepared.language,
        lines=prepared.lines,
        flags=",".join(flags),
        chunks=prepared.chunks,
        symbols=prepared.symbols,
        fields=prepared.fields,
        vectors=kept_vectors,
        refs=prepared.refs,
    )


# -- vectors ----------------------------------------------------------------------


def _embedder(root: Path) -> Embedder | None:
    from repolens.models import make_embedder  # numpy, onnxruntime: loaded only when vectors are wanted

    return make_embedder(load_embed_config(root))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
