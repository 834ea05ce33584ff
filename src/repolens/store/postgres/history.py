"""The git history of a generation on PostgreSQL (:class:`repolens.store.base.HistoryState`).

The same design as the local store's (:mod:`repolens.store.local.history`),
in this database's terms (tables in :mod:`.schema`):

* the rows belong to a generation: a full build fills them before it is
  published, so code and history are swapped in together; a refresh updates
  them in one transaction of the writer, so a reader sees the history before
  or after, never half of it; a generation without a ``history_state`` row
  (written before schema version 2) has none, and ``repolens index`` reads it;
* ``history_postings`` keeps each term's commits inverted and packed, one
  ``int8`` per commit (``id << 32 | count``, ascending): a sync writes one
  row per term, new commits are appended to a list in the database (their
  ids are higher), and a question reads one row per term plus
  ``history_state.documents`` (every commit's id and document length) in one
  statement, then scores with :func:`repolens.store.history_rank.top_commits`,
  exactly as the local store does;
* trimming the oldest commits leaves their ids in the lists (readers skip ids
  below the oldest stored commit) until a tenth of the cap has gone, then
  the lists are cut in one ``UPDATE``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from repolens.store.base import CommitDoc, HistoryCommit, HistoryState, HistoryUpdate
from repolens.store.history_rank import query_weights, top_commits

if TYPE_CHECKING:
    import psycopg

_COUNT = (1 << 32) - 1  # the low half of a posting: the term's count in the commit


# -- writing ---------------------------------------------------------------------


def update(conn: psycopg.Connection, gen: int, change: HistoryUpdate) -> None:
    """Apply ``change`` in one transaction (:meth:`IndexWriter.update_history`)."""
    with conn.transaction():
        row = conn.execute("SELECT floor FROM history_state WHERE gen = %s", (gen,)).fetchone()
        floor = int(row[0]) if row else 1
        if change.replace:
            floor = _clear(conn, gen)
        _add_commits(conn, gen, change.commits)
        floor = _trim(conn, gen, change.keep, floor)
        conn.execute(
            "INSERT INTO history_state (gen, head, recipe, note, commits, newest, floor, documents)"
            " SELECT %(g)s, %(head)s, %(recipe)s, %(note)s, count(*), coalesce(max(time), 0), %(floor)s,"
            " coalesce(array_agg((id::int8 << 32) | length ORDER BY id), '{}')"
            " FROM history_commits WHERE gen = %(g)s"
            " ON CONFLICT (gen) DO UPDATE SET head = excluded.head, recipe = excluded.recipe,"
            " note = excluded.note, commits = excluded.commits, newest = excluded.newest,"
            " floor = excluded.floor, documents = excluded.documents",
            {"g": gen, "head": change.head, "recipe": change.recipe, "note": change.note, "floor": floor},
        )


def _clear(conn: psycopg.Connection, gen: int) -> int:
    for table in ("history_postings", "history_files", "history_commits"):
        conn.execute(f"DELETE FROM {table} WHERE gen = %s", (gen,))
    return 1


def _add_commits(conn: psycopg.Connection, gen: int, docs: Sequence[CommitDoc]) -> None:
    """Append ``docs`` (oldest first) after every stored commit; each term's
    new postings are appended to its list (they are higher: it stays ascending)."""
    if not docs:
        return
    row = conn.execute("SELECT coalesce(max(id), 0) FROM history_commits WHERE gen = %s", (gen,)).fetchone()
    next_id = int(row[0]) + 1 if row else 1
    postings: dict[str, list[int]] = {}
    cur = conn.cursor()
    with cur.copy("COPY history_commits (gen, id, hash, time, subject, body, length) FROM STDIN") as copy:
        for i, doc in enumerate(docs, start=next_id):
            copy.write_row((gen, i, doc.hash, doc.time, doc.subject, doc.body, sum(doc.terms.values())))
            for term, tf in doc.terms.items():
                postings.setdefault(term, []).append(i << 32 | tf)
    with cur.copy("COPY history_files (gen, commit_id, path, named) FROM STDIN") as copy:
        for i, doc in enumerate(docs, start=next_id):
            named_as: dict[str, str] = {}
            for path, named in zip(doc.paths, doc.named, strict=True):
                named_as.setdefault(path, "" if named == path else named)  # a path once per commit
            for path, named in named_as.items():
                copy.write_row((gen, i, path, named))
    cur.execute('CREATE TEMP TABLE history_new (term text COLLATE "C", postings int8[]) ON COMMIT DROP')
    with cur.copy("COPY history_new (term, postings) FROM STDIN") as copy:
        for term, values in postings.items():
            copy.write_row((term, values))
    cur.execute(
        "INSERT INTO history_postings (gen, term, postings) SELECT %s, term, postings FROM history_new"
        " ON CONFLICT (gen, term) DO UPDATE SET postings = history_postings.postings || excluded.postings",
        (gen,),
    )
    cur.execute("DROP TABLE history_new")


def _trim(conn: psycopg.Connection, gen: int, keep: int, floor: int) -> int:
    """Keep only the newest ``keep`` commits; the new floor of the lists."""
    if keep <= 0:
        return _clear(conn, gen)
    row = conn.execute(
        "SELECT id FROM history_commits WHERE gen = %s ORDER BY id DESC LIMIT 1 OFFSET %s", (gen, keep - 1)
    ).fetchone()
    if row is None:
        return floor
    oldest = int(row[0])
    conn.execute("DELETE FROM history_files WHERE gen = %s AND commit_id < %s", (gen, oldest))
    conn.execute("DELETE FROM history_commits WHERE gen = %s AND id < %s", (gen, oldest))
    if oldest - floor <= keep // 10:
        return floor
    cut = {"g": gen, "cut": oldest << 32}
    conn.execute(
        "UPDATE history_postings SET postings = ARRAY(SELECT p FROM unnest(postings) AS p"
        " WHERE p >= %(cut)s ORDER BY p) WHERE gen = %(g)s AND postings[1] < %(cut)s",
        cut,
    )
    conn.execute("DELETE FROM history_postings WHERE gen = %s AND cardinality(postings) = 0", (gen,))
    return oldest


# -- reading ----------------------------------------------------------------------


def state(conn: psycopg.Connection, gen: int) -> HistoryState | None:
    """What the generation's history holds, None when it never had one."""
    row = conn.execute(
        "SELECT head, recipe, note, commits, newest FROM history_state WHERE gen = %s", (gen,)
    ).fetchone()
    return HistoryState(row[0], row[1], row[2], int(row[3]), int(row[4])) if row else None


_SEARCH = """
SELECT 0, p.term, array_send(p.postings)
FROM unnest(%(terms)s::text[]) AS q(term)
JOIN history_postings p ON p.gen = %(g)s AND p.term = q.term
UNION ALL
SELECT 1, NULL, array_send(documents) FROM history_state WHERE gen = %(g)s
"""


def search(
    conn: psycopg.Connection, gen: int, terms: Sequence[tuple[str, float]], k: int
) -> list[tuple[int, float]]:
    """BM25 over the stored commits (:class:`HistoryState`), top ``k``, in one statement."""
    import numpy as np

    from repolens.store.postgres.lexical import int8_values  # here: the indexer never loads the scoring

    weights = query_weights(terms)
    if not weights or k <= 0:
        return []
    found = conn.cursor(binary=True).execute(_SEARCH, {"g": gen, "terms": list(weights)}).fetchall()
    documents = next((int8_values(blob) for kind, _, blob in found if kind == 1), None)
    if documents is None or not len(documents):
        return []
    ids = documents >> 32
    oldest = int(ids[0])
    lists = {}
    for kind, term, blob in found:
        if kind == 0:
            values = int8_values(blob)
            values = values[np.searchsorted(values, oldest << 32) :]  # ids of trimmed commits may linger
            if len(values):
                lists[term] = (values >> 32, values & _COUNT)
    return top_commits(ids, (documents & _COUNT).astype(np.float64), lists, weights, k)


def commits(
    conn: psycopg.Connection, gen: int, ids: Iterable[int], *, indexed_only: bool = False
) -> dict[int, HistoryCommit]:
    """Stored commits by id with their paths (sorted): all, or only indexed files."""
    wanted = list({int(i) for i in ids})
    if not wanted:
        return {}
    # The paths of all the commits in one pass (one join with ``files``), then their heads.
    indexed = " JOIN files x ON x.gen = f.gen AND x.path = f.path" if indexed_only else ""
    found = conn.execute(
        "SELECT c.id, c.hash, c.time, c.subject, coalesce(p.paths, '{}') FROM history_commits c"
        " LEFT JOIN (SELECT f.commit_id, array_agg(f.path ORDER BY f.path) AS paths"
        f" FROM history_files f{indexed} WHERE f.gen = %(g)s AND f.commit_id = ANY(%(ids)s)"
        " GROUP BY f.commit_id) p ON p.commit_id = c.id"
        " WHERE c.gen = %(g)s AND c.id = ANY(%(ids)s)",
        {"g": gen, "ids": wanted},
    )
    return {int(r[0]): HistoryCommit(int(r[0]), r[1], int(r[2]), r[3], tuple(r[4])) for r in found}


def of_file(conn: psycopg.Connection, gen: int, path: str) -> list[tuple[int, str]]:
    """(commit id, the name the commit gave the file) of the stored commits
    that touched ``path`` (its newest name), newest first."""
    found = conn.execute(
        "SELECT commit_id, named FROM history_files WHERE gen = %s AND path = %s ORDER BY commit_id DESC",
        (gen, path),
    )
    return [(int(cid), named or path) for cid, named in found]


def newest_name(conn: psycopg.Connection, gen: int, named: str) -> str:
    """The newest name of the file the newest stored commit naming ``named``
    touched, "" for none (see :func:`repolens.store.local.history.newest_name`)."""
    row = conn.execute(
        "SELECT path FROM history_files WHERE gen = %s AND named = %s ORDER BY commit_id DESC LIMIT 1",
        (gen, named),
    ).fetchone()
    return str(row[0]) if row else ""
