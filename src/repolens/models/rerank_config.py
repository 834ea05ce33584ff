"""The reranker's settings, apart from the reranker: reading them must not
load numpy or onnxruntime, since every search asks whether a reranker is
configured (almost always: no) before it may load one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repolens.errors import RerankerError
from repolens.settings import STAGE_CHOICES, check_stage_value, load_section, section_config

PROVIDERS = STAGE_CHOICES["rerank.provider"]


@dataclass(frozen=True, slots=True)
class RerankConfig:
    """Reranker settings; each field is config key ``rerank.<field>``.

    ``provider``: ``none`` (default, no reranker) or ``local``. ``path``: the
    folder holding ``model.onnx`` (or ``onnx/model.onnx``) and
    ``tokenizer.json``; ``model_path``/``tokenizer_path`` may name other files,
    relative to it. ``max_tokens`` (8.., default 512) bounds query + text and
    is lowered to the folder's ``config.json`` ``max_position_embeddings`` or
    ``tokenizer_config.json`` ``model_max_length``. ``top_n`` (1..1000):
    candidates reranked. ``weight`` (0..100): the reranker's vote against the
    current order's 1. ``threads``: onnxruntime threads (default: every core).
    ``batch_size`` (1..): pairs per model run.
    """

    provider: str = "none"
    path: str | None = None
    model_path: str | None = None
    tokenizer_path: str | None = None
    max_tokens: int = 512
    top_n: int = 30
    weight: float = 1.0
    threads: int | None = None
    batch_size: int = 16

    def __post_init__(self) -> None:
        if self.provider.strip().lower() not in PROVIDERS:
            known = ", ".join(PROVIDERS)
            raise RerankerError(f"rerank.provider={self.provider!r} is unknown; use one of {known}")
        for key in ("max_tokens", "top_n", "weight", "threads", "batch_size"):  # settings.STAGE_BOUNDS
            check_stage_value("rerank", key, getattr(self, key), error=RerankerError)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RerankConfig:
        """Build from a dict (config file, environment): see :func:`repolens.settings.section_config`."""
        return section_config(cls, "rerank", values, RerankerError)


def load_rerank_config(root: Path | None = None) -> RerankConfig:
    """Reranker settings: the ``[rerank]`` table of the config file (or
    ``[repolens.rerank]``), then ``REPOLENS_RERANK_<FIELD>`` variables."""
    return load_section(RerankConfig, root, "rerank", RerankerError)
