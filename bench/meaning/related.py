"""Distil the bundled model into a table of related words (issue 37 item 3: meaning, cheaply).

    python -m bench.meaning related --checkouts DIR --questions Q.json [--out FILE]
        [--vocabulary 20000] [--neighbours 6] [--floor 0.62]

The dense leg finds code by meaning, and costs five times the index time;
the static probe (``bench.probes.static_probe``) found that a distilled
static embedder, fused by rank, lost to no dense leg at all. This keeps less
of the model and asks less of it: for each word of a vocabulary, the few
words the bundled MiniLM puts nearest it (``remove`` -> ``delete``,
``drop``; ``retry`` -> ``attempt``), so that the learned ranking can read
how much of a question's *related* words a chunk holds, beside how much of
its own. Nothing is embedded at index or search time: a search looks its
question's words up in the table.

The vocabulary: the commonest words (split identifier parts, 3+ letters,
stemmed as the tokenizer stems them, each embedded as its commonest
surface form) of the source files of one snapshot per mined repository
(``--checkouts``: ``$REPOLENS_BENCH_DATA/mined/checkouts``) and of the mined
questions; never the development set's repositories. Two words are related
when their cosine is at least ``--floor`` and they do not begin with the
same four letters (a word's other forms are its stem's business).

Writes ``src/repolens/search/data/related.tsv``: a header line with the
provenance (JSON), then one line per word, sorted: ``stem<TAB>stem:sim
stem:sim ...``, strongest first.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.common.devsets import code_commit
from bench.common.paths import REPO_ROOT, data_default
from bench.mining.paths import REPOS, is_foreign, is_test, path_kind
from repolens.tokens import STOPWORDS, split_identifier, stem

OUT = REPO_ROOT / "src" / "repolens" / "search" / "data" / "related.tsv"
MAX_FILE_BYTES = 300_000
MIN_DF = 3  # files a word is in, summed over the repositories
SAME_PREFIX = 4  # two words that begin alike are forms of one word, not related ones
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")


def newest_snapshots(checkouts: Path) -> dict[str, Path]:
    """One snapshot per mined repository: its newest (by name order of the
    checkouts is not date order, so by the commit's date)."""
    import subprocess

    best: dict[str, tuple[int, Path]] = {}
    for tree in sorted(checkouts.iterdir()):
        if not (tree / ".checkout_ok").is_file():
            continue
        repo = tree.name.split("@", 1)[0].replace("__", "/", 1)
        when = subprocess.run(
            ["git", "-C", str(tree), "log", "-1", "--format=%ct"], capture_output=True, text=True
        )
        stamp = int(when.stdout.strip() or 0)
        if repo not in best or stamp > best[repo][0]:
            best[repo] = (stamp, tree)
    return {repo: tree for repo, (_, tree) in best.items()}


def count_words(texts, df: Counter, surfaces: dict[str, Counter]) -> None:
    """Document frequency of each stemmed word part, and its surface forms."""
    for text in texts:
        seen = set()
        for run in _WORD.findall(text):
            for part in split_identifier(run):
                if len(part) < 3 or not part.isalpha() or part in STOPWORDS:
                    continue
                key = stem(part)
                surfaces.setdefault(key, Counter())[part] += 1
                seen.add(key)
        df.update(seen)


def vocabulary(checkouts: Path, questions: list[dict], size: int) -> tuple[list[str], list[str], Counter]:
    """(stems, their surface forms, document frequencies) of the ``size`` commonest words."""
    specs = {spec.repo: spec for spec in REPOS}
    df: Counter = Counter()
    surfaces: dict[str, Counter] = {}
    for repo, tree in sorted(newest_snapshots(checkouts).items()):
        spec = specs.get(repo)
        if spec is None:
            continue
        texts = []
        for file in tree.rglob("*"):
            rel = file.relative_to(tree).as_posix()
            if rel.startswith(".git/") or not file.is_file() or file.stat().st_size > MAX_FILE_BYTES:
                continue
            if path_kind(rel, spec) == "source" and not is_test(rel) and not is_foreign(rel):
                texts.append(file.read_text(encoding="utf-8", errors="replace"))
        count_words(texts, df, surfaces)
        print(f"{repo}: {len(texts)} files, {len(df)} words so far", file=sys.stderr, flush=True)
    count_words((q["query"] for q in questions), df, surfaces)
    common = [w for w, n in df.most_common() if n >= MIN_DF][:size]
    common.sort()
    return common, [surfaces[w].most_common(1)[0][0] for w in common], df


def neighbours(
    vectors: np.ndarray, stems: list[str], k: int, floor: float
) -> dict[str, list[tuple[str, float]]]:
    """Each word's ``k`` nearest words at cosine >= ``floor`` (neither stem a prefix of the other)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for lo in range(0, len(stems), 1024):
        sims = vectors[lo : lo + 1024] @ vectors.T
        for row, i in enumerate(range(lo, min(lo + 1024, len(stems)))):
            order = np.argsort(-sims[row])[: k * 4 + 1]
            found = []
            for j in order:
                a, b = stems[i], stems[j]
                if j == i or sims[row, j] < floor or a[:SAME_PREFIX] == b[:SAME_PREFIX] or a in b or b in a:
                    continue  # itself, too far, another form of it (retri, retryabl), in another (key, pkey)
                found.append((b, round(float(sims[row, j]), 3)))
                if len(found) == k:
                    break
            if found:
                out[stems[i]] = found
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.meaning related", description=__doc__.splitlines()[0])
    ap.add_argument("--checkouts", type=Path, default=data_default("mined", "checkouts"))
    ap.add_argument("--questions", type=Path, default=data_default("mined", "questions.json"))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--vocabulary", type=int, default=20_000)
    ap.add_argument("--neighbours", type=int, default=6)
    ap.add_argument("--floor", type=float, default=0.62)
    args = ap.parse_args(argv)
    from repolens.models.bundled import bundled_embedder

    t0 = time.monotonic()
    questions = json.loads(args.questions.read_text()) if args.questions and args.questions.is_file() else []
    stems, words, _df = vocabulary(args.checkouts, questions, args.vocabulary)
    embedder = bundled_embedder()
    vectors = np.asarray(embedder.embed_documents(words), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    related = neighbours(vectors, stems, args.neighbours, args.floor)
    provenance = {
        "made_by": "python -m bench.meaning related",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "code": code_commit(),
        "model": embedder.identity,
        "repositories": sorted(newest_snapshots(args.checkouts)),
        "vocabulary": len(stems),
        "neighbours": args.neighbours,
        "floor": args.floor,
    }
    lines = [json.dumps(provenance, sort_keys=True)]
    lines += [f"{w}\t" + " ".join(f"{n}:{s:g}" for n, s in related[w]) for w in sorted(related)]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(
        f"wrote {args.out}: {len(related)} of {len(stems)} words with neighbours, "
        f"{args.out.stat().st_size // 1024} KB, {time.monotonic() - t0:.0f}s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
