"""Pick and build an embedder from configuration.

``make_embedder`` is cheap: it validates settings and checks that files exist,
but loads no model. Models load on first use and are cached per process (see
:mod:`repolens.models.onnx` for what invalidates that cache).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from repolens.errors import EmbedderError
from repolens.models.base import Embedder
from repolens.models.embed_config import EmbedConfig
from repolens.settings import STAGE_CHOICES

PROVIDERS = STAGE_CHOICES["embed.provider"]


def make_embedder(config: EmbedConfig | Mapping[str, Any] | None = None) -> Embedder | None:
    """The embedder the config names, or ``None`` for provider ``none``.

    Raises EmbedderError (one line, with the fix) for an unknown provider,
    a missing required setting, a setting the provider would ignore although
    it changes vectors, or a model folder/file that does not exist.
    """
    if config is None:
        config = EmbedConfig()
    elif isinstance(config, Mapping):
        config = EmbedConfig.from_mapping(config)
    provider = (config.provider or "onnx").strip().lower()
    if provider not in PROVIDERS:
        raise EmbedderError(
            f"embed.provider={config.provider!r} is unknown; use one of {', '.join(PROVIDERS)}"
        )
    if provider == "none":
        return None
    if provider == "fake":
        from repolens.models.fake import DEFAULT_DIM, FakeEmbedder

        return FakeEmbedder(config.dim or DEFAULT_DIM)
    if provider == "onnx":
        return _bundled(config)
    if provider == "local":
        return _local(config)
    return _openai(config)


def _bundled(config: EmbedConfig) -> Embedder:
    from repolens.models.bundled import bundled_embedder

    for name in ("path", "tokenizer_path", "family", "pooling", "query_prefix", "document_prefix", "dim"):
        if getattr(config, name) is not None:
            raise EmbedderError(
                f"embed.{name} does not apply to the bundled model (embed.provider=onnx); "
                "remove it, or set embed.provider=local for your own model"
            )
    return bundled_embedder(
        max_tokens=config.max_tokens,
        threads=config.threads,
        batch_size=config.batch_size,
        model_path=Path(config.model_path).expanduser() if config.model_path else None,
    )


def _local(config: EmbedConfig) -> Embedder:
    from repolens.models.local import local_embedder

    if not config.path:
        raise EmbedderError(
            "embed.provider=local needs embed.path, the folder holding model.onnx and tokenizer.json"
        )
    return local_embedder(
        config.path,
        family=config.family,
        model_path=config.model_path,
        tokenizer_path=config.tokenizer_path,
        pooling=config.pooling,
        max_tokens=config.max_tokens,
        query_prefix=config.query_prefix,
        document_prefix=config.document_prefix,
        threads=config.threads,
        batch_size=config.batch_size,
    )


def _openai(config: EmbedConfig) -> Embedder:
    from repolens.models.local import PRESETS
    from repolens.models.remote import DEFAULT_BATCH_SIZE, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT, OpenAIEmbedder

    if not config.base_url:
        raise EmbedderError(
            "embed.provider=openai needs embed.base_url, e.g. http://127.0.0.1:8080/v1 (llama.cpp) "
            "or http://127.0.0.1:11434/v1 (Ollama)"
        )
    if not config.model:
        raise EmbedderError("embed.provider=openai needs embed.model, the model name the server serves")
    query_prefix, document_prefix = "", ""
    if config.family is not None:
        family = config.family.strip().lower()
        if family not in PRESETS:
            raise EmbedderError(
                f"embed.family={config.family!r} is unknown; use one of {', '.join(sorted(PRESETS))}"
            )
        query_prefix, document_prefix = PRESETS[family].query_prefix, PRESETS[family].document_prefix
    return OpenAIEmbedder(
        config.base_url,
        config.model,
        api_key_env=config.api_key_env,
        dim=config.dim,
        max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
        batch_size=config.batch_size or DEFAULT_BATCH_SIZE,
        timeout=config.timeout or DEFAULT_TIMEOUT,
        query_prefix=query_prefix if config.query_prefix is None else config.query_prefix,
        document_prefix=document_prefix if config.document_prefix is None else config.document_prefix,
    )
