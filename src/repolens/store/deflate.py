"""Deflate for what the stores keep compressed: chunk text and reference rows.

ISA-L's implementation (the ``isal`` package) when it is installed, else the
standard library's zlib: both write and read the same zlib streams, so an
index written by one reads back with the other. ISA-L's is the faster by
far on x86-64 and ARM (sphinx's chunks: ~43 -> ~11 us to compress one at
level 1, ~8.7 -> ~5.5 us to read one back; a search reads ~100, an index
build writes every chunk once; docs/benchmarks.md, "Deflate"). It is
imported when first used: a command that reads no chunk text (``repolens
symbols``) does without it.

Levels differ between the two (ISA-L has 0-3), so callers ask for a kind of
compression, not a level: ``fast`` for chunk text (read back by every
search), ``small`` for reference rows (written once a file, read by the
reference tools).
"""

from __future__ import annotations

import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

# What reading a damaged stream raises, from either implementation: zlib's
# error, and ISA-L's (a class of its own), named once it is imported.
ERRORS: tuple[type[Exception], ...] = (zlib.error,)

_impl: ModuleType | None = None
# ISA-L's level 1 compresses chunk text as zlib's 1 does (~1% smaller); its
# level 2 reference rows 4% larger than zlib's 3 in a third of the time.
_ISAL = {"fast": {"level": 1}, "small": {"level": 2}}
# zlib's compressor takes an 8 KB window for chunk text (at most 6,000
# characters): its smaller state is allocated from memory the process keeps,
# where the full window's was returned to the system and faulted back in for
# every chunk, which doubled the CPU of compressing (docs/benchmarks.md, issue 15).
_ZLIB = {"fast": {"level": 1, "wbits": 13}, "small": {"level": 3}}
_options = _ZLIB


def _implementation() -> ModuleType:
    global _impl, _options, ERRORS
    if _impl is None:
        try:
            from isal import isal_zlib
        except ImportError:  # a platform without its wheel: the same streams, slower
            _impl = zlib
        else:
            _impl, _options = isal_zlib, _ISAL
            ERRORS = (zlib.error, isal_zlib.error)
    return _impl


def compress(data: bytes, kind: str = "fast") -> bytes:
    """``data`` as a zlib stream, compressed as ``kind`` (``fast`` or ``small``) says."""
    impl = _impl or _implementation()
    return impl.compress(data, **_options[kind])


def decompress(blob: bytes) -> bytes:
    """The bytes of a zlib stream written by either implementation."""
    return (_impl or _implementation()).decompress(blob)


def crc32(data: bytes | memoryview) -> int:
    """The CRC-32 zlib computes (ISA-L's ~5x faster)."""
    return (_impl or _implementation()).crc32(data)
