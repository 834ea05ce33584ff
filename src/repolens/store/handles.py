"""Open readers per store and thread, for long-running servers.

One reader per thread: a server answers many calls at once from a pool of
worker threads, and one shared database connection would serialize them,
while a reader closed by one thread (a rebuild was published) must never be
one another thread is still reading. Each thread reopens its own reader when
the store's published generation changes, and sees the batches committed
since it last asked (:meth:`~repolens.store.base.IndexReader.refresh`).
The readers of threads that have ended (worker pools retire idle threads)
are closed whenever a new one is opened, and so is a thread's least
recently used reader past :data:`READERS_PER_THREAD`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from repolens.errors import IndexBuildingError, RepolensError
from repolens.store.base import IndexReader, Store

# Readers one thread keeps open; past it, the one it used longest ago is
# closed. A thread is given its own readers only: one it closes is never
# in another thread's hands. The pool of a search of several repositories
# (4 threads) keeps 4 x 32 repositories' readers warm.
READERS_PER_THREAD = 32


class ReaderCache:
    """Readers by (store location, root, thread); invalidated by a new
    published generation, and at most ``per_thread`` per thread (least
    recently used closed first). A reader is opened only for the repository
    its index holds (:func:`~repolens.store.identity.check_identity`)."""

    def __init__(self, per_thread: int = READERS_PER_THREAD) -> None:
        self._lock = threading.Lock()
        self._open: OrderedDict[tuple[str, str, int], IndexReader] = (
            OrderedDict()
        )  # least recently used first
        self._per_thread = per_thread

    def get(self, store: Store, current: str | None = None, *, refresh: bool = True) -> IndexReader:
        """This thread's reader of the store's published generation
        (``IndexMissingError`` when there is none); ``current``: its name,
        when the caller has just asked the store. ``refresh=False`` keeps a
        reader of that generation as it was last refreshed: for a caller
        that reads only the generation's rows, not its meta (the probe of a
        search across repositories, once per repository asked: on
        PostgreSQL a refresh is a round trip)."""
        current = current or store.current()
        if current is None:
            raise store.missing()
        key = (store.location, str(store.root), threading.get_ident())
        with self._lock:
            reader = self._open.get(key)
            if reader is not None:
                self._open.move_to_end(key)
        if reader is not None and reader.generation == current and not reader.replaced():
            if refresh:
                reader.refresh()
            return reader
        if reader is not None:
            with self._lock:
                self._open.pop(key, None)
            reader.close()
        reader = store.open_reader()
        if store.foreign_fix() is not None:  # a place another repository could have written
            from repolens.store.identity import check_identity

            try:
                check_identity(reader.meta(), store)
            except BaseException:
                reader.close()
                raise
        with self._lock:
            self._open[key] = reader
            closing = self._retired(key[2])
        for old in closing:
            old.close()
        return reader

    def _retired(self, thread: int) -> list[IndexReader]:
        """The readers to close, taken out (under the lock): every reader of
        a thread that has ended (worker pools retire idle threads), and this
        thread's least recently used past ``per_thread``."""
        alive = {t.ident for t in threading.enumerate()}
        mine = [k for k in self._open if k[2] == thread]
        gone = [k for k in self._open if k[2] not in alive] + mine[: max(0, len(mine) - self._per_thread)]
        return [self._open.pop(k) for k in gone]

    def clear(self) -> None:
        """Close every reader (tests; a server shutting down)."""
        with self._lock:
            for reader in self._open.values():
                reader.close()
            self._open.clear()


readers = ReaderCache()


def unpublished(store: Store) -> RepolensError:
    """Why ``store`` has no published index to read: another process is
    building its first one (a search of it then answers), or there is none
    (``IndexMissingError``, with the command that builds one)."""
    if store.writing():
        return IndexBuildingError(
            f"the index of {store.root} in {store.location} is being built by another process: "
            "it is answered from as soon as that build is published; try again shortly"
        )
    return store.missing()
