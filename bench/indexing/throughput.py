"""Indexing throughput, index size, memory and warm query latency, against rg.

    python -m bench.indexing throughput CORPUS_DIR [--chunker syntax|windows] [--queries N]

Indexes CORPUS_DIR from scratch in a child process (so its peak RSS is the
indexer's alone), then runs the development-set questions (titles and full
texts, up to --queries) as warm in-process searches, and times ripgrep on the
same corpus with the same terms in the same run as the reference.

Prints one markdown table and the command line that produced it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.paths import SHARED
from bench.common.stats import pct


def load_queries(limit: int) -> list[str]:
    queries: list[str] = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        path = SHARED / name
        if path.exists():
            for q in json.loads(path.read_text()):
                queries += [q["title"], q["query"]]
    if not queries:  # no shared data: a fixed handful of code questions
        queries = ["where is the session expired", "parse url scheme host", "template render context"]
    return queries[:limit]


def index_in_child(corpus: Path, index_dir: Path, chunker: str) -> dict:
    code = (
        "import json, resource, sys, time\n"
        "from repolens.service import index_repo\n"
        "t = time.perf_counter()\n"
        f"r = index_repo({str(corpus)!r}, index_dir={str(index_dir)!r})\n"
        "dt = time.perf_counter() - t\n"
        "print(json.dumps({'seconds': dt, 'files': r.files, 'bytes': r.bytes, 'lines': r.lines,"
        " 'chunks': r.chunks, 'symbols': r.symbols,"
        " 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    )
    env = {**os.environ, "REPOLENS_CHUNKER": chunker}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def rg_terms(query: str) -> list[str]:
    from repolens.search.query import parse_query
    from repolens.tokens import STOPWORDS

    words = [w for w in query.replace("`", " ").split() if w.isidentifier() and w.lower() not in STOPWORDS]
    seen = list(dict.fromkeys(w for w in words if len(w) > 2))
    return seen[:24] or [t.token for t in parse_query(query).terms][:24]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--chunker", default="syntax", choices=["syntax", "windows"])
    ap.add_argument("--queries", type=int, default=120)
    args = ap.parse_args(argv)
    print("$ python " + " ".join(sys.argv))
    corpus = args.corpus.resolve()
    queries = load_queries(args.queries)

    with tempfile.TemporaryDirectory(prefix="repolens-bench-") as tmp:
        index_dir = Path(tmp) / "index"
        built = index_in_child(corpus, index_dir, args.chunker)
        size = dir_size(index_dir / os.readlink(index_dir / "current"))

        os.environ["REPOLENS_CHUNKER"] = args.chunker
        from repolens import service

        service.search_code(queries[0], corpus, index_dir=index_dir)  # warm: open the index once
        lat = []
        chars = []
        for q in queries:
            t = time.perf_counter()
            reply = service.search_code(q, corpus, index_dir=index_dir)
            lat.append((time.perf_counter() - t) * 1000)
            chars.append(len(reply.text))
        rss_search = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    rg = shutil.which("rg")
    rg_lat = []
    if rg:
        for q in queries:
            patterns = [arg for t in rg_terms(q) for arg in ("-e", t)]
            cmd = [rg, "--count-matches", "-i", "-F", *patterns, str(corpus)]
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True)
            rg_lat.append((time.perf_counter() - t) * 1000)

    mb = built["bytes"] / 1e6
    print()
    print(f"corpus: {corpus} ({built['files']} files, {built['lines']:,} lines, {mb:.1f} MB indexed)")
    print(f"chunker: {args.chunker}; {built['chunks']:,} chunks, {built['symbols']:,} symbols")
    print()
    print("| measure | value |")
    print("|---|---|")
    print(f"| index time | {built['seconds']:.1f} s |")
    print(f"| files/s | {built['files'] / built['seconds']:,.0f} |")
    print(f"| lines/s | {built['lines'] / built['seconds']:,.0f} |")
    print(f"| MB/s | {mb / built['seconds']:.2f} |")
    print(f"| index size on disk | {size / 1e6:.1f} MB ({size / built['bytes']:.2f}x source) |")
    print(f"| peak RSS, indexing | {built['rss_mb']:.0f} MB |")
    print(f"| peak RSS, searching | {rss_search:.0f} MB |")
    print(f"| warm search p50 / p95 ({len(lat)} queries) | {pct(lat, 0.5):.1f} / {pct(lat, 0.95):.1f} ms |")
    print(f"| reply chars median | {pct(chars, 0.5):.0f} |")
    if rg_lat:
        print(f"| rg (same terms) p50 / p95 | {pct(rg_lat, 0.5):.1f} / {pct(rg_lat, 0.95):.1f} ms |")
        print(f"| repolens p50 / rg p50 | {pct(lat, 0.5) / pct(rg_lat, 0.5):.2f}x |")


if __name__ == "__main__":
    main()
