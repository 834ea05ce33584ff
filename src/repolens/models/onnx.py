"""Run a transformer encoder exported to ONNX, on CPU, with ``onnxruntime``.

One class, :class:`OnnxEmbedder`, serves both the bundled default model and a
model from a local folder; an :class:`OnnxSpec` says which files, how to pool
and what to prefix. Nothing here touches the network: the session and the
tokenizer are read from files only.

Batching: texts are tokenized once, sorted by token count and run in batches
padded to the longest member, so short chunks do not pay for long ones. The
output rows are put back in input order.

Cache: every ONNX model the process loads, embedder or cross-encoder, is
kept in one cache here (:func:`load_once`), keyed by what it was loaded
from (:func:`files_key`: the graph's, its external data's and the
tokenizer's resolved paths, sizes and mtimes) and by every setting that
shapes the session (truncation length, threads, pooling, pins). A file
replaced on disk therefore gets a new entry the next time a model is
*made*; a model object that has loaded keeps what it loaded for life
(:class:`Lazy`), so its ``identity`` always describes its output.
``clear_cache()`` drops every entry.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from repolens.errors import EmbedderError, RepolensError
from repolens.models.base import file_sha256, l2_normalise, prefix_tag

POOLINGS = ("mean", "cls", "last")
"""``mean``: average of token vectors under the attention mask (sentence-
transformers' default); ``cls``: the first token's vector (bge, arctic,
CodeRankEmbed); ``last``: the last real token's vector (decoder models)."""

# Texts tokenized and length-sorted together. Bounds the memory held in
# encodings for a huge call while still sorting well enough to cut padding.
SORT_WINDOW = 4096

# Graph inputs we know how to fill. Anything else is a model we cannot run.
_KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "position_ids")
_INT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}


@dataclass(frozen=True, slots=True)
class OnnxSpec:
    """Which files to load and how to turn their output into vectors.

    ``pooling`` is one of :data:`POOLINGS`, or ``auto``: use a pooled graph
    output (``sentence_embedding``) if the graph has one, else ``mean``.
    ``model_sha256``/``tokenizer_sha256``/``dim``, when set, are pins: a file
    or graph that does not match is refused with ``fix`` (``tokenizer_fix``
    for the tokenizer, when set) as the remedy.
    ``label`` starts the identity (``onnx:all-MiniLM-L6-v2-int8``, ``local``);
    ``name`` is what messages call the model (default: the label).
    ``threads`` 0 lets onnxruntime choose (one per physical core). ``spin``
    lets idle pool threads busy-wait for work: no faster on an idle 2-core
    box, and a third slower when another process wants a core
    (bench.probes.embed_throughput --busy 1), so it is off by default.
    """

    label: str
    model_path: Path
    tokenizer_path: Path
    pooling: str = "mean"
    max_tokens: int = 256
    query_prefix: str = ""
    document_prefix: str = ""
    threads: int = 0
    spin: bool = False
    batch_size: int = 32
    model_sha256: str | None = None
    tokenizer_sha256: str | None = None
    dim: int | None = None
    fix: str = "check the model files"
    tokenizer_fix: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    inputs: tuple[tuple[str, type], ...]  # (graph input name, integer dtype)
    output: str
    pooling: str  # effective: mean | cls | last | model
    dim: int
    model_sha256: str
    tokenizer_sha256: str


_LOADED: dict[tuple, Any] = {}
_LOADED_LOCK = threading.Lock()

T = TypeVar("T")


def clear_cache() -> None:
    """Forget every loaded model (tests; a long-lived process after an upgrade)."""
    with _LOADED_LOCK:
        _LOADED.clear()


def load_once(key: tuple, load: Callable[[], T]) -> T:
    """The model cached under ``key``, loaded by ``load`` the first time.

    Two threads may both load on a miss (loading holds no lock, so one slow
    model does not stall the others); the first to finish is kept and both
    get it. ``key`` starts with what kind of model it is, so an embedder and
    a cross-encoder over the same files do not collide.
    """
    with _LOADED_LOCK:
        hit = _LOADED.get(key)
    if hit is not None:
        return hit
    loaded = load()
    with _LOADED_LOCK:
        return _LOADED.setdefault(key, loaded)


class Lazy(Generic[T]):
    """A value made on first use and then kept: what a model object loaded.

    Thread-safe; ``make`` runs at most once per object (unless it raises,
    then the next call tries again).
    """

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._value: T | None = None
        self._lock = threading.Lock()

    def __call__(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._make()
        return self._value


def check_files(spec: OnnxSpec, owner: str = "") -> None:
    """Refuse a spec whose graph or tokenizer file is missing, naming it
    (``owner`` starts the message: ``"reranker "``)."""
    for path, what in ((spec.model_path, "model"), (spec.tokenizer_path, "tokenizer")):
        if not path.is_file():
            raise EmbedderError(f"{owner}{what} file {path} does not exist; {spec.fix}")


def files_key(spec: OnnxSpec) -> tuple:
    """What a model was loaded from: (path, size, mtime) of the graph, the
    tokenizer and the graph's external data files."""
    return (
        stat_key(spec.model_path),
        stat_key(spec.tokenizer_path),
        tuple(stat_key(p) for p in external_data_files(spec.model_path)),
    )


class OnnxModel(Generic[T]):
    """What an embedder and a cross-encoder share: a checked :class:`OnnxSpec`
    and the model it names, loaded on first use (through the one cache) and
    then kept. Subclasses name their config ``section`` and ``error`` class
    and how they load (``_load_model``). Construction does no I/O."""

    section: ClassVar[str]
    error: ClassVar[type[RepolensError]]

    def __init__(self, spec: OnnxSpec) -> None:
        if spec.max_tokens < 8:
            raise self.error(f"{self.section}.max_tokens={spec.max_tokens} is too small; use at least 8")
        if spec.batch_size < 1:
            raise self.error(f"{self.section}.batch_size={spec.batch_size} must be at least 1")
        self._spec = spec
        self._load: Lazy[T] = Lazy(lambda: self._load_model(spec))

    @staticmethod
    def _load_model(spec: OnnxSpec) -> T:
        raise NotImplementedError

    @property
    def spec(self) -> OnnxSpec:
        return self._spec

    def load(self) -> None:
        """Load now rather than on first use (to fail early, or to time it)."""
        self._load()


class OnnxEmbedder(OnnxModel["_Loaded"]):
    """An :class:`~repolens.models.base.Embedder` over one ONNX encoder.

    The model is loaded (hashed, checked, opened) on the first call that
    needs it; ``identity`` needs it too unless the spec pins hash and dim,
    as the bundled model does. Thread-safe.
    """

    section = "embed"
    error = EmbedderError

    @staticmethod
    def _load_model(spec: OnnxSpec) -> _Loaded:
        return _load_cached(spec)

    @property
    def name(self) -> str:
        return self._spec.name or self._spec.label

    @property
    def identity(self) -> str:
        s = self._spec
        if s.model_sha256 and s.tokenizer_sha256 and s.dim:
            model_sha, tok_sha, dim = s.model_sha256, s.tokenizer_sha256, s.dim
            pooling = s.pooling
        else:
            loaded = self._load()
            model_sha, tok_sha, dim = loaded.model_sha256, loaded.tokenizer_sha256, loaded.dim
            pooling = loaded.pooling
        return (
            f"{s.label}:sha256={model_sha[:16]}:tok={tok_sha[:12]}:dim={dim}"
            f":pool={pooling}:max={s.max_tokens}:{prefix_tag(s.query_prefix, s.document_prefix)}"
        )

    @property
    def dim(self) -> int:
        return self._spec.dim or self._load().dim

    @property
    def max_tokens(self) -> int:
        return self._spec.max_tokens

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(list(texts), self._spec.document_prefix)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], self._spec.query_prefix)[0]

    # -- internals ---------------------------------------------------------

    def _embed(self, texts: list[str], prefix: str) -> np.ndarray:
        loaded = self._load()
        out = np.empty((len(texts), loaded.dim), dtype=np.float32)
        for start in range(0, len(texts), SORT_WINDOW):
            window = texts[start : start + SORT_WINDOW]
            encodings = loaded.tokenizer.encode_batch([prefix + t for t in window])
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            for b in range(0, len(order), self._spec.batch_size):
                rows = order[b : b + self._spec.batch_size]
                vectors = _run(loaded, self._spec, [encodings[i].ids for i in rows])
                out[[start + r for r in rows]] = vectors
        return out


def batch_feeds(
    inputs: tuple[tuple[str, type], ...],
    batch: list[list[int]],
    type_ids: list[list[int]] | None = None,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Graph feeds for one batch of token id lists, padded to the longest,
    and the attention mask. ``inputs`` comes from :func:`graph_inputs`; only
    the inputs the graph has are fed, in its integer type. ``token_type_ids``
    are ``type_ids`` (segment ids of a text pair) when given, else zeros."""
    n, width = len(batch), max(len(ids) for ids in batch)
    ids = np.zeros((n, width), dtype=np.int64)
    mask = np.zeros((n, width), dtype=np.int64)
    types = np.zeros((n, width), dtype=np.int64)
    for r, row in enumerate(batch):
        ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
        if type_ids is not None:
            types[r, : len(row)] = type_ids[r]
    arrays = {
        "input_ids": ids,
        "attention_mask": mask,
        "token_type_ids": types,
        "position_ids": np.broadcast_to(np.arange(width, dtype=np.int64), (n, width)),
    }
    feeds = {name: np.ascontiguousarray(arrays[name], dtype=dtype) for name, dtype in inputs}
    return feeds, mask


def _run(loaded: _Loaded, spec: OnnxSpec, batch: list[list[int]]) -> np.ndarray:
    """Vectors for one batch of token id lists, padded to the longest."""
    feeds, mask = batch_feeds(loaded.inputs, batch)
    try:
        hidden = loaded.session.run([loaded.output], feeds)[0]
    except Exception as exc:  # onnxruntime raises its own non-RuntimeError types
        raise EmbedderError(
            f"model {spec.model_path} failed on a batch ({first_line(exc)}); "
            f"check that {spec.tokenizer_path} belongs to this model"
        ) from exc
    return l2_normalise(_pool(hidden, mask, loaded.pooling))


def _pool(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    if pooling == "model":
        return hidden
    if pooling == "cls":
        return hidden[:, 0]
    if pooling == "last":
        return hidden[np.arange(len(hidden)), mask.sum(axis=1) - 1]
    weights = mask[..., None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def stat_key(path: Path) -> tuple:
    """(resolved path, size, mtime): a file replaced on disk gets a new key."""
    try:
        st = path.stat()
    except OSError as exc:
        raise EmbedderError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return (str(path.resolve()), st.st_size, st.st_mtime_ns)


def _load_cached(spec: OnnxSpec) -> _Loaded:
    check_files(spec)
    key = (
        "embed",
        *files_key(spec),
        spec.max_tokens,
        spec.threads,
        spec.spin,
        spec.pooling,
        spec.model_sha256,
        spec.tokenizer_sha256,
        spec.dim,
    )
    return load_once(key, lambda: _load(spec))


def external_data_files(model_path: Path) -> list[Path]:
    """Weight files stored beside a graph (models over 2 GB keep their tensors
    outside the ``.onnx`` file): ``model.onnx_data``, ``model.onnx.data``.
    Exports that scatter one file per tensor are not hashed (they would need
    the graph parsed); their identity then rests on the graph file alone."""
    names = (f"{model_path.name}_data", f"{model_path.name}.data")
    return [model_path.parent / n for n in names if (model_path.parent / n).is_file()]


def model_digest(model_path: Path) -> str:
    """sha256 of the graph file, or of the graph's and its external data files'
    hashes in order when the weights live outside it."""
    extra = external_data_files(model_path)
    digest = file_sha256(model_path)
    if not extra:
        return digest
    combined = hashlib.sha256(digest.encode())
    for path in extra:
        combined.update(file_sha256(path).encode())
    return combined.hexdigest()


def _load(spec: OnnxSpec) -> _Loaded:
    model_sha = model_digest(spec.model_path)
    if spec.model_sha256 and model_sha != spec.model_sha256:
        raise EmbedderError(
            f"model file {spec.model_path} has sha256 {model_sha[:16]}…, "
            f"expected {spec.model_sha256[:16]}… (damaged or replaced); {spec.fix}"
        )
    tok_sha = file_sha256(spec.tokenizer_path)
    if spec.tokenizer_sha256 and tok_sha != spec.tokenizer_sha256:
        raise EmbedderError(
            f"tokenizer file {spec.tokenizer_path} has sha256 {tok_sha[:16]}…, "
            f"expected {spec.tokenizer_sha256[:16]}… (damaged or replaced); {spec.tokenizer_fix or spec.fix}"
        )

    tokenizer = open_tokenizer(spec)
    session = open_session(spec)
    inputs = graph_inputs(session, spec)
    output, pooling = _choose_output(session, spec)
    loaded = _Loaded(session, tokenizer, inputs, output, pooling, 0, model_sha, tok_sha)
    dim = _probe_dim(loaded, spec)
    if spec.dim and dim != spec.dim:
        raise EmbedderError(f"model {spec.model_path} gives {dim}-d vectors, expected {spec.dim}; {spec.fix}")
    return _Loaded(session, tokenizer, inputs, output, pooling, dim, model_sha, tok_sha)


def open_tokenizer(spec: OnnxSpec) -> Any:
    """``spec.tokenizer_path`` with no padding and truncation at ``spec.max_tokens``."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(spec.tokenizer_path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise EmbedderError(
            f"cannot read tokenizer {spec.tokenizer_path} ({first_line(exc)}); "
            "it must be a Hugging Face tokenizers `tokenizer.json`"
        ) from exc
    # The file may carry its own padding/truncation (all-MiniLM-L6-v2's pads
    # every text to 128): we pad per batch ourselves and truncate to our own
    # measured length, so both are reset here.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=spec.max_tokens)
    return tokenizer


def open_session(spec: OnnxSpec) -> Any:
    """A CPU session over ``spec.model_path`` with ``spec.threads``/``spec.spin``."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise EmbedderError(
            "onnxruntime is not installed; run `pip install onnxruntime` or set embed.provider=openai"
        ) from exc
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(spec.threads, 0)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # warnings about unused initializers are noise here
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spec.spin else "0")
    try:
        return ort.InferenceSession(str(spec.model_path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise EmbedderError(
            f"onnxruntime cannot load {spec.model_path} ({first_line(exc)}); {spec.fix}"
        ) from exc


def graph_inputs(session: Any, spec: OnnxSpec) -> tuple[tuple[str, type], ...]:
    """(name, integer dtype) of each graph input; refuses inputs we cannot fill."""
    inputs = []
    for arg in session.get_inputs():
        if arg.name not in _KNOWN_INPUTS or arg.type not in _INT_TYPES:
            raise EmbedderError(
                f"model {spec.model_path} takes input {arg.name!r} ({arg.type}) that repolens cannot fill; "
                "export it with inputs input_ids, attention_mask and optionally token_type_ids"
            )
        inputs.append((arg.name, _INT_TYPES[arg.type]))
    if "input_ids" not in {name for name, _ in inputs}:
        raise EmbedderError(f"model {spec.model_path} has no input_ids input; it is not a text encoder")
    return tuple(inputs)


def _choose_output(session: Any, spec: OnnxSpec) -> tuple[str, str]:
    """The graph output to read and the effective pooling (``model`` when the
    graph pools itself)."""
    outputs = {o.name: len(o.shape) for o in session.get_outputs()}
    if spec.pooling == "auto" and outputs.get("sentence_embedding") == 2:
        return "sentence_embedding", "model"
    pooling = "mean" if spec.pooling == "auto" else spec.pooling
    for name in ("last_hidden_state", "token_embeddings"):
        if outputs.get(name) == 3:
            return name, pooling
    rank3 = [name for name, rank in outputs.items() if rank == 3]
    if rank3:
        return rank3[0], pooling
    if outputs.get("sentence_embedding") == 2:
        return "sentence_embedding", "model"
    raise EmbedderError(
        f"model {spec.model_path} has outputs {sorted(outputs)} and none is last_hidden_state "
        "(batch, tokens, dim) or sentence_embedding (batch, dim); export the encoder's hidden states"
    )


def _probe_dim(loaded: _Loaded, spec: OnnxSpec) -> int:
    """Vector length, read from the graph when static, else from one tiny run
    (which also proves the tokenizer's ids fit the model)."""
    for o in loaded.session.get_outputs():
        if o.name == loaded.output and isinstance(o.shape[-1], int) and o.shape[-1] > 0:
            static = o.shape[-1]
            break
    else:
        static = 0
    ids = loaded.tokenizer.encode("def probe(): return 1").ids
    vec = _run(loaded, spec, [ids])
    if static and vec.shape[-1] != static:
        raise EmbedderError(f"model {spec.model_path} declares {static}-d output but gave {vec.shape[-1]}")
    if not np.all(np.isfinite(vec)):
        raise EmbedderError(f"model {spec.model_path} gave non-finite vectors; {spec.fix}")
    return int(vec.shape[-1])


def first_line(exc: BaseException) -> str:
    """An exception's first line, bounded, for one-line messages."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def default_threads() -> int:
    """onnxruntime intra-op threads when the config says nothing: every core
    this process may use (measured best on the 2-core reference box)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
