"""Open readers per store and thread, for long-running servers.

One reader per thread: a server answers many calls at once from a pool of
worker threads, and one shared database connection would serialize them,
while a reader closed by one thread (a rebuild was published) must never be
one another thread is still reading. Each thread reopens its own reader when
the store's published generation changes, and sees the batches committed
since it last asked (:meth:`~repolens.store.base.IndexReader.refresh`).
The readers of threads that have ended (worker pools retire idle threads)
are closed whenever a new one is opened.
"""

from __future__ import annotations

import threading

from repolens.store.base import IndexReader, Store


class ReaderCache:
    """Readers by (store location, root, thread); invalidated by a new
    published generation. A reader is opened only for the repository its
    index holds (:func:`~repolens.store.identity.check_identity`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str, int], IndexReader] = {}

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
        if reader is not None and reader.generation == current:
            if refresh:
                reader.refresh()
            return reader
        if reader is not None:
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
            alive = {t.ident for t in threading.enumerate()}
            ended = [k for k in self._open if k[2] not in alive]
            for k in ended:
                self._open.pop(k).close()
        return reader

    def clear(self) -> None:
        """Close every reader (tests; a server shutting down)."""
        with self._lock:
            for reader in self._open.values():
                reader.close()
            self._open.clear()


readers = ReaderCache()
