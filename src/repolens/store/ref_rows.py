"""A file's references as stored, the same in every backend.

A file's references (:class:`repolens.chunking.refs.Ref`) are kept as one
compressed blob per file (``refs``: the rows of
:class:`repolens.chunking.refs.RefRows`, one line per reference, its fields
tab-separated), and ``ref_names`` holds each distinct (name, file) pair, so
a lookup by name reads the blobs of the files that use it and nothing else.
One row per reference would cost ~50 bytes each (a million-line corpus holds
1.3 million); the blob costs ~6.5, a name pair ~20 per distinct name a file uses.
"""

from __future__ import annotations

from collections.abc import Iterable

from repolens.chunking.refs import Ref, RefRows
from repolens.store import deflate
from repolens.store.records import PackedRefs, RefRow

# The blobs are compressed "small" (repolens.store.deflate): with zlib, its
# level 3 compressed corpus-1m's 75 MB of rows to 8.1 MB in 0.31 s, where 6
# made 6.8 MB in 0.71 s and 1 8.7 MB in 0.26 s; ISA-L's level 2 makes ~4% more
# than zlib's 3 in a third of the time.


def pack(rows: RefRows | None) -> PackedRefs | None:
    """What the store writes for a file's references (None for none)."""
    if rows is None:
        return None
    return PackedRefs(deflate.compress(rows.text.encode("utf-8", "surrogatepass"), "small"), rows.names)


def ref_names(refs: Iterable[Ref]) -> list[str]:
    """The distinct names ``refs`` use, sorted (a file's ``ref_names`` rows)."""
    return sorted({r.name for r in refs})


# Blobs read by name, by their bytes, path and language: a question reads the files using each of
# its names one name at a time (a walk through types, dozens of names), mostly the same files, and
# the next question many of them again. A blob read once is kept decompressed; read often, as its
# rows by name. Keyed by the content (never stale); all let go when they would pass ``_HELD``
# bytes, about (a character of text counted as one, of rows as ``_ROWS_WEIGH``: vitest's 3.1
# million characters of rows take 22 MB as rows).
_BLOBS: dict[tuple[bytes, str, str], _Blob] = {}
_HELD = 32_000_000
_ROWS_WEIGH = 7
# Reads of a blob after which it is kept as its rows: a name's lines are found at C's speed in
# the text, where the rows are made at Python's (each line split, ~15 times slower): they pay
# when many names are read from one file (a walk through a package's types), not one or two
# from a large module (Python's, read once a question).
_ROWS_AFTER = 16
_held = 0


class _Blob:
    """A blob's text, how often it was read, and once read often its rows by name, each
    with its line number and its place in the text (False: a line not a row's)."""

    __slots__ = ("rows", "text", "uses")

    def __init__(self, text: str) -> None:
        self.text = text
        self.uses = 0
        self.rows: dict[str, list[tuple[int, int, RefRow]]] | bool | None = None


def _blob(blob: bytes, path: str, language: str) -> _Blob:
    """The blob as held (decompressed and held now if it was not), its reads counted."""
    key = (blob, path, language)
    held = _BLOBS.get(key)
    if held is None:
        held = _Blob(deflate.decompress(blob).decode("utf-8", "surrogatepass"))
        _hold(len(held.text) + len(blob))  # (the key holds the compressed blob too)
        _BLOBS[key] = held
    held.uses += 1
    return held


def _hold(size: int) -> None:
    """Count ``size`` more bytes held, all of them let go first when that would pass ``_HELD``."""
    global _held
    if _held + size > _HELD:
        _BLOBS.clear()
        _held = 0
    _held += size


def _rows_by_name(text: str, path: str, language: str) -> dict[str, list[tuple[int, int, RefRow]]] | bool:
    """Every row of ``text`` by name (False when a line is not a row: it is read as before)."""
    out: dict[str, list[tuple[int, int, RefRow]]] = {}
    for place, line in enumerate(text.split("\n")):
        fields = line.split("\t")
        if len(fields) != 6:
            return False
        name, number, kind, scope, target, binds = fields
        try:
            row = RefRow(path, language, name, int(number), kind, scope, target, binds)
        except ValueError:
            return False
        out.setdefault(name, []).append((row.line, place, row))
    return out


def unpack_refs(blob: bytes, path: str, language: str, names: frozenset[str] | None = None) -> list[RefRow]:
    """The references of one file's blob, those named one of ``names`` (None: all)."""
    if not blob:
        return []
    lines: Iterable[str]
    if names is None:  # (a whole file: an index's write, a file's refresh; not kept)
        lines = deflate.decompress(blob).decode("utf-8", "surrogatepass").split("\n")
    else:
        held = _blob(blob, path, language)
        if held.uses > _ROWS_AFTER and held.rows is None:
            held.rows = _rows_by_name(held.text, path, language)
            _hold(len(held.text) * _ROWS_WEIGH)
            _BLOBS[(blob, path, language)] = held  # (again, were they all let go)
        if isinstance(held.rows, dict):
            return _named(held.rows, names)
        lines = _lines_of(held.text, names)
    out = []
    for line in lines:
        name, number, kind, scope, target, binds = line.split("\t")
        out.append(RefRow(path, language, name, int(number), kind, scope, target, binds))
    return out


def _named(rows: dict[str, list[tuple[int, int, RefRow]]], names: frozenset[str]) -> list[RefRow]:
    """The rows named one of ``names``, in :func:`_lines_of`'s order: by line, and on one line
    in the text's order (more than 3 names) or by name as ``names`` goes, then the text's."""
    found = [entry for name in names for entry in rows.get(name, ())]
    if len(names) > 3:
        found.sort(key=lambda entry: (entry[0], entry[1]))
    else:
        found.sort(key=lambda entry: entry[0])
    return [entry[2] for entry in found]


def _lines_of(text: str, names: frozenset[str]) -> list[str]:
    """The lines of ``text`` that start with one of ``names`` and a tab, found
    with ``str.find`` (a regular expression scanning every line start of a
    large file's blob costs ten times more)."""
    if len(names) > 3:  # one pass over the lines beats a search of the text per name
        found = [line for line in text.split("\n") if line[: line.find("\t")] in names]
        return sorted(found, key=lambda line: int(line.split("\t", 2)[1]))
    out = []
    for name in names:
        head = name + "\t"
        at = text.find(head)
        while at >= 0:
            if at == 0 or text[at - 1] == "\n":
                end = text.find("\n", at)
                out.append(text[at:] if end < 0 else text[at:end])
                at = end if end >= 0 else len(text)
            at = text.find(head, at + 1)
    return sorted(out, key=lambda line: int(line.split("\t", 2)[1]))


def as_refs(rows: Iterable[RefRow]) -> list[Ref]:
    """Stored rows back as references (a sibling branch's, copied)."""
    return [Ref(r.name, r.line, r.kind, r.scope, r.target, r.binds) for r in rows]
