"""A reader of a repository's published index, its first build done when it has none.

Every use case that reads an index starts here (a search, a symbol lookup,
focused context): a repository asked before it was ever indexed is indexed
then, or, when another process is building that first index, waited for a
while (``index_wait``) and then refused with a line saying so.
"""

from __future__ import annotations

from repolens.errors import IndexBuildingError, IndexLockedError
from repolens.settings import load_settings
from repolens.store.handles import readers, unpublished

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.index.report import IndexReport, ProgressFn
    from repolens.settings import Settings
    from repolens.store.base import IndexReader, Store


def published_reader(
    store: Store, settings: Settings | None, auto_index: bool, progress: ProgressFn | None
) -> tuple[IndexReader, IndexReport | None]:
    """A reader of the store's published index; a repository that has none
    is indexed first (``auto_index``, with the report of that build), else
    refused with the store's fix. The published generation is asked once
    (on PostgreSQL a round trip; every search starts here)."""
    current = store.current()
    if current is not None:
        return readers.get(store, current), None
    if not auto_index:
        raise unpublished(store)
    # A search that finds no index builds one; if another process (a watcher,
    # an indexer beside a server) is building it, it waits for that a while.
    from repolens.index.build import build_index  # the write path: only for a missing index

    settings = settings or load_settings(store.root)
    try:
        report = build_index(
            store.root, store=store, settings=settings, progress=progress, lock_wait=settings.index_wait
        )
    except IndexLockedError as exc:  # another process is building it: say so, not "locked"
        if store.current() is not None:
            return readers.get(store), None
        raise IndexBuildingError(
            f"the index of {store.root} in {store.location} is still being built by another process"
            f"{exc.holder}: it is answered from as soon as that build is published; try again shortly"
        ) from None
    return readers.get(store), report
