"""Does a refreshed index rank as a fresh build of the same files does? (issue 27, item 6)

    python -m bench.replies drift --checkouts DIR [--data DIR] [--rounds 10] [--files 25]
        [--seed 27] [CHECKOUT ...]

Each development checkout (default: the five of the identifier questions, one
per language) is copied to a temporary folder and indexed fresh; its
development questions (``query`` and ``title`` inputs) are asked for a top 10
(``top_k`` 10, a budget large enough that all ten show). Then ``--rounds``
rounds each append a comment line to ``--files`` source files (half of them
among the files those top 10s cite, so the questions' own terms move) and
refresh the index. Two comparisons, each against a fresh build of the same
tree: **edited** (after the last round, against a build of the edited tree
into a second folder) and **restored** (every file back to its original bytes
and refreshed once more, against the first build). Per comparison: how many
questions' top 10 differ in order, in membership, and the largest relative
score difference of a hit present in both (|a - b| / max(a, b)). A refresh
that ranks as a fresh build gives 0 / 0 / 0.0000.

Git checkouts (``make_checkouts.sh`` with ``HISTORY=1``) keep their history:
the edits stay uncommitted, so both builds index the same history.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common.devsets import checkout_name, engine_state, load_queries
from bench.common.paths import SHARED, data_default
from bench.common.stats import table
from repolens import service
from repolens.store.handles import readers

TOP = 10
BUDGET = 1_000_000  # no hit of the ten is cut by the reply budget
COMMENT = {".py": "#", ".rs": "//", ".go": "//", ".ts": "//", ".tsx": "//", ".js": "//", ".java": "//"}


def top10(root: Path, index_dir: Path, questions: list[str]) -> list[list[tuple[str, int, int, float]]]:
    """Each question's first ``TOP`` hits as (path, start, end, score)."""
    readers.clear()  # a reader opened before a refresh must not answer after it
    out = []
    for text in questions:
        reply = service.search_code(
            text, root, index_dir=index_dir, top_k=TOP, max_chars=BUDGET, mode="json", auto_index=False
        )
        hits = json.loads(reply.text)["hits"]
        out.append([(h["path"], h["start_line"], h["end_line"], h["score"]) for h in hits])
    return out


def compare(fresh: list[list[tuple]], other: list[list[tuple]]) -> tuple[int, int, float]:
    """(questions whose order differs, whose membership differs, max relative score difference)."""
    order = members = 0
    worst = 0.0
    for a, b in zip(fresh, other, strict=True):
        keys_a, keys_b = [h[:3] for h in a], [h[:3] for h in b]
        order += keys_a != keys_b
        members += set(keys_a) != set(keys_b)
        scores_b = {h[:3]: h[3] for h in b}
        for *key, score in a:
            if tuple(key) in scores_b:
                other_score = scores_b[tuple(key)]
                worst = max(worst, abs(score - other_score) / max(abs(score), abs(other_score), 1e-9))
    return order, members, worst


def source_files(root: Path) -> list[str]:
    """Tracked files a comment line can be appended to without breaking their language."""
    if (root / ".git").exists():
        proc = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True)
        names = proc.stdout.splitlines()
    else:
        names = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    return sorted(n for n in names if Path(n).suffix in COMMENT and (root / n).is_file())


def edit_round(root: Path, n: int, pool: list[str], cited: list[str], files: int, rng: random.Random) -> None:
    """Append one comment line to ``files`` files, half of them among ``cited`` when it has as many."""
    near = rng.sample(cited, min(len(cited), files // 2))
    rest = [p for p in pool if p not in near]
    for rel in near + rng.sample(rest, min(len(rest), files - len(near))):
        path = root / rel
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"\n{COMMENT[path.suffix]} refresh drift bench: edit round {n}\n")


def measure(src: Path, questions: list[str], args: argparse.Namespace) -> list[str]:
    """One checkout: the table row of both comparisons."""
    rng = random.Random(f"{args.seed}:{src.name}")
    with tempfile.TemporaryDirectory(prefix="repolens-drift-") as tmp:
        root, main_dir, edited_dir = Path(tmp) / "repo", Path(tmp) / "index", Path(tmp) / "index-edited"
        shutil.copytree(src, root, symlinks=True)
        service.index_repo(root, index_dir=main_dir)
        fresh = top10(root, main_dir, questions)
        pool = source_files(root)
        cited = sorted({h[0] for hits in fresh for h in hits} & set(pool))
        originals = {rel: (root / rel).read_bytes() for rel in pool}
        for n in range(1, args.rounds + 1):
            edit_round(root, n, pool, cited, args.files, rng)
            service.index_repo(root, index_dir=main_dir)
            print(f"  {src.name}: round {n}/{args.rounds} refreshed", file=sys.stderr, flush=True)
        refreshed_edited = top10(root, main_dir, questions)
        service.index_repo(root, index_dir=edited_dir)
        edited = compare(top10(root, edited_dir, questions), refreshed_edited)
        changed = [rel for rel, data in originals.items() if (root / rel).read_bytes() != data]
        for rel in changed:
            (root / rel).write_bytes(originals[rel])
        service.index_repo(root, index_dir=main_dir)
        restored = compare(fresh, top10(root, main_dir, questions))
        readers.clear()
    cells = [src.name, str(len(questions)), str(len(changed))]
    for order, members, worst in (edited, restored):
        cells += [str(order), str(members), f"{worst:.4f}"]
    return cells


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="*", help="checkout folder names (default: the identifier set's)")
    ap.add_argument(
        "--checkouts",
        type=Path,
        default=data_default("checkouts-git"),
        help="folder of development checkouts (default $REPOLENS_BENCH_DATA/checkouts-git)",
    )
    ap.add_argument("--data", type=Path, default=SHARED)
    ap.add_argument("--rounds", type=int, default=10, help="edit-and-refresh rounds")
    ap.add_argument("--files", type=int, default=25, help="files edited per round")
    ap.add_argument("--seed", type=int, default=27)
    args = ap.parse_args(argv)
    queries = load_queries(args.data, None, None)
    default = dict.fromkeys(checkout_name(q) for q in queries if q["set"] == "identifiers")
    names = args.checkout or list(default)
    print(f"$ {shlex.join(['python', *sys.argv])}\n\n{engine_state()}\n")
    rows = []
    for name in names:
        texts = (q[inp] for q in queries if checkout_name(q) == name for inp in ("query", "title"))
        questions = list(dict.fromkeys(texts))  # an identifier's title is its query
        if not (args.checkouts / name / ".checkout_ok").is_file() or not questions:
            sys.exit(f"{args.checkouts / name}: no finished checkout with development questions")
        print(f"{name}: {len(questions)} questions", file=sys.stderr, flush=True)
        rows.append(measure(args.checkouts / name, questions, args))
    head = ["checkout", "questions", "files changed"]
    measures = ("order differs", "set differs", "max rel score")
    head += [f"{c}: {m}" for c in ("edited", "restored") for m in measures]
    print(table(head, rows))
    print(
        f"\n{args.rounds} rounds of {args.files} edited files, a refresh after each; edited = after the last "
        "round against a fresh build of the edited tree; restored = files back to their original bytes and "
        "refreshed, against the first fresh build. Questions: query and title inputs, top 10 each."
    )


if __name__ == "__main__":
    main()
