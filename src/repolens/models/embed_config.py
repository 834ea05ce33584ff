"""The embedder's settings, apart from the embedder: reading them must not
load numpy or onnxruntime (the indexer reads them before it knows whether
vectors are wanted). Settings reads no model module: each model's settings
type lives beside the model, and reads its section through
:func:`repolens.settings.load_section`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repolens.errors import EmbedderError
from repolens.settings import load_section, section_config


@dataclass(frozen=True, slots=True)
class EmbedConfig:
    """Embedding settings; each field is config key ``embed.<field>``.

    ``None`` means "the provider's default". Which fields each provider reads:

    - ``onnx`` (default; bundled all-MiniLM-L6-v2 int8): ``max_tokens``
      (8..256, default 128), ``threads``, ``batch_size``, ``model_path``
      (another copy of the pinned model file).
    - ``local`` (ONNX model folder): ``path`` (required), ``family``,
      ``model_path``, ``tokenizer_path``, ``pooling``, ``max_tokens``,
      ``query_prefix``, ``document_prefix``, ``threads``, ``batch_size``.
    - ``openai`` (HTTP endpoint): ``base_url`` and ``model`` (required),
      ``api_key_env``, ``family`` (prefixes only), ``query_prefix``,
      ``document_prefix``, ``max_tokens``, ``batch_size``, ``timeout``, ``dim``.
    - ``fake`` (tests): ``dim`` (default 256).
    - ``none``: no dense vectors; ``make_embedder`` returns ``None``.
    """

    provider: str = "onnx"
    path: str | None = None
    model_path: str | None = None
    tokenizer_path: str | None = None
    family: str | None = None
    pooling: str | None = None
    max_tokens: int | None = None
    query_prefix: str | None = None
    document_prefix: str | None = None
    threads: int | None = None
    batch_size: int | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout: float | None = None
    dim: int | None = None

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> EmbedConfig:
        """Build from a dict (config file, environment): see :func:`repolens.settings.section_config`."""
        return section_config(cls, "embed", values, EmbedderError)


def load_embed_config(root: Path | None = None) -> EmbedConfig:
    """Embedding settings: the ``[embed]`` table of the config file (or
    ``[repolens.embed]``), then ``REPOLENS_EMBED_<FIELD>`` variables."""
    return load_section(EmbedConfig, root, "embed", EmbedderError)
