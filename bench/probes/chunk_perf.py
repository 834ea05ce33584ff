"""Chunking throughput per language, and chunking's share of indexing.

    python -m bench.probes.chunk_perf CORPUS_DIR [--repeat 1]

Discovers CORPUS_DIR as ``repolens index`` would, reads every file once,
then chunks each file in this process on one core, once with line windows
(the baseline) and once with the syntax chunker, timing only the
``chunk_file`` call. In the same run it builds both indexes from scratch in
a child process and reads the child's CPU time (its own and its worker
processes'), so the share of chunking in indexing is CPU seconds over CPU
seconds: the index build runs on several cores, the chunking figures on one.

Prints the command line and markdown tables: per language (files, MB,
files/s, MB/s, chunks per file for both chunkers), then the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

CHILD = """
import json, resource, sys, time
from repolens.service import index_repo
t = time.perf_counter()
r = index_repo(sys.argv[1], index_dir=sys.argv[2])
wall = time.perf_counter() - t
me = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
print(json.dumps({"wall": wall, "cpu": cpu, "files": r.files, "chunks": r.chunks}))
"""


def index_in_child(corpus: Path, chunker: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="repolens-bench-") as tmp:
        env = {**os.environ, "REPOLENS_CHUNKER": chunker}
        cmd = [sys.executable, "-c", CHILD, str(corpus), str(Path(tmp) / "index")]
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--repeat", type=int, default=1, help="chunk every file this many times (best kept)")
    args = ap.parse_args(argv)
    print("$ python " + " ".join(sys.argv))

    from repolens.chunking.dispatch import chunk_file
    from repolens.chunking.languages import language_for
    from repolens.discover import LoadedText, discover, load_text

    corpus = args.corpus.resolve()
    found = discover(corpus)
    texts: list[tuple[str, str, str, int]] = []  # path, language, text, bytes
    for f in found.files:
        loaded = load_text(f.abs_path, max_file_bytes=found.max_file_bytes)
        if isinstance(loaded, LoadedText):
            texts.append((f.path, language_for(f.path), loaded.text, len(loaded.data)))

    # Load each grammar and compile its queries before timing (once per
    # process, also in the indexer's workers): the figures are throughput.
    warmed: set[str] = set()
    for path, lang, text, _ in texts:
        if lang not in warmed:
            warmed.add(lang)
            chunk_file(path, text, lang, mode="syntax")

    seconds: dict[tuple[str, str], float] = defaultdict(float)
    chunks: dict[tuple[str, str], int] = defaultdict(int)
    parse_errors: dict[str, int] = defaultdict(int)
    for mode in ("windows", "syntax"):
        for path, lang, text, _ in texts:
            best = float("inf")
            for _ in range(max(1, args.repeat)):
                t = time.perf_counter()
                result = chunk_file(path, text, lang, mode=mode)
                best = min(best, time.perf_counter() - t)
            seconds[mode, lang] += best
            chunks[mode, lang] += len(result.chunks)
            if mode == "syntax" and result.parse_error:
                parse_errors[lang] += 1

    files: dict[str, int] = defaultdict(int)
    size: dict[str, int] = defaultdict(int)
    for _, lang, _, n in texts:
        files[lang] += 1
        size[lang] += n

    builds = {mode: index_in_child(corpus, mode) for mode in ("windows", "syntax")}

    total_mb = sum(size.values()) / 1e6
    print()
    print(f"corpus: {corpus} ({len(texts):,} files, {total_mb:.1f} MB, {len(files)} languages)")
    print()
    print(
        "| language | files | MB | syntax files/s | syntax MB/s | windows MB/s "
        "| chunks/file syntax | windows | parse errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for lang in sorted(files, key=lambda k: -size[k]):
        s, w = seconds["syntax", lang], seconds["windows", lang]
        mb = size[lang] / 1e6
        print(
            f"| {lang or '(text)'} | {files[lang]:,} | {mb:.1f} | {files[lang] / s:,.0f} | {mb / s:.2f} "
            f"| {mb / w:.2f} | {chunks['syntax', lang] / files[lang]:.1f} "
            f"| {chunks['windows', lang] / files[lang]:.1f} | {parse_errors[lang]} |"
        )

    def row(name: str, w: float, s: float, fmt: str, ratio: float | None) -> None:
        tail = f"{ratio:.2f}x" if ratio is not None else ""
        print(f"| {name} | {w:{fmt}} | {s:{fmt}} | {tail} |")

    cs = {m: sum(v for (mm, _), v in seconds.items() if mm == m) for m in ("windows", "syntax")}
    cw, cx, n = builds["windows"], builds["syntax"], len(texts)
    print()
    print("| measure | windows | syntax | syntax / windows |")
    print("|---|---|---|---|")
    row("chunking, one core: s", cs["windows"], cs["syntax"], ".1f", cs["syntax"] / cs["windows"])
    row("chunking, one core: files/s", n / cs["windows"], n / cs["syntax"], ",.0f", None)
    row("chunking, one core: MB/s", total_mb / cs["windows"], total_mb / cs["syntax"], ".2f", None)
    row("chunks", cw["chunks"], cx["chunks"], ",", cx["chunks"] / cw["chunks"])
    row("full index build: wall s", cw["wall"], cx["wall"], ".1f", cx["wall"] / cw["wall"])
    row("full index build: CPU s", cw["cpu"], cx["cpu"], ".1f", cx["cpu"] / cw["cpu"])
    row("chunking share of index CPU", cs["windows"] / cw["cpu"], cs["syntax"] / cx["cpu"], ".0%", None)


if __name__ == "__main__":
    main()
