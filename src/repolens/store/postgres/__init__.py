"""The PostgreSQL store: many repositories' indexes in one database, shared by many servers.

It meets the guarantees of :mod:`repolens.store.base` with the database's
own means:

* **Namespaces.** A repository is a row of ``repos`` named by its *key*
  (:func:`repolens.store.locate`: the name a server gives it, ``[store]
  key`` or the folder's name, never the local path, so an indexer and
  servers on other machines agree on it); every other row belongs to one of
  its generations.
* **Atomic publish.** ``repos.current_gen`` is updated in one transaction;
  a reader resolves it once and reads that generation's rows, which stay
  for a grace period after being replaced.
* **Batches** are transactions (:mod:`.writer`).
* **One writer per repository**: a session advisory lock keyed by the
  repository, held by a connection of its own for the whole write; a
  writer that dies drops its connection and with it the lock. The thread
  holding it runs the store's own statements on it too (no pool, so no
  threads: ``repolens index`` forks its workers as on the local store).
* **Readers** read a replica when ``read_url`` names one (``Store.current``,
  the writer and remembered results use the primary); :meth:`PgStore.replica_lag`
  says when the replica is behind the last published index.
* **Versioned**: :mod:`.schema`; the generation meta carries
  :func:`repolens.store.versions.format_versions` like the local store's.
* **History**: a generation's commits, touched paths and packed postings
  (:mod:`.history`), published with its code.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.errors import IndexCorruptError, IndexLockedError, IndexMissingError, RepolensError
from repolens.fronts import say
from repolens.store.base import ROOTS_OF
from repolens.store.postgres import packing, rows, schema
from repolens.store.postgres.connect import connect, pooled, redact, require_driver, translate, unavailable
from repolens.store.postgres.writer import PgWriter
from repolens.store.versions import check_versions

if TYPE_CHECKING:
    import psycopg

    from repolens.store.base import Store
    from repolens.store.postgres.reader import PgReader

log = logging.getLogger("repolens")
# Replaced generations stay readable this long (a reader that looked up
# ``current`` just before the swap can still read it).
GRACE_SECONDS = 120
# Remembered results: above PRUNE_AT the newest KEEP stay (pruned in
# batches, as the local store does: a DELETE on every search cost ~3 ms).
REMEMBER_KEEP = 200
REMEMBER_PRUNE_AT = REMEMBER_KEEP + REMEMBER_KEEP // 4
_LOCK_CLASS = 0x524C  # "RL": the first half of every repository's advisory lock key


class PgStore:
    """The index of ``root`` under ``key`` in the database at ``url``
    (:class:`~repolens.store.base.Store`)."""

    def __init__(
        self,
        root: Path,
        url: str,
        key: str,
        read_urls: Sequence[str] = (),
        *,
        named_by: str = "",
        key_from: str = "",
    ) -> None:
        require_driver()  # before any use: a missing extra is one line, never an ImportError later
        self._root = root
        self.url = url
        self.key = key
        self.read_urls = tuple(read_urls)
        self.named_by = named_by  # what named the store (repolens.store.locate), for replies
        self.key_from = key_from  # what named the key ("" for the folder's name), for fixes
        self._checked: set[str] = set()
        self._held: psycopg.Connection | None = None  # the write lock's connection, while held
        self._holder = 0  # the thread holding it

    # -- where ---------------------------------------------------------------
    @property
    def root(self) -> Path:
        return self._root

    @property
    def location(self) -> str:
        return f"{redact(self.url)}#{self.key}"

    @property
    def local_folder(self) -> None:
        return None

    @property
    def read_url(self) -> str:
        """Where readers read: the first replica that answers with a schema
        this version reads, else the primary (a replica that cannot serve
        is logged, once per process; a bug is raised, never taken for one)."""
        for url in self.read_urls:
            try:
                self._schema_ok(url)
                return url
            except RepolensError as exc:  # unavailable, or a schema of another version
                _warn_once(
                    f"replica {url}", f"replica {redact(url)} is not read ({exc}); reading the primary"
                )
        return self.url

    def probe_batch(self) -> str:
        """One database's stores (the same primary and replicas) are probed in one statement."""
        return " ".join((self.url, *self.read_urls))

    def held_terms_batch(self, stores: Sequence[Store], tokens: Sequence[str]) -> list[frozenset[str] | None]:
        same = [s for s in stores if isinstance(s, PgStore) and s.probe_batch() == self.probe_batch()]
        assert len(same) == len(stores), "held_terms_batch takes the stores of one probe_batch"
        found = held_terms_of(same, tokens)
        return [found[s.key] for s in same]

    def _schema_ok(self, url: str) -> None:
        if url in self._checked:
            return
        with pooled(url) as conn:
            schema.check(schema.found_version(conn), redact(url))
        self._checked.add(url)

    def foreign_fix(self) -> str | None:
        drop = f"or {say('drop old index', key=self.key)}"
        if self.key_from.startswith(ROOTS_OF):
            return f"name {self._root} apart in the {self.key_from}, {drop}"
        return f"give {self._root} a key of its own with [store] key in its .repolens.toml, {drop}"

    def missing(self) -> IndexMissingError:
        if self.key_from.startswith(ROOTS_OF):  # named by a server's config: the same config builds it
            run = say("run build of config", config=self.key_from.removeprefix(ROOTS_OF))
        else:
            run = say("run build in store", root=self._root)
        return IndexMissingError(f"no index for {self._root} in {self.location}: {run}")

    # -- generations -------------------------------------------------------------
    def _current_on(self, url: str) -> tuple[int, str] | None:
        """The published generation (id, name), and the schema checked, in
        one round trip: every search asks this (twice)."""
        import psycopg

        # A search's first statement: its connection is checked (see connect._check).
        with self._primary(check=True) if url == self.url else pooled(url, check=True) as conn:
            try:
                version, gen, seq = conn.execute(
                    "SELECT (SELECT max(version) FROM repolens_schema), g.gen, g.seq FROM (SELECT 1) AS one"
                    " LEFT JOIN repos r ON r.key = %s LEFT JOIN generations g ON g.gen = r.current_gen",
                    (self.key,),
                ).fetchone()
            except psycopg.errors.UndefinedTable:  # no repolens tables in this database yet
                return None
        schema.check(version, redact(url))
        if version is None:
            return None
        self._checked.add(url)
        return (int(gen), _name(seq)) if gen is not None else None

    def current(self) -> str | None:
        found = self._current_on(self.url)
        return found[1] if found else None

    def open_reader(self) -> PgReader:
        from repolens.store.postgres.reader import PgReader  # here: an indexer never loads the scoring

        url = self.read_url
        found = self._current_on(url)
        if found is None and url != self.url and (found := self._current_on(self.url)) is not None:
            # published, but the replica has not replayed it yet: the primary answers meanwhile
            _warn_once(
                f"replica {url} {self.key}",
                f"replica {redact(url)} holds no index of {self.key} yet; reading the primary",
            )
            url = self.url
        if found is None:
            raise self.missing()
        reader = PgReader(self, found[0], found[1], url)
        check_versions(reader.meta(), self._root)
        return reader

    def replica_lag(self, url: str) -> str:
        """One line when ``url`` (a replica) is behind the primary's published
        index: another generation, or fewer committed batches; "" otherwise
        (also when the primary cannot be asked)."""
        if url == self.url:
            return ""
        sql = (
            "SELECT g.seq, coalesce((SELECT value FROM meta m WHERE m.gen = g.gen"
            " AND m.key = 'content_version'),"
            " '0') FROM repos r JOIN generations g ON g.gen = r.current_gen WHERE r.key = %s"
        )
        try:
            with self._primary() as conn:
                primary = conn.execute(sql, (self.key,)).fetchone()
            with pooled(url) as conn:
                replica = conn.execute(sql, (self.key,)).fetchone()
        except RepolensError:  # a server that cannot be asked: no lag to say (the search says why)
            return ""
        if primary is None or tuple(primary) == (tuple(replica) if replica else None):
            return ""
        have = f"{_name(replica[0])} version {replica[1]}" if replica else "no index"
        return (
            f"read from replica {redact(url)}, which lags behind the last published index "
            f"(it has {have}, the primary {_name(primary[0])} version {primary[1]}): "
            "results may miss the newest changes"
        )

    def _repo_id(self, conn: psycopg.Connection) -> int:
        row = conn.execute(
            "INSERT INTO repos (key) VALUES (%s) ON CONFLICT (key) DO UPDATE SET"
            " key = excluded.key RETURNING id",
            (self.key,),
        ).fetchone()
        return int(row[0])

    def generation_id(self, name: str) -> int | None:
        seq = _seq(name)
        with self._primary() as conn:
            row = conn.execute(
                "SELECT g.gen FROM generations g JOIN repos r ON r.id = g.repo_id"
                " WHERE r.key = %s AND g.seq = %s",
                (self.key, seq),
            ).fetchone()
        return int(row[0]) if row else None

    def _require(self, name: str) -> int:
        gen = self.generation_id(name)
        if gen is None:
            raise IndexCorruptError(
                f"generation {name} of {self.location} does not exist", fix=say("re-run index")
            )
        return gen

    def generation_meta(self, generation: str) -> dict[str, str]:
        """The meta; a generation whose publish did not finish (joining a big
        build's parts takes a while) says ``building``, so the next run resumes
        it (nothing left to write) and publishes it, instead of starting over."""
        gen = self._require(generation)
        with self._primary() as conn:
            meta = rows.read_meta(conn, gen)
            row = conn.execute("SELECT state FROM generations WHERE gen = %s", (gen,)).fetchone()
        if row and row[0] == "building" and meta.get("state") == "ready":
            meta["state"] = "building"
        return meta

    def building(self) -> list[str]:
        with self._primary() as conn:
            if schema.found_version(conn) is None:
                return []
            found = conn.execute(
                "SELECT g.seq FROM generations g JOIN repos r ON r.id = g.repo_id"
                " WHERE r.key = %s AND g.state = 'building' ORDER BY g.seq",
                (self.key,),
            ).fetchall()
        return [_name(r[0]) for r in found]

    def writing(self) -> bool | None:
        with self._primary() as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND classid = %s AND objid = hashtext(%s)::oid)",
                (_LOCK_CLASS, self.key),
            ).fetchone()
        return bool(row and row[0])

    def new_generation(self) -> str:
        with self._primary() as conn, conn.transaction():
            repo = self._repo_id(conn)
            row = conn.execute(
                "INSERT INTO generations (repo_id, seq, state) SELECT %(r)s,"
                " coalesce(max(seq), 0) + 1, 'building'"
                " FROM generations WHERE repo_id = %(r)s RETURNING seq",
                {"r": repo},
            ).fetchone()
        return _name(row[0])

    def open_writer(self, generation: str, *, create: bool = False) -> PgWriter:
        gen = self._require(generation)
        writer = PgWriter(self, gen, generation)
        try:
            meta = writer.meta()
            if meta or not create:
                check_versions(meta, self._root)
        except BaseException:
            writer.close()
            raise
        return writer

    def publish(self, generation: str) -> None:
        """Join each term's parts into one list (:func:`.packing.fold`), then
        point ``current`` at the generation and mark the one it replaces, in
        one transaction."""
        gen = self._require(generation)
        with self._primary(write=True) as conn:
            # The planner must know the build's parts are there: with the
            # statistics of a database that held only a small repository it
            # took them for a row and read them all once per term. (Before the
            # transaction: ANALYZE holds its lock to the end of it, and other
            # repositories' publishes take the same lock.) Not the lists
            # themselves: statistics of their elements serve no plan and cost
            # most of an ANALYZE.
            conn.execute("ANALYZE lex_blobs (gen, token, field, part)")
            with conn.transaction():
                conn.execute("SET LOCAL statement_timeout = 0")  # a big build joins millions of postings
                packing.fold(conn, gen)
                conn.execute("UPDATE generations SET state = 'ready' WHERE gen = %s", (gen,))
                conn.execute(
                    "UPDATE generations SET replaced_at = now() WHERE gen ="
                    " (SELECT current_gen FROM repos WHERE key = %s) AND gen <> %s",
                    (self.key, gen),
                )
                conn.execute(
                    "UPDATE repos SET current_gen = %s, published_at = now() WHERE key = %s", (gen, self.key)
                )
            for table in ("chunks", "files", "symbols", "history_postings (gen, term)", "history_files"):
                conn.execute(f"ANALYZE {table}")

    def discard(self, generation: str) -> None:
        gen = self.generation_id(generation)
        if gen is not None:
            self._drop(gen)

    def _drop(self, gen: int) -> None:
        from repolens.store.postgres.dense import index_name

        with self._primary(write=True) as conn, conn.transaction():
            conn.execute(f"DROP INDEX IF EXISTS {index_name(gen)}")
            for table in schema.GEN_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE gen = %s", (gen,))
            conn.execute("DELETE FROM generations WHERE gen = %s", (gen,))

    def drop_all(self) -> None:
        """Remove this repository from the database: every generation, its
        remembered results and its row (``repolens drop``; under the write lock)."""
        with self._primary() as conn:
            # Readers see "no index" from here on, not a generation being deleted.
            conn.execute("UPDATE repos SET current_gen = NULL WHERE key = %s", (self.key,))
            gens = conn.execute(
                "SELECT g.gen FROM generations g JOIN repos r ON r.id = g.repo_id WHERE r.key = %s",
                (self.key,),
            ).fetchall()
        for (gen,) in gens:
            self._drop(int(gen))
        with self._primary(write=True) as conn, conn.transaction():
            conn.execute(
                "DELETE FROM remembered WHERE repo_id = (SELECT id FROM repos WHERE key = %s)",
                (self.key,),
            )
            conn.execute("DELETE FROM repos WHERE key = %s", (self.key,))

    def collect_garbage(self, keep: str | None = None) -> None:
        keep_gen = self.generation_id(keep) if keep is not None else None
        with self._primary() as conn:
            found = conn.execute(
                "SELECT g.gen FROM generations g JOIN repos r ON r.id = g.repo_id WHERE r.key = %s"
                " AND g.gen IS DISTINCT FROM r.current_gen AND g.gen IS DISTINCT FROM %s"
                " AND (g.state = 'building' OR g.replaced_at IS NULL"
                "      OR g.replaced_at < now() - make_interval(secs => %s))",
                (self.key, keep_gen, GRACE_SECONDS),
            ).fetchall()
        for (gen,) in found:
            self._drop(int(gen))

    def shared_vectors(self, chunk_ids: Iterable[str], meta: Mapping[str, str]) -> dict[str, bytes]:
        """Read on the primary (the indexer asks, and wants what was just published)."""
        from repolens.store.postgres import dense

        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        with self._primary() as conn:
            gens = rows.published_with(conn, meta, self.key)
            return dense.vectors_by_chunk_id(conn, gens, ids) if gens else {}

    # -- the one writer --------------------------------------------------------------
    @contextlib.contextmanager
    def write_lock(self, wait: float = 0.0) -> Iterator[None]:
        """Hold the repository's advisory lock on a connection of its own; the
        tables are created or migrated first (``repolens index`` migrates)."""
        conn = connect(self.url)
        held = False
        try:
            with translate(self.url):
                schema.ensure(conn, redact(self.url))
                self._checked.add(self.url)
                deadline = time.monotonic() + wait
                while not conn.execute(
                    "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_LOCK_CLASS, self.key)
                ).fetchone()[0]:
                    if time.monotonic() >= deadline:
                        holder = self._holder_name(conn)
                        raise IndexLockedError(
                            f"another process{holder} is writing the index in {self.location}: "
                            "wait for it to finish and try again",
                            holder=holder,
                        )
                    time.sleep(0.1)
            held = True
            self._held, self._holder = conn, threading.get_ident()
            yield
        finally:
            # Closing the connection releases the lock too, but only once the
            # server has seen the close: a writer that follows at once (the
            # next command of a script) would find it still held.
            if held:
                self._held = None
                with contextlib.suppress(Exception):
                    conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_CLASS, self.key))
            conn.close()

    def lock_sockets(self) -> frozenset[int]:
        """The write lock's connection, while held: a worker forked meanwhile
        inherits it and never uses it (see :meth:`_primary`)."""
        held = self._held
        return frozenset({held.fileno()}) if held is not None else frozenset()

    @contextlib.contextmanager
    def _primary(self, *, write: bool = False, check: bool = False) -> Iterator[psycopg.Connection]:
        """A connection to the primary for one call. The thread holding the
        write lock is given the lock's own: an indexing process then opens
        no pool (no threads, so its workers can be forked) and two
        connections in all, this and its writer's. Another thread reads on
        one from the pool (``check``: see :func:`pooled`) and writes on a
        new one (the write timeout: see :func:`connect`)."""
        held = self._held
        if held is not None and self._holder == threading.get_ident():
            with translate(self.url):
                yield held
        elif write:
            conn = connect(self.url)
            try:
                with translate(self.url):
                    yield conn
            finally:
                conn.close()
        else:
            with pooled(self.url, check=check) as conn:
                yield conn

    def _holder_name(self, conn: psycopg.Connection) -> str:
        row = conn.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = hashtext(%s)::oid"
            " AND l.pid <> pg_backend_pid() LIMIT 1",
            (_LOCK_CLASS, self.key),
        ).fetchone()
        name = row[0] if row else ""
        return f" ({name.removeprefix('repolens ')})" if name.startswith("repolens pid ") else ""

    # -- remembered results (primary) ----------------------------------------------
    def remember(self, query_id: str, payload: str) -> bool:
        import psycopg

        try:
            with pooled(self.url) as conn:
                # One round trip: the insert, and how many there were before it.
                repo, held = conn.execute(
                    "WITH r AS (SELECT id FROM repos WHERE key = %(key)s),"
                    " saved AS (INSERT INTO remembered (repo_id, query_id, payload)"
                    " SELECT id, %(q)s, %(p)s FROM r ON CONFLICT (repo_id, query_id)"
                    " DO UPDATE SET payload = excluded.payload, at = now() RETURNING repo_id)"
                    " SELECT (SELECT repo_id FROM saved),"
                    " (SELECT count(*) FROM remembered WHERE repo_id = (SELECT id FROM r))",
                    {"key": self.key, "q": query_id, "p": payload},
                ).fetchone()
                if repo is not None and held >= REMEMBER_PRUNE_AT:
                    conn.execute(
                        "DELETE FROM remembered WHERE repo_id = %(r)s AND query_id NOT IN (SELECT query_id"
                        " FROM remembered WHERE repo_id = %(r)s ORDER BY at DESC LIMIT %(k)s)",
                        {"r": repo, "k": REMEMBER_KEEP},
                    )
        except (RepolensError, psycopg.Error) as exc:  # best effort: a read-only or unreachable primary
            _warn_once(
                f"remember {self.url}", f"results are not remembered in {self.location} ({_first_line(exc)})"
            )
            return False
        return repo is not None  # no repository row: nothing indexed to remember for

    def recall(self, query_id: str) -> str | None:
        # A database that cannot be asked is StoreUnavailableError (pooled),
        # never None: "unknown query_id" would send the caller looking in vain.
        with pooled(self.url) as conn:
            row = conn.execute(
                "SELECT m.payload FROM remembered m JOIN repos r ON r.id = m.repo_id"
                " WHERE r.key = %s AND m.query_id = %s",
                (self.key, query_id),
            ).fetchone()
        return row[0] if row else None


def held_terms_of(stores: Sequence[PgStore], tokens: Sequence[str]) -> dict[str, frozenset[str] | None]:
    """Per store key, which of ``tokens`` its published index holds
    (:meth:`~repolens.store.base.IndexReader.held_terms`), None when it has
    none published: for stores of one database (the same URL and replicas),
    in one statement where a reader each would take three round trips."""
    from repolens.store.postgres.lexical import held_terms_by_key

    if not stores:
        return {}
    url = stores[0].read_url
    with pooled(url, check=True) as conn:
        version = schema.found_version(conn)
        schema.check(version, redact(url))
        found = held_terms_by_key(conn, [s.key for s in stores], tokens) if version is not None else {}
    return {s.key: frozenset(found[s.key]) if s.key in found else None for s in stores}


_warned: set[str] = set()


def _warn_once(what: str, message: str) -> None:
    """Log ``message`` the first time this process says it of ``what``."""
    if what not in _warned:
        _warned.add(what)
        log.warning("%s", message)


def _first_line(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0]


def _name(seq: int) -> str:
    return f"gen-{int(seq):06d}"


def _seq(name: str) -> int:
    try:
        return int(name.removeprefix("gen-"))
    except ValueError:
        raise IndexCorruptError(f"{name!r} is not a generation name", fix=say("re-run index")) from None


__all__ = ["PgStore", "unavailable"]
