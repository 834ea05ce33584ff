"""Where an index lives, behind one interface (:mod:`repolens.store.base`).

:func:`open_store` gives the :class:`~repolens.store.base.Store` of a
repository: the local store (SQLite + tantivy files in ``<root>/.repolens``
or ``--index-dir``, :mod:`repolens.store.local`), or, when a store URL is
configured (:func:`store_choice`), the PostgreSQL store
(:mod:`repolens.store.postgres`).
:func:`format_versions` are what an index must have been written with to
be read by this code; anything else is refused with the fix
(:func:`check_versions`), never misread.

This module stays light (no database or search-engine import): discovery
and the adapters import it for :func:`resolve_root`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from repolens.errors import ROOT_FIX, ConfigError, IndexCorruptError, IndexVersionError, RootError
from repolens.validate import check_dir, check_user_path

if TYPE_CHECKING:
    from repolens.store.base import Store


def resolve_root(root: str | os.PathLike[str] | None) -> Path:
    """The repository root, resolved; ``RootError``, one line, when it is no
    directory or no usable path (:func:`repolens.validate.check_dir`)."""
    return check_dir("repository root", root if root is not None else ".", RootError, ROOT_FIX)


class StoreChoice(NamedTuple):
    """A database store for one repository: the primary's URL, the replicas
    readers use, and the key naming the repository there."""

    url: str
    key: str
    read_urls: tuple[str, ...] = ()


STORE_ENV = "REPOLENS_STORE"
READ_URL_ENV = "REPOLENS_STORE_READ_URL"
KEY_ENV = "REPOLENS_STORE_KEY"
# Stores named per repository by a server's config ([roots] app = {path, store}).
_bound: dict[Path, StoreChoice] = {}


def bind_store(root: Path, choice: StoreChoice) -> None:
    """Use ``choice`` for the repository at ``root`` in this process (a
    server's ``[roots]`` entry that names a store)."""
    _bound[root.resolve()] = choice


def store_urls(value: object, where: str) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(u, str) for u in items):
        raise ConfigError(f"{where} must be a URL or a list of URLs")
    urls = tuple(u.strip() for u in items if u.strip())
    for u in urls:
        check_store_url(u, where)
    return urls


def check_store_url(url: str, where: str) -> str:
    from repolens.store.postgres.connect import is_store_url, redact

    if not is_store_url(url):
        raise ConfigError(
            f"{where} {redact(url) if '@' in url else url!r} is not a PostgreSQL URL: "
            "use postgresql://[user@]host[:port]/database"
        )
    return url


def store_choice(root: Path, url: str | None = None) -> StoreChoice | None:
    """The database store of ``root``, or None for the local store. The URL
    comes from ``url`` (``--store``), else the repository's binding in a
    server's ``[roots]``, else ``REPOLENS_STORE``, else ``[store] url`` in the
    repository's ``.repolens.toml``. The key is the name a server's config
    file gives the root, else ``[store] key``, else ``REPOLENS_STORE_KEY``,
    else the folder's name."""
    from repolens.settings import config_table, environ

    bound = _bound.get(root)
    table = config_table(root).get("store", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{root}/.repolens.toml: [store] must be a table")
    chosen = url or (bound.url if bound else None) or environ(STORE_ENV) or table.get("url")
    if not chosen:
        return None
    check_store_url(chosen, "the store URL")
    reads_raw = environ(READ_URL_ENV) or table.get("read_url")
    reads = store_urls(reads_raw, "[store] read_url") if reads_raw else (bound.read_urls if bound else ())
    key = (bound.key if bound else "") or table.get("key") or environ(KEY_ENV) or _folder_key(root)
    return StoreChoice(chosen, str(key), reads)


def _folder_key(root: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-._") or "repo"


def open_store(
    root: str | os.PathLike[str] | None,
    index_dir: str | os.PathLike[str] | None = None,
    *,
    url: str | None = None,
) -> Store:
    """The store of ``root``: a PostgreSQL one when a store URL is configured
    (:func:`store_choice`) and no ``index_dir`` is given, else the local one
    in ``index_dir`` (default ``$REPOLENS_INDEX_DIR/<key>`` or
    ``<root>/.repolens``). Cheap: nothing is opened until a reader or writer
    is asked for (and psycopg is imported only for a database store)."""
    root_path = resolve_root(root)
    index_dir = _index_dir(index_dir)
    choice = store_choice(root_path, url) if index_dir is None else None
    if choice is not None:
        from repolens.store.postgres import PgStore

        return PgStore(root_path, choice.url, choice.key, choice.read_urls)
    from repolens.settings import environ
    from repolens.store.local import LocalStore
    from repolens.store.local.layout import INDEX_DIR_ENV, resolve_index_dir

    if index_dir is None and (env := environ(INDEX_DIR_ENV)):
        check_user_path(INDEX_DIR_ENV, env, ConfigError, fix=f"set {INDEX_DIR_ENV} to a folder")
    return LocalStore(root_path, resolve_index_dir(root_path, index_dir))


def _index_dir(index_dir: str | os.PathLike[str] | None) -> Path | None:
    """``index_dir`` checked as a path: one line for a path that can name no folder."""
    from repolens.validate import check_user_path

    return (
        None
        if index_dir is None
        else check_user_path("index folder", index_dir, fix="pass another {index_dir}")
    )


def format_versions() -> dict[str, int]:
    """The versions an index must match to be read by this code."""
    from repolens.store.document import LEXICAL_VERSION
    from repolens.store.local.sqlite import SCHEMA_VERSION
    from repolens.tokens import TOKENIZER_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "tokenizer_version": TOKENIZER_VERSION,
        "lexical_version": LEXICAL_VERSION,
    }


def check_versions(meta: dict[str, str], where: Path) -> None:
    """Refuse an index that is incomplete or written with other versions."""
    if not meta:
        raise IndexCorruptError(f"index for {where} is incomplete", fix="re-run `repolens index`")
    for key, expected in format_versions().items():
        found = meta.get(key)
        if found != str(expected):
            what = key.removesuffix("_version")
            raise IndexVersionError(
                f"index for {where} was written with {what} version {found or 'unknown'} "
                f"but this repolens reads version {expected}: re-run `repolens index`"
            )
