"""Connections to a PostgreSQL store: URLs, redaction, pools, timeouts, errors.

A store URL is a libpq connection URI (``postgresql://user@host:port/db?sslmode=require``);
everything libpq reads besides the URL applies as usual: ``PGPASSWORD``,
``~/.pgpass``, a service file (``postgresql:///?service=code``), ``sslmode``
and friends. A password is never printed: every message, ``status`` line and
log names the server by :func:`redact` of its URL.

One pool per URL and process (:func:`pool_for`), opened lazily; every
connection carries a ``statement_timeout`` so no query can hang a search or
an indexer. The first statement of a search (the look-up of the published
generation) runs on a checked connection, and so does any connection that
idled or was last used before a failure, so a server that restarted is
reconnected to instead of failing later calls (:func:`_check`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from repolens.errors import ExtraMissingError, StorePermissionError, StoreUnavailableError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

SCHEMES = ("postgresql://", "postgres://")
# A query may take this long before the server cancels it (readers); a
# writer's statements (a batch's COPY, the publish of a big build) get more.
READ_TIMEOUT_MS = 30_000
WRITE_TIMEOUT_MS = 600_000
CONNECT_TIMEOUT_S = 5
POOL_WAIT_S = 5.0
POOL_MAX = 8
# A connection idle longer than this is checked before use (see _check).
CHECK_AFTER_IDLE_S = 1.0
FIX = (
    "check that the server runs and accepts connections, and the URL's user, database and "
    "credentials (PGPASSWORD, ~/.pgpass), then try again"
)


# What the ``postgres`` extra installs (pyproject.toml): a plain `pip install .` has none of it.
_DRIVER = ("psycopg", "psycopg_pool", "pgvector")
_driver_ok = False


def require_driver() -> None:
    """Raise :class:`ExtraMissingError` when the ``postgres`` extra is not
    installed (or psycopg cannot load, e.g. no libpq for a non-binary psycopg):
    how repolens was installed, said in one line with the install command."""
    global _driver_ok
    if _driver_ok:
        return
    import importlib

    for name in _DRIVER:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ExtraMissingError(
                f"a PostgreSQL store needs repolens's `postgres` extra, which is not installed"
                f" ({_first_line(exc)})",
                fix="install it with `pip install 'repolens[postgres]'`"
                " (in a checkout: `pip install '.[postgres]'`)",
            ) from None
    _driver_ok = True


def is_store_url(value: str) -> bool:
    return value.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` without its password (in the authority or as a ``password=``
    parameter; or, in a libpq keyword string, ``password=...``)."""
    if "://" not in url:
        import re  # (only for an error's text)

        return re.sub(r"(?i)(password\s*=\s*)('[^']*'|\S+)", r"\1***", url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://(unparsable URL)"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = "&".join(p for p in parts.query.split("&") if p and not p.lower().startswith("password="))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def refused(url: str, exc: BaseException) -> StorePermissionError:
    """The one-line error for a role the server refuses a table (``permission denied for table x``)."""
    return StorePermissionError(
        f"PostgreSQL store {redact(url)} refused this role: {_first_line(exc)}",
        fix="grant the role SELECT on repolens' tables to search, and ALL to index (or index as their owner)",
    )


def unavailable(url: str, exc: BaseException | str) -> StoreUnavailableError:
    """The one-line error for a server that cannot be reached or failed a call."""
    why = exc if isinstance(exc, str) else _first_line(exc)
    # libpq's own message may quote the connection string: never its password.
    try:
        password = urlsplit(url).password
    except ValueError:  # (check_store_url refuses such a URL where one enters)
        password = None
    if password:
        why = why.replace(password, "***")
    return StoreUnavailableError(f"PostgreSQL store {redact(url)} is unavailable ({why})", fix=FIX)


def _options(timeout_ms: int) -> str:
    return f"-c statement_timeout={timeout_ms} -c idle_in_transaction_session_timeout={timeout_ms * 2}"


def connect(url: str, *, timeout_ms: int = WRITE_TIMEOUT_MS, autocommit: bool = True) -> psycopg.Connection:
    """A connection of its own (a writer's, or the one holding a write lock)."""
    require_driver()
    import psycopg

    try:
        return psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_S,
            options=_options(timeout_ms),
            application_name=f"repolens pid {os.getpid()}",
        )
    except psycopg.Error as exc:
        raise unavailable(url, exc) from None


# psycopg and its pool log the failures they also raise (a lost connection,
# a failed reconnect) and, with nothing configured, Python prints those
# records on stderr: a second line beside our one-line error. They are
# reported through the raised error; an application that configures logging
# still receives them.
for _name in ("psycopg", "psycopg.pool"):
    logging.getLogger(_name).addHandler(logging.NullHandler())

_pools: dict[str, ConnectionPool] = {}
_pools_lock = threading.Lock()
# When each pooled connection last finished a call without a database error,
# and when a call or a check last failed (time.monotonic()).
_last_ok: weakref.WeakKeyDictionary[psycopg.Connection, float] = weakref.WeakKeyDictionary()
_failed_at = 0.0
_asked = threading.local()  # .check: the caller wants this checkout checked


def _check(conn: psycopg.Connection) -> None:
    """The pool's check: a round trip when the caller asks for one (the
    first statement of every search does), when the connection idled, or
    when anything failed since it was last used. A connection used a moment
    ago is not checked: a search borrows one for each of its statements,
    and checking every one doubled the round trips. One dead connection
    found makes every connection used before it checked at its next use."""
    from psycopg_pool import ConnectionPool

    global _failed_at
    used = _last_ok.get(conn)
    if (
        getattr(_asked, "check", False)
        or used is None
        or used <= _failed_at
        or time.monotonic() - used > CHECK_AFTER_IDLE_S
    ):
        try:
            ConnectionPool.check_connection(conn)
        except Exception:
            _failed_at = time.monotonic()
            raise


def pool_for(url: str) -> ConnectionPool:
    """The process's pool for ``url``; the server is tried once first, so an
    unreachable one fails at once with its reason (not after a pool
    timeout). No lock is held while connecting: a server that does not
    answer holds up the callers of its own URL, never those of another
    (two first callers of one URL may both try it; the second pool made is
    closed)."""
    with _pools_lock:
        pool = _pools.get(url)
    if pool is not None:
        return pool
    from psycopg_pool import ConnectionPool

    connect(url, timeout_ms=READ_TIMEOUT_MS).close()
    made = ConnectionPool(
        url,
        min_size=1,
        max_size=POOL_MAX,
        kwargs={
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "options": _options(READ_TIMEOUT_MS),
            "application_name": f"repolens pid {os.getpid()}",
        },
        check=_check,
        open=False,
        name=redact(url),
    )
    made.open(wait=False)
    with _pools_lock:
        pool = _pools.setdefault(url, made)
    if pool is not made:  # another caller made one meanwhile: this one is never used
        made.close(timeout=1.0)
    return pool


@contextlib.contextmanager
def pooled(url: str, *, check: bool = False) -> Iterator[psycopg.Connection]:
    """A connection from ``url``'s pool (``check``: verified with a round
    trip first, see :func:`_check`); every database failure becomes one
    :class:`StoreUnavailableError` line (a lost server, a statement timeout)."""
    require_driver()
    import psycopg
    from psycopg_pool import PoolTimeout

    global _failed_at
    pool = pool_for(url)
    _asked.check = check
    try:
        with contextlib.ExitStack() as held:
            try:
                conn = held.enter_context(pool.connection(timeout=POOL_WAIT_S))
            except PoolTimeout:
                # The pool only says it waited: ask the server directly for the reason.
                connect(url, timeout_ms=READ_TIMEOUT_MS).close()
                stats = pool.get_stats()
                if stats.get("pool_size", 0) >= stats.get("pool_max", POOL_MAX):  # every one busy
                    raise unavailable(url, "no connection became free in time") from None
                # It could not grow while the caller waited, though the server answers: it is
                # still backing off from an outage the server is back from (the call after that
                # outage said "unavailable", the one after it answered). A new pool connects now.
                conn = held.enter_context(_renewed(url, pool).connection(timeout=POOL_WAIT_S))
            yield conn
            _last_ok[conn] = time.monotonic()
    except PoolTimeout:
        raise unavailable(url, "no connection became free in time") from None
    except psycopg.OperationalError as exc:
        _failed_at = time.monotonic()
        raise unavailable(url, exc) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise refused(url, exc) from None
    finally:
        _asked.check = False


def _renewed(url: str, stale: ConnectionPool) -> ConnectionPool:
    """A new pool for ``url`` in place of ``stale`` (which holds no connection), closed."""
    with _pools_lock:
        if _pools.get(url) is stale:
            del _pools[url]
    with contextlib.suppress(Exception):
        stale.close(timeout=1.0)
    return pool_for(url)


def close_pools() -> None:
    """Close every pool (tests; the end of the process)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        with contextlib.suppress(Exception):
            pool.close(timeout=1.0)


atexit.register(close_pools)


@contextlib.contextmanager
def translate(url: str) -> Iterator[None]:
    """Turn database failures on a connection of its own (a writer's) into
    :class:`StoreUnavailableError`."""
    import psycopg

    try:
        yield
    except psycopg.OperationalError as exc:
        raise unavailable(url, exc) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise refused(url, exc) from None
