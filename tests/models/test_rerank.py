"""The cross-encoder reranker: loading, scoring, errors, config (its vote: tests/search/test_fusion.py).

Every model here is a real ONNX graph the tests build: a cross-encoder whose
logit is the sum of a per-token weight over the attended tokens, with a
WordLevel tokenizer that has a BERT-style pair template.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from repolens.errors import ConfigError, RerankerError
from repolens.models import clear_cache, onnx, rerank
from repolens.models.rerank import (
    PROBE_OFF_TOPIC,
    PROBE_ON_TOPIC,
    CrossEncoder,
    RerankConfig,
    make_reranker,
    probe,
)
from repolens.models.rerank_config import load_rerank_config
from repolens.store.handles import readers

WORDS = "[UNK] [CLS] [SEP] [PAD] parse url scheme host path parse_url partition button color background"
VOCAB = {word: i for i, word in enumerate(WORDS.split())}
# On-topic words weigh 2, CSS words -1, specials 0.1 (so they count, visibly).
WEIGHTS = np.array(
    [0.0, 0.1, 0.1, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, -1.0, -1.0, -1.0], dtype=np.float32
)
SECOND = 0.5  # token type row 1: added per token of the second text when the graph reads types


def build_tokenizer(path: Path, *, pairs: bool = True, vocab: dict[str, int] = VOCAB) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1" if pairs else None,
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    tokenizer.save(str(path))


def build_model(
    path: Path,
    weights: np.ndarray = WEIGHTS,
    *,
    token_types: bool = False,
    two_logits: bool = False,
    output: str = "logits",
    per_token_output: bool = False,
    extra_output: bool = False,
    extra_input: str | None = None,
) -> None:
    """input_ids, attention_mask[, token_type_ids] -> logits: the sum over
    attended tokens of ``weights[id]`` (+ ``SECOND`` for type-1 tokens), as
    (n, 1); or (n, 2) with the attended token count x 0.25 as the negative
    logit; or the per-token values (n, seq, 1) that no cross-encoder gives."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
    ]
    inits = [
        numpy_helper.from_array(weights.reshape(-1, 1), "table"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([[0.25]], dtype=np.float32), "quarter"),
    ]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["per_token"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),
    ]
    values = "per_token"
    if token_types:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"]))
        inits.append(numpy_helper.from_array(np.array([[0.0], [SECOND]], dtype=np.float32), "types"))
        nodes.append(helper.make_node("Gather", ["types", "token_type_ids"], ["type_rows"], axis=0))
        nodes.append(helper.make_node("Add", ["per_token", "type_rows"], ["typed"]))
        values = "typed"
    if extra_input:
        inputs.append(helper.make_tensor_value_info(extra_input, TensorProto.FLOAT, ["batch", 3]))
    nodes.append(helper.make_node("Mul", [values, "mask3"], ["masked"]))
    nodes.append(helper.make_node("ReduceSum", ["masked", "axis1"], ["relevant"], keepdims=0))
    result, shape = "relevant", ["batch", 1]
    if two_logits:
        nodes.append(helper.make_node("ReduceSum", ["mask_f", "axis1"], ["count"], keepdims=1))
        nodes.append(helper.make_node("Mul", ["count", "quarter"], ["negative"]))
        nodes.append(helper.make_node("Concat", ["negative", "relevant"], ["pair"], axis=1))
        result, shape = "pair", ["batch", 2]
    if per_token_output:
        result, shape = "masked", ["batch", "seq", 1]
    nodes.append(helper.make_node("Identity", [result], [output]))
    outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, shape)]
    if extra_output:
        nodes.append(helper.make_node("Identity", ["mask_f"], ["mask_out"]))
        outputs.append(helper.make_tensor_value_info("mask_out", TensorProto.FLOAT, ["batch", "seq"]))
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def folder_with(tmp_path: Path, name: str = "ce", **model_options: object) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    build_model(folder / "model.onnx", **model_options)  # type: ignore[arg-type]
    build_tokenizer(folder / "tokenizer.json")
    return folder


def local(folder: Path, **settings: object) -> CrossEncoder:
    encoder = make_reranker({"provider": "local", "path": str(folder), **settings})
    assert encoder is not None
    return encoder


def token_ids(text: str) -> list[int]:
    # what pre_tokenizers.Whitespace splits: word runs and punctuation runs
    return [VOCAB.get(word, 0) for word in re.findall(r"\w+|[^\w\s]+", text)]


def expected(query: str, text: str, *, types: bool = False) -> float:
    """The tiny model's logit for a pair, from the pair template by hand."""
    first, second = [1, *token_ids(query), 2], [*token_ids(text), 2]
    return float(WEIGHTS[first].sum() + WEIGHTS[second].sum() + (SECOND * len(second) if types else 0.0))


@pytest.fixture
def ce(tmp_path: Path) -> Path:
    return folder_with(tmp_path)


TEXTS = ["parse url", "button color background", "host", "scheme host path partition", "nothing here"]


# -- loading and scoring -------------------------------------------------------------


def test_scores_are_summed_token_logits_in_input_order(ce: Path) -> None:
    scores = local(ce, batch_size=2).score("parse url", TEXTS)
    assert scores.dtype == np.float32
    assert scores.shape == (5,)
    np.testing.assert_allclose(scores, [expected("parse url", t) for t in TEXTS], atol=1e-5)
    assert np.argsort(-scores).tolist() == [3, 0, 2, 4, 1]


def test_length_sorted_batches_give_the_same_scores_as_single_pairs(ce: Path) -> None:
    encoder = local(ce, batch_size=2)
    together = encoder.score("scheme", TEXTS)
    alone = [encoder.score("scheme", [t])[0] for t in TEXTS]
    np.testing.assert_allclose(together, alone, atol=1e-6)


def test_no_texts_give_an_empty_array_without_loading(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not a model")
    build_tokenizer(folder / "tokenizer.json")
    assert local(folder).score("q", []).shape == (0,)


def test_token_type_ids_mark_the_second_text(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, token_types=True)
    scores = local(folder).score("parse", ["url host", "button"])
    want = [expected("parse", "url host", types=True), expected("parse", "button", types=True)]
    np.testing.assert_allclose(scores, want, atol=1e-5)


def test_two_logit_models_score_positive_minus_negative(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, two_logits=True)
    scores = local(folder).score("url", ["host", "color host path"])
    # negative logit = 0.25 x attended tokens: [CLS] url [SEP] text.. [SEP]
    want = [expected("url", "host") - 0.25 * 5, expected("url", "color host path") - 0.25 * 7]
    np.testing.assert_allclose(scores, want, atol=1e-5)


def test_pairs_are_truncated_longest_first_to_max_tokens(ce: Path) -> None:
    encoder = local(ce, max_tokens=8)
    assert encoder.max_tokens == 8
    # [CLS] parse url [SEP] host host host [SEP]: the longer text loses its tail
    score = encoder.score("parse url", ["host host host button button button button"])[0]
    assert score == pytest.approx(float(WEIGHTS[[1, 4, 5, 2, 7, 7, 7, 2]].sum()), abs=1e-5)


def test_max_tokens_is_lowered_to_what_the_model_allows(ce: Path) -> None:
    assert local(ce).max_tokens == 512
    (ce / "config.json").write_text(json.dumps({"max_position_embeddings": 16}))
    assert local(ce).max_tokens == 16
    assert local(ce, max_tokens=10).max_tokens == 10
    (ce / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 12}))
    assert local(ce).max_tokens == 12
    (ce / "tokenizer_config.json").write_text('{"model_max_length": 1000000000000000019884624838656}')
    assert local(ce).max_tokens == 16


def test_finds_the_graph_in_an_onnx_subfolder(tmp_path: Path) -> None:
    folder = tmp_path / "hub-layout"
    (folder / "onnx").mkdir(parents=True)
    build_model(folder / "onnx" / "model.onnx")
    build_tokenizer(folder / "tokenizer.json")
    encoder = local(folder)
    assert encoder.spec.model_path == folder / "onnx" / "model.onnx"
    assert encoder.score("url", ["url"])[0] == pytest.approx(expected("url", "url"), abs=1e-5)


def test_probe_scores_on_topic_code_above_a_css_rule(ce: Path) -> None:
    on, off = probe(local(ce))
    assert on > off
    assert (on, off) == pytest.approx(
        (expected(rerank.PROBE_QUERY, PROBE_ON_TOPIC), expected(rerank.PROBE_QUERY, PROBE_OFF_TOPIC)),
        abs=1e-4,
    )


def test_identity_names_the_model_and_tokenizer_hashes(ce: Path) -> None:
    model_sha = hashlib.sha256((ce / "model.onnx").read_bytes()).hexdigest()
    tok_sha = hashlib.sha256((ce / "tokenizer.json").read_bytes()).hexdigest()
    first = local(ce)
    assert first.identity == f"rerank:local:sha256={model_sha[:16]}:tok={tok_sha[:12]}:max=512"
    build_model(ce / "model.onnx", WEIGHTS * 2)
    os.utime(ce / "model.onnx", ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    second = local(ce)
    assert second.identity != first.identity
    assert second.score("url", ["host"])[0] == pytest.approx(2 * expected("url", "host"), abs=1e-5)
    # a loaded reranker keeps the model its identity names
    assert first.identity.startswith(f"rerank:local:sha256={model_sha[:16]}:")
    assert first.score("url", ["host"])[0] == pytest.approx(expected("url", "host"), abs=1e-5)


def test_loaded_models_are_shared_until_the_cache_is_cleared(ce: Path) -> None:
    """Cross-encoders live in the one ONNX model cache the embedders use, so
    ``repolens.models.clear_cache`` forgets them too."""
    clear_cache()
    local(ce).load()
    local(ce).load()
    assert len(onnx._LOADED) == 1
    clear_cache()
    assert not onnx._LOADED


# -- errors ---------------------------------------------------------------------------


def one_line_error(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(RerankerError) as err:
        call(*args, **kwargs)  # type: ignore[operator]
    message = str(err.value)
    assert "\n" not in message
    return message


def test_missing_folder_and_hub_names_say_to_download_by_hand(tmp_path: Path) -> None:
    msg = one_line_error(local, tmp_path / "nowhere")
    assert msg == (
        f"rerank.path {tmp_path / 'nowhere'} is not a folder; "
        "put the cross-encoder's model.onnx and tokenizer.json there or fix rerank.path"
    )
    msg = one_line_error(make_reranker, {"provider": "local", "path": "cross-encoder/ms-marco-MiniLM-L-6-v2"})
    assert msg == (
        "rerank.path='cross-encoder/ms-marco-MiniLM-L-6-v2' must be a local folder holding model.onnx "
        "and tokenizer.json (repolens does not download models); download it yourself, e.g. "
        "`huggingface-cli download cross-encoder/ms-marco-MiniLM-L-6-v2 onnx/model.onnx tokenizer.json "
        "config.json --local-dir ~/models/ms-marco-MiniLM-L-6-v2`, and point rerank.path at that folder"
    )
    msg = one_line_error(make_reranker, {"provider": "local"})
    assert msg.startswith("rerank.provider=local needs rerank.path, the folder holding model.onnx")


def test_missing_files_name_the_setting_to_fix(tmp_path: Path, ce: Path) -> None:
    assert one_line_error(local, ce, model_path="other.onnx").startswith(
        f"rerank.model_path {ce / 'other.onnx'} does not exist; point it at the model's .onnx file"
    )
    assert one_line_error(local, ce, tokenizer_path="tok.json").startswith(
        f"rerank.tokenizer_path {ce / 'tok.json'} does not exist"
    )
    (ce / "tokenizer.json").unlink()
    assert one_line_error(local, ce) == (
        f"no tokenizer.json in {ce}; download the model's tokenizer.json there or set rerank.tokenizer_path"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert one_line_error(local, empty).startswith(f"no .onnx model in {empty}; download the model's ONNX")
    build_model(empty / "quantized.onnx")
    assert one_line_error(local, empty).endswith(
        "but found quantized.onnx; set rerank.model_path to one of them"
    )


def test_a_file_that_is_not_a_model_fails_on_first_use(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"not a model")
    build_tokenizer(folder / "tokenizer.json")
    encoder = local(folder)  # no error yet: nothing is loaded
    msg = one_line_error(encoder.score, "q", ["t"])
    assert msg.startswith(f"onnxruntime cannot load {folder / 'model.onnx'} (")
    assert msg.endswith(f"; check the reranker files in {folder} (rerank.path)")


def test_graphs_that_are_not_cross_encoders_are_refused(tmp_path: Path) -> None:
    per_token = folder_with(tmp_path, "per-token", per_token_output=True, output="last_hidden_state")
    msg = one_line_error(local(per_token).load)
    # the load-time probe pair: [CLS] probe [SEP] def probe ( ) : return 1 [SEP]
    assert msg == (
        f"reranker {per_token / 'model.onnx'} gave outputs of shape (1, 9, 1) for 1 pairs; "
        "a cross-encoder gives logits of shape (pairs, 1) or (pairs, 2): is it an embedding model?"
    )
    two = folder_with(tmp_path, "two-outputs", output="scores", extra_output=True)
    assert "has outputs ['scores', 'mask_out'] and none is logits" in one_line_error(local(two).load)
    vision = folder_with(tmp_path, "vision", extra_input="pixel_values")
    msg = one_line_error(local(vision).load)
    assert "takes input 'pixel_values' (tensor(float)) that repolens cannot fill" in msg


def test_tokenizer_without_pair_template_or_matching_vocab_is_refused(tmp_path: Path, ce: Path) -> None:
    build_tokenizer(ce / "tokenizer.json", pairs=False)
    msg = one_line_error(local(ce).load)
    assert msg == (
        f"tokenizer {ce / 'tokenizer.json'} has no template for text pairs; "
        "use the tokenizer.json that came with the cross-encoder"
    )
    big = folder_with(tmp_path, "big-vocab")
    build_tokenizer(big / "tokenizer.json", vocab={**VOCAB, "probe": 40})
    msg = one_line_error(local(big).load)
    assert msg.startswith(f"reranker {big / 'model.onnx'} failed on a batch (")
    assert msg.endswith(f"check that {big / 'tokenizer.json'} belongs to this model")


# -- configuration --------------------------------------------------------------------------


def test_provider_none_is_the_default_and_gives_no_reranker() -> None:
    assert RerankConfig().provider == "none"
    assert make_reranker() is None
    assert make_reranker({"provider": "NONE", "path": "/ignored"}) is None
    assert make_reranker(RerankConfig(top_n=5)) is None


def test_config_from_mapping_converts_and_refuses() -> None:
    config = RerankConfig.from_mapping({"rerank.top_n": "12", "weight": "0.5", "threads": 2, "path": None})
    assert (config.top_n, config.weight, config.threads, config.path) == (12, 0.5, 2, None)
    assert one_line_error(RerankConfig.from_mapping, {"top": 3}) == (
        "unknown setting rerank.top; valid: batch_size, max_tokens, model_path, path, provider, "
        "threads, tokenizer_path, top_n, weight"
    )
    assert one_line_error(RerankConfig.from_mapping, {"top_n": "many"}) == (
        "rerank.top_n must be an integer, got 'many'"
    )
    assert one_line_error(RerankConfig.from_mapping, {"top_n": 0}) == (
        "rerank.top_n must be between 1 and 1000, got 0"
    )
    assert one_line_error(RerankConfig.from_mapping, {"weight": -1}) == (
        "rerank.weight must be between 0 and 100, got -1"
    )
    assert one_line_error(RerankConfig.from_mapping, {"provider": "torch"}) == (
        "rerank.provider='torch' is unknown; use one of none, local"
    )


def test_load_rerank_config_reads_the_file_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PROVIDER", "PATH", "TOP_N", "WEIGHT"):
        monkeypatch.delenv(f"REPOLENS_RERANK_{name}", raising=False)
    assert load_rerank_config(tmp_path) == RerankConfig()
    (tmp_path / ".repolens.toml").write_text(
        '[rerank]\nprovider = "local"\npath = "/models/ce"\ntop_n = 20\n'
    )
    assert load_rerank_config(tmp_path) == RerankConfig(provider="local", path="/models/ce", top_n=20)
    monkeypatch.setenv("REPOLENS_RERANK_TOP_N", "8")
    monkeypatch.setenv("REPOLENS_RERANK_WEIGHT", "2")
    assert load_rerank_config(tmp_path) == RerankConfig(
        provider="local", path="/models/ce", top_n=8, weight=2.0
    )
    (tmp_path / ".repolens.toml").write_text("[repolens.rerank]\ntop_k = 3\n")
    assert one_line_error(load_rerank_config, tmp_path).startswith("unknown setting rerank.top_k; valid:")
    (tmp_path / ".repolens.toml").write_text('rerank = "on"\n')
    with pytest.raises(ConfigError, match=r"^.repolens.toml: \[rerank\] must be a table$"):
        load_rerank_config(tmp_path)


def test_search_votes_with_the_reranker_and_explains_it(ce: Path, make_repo, monkeypatch) -> None:
    from repolens import service

    root = make_repo(
        {
            "style.css": ".button { color: red; background: blue }\n/* url of the page */\n",
            "net/url.py": (
                "def parse_url(url):\n    scheme, _, rest = url.partition('://')\n    return scheme\n"
            ),
        }
    )
    monkeypatch.setenv("REPOLENS_RERANK_PROVIDER", "local")
    monkeypatch.setenv("REPOLENS_RERANK_PATH", str(ce))
    try:
        reply = service.search_code("url", root, explain=True)
        assert reply.packet.rendered[0].block.path == "net/url.py"
        assert ", rerank #1 " in reply.packet.rendered[0].block.explain
        assert reply.notes == ()
        monkeypatch.setenv("REPOLENS_RERANK_PATH", str(root / "missing"))
        broken = service.search_code("url", root)
        assert broken.notes[0].startswith("rerank leg missing: ")
        assert broken.packet.rendered  # the other legs still answer
    finally:
        readers.clear()
