"""The store: where an index lives, behind one interface.

The indexer writes through :class:`IndexWriter`, search, replies and status
read through :class:`IndexReader`, and both get them from a :class:`Store`,
one per repository. ``store.local`` keeps an index in files beside the
repository (SQLite + tantivy, the default); a second backend (PostgreSQL
with pgvector, shared by many servers) implements the same three protocols.
Nothing outside ``store/`` knows which one it talks to, and no SQL, database
connection, search-engine object or index file path leaves ``store/``: every
method below is a question or a change a database server can answer in a
few statements.

What every backend must guarantee
---------------------------------
* **Generations.** An index is a sequence of generations, named by the
  store (``gen-000007``). A full build fills a new generation beside the
  published one (:meth:`Store.new_generation`, :meth:`Store.open_writer`)
  and publishes it atomically (:meth:`Store.publish`): a reader opened
  before keeps reading the old one until it closes, a reader opened after
  sees the new one, nobody ever sees a mix. A replaced generation stays
  readable for a grace period, so a reader that looked up ``current`` just
  before the swap can still open it.
* **Refresh in batches.** A refresh writes into the published generation in
  batches of whole files (:meth:`IndexWriter.begin` ...
  :meth:`IndexWriter.commit`). A batch is atomic across everything an
  answer reads (files, chunks, symbols, lexical postings, vectors): a reader
  sees, for every file, its old or its new content, never a mix within a
  file, and a lexical or dense hit never names a chunk the reader cannot
  read. :meth:`IndexWriter.abort` undoes the open batch everywhere, a
  batch a full disk stopped too. (The local store commits tantivy first,
  keeping the state it replaced, then SQLite, which records the tantivy
  commit it holds; a failed batch puts tantivy's previous state back, and so
  does the next writer after a crash; it resolves every hit against SQLite,
  so a hit whose rows are gone is dropped. See
  :mod:`repolens.store.local.writer`.)
* **One writer per repository**, any number of readers.
  :meth:`Store.write_lock` raises ``IndexLockedError`` (after waiting
  ``wait`` seconds) when another process writes; a writer that dies
  releases it (the local store's ``flock``, an advisory lock on a server).
  Readers never block the writer, nor each other.
* **Resumable.** A build that was interrupted keeps its committed batches
  and stays listed by :meth:`Store.building` until it is published or
  discarded; the next run finds it and carries on.
* **Versioned.** ``repolens.store.versions.format_versions()`` are recorded in every
  generation's meta; opening a generation written with other versions is
  refused with the fix (``IndexVersionError``), never misread.
* **Counters for caches.** Every committed batch that changes content
  increments ``content_version`` in the meta (and ``vectors_version``);
  one that changes only vectors increments ``vectors_version``.
  :meth:`IndexReader.cache_key` names what a reader's caches of content
  depend on (the store, the generation and its content counter).
* **Same answers.** Lexical scores are BM25 over the tokens
  :func:`repolens.store.document.document_fields` makes (per field,
  weighted per query term and per field, summed); symbol names are compared
  in their :func:`normalize_symbol` form; rows come back in the orders
  written down here. Two backends rank alike because they score alike
  (statistics over live chunks only, but between a commit without
  ``compact`` and :meth:`IndexWriter.compact`).
* **History** (optional per index; :mod:`repolens.history` fills it): the
  branch's past commits with the paths they touched and a BM25 document
  each. :meth:`IndexWriter.update_history` is atomic on its own (outside a
  batch; it moves no content counter: code answers do not change) and lives
  in the generation, so a full build publishes code and history together.
  :meth:`IndexReader.history_search` scores as written in
  :class:`HistoryState`'s docstring; commit ids ascend with recency.
* **Errors** are ``RepolensError`` subclasses whose one line names the fix
  (``IndexMissingError``, ``IndexCorruptError``, ``IndexReadOnlyError``,
  ``IndexLockedError``, ``IndexVersionError``); a backend's location in a
  message never carries a password.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

# The records the protocols take and return, defined apart for a new
# process's sake (see that module) and taken from here by everyone.
from repolens.store.records import (
    CommitDoc,
    FileRecord,
    HistoryCommit,
    HistoryState,
    HistoryUpdate,
    LexFilters,
    NameMatch,
    PackedRefs,
    RefRow,
    SkippedFile,
    StoredChunk,
    SymbolFilters,
    SymbolRow,
    normalize_symbol,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal, Protocol

    import numpy as np

    from repolens.chunking import Chunk, Symbol
    from repolens.errors import IndexMissingError
else:
    Protocol = object  # the protocols are for type checkers: nothing subclasses or checks them at run time

# A lexical half is laid out in about this many pieces: a build makes it
# searchable piece by piece (IndexWriter.commit's ``lexical``), and the local
# store's refresh rewrites a segment in pieces of this fraction of the index
# (repolens.store.local.segments), so a build ends as a refresh keeps it.
LEXICAL_PIECES = 5

# The lexical document of a chunk: field name -> space-separated tokens (or
# raw values); see repolens.store.document.document_fields.
LexicalFields = Mapping[str, "str | list[str]"]


# Row orders of symbol lookups: "name" is by norm, then in the order the
# definitions were stored (a file's symbols in the order its chunker found
# them); "length" is shortest norm first.
if TYPE_CHECKING:
    SymbolOrder = Literal["name", "length"]
else:
    SymbolOrder = str


class IndexReader(Protocol):
    """One published generation, read-only. Cheap to keep open; one per
    thread (see :mod:`repolens.store.handles`)."""

    @property
    def generation(self) -> str:
        """The generation's name (``gen-000007``): stable while it lives."""
        ...

    def cache_key(self) -> str:
        """Unique per store, generation and content counter: what a cache of
        anything derived from files, chunks or symbols is keyed on."""
        ...

    def replaced(self) -> bool:
        """Whether the generation this reader opened is gone or was made anew
        under the same name (an index deleted, or dropped, and built again
        while a server kept its reader): then it must be opened again."""
        ...

    def meta(self) -> dict[str, str]:
        """The generation's settings and state: versions, chunker, root,
        ``state``, ``updated_at``, counters, ``embed_*``, totals."""
        ...

    def refresh(self) -> None:
        """See the batches committed since this reader was opened (same generation)."""
        ...

    def close(self) -> None: ...

    def staleness(self) -> str:
        """One line for a reply when this reader reads a copy that is behind
        the last published index (a lagging replica), else ""."""
        ...

    # -- files -----------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """``files``, ``bytes``, ``lines``, ``chunks``, ``symbols``."""
        ...

    def files(self, paths: Iterable[str] | None = None) -> dict[str, FileRecord]:
        """Records by path: of ``paths`` (those indexed), or of every file."""
        ...

    def paths(self) -> list[str]:
        """Every indexed path."""
        ...

    def has_path(self, path: str) -> bool:
        """Whether ``path`` is an indexed file or a folder holding one."""
        ...

    def skipped_files(self) -> dict[str, SkippedFile]: ...

    # -- chunks ----------------------------------------------------------
    def chunks(self, cids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks of ``cids`` that exist (unknown keys are left out)."""
        ...

    def chunk_by_id(self, chunk_id: str) -> StoredChunk | None: ...

    def chunks_of_file(self, path: str) -> list[StoredChunk]:
        """A file's chunks by start line (chunks sharing one: in the order written)."""
        ...

    def chunks_of_files(self, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """:meth:`chunks_of_file` of each of ``paths`` that has chunks, by path,
        read at once (a branch copies many files from its sibling)."""
        ...

    def chunks_at(self, spots: Sequence[tuple[str, int]]) -> list[int | None]:
        """For each ``(path, line)``, the cid of the first chunk (by start
        line) of ``path`` holding ``line``, or None; read at once (the symbol
        leg asks for every definition it found: one statement, not one each)."""
        ...

    # -- symbols ---------------------------------------------------------
    def symbols(
        self, match: NameMatch, filters: SymbolFilters, limit: int | None, order: SymbolOrder = "name"
    ) -> list[SymbolRow]:
        """At most ``limit`` (None: all) definitions whose name matches."""
        ...

    def count_symbols(self, match: NameMatch, filters: SymbolFilters) -> int: ...

    def symbol_names(
        self, match: NameMatch, filters: SymbolFilters, limit: int, order: SymbolOrder = "name"
    ) -> list[str]:
        """At most ``limit`` distinct matching ``norm`` values."""
        ...

    def symbols_of_file(self, path: str) -> list[SymbolRow]:
        """A file's definitions in the order its chunker found them."""
        ...

    def symbols_of_files(self, paths: Sequence[str]) -> dict[str, list[SymbolRow]]:
        """:meth:`symbols_of_file` of each of ``paths`` that has symbols, by path, read at once."""
        ...

    # -- references (repolens.chunking.refs) ------------------------------
    def refs_named(self, names: Sequence[str]) -> list[RefRow]:
        """Every stored use of one of ``names`` (a use's ``name``: the last
        part of what it names), by path, each file's in line order."""
        ...

    def refs_of_files(self, paths: Sequence[str]) -> dict[str, list[RefRow]]:
        """The uses in each of ``paths`` that has any, by path, in line order."""
        ...

    # -- lexical ---------------------------------------------------------
    def lexical(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        limit: int,
        filters: LexFilters | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``limit`` (cid, score), best first: each (token, weight)
        contributes ``weight * field_weight * BM25(token, field)`` per field
        (terms OR-ed), within ``filters``."""
        ...

    def lexical_in_files(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        paths: Sequence[str],
        per_file: int,
        filters: LexFilters | None = None,
    ) -> dict[str, list[tuple[int, float]]]:
        """For each of the indexed files ``paths`` that has a match, what
        :meth:`lexical` with ``per_file`` answers under ``filters`` with that
        file as its subpath (``filters.subpath`` is replaced)."""
        ...

    def terms_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """At most ``limit`` distinct tokens of the scored fields (path,
        name, sig, body) that start with ``prefix`` (itself included),
        shortest first, then in code point order. A token whose chunks are
        all deleted may still be listed until the store purges it."""
        ...

    def held_terms(self, tokens: Sequence[str]) -> frozenset[str]:
        """The ones of ``tokens`` some chunk holds in a scored field: what a
        search of several repositories asks each first, cheaply, to choose
        the ones to search in full (:mod:`repolens.search.across`). As for
        :meth:`terms_with_prefix`, a deleted chunk's may count until purged."""
        ...

    # -- vectors (meaningful when meta has ``embed_identity``) -------------
    def vector_count(self) -> int: ...

    def vectors_of_chunks(self, chunk_ids: Iterable[str]) -> dict[str, bytes]:
        """The stored vectors (float16 rows, as written) of those of
        ``chunk_ids`` (content-derived ``Chunk.id``) that have one: what a
        sibling branch's index copies instead of embedding again."""
        ...

    def dense_top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` (cid, cosine similarity) to the unit ``query`` vector;
        approximate only where the store says so in :meth:`dense_state`."""
        ...

    def dense_similarities(self, query: np.ndarray, cids: Iterable[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each of ``cids`` that has a vector."""
        ...

    def dense_state(self, min_vectors: int) -> str:
        """One line for ``status``: exact search or which graph, and why."""
        ...

    # -- history (see HistoryState) -----------------------------------------
    def history_state(self) -> HistoryState | None:
        """What the history holds; a backend may read it with the meta (at
        open and :meth:`refresh`) rather than at every call."""
        ...

    def history_search(self, terms: Sequence[tuple[str, float]], k: int) -> list[tuple[int, float]]:
        """Top ``k`` (commit id, BM25 score > 0), best first, newer first among equals."""
        ...

    def history_commits(self, ids: Iterable[int], *, indexed_only: bool = False) -> dict[int, HistoryCommit]:
        """The stored commits of ``ids`` by id; with ``indexed_only`` their
        ``paths`` hold only files the index holds."""
        ...

    def history_of_file(self, path: str) -> list[tuple[int, str]]:
        """(commit id, the name that commit gave the file) of the stored
        commits that touched ``path`` (its newest name), newest first."""
        ...

    def history_newest_name(self, named: str) -> str:
        """The newest name of the file a stored commit named ``named`` (a
        name it had before a rename), "" when no stored commit named one so."""
        ...

    # -- remembered results ------------------------------------------------
    def remember(self, query_id: str, payload: str) -> bool:
        """Keep a search's result under ``query_id`` (the newest few hundred
        are kept). Best effort: False when the store cannot be written."""
        ...

    def recall(self, query_id: str) -> str | None:
        """The payload remembered under ``query_id``, or None."""
        ...


class IndexWriter(Protocol):
    """One generation being built or refreshed; only under :meth:`Store.write_lock`."""

    @property
    def generation(self) -> str: ...

    def meta(self) -> dict[str, str]: ...

    def write_meta(self, values: Mapping[str, object]) -> None:
        """Set meta keys (non-strings are stored as JSON); part of the open
        batch, else committed at once."""
        ...

    def counts(self) -> dict[str, int]: ...

    def files(self) -> dict[str, FileRecord]: ...

    def skipped_files(self) -> dict[str, SkippedFile]: ...

    def reconcile(self) -> int:
        """Repair what an interrupted writer left between the parts of the
        store; how many chunks were replayed (0 for a transactional store)."""
        ...

    def verify(self) -> None:
        """Raise ``IndexCorruptError`` when the generation's files are damaged
        where a refresh might not read them (nothing for a store whose server
        checks its own pages)."""
        ...

    def close(self) -> None: ...

    # -- a batch: everything between begin() and commit() is atomic --------
    def begin(self) -> None: ...

    def commit(self, *, compact: bool = True, lexical: bool = True) -> None:
        """Make the batch visible to readers, and move the counters: a batch
        that changed files or skips increments ``content_version`` and
        ``vectors_version`` and sets ``updated_at``; one that changed only
        vectors, or only files' stats (:meth:`touch_file`: the content is
        as it was), increments ``vectors_version``. Without ``compact`` the
        lexical statistics may count deleted chunks until :meth:`compact`
        (the local store's, cheaper for a watcher's saves). Without
        ``lexical`` (a build's batches between its pieces) the documents the
        batch added may wait for a later commit to be searchable; a crash
        meanwhile loses none of them (the local store's, so that a build
        lays out its segments as a refresh keeps them)."""
        ...

    def compact(self, should_stop: Callable[[], bool] = ...) -> int | None:
        """Make the lexical statistics count live chunks only, as in a fresh
        build (after commits without ``compact``), in batches; how many
        chunks were rewritten (0 for a store whose statistics never count
        deleted ones), None when ``should_stop()`` cut it short."""
        ...

    def abort(self) -> None:
        """Undo the open batch everywhere (nothing when none is open)."""
        ...

    @property
    def in_batch(self) -> bool: ...

    def add_file(
        self,
        *,
        path: str,
        hash: str,
        size: int,
        mtime_ns: int,
        language: str,
        lines: int,
        flags: str,
        chunks: Sequence[Chunk],
        symbols: Sequence[Symbol],
        fields: Sequence[LexicalFields],
        vectors: Mapping[str, bytes] | None = None,
        refs: PackedRefs | None = None,
    ) -> list[int]:
        """Add a file with its chunks, their lexical ``fields`` (one per
        chunk), its symbols and its references; ``vectors`` by chunk id are
        kept vectors of chunks that did not change. Returns the new cids in
        chunk order."""
        ...

    def delete_file(self, file_id: int) -> None:
        """Remove a file with its chunks, symbols, references, postings and vectors."""
        ...

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """A file read again and found unchanged: remember its new size and
        mtime. Its content is as it was, so this alone moves no content
        counter (a remembered search's id still holds)."""
        ...

    def set_skipped(self, skip: SkippedFile) -> None: ...

    def forget_skipped(self, paths: Iterable[str]) -> None: ...

    # -- vectors: little-endian float16 rows of unit length ---------------
    def vector_count(self) -> int: ...

    def vectors_of_file(self, file_id: int) -> dict[str, bytes]:
        """The file's vectors by chunk id (kept across an edit elsewhere in it)."""
        ...

    def chunks_missing_vectors(self, limit: int) -> list[int]:
        """Up to ``limit`` cids without a vector, smallest first."""
        ...

    def chunks(self, cids: Iterable[int]) -> dict[int, StoredChunk]: ...

    def put_vectors(self, rows: Iterable[tuple[int, bytes]]) -> None:
        """Set (or replace) the vectors of cids; inside a batch."""
        ...

    def drop_vectors(self) -> None:
        """Delete every vector and the ``embed_*`` meta; inside a batch."""
        ...

    def copy_vectors(self, source: str, identity: str, style: str) -> int:
        """Copy, as one batch, the vectors of the chunks (matched by chunk id)
        of generation ``source`` when it was embedded by ``identity`` in
        ``style``; how many were copied (0 when it was not, or is unreadable)."""
        ...

    def sync_dense_index(self, min_vectors: int) -> str:
        """Bring the approximate dense index (a graph) up to date with
        complete vectors; one line on what was done, "" when nothing was."""
        ...

    # -- history (outside a batch) ------------------------------------------
    def history_state(self) -> HistoryState | None: ...

    def update_history(self, update: HistoryUpdate) -> None:
        """Apply ``update`` atomically (see :class:`HistoryUpdate`)."""
        ...


# How a store key a server's config names is recorded (the start of
# ``StoreChoice.key_from``, :func:`repolens.store.locate`): a store's fixes
# then name that config (:meth:`Store.foreign_fix`, :meth:`Store.missing`).
ROOTS_OF = "[roots] of "


class Store(Protocol):
    """One repository's index, wherever it lives."""

    @property
    def root(self) -> Path:
        """The repository this index is of (resolved)."""
        ...

    @property
    def location(self) -> str:
        """Where the index lives, for messages and as a cache key: a folder,
        or a server (password removed) and namespace."""
        ...

    @property
    def local_folder(self) -> Path | None:
        """The folder on this machine the store writes into, when it has one:
        discovery leaves it out and the watcher ignores its events."""
        ...

    # What named this place (``--store``, ``REPOLENS_INDEX_DIR``, a config
    # file, ...: :func:`repolens.store.locate`), for replies.
    named_by: str

    def foreign_fix(self) -> str | None:
        """How to give the root an index of its own when the one here holds
        another repository (:mod:`repolens.store.identity`); None where
        the place can only be the root's (a folder inside it moves with it)."""
        ...

    def current(self) -> str | None:
        """The published generation, or None."""
        ...

    def missing(self) -> IndexMissingError:
        """The error for a repository without an index, with a fix that can work."""
        ...

    def open_reader(self) -> IndexReader:
        """A reader of the published generation (``IndexMissingError`` when none)."""
        ...

    def write_lock(self, wait: float = 0.0) -> AbstractContextManager[None]:
        """Be the one writer (see the module docstring); creates the store's home."""
        ...

    def lock_sockets(self) -> frozenset[int]:
        """The sockets the write lock holds open (a database connection): a
        worker process forked while it is held inherits them and never uses
        them (:func:`repolens.index.prepare.forked_workers`)."""
        ...

    def generation_meta(self, generation: str) -> dict[str, str]:
        """A generation's meta without opening it for reading
        (``IndexCorruptError`` when it cannot be read)."""
        ...

    def building(self) -> list[str]:
        """Generations being built (interrupted builds), oldest first."""
        ...

    def writing(self) -> bool | None:
        """Whether a writer (a build, a refresh, an embedder) holds the write
        lock now, without taking it; None when this store cannot tell. For a
        status page: a probe that took the lock could make a real writer fail."""
        ...

    def new_generation(self) -> str:
        """Start an empty generation, numbered after every existing one."""
        ...

    def open_writer(self, generation: str, *, create: bool = False) -> IndexWriter:
        """Write ``generation`` (``create``: a new or resumed build, made
        ready for its first batch). Its versions are checked unless it is
        empty. Under the write lock only."""
        ...

    def publish(self, generation: str) -> None:
        """Make a built generation the current one, atomically."""
        ...

    def discard(self, generation: str) -> None:
        """Delete a generation that is being built."""
        ...

    def collect_garbage(self, keep: str | None = None) -> None:
        """Delete generations neither current, ``keep``, nor replaced within
        the grace period; interrupted builds other than ``keep`` go too."""
        ...

    def probe_batch(self) -> str | None:
        """What this store shares with the stores :meth:`held_terms_batch`
        asks together with it, in one round trip (a database: its URL and
        replicas); None for a store asked alone, by its reader
        (:meth:`IndexReader.held_terms`). The probe of a search of many
        repositories (:mod:`repolens.search.across`) groups stores by it."""
        ...

    def held_terms_batch(self, stores: Sequence[Store], tokens: Sequence[str]) -> list[frozenset[str] | None]:
        """For ``stores`` (this one's :meth:`probe_batch`, this one among
        them), which of ``tokens`` each one's published index holds
        (:meth:`IndexReader.held_terms`), None for one with none published,
        in ``stores``' order. ``StoreUnavailableError`` when the store
        cannot be asked."""
        ...

    def shared_vectors(self, chunk_ids: Iterable[str], meta: Mapping[str, str]) -> dict[str, bytes]:
        """Vectors the published indexes of *other* repositories in this store
        hold for ``chunk_ids``, from indexes whose meta has every value of
        ``meta`` (the model, its style, the chunking): a chunk id is the
        embedding input, so they are the vectors this index would compute.
        ``{}`` where a store holds one repository (the local store: its
        indexes share vectors through the ``embed_cache`` folder instead)."""
        ...


__all__ = [
    "CommitDoc",
    "FileRecord",
    "HistoryCommit",
    "HistoryState",
    "HistoryUpdate",
    "IndexReader",
    "IndexWriter",
    "LexFilters",
    "LexicalFields",
    "NameMatch",
    "PackedRefs",
    "RefRow",
    "SkippedFile",
    "Store",
    "StoredChunk",
    "SymbolFilters",
    "SymbolOrder",
    "SymbolRow",
    "normalize_symbol",
]
