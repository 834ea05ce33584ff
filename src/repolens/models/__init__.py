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

Importing this package loads neither onnxruntime nor a model.
"""

from repolens.models.base import Embedder, l2_normalise
from repolens.models.factory import PROVIDERS, EmbedConfig, make_embedder
from repolens.models.onnx import clear_cache

__all__ = ["PROVIDERS", "EmbedConfig", "Embedder", "clear_cache", "l2_normalise", "make_embedder"]
