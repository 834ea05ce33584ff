"""Would a static (model2vec-style) embedder earn its place as a ``fast`` option?

    python -m bench.probes.static_probe --only 'commit:|requests|flask' [--data DIR]

A static model is distilled from the bundled MiniLM with onnxruntime and
numpy (no torch): every word piece of the vocabulary is run through the
model alone (``[CLS] piece [SEP]``, mean pooled), and a text's vector is the
mean of its pieces' vectors. Embedding is then a table lookup, ~100x+ faster.

It is judged where it would be used, inside repolens's real ranking: for each
development question on an index that already has MiniLM vectors (built by
``bench.devset`` with ``vectors=1``), the same lexical candidates are
ranked by ``search_index`` with no dense leg, with the MiniLM leg (the
stored vectors) and with the static leg (the candidates embedded on the fly
with the same ``embedding_text``), all with ``fusion = rerank``. Printed:
file Acc@1/Acc@5 and MRR of the files in ranked order, per leg, and the
distillation and embedding times.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

# The development benchmark's modules live one folder up (bench/).
from bench.common import devsets
from bench.common.metrics import first_gold_rank
from bench.common.paths import data_default
from repolens.models import make_embedder
from repolens.models.base import l2_normalise
from repolens.models.document import embedding_text
from repolens.models.onnx import _run
from repolens.search.query import parse_query
from repolens.search.ranking import RankingOptions, search_index
from repolens.settings import Settings, load_settings
from repolens.store import open_store

PROBE_RANKING = {
    "ranking": "tuned",
    "fusion": "rerank",
    "priors": True,
    "diversity": 0.7,
    "field_weights": True,
    "file_weight": 0.0,
    "path_boost": 0.0,
    "history_weight": 0.0,
    "dense_fallback": False,
}


def distill(embedder) -> tuple[np.ndarray, object]:
    loaded = embedder._load()
    tok = loaded.tokenizer
    vocab = tok.get_vocab()
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    table = np.zeros((len(vocab), loaded.dim), dtype=np.float32)
    ids = sorted(vocab.values())
    for b in range(0, len(ids), 512):
        batch = [[cls, i, sep] for i in ids[b : b + 512]]
        table[ids[b : b + 512]] = _run(loaded, embedder.spec, batch)
    return table, tok


class Static:
    def __init__(self, table: np.ndarray, tok, max_tokens: int = 512):
        self.table, self.tok, self.max_tokens = table, tok, max_tokens
        self.special = {i for t, i in tok.get_vocab().items() if t.startswith("[")}

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for r, enc in enumerate(self.tok.encode_batch(texts, add_special_tokens=False)):
            ids = [i for i in enc.ids[: self.max_tokens] if i not in self.special]
            if ids:
                out[r] = self.table[ids].mean(axis=0)
        return l2_normalise(out)


class Leg:
    """The dense leg over given vectors (``search.legs.DenseLeg``)."""

    def __init__(self, sims):
        self.sims = sims

    def top(self, k):
        return []

    def similarities(self, cids):
        return self.sims(list(cids))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    devsets.add_checkout_options(ap, "checkouts")
    ap.add_argument("--only", default="")
    ap.add_argument("--embed-cache", type=Path, default=data_default("embed-cache"))
    args = ap.parse_args(argv)
    minilm = make_embedder({"provider": "onnx"})
    t = time.perf_counter()
    saved = Path(args.embed_cache) / "static-minilm.npy"
    if saved.is_file():  # distilled by an earlier run (the time printed is loading it)
        table, tok = np.load(saved), minilm._load().tokenizer
    else:
        table, tok = distill(minilm)
        np.save(saved, table)
    distill_s = time.perf_counter() - t
    static = Static(table, tok)
    devsets.checked_folders(args)
    checkouts, cache = args.checkouts, args.index_cache
    overrides = {"vectors": "1", "embed_cache": args.embed_cache, "fusion": "rerank"}
    ranks: dict[str, list[int | None]] = {"lexical": [], "minilm": [], "static": []}
    static_s, static_n = 0.0, 0
    for q in devsets.load_queries(args.data, args.only, None):
        ck = devsets.checkout_name(q)
        root = checkouts / ck
        with devsets.settings_env(overrides):
            index_dir = cache / ck / devsets.identity_key(devsets.index_identity(load_settings(root)))
        if not (index_dir / "devset-meta.json").is_file():
            continue
        reader = open_store(root, index_dir).open_reader()
        parsed = parse_query(q["query"])
        # the probe's own ranking (issue 13): the tuned fusion, dense by rerank, no path or history leg
        opts = RankingOptions.from_settings(replace(Settings(), **PROBE_RANKING))
        qv = minilm.embed_query(q["query"][:1200])
        sq = static.embed([q["query"][:4000]])[0]

        def static_sims(cids, reader=reader, sq=sq):
            nonlocal static_s, static_n
            chunks = reader.chunks(cids)
            t0 = time.perf_counter()
            vecs = static.embed([embedding_text(chunks[c].chunk) for c in cids])
            static_s += time.perf_counter() - t0
            static_n += len(cids)
            return {c: float(v @ sq) for c, v in zip(cids, vecs, strict=True)}

        legs = {
            "lexical": None,
            "minilm": Leg(lambda cids, reader=reader, qv=qv: reader.dense_similarities(qv, cids)),
            "static": Leg(static_sims),
        }
        for name, leg in legs.items():
            hits = search_index(reader, parsed, options=opts, dense=leg).hits
            files = list(dict.fromkeys(h.chunk.path for h in hits))
            ranks[name].append(first_gold_rank(files, q["gold_files"]))
        reader.close()
    n = len(ranks["lexical"])
    print(
        f"{n} questions; distilled {table.shape[0]} pieces in {distill_s:.1f} s; "
        f"static embedding {static_n / max(static_s, 1e-9):.0f} chunks/s"
    )
    for name, rs in ranks.items():
        acc1 = sum(r == 1 for r in rs) / n
        acc5 = sum(r is not None and r <= 5 for r in rs) / n
        mrr = statistics.mean(1 / r if r else 0 for r in rs)
        print(f"| {name} | {acc1:.2f} | {acc5:.2f} | {mrr:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
