"""The tables of a PostgreSQL store, their version and their migrations.

Many repositories share one database. ``repos`` names each by its *key*
(not its path: an indexer and the servers reading its index may see the
repository at different paths) and points at its published generation;
``generations`` numbers them per repository. Every other table is keyed by
``gen`` (a generation id unique across the database), so one generation's
rows are one range of each table's primary key, and a generation is dropped
with one ``DELETE`` per table. With Citus, distribute every ``gen`` table by
``gen`` and make ``repos`` and ``generations`` reference tables.

The lexical index (see :mod:`repolens.store.postgres.lexical`) is
``lex_blobs`` (each (token, field)'s postings packed in ``int8[]`` parts:
a build writes one part per batch, and its publish joins each term's parts
into one), ``lex_postings`` (rows of postings a refresh wrote since),
``lex_deleted`` (chunks removed since the blobs were written) and
``lex_stats`` (live document count and token totals per field).

The git history (see :mod:`repolens.store.postgres.history`) is
``history_commits`` (id ascending with recency), ``history_files`` (each
commit's touched paths, newest name and the name the commit used),
``history_postings`` (each term's commits and counts packed in one
``int8[]``) and ``history_state`` (one row per generation that has a
history: head, recipe, note and every commit's document length packed).

``repolens_schema`` holds the version. Readers refuse another version with
the fix; ``repolens index`` creates the tables or migrates older ones
(:func:`ensure`), under an advisory lock so two indexers never race.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from repolens.errors import IndexVersionError
from repolens.fronts import say

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 4
_MIGRATE_LOCK = 0x52_4C_53_43  # "RLSC": one migrating process at a time

DDL = """
CREATE TABLE repolens_schema (version int NOT NULL);
CREATE TABLE repos (
    id serial PRIMARY KEY,
    key text NOT NULL UNIQUE,
    current_gen bigint,
    published_at timestamptz
);
CREATE TABLE generations (
    gen bigserial PRIMARY KEY,
    repo_id int NOT NULL REFERENCES repos(id),
    seq int NOT NULL,
    state text NOT NULL,           -- building | ready
    replaced_at timestamptz,
    next_cid int NOT NULL DEFAULT 1,
    next_file bigint NOT NULL DEFAULT 1,
    UNIQUE (repo_id, seq)
);
CREATE TABLE meta (gen bigint, key text, value text NOT NULL, PRIMARY KEY (gen, key));
CREATE TABLE files (
    gen bigint, id bigint, path text COLLATE "C" NOT NULL, hash text NOT NULL, size bigint NOT NULL,
    mtime_ns bigint NOT NULL, language text NOT NULL, lines int NOT NULL, flags text NOT NULL,
    PRIMARY KEY (gen, id), UNIQUE (gen, path)
);
CREATE TABLE chunks (
    gen bigint, cid int, id text NOT NULL, file_id bigint NOT NULL, path text COLLATE "C" NOT NULL,
    start_line int NOT NULL, end_line int NOT NULL, language text NOT NULL, kind text NOT NULL,
    name text NOT NULL, qualname text NOT NULL, signature text NOT NULL, parent text NOT NULL,
    doc text NOT NULL, kinds text NOT NULL, text bytea NOT NULL,
    lens int[] NOT NULL,           -- tokens per scored field: path, name, sig, body, dirs
    PRIMARY KEY (gen, cid)
);
CREATE UNIQUE INDEX chunks_id ON chunks (gen, id);
CREATE INDEX chunks_path ON chunks (gen, path, start_line);
CREATE INDEX chunks_file ON chunks (gen, file_id);
CREATE TABLE symbols (
    gen bigint, seq bigint, file_id bigint NOT NULL, path text COLLATE "C" NOT NULL,
    name text NOT NULL, norm text COLLATE "C" NOT NULL, qualname text NOT NULL, kind text NOT NULL,
    start_line int NOT NULL, end_line int NOT NULL, signature text NOT NULL, parent text NOT NULL,
    language text NOT NULL,
    PRIMARY KEY (gen, seq)
);
CREATE INDEX symbols_norm ON symbols (gen, norm, seq);
CREATE INDEX symbols_file ON symbols (gen, file_id, seq);
CREATE TABLE skipped (
    gen bigint, path text COLLATE "C", reason text NOT NULL, size bigint NOT NULL, mtime_ns bigint NOT NULL,
    PRIMARY KEY (gen, path)
);
CREATE TABLE vectors (gen bigint, cid int, vec halfvec NOT NULL, PRIMARY KEY (gen, cid));
CREATE TABLE lex_stats (gen bigint PRIMARY KEY, num_docs bigint NOT NULL, totals bigint[] NOT NULL);
CREATE TABLE lex_blobs (
    gen bigint, token text COLLATE "C", field smallint, postings int8[] NOT NULL,
    PRIMARY KEY (gen, token, field)
);
ALTER TABLE lex_blobs ALTER COLUMN postings SET STORAGE EXTERNAL;
CREATE TABLE lex_postings (gen bigint NOT NULL, token text COLLATE "C" NOT NULL, field smallint NOT NULL,
                           cid int NOT NULL, packed int8 NOT NULL);
CREATE INDEX lex_postings_term ON lex_postings (gen, token, field);
CREATE INDEX lex_postings_cid ON lex_postings (gen, cid);
CREATE TABLE lex_deleted (gen bigint, cid int, PRIMARY KEY (gen, cid));
CREATE TABLE remembered (
    repo_id int, query_id text, payload text NOT NULL, at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, query_id)
);
"""

# Version 2: the git history, per generation like everything else.
HISTORY_DDL = """
CREATE TABLE history_commits (
    gen bigint, id int, hash text NOT NULL, time bigint NOT NULL, subject text NOT NULL,
    body text NOT NULL, length int NOT NULL,
    PRIMARY KEY (gen, id)
);
CREATE TABLE history_files (
    gen bigint, commit_id int, path text COLLATE "C", named text NOT NULL,  -- named: "" when = path
    PRIMARY KEY (gen, commit_id, path)
);
CREATE INDEX history_files_path ON history_files (gen, path, commit_id);
CREATE TABLE history_postings (
    gen bigint, term text COLLATE "C", postings int8[] NOT NULL,  -- commit id << 32 | count, ascending
    PRIMARY KEY (gen, term)
);
ALTER TABLE history_postings ALTER COLUMN postings SET STORAGE EXTERNAL;
CREATE TABLE history_state (
    gen bigint PRIMARY KEY, head text NOT NULL, recipe text NOT NULL, note text NOT NULL,
    commits int NOT NULL, newest bigint NOT NULL,
    floor int NOT NULL,            -- the lists were last cut here: trimmed ids from it up may linger
    documents int8[] NOT NULL      -- commit id << 32 | document length, ascending
);
"""

# Version 3: a term's postings in parts, numbered by their first chunk id
# (parts of one term hold ascending, disjoint ranges of chunk ids), so a
# build writes each batch's lists packed, with no row per posting and no
# sort at publish; the lists of version 2 become part 0.
PARTS_DDL = """
ALTER TABLE lex_blobs ADD COLUMN part int NOT NULL DEFAULT 0;
ALTER TABLE lex_blobs ALTER COLUMN part DROP DEFAULT;
ALTER TABLE lex_blobs DROP CONSTRAINT lex_blobs_pkey;
ALTER TABLE lex_blobs ADD PRIMARY KEY (gen, token, field, part);
CREATE AGGREGATE repolens_concat(int8[]) (SFUNC = array_cat, STYPE = int8[]);
"""

# Version 4: each file's references, packed (repolens.store.ref_rows), and
# the names they use.
REFS_DDL = """
CREATE TABLE refs (gen bigint, file_id bigint, data bytea NOT NULL, PRIMARY KEY (gen, file_id));
CREATE TABLE ref_names (gen bigint, name text COLLATE "C", file_id bigint, PRIMARY KEY (gen, name, file_id));
"""

# Migrations from version N to N + 1, run in order by ensure() (a new
# database: DDL, then each of them).
MIGRATIONS: dict[int, str] = {1: HISTORY_DDL, 2: PARTS_DDL, 3: REFS_DDL}

# Every table holding rows of one generation, in the order a generation is dropped.
GEN_TABLES = (
    "history_state",
    "history_postings",
    "history_files",
    "history_commits",
    "lex_deleted",
    "lex_postings",
    "lex_blobs",
    "lex_stats",
    "vectors",
    "ref_names",
    "refs",
    "skipped",
    "symbols",
    "chunks",
    "files",
    "meta",
)


def found_version(conn: psycopg.Connection) -> int | None:
    """The schema version of the database, None when it has no repolens tables."""
    exists = conn.execute("SELECT to_regclass('repolens_schema') IS NOT NULL").fetchone()
    if not exists or not exists[0]:
        return None
    row = conn.execute("SELECT max(version) FROM repolens_schema").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def check(version: int | None, where: str) -> None:
    """Refuse a database written by another version (None: no tables yet, fine)."""
    if version is None or version == SCHEMA_VERSION:
        return
    if version < SCHEMA_VERSION:
        raise IndexVersionError(
            f"the PostgreSQL store {where} has schema version {version} but this repolens reads version "
            f"{SCHEMA_VERSION}: {say('run migration')}"
        )
    raise IndexVersionError(
        f"the PostgreSQL store {where} has schema version {version}, newer than this repolens reads "
        f"({SCHEMA_VERSION}): upgrade repolens"
    )


def ensure(conn: psycopg.Connection, where: str) -> None:
    """Create the tables, or migrate them to :data:`SCHEMA_VERSION` (writers only)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
        version = found_version(conn)
        if version is None:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(DDL)
            conn.execute("INSERT INTO repolens_schema VALUES (1)")
            version = 1
        elif version > SCHEMA_VERSION:
            check(version, where)
        while version < SCHEMA_VERSION:
            conn.execute(MIGRATIONS[version])
            version += 1
            conn.execute("UPDATE repolens_schema SET version = %s", (version,))
