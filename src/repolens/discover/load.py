"""Reading one file for indexing: the content filter, applied once per file.

Discovery decides by name and ``lstat``; :func:`load_text` reads the bytes
and skips what is binary, empty or gone since, and normalises what it keeps
(BOM, CRLF) so line numbers are the ones editors show. :func:`file_hash` is
the identity the indexer compares to know a file need not be read again.
"""

from __future__ import annotations

import codecs
import os
from typing import IO

from repolens.discover.skips import SkipReason
from repolens.hashing import blake2b
from repolens.record import Record

# A NUL byte among the first bytes means binary (text never holds one).
BINARY_SNIFF_BYTES = 8192


class LoadedText(Record):
    """A file's text as indexed.

    The UTF-8 BOM is stripped and CRLF is turned into LF, so line N is the
    N-th ``"\\n"``-separated line -- the numbering git, grep and editors show.
    A lone CR is kept as a character (split with ``text.split("\\n")``, not
    ``str.splitlines``, which also breaks on CR, form feeds and U+2028).
    ``data`` is the file's bytes as read (hash these to detect changes).
    ``replaced`` is True when invalid UTF-8 was decoded as U+FFFD.
    """

    text: str
    data: bytes
    replaced: bool = False

    @property
    def lines(self) -> int:
        """Lines as an editor numbers them (a final newline does not start another)."""
        return self.text.count("\n") + (0 if self.text.endswith("\n") else 1)


def _read_capped(fh: IO[bytes], cap: int) -> bytes:
    """The file's bytes, or at least ``cap + 1`` of them when it holds more.

    Asks for the size the file has, plus one byte to see it grew: asking
    for ``cap + 1`` bytes makes a buffer of that size (1 MiB) for every
    file, which was most of the cost of reading a small one (flask's 237
    files: 14 ms against 6). A file that grew since is read on to the cap.
    """
    size = os.fstat(fh.fileno()).st_size
    data = fh.read(min(size, cap) + 1)
    if size < len(data) <= cap:
        data += fh.read(cap + 1 - len(data))
    return data


def file_hash(data: bytes) -> str:
    """A file's content identity: equal hashes mean the index need not read it again."""
    return blake2b(data, digest_size=16).hexdigest()


def load_text(path: str | os.PathLike[str], *, max_file_bytes: int | None = None) -> LoadedText | SkipReason:
    """Read one file for indexing, or say why it is skipped.

    NUL in the first 8 KiB -> BINARY; nothing but whitespace -> EMPTY; gone
    -> MISSING; permission denied -> UNREADABLE; more than ``max_file_bytes``
    -> TOO_LARGE (discovery already applied the cap by size; pass
    ``Discovery.max_file_bytes`` to also catch files that grew since, None
    reads the whole file). Invalid UTF-8 is decoded with replacement
    characters and flagged (count it as ``DECODED_WITH_REPLACEMENT``). Other
    OS errors propagate.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read() if max_file_bytes is None else _read_capped(fh, max_file_bytes)
    except (FileNotFoundError, NotADirectoryError):
        return SkipReason.MISSING
    except (PermissionError, IsADirectoryError):
        return SkipReason.UNREADABLE
    if max_file_bytes is not None and len(data) > max_file_bytes:
        return SkipReason.TOO_LARGE
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SkipReason.BINARY
    body = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
    replaced = False
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", errors="replace")
        replaced = True
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if not text.strip():
        return SkipReason.EMPTY
    return LoadedText(text, data, replaced)
