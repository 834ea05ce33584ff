"""Where an index lives, behind one interface (:mod:`repolens.store.base`).

:func:`open_store` gives the :class:`~repolens.store.base.Store` of a
repository: the local store (SQLite + tantivy files in ``<root>/.repolens``
or ``--index-dir``, :mod:`repolens.store.local`), or, when a store URL is
configured (:func:`locate`), the PostgreSQL store
(:mod:`repolens.store.postgres`).
What the two backends share is in modules they import, never here (this
module opens them): the versions an index must have been written with
(:mod:`repolens.store.versions`) and the protocols (:mod:`repolens.store.base`).

This module stays light (no database or search-engine import): every
command opens its store through it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from repolens.errors import ConfigError, UsageError
from repolens.record import Record
from repolens.validate import check_user_path, resolve_root

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.store.base import Store


class StoreChoice(Record):
    """A database store for one repository: the primary's URL, the replicas
    readers use, and the key naming the repository there (with what named it,
    for the fix of an error about it)."""

    url: str
    key: str
    read_urls: tuple[str, ...] = ()
    key_from: str = ""


class Binding(Record):
    """What a server's config file says of one of its roots: its ``name``
    (the key of its index in a store, ``app@main``), and the store its
    ``[roots]`` entry or the file's ``[store]`` names, if any."""

    name: str
    source: str  # the config file, for messages
    url: str = ""
    read_urls: tuple[str, ...] = ()


class Location(Record):
    """Where the index of one root lives: a database store, or a local
    folder; ``source`` is what named it (``--store``, ``REPOLENS_STORE``,
    a config file's ``[store] url``, ``--index-dir``, ...), for replies."""

    store: StoreChoice | None
    index_dir: Path | None
    source: str


STORE_ENV = "REPOLENS_STORE"
READ_URL_ENV = "REPOLENS_STORE_READ_URL"
KEY_ENV = "REPOLENS_STORE_KEY"
INDEX_DIR_ENV = "REPOLENS_INDEX_DIR"
# What the configs of a server say of its roots (bind_root), and this
# process's --store (use_store_flag): set once by an adapter at start-up,
# read by every open_store of the process.
_bound: dict[Path, Binding] = {}
_flags: dict[str, str] = {}


def bind_root(root: Path, binding: Binding) -> None:
    """Name ``root`` as a server's config does (its key in a store, and the
    store its entry names) for every store this process opens for it."""
    _bound[root.resolve()] = binding


def bound_roots() -> dict[Path, Binding]:
    """The bindings of this process (a spawned worker process re-applies them)."""
    return dict(_bound)


def use_store_flag(url: str | None) -> None:
    """``--store URL``: where this process's indexes live, over the
    environment and config files (None: no flag)."""
    if url:
        _flags["store"] = url
    else:
        _flags.pop("store", None)


def store_flag() -> str | None:
    return _flags.get("store")


def store_urls(value: object, where: str) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else None
    if items is None or not all(isinstance(u, str) for u in items):
        raise ConfigError(f"{where} must be a URL or a list of URLs")
    urls = tuple(u.strip() for u in items if u.strip())
    for u in urls:
        check_store_url(u, where)
    return urls


def check_store_url(url: str, where: str) -> str:
    """``url``, refused in one line when it is no PostgreSQL URL or cannot be
    parsed (``postgresql://[::1``): a usage error for a flag (``--store``),
    a configuration error for a variable or a file."""
    from urllib.parse import urlsplit

    from repolens.store.postgres.connect import is_store_url, redact

    error = UsageError if where.startswith("--") else ConfigError
    if not is_store_url(url):
        shown = redact(url) if "@" in url else repr(redact(url))  # (a libpq keyword string too)
        raise error(f"{where} {shown} is not a PostgreSQL URL: use postgresql://[user@]host[:port]/database")
    try:
        _ = urlsplit(url).port  # (a bracket left open, a port that is no number)
    except ValueError as exc:
        shown = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
        raise error(
            f"{where} {shown!r} is not a valid URL ({exc}): use postgresql://[user@]host[:port]/database"
        ) from None
    return url


def locate(root: Path, index_dir: str | os.PathLike[str] | None = None, url: str | None = None) -> Location:
    """Where the index of ``root`` lives, from what names a place for it:
    flags (``index_dir``, ``url`` or this process's ``--store``), then the
    environment (``REPOLENS_INDEX_DIR``, ``REPOLENS_STORE``), then config
    files (the root's binding in a server's config, ``[store] url`` in the
    repository's ``.repolens.toml``). A flag wins over the others; two
    places named at one level that disagree are refused (``UsageError``
    for flags, ``ConfigError`` otherwise), naming both and which to drop:
    an index is never written or looked for where the user did not mean."""
    from repolens.settings import environ

    flag_url = url or store_flag()
    if index_dir is not None and flag_url:
        raise UsageError(
            f"--index-dir {index_dir} and --store {shown_url(flag_url)} both say where the index lives: "
            "pass only one of them"
        )
    if index_dir is not None:
        return Location(None, Path(index_dir).expanduser().resolve(), "--index-dir")
    if flag_url:
        return Location(_choice(root, check_store_url(flag_url, "--store")), None, "--store")
    env_dir, env_url = environ(INDEX_DIR_ENV), environ(STORE_ENV)
    config_url, config_from = _config_url(root)
    if env_dir and env_url:
        raise ConfigError(
            f"{INDEX_DIR_ENV}={env_dir} and {STORE_ENV}={shown_url(env_url)} both say where indexes live: "
            "unset one of them (or pass --index-dir or --store, which win over both)"
        )
    if env_url:
        if config_url and config_url != env_url:
            raise ConfigError(
                f"{STORE_ENV}={shown_url(env_url)} and {config_from} ({shown_url(config_url)}) "
                f"name two stores: unset {STORE_ENV} or make them agree "
                "(or pass --store, which wins over both)"
            )
        return Location(_choice(root, check_store_url(env_url, STORE_ENV)), None, STORE_ENV)
    if env_dir:
        check_user_path(INDEX_DIR_ENV, env_dir, ConfigError, fix=f"set {INDEX_DIR_ENV} to a folder")
        if config_url:
            raise ConfigError(
                f"{INDEX_DIR_ENV}={env_dir} names a local folder but {config_from} names the store "
                f"{shown_url(config_url)}: unset {INDEX_DIR_ENV} (or pass --index-dir or --store, which win)"
            )
        from repolens.store.local.layout import shared_index_dir

        return Location(None, shared_index_dir(root, env_dir), INDEX_DIR_ENV)
    if config_url:
        return Location(_choice(root, check_store_url(config_url, config_from)), None, config_from)
    from repolens.store.local.layout import INDEX_DIR_NAME

    return Location(None, root / INDEX_DIR_NAME, "the default")


def _config_url(root: Path) -> tuple[str, str]:
    """The store URL config files name for ``root`` and which one (("", "")
    when none): the server's binding and the repository's ``[store] url``,
    refused when they disagree."""
    bound = _bound.get(root)
    table = _store_table(root)
    mine = table.get("url") or ""
    if not isinstance(mine, str):
        raise ConfigError(f"{_config_file(root)}: [store] url must be a PostgreSQL URL string")
    if bound is not None and bound.url:
        if mine and mine != bound.url:
            raise ConfigError(
                f"{bound.source} serves {root} from the store {shown_url(bound.url)} but {_config_file(root)}"
                f" [store] url names {shown_url(mine)}: make them agree, or remove one"
            )
        return bound.url, f"{bound.source} [store]"
    return (mine, f"{_config_file(root)} [store] url") if mine else ("", "")


def _config_file(root: Path) -> Path:
    """The repository's config file (:data:`repolens.settings.CONFIG_FILE`)."""
    from repolens.settings import CONFIG_FILE

    return root / CONFIG_FILE


def _store_table(root: Path) -> dict[str, object]:
    from repolens.settings import config_table

    table = config_table(root).get("store", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{_config_file(root)}: [store] must be a table")
    return table


def _choice(root: Path, url: str) -> StoreChoice:
    """The store at ``url`` for ``root``: its replicas and its key. The key is
    the name a server's config gives the root (however the URL is given),
    else ``[store] key`` in its ``.repolens.toml``, else ``REPOLENS_STORE_KEY``,
    else the folder's name."""
    from repolens.settings import environ
    from repolens.store.base import ROOTS_OF

    bound = _bound.get(root)
    table = _store_table(root)
    reads_raw = environ(READ_URL_ENV) or table.get("read_url")
    reads = store_urls(reads_raw, "[store] read_url") if reads_raw else (bound.read_urls if bound else ())
    config = _config_file(root)
    if bound is not None:
        return StoreChoice(url, bound.name, reads, f"{ROOTS_OF}{bound.source}")
    if (key := table.get("key")) is not None:
        if not isinstance(key, str) or not re.match(KEY_RE, key):
            raise ConfigError(f"{config}: [store] key must be {KEY_FORM}, got {key!r}")
        return StoreChoice(url, key, reads, f"[store] key in {config}")
    if key := environ(KEY_ENV):
        if not re.match(KEY_RE, key):
            raise ConfigError(f"{KEY_ENV} must be {KEY_FORM}, got {key!r}")
        return StoreChoice(url, key, reads, KEY_ENV)
    return StoreChoice(url, folder_key(root), reads, "")


# A key travels in messages and in `repolens drop KEY`: plain text, as a repository name with its branch.
KEY_RE = r"^[A-Za-z0-9][A-Za-z0-9._/+@-]{0,199}$"  # compiled at first use: a search needs none
KEY_FORM = "1-200 letters, digits, '.', '_', '-', '/', '+' or '@', starting with a letter or digit"


def folder_key(root: Path) -> str:
    """The key of a root nothing names: its folder's name, made plain."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-._") or "repo"


def shown_url(url: str) -> str:
    """A store URL as messages show it: its password left out."""
    from repolens.store.postgres.connect import redact

    return redact(url)


def open_store(
    root: str | os.PathLike[str] | None,
    index_dir: str | os.PathLike[str] | None = None,
    *,
    url: str | None = None,
) -> Store:
    """The store of ``root`` where :func:`locate` says its index lives
    (``index_dir`` and ``url`` are flags: a local folder, a store URL).
    Cheap: nothing is opened until a reader or writer is asked for (and
    psycopg is imported only for a database store)."""
    root_path = resolve_root(root)
    where = locate(root_path, _index_dir(index_dir), url)
    if where.store is not None:
        from repolens.store.postgres import PgStore

        choice = where.store
        return PgStore(
            root_path,
            choice.url,
            choice.key,
            choice.read_urls,
            named_by=where.source,
            key_from=choice.key_from,
        )
    from repolens.store.local import LocalStore

    assert where.index_dir is not None
    return LocalStore(root_path, where.index_dir, named_by=where.source)


def _index_dir(index_dir: str | os.PathLike[str] | None) -> Path | None:
    """``index_dir`` checked as a path: one line for a path that can name no folder."""
    from repolens.validate import check_user_path

    return (
        None
        if index_dir is None
        else check_user_path("index folder", index_dir, fix="pass another {index_dir}")
    )
