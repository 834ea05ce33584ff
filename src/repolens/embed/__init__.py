"""Embedding: text -> L2-normalised float32 vectors for the dense retrieval leg.

Providers (chosen by ``embed.provider``):

- ``onnx`` (default): all-MiniLM-L6-v2 int8 on onnxruntime, installed by pip,
  never downloaded (:mod:`repolens.embed.bundled`);
- ``local``: an ONNX model + ``tokenizer.json`` from a folder, with family
  presets for pooling and prefixes (:mod:`repolens.embed.local`);
- ``openai``: an OpenAI-compatible ``/embeddings`` endpoint
  (:mod:`repolens.embed.remote`);
- ``fake``: deterministic feature hashing, for tests (:mod:`repolens.embed.fake`);
- ``none``: no dense leg.

Importing this package loads neither onnxruntime nor a model.
"""

from repolens.embed.base import Embedder, l2_normalise
from repolens.embed.factory import PROVIDERS, EmbedConfig, make_embedder
from repolens.embed.onnxmodel import clear_cache

__all__ = ["PROVIDERS", "EmbedConfig", "Embedder", "clear_cache", "l2_normalise", "make_embedder"]
