"""A model the user put in a local folder: an ONNX graph plus ``tokenizer.json``.

Typical source: a Hugging Face repository with an ``onnx/`` export, downloaded
by the user (repolens never downloads). Settings are resolved in this order,
first found wins:

1. explicit config values (``pooling``, ``max_tokens``, prefixes);
2. the family preset named by ``family`` (:data:`PRESETS`);
3. the folder's own sentence-transformers files, when present:
   ``1_Pooling/config.json`` (pooling), ``sentence_bert_config.json``
   (``max_seq_length``), ``config_sentence_transformers.json`` (``prompts``);
4. defaults: ``auto`` pooling (the graph's ``sentence_embedding`` output if it
   has one, else mean), 512 tokens, no prefixes.

A folder's ``max_seq_length`` is capped at 512 unless ``max_tokens`` is given:
attention cost grows with the square of the length, and long-context code
models (8192) would crawl on a laptop CPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repolens.errors import EmbedderError
from repolens.models.onnx import POOLINGS, OnnxEmbedder, OnnxSpec, default_threads

DEFAULT_MAX_TOKENS = 512
DEFAULT_BATCH_SIZE = 16

# Where an exported graph usually sits in a downloaded model folder.
MODEL_CANDIDATES = ("model.onnx", "onnx/model.onnx")


@dataclass(frozen=True, slots=True)
class Preset:
    """What a model family needs: its pooling and its query/document prefixes."""

    pooling: str
    query_prefix: str = ""
    document_prefix: str = ""


_BGE_QUERY = "Represent this sentence for searching relevant passages: "
_CODE_QUERY = "Represent this query for searching relevant code: "

PRESETS: dict[str, Preset] = {
    # sentence-transformers all-* / multi-qa-* MiniLM and mpnet models.
    "sentence-transformers": Preset("mean"),
    # nomic-ai/CodeRankEmbed: CLS pooling, instruction on queries only.
    "coderankembed": Preset("cls", query_prefix=_CODE_QUERY),
    # nomic-embed-text v1 / v1.5: task prefixes on both sides.
    "nomic": Preset("mean", query_prefix="search_query: ", document_prefix="search_document: "),
    # BAAI bge-*-en-v1.5: CLS pooling, retrieval instruction on queries.
    "bge": Preset("cls", query_prefix=_BGE_QUERY),
    # Snowflake arctic-embed: same recipe as bge.
    "arctic": Preset("cls", query_prefix=_BGE_QUERY),
    # intfloat e5 / multilingual-e5.
    "e5": Preset("mean", query_prefix="query: ", document_prefix="passage: "),
    # thenlper gte / Alibaba gte-*: no prefixes.
    "gte": Preset("mean"),
    # jinaai jina-embeddings-v2-base-code: no prefixes.
    "jina-code": Preset("mean"),
}


def local_embedder(
    path: str | Path,
    *,
    family: str | None = None,
    model_path: str | Path | None = None,
    tokenizer_path: str | Path | None = None,
    pooling: str | None = None,
    max_tokens: int | None = None,
    query_prefix: str | None = None,
    document_prefix: str | None = None,
    threads: int | None = None,
    batch_size: int | None = None,
) -> OnnxEmbedder:
    """An embedder over the model in folder ``path``. Checks that the files
    exist and the settings are valid; loading waits for first use.

    ``model_path``/``tokenizer_path`` may be relative to ``path``.
    Raises EmbedderError naming the missing file or the bad setting.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise EmbedderError(
            f"embed.path {folder} is not a folder; put model.onnx and tokenizer.json there or fix embed.path"
        )
    preset = _preset(family)
    folder_settings = read_sentence_transformers_config(folder)

    model = find_model(folder, model_path)
    tokenizer = find_tokenizer(folder, model, tokenizer_path)

    chosen_pooling = (
        pooling or (preset.pooling if preset else None) or folder_settings.get("pooling") or "auto"
    )
    if chosen_pooling not in (*POOLINGS, "auto"):
        raise EmbedderError(
            f"embed.pooling={chosen_pooling!r} is unknown; use one of {', '.join(POOLINGS)}, auto"
        )

    def pick(explicit: str | None, from_preset: str, key: str) -> str:
        if explicit is not None:
            return explicit
        if preset is not None:
            return from_preset
        return folder_settings.get(key, "")

    return OnnxEmbedder(
        OnnxSpec(
            label="local",
            name=f"{model.name} in {folder}",
            model_path=model,
            tokenizer_path=tokenizer,
            pooling=chosen_pooling,
            max_tokens=max_tokens
            or min(folder_settings.get("max_tokens", DEFAULT_MAX_TOKENS), DEFAULT_MAX_TOKENS),
            query_prefix=pick(query_prefix, preset.query_prefix if preset else "", "query_prefix"),
            document_prefix=pick(
                document_prefix, preset.document_prefix if preset else "", "document_prefix"
            ),
            threads=default_threads() if threads is None else threads,
            batch_size=batch_size or DEFAULT_BATCH_SIZE,
            fix=f"check the model files in {folder} (embed.path)",
        )
    )


def _preset(family: str | None) -> Preset | None:
    if family is None:
        return None
    key = family.strip().lower()
    if key not in PRESETS:
        raise EmbedderError(f"embed.family={family!r} is unknown; use one of {', '.join(sorted(PRESETS))}")
    return PRESETS[key]


def _resolve(folder: Path, path: str | Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else folder / p


def find_model(folder: Path, model_path: str | Path | None, key: str = "embed") -> Path:
    """``model_path`` (relative to ``folder`` unless absolute), else the first
    of :data:`MODEL_CANDIDATES` in ``folder``. ``key`` is the config section
    that the messages name (``embed.model_path``, ``rerank.model_path``)."""
    if model_path:
        path = _resolve(folder, model_path)
        if not path.is_file():
            raise EmbedderError(f"{key}.model_path {path} does not exist; point it at the model's .onnx file")
        return path
    for name in MODEL_CANDIDATES:
        if (folder / name).is_file():
            return folder / name
    found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.onnx"))
    if found:
        raise EmbedderError(
            f"no model.onnx in {folder}, but found {', '.join(found[:5])}; "
            f"set {key}.model_path to one of them"
        )
    raise EmbedderError(f"no .onnx model in {folder}; download the model's ONNX export there (model.onnx)")


def find_tokenizer(
    folder: Path, model: Path, tokenizer_path: str | Path | None = None, key: str = "embed"
) -> Path:
    """``tokenizer_path`` (relative to ``folder`` unless absolute), else
    ``tokenizer.json`` in ``folder`` or beside the model."""
    if tokenizer_path:
        path = _resolve(folder, tokenizer_path)
        if not path.is_file():
            raise EmbedderError(
                f"{key}.tokenizer_path {path} does not exist; point it at the model's tokenizer.json"
            )
        return path
    for candidate in (folder / "tokenizer.json", model.parent / "tokenizer.json"):
        if candidate.is_file():
            return candidate
    raise EmbedderError(
        f"no tokenizer.json in {folder}; "
        f"download the model's tokenizer.json there or set {key}.tokenizer_path"
    )


def read_sentence_transformers_config(folder: Path) -> dict[str, Any]:
    """Pooling, max length and prompts from a sentence-transformers folder
    layout; keys ``pooling``, ``max_tokens``, ``query_prefix``,
    ``document_prefix``, each only when the folder states it."""
    settings: dict[str, Any] = {}
    pooling_cfg = read_json(folder / "1_Pooling" / "config.json")
    modes = {
        "pooling_mode_cls_token": "cls",
        "pooling_mode_mean_tokens": "mean",
        "pooling_mode_lasttoken": "last",
    }
    for key, mode in modes.items():
        if pooling_cfg.get(key) is True:
            settings["pooling"] = mode
            break
    max_len = read_json(folder / "sentence_bert_config.json").get("max_seq_length")
    if isinstance(max_len, int) and max_len > 0:
        settings["max_tokens"] = max_len
    prompts = read_json(folder / "config_sentence_transformers.json").get("prompts") or {}
    if isinstance(prompts, dict):
        if isinstance(prompts.get("query"), str):
            settings["query_prefix"] = prompts["query"]
        for key in ("document", "passage", "corpus"):
            if isinstance(prompts.get(key), str):
                settings["document_prefix"] = prompts[key]
                break
    return settings


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; ``{}`` when the file is absent or not an object."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbedderError(f"cannot read {path} ({exc}); fix or delete it") from exc
    return data if isinstance(data, dict) else {}
