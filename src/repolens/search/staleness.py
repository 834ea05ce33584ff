"""Which files a reply cites changed since they were indexed, and the note saying so.

A reply cites the index's lines. :mod:`repolens.search.freshness` mends a
search's hits; the other replies that cite lines (symbols, references,
impact, focused context) say which of their files moved since, with
:func:`stale_note`. Light on imports: a symbol lookup in a new process
loads this, not the chunkers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from repolens.fronts import say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.store.base import IndexReader


def changed_files(root: Path, reader: IndexReader, paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` (indexed files) that changed or went since they
    were indexed, in order: a stat each, and a hash when the size or the
    mtime moved (a file touched, not changed, has not)."""
    paths = list(dict.fromkeys(paths))
    if not paths:
        return []
    records = reader.files(paths)
    changed = []
    for path in paths:
        rec = records.get(path)
        try:
            st = (root / path).stat()
        except OSError:
            changed.append(path)
            continue
        if rec is not None and (st.st_size, st.st_mtime_ns) == (rec.size, rec.mtime_ns):
            continue
        from repolens.discover.load import LoadedText, file_hash, load_text

        loaded = load_text(root / path)
        if isinstance(loaded, LoadedText) and rec is not None and file_hash(loaded.data) == rec.hash:
            continue  # touched, not changed
        changed.append(path)
    return changed


def stale_note(paths: Sequence[str], label: Callable[[str], str] = str) -> str:
    """The note (without its ``note:``) of a reply citing lines of files that
    changed since they were indexed (:func:`changed_files`), naming the first
    three; "" for none."""
    if not paths:
        return ""
    named = ", ".join(label(p) for p in paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    files, its = ("file", "its") if len(paths) == 1 else ("files", "their")
    return (
        f"{len(paths)} cited {files} changed since indexing ({named}): {its} lines may have moved; "
        f"{say('index')} refreshes the index"
    )
