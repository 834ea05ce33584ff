"""A file's references as stored, the same in every backend.

A file's references (:class:`repolens.chunking.refs.Ref`) are kept as one
compressed blob per file (``refs``: one line per reference, its fields
tab-separated), and ``ref_names`` holds each distinct (name, file) pair, so
a lookup by name reads the blobs of the files that use it and nothing else.
One row per reference would cost ~50 bytes each (a million-line corpus holds
1.3 million); the blob costs ~6, a name pair ~20 per distinct name a file uses.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence

from repolens.chunking.refs import Ref
from repolens.store.records import PackedRefs, RefRow

_CLEAN = str.maketrans({"\t": " ", "\n": " "})


def pack_refs(refs: Sequence[Ref]) -> bytes:
    """The blob of a file's references (b"" for none)."""
    if not refs:
        return b""
    text = "\n".join(
        f"{r.name}\t{r.line}\t{r.kind}\t{r.scope.translate(_CLEAN)}\t{r.target}\t{r.binds}" for r in refs
    )
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def pack(refs: Sequence[Ref]) -> PackedRefs | None:
    """What the store writes for a file's ``refs`` (None for none)."""
    return PackedRefs(pack_refs(refs), tuple(ref_names(refs))) if refs else None


def ref_names(refs: Iterable[Ref]) -> list[str]:
    """The distinct names ``refs`` use, sorted (a file's ``ref_names`` rows)."""
    return sorted({r.name for r in refs})


def unpack_refs(blob: bytes, path: str, language: str, names: frozenset[str] | None = None) -> list[RefRow]:
    """The references of one file's blob, those named one of ``names`` (None: all)."""
    if not blob:
        return []
    text = zlib.decompress(blob).decode("utf-8", "surrogatepass")
    if names is None:
        lines: Iterable[str] = text.split("\n")
    else:
        pattern = "|".join(re.escape(n) for n in sorted(names))
        lines = re.findall(rf"^(?:{pattern})\t.*$", text, re.MULTILINE)
    out = []
    for line in lines:
        name, number, kind, scope, target, binds = line.split("\t")
        out.append(RefRow(path, language, name, int(number), kind, scope, target, binds))
    return out


def as_refs(rows: Iterable[RefRow]) -> list[Ref]:
    """Stored rows back as references (a sibling branch's, copied)."""
    return [Ref(r.name, r.line, r.kind, r.scope, r.target, r.binds) for r in rows]
