"""The store's records: the rows and arguments that cross :mod:`repolens.store.base`'s
protocols (re-exported there, where they are documented with the protocols).

They are :class:`repolens.record.Record` classes (made without compiling
code): every new process that reads an index makes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from repolens.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.chunking import Chunk


def normalize_symbol(name: str) -> str:
    """Case- and separator-insensitive form: ``handle_submit`` == ``handleSubmit``."""
    return name.replace("_", "").replace("-", "").lower()


class FileRecord(Record):
    """One indexed file as the index knows it (size and mtime when it was read)."""

    id: int
    path: str
    hash: str
    size: int
    mtime_ns: int
    language: str
    lines: int
    flags: str


class SkippedFile(Record):
    """A file discovery lists but whose content keeps it out (binary, blank),
    with the size and mtime it was read at: until those move, it is not read
    again and does not count as a change."""

    path: str
    reason: str
    size: int
    mtime_ns: int


class StoredChunk(Record):
    """A chunk as read back from the index, with its integer key ``cid``
    (shared by the lexical postings and the vectors; ``chunk.id`` is the
    content-derived key users see)."""

    cid: int
    chunk: Chunk


class SymbolRow(Record):
    """One stored definition; ``norm`` is ``normalize_symbol(name)``."""

    name: str
    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str
    parent: str
    language: str
    norm: str


class RefRow(Record):
    """One stored use of a name (:class:`repolens.chunking.refs.Ref`) with
    the file it is in and that file's language."""

    path: str
    language: str
    name: str
    line: int
    kind: str
    scope: str
    target: str
    binds: str


class PackedRefs(Record):
    """A file's references as the store keeps them (``repolens.store.ref_rows``):
    one compressed blob and the distinct names they use. Made where the file
    is chunked, so a worker process sends bytes, not a million small tuples."""

    data: bytes
    names: tuple[str, ...]


class LexFilters(Record):
    """Filters applied inside the lexical query (cheap, exact): ``subpath``
    is a file or folder (the path or a prefix ending at ``/``); a chunk
    matches ``kinds`` by its kind or any of its extra kinds."""

    subpath: str | None = None
    languages: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()


class SymbolFilters(Record):
    """Filters of a symbol lookup. ``path`` is a file or a folder (an exact
    prefix test, not a pattern); ``sections`` false leaves out markdown
    sections (headings are symbols for lookup, not definitions)."""

    kind: str | None = None
    language: str | None = None
    path: str | None = None
    sections: bool = True


class NameMatch(Record):
    """Which normalised symbol names (``norm``) a lookup wants; exactly one
    of ``names``, ``prefix`` and ``inner`` is set.

    * ``names``: ``norm`` is one of them;
    * ``prefix``: ``norm`` starts with it and is longer (or equal too, with
      ``prefix_itself``), compared code point by code point;
    * ``inner``: ``norm`` contains it, not at its start;

    and, when given, ``min_len <= len(norm) <= max_len``.
    """

    names: tuple[str, ...] = ()
    prefix: str = ""
    prefix_itself: bool = False
    inner: str = ""
    min_len: int = 0
    max_len: int = 0


class HistoryState(Record):
    """What an index's history holds (None from ``history_state`` when the
    index never had one, e.g. written before history existed).

    Commits are scored by :meth:`IndexReader.history_search` with BM25 over
    their documents (:attr:`CommitDoc.terms`): for each query term
    ``(token, weight)`` held by ``n`` of the ``N`` stored commits, a commit
    with count ``tf`` and document length ``dl`` (the sum of its term
    counts; ``avgdl`` their mean over stored commits) gains
    ``weight * ln(1 + (N - n + 0.5) / (n + 0.5)) * tf * (K1 + 1) /
    (tf + K1 * (1 - B + B * dl / avgdl))`` with ``K1 = 1.2``, ``B = 0.75``
    (exact lengths, no quantization). A token given twice counts once, at
    its largest weight. Ties go to the newer commit (higher id).
    """

    head: str  # the commit the history describes; "" when there is none
    recipe: str  # how it was read (opaque to the store); another one means read it afresh
    note: str  # why there is no history ("" when there is)
    commits: int  # stored commits
    newest: int  # the largest commit time stored (Unix seconds; 0 without commits)


class CommitDoc(Record):
    """One commit to store: its text, touched paths and BM25 document."""

    hash: str
    time: int  # committer time, Unix seconds
    subject: str
    body: str
    paths: tuple[str, ...]  # touched paths under their newest names
    named: tuple[str, ...]  # the same paths as this commit named them
    terms: Mapping[str, int]  # token -> count


class HistoryUpdate(Record):
    """One atomic change of an index's history (:meth:`IndexWriter.update_history`).

    ``replace``: drop every stored commit first; then ``commits`` (oldest
    first, all newer than those stored) are appended (a sync that meets a
    rename replaces, :mod:`repolens.history.sync`). Then only the newest ``keep`` commits stay,
    and the state becomes ``head``, ``recipe``, ``note``. No history at all:
    ``replace=True``, no commits, ``head=""`` and the ``note`` why.
    """

    head: str
    recipe: str
    note: str = ""
    commits: Sequence[CommitDoc] = ()
    replace: bool = True
    keep: int = 0


class HistoryCommit(Record):
    """A stored commit: ``id`` ascends with recency; ``paths`` are its touched
    paths (newest names, sorted), all of them or only the indexed ones as asked."""

    id: int
    hash: str
    time: int
    subject: str
    paths: tuple[str, ...]
