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

import zlib
from collections.abc import Iterable

from repolens.chunking.refs import Ref, RefRows
from repolens.store.records import PackedRefs, RefRow

# zlib's level for the blobs: 3 compresses corpus-1m's 75 MB of rows to 8.1
# MB in 0.31 s, where 6 makes 6.8 MB in 0.71 s (1 makes 8.7 MB in 0.26 s).
_LEVEL = 3


def pack(rows: RefRows | None) -> PackedRefs | None:
    """What the store writes for a file's references (None for none)."""
    if rows is None:
        return None
    return PackedRefs(zlib.compress(rows.text.encode("utf-8", "surrogatepass"), _LEVEL), rows.names)


def ref_names(refs: Iterable[Ref]) -> list[str]:
    """The distinct names ``refs`` use, sorted (a file's ``ref_names`` rows)."""
    return sorted({r.name for r in refs})


# Blobs read by name, decompressed, by their bytes: a question reads the files using each of its
# names one name at a time (a walk through types, dozens of names), mostly the same files, and the
# next question many of them again. Keyed by the content (never stale); emptied when it holds
# ``_TEXTS_HELD`` characters.
_TEXTS: dict[bytes, str] = {}
_TEXTS_HELD = 8_000_000
_held = 0


def _text_of(blob: bytes) -> str:
    global _held
    text = _TEXTS.get(blob)
    if text is None:
        text = zlib.decompress(blob).decode("utf-8", "surrogatepass")
        if _held + len(text) > _TEXTS_HELD:
            _TEXTS.clear()
            _held = 0
        _TEXTS[blob] = text
        _held += len(text)
    return text


def unpack_refs(blob: bytes, path: str, language: str, names: frozenset[str] | None = None) -> list[RefRow]:
    """The references of one file's blob, those named one of ``names`` (None: all)."""
    if not blob:
        return []
    lines: Iterable[str]
    if names is None:  # (a whole file: an index's write, a file's refresh; not kept)
        lines = zlib.decompress(blob).decode("utf-8", "surrogatepass").split("\n")
    else:
        lines = _lines_of(_text_of(blob), names)
    out = []
    for line in lines:
        name, number, kind, scope, target, binds = line.split("\t")
        out.append(RefRow(path, language, name, int(number), kind, scope, target, binds))
    return out


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
