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

Other errors pass through unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import re
import sqlite3
import types
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from repolens.errors import IndexCorruptError, RepolensError, StorageFullError

DAMAGE_MARK = "damaged"

_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
# tantivy tells an io error by its message only (a ValueError)
_FULL_WORDS = ("os error 28", "os error 122", "no space left", "storagefull", "quota exceeded")
_DAMAGE_WORDS = ("data corrupted", "corrupt")
_IN_FILE = re.compile(r'in file `"([^"`]+)"`')
_INNER = re.compile(r'Error\("([^"]+)"')
# Free space below which an ambiguous write failure (SQLite's "disk I/O
# error", a tantivy writer that was "killed") is taken for a full disk.
_NEARLY_FULL = 1 << 20

T = TypeVar("T")


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
    if isinstance(exc, sqlite3.DatabaseError):
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in _DAMAGE_CODES:
            return damaged(gen_dir, f"{file}: {exc}")
        if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _nearly_full(gen_dir)):
            return disk_full(gen_dir.parent)
        return None
    if isinstance(exc, zlib.error):
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


def lexical_damage(gen_dir: Path, exc: Exception) -> IndexCorruptError:
    """The error for a lexical index tantivy cannot read. Its message names
    the file and the parser's complaint, not the file itself, which tantivy
    quotes whole after ``Content:`` (a cut ``meta.json``: 1,200 characters)."""
    text = " ".join(str(exc).split()).split(" Content:")[0]
    file, inner = _IN_FILE.search(text), _INNER.search(text)
    if file and inner:
        return damaged(gen_dir, f"lexical/{file.group(1)}: {inner.group(1)}")
    return damaged(gen_dir, f"lexical: {text if len(text) <= 100 else text[:97] + '...'}")


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
    """``cls`` (with a ``gen_dir``) whose public methods report a failing disk
    as above; damage they meet is marked (:func:`mark_damaged`)."""
    for name, attr in list(vars(cls).items()):
        if not name.startswith("_") and isinstance(attr, types.FunctionType):
            setattr(cls, name, _guard(attr))
    return cls


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
        except Exception as exc:
            err = failure(exc, self.gen_dir)
            if err is None:
                raise
            if isinstance(err, IndexCorruptError):
                mark_damaged(self.gen_dir, err.problem)
            raise err from exc

    return guarded_method
