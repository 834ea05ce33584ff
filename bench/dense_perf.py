"""The dense leg's costs: embedding throughput, time to a fully embedded index,
and warm hybrid query latency at scale.

    python bench/dense_perf.py --repo MID_SIZED_REPO --large LARGE_CORPUS [--queries N]

1. Throughput of the bundled model (all-MiniLM-L6-v2 int8 on onnxruntime)
   on the texts repolens embeds (style header+idents) of MID_SIZED_REPO.
2. Time to a fully embedded index of MID_SIZED_REPO: the lexical build,
   then the vectors, from nothing.
3. Warm query latency on LARGE_CORPUS (aim: >= 100k chunks), lexical only
   against hybrid (BM25 + dense, boost fusion) in the same run. Filling 100k
   vectors with the real model takes over half an hour on 2 cores, so the
   vectors there come from the deterministic fake embedder at the real
   model's dimension (384): the dense leg's search cost depends on the
   matrix size, not on the numbers in it. The real model's query embedding
   time is measured separately and added to the hybrid figures.

Prints markdown tables and the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def questions(limit: int) -> list[str]:
    out: list[str] = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        path = SHARED / name
        if path.exists():
            out += [q["title"] for q in json.loads(path.read_text())]
    return out[:limit] or ["where is the session expired", "parse url scheme host"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="a mid-sized repository (about 5k chunks)")
    ap.add_argument("--large", type=Path, required=True, help="a large corpus (about 100k chunks)")
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()
    print("$ python " + " ".join(sys.argv))

    from repolens import api
    from repolens.embed import make_embedder
    from repolens.embed.document import embedding_text
    from repolens.index import build_index
    from repolens.store import IndexHandle, sqlite

    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="repolens-dense-") as tmp:
        # 2. from nothing to a fully embedded index
        os.environ["REPOLENS_VECTORS"] = "1"
        idx = Path(tmp) / "mid"
        t = time.perf_counter()
        report = build_index(args.repo, index_dir=idx)
        total_s = time.perf_counter() - t
        vec = report.vectors
        assert vec is not None and vec.done == vec.total
        lexical_s = total_s - vec.seconds
        rows += [
            ("mid-sized repo", f"{args.repo.name}: {report.files} files, {report.chunks} chunks"),
            ("lexical index (searchable)", f"{lexical_s:.1f} s"),
            ("vectors, all chunks", f"{vec.seconds:.1f} s ({vec.done / vec.seconds:.1f} chunks/s)"),
            ("fully embedded index", f"{total_s:.1f} s"),
        ]

        # 1. throughput on the texts repolens embeds
        embedder = make_embedder({})
        handle = IndexHandle.open_current(api.layout_for(args.repo, idx))
        cids = [r[0] for r in handle.db.execute("SELECT cid FROM chunks ORDER BY cid LIMIT 512")]
        texts = [embedding_text(s.chunk) for s in sqlite.chunks_by_cid(handle.db, cids).values()]
        handle.close()
        t = time.perf_counter()
        embedder.embed_documents(texts)
        rate = len(texts) / (time.perf_counter() - t)
        q = []
        for text in questions(50):
            t = time.perf_counter()
            embedder.embed_query(text)
            q.append((time.perf_counter() - t) * 1000)
        query_embed_ms = statistics.median(q)
        rows += [
            ("embedding throughput (512 chunk texts, header+idents)", f"{rate:.1f} texts/s"),
            ("query embedding, median of 50 titles", f"{query_embed_ms:.1f} ms"),
        ]

        # 3. latency at scale: lexical vs hybrid in one run
        os.environ["REPOLENS_EMBED_PROVIDER"] = "fake"
        os.environ["REPOLENS_EMBED_DIM"] = "384"
        big = Path(tmp) / "large"
        t = time.perf_counter()
        large = build_index(args.large, index_dir=big)
        large_s = time.perf_counter() - t
        qs = questions(args.queries)
        results = {}
        for mode in ("lexical", "hybrid"):
            os.environ["REPOLENS_DENSE"] = "1" if mode == "hybrid" else "0"
            api.handles.clear()
            api.search_code(qs[0], args.large, index_dir=big)  # warm: index and matrix in memory
            lat = []
            for text in qs:
                t = time.perf_counter()
                api.search_code(text, args.large, index_dir=big)
                lat.append((time.perf_counter() - t) * 1000)
            results[mode] = lat
        lex, hyb = results["lexical"], results["hybrid"]
        rows += [
            (
                "large corpus",
                f"{args.large}: {large.files} files, {large.chunks:,} chunks (built in {large_s:.0f} s)",
            ),
            ("warm query p50 / p95, lexical", f"{pct(lex, 0.5):.1f} / {pct(lex, 0.95):.1f} ms"),
            (
                "warm query p50 / p95, hybrid (+ real query embedding)",
                f"{pct(hyb, 0.5) + query_embed_ms:.1f} / {pct(hyb, 0.95) + query_embed_ms:.1f} ms",
            ),
            ("hybrid p50 / lexical p50", f"{(pct(hyb, 0.5) + query_embed_ms) / pct(lex, 0.5):.2f}x"),
        ]
        api.handles.clear()

    print()
    print("| measure | value |")
    print("|---|---|")
    for k, v in rows:
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
