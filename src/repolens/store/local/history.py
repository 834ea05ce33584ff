"""The history half of a local index: past commits, the files they touched, their terms.

The tables live in the generation's ``index.db``, beside files and chunks:

* a full build fills them in the new generation before it is published, so
  the history and the code it describes are swapped in together;
* a refresh updates them in one transaction under the index's write lock, so
  a reader sees the history before or after, never half of it;
* an index written before these tables existed simply has none (the leg says
  so and ``repolens index`` fills them); no format version moves.

Commit ids ascend with recency (older commits are inserted first), so the
newest ``n`` are the ``n`` highest ids and trimming is a range delete.
``history_postings`` holds the commits' BM25 documents inverted: one row per
term with its commit ids and counts packed, so a sync writes a few thousand
rows rather than a hundred thousand, and a question reads one row per term;
``history_documents`` packs every commit's id, length and time in one row.
Trimming the oldest commits leaves their ids in the lists (readers skip ids
below the oldest stored commit) until a tenth of the cap has gone, then
rewrites them.

Meta keys: ``history_schema``, ``history_head``, ``history_recipe``,
``history_note`` (see :class:`repolens.store.base.HistoryState`) and
``history_postings_floor``.
"""

from __future__ import annotations

import bisect
import sqlite3
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from repolens.store.base import CommitDoc, HistoryCommit, HistoryState, HistoryUpdate
from repolens.store.history_rank import query_weights, top_commits
from repolens.store.local.sqlite import read_meta, rows_in, write_meta

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS history_commits (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL,
    time INTEGER NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    length INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS history_files (
    commit_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    named TEXT NOT NULL,
    PRIMARY KEY (commit_id, path)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS history_files_path ON history_files(path);
CREATE TABLE IF NOT EXISTS history_documents (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    ids BLOB NOT NULL,
    lengths BLOB NOT NULL,
    times BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS history_postings (
    term TEXT PRIMARY KEY,
    ids BLOB NOT NULL,
    tfs BLOB NOT NULL
);
"""
# Bump when a table changes shape: the tables are dropped and read again.
SCHEMA = 1
_TABLES = ("history_postings", "history_files", "history_commits", "history_documents")
# Posting lists: commit ids (ascending) and term counts as uint32, packed in
# native byte order (an index is read on the machine that wrote it); commit
# times as int64.
_CODE, _TIME_CODE = "I", "q"


# -- writing ---------------------------------------------------------------------


def update(db: sqlite3.Connection, change: HistoryUpdate) -> None:
    """Apply ``change`` in one transaction (:meth:`IndexWriter.update_history`)."""
    _ensure_schema(db)
    db.execute("BEGIN")
    try:
        if change.replace:
            _clear(db)
        _add_commits(db, change.commits)
        _trim(db, change.keep)
        _pack_documents(db)
        write_meta(
            db, {"history_head": change.head, "history_recipe": change.recipe, "history_note": change.note}
        )
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _ensure_schema(db: sqlite3.Connection) -> None:
    """Create the tables; tables of another ``SCHEMA`` are dropped first (the
    history is read again, which costs about a second)."""
    if _readable(db):
        return
    for table in _TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute("DELETE FROM meta WHERE key LIKE 'history_%'")
    db.executescript(SCHEMA_SQL)
    write_meta(db, {"history_schema": str(SCHEMA)})


def _readable(db: sqlite3.Connection, meta: dict[str, str] | None = None) -> bool:
    """Whether the history tables exist in this code's shape."""
    meta = read_meta(db) if meta is None else meta
    return meta.get("history_schema") == str(SCHEMA) and _has_tables(db)


def _has_tables(db: sqlite3.Connection) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='history_commits'").fetchone()
    return row is not None


def _clear(db: sqlite3.Connection) -> None:
    for table in _TABLES:
        db.execute(f"DELETE FROM {table}")
    write_meta(db, {"history_postings_floor": "1"})


def _add_commits(db: sqlite3.Connection, docs: Sequence[CommitDoc]) -> None:
    """Append ``docs`` (oldest first) after every stored commit."""
    row = db.execute("SELECT coalesce(max(id), 0) FROM history_commits").fetchone()
    next_id = int(row[0]) + 1
    commits, files = [], []
    ids_of: defaultdict[str, list[int]] = defaultdict(list)
    tfs_of: defaultdict[str, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs, start=next_id):
        commits.append((i, doc.hash, doc.time, doc.subject, doc.body, sum(doc.terms.values())))
        pairs = zip(doc.paths, doc.named, strict=True)
        files.extend((i, path, "" if named == path else named) for path, named in pairs)
        for term, tf in doc.terms.items():
            ids_of[term].append(i)
            tfs_of[term].append(tf)
    db.executemany("INSERT INTO history_commits VALUES (?, ?, ?, ?, ?, ?)", commits)
    db.executemany("INSERT OR IGNORE INTO history_files VALUES (?, ?, ?)", files)
    stored = {term: (ids, tfs) for term, ids, tfs in _postings(db, ids_of)} if next_id > 1 else {}
    rows = []
    for term, new_ids in ids_of.items():
        ids, tfs = array(_CODE, new_ids), array(_CODE, tfs_of[term])
        old = stored.get(term)
        if old is not None:  # new ids are higher: appending keeps the list ascending
            ids, tfs = old[0] + ids, old[1] + tfs
        rows.append((term, ids.tobytes(), tfs.tobytes()))
    db.executemany("INSERT OR REPLACE INTO history_postings VALUES (?, ?, ?)", rows)


def _trim(db: sqlite3.Connection, keep: int) -> None:
    """Keep only the newest ``keep`` commits."""
    if keep <= 0:
        _clear(db)
        return
    row = db.execute(
        "SELECT id FROM history_commits ORDER BY id DESC LIMIT 1 OFFSET ?", (keep - 1,)
    ).fetchone()
    if row is None:
        return
    oldest = int(row[0])
    db.execute("DELETE FROM history_files WHERE commit_id < ?", (oldest,))
    db.execute("DELETE FROM history_commits WHERE id < ?", (oldest,))
    floor = int(read_meta(db).get("history_postings_floor") or 1)
    if oldest - floor > keep // 10:
        rows = []
        for term, ids, tfs in _postings(db, None):
            cut = bisect.bisect_left(ids, oldest)
            if cut < len(ids):
                rows.append((term, ids[cut:].tobytes(), tfs[cut:].tobytes()))
        db.execute("DELETE FROM history_postings")
        db.executemany("INSERT INTO history_postings VALUES (?, ?, ?)", rows)
        write_meta(db, {"history_postings_floor": str(oldest)})


def _pack_documents(db: sqlite3.Connection) -> None:
    """Every commit's id, document length and time as three packed arrays
    in one row, so a question reads one row rather than every commit."""
    rows = db.execute("SELECT id, length, time FROM history_commits ORDER BY id").fetchall()
    packed = (
        array(_CODE, [r[0] for r in rows]).tobytes(),
        array(_CODE, [r[1] for r in rows]).tobytes(),
        array(_TIME_CODE, [r[2] for r in rows]).tobytes(),
    )
    db.execute("INSERT OR REPLACE INTO history_documents VALUES (1, ?, ?, ?)", packed)


# -- reading ----------------------------------------------------------------------


def state(db: sqlite3.Connection) -> HistoryState | None:
    """What the history tables hold, or None when this index never had them
    or has them in another shape (the next ``repolens index`` reads the
    history again)."""
    meta = read_meta(db)
    if "history_head" not in meta or not _readable(db, meta):
        return None
    count, newest = db.execute("SELECT count(*), coalesce(max(time), 0) FROM history_commits").fetchone()
    return HistoryState(
        meta["history_head"], meta.get("history_recipe", ""), meta.get("history_note", ""), count, newest
    )


class HistoryReads:
    """A reader's view of the history tables.

    What every question needs besides its terms' posting lists (whether the
    tables are readable, :func:`state`, the commits' ids and lengths, the
    oldest stored id) is read once per version of the database rather than
    at every question: ``PRAGMA data_version`` moves when another
    connection commits, so a writer's update (or a new build of the tables)
    is seen at the next question, and a reader never writes these tables
    itself.
    """

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._version: int | None = None
        self._readable = False
        self._state: HistoryState | None = None
        self._documents: tuple[array[int], array[int], int] | None = None

    def _current(self) -> None:
        version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
        if version != self._version:
            self._readable = _readable(self.db)
            self._state = state(self.db) if self._readable else None
            self._documents = None
            self._version = version

    def state(self) -> HistoryState | None:
        self._current()
        return self._state

    def search(self, terms: Sequence[tuple[str, float]], k: int) -> list[tuple[int, float]]:
        """BM25 over the stored commits (:class:`HistoryState`), top ``k``."""

        self._current()
        if not self._readable:
            return []
        documents = self._read_documents()
        if documents is None:
            return []
        ids, lengths, oldest = documents
        weights = query_weights(terms)
        lists = _live_postings(self.db, weights, oldest)
        if not lists:
            return []
        return top_commits(ids, lengths, lists, weights, k)

    def _read_documents(self) -> tuple[array[int], array[int], int] | None:
        """The stored commits' ids and lengths (as :func:`top_commits` takes
        them) and the oldest stored id, None when there are none."""
        if self._documents is None:
            row = self.db.execute("SELECT ids, lengths FROM history_documents").fetchone()
            if row is None:
                return None
            ids, lengths = _unpacked(row[0]), _unpacked(row[1])
            oldest = self.db.execute("SELECT coalesce(min(id), 0) FROM history_commits").fetchone()
            self._documents = (ids, lengths, int(oldest[0]))
        return self._documents

    def commits(self, ids: Iterable[int], *, indexed_only: bool = False) -> dict[int, HistoryCommit]:
        self._current()
        return commits(self.db, ids, indexed_only=indexed_only) if self._readable else {}

    def of_file(self, path: str) -> list[tuple[int, str]]:
        self._current()
        return of_file(self.db, path) if self._readable else []

    def newest_name(self, named: str) -> str:
        self._current()
        return newest_name(self.db, named) if self._readable else ""


def _unpacked(blob: bytes) -> array[int]:
    values = array(_CODE)
    values.frombytes(blob)
    return values


def _live_postings(
    db: sqlite3.Connection, terms: Iterable[str], oldest: int
) -> dict[str, tuple[array[int], array[int]]]:
    """Per term: the ids of the stored commits holding it (ascending) and
    its count in each; ids below ``oldest`` (trimmed commits) are cut."""
    out = {}
    sql = "SELECT term, ids, tfs FROM history_postings WHERE term IN ({marks})"
    for term, ids, tfs in rows_in(db, sql, terms):
        held, counts = _unpacked(ids), _unpacked(tfs)
        if len(held) and held[0] < oldest:  # ids of trimmed commits may linger
            cut = bisect.bisect_left(held, oldest)
            held, counts = held[cut:], counts[cut:]
        if len(held):
            out[str(term)] = (held, counts)
    return out


def _postings(
    db: sqlite3.Connection, terms: Iterable[str] | None
) -> Iterator[tuple[str, array[int], array[int]]]:
    """Stored posting lists of ``terms`` (every term for None), unpacked."""
    if terms is None:
        rows: Iterable[Sequence[object]] = db.execute("SELECT term, ids, tfs FROM history_postings")
    else:
        rows = rows_in(db, "SELECT term, ids, tfs FROM history_postings WHERE term IN ({marks})", terms)
    for term, ids, tfs in rows:
        id_list, tf_list = array(_CODE), array(_CODE)
        id_list.frombytes(ids)
        tf_list.frombytes(tfs)
        yield str(term), id_list, tf_list


def commits(
    db: sqlite3.Connection, ids: Iterable[int], *, indexed_only: bool = False
) -> dict[int, HistoryCommit]:
    """Stored commits by id with their paths (sorted): all, or only indexed
    files (the tables must be readable: :class:`HistoryReads` checks)."""
    wanted = list(ids)
    sql = "SELECT id, hash, time, subject FROM history_commits WHERE id IN ({marks})"
    heads = {int(r[0]): r for r in rows_in(db, sql, wanted)}
    paths: dict[int, list[str]] = {i: [] for i in heads}
    if indexed_only:
        sql = (
            "SELECT h.commit_id, h.path FROM history_files h JOIN files f ON f.path = h.path"
            " WHERE h.commit_id IN ({marks}) ORDER BY h.path"
        )
    else:
        sql = "SELECT commit_id, path FROM history_files WHERE commit_id IN ({marks}) ORDER BY path"
    for cid, path in rows_in(db, sql, heads):
        paths[int(cid)].append(str(path))
    return {i: HistoryCommit(i, str(r[1]), int(r[2]), str(r[3]), tuple(paths[i])) for i, r in heads.items()}


def of_file(db: sqlite3.Connection, path: str) -> list[tuple[int, str]]:
    """(commit id, the name the commit gave the file) of the stored commits
    that touched ``path`` (its newest name), newest first (the tables must
    be readable: :class:`HistoryReads` checks)."""
    rows = db.execute(
        "SELECT commit_id, named FROM history_files WHERE path = ? ORDER BY commit_id DESC", (path,)
    )
    return [(int(cid), named or path) for cid, named in rows]


def newest_name(db: sqlite3.Connection, named: str) -> str:
    """The newest name of the file the newest stored commit naming ``named``
    touched, "" for none. A scan of the touched files: only when a path is
    neither indexed nor a newest name (an old name, asked)."""
    row = db.execute(
        "SELECT path FROM history_files WHERE named = ? ORDER BY commit_id DESC LIMIT 1", (named,)
    ).fetchone()
    return str(row[0]) if row else ""
