"""A deterministic embedder for tests: signed feature hashing of code tokens.

Each token from :func:`repolens.tokens.tokenize` lands in one of ``dim``
buckets with a sign, both taken from a blake2b digest of the token (not
Python's ``hash``, which is salted per process). Counts are damped with
``1 + log(tf)`` and the vector is L2-normalised, so texts that share words
point the same way and the same text gives the same bytes in every process.
A text with no tokens gets the zero vector.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from repolens.errors import EmbedderError
from repolens.models.base import l2_normalise
from repolens.tokens import TOKENIZER_VERSION, tokenize

DEFAULT_DIM = 256
FAKE_VERSION = 1


@lru_cache(maxsize=65_536)
def _bucket(token: str, dim: int) -> tuple[int, float]:
    """(bucket, sign) of a token. Pure, so the cache never goes stale."""
    value = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


class FakeEmbedder:
    """An :class:`~repolens.models.base.Embedder` that needs no model."""

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim < 2:
            raise EmbedderError(f"embed.dim={dim} is too small for the fake embedder; use at least 2")
        self._dim = dim

    @property
    def identity(self) -> str:
        return f"fake:hash-v{FAKE_VERSION}:tok-v{TOKENIZER_VERSION}:dim={self._dim}"

    @property
    def name(self) -> str:
        return "fake"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int:
        return 1_000_000  # reads the whole text

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token, count in Counter(tokenize(text)).items():
                bucket, sign = _bucket(token, self._dim)
                out[row, bucket] += sign * (1.0 + math.log(count))
        return l2_normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]
