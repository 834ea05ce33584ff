"""Keep an index fresh while files change: file events -> debounced refresh.

Events only say *that* something changed; what to index is decided by the
same discovery and diff as ``repolens index`` (:func:`repolens.index.build.build_index`
in refresh mode). That keeps every rule in one place: ignore files that
change re-evaluate what is indexed, a directory created with files in it is
rescanned whole (the event stream can miss a file created right after its
directory), and a ``git checkout`` that touches thousands of files becomes
one refresh (events are grouped until the stream is quiet for ``step_ms``,
at most ``debounce_ms``).

Our own writes (the index folder) and git's internals are filtered out so a
refresh never triggers another one; but the checked-out branch moving (a
commit, a checkout) is a change, since it changes the history. Where git
keeps that outside the root (a linked worktree, a root below the top of its
repository), that folder is watched too.

A burst of a few saved files is refreshed through those paths alone
(``build_index(paths=...)``: git lists just them, the same rules decide), so
a save is searchable in a fraction of what a whole-tree scan costs on a big
repository. Anything that can change more than the named files -- an
ignore or config file, a folder, a symlink, a burst of more than
``SCOPED_MAX_PATHS`` paths -- gets the whole-tree refresh.

A refresh here does not compact (``build_index(compact=False)``): the
lexical segments that lost a chunk keep counting it in BM25's statistics,
since rewriting them costs ~200 µs a chunk (seconds on a large repository)
and a save must be searchable at once. Once no event has come for
``COMPACT_IDLE_S``, the watcher compacts (:func:`compact_index`), so the
index ranks as a fresh build again a few seconds after the last save; a
save that comes meanwhile stops the compaction, which starts again at the
next pause. Events are gathered by a thread of their own, so that a
compaction sees that a save came.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from repolens.budget import counted
from repolens.discover.noise import BUILD_OUTPUT_NAMES, PROJECT_MANIFESTS
from repolens.discover.rules import PROJECT_IGNORE_FILE
from repolens.errors import IndexLockedError, NothingToIndexError, RepolensError
from repolens.index.build import build_index
from repolens.index.report import IndexReport
from repolens.index.space import full_disk_said
from repolens.settings import CONFIG_FILE, Settings, load_settings
from repolens.store import open_store
from repolens.store.base import Store
from repolens.validate import folder_back

log = logging.getLogger("repolens.index.watch")

DEBOUNCE_MS = 1000
STEP_MS = 50
LOCK_WAIT_S = 10.0
SCOPED_MAX_PATHS = 200
# Quiet seconds after a refresh before the watcher compacts: more than a
# burst's debounce (DEBOUNCE_MS) and the gaps between the saves of one edit
# (an editor's "save all", an agent's patch of several files), which would
# otherwise stop compactions they cannot wait for; few enough that the index
# ranks exactly again before the next question, most of the time. A save
# stops a compaction within ~50 ms, so a shorter pause would waste work, not
# hold saves up.
COMPACT_IDLE_S = 3.0
# Files whose change can alter what else is indexed.
_FULL_SCAN_NAMES = frozenset({".gitignore", PROJECT_IGNORE_FILE, CONFIG_FILE, ".gitmodules"})
_NOISE_PARTS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"})
_NOISE_SUFFIXES = (".pyc", ".pyo", ".swp", ".swx", "~", ".tmp")


# How often a server looks whether a configured root's missing folder is back
# (a stat of each): from then on it is watched as the others are.
BACK_POLL_S = 2.0


@dataclass(frozen=True)
class EventFilter:
    """Which file events can matter to the index."""

    root: Path
    index_dir: Path | None  # the store's own folder (Store.local_folder)
    # (device, inode) of the files this process writes its output to (``repolens watch > log``
    # under the root): each line written would be an event, and the next line another
    own_output: frozenset[tuple[int, int]] = frozenset()
    # where git keeps the root's HEAD and branches when not in root/.git
    # (git_folders): watched beside the root
    git_dirs: tuple[Path, ...] = ()

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        p = Path(path)
        if self.index_dir is not None and (p == self.index_dir or self.index_dir in p.parents):
            return False
        if self.own_output and _file_id(path) in self.own_output:
            return False
        try:
            rel = p.relative_to(self.root)
        except ValueError:
            return any(_moves_head(p.relative_to(d).parts) for d in self.git_dirs if d in p.parents)
        parts = rel.parts
        if parts and parts[0] == ".git":
            return _moves_head(parts[1:])
        if _NOISE_PARTS.intersection(parts):
            return False
        return not p.name.endswith(_NOISE_SUFFIXES)


def _moves_head(inside: tuple[str, ...]) -> bool:
    """Whether a change of this file of a git folder matters: the local
    exclude file changes what is indexed; the checked-out branch and its
    commits (HEAD, a branch's ref moving: a commit, a checkout, even one
    that changes no file) change the history an index holds and the branch
    it records. Nothing else of git's does."""
    return inside in (("info", "exclude"), ("HEAD",), ("packed-refs",)) or (
        inside[:2] == ("refs", "heads") and not inside[-1].endswith(".lock")
    )


def git_folders(root: Path) -> tuple[Path, ...]:
    """The folders holding the HEAD and the branches of the work tree at
    ``root`` that are not under it (a linked worktree's, in the main
    repository's ``.git``; the repository's ``.git`` above a root below its
    top); () outside git or when they are in ``root/.git``."""
    from repolens.discover.worktree import git_dirs

    return tuple(dict.fromkeys(d for d in git_dirs(root) if root not in (d, *d.parents)))


def _outermost(folders: tuple[Path, ...]) -> list[Path]:
    """``folders`` without those inside another (watched with it)."""
    return [d for d in folders if not any(o in d.parents for o in folders)]


@dataclass
class WatchEvent:
    """One refresh done by the watcher (or the error it met), or a
    compaction (``compacted``: how many chunks it rewrote)."""

    changes: int
    report: IndexReport | None
    error: str = ""
    seconds: float = 0.0
    compacted: int | None = None
    # the root-relative paths the burst named, when it was refreshed through
    # them alone; None for a whole-tree refresh (and a compaction)
    paths: frozenset[str] | None = None

    @property
    def quiet(self) -> bool:
        """A refresh that changed nothing (saves to files the index does not
        hold): nothing to say. Said, its line would be another event when the
        watcher's output goes to a file under the root (``repolens watch > log``),
        and the watcher would refresh for ever."""
        r = self.report
        return (
            not self.error
            and self.compacted is None
            and r is not None
            and not (r.added or r.changed or r.deleted)
        )

    def line(self) -> str:
        done = "compaction" if self.compacted is not None else "refresh"
        if self.error:
            return f"watch: {self.changes} file events; {done} failed: {self.error}"
        if self.compacted is not None:
            rewritten = counted(self.compacted, "chunk")
            return f"watch: compacted the lexical index ({rewritten} rewritten) in {self.seconds:.2f}s"
        r = self.report
        assert r is not None
        return (
            f"watch: {self.changes} file events -> {r.added} new, {r.changed} changed, {r.deleted} deleted "
            f"in {self.seconds:.2f}s"
        )


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _output_files() -> frozenset[tuple[int, int]]:
    """(device, inode) of this process's stdout and stderr where they are regular files."""
    out = set()
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out.add((st.st_dev, st.st_ino))
    return frozenset(out)


def changed_paths(root: Path, changes: set[tuple[watchfiles.Change, str]]) -> frozenset[str] | None:
    """The root-relative paths of a burst of events, or None when the burst
    needs a whole-tree refresh (see the module docstring)."""
    if len(changes) > SCOPED_MAX_PATHS:
        return None
    out = set()
    for _, path in changes:
        try:
            rel = Path(path).relative_to(root)
        except ValueError:
            return None
        if not rel.parts or rel.parts[0] == ".git" or rel.name in _FULL_SCAN_NAMES:
            return None
        if rel.name in PROJECT_MANIFESTS and _beside_build_output(root, rel):
            return None
        out.add(rel.as_posix())
    return frozenset(out)


def _beside_build_output(root: Path, manifest: Path) -> bool:
    """Whether a ``manifest`` (root-relative) saved or deleted changes
    whether a folder beside it is indexed: below the top, ``build/`` (and
    the like) beside a manifest is build output, and without one it is
    source (:data:`~repolens.discover.noise.BUILD_OUTPUT_NAMES`)."""
    folder = manifest.parent
    return bool(folder.parts) and any((root / folder / name).is_dir() for name in BUILD_OUTPUT_NAMES)


def refresh_once(
    store: Store,
    settings: Settings,
    changes: int = 0,
    paths: frozenset[str] | None = None,
) -> WatchEvent:
    started = time.monotonic()
    for attempt in range(3):
        try:
            report = build_index(
                store.root, store=store, settings=settings, lock_wait=LOCK_WAIT_S, paths=paths, compact=False
            )
            return WatchEvent(changes, report, seconds=time.monotonic() - started, paths=paths)
        except IndexLockedError as exc:  # another writer held on: try again shortly
            if attempt == 2:
                return WatchEvent(changes, None, str(exc), time.monotonic() - started, paths=paths)
            time.sleep(0.5)
        except (NothingToIndexError, RepolensError) as exc:
            return WatchEvent(changes, None, str(exc), time.monotonic() - started, paths=paths)
    raise AssertionError("unreachable")  # pragma: no cover


def compact_index(
    store: Store, settings: Settings, should_stop: Callable[[], bool] = lambda: False, lock_wait: float = 0.0
) -> int | None:
    """Make the published index of ``store`` rank as a fresh build again after
    refreshes that did not compact (:meth:`~repolens.store.base.IndexWriter.compact`):
    how many chunks were rewritten, None when ``should_stop()`` cut it short.
    Raises ``IndexLockedError`` when another writer holds the index longer
    than ``lock_wait`` seconds."""
    with full_disk_said(store, settings, rebuild=False), store.write_lock(wait=lock_wait):
        current = store.current()
        if current is None:
            return 0
        writer = store.open_writer(current)
        try:
            return writer.compact(should_stop)
        finally:
            writer.close()


def compact_once(store: Store, settings: Settings, should_stop: Callable[[], bool]) -> WatchEvent | None:
    """The watcher's compaction when saves pause: its event, None when it
    was stopped or another writer held the index (it is tried again at the
    next pause)."""
    started = time.monotonic()
    try:
        done = compact_index(store, settings, should_stop)
    except IndexLockedError:
        return None
    except RepolensError as exc:
        return WatchEvent(0, None, str(exc), time.monotonic() - started, compacted=0)
    if done is None:
        return None
    return WatchEvent(0, None, seconds=time.monotonic() - started, compacted=done)


class _Bursts:
    """The watched tree's bursts of file events, gathered by watchfiles in a
    thread of their own (see the module docstring)."""

    def __init__(
        self, root: Path, event_filter: EventFilter, debounce_ms: int, step_ms: int, stop: threading.Event
    ):
        self._queue: queue.SimpleQueue[set[tuple[watchfiles.Change, str]] | BaseException | None] = (
            queue.SimpleQueue()
        )
        self._ended: BaseException | None = None
        threading.Thread(
            target=self._gather,
            args=(root, event_filter, debounce_ms, step_ms, stop),
            name=f"repolens-events-{root.name}",
            daemon=True,
        ).start()

    def _gather(
        self, root: Path, event_filter: EventFilter, debounce_ms: int, step_ms: int, stop: threading.Event
    ) -> None:
        try:
            for changes in watchfiles.watch(
                root,
                *_outermost(event_filter.git_dirs),
                watch_filter=event_filter,
                debounce=debounce_ms,
                step=step_ms,
                stop_event=stop,
            ):
                self._queue.put(changes)
            self._queue.put(None)
        except BaseException as exc:  # (a root that went away): said by the thread that refreshes
            self._queue.put(exc)

    @property
    def pending(self) -> bool:
        """Whether a burst is waiting."""
        return not self._queue.empty()

    def next(self, timeout: float | None) -> set[tuple[watchfiles.Change, str]]:
        """The next burst with every one queued behind it (one refresh for
        them all); empty when none came within ``timeout`` seconds or
        watching ended (see :attr:`ended`)."""
        out: set[tuple[watchfiles.Change, str]] = set()
        with contextlib.suppress(queue.Empty):
            item = self._queue.get(timeout=timeout)
            while not self._end(item):
                out |= item
                item = self._queue.get_nowait()
        return out

    def _end(self, item: set[tuple[watchfiles.Change, str]] | BaseException | None) -> bool:
        """Whether ``item`` says that watching ended (remembered for :attr:`ended`)."""
        if item is not None and not isinstance(item, BaseException):
            return False
        self._ended = item or StopIteration()
        return True

    @property
    def ended(self) -> bool:
        """Whether watching ended; raises what ended it when that was an error."""
        if self._ended is not None and not isinstance(self._ended, StopIteration):
            raise self._ended
        return self._ended is not None


def watch(
    root: str | Path | None,
    *,
    index_dir: str | Path | None = None,
    stop: threading.Event | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    step_ms: int = STEP_MS,
) -> None:
    """Refresh the index of ``root`` now and after every burst of changes,
    and compact it when they pause (see the module docstring), until
    ``stop`` is set (or Ctrl-C). Blocks; run it in a thread to serve.

    The lexical index only: vectors are filled beside it by the background
    embedder (:func:`embed_in_background`, which ``serve`` and
    :func:`watch_and_embed` run), so a save is searchable as soon as its
    text is indexed.
    """
    store = open_store(root, index_dir)
    root_path = store.root
    settings = load_settings(root_path, {"vectors": False})
    report = on_event or (lambda e: log.info(e.line()))
    stop = stop or threading.Event()
    wanted = EventFilter(root_path, store.local_folder, _output_files(), git_folders(root_path))
    bursts = _Bursts(root_path, wanted, debounce_ms, step_ms, stop)
    try:
        report(refresh_once(store, settings))
        owed = True  # a compaction, since a refresh does not compact
        while not stop.is_set():
            try:
                changes = bursts.next(timeout=COMPACT_IDLE_S if owed else None)
            except KeyboardInterrupt:
                return
            if changes:
                report(refresh_once(store, settings, len(changes), changed_paths(root_path, changes)))
                owed = True
            elif bursts.ended:
                return
            elif owed and (event := compact_once(store, settings, lambda: bursts.pending or stop.is_set())):
                owed = False  # (one that failed is said once, and tried again after the next refresh)
                if event.error or event.compacted:
                    report(event)
    finally:
        stop.set()  # (Ctrl-C, an error) the thread gathering events ends too


def watch_and_embed(
    root: str | Path | None,
    *,
    index_dir: str | Path | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """``repolens watch``: :func:`watch`, and beside it the background
    embedder ``serve`` runs too (:func:`embed_in_background`), so the
    vectors of an index that has them stay as current as a refresh keeps
    them (the watcher alone left every changed chunk without one). Blocks
    until Ctrl-C; ``on_line`` hears the embedder's lines."""
    from repolens.validate import resolve_root

    root_path = resolve_root(root)
    folder = Path(index_dir) if index_dir is not None else None
    load_settings(root_path)  # a bad setting or store is said once, here, not by both threads
    open_store(root_path, folder)
    stop = threading.Event()
    embedder = threading.Thread(
        target=embed_in_background,
        args=(root_path, folder, stop, on_line),
        name=f"repolens-embed-{root_path.name}",
        daemon=True,
    )
    embedder.start()
    try:
        watch(root_path, index_dir=index_dir, stop=stop, on_event=on_event)
    finally:
        stop.set()
        embedder.join(EMBED_STOP_S)  # a batch under way is committed or undone; either way it resumes


def start_watcher(
    root: Path, index_dir: Path | None = None, on_event: Callable[[WatchEvent], None] | None = None
) -> tuple[threading.Thread, threading.Event]:
    """``watch`` in a daemon thread; set the returned event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(root,),
        kwargs={"index_dir": index_dir, "stop": stop, "on_event": on_event},
        name=f"repolens-watch-{root.name}",
        daemon=True,
    )
    thread.start()
    return thread, stop


EMBED_BATCHES_PER_LOCK = 2  # a few seconds of model time; a refresh waits at most that long
EMBED_IDLE_S = 5.0
EMBED_STOP_S = 10.0  # how long a stopping watcher waits for the embedder's batch under way


def embed_in_background(
    root: Path, index_dir: Path | None, stop: threading.Event, on_line: Callable[[str], None] | None = None
) -> None:
    """Fill missing vectors a couple of batches at a time, releasing the
    writer lock in between so the watcher's refreshes are never held up for
    long; idle when everything is embedded. Only for roots whose settings
    turn vectors on, or whose index holds vectors (a refresh of it embeds
    its changed chunks too: :func:`~repolens.index.build.holds_vectors`)."""
    from repolens.index import vectors
    from repolens.index.build import holds_vectors
    from repolens.models import make_embedder
    from repolens.models.embed_config import load_embed_config

    say = on_line or (lambda line: log.info(line))
    try:
        settings = load_settings(root)
        store = open_store(root, index_dir)
        if not settings.vectors and not holds_vectors(store):
            return
        embedder = make_embedder(load_embed_config(root))
    except RepolensError as exc:
        say(f"embedding in the background is off: {exc}")
        return
    if embedder is None:
        return
    cache = Path(settings.embed_cache).expanduser() if settings.embed_cache else None
    while not stop.is_set():
        gen = store.current()
        if gen is None:
            stop.wait(EMBED_IDLE_S)
            continue
        try:
            with store.write_lock(wait=LOCK_WAIT_S):
                writer = store.open_writer(gen)
                try:
                    vectors.drop_if_other_model(writer, embedder, settings.embed_style)
                    report = vectors.fill(
                        writer,
                        embedder,
                        style=settings.embed_style,
                        cache_dir=cache,
                        max_batches=EMBED_BATCHES_PER_LOCK,
                        should_stop=stop.is_set,
                    )
                    if report.done >= report.total and not stop.is_set():
                        line = writer.sync_dense_index(settings.ann_min_vectors)
                        if line:
                            say(f"vectors: {line}")
                finally:
                    writer.close()
        except IndexLockedError:
            continue
        except RepolensError as exc:
            say(f"background embedding stopped: {exc}")
            return
        if report.done >= report.total:
            stop.wait(EMBED_IDLE_S)


def start_background(
    roots: dict[str, Path],
    index_dir: Path | None = None,
    *,
    missing: dict[str, Path] | None = None,
    watch_files: bool = True,
    on_report: Callable[[str, IndexReport], None] | None = None,
) -> threading.Event:
    """What ``serve`` runs beside the protocol: a watcher per repository (unless
    ``watch_files`` is off) and, where vectors are on, a background embedder.
    ``missing``: configured roots whose folder is missing (name -> folder),
    each run for as the others from when its folder is back (a server
    serves it from then on too: :meth:`repolens.server.repos.Repos.look_again`).
    Daemon threads; set the returned event to stop them. Lines go to stderr;
    ``on_report(name, report)`` hears of every refresh (the server's metrics)."""
    import sys

    stop = threading.Event()

    def say(line: str) -> None:
        print(f"repolens: {line}", file=sys.stderr, flush=True)

    def on_event(name: str) -> Callable[[WatchEvent], None]:
        def show(event: WatchEvent) -> None:  # quiet unless something changed or failed
            r = event.report
            if r is not None and on_report is not None:
                on_report(name, r)
            if event.error or (r is not None and r.added + r.changed + r.deleted):
                say(f"{name}: {event.line()}")

        return show

    def start(name: str, root: Path, idx: Path | None) -> None:
        if watch_files:
            threading.Thread(
                target=watch,
                args=(root,),
                kwargs={"index_dir": idx, "stop": stop, "on_event": on_event(name)},
                name=f"repolens-watch-{name}",
                daemon=True,
            ).start()
        threading.Thread(
            target=embed_in_background,
            args=(root, idx, stop, lambda line, n=name: say(f"{n}: {line}")),
            name=f"repolens-embed-{name}",
            daemon=True,
        ).start()

    for name, root in roots.items():
        start(name, root, index_dir if len(roots) == 1 else None)
    # (a name in both, served meanwhile, is run for once; --index-dir is never a missing root's)
    gone = {name: folder for name, folder in (missing or {}).items() if name not in roots}
    if gone:
        args = (gone, lambda name, root: start(name, root, None), stop)
        threading.Thread(target=_await_back, args=args, name="repolens-await-back", daemon=True).start()
    return stop


def _await_back(missing: dict[str, Path], start: Callable[[str, Path], None], stop: threading.Event) -> None:
    """``start(name, root)`` for each of ``missing`` (name -> folder) once its
    folder is back: a stat of each every :data:`BACK_POLL_S`, until every
    one is back or ``stop`` is set. Looked at here, not when a call names it
    (:meth:`~repolens.server.repos.Repos.look_again`): with several worker
    processes the calls are answered in others than this one."""
    while missing and not stop.wait(BACK_POLL_S):
        for name, folder in list(missing.items()):
            root = folder_back(folder)
            if root is None:
                continue
            del missing[name]
            start(name, root)
