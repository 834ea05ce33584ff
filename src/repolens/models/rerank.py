"""Optional cross-encoder reranker: one more vote on the top candidates.

A cross-encoder reads the query and one candidate together and scores their
relevance: better at ordering than cosine between two vectors, far too slow
for a whole index. So it sees only the first ``rerank.top_n`` candidates, and
its order joins theirs as a weighted rank vote
(:func:`repolens.search.fusion.rerank_vote`).

No reranker ships with repolens (no pip wheel carries one): it is off
(``rerank.provider = "none"``) until the user downloads the ONNX export of a
cross-encoder into a folder and sets ``rerank.provider = "local"`` and
``rerank.path``. Nothing here touches the network.

Cache: loaded cross-encoders share the process's one ONNX model cache with
the embedders (:mod:`repolens.models.onnx`: what invalidates it, and
``clear_cache()``), keyed by the files and by ``max_tokens`` and
``threads``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from repolens.errors import EmbedderError, RerankerError
from repolens.models.base import file_sha256
from repolens.models.local import find_model, find_tokenizer, read_json
from repolens.models.onnx import (
    OnnxModel,
    OnnxSpec,
    batch_feeds,
    check_files,
    default_threads,
    files_key,
    first_line,
    graph_inputs,
    load_once,
    model_digest,
    open_session,
    open_tokenizer,
)
from repolens.models.rerank_config import RerankConfig

PROBE_QUERY = "parse a URL into scheme, host and path"
PROBE_ON_TOPIC = (
    "def parse_url(url):\n"
    '    scheme, _, rest = url.partition("://")\n'
    '    host, _, path = rest.partition("/")\n'
    '    return scheme, host, "/" + path\n'
)
PROBE_OFF_TOPIC = ".button {\n  color: #ffffff;\n  background: #0366d6;\n  border-radius: 4px;\n}\n"

_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


class Reranker(Protocol):
    """What retrieval needs from a reranker (a test may pass its own)."""

    @property
    def identity(self) -> str: ...

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray: ...


def make_reranker(config: RerankConfig | Mapping[str, Any] | None = None) -> CrossEncoder | None:
    """The reranker the config names, or ``None`` for provider ``none``.

    Checks the folder and files exist and reads the model's length limit;
    loads no model. Raises RerankerError (one line, with the fix).
    """
    if config is None:
        config = RerankConfig()
    elif isinstance(config, Mapping):
        config = RerankConfig.from_mapping(config)
    if config.provider.strip().lower() == "none":
        return None
    if not config.path:
        raise RerankerError(
            "rerank.provider=local needs rerank.path, the folder holding model.onnx and tokenizer.json"
        )
    folder = _folder(config.path)
    with _as_reranker_error():
        model = find_model(folder, config.model_path, key="rerank")
        tokenizer = find_tokenizer(folder, model, config.tokenizer_path, key="rerank")
        limits = (
            read_json(folder / "config.json").get("max_position_embeddings"),
            read_json(folder / "tokenizer_config.json").get("model_max_length"),
        )
    # tokenizer_config says 1e30 for "no limit": only plausible lengths count.
    stated = [n for n in limits if type(n) is int and 0 < n < 1_000_000]
    return CrossEncoder(
        OnnxSpec(
            label="local",
            model_path=model,
            tokenizer_path=tokenizer,
            max_tokens=min([config.max_tokens, *stated]),
            threads=default_threads() if config.threads is None else config.threads,
            batch_size=config.batch_size,
            fix=f"check the reranker files in {folder} (rerank.path)",
        )
    )


def _folder(path: str) -> Path:
    folder = Path(path).expanduser()
    if folder.is_dir():
        return folder
    if not folder.exists() and _HUB_NAME.fullmatch(path):
        raise RerankerError(
            f"rerank.path={path!r} must be a local folder holding model.onnx and tokenizer.json "
            "(repolens does not download models); download it yourself, e.g. "
            f"`huggingface-cli download {path} onnx/model.onnx tokenizer.json config.json "
            f"--local-dir ~/models/{path.rsplit('/', 1)[1]}`, and point rerank.path at that folder"
        )
    raise RerankerError(
        f"rerank.path {folder} is not a folder; put the cross-encoder's model.onnx and tokenizer.json "
        "there or fix rerank.path"
    )


@dataclass(frozen=True, slots=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    inputs: tuple[tuple[str, type], ...]
    output: str
    model_sha256: str
    tokenizer_sha256: str


class CrossEncoder(OnnxModel["_Loaded"]):
    """Scores (query, text) pairs with one ONNX cross-encoder.

    Construction does no I/O; the model is loaded (hashed, opened, probed) on
    the first call that needs it. Thread-safe.
    """

    section = "rerank"
    error = RerankerError

    @staticmethod
    def _load_model(spec: OnnxSpec) -> _Loaded:
        return _load_cached(spec)

    @property
    def max_tokens(self) -> int:
        """Tokens read per pair (query, text and special tokens); longest-first
        truncation trims the longer side, as Hugging Face's tokenizers do."""
        return self._spec.max_tokens

    @property
    def identity(self) -> str:
        loaded = self._load()
        return (
            f"rerank:{self._spec.label}:sha256={loaded.model_sha256[:16]}"
            f":tok={loaded.tokenizer_sha256[:12]}:max={self._spec.max_tokens}"
        )

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts),)`` float32 relevance of each text to ``query``, in
        input order, higher is better. Scores are the model's logits (for a
        two-logit model, positive minus negative: the log-odds of "relevant"),
        comparable within one model only. No texts: ``(0,)``, nothing loaded.
        """
        texts = list(texts)
        out = np.empty(len(texts), dtype=np.float32)
        if not texts:
            return out
        loaded = self._load()
        encodings = loaded.tokenizer.encode_batch([(query, text) for text in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for b in range(0, len(order), self._spec.batch_size):
            rows = order[b : b + self._spec.batch_size]
            out[rows] = _run(loaded, self._spec, [encodings[i] for i in rows])
        return out


@contextmanager
def _as_reranker_error() -> Iterator[None]:
    """The shared embed helpers raise EmbedderError; here it is the reranker's."""
    try:
        yield
    except EmbedderError as exc:
        raise RerankerError(str(exc)) from exc


def _load_cached(spec: OnnxSpec) -> _Loaded:
    with _as_reranker_error():
        check_files(spec, "reranker ")
        key = ("rerank", *files_key(spec), spec.max_tokens, spec.threads)
    return load_once(key, lambda: _load(spec))


def _load(spec: OnnxSpec) -> _Loaded:
    with _as_reranker_error():
        model_sha, tok_sha = model_digest(spec.model_path), file_sha256(spec.tokenizer_path)
        tokenizer = open_tokenizer(spec)
        session = open_session(spec)
        inputs = graph_inputs(session, spec)
    # Without a pair template the two texts would run together unseparated.
    single, pair = tokenizer.num_special_tokens_to_add(False), tokenizer.num_special_tokens_to_add(True)
    if single and pair <= single:
        raise RerankerError(
            f"tokenizer {spec.tokenizer_path} has no template for text pairs; "
            "use the tokenizer.json that came with the cross-encoder"
        )
    tokenizer.enable_truncation(max_length=spec.max_tokens, strategy="longest_first")
    outputs = [o.name for o in session.get_outputs()]
    if "logits" not in outputs and len(outputs) != 1:
        raise RerankerError(
            f"reranker {spec.model_path} has outputs {outputs} and none is logits; "
            "export the cross-encoder with its classification head"
        )
    output = "logits" if "logits" in outputs else outputs[0]
    loaded = _Loaded(session, tokenizer, inputs, output, model_sha, tok_sha)
    _run(loaded, spec, tokenizer.encode_batch([("probe", "def probe(): return 1")]))  # shape, id range
    return loaded


def _run(loaded: _Loaded, spec: OnnxSpec, encodings: list[Any]) -> np.ndarray:
    """Relevance scores for one batch of pair encodings."""
    feeds, _ = batch_feeds(loaded.inputs, [e.ids for e in encodings], [e.type_ids for e in encodings])
    try:
        logits = np.asarray(loaded.session.run([loaded.output], feeds)[0], dtype=np.float32)
    except Exception as exc:  # onnxruntime raises its own non-RuntimeError types
        raise RerankerError(
            f"reranker {spec.model_path} failed on a batch ({first_line(exc)}); "
            f"check that {spec.tokenizer_path} belongs to this model"
        ) from exc
    n = len(encodings)
    if logits.shape in ((n,), (n, 1)):
        scores = logits.reshape(n)
    elif logits.shape == (n, 2):  # (not relevant, relevant): rank by their log-odds
        scores = logits[:, 1] - logits[:, 0]
    else:
        raise RerankerError(
            f"reranker {spec.model_path} gave outputs of shape {logits.shape} for {n} pairs; "
            "a cross-encoder gives logits of shape (pairs, 1) or (pairs, 2): is it an embedding model?"
        )
    if not np.all(np.isfinite(scores)):
        raise RerankerError(f"reranker {spec.model_path} gave non-finite scores; {spec.fix}")
    return scores


def probe(encoder: Reranker) -> tuple[float, float]:
    """(on-topic score, off-topic score) of :data:`PROBE_QUERY` against a URL
    parser and a CSS rule; a sane reranker gives on > off. Raises RerankerError."""
    on, off = encoder.score(PROBE_QUERY, [PROBE_ON_TOPIC, PROBE_OFF_TOPIC])
    return float(on), float(off)
