"""Use cases of an index as a whole: build or refresh it, open it, its
status, the indexes of a store (see :mod:`repolens.service`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from repolens.store import open_store
from repolens.validate import resolve_root

# Each use case imports its own stack when it runs: a new process (``repolens
# read`` from a shell) must not pay for the search, reply and store modules
# another use case needs (``tests/test_cli_imports.py``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from repolens.errors import NothingToIndexError
    from repolens.index.report import IndexReport, ProgressFn
    from repolens.index.status import IndexStatus
    from repolens.store.base import IndexReader, Store
    from repolens.store.inventory import Dropped, Inventory


def build_index(*args: Any, **kwargs: Any) -> IndexReport:
    """:func:`repolens.index.build.build_index`, imported on first use: the
    write path (discovery, chunkers, worker pools) costs a new process more
    than a whole search, and a search of a built index never needs it."""
    from repolens.index.build import build_index as build

    return build(*args, **kwargs)


def index_repo(
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_file_bytes: int | None = None,
    vectors: bool | None = None,
    rebuild: bool = False,
    progress: ProgressFn | None = None,
    vector_progress: ProgressFn | None = None,
    lock_wait: float = 0.0,
    siblings: Sequence[Path] = (),
) -> IndexReport:
    """Build the index of ``root``, or bring it up to date (only what changed
    is read); ``rebuild`` forces a fresh generation. ``lock_wait`` seconds
    are spent waiting for another writer (a server's watcher) to finish.
    ``siblings``: other branches' folders of the same repository, whose
    indexes identical files are copied from (the repository's other git
    worktrees are found without being named)."""
    from repolens.index.reuse import sibling_stores
    from repolens.settings import load_settings

    root_path = resolve_root(root)
    if vectors is None and not rebuild and _holds_vectors(root_path, index_dir):
        vectors = True  # a refresh keeps the vectors an index has: its changed chunks are embedded too
    settings = load_settings(root_path, {"max_file_bytes": max_file_bytes, "vectors": vectors})
    return build_index(
        root_path,
        index_dir=index_dir,
        settings=settings,
        rebuild=rebuild,
        progress=progress,
        vector_progress=vector_progress,
        lock_wait=lock_wait,
        siblings=sibling_stores(root_path, siblings) if siblings else None,
    )


def _holds_vectors(root: Path, index_dir: str | Path | None) -> bool:
    """Whether the published index of ``root`` was embedded (:func:`repolens.index.build.holds_vectors`)."""
    from repolens.errors import RepolensError
    from repolens.index.build import holds_vectors

    try:
        return holds_vectors(open_store(root, index_dir))
    except RepolensError:  # a store that cannot be named: the build says why
        return False


def open_index(
    root: str | Path | None,
    index_dir: str | Path | None = None,
    *,
    auto_index: bool = True,
    progress: ProgressFn | None = None,
) -> tuple[IndexReader, IndexReport | None]:
    """A reader of the current index of ``root`` (built first when missing and ``auto_index``)."""
    from repolens.index.ensure import published_reader

    return published_reader(open_store(root, index_dir), None, auto_index, progress)


def index_status(root: str | Path | None = None, *, index_dir: str | Path | None = None) -> IndexStatus:
    """What the index holds, and how many files changed on disk since.
    With no index, ``IndexMissingError`` says to build one, unless building
    one would fail: then the ``NothingToIndexError`` it would fail with says
    why (an empty folder, everything ignored, too large...)."""
    from repolens.errors import IndexMissingError
    from repolens.index.status import index_status as _status
    from repolens.store.handles import readers

    store = open_store(root, index_dir)
    try:
        reader = readers.get(store)
    except IndexMissingError as missing:
        unindexable = _nothing_to_index(store)
        if unindexable is not None:
            raise unindexable from missing
        raise
    return _status(store, reader)


def _nothing_to_index(store: Store) -> NothingToIndexError | None:
    """The error ``repolens index`` would give ``store``'s root for finding
    no file to index, from the same discovery; None when it finds some."""
    from repolens.discover import discover, nothing_to_index
    from repolens.settings import load_settings

    settings = load_settings(store.root)
    found = discover(
        store.root,
        max_file_bytes=settings.max_file_bytes,
        index_dir=store.local_folder,
        languages=settings.languages,
    )
    return None if found.files else nothing_to_index(found)


def list_indexes(store: str | None = None) -> Inventory:
    """Every index of a store (``store``, else the one this process names;
    see :mod:`repolens.store.inventory`)."""
    from repolens.store.inventory import list_indexes as _list

    return _list(store)


def drop_index(key: str, store: str | None = None) -> Dropped:
    """Remove the index ``key`` from a store (see :func:`list_indexes`)."""
    from repolens.store.inventory import drop_index as _drop

    return _drop(key, store)
