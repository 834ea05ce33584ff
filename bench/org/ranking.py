"""Scores across repositories: each development question asked of its own
repository alone, and of it among many others at once (issue 30 item 2).

    python -m bench.org ranking --checkouts DIR --index-cache DIR
        [--others-checkouts DIR --others-cache DIR] [--others N] [--sets ...]
        [--input query|title|both] [--merges learned,relative] [--limit N] [--out results.json]

Every question of ``shared/bench/{swebench,commits,identifiers}-dev.json`` is
asked twice with the default settings: of its own checkout alone
(``service.search_code``), and of its own checkout plus the *others*
(``service.search_across``, as ``search_code`` with ``repo="*"`` does:
each repository searched once, each merge ordering the same answers): one
checkout of every other repository of the development set, and one snapshot
of every repository of ``--others-checkouts`` (the mined training snapshots,
bench.mine_questions), at most ``--others`` of them. A checkout of the
question's own repository at another commit is never among the others (it
would be the same code twice).

Reported per set and input, for each *merge* (how hits of several
repositories are ordered; ``learned``: the engine's, by the learned model's
own score, :func:`repolens.search.across.cross_score`; ``relative``: by each
repository's shown score, best = 1 in each, the naive merge the engine does
not do, measured to show why; ``coverage=R/F``: the engine's with other
weights of the repository's and the file's coverage of the question; a
name ending ``-history``: without the history's commits in the coverage):

* own-first: the first cited file is the question's own repository's;
* Acc@1 / Acc@5 / Line@5 across, beside the same alone (another
  repository's file is never gold), and the drop in points;
* the reply's characters and latency p50/p95 (the across search asks every
  repository, a few at once: ``repolens.search.fanout.ACROSS_THREADS``).

Indexes come from the caches ``bench.devset`` fills (built there when
missing, with the same identity). A measuring instrument: nothing is tuned.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from bench.common import devsets
from bench.common.metrics import Answer, Hit, score
from bench.common.stats import pct
from repolens import service
from repolens.search import across
from repolens.search.fanout import LABEL_SEP, Target
from repolens.search.filters import Filters
from repolens.settings import load_settings
from repolens.store.handles import readers

TARGETS = {"own_first": 0.90, "acc5_drop_points": 3.0}


def repo_of(checkout: str) -> str:
    return checkout.partition("@")[0]


def cache_dir(root: Path, cache: Path) -> Path:
    """The index folder ``bench.devset`` keeps for ``root`` (built when missing)."""
    identity = devsets.index_identity(load_settings(root), history=(root / ".git").exists())
    index_dir = cache / root.name / devsets.identity_key(identity)
    status = devsets.ensure_index(root, index_dir, identity, reindex=False)
    if not status.ok:
        raise SystemExit(f"{root.name}: index {status.state}: {status.error}")
    return index_dir


def others_for(own: str, pool: list[Target], limit: int | None) -> list[Target]:
    """One checkout of every other repository in ``pool`` (first by name)."""
    seen: set[str] = {repo_of(own)}
    out = []
    for t in pool:
        if repo_of(t.key) not in seen:
            seen.add(repo_of(t.key))
            out.append(t)
    return out[:limit] if limit else out


def across_answer(reply: service.SearchReply, own: str, latency: float) -> tuple[Answer, bool]:
    """The reply as the metrics read it: the own repository's paths unlabelled,
    every other's kept labelled (never gold); and whether the first cited
    file is the own repository's."""
    answer = devsets.reply_answer(reply, latency)
    hits = []
    for h in answer.hits:
        key, _, path = h.path.partition(LABEL_SEP)
        hits.append(Hit(path if key == own else h.path, h.ranges, h.shown, h.pointer))
    first = next((h.path for h in answer.hits), "")
    return Answer(hits, answer.chars, answer.latency_ms, extra=answer.extra), first.startswith(own + ":")


@contextlib.contextmanager
def merge(name: str) -> Iterator[None]:
    """The order of a search across: the engine's, or the naive one measured beside it."""
    saved = across.cross_score, across.CALIBRATION
    if name == "relative":
        across.cross_score = lambda hit: math.log(max(hit.score, 1e-300))
        across.CALIBRATION = across.Calibration(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    elif name.startswith("coverage="):
        repo, _, file = name.partition("=")[2].partition("/")
        across.CALIBRATION = across.CALIBRATION._replace(coverage=float(repo), file_coverage=float(file or 0))
    try:
        yield
    finally:
        across.cross_score, across.CALIBRATION = saved


def evidence_of(q: dict, inp: str, own: str, answers) -> dict:
    """What a calibration is learned from, for one question: per repository
    that answered, its evidence (:func:`repolens.search.across.repository_evidence`),
    whether it is the question's own, and its hits (cross score, the log of
    the file's coverage, whether the file is gold)."""
    from repolens.search.query import parse_query

    answered = [(a.target.key, a.value) for a in answers if a.value is not None]
    parsed = parse_query(q[inp])
    per_repo = [(key, asked.outcome.hits) for key, asked in answered]
    history = {key: asked.history for key, asked in answered}
    mass, files, held = across._term_mass(per_repo, parsed, history)
    share = across.coverage(per_repo, mass, held)
    evidence = across.repository_evidence(per_repo, parsed, share)
    total = sum(mass.values()) or 1.0
    gold = set(q["gold_files"])
    repos = []
    for key, hits in per_repo:
        rows = []
        for h in hits:
            file_share = sum(mass[t] for t in files[(key, h.chunk.path)]) / total if mass else 1.0
            rows.append([
                round(across.cross_score(h), 5),
                round(math.log(max(file_share, across.MIN_COVERAGE)), 5),
                h.chunk.path,
                key == own and h.chunk.path in gold,
            ])  # fmt: skip
        repos.append({"key": key, "own": key == own, "evidence": evidence[key], "hits": rows})
    return {
        "id": q["id"],
        "set": q["set"],
        "repo": q["repo"],
        "input": inp,
        "gold": len(gold),
        "repos": repos,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    devsets.add_checkout_options(ap)
    ap.add_argument(
        "--others-checkouts", type=Path, help="more repositories' checkouts (the mined snapshots)"
    )
    ap.add_argument("--others-cache", type=Path, help="their index cache")
    ap.add_argument("--others", type=int, default=0, help="at most this many other repositories (0: all)")
    ap.add_argument("--sets", default="swebench,commits,identifiers")
    ap.add_argument("--input", choices=["query", "title", "both"], default="query")
    ap.add_argument(
        "--merges", default="learned,relative", help="comma list of learned, relative, coverage=W"
    )
    ap.add_argument("--files", default=",".join(devsets.DATA_FILES), help="question files in --data")
    ap.add_argument("--sample", type=int, help="every n-th question only (a quicker pass)")
    ap.add_argument(
        "--full",
        type=int,
        help="search in full at most this many repositories (default: the engine's FULL_SEARCHES)",
    )
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--collect",
        type=Path,
        help="write each question's per-repository evidence and hits here (to --fit a calibration on)",
    )
    ap.add_argument(
        "--fit",
        type=Path,
        help="learn the calibration from a --collect file, repositories held out; no search is run",
    )
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args(argv)
    if args.fit:
        from bench.common.calibration import fit_report

        fit_report(json.loads(args.fit.read_text()), args.folds)
        return
    devsets.checked_folders(args)
    sets = [s for s in args.sets.split(",") if s]
    queries = devsets.load_queries(args.data, None, None, sets, tuple(args.files.split(",")))
    queries = queries[:: args.sample or 1][: args.limit]
    inputs = ["query", "title"] if args.input == "both" else [args.input]
    merges = [m for m in args.merges.split(",") if m]
    if args.full:
        across.FULL_SEARCHES = args.full

    def target(folder: Path, cache: Path) -> Target:
        return Target(folder.name, folder, cache_dir(folder, cache))

    own_names = sorted({devsets.checkout_name(q) for q in queries})
    dev_all = sorted(p.name for p in args.checkouts.iterdir() if (p / ".checkout_ok").is_file())
    pool_names = [n for n in dev_all if n in own_names or repo_of(n) not in {repo_of(o) for o in own_names}]
    pool = [target(args.checkouts / n, args.index_cache) for n in sorted({*own_names, *pool_names})]
    own_targets = {t.key: t for t in pool}
    if args.others_checkouts:
        mined = sorted(
            p for p in args.others_checkouts.iterdir() if (p / ".checkout_ok").is_file() or p.is_dir()
        )
        firsts: dict[str, Path] = {}
        for p in mined:
            firsts.setdefault(repo_of(p.name), p)
        pool += [target(p, args.others_cache or args.index_cache) for p in firsts.values()]
    # The first checkout of each repository stands for it among the others.
    firsts_pool = {}
    for t in pool:
        firsts_pool.setdefault(repo_of(t.key), t)
    others_pool = list(firsts_pool.values())
    print(
        f"{len(queries)} questions, {len(own_names)} own checkouts, {len(others_pool)} repositories",
        file=sys.stderr,
    )

    rows = []
    collected: list[dict] = []
    for i, q in enumerate(queries, 1):
        own = devsets.checkout_name(q)
        mine = own_targets[own]
        others = others_for(own, others_pool, args.others)
        for inp in inputs:
            start = time.perf_counter()
            alone = devsets.reply_answer(
                service.search_code(q[inp], mine.root, index_dir=mine.index_dir, auto_index=False),
                (time.perf_counter() - start) * 1000,
            )
            row = {
                "id": q["id"],
                "set": q["set"],
                "input": inp,
                "others": len(others),
                "alone": score(alone, q),
            }
            # Every repository searched once; each merge orders the same answers (the
            # latency is that of the whole search_across: the searches and one merge).
            start = time.perf_counter()
            answers, notes = service.ask_across(q[inp], [mine, *others], Filters(), {})
            asked = (time.perf_counter() - start) * 1000
            if args.collect:
                collected.append(evidence_of(q, inp, own, answers))
            for name in merges:
                given = answers
                if name.endswith("-history"):  # the same without the history's commits in the coverage
                    given = [
                        replace(a, value=a.value._replace(history=frozenset())) if a.value else a
                        for a in answers
                    ]
                with merge(name.removesuffix("-history")):
                    start = time.perf_counter()
                    reply = service.reply_across(q[inp], given, Filters(), "packet", notes=notes)
                    took = asked + (time.perf_counter() - start) * 1000
                answer, first = across_answer(reply, own, took)
                row[name] = {**score(answer, q), "own_first": float(first), "notes": list(reply.notes)}
            rows.append(row)
        if i % 20 == 0:
            print(f"[{i}/{len(queries)}]", file=sys.stderr, flush=True)
    readers.clear()
    if args.collect:
        args.collect.write_text(json.dumps(collected))
    report(rows, merges, inputs, args)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


def report(rows: list[dict], merges: list[str], inputs: list[str], args: argparse.Namespace) -> None:
    print(f"$ python -m bench.org ranking {' '.join(sys.argv[1:])}\n")
    others = sorted({r["others"] for r in rows})
    print(
        f"{len(rows)} questions x inputs; each asked of its own repository alone and among {others} others; "
        f"at most {across.FULL_SEARCHES} searched in full (FULL_SEARCHES).\n"
    )
    head = "| input | set | merge | n | own first | Acc@1 alone -> across | Acc@5 alone -> across (drop) | "
    head += "Line@5 alone -> across | chars p50 | ms p50 alone | ms p50 / p95 across |"
    print(head)
    print("|" + "---|" * 11)
    for inp in inputs:
        for s in [*sorted({r["set"] for r in rows}), "all"]:
            part = [r for r in rows if r["input"] == inp and (s == "all" or r["set"] == s)]
            if not part:
                continue
            for m in merges:

                def mean(sys_: str, key: str, part: list[dict] = part) -> float:
                    return statistics.fmean(r[sys_][key] for r in part)

                drop = (mean("alone", "acc5") - mean(m, "acc5")) * 100
                ms_alone = [r["alone"]["latency_ms"] for r in part]
                ms = [r[m]["latency_ms"] for r in part]
                chars = statistics.median(r[m]["chars"] for r in part)
                print(
                    f"| {inp} | {s} | {m} | {len(part)} | {mean(m, 'own_first'):.2f} "
                    f"| {mean('alone', 'acc1'):.2f} -> {mean(m, 'acc1'):.2f} "
                    f"| {mean('alone', 'acc5'):.2f} -> {mean(m, 'acc5'):.2f} ({drop:+.1f}) "
                    f"| {mean('alone', 'line5'):.2f} -> {mean(m, 'line5'):.2f} | {chars:.0f} "
                    f"| {statistics.median(ms_alone):.0f} "
                    f"| {statistics.median(ms):.0f} / {pct(ms, 0.95):.0f} |"
                )
    print(
        f"\ntargets: own first >= {TARGETS['own_first']:.2f}; "
        f"Acc@5 within {TARGETS['acc5_drop_points']:g} points"
    )


if __name__ == "__main__":
    main()
