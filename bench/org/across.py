"""Cross-repository search over hundreds of indexes in one PostgreSQL database,
when the repositories that filled one are no longer at hand (issue 30 item 3).

    python -m bench.org across CHECKOUT [CHECKOUT ...] [--indexes 200] [--stages 16,50,200]
                               [--rounds 1] [--data DIR]

``bench.org scale`` measures an organisation built from every development
checkout and mined snapshot; this one measures only the search across
repositories, on a database filled from the checkouts given: INDEXES
indexes, the checkouts in turn, each turn a hard-linked copy of the tree
under a folder name of its own (``NAME-2``: the key of its index, and a
different path, so a different repository to the store). The copies are
exact, so which 16 a search probes its way to says nothing about ranking
(``bench.org ranking`` measures that): this is the time of asking N
indexes, each with a real repository's statistics, history and size.

It keeps its PostgreSQL (``org_scale.py``'s settings and seed) and the
copies in DATA (default $REPOLENS_BENCH_DATA/pg-across, outside the
repository), builds each index with ``repolens index ROOT --store URL`` in a
process of its own (resumable: the database says which are published),
runs VACUUM ANALYZE, then at each stage asks every development question
(commit, issue and identifier sets) about the checkouts' repositories of
the first N indexes in one ``service.search_across`` call: once to warm,
``--rounds`` timed, then one pass with every statement timed
(``org_timing.across``). Prints a markdown table and writes
DATA/results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.common.paths import SHARED, data_default
from bench.org.scale import Checkout, build_up_to, checkouts_in, log, published, start_server
from bench.org.timing import across

DATA = data_default("pg-across")
QUESTION_FILES = ("commits-dev.json", "swebench-dev.json", "identifiers-dev.json")


def copies(given: list[Checkout], count: int, trees: Path) -> list[Checkout]:
    """``count`` checkouts: the given ones in turn, each turn after the first
    a hard-linked copy named ``NAME-TURN``."""
    out = []
    for i in range(count):
        original = given[i % len(given)]
        turn = i // len(given)
        if turn == 0:
            out.append(original)
            continue
        name = f"{original.name}-{turn}"
        root = trees / name
        if not root.is_dir():
            partial = trees / f"{name}.partial"
            subprocess.run(["rm", "-rf", str(partial)], check=True)
            subprocess.run(["cp", "-al", str(original.root), str(partial)], check=True)
            partial.rename(root)
        out.append(Checkout(name, root, original.source))
    return out


def questions_about(given: list[Checkout]) -> list[str]:
    repos = {c.name.split("@", 1)[0].replace("__", "/", 1) for c in given}
    texts = []
    for name in QUESTION_FILES:
        path = SHARED / name
        if path.is_file():
            texts += [q["query"] for q in json.loads(path.read_text()) if q["repo"] in repos]
    if not texts:
        raise SystemExit(f"no development question is about {', '.join(sorted(repos))} (looked in {SHARED})")
    return texts


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("checkouts", nargs="+", type=Path, help="checkout folders (named OWNER__NAME@COMMIT)")
    ap.add_argument("--indexes", type=int, default=200)
    ap.add_argument("--stages", default="16,50,200", help="how many of the indexes each search asks")
    ap.add_argument("--rounds", type=int, default=1, help="timed calls per question")
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args(argv)
    data: Path = args.data
    (data / "trees").mkdir(parents=True, exist_ok=True)
    wanted = {p.resolve() for p in args.checkouts}
    given = [c for c in checkouts_in(sorted({p.resolve().parent for p in wanted})) if c.root in wanted]
    if len(given) != len(args.checkouts):
        raise SystemExit("each checkout must be a folder named OWNER__NAME@COMMIT")
    order = copies(given, args.indexes, data / "trees")
    texts = questions_about(given)
    cluster = start_server(data)
    url = cluster.url("org")
    try:
        build_up_to(args.indexes, order, url, "org", data, 0, [])
        have = published(url)
        if len(have) < args.indexes:
            raise SystemExit(
                f"the database holds {len(have)} indexes of {args.indexes}: see {data}/builds.jsonl"
            )
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        from repolens.store import Binding, bind_root

        for c in order:
            bind_root(c.root, Binding(c.name, "bench.org across", url))
        results = {"at": time.strftime("%Y-%m-%d %H:%M"), "command": "python -m bench.org across "
                   + " ".join(sys.argv[1:]), "questions": len(texts), "load_before": os.getloadavg(),
                   "stages": {}}  # fmt: skip
        for stage in (int(s) for s in args.stages.split(",")):
            log(f"across {stage} indexes, {len(texts)} questions")
            roots = {c.name: c.root for c in order[:stage]}
            results["stages"][str(stage)] = across(roots, texts, url, args.rounds)
        results["load_after"] = os.getloadavg()
        (data / "results.json").write_text(json.dumps(results, indent=1))
    finally:
        cluster.stop()
    report(results)


def report(results: dict) -> None:
    """Per stage: latency, and where a search's time goes. A repository's part
    is its full search, each in one of the pool's threads (their sum exceeds
    the wall time by the threads' overlap); the probe of a database's
    repositories is one statement in the calling thread."""
    print(f"command: {results['command']}")
    print(f"{results['questions']} questions; load average {results['load_before'][0]:.1f} before,"
          f" {results['load_after'][0]:.1f} after")  # fmt: skip
    print(
        "\n| indexes asked | p50 ms | p95 ms | full searches | parts' ms, summed"
        " | process CPU ms | statements | their ms | of which the probes' (n, ms) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for stage, r in results["stages"].items():
        p = r["profile"]
        held = [s for s in p["shapes"] if "ANY(%(t)s)" in s["sql"]]  # held_terms, one repository or many
        print(
            f"| {stage} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {p['repositories']:.0f} |"
            f" {p['repository_ms']:.0f} | {p['process_cpu_ms']:.0f} |"
            f" {sum(s['per_search'] for s in p['shapes']):.0f} | {p['statements_ms']:.0f} |"
            f" {sum(s['per_search'] for s in held):.0f}, {sum(s['ms_per_search'] for s in held):.0f} |"
        )


if __name__ == "__main__":
    main()
