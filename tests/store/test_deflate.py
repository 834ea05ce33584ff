"""The stores' deflate reads what zlib wrote (indexes built before it) and
writes what zlib reads; a damaged stream raises an error the stores map to
"damaged", whichever implementation read it."""

import random
import zlib

import pytest

from repolens.store import deflate
from repolens.store.chunk_rows import compress, decompress

TEXTS = [
    "",
    "def parse(url):\n    return url.split('/')\n" * 40,
    "lone surrogate \udcff and ünïcödé",
    "".join(random.Random(7).choice("abc xyz\n") for _ in range(20_000)),
]


@pytest.mark.parametrize("text", TEXTS)
def test_chunk_text_round_trips_and_reads_as_zlib_wrote_it(text):
    assert decompress(compress(text)) == text
    raw = text.encode("utf-8", "surrogatepass")
    assert zlib.decompress(compress(text)) == raw  # an older repolens reads it
    assert decompress(zlib.compress(raw, 1, wbits=13)) == text  # an index zlib wrote
    for kind in ("fast", "small"):
        assert zlib.decompress(deflate.compress(raw, kind)) == raw


def test_a_damaged_stream_raises_one_of_the_errors_the_stores_map():
    blob = bytearray(compress(TEXTS[1]))
    blob[len(blob) // 2 :] = b"\xff" * (len(blob) - len(blob) // 2)
    with pytest.raises(deflate.ERRORS):
        decompress(bytes(blob))


def test_crc32_is_zlibs():
    data = TEXTS[3].encode()
    assert deflate.crc32(data) == zlib.crc32(data)
    assert deflate.crc32(memoryview(data)[:100]) == zlib.crc32(data[:100])
