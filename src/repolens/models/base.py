"""The ``Embedder`` protocol and helpers shared by the providers.

An embedder turns texts into L2-normalised float32 vectors. Documents and
queries may be embedded differently (many retrieval models want a prefix
such as ``"search_query: "`` on one side only), so there are two methods.

``identity`` names everything that changes the vectors: provider, model (by
content hash where there is a file), dimension, pooling, truncation length and
prefixes. The index records it; a caller must refuse to search an index whose
identity differs from the embedder's, because vectors from two models (or
from one model with other prefixes) are not comparable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from repolens.errors import EmbedderError


@runtime_checkable
class Embedder(Protocol):
    """What the index and the retriever need from an embedding model."""

    @property
    def identity(self) -> str:
        """Provider, model, dim, pooling, truncation and prefix settings, as one
        string. Equal identities mean comparable vectors."""
        ...

    @property
    def name(self) -> str:
        """The model as a person calls it (``all-MiniLM-L6-v2-int8``), for
        messages; ``identity`` is what tells two vector spaces apart."""
        ...

    @property
    def dim(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    @property
    def max_tokens(self) -> int:
        """Model tokens (special tokens and prefix included) read per text; the
        rest of a longer text is ignored."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, each row L2-normalised, rows in input
        order. An empty list gives a ``(0, dim)`` array."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalised, with the query-side prefix."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32. An all-zero row stays zero
    (it has no direction; its cosine with anything is 0)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    except OSError as exc:
        raise EmbedderError(f"cannot read model file {path}: {exc.strerror or exc}") from exc
    return digest.hexdigest()


def short_hash(text: str) -> str:
    """8 hex digits naming a string (a prefix) inside an identity."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def prefix_tag(query_prefix: str, document_prefix: str) -> str:
    """The identity part for prefixes: ``q=-`` when empty, else a short hash."""
    q = short_hash(query_prefix) if query_prefix else "-"
    d = short_hash(document_prefix) if document_prefix else "-"
    return f"q={q}:d={d}"
