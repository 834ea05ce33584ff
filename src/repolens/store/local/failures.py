"""A failing disk under a local index, told in one line: a damaged file, or no space left.

SQLite, zlib and tantivy each report these in their own words and types
(``DatabaseError: database disk image is malformed``, ``zlib.error: Error -3
while decompressing data``, ``ValueError: ... No space left on device (os
error 28)``); left alone they reach the user as "a bug". The local store
turns them into:

* :class:`IndexCorruptError` for a damaged file; ``repolens index`` then
  rebuilds the index instead of refreshing it. A reader that meets damage
  leaves a mark in the generation's folder (when it may write there):
  damage inside a chunk's text shows only when that chunk is read, and the
  mark is how the next ``repolens index`` learns of it. A marked generation
  is refused by every reader until it is rebuilt.
* :class:`StorageFullError` for a full disk (the writer undoes what it was
  writing, see :mod:`repolens.store.local.writer`).

Damage shows in more forms than SQLite's own codes: a text column whose
bytes are not UTF-8 (Python's ``OperationalError: Could not decode to
UTF-8``, no error code; a ``UnicodeDecodeError`` when the text is SQLite's
message quoting a damaged schema), a schema whose text no longer names a
column this version's statements read (``no such column``), and a tantivy
file whose offsets lead outside it (a Rust panic,
``pyo3_runtime.PanicException``, which is not an ``Exception``).

Other errors pass through unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import re
import sqlite3
import types
from collections.abc import Callable
from pathlib import Path

from repolens.errors import IndexCorruptError, RepolensError, StorageFullError
from repolens.store import deflate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

DAMAGE_MARK = "damaged"

_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
# tantivy tells an io error by its message only (a ValueError)
_FULL_WORDS = ("os error 28", "os error 122", "no space left", "storagefull", "quota exceeded")
_DAMAGE_WORDS = ("data corrupted", "corrupt", "an io error occurred")  # (a full disk is told first)
_NOT_UTF8 = r"Could not decode to UTF-8 column '([^']*)'"  # compiled at first use: a search needs none
_NO_SUCH = r"no such (column|table): "  # compiled at first use: a search needs none
_IN_FILE = r'in file `"([^"`]+)"`'  # compiled at first use: a search needs none
_INNER = r'Error\("([^"]+)"'  # compiled at first use: a search needs none
# Free space below which an ambiguous write failure (SQLite's "disk I/O
# error", a tantivy writer that was "killed") is taken for a full disk.
_NEARLY_FULL = 1 << 20


def damaged(gen_dir: Path, detail: str) -> IndexCorruptError:
    """The error for damage in ``gen_dir`` (``detail`` names the file and what is wrong)."""
    return IndexCorruptError(f"the index in {gen_dir.parent} is damaged ({gen_dir.name}/{detail})")


def disk_full(index_dir: Path) -> StorageFullError:
    """The error for a full disk under ``index_dir`` (the indexer says how
    much a retry needs, once what failed is undone)."""
    return StorageFullError(str(index_dir))


def _nearly_full(gen_dir: Path) -> bool:
    import shutil  # only when a write failed: a search need not load it

    try:
        return shutil.disk_usage(gen_dir).free < _NEARLY_FULL
    except OSError:
        return False


def failure(exc: BaseException, gen_dir: Path, file: str = "index.db") -> RepolensError | None:
    """The error ``exc`` stands for when ``gen_dir``'s disk failed, else None.
    ``file``: the part of the generation that was being read (for SQLite)."""
    if is_panic(exc):
        return damaged(gen_dir, f"lexical: {_shortened(str(exc))}")
    if isinstance(exc, sqlite3.DatabaseError):
        if undecoded := re.match(_NOT_UTF8, str(exc)):
            return damaged(gen_dir, f"{file}: column '{undecoded.group(1)}' holds bytes that are not UTF-8")
        if re.match(_NO_SUCH, str(exc)):  # this version's own statements: the schema's text is damaged
            return damaged(gen_dir, f"{file}: its schema is damaged ({exc})")
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in _DAMAGE_CODES:
            return damaged(gen_dir, f"{file}: {exc}")
        if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _nearly_full(gen_dir)):
            return disk_full(gen_dir.parent)
        return None
    if isinstance(exc, UnicodeDecodeError):  # SQLite's message about damaged schema text
        return damaged(gen_dir, f"{file}: it holds text that is not UTF-8")
    if isinstance(exc, deflate.ERRORS):
        return damaged(gen_dir, f"{file}: a chunk's stored text is damaged")
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return disk_full(gen_dir.parent)
        return None
    if isinstance(exc, ValueError):  # tantivy's errors
        text = str(exc).lower()
        if any(w in text for w in _FULL_WORDS) or ("killed" in text and _nearly_full(gen_dir)):
            return disk_full(gen_dir.parent)
        if any(w in text for w in _DAMAGE_WORDS):
            return lexical_damage(gen_dir, exc)
    return None


def is_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic (tantivy reading a damaged file)."""
    return type(exc).__name__ == "PanicException"


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 100 else text[:97] + "..."


def lexical_damage(gen_dir: Path, exc: Exception) -> IndexCorruptError:
    """The error for a lexical index tantivy cannot read. Its message names
    the file and the parser's complaint, not the file itself, which tantivy
    quotes whole after ``Content:`` (a cut ``meta.json``: 1,200 characters)."""
    text = " ".join(str(exc).split()).split(" Content:")[0]
    file, inner = re.search(_IN_FILE, text), re.search(_INNER, text)
    if file and inner:
        return damaged(gen_dir, f"lexical/{file.group(1)}: {inner.group(1)}")
    return damaged(gen_dir, f"lexical: {_shortened(text)}")


def mark_damaged(gen_dir: Path, problem: str) -> None:
    """Leave ``problem`` in ``gen_dir`` for the next writer; nothing when it
    cannot be written (a read-only disk: it is searched as it is)."""
    with contextlib.suppress(OSError):
        (gen_dir / DAMAGE_MARK).write_text(problem + "\n", encoding="utf-8")


def damage_mark(gen_dir: Path) -> IndexCorruptError | None:
    """The damage a reader found in ``gen_dir``, if any."""
    try:
        problem = (gen_dir / DAMAGE_MARK).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return IndexCorruptError(problem or f"the index in {gen_dir.parent} is damaged")


def guarded(cls: type[T]) -> type[T]:
    """``cls`` (with a ``gen_dir``, and a ``_damage()`` check that names what
    is damaged, "" when nothing) whose public methods report a failing disk
    as above; damage they meet is marked (:func:`mark_damaged`)."""
    for name, attr in list(vars(cls).items()):
        if not name.startswith("_") and isinstance(attr, types.FunctionType):
            setattr(cls, name, _guard(attr))
    return cls


def _checked(owner: Any) -> IndexCorruptError | None:
    """The damage ``owner``'s own check (``_damage``) finds, after a failure
    nothing above explains: a value of the wrong type, a ``NULL`` where
    there may be none, reach Python as a ``TypeError`` or ``ValueError``
    that could as well be a bug; the check tells the two apart (it reads
    every page: run only when something failed)."""
    check = getattr(owner, "_damage", None)
    if check is None:
        return None
    try:
        found = check()
    except Exception as exc:  # the check itself trips on the damage
        known = failure(exc, owner.gen_dir)
        return known if isinstance(known, IndexCorruptError) else None
    return damaged(owner.gen_dir, found) if found else None


def _guard(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def guarded_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except IndexCorruptError as err:  # the lexical half, opened on first use
            mark_damaged(self.gen_dir, err.problem)
            raise
        except RepolensError:
            raise
        except BaseException as exc:
            err = failure(exc, self.gen_dir) if isinstance(exc, Exception) or is_panic(exc) else None
            if err is None and isinstance(exc, Exception):
                err = _checked(self)
            if err is None:
                raise
            if isinstance(err, IndexCorruptError):
                mark_damaged(self.gen_dir, err.problem)
            raise err from exc

    return guarded_method


# -- the checks of a whole database (the writer's verify, a failed read's) ----------


def damaged_pages(db: sqlite3.Connection, *, indexes: bool = False) -> str:
    """What ``PRAGMA quick_check`` (every page read, not the texts) finds
    wrong with the database, in SQLite's words ("" when nothing); with
    ``indexes``, ``integrity_check``, which also reads every index against
    its table (a damaged index entry can name a row that is not there)."""
    rows = db.execute(f"PRAGMA {'integrity_check' if indexes else 'quick_check'}").fetchall()
    return "" if rows == [("ok",)] else "database disk image is malformed"


# The storage class each declared type holds (typeof()); a NOT NULL-less column may hold NULL too.
_STORED_AS = {"INTEGER": "integer", "TEXT": "text", "BLOB": "blob"}


def damaged_rows(db: sqlite3.Connection, schema: str) -> str:
    """What a read of the rows would trip on that ``quick_check`` does not
    see, said in a few words ("" when nothing): a table whose definition
    is not ``schema``'s (damaged text in the schema), a value of another
    type than its column's, or text that is not UTF-8. One SQL pass per
    table, no row reaches Python (~10 ms a thousand chunks: run when a read
    failed, not before every refresh); tables ``schema`` has and the
    database lacks are left to their readers."""
    expected = sqlite3.connect(":memory:")
    try:
        expected.executescript(schema)
        want = {name: _columns(expected, name) for name in _tables(expected)}
    finally:
        expected.close()
    have = _tables(db)
    if strange := sorted(set(have) - set(want)):
        return f"table {strange[0]!r} is not one of an index's"
    for table in (t for t in want if t in have):
        columns = _columns(db, table)
        if columns != want[table]:
            return f"the columns of table {table!r} are not an index's"
        wrong = " OR ".join(
            f"typeof({name}) NOT IN ('{_STORED_AS[kind]}', '{_STORED_AS[kind] if notnull else 'null'}')"
            for name, kind, notnull in columns
        )
        texts = " || ".join(name for name, kind, _ in columns if kind == "TEXT") or "''"
        try:  # one scan: Python decodes the texts as one string
            (typed_wrong, _) = db.execute(
                f"SELECT max({wrong}), group_concat({texts}, '') FROM {table}"
            ).fetchone()
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise
            return f"table {table!r} holds text that is not UTF-8"
        if typed_wrong:
            return f"table {table!r} holds a value of the wrong type"
    return ""


def _tables(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
    return [name for (name,) in rows]


def _columns(db: sqlite3.Connection, table: str) -> list[tuple[str, str, bool]]:
    rows = db.execute('SELECT name, type, "notnull" OR pk FROM pragma_table_info(?)', (table,))
    return [(name, kind, bool(notnull)) for name, kind, notnull in rows]
