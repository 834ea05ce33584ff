"""Every index one store holds: ``repolens indexes`` lists them, ``repolens drop KEY`` removes one.

A store that holds many repositories (a PostgreSQL database, or a folder
shared by many roots through ``REPOLENS_INDEX_DIR``) can keep indexes that
nothing serves any more: a checkout that was deleted, or keys of an earlier
layout (before a root's key was its ``[roots]`` name, a root was keyed by
its folder's name). Listing them with what each holds, and dropping one
under its writer lock, is how they are found and removed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repolens.budget import counted
from repolens.errors import NotFoundError, UsageError
from repolens.record import Record
from repolens.store.identity import recorded_identity


@dataclass(frozen=True)
class IndexEntry:
    """One index of a store: its key, its newest generation and what it holds."""

    key: str
    generation: str  # "" for a key with no generation left
    state: str  # published, building (never published), or empty
    files: int
    chunks: int
    updated_at: str
    holds: str  # the repository it records (RepoIdentity.describe), "" when unknown
    branch: str = ""

    def line(self) -> str:
        if self.state == "empty":
            return f"{self.key}: empty (no generation)"
        what = f"{counted(self.files, 'file')}, {counted(self.chunks, 'chunk')}"
        building = ", never published (an interrupted build)" if self.state == "building" else ""
        branch = f" on branch {self.branch}" if self.branch else ""
        holds = f"; holds {self.holds}{branch}" if self.holds else ""
        updated = self.updated_at or "unknown"
        return f"{self.key}: {self.generation}, {what}{building}, updated {updated}{holds}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def entry_from_meta(key: str, generation: str, state: str, meta: dict[str, str]) -> IndexEntry:
    """An entry from a generation's meta (as either store keeps it)."""
    recorded = recorded_identity(meta)

    def number(name: str) -> int:
        try:
            return int(meta.get(name, "0"))
        except ValueError:
            return 0

    return IndexEntry(
        key=key,
        generation=generation,
        state=state,
        files=number("files"),
        chunks=number("chunks"),
        updated_at=meta.get("updated_at", meta.get("created_at", "")),
        holds=recorded.describe() if recorded else "",
        branch=meta.get("branch", ""),
    )


class Inventory(Record):
    """The indexes of one store, with where it is (for the reply's first line)."""

    where: str
    entries: list[IndexEntry]

    def render(self) -> str:
        head = f"{counted(len(self.entries), 'index', 'indexes')} in {self.where}"
        return "\n".join([head, *(_listed(e) for e in self.entries)])

    def to_json(self) -> dict[str, Any]:
        return {"store": self.where, "indexes": [e.to_json() for e in self.entries]}


def _listed(entry: IndexEntry) -> str:
    """An entry's line in a listing; an empty one (a key with no generation:
    in a folder, what a failed first build of an earlier version left) with
    the command that removes it."""
    if entry.state == "empty":
        return f"{entry.line()}: remove it with `repolens drop {entry.key}`"
    return entry.line()


class Dropped(Record):
    where: str
    entry: IndexEntry

    def render(self) -> str:
        return f"dropped {self.entry.key} from {self.where} (was {self.entry.line()})"

    def to_json(self) -> dict[str, Any]:
        return {"store": self.where, "dropped": self.entry.to_json()}


def _place(url: str | None) -> tuple[str | None, Path | None, str]:
    """The store ``repolens indexes``/``drop`` act on: ``url`` (``--store``),
    else the one this process's location rules name for the current folder
    (``REPOLENS_STORE``, ``[store] url``), else the shared folder of
    ``REPOLENS_INDEX_DIR``; (url, folder, shown)."""
    from repolens.settings import environ
    from repolens.store import INDEX_DIR_ENV, check_store_url, locate, store_flag
    from repolens.store.postgres.connect import redact
    from repolens.validate import resolve_root

    url = url or store_flag()
    if url:
        check_store_url(url, "--store")
        return url, None, redact(url)
    where = locate(resolve_root(None))
    if where.store is not None:
        return where.store.url, None, redact(where.store.url)
    if where.source == INDEX_DIR_ENV:
        parent = Path(environ(INDEX_DIR_ENV) or ".").expanduser().resolve()
        return None, parent, str(parent)
    raise UsageError(
        "no store holding many indexes is named: pass --store URL, or set REPOLENS_STORE or "
        f"{INDEX_DIR_ENV} (a repository's own index is its .repolens folder: see `repolens status`)"
    )


def list_indexes(url: str | None = None) -> Inventory:
    """Every index of the store (see :func:`_place`), by key."""
    store_url, folder, shown = _place(url)
    if store_url is not None:
        from repolens.store.postgres.inventory import pg_indexes

        found = pg_indexes(store_url)
    else:
        from repolens.store.local.inventory import local_indexes

        assert folder is not None
        found = local_indexes(folder) if folder.is_dir() else []
    return Inventory(shown, [entry_from_meta(*index) for index in found])


def drop_index(key: str, url: str | None = None) -> Dropped:
    """Remove the index ``key`` of the store, under its writer lock
    (``IndexLockedError`` while another process writes it); ``NotFoundError``
    listing the keys when the store has no such index."""
    if not isinstance(key, str) or not key.strip():
        raise UsageError("pass KEY: the key of an index, as `repolens indexes` lists it")
    found = list_indexes(url)
    entry = next((e for e in found.entries if e.key == key), None)
    if entry is None:
        keys = ", ".join(e.key for e in found.entries) or "(none)"
        raise NotFoundError(f"no index {key!r} in {found.where}: its indexes are {keys}")
    store_url, folder, _ = _place(url)
    if store_url is not None:
        from repolens.store.postgres.inventory import pg_drop

        pg_drop(store_url, key)
    else:
        from repolens.store.local.inventory import local_drop

        assert folder is not None
        local_drop(folder, key)
    return Dropped(found.where, entry)
