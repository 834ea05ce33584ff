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
refresh never triggers another one.

A burst of a few saved files is refreshed through those paths alone
(``build_index(paths=...)``: git lists just them, the same rules decide), so
a save is searchable in a fraction of what a whole-tree scan costs on a big
repository. Anything that can change more than the named files -- an
ignore or config file, a folder, a symlink, a burst of more than
``SCOPED_MAX_PATHS`` paths -- gets the whole-tree refresh.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from repolens.errors import IndexLockedError, NothingToIndexError, RepolensError
from repolens.index.build import IndexReport, build_index
from repolens.settings import Settings, load_settings
from repolens.store import open_store
from repolens.store.base import Store

log = logging.getLogger("repolens.index.watch")

DEBOUNCE_MS = 1000
STEP_MS = 50
LOCK_WAIT_S = 10.0
SCOPED_MAX_PATHS = 200
# Files whose change can alter what else is indexed.
_FULL_SCAN_NAMES = frozenset({".gitignore", ".repolensignore", ".repolens.toml", ".gitmodules"})
_NOISE_PARTS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox"})
_NOISE_SUFFIXES = (".pyc", ".pyo", ".swp", ".swx", "~", ".tmp")


@dataclass(frozen=True)
class EventFilter:
    """Which file events can matter to the index."""

    root: Path
    index_dir: Path | None  # the store's own folder (Store.local_folder)

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        p = Path(path)
        if self.index_dir is not None and (p == self.index_dir or self.index_dir in p.parents):
            return False
        try:
            rel = p.relative_to(self.root)
        except ValueError:
            return False
        parts = rel.parts
        if parts and parts[0] == ".git":
            # Only the local exclude file changes what is indexed.
            return parts[1:] == ("info", "exclude")
        if _NOISE_PARTS.intersection(parts):
            return False
        return not p.name.endswith(_NOISE_SUFFIXES)


@dataclass
class WatchEvent:
    """One refresh done by the watcher (or the error it met)."""

    changes: int
    report: IndexReport | None
    error: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        if self.error:
            return f"watch: {self.changes} file events; refresh failed: {self.error}"
        r = self.report
        assert r is not None
        return (
            f"watch: {self.changes} file events -> {r.added} new, {r.changed} changed, {r.deleted} deleted "
            f"in {self.seconds:.2f}s"
        )


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
        out.add(rel.as_posix())
    return frozenset(out)


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
                store.root, store=store, settings=settings, lock_wait=LOCK_WAIT_S, paths=paths
            )
            return WatchEvent(changes, report, seconds=time.monotonic() - started)
        except IndexLockedError as exc:  # another writer held on: try again shortly
            if attempt == 2:
                return WatchEvent(changes, None, str(exc), time.monotonic() - started)
            time.sleep(0.5)
        except (NothingToIndexError, RepolensError) as exc:
            return WatchEvent(changes, None, str(exc), time.monotonic() - started)
    raise AssertionError("unreachable")  # pragma: no cover


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
    until ``stop`` is set (or Ctrl-C). Blocks; run it in a thread to serve.

    The lexical index only: vectors are filled by whoever owns embedding
    (``repolens index``, or the server's background embedder), so a save is
    searchable as soon as its text is indexed.
    """
    store = open_store(root, index_dir)
    root_path = store.root
    settings = load_settings(root_path, {"vectors": False})
    report = on_event or (lambda e: log.info(e.line()))
    report(refresh_once(store, settings))
    event_filter = EventFilter(root_path, store.local_folder)
    for changes in watchfiles.watch(
        root_path,
        watch_filter=event_filter,
        debounce=debounce_ms,
        step=step_ms,
        stop_event=stop,
        raise_interrupt=False,
    ):
        paths = changed_paths(root_path, changes)
        report(refresh_once(store, settings, len(changes), paths))
        if stop is not None and stop.is_set():
            break


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


def embed_in_background(
    root: Path, index_dir: Path | None, stop: threading.Event, on_line: Callable[[str], None] | None = None
) -> None:
    """Fill missing vectors a couple of batches at a time, releasing the
    writer lock in between so the watcher's refreshes are never held up for
    long; idle when everything is embedded. Only for roots whose settings
    turn vectors on."""
    from repolens.index import vectors
    from repolens.models import make_embedder
    from repolens.models.embed_config import load_embed_config

    settings = load_settings(root)
    if not settings.vectors:
        return
    store = open_store(root, index_dir)
    say = on_line or (lambda line: log.info(line))
    try:
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
    roots: dict[str, Path], index_dir: Path | None = None, *, watch_files: bool = True
) -> threading.Event:
    """What ``serve`` runs beside the protocol: a watcher per repository (unless
    ``watch_files`` is off) and, where vectors are on, a background embedder.
    Daemon threads; set the returned event to stop them. Lines go to stderr."""
    import sys

    stop = threading.Event()

    def say(line: str) -> None:
        print(f"repolens: {line}", file=sys.stderr, flush=True)

    def on_event(name: str) -> Callable[[WatchEvent], None]:
        def show(event: WatchEvent) -> None:  # quiet unless something changed or failed
            r = event.report
            if event.error or (r is not None and r.added + r.changed + r.deleted):
                say(f"{name}: {event.line()}")

        return show

    for name, root in roots.items():
        idx = index_dir if len(roots) == 1 else None
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
    return stop
