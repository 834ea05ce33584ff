"""A naive single-process Python BM25 indexer: the yardstick of
``bench.speed index --naive``.

    python bench/speed/naive_index.py CORPUS OUT

(a script of its own, run by path: the yardstick imports nothing of ours)

Issue 15 set repolens' first index of a small repository against "a naive
single-process Python BM25 indexer". This is one (the issue's own is not
in the repository, so their times do not compare), written the obvious way:
walk the folder (dot folders left out), read each file under 1 MiB that is
not binary, count its lowercase ``\\w+`` words, and keep an inverted index
with what BM25 scores from (postings with term counts, document lengths,
IDF), pickled to OUT. One document per file: no chunks, no syntax, no
symbols, no history, no crash safety. Run beside repolens in the same run,
its time says how fast the machine is at that moment, which on a shared
virtual machine moves by half (docs/benchmarks.md, issue 15).
"""

from __future__ import annotations

import math
import os
import pickle
import re
import sys
from collections import Counter

WORD = re.compile(r"\w+")
MAX_BYTES = 1 << 20


def build(root: str) -> dict[str, object]:
    docs: list[str] = []
    lengths: list[int] = []
    postings: dict[str, list[tuple[int, int]]] = {}
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        for name in sorted(names):
            path = os.path.join(folder, name)
            try:
                if os.path.getsize(path) > MAX_BYTES:
                    continue
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            counts = Counter(WORD.findall(data.decode("utf-8", "replace").lower()))
            doc = len(docs)
            docs.append(os.path.relpath(path, root))
            lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                postings.setdefault(term, []).append((doc, tf))
    n = len(docs)
    idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
    avgdl = sum(lengths) / max(n, 1)
    return {"docs": docs, "lengths": lengths, "avgdl": avgdl, "idf": idf, "postings": postings}


def main(argv: list[str] | None = None) -> int:
    root, out = sys.argv[1], sys.argv[2]
    index = build(root)
    with open(out, "wb") as fh:
        pickle.dump(index, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
