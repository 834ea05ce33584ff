"""The models: embedders for the dense leg and the cross-encoder for the rerank leg.

An embedder turns text into L2-normalised float32 vectors, for chunks when
indexing and for queries when searching; the cross-encoder scores (query,
chunk) pairs (:mod:`repolens.models.rerank`). Both run ONNX graphs through
one session cache (:mod:`repolens.models.onnx`).

Embedding providers (chosen by ``embed.provider``):

- ``onnx`` (default): all-MiniLM-L6-v2 int8 on onnxruntime, installed by pip,
  never downloaded (:mod:`repolens.models.bundled`);
- ``local``: an ONNX model + ``tokenizer.json`` from a folder, with family
  presets for pooling and prefixes (:mod:`repolens.models.local`);
- ``openai``: an OpenAI-compatible ``/embeddings`` endpoint
  (:mod:`repolens.models.remote`);
- ``fake``: deterministic feature hashing, for tests (:mod:`repolens.models.fake`);
- ``none``: no dense leg.

Importing this package loads not even numpy: its names are resolved on first
use (PEP 562), so a submodule that needs none of them (the reranker's
settings, read by every search) stays cheap to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repolens.models.base import Embedder, l2_normalise
    from repolens.models.embed_config import EmbedConfig
    from repolens.models.factory import PROVIDERS, make_embedder
    from repolens.models.onnx import clear_cache

_HOMES = {
    "Embedder": "base",
    "l2_normalise": "base",
    "PROVIDERS": "factory",
    "EmbedConfig": "embed_config",
    "make_embedder": "factory",
    "clear_cache": "onnx",
}

__all__ = ["PROVIDERS", "EmbedConfig", "Embedder", "clear_cache", "l2_normalise", "make_embedder"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
