"""The local store: an index in files beside the repository (the default).

Each generation is a folder holding a SQLite database (files, chunks,
symbols, vectors, meta) and a tantivy index (BM25); :mod:`.layout` says how
the folders are laid out, locked and published. It meets the guarantees of
:mod:`repolens.store.base` with a symlink swapped by one ``rename`` (atomic
publish), ``flock`` (one writer), SQLite's WAL (readers keep a snapshot while
the writer commits) and tantivy's previous commit kept until SQLite's lands
(batches, :mod:`.writer`). A damaged file or a full disk is said in one line
(:mod:`.failures`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from repolens.errors import IndexCorruptError, IndexMissingError
from repolens.fronts import say
from repolens.store.local import sqlite as sq
from repolens.store.local.failures import damage_mark, failure
from repolens.store.local.generation import BUILDING, DB_NAME
from repolens.store.local.layout import IndexLayout
from repolens.store.local.reader import LocalReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.store.base import Store
    from repolens.store.local.writer import LocalWriter


class LocalStore:
    """The index of ``root`` in ``index_dir`` (:class:`repolens.store.base.Store`)."""

    def __init__(self, root: Path, index_dir: Path, *, named_by: str = "") -> None:
        self.layout = IndexLayout(root, index_dir)
        self.named_by = named_by  # what named the folder (repolens.store.locate), for replies

    @property
    def root(self) -> Path:
        return self.layout.root

    @property
    def location(self) -> str:
        return str(self.layout.index_dir)

    @property
    def local_folder(self) -> Path:
        return self.layout.index_dir

    def foreign_fix(self) -> str | None:
        folder = self.layout.index_dir
        if folder.parent == self.root:
            return None
        if self.named_by == "--index-dir":
            return say("index dir anew", root=self.root, folder=folder)
        return say("delete foreign", root=self.root, folder=folder)

    def _dir(self, generation: str) -> Path:
        building = self.layout.index_dir / f"{generation}{BUILDING}"
        return building if building.is_dir() else self.layout.index_dir / generation

    def current(self) -> str | None:
        gen = self.layout.current_generation()
        return gen.name if gen is not None else None

    def missing(self) -> IndexMissingError:
        return self.layout.missing()

    def open_reader(self) -> LocalReader:
        gen = self.layout.require_current()
        if (damage := damage_mark(gen)) is not None:
            raise damage
        try:
            return LocalReader(self.root, self.layout.index_dir, gen)
        except IndexCorruptError:
            # The generation may have been replaced and collected between
            # resolving ``current`` and opening it; resolve once more.
            newer = self.layout.require_current()
            if newer == gen:
                raise
            return LocalReader(self.root, self.layout.index_dir, newer)

    def probe_batch(self) -> None:
        return None  # a folder is asked alone, by its reader

    def held_terms_batch(self, stores: Sequence[Store], tokens: Sequence[str]) -> list[frozenset[str] | None]:
        from repolens.store.handles import readers

        return [
            readers.get(s, current, refresh=False).held_terms(tokens) if (current := s.current()) else None
            for s in stores
        ]

    def write_lock(self, wait: float = 0.0) -> AbstractContextManager[None]:
        return self.layout.write_lock(wait=wait)

    def lock_sockets(self) -> frozenset[int]:
        return frozenset()  # the lock is a file's

    def generation_meta(self, generation: str) -> dict[str, str]:
        gen_dir = self._dir(generation)
        if (damage := damage_mark(gen_dir)) is not None:
            raise damage
        db = sq.open_reader(gen_dir / DB_NAME)
        try:
            return sq.read_meta(db)
        except Exception as exc:  # a damaged file
            raise failure(exc, gen_dir) or IndexCorruptError(type(exc).__name__) from exc
        finally:
            db.close()

    def building(self) -> list[str]:
        return [p.name.removesuffix(BUILDING) for p in self.layout.building_dirs()]

    def writing(self) -> bool | None:
        return self.layout.lock_held()

    def new_generation(self) -> str:
        return self.layout.new_building_dir().name.removesuffix(BUILDING)

    def open_writer(self, generation: str, *, create: bool = False) -> LocalWriter:
        from repolens.store.local.writer import LocalWriter  # the write path: not for a search

        return LocalWriter(self.root, self.layout.index_dir, self._dir(generation), create=create)

    def publish(self, generation: str) -> None:
        self.layout.publish(self._dir(generation))

    def discard(self, generation: str) -> None:
        import shutil

        shutil.rmtree(self._dir(generation), ignore_errors=True)

    def collect_garbage(self, keep: str | None = None) -> None:
        self.layout.collect_garbage(keep=self._dir(keep) if keep is not None else None)

    def shared_vectors(self, chunk_ids: Iterable[str], meta: Mapping[str, str]) -> dict[str, bytes]:
        return {}  # one repository per store
