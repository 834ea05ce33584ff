"""Indexing a second branch, and comparing two, on a corpus made into branches.

    python -m bench.indexing branches CORPUS_DIR [--vector-files N] [--runs N]

CORPUS_DIR is copied into a temporary git repository (branch ``main``);
each variant branch is a git worktree where 1% or 10% of the indexed files
are changed (a comment line appended). For each:

* lexical: ``main`` is indexed from nothing, then the branch is indexed
  with ``main`` as its sibling (unchanged files copied) and, as the
  reference, on its own; the cost ratio is branch time / main time;
* vectors: the same on the first ``--vector-files`` files only, with the
  bundled embedding model (offline; embedding the whole corpus takes
  ~11 minutes on two cores);
* compare: ``compare_branches`` of main against the branch over every
  file (``paths=["."]``) and for a few queries, warm, p50 / p95 of ``--runs``.

Prints markdown tables and the command line. Timings on a shared machine
are noisy: compare within one run only.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.stats import pct
from repolens import service
from repolens.branches.registry import EMPTY
from repolens.index.build import build_index
from repolens.index.report import IndexReport
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.base import Store
from repolens.store.handles import readers

RATES = (0.01, 0.10)
QUERIES = ("queryset filter exclude lookup", "template render context variable", "solve polynomial roots")
CHANGE = "\n# changed on this branch\n"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args], cwd=root, check=True, capture_output=True
    )


def make_main(corpus: Path, dest: Path, limit: int | None) -> Path:
    """``dest``: a git repository on ``main`` holding the corpus (its first ``limit`` files)."""
    files = sorted(p for p in corpus.rglob("*") if p.is_file() and ".git" not in p.parts)
    for path in files[:limit] if limit else files:
        target = dest / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "main")
    return dest


def make_branch(main: Path, store: Store, rate: float) -> tuple[Path, int]:
    """A worktree of ``main`` where ``rate`` of the indexed files are changed (every n-th path)."""
    name = f"b{round(rate * 100)}pct"
    branch = main.parent / name
    git(main, "worktree", "add", "-q", "-b", name, str(branch))
    reader = store.open_reader()
    paths = sorted(reader.paths())
    reader.close()
    step = max(1, round(1 / rate))
    changed = paths[::step]
    for path in changed:
        with open(branch / path, "a", encoding="utf-8") as fh:
            fh.write(CHANGE)
    return branch, len(changed)


def timed_index(
    root: Path, index_dir: Path, vectors: bool, siblings: list[Store]
) -> tuple[float, IndexReport, Store]:
    store = open_store(root, index_dir)
    settings = load_settings(root, {"vectors": vectors})
    started = time.perf_counter()
    report = build_index(root, store=store, settings=settings, siblings=siblings)
    return time.perf_counter() - started, report, store


def indexing_rows(
    main: Path, tmp: Path, vectors: bool, alone: bool = True
) -> tuple[list[str], dict[float, tuple[Path, Store]]]:
    tag = "vectors" if vectors else "lexical"
    first, report, main_store = timed_index(main, tmp / f"idx-{tag}-main", vectors, [])
    rows = [
        f"| {tag} | main (from nothing) | {report.files} | - | {report.chunks} | "
        f"{report.vectors.embedded if report.vectors else '-'} | {first:.1f} s | 1.00 |"
    ]
    branches = {}
    for rate in RATES:
        branch, changed = make_branch(main, main_store, rate)
        if alone:
            took, rep, _ = timed_index(branch, tmp / f"idx-{tag}-{rate}-alone", vectors, [])
            alone_row = f"| {tag} | {rate:.0%} changed ({changed} files), alone | {rep.files} | - | - | - "
            rows.append(f"{alone_row}| {took:.1f} s | {took / first:.2f} |")
        took, rep, store = timed_index(branch, tmp / f"idx-{tag}-{rate}", vectors, [main_store])
        embedded = rep.vectors.embedded if rep.vectors else "-"
        copied = f"{rep.files_reused} files, {rep.chunks_reused} chunks"
        rows.append(
            f"| {tag} | {rate:.0%} changed, from main | {rep.files} | {copied} | {rep.chunks} | {embedded} "
            f"| {took:.1f} s | **{took / first:.2f}** |"
        )
        branches[rate] = (branch, store)
    return rows, branches


def compare_rows(
    main: Path, main_dir: Path, branches: dict[float, tuple[Path, Store]], runs: int
) -> list[str]:
    rows = []
    for rate, (branch, store) in branches.items():
        roots = {"corpus@main": main, "corpus@branch": branch}
        dirs = {"corpus@main": main_dir, "corpus@branch": Path(store.location)}
        compare = functools.partial(service.compare_branches, "corpus", roots, EMPTY, index_dir_of=dirs.get)
        for label, kwargs in (
            ("every file", {"paths": ["."]}),
            *((f"query {q!r}", {"query": q}) for q in QUERIES),
        ):
            compare(**kwargs)  # warm: readers open, caches filled
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                result = compare(**kwargs)
                times.append((time.perf_counter() - started) * 1000)
            counts = ", ".join(f"{n} {s}" for s, n in result.counts().items())
            rows.append(
                f"| {rate:.0%} | {label} | {counts} | {pct(times, 0.5):.1f} / {pct(times, 0.95):.1f} ms |"
            )
    readers.clear()
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--vector-files", type=int, default=600, help="Files of the corpus for the vectors case.")
    ap.add_argument("--runs", type=int, default=10, help="Timed compare_branches calls per case.")
    ap.add_argument("--no-vectors", action="store_true", help="Skip the vectors case.")
    ap.add_argument("--no-lexical", action="store_true", help="Skip the lexical and compare cases.")
    ap.add_argument("--no-alone", action="store_true", help="Vectors: skip indexing each branch on its own.")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="repolens-branch-perf-"))
    try:
        lexical: list[str] = []
        compared: list[str] = []
        if not args.no_lexical:
            main_root = make_main(args.corpus, tmp / "lexical" / "main", None)
            lexical, branches = indexing_rows(main_root, tmp, vectors=False)
            compared = compare_rows(main_root, tmp / "idx-lexical-main", branches, args.runs)
        vector_rows: list[str] = []
        if not args.no_vectors:
            small = make_main(args.corpus, tmp / "vectors" / "main", args.vector_files)
            vector_rows, _ = indexing_rows(small, tmp, vectors=True, alone=not args.no_alone)
    finally:
        readers.clear()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"$ python {' '.join(sys.argv)}\n")
    print("| index | branch | files | copied from main | chunks | embedded | time | / main |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lexical + vector_rows))
    if compared:
        print("\n| changed | compare_branches | statuses | p50 / p95 |")
        print("|---|---|---|---|")
        print("\n".join(compared))


if __name__ == "__main__":
    main()
