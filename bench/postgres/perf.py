"""Local store vs PostgreSQL store on one corpus, same machine, same run.

    python -m bench.postgres perf CORPUS [--queries N] [--rounds R] [--out FILE.json]

Indexes CORPUS (a folder) into a fresh local index and into a throw-away
PostgreSQL 18 + pgvector (tests/pgserver.py, loopback), then prints:

* index time and size (local folder; PostgreSQL: the database minus an
  empty one, right after the build and after the ``VACUUM`` autovacuum would
  run within a minute, which drops the build's staging rows; per table);
* warm search latency, p50/p95: the 120 development questions' full texts
  asked of CORPUS with ``search_code`` in process, default (packet) mode.
  Each question is asked once of each store to warm, then timed ``--rounds``
  times, the two stores alternating question by question (ABBA), so a
  change in the shared machine's load falls on both alike;
* parity: questions whose top 5 (path, start, end) are identical in both,
  and how many of them found anything (an empty top 5 is trivially equal);
* replica lag: after a refresh of one edited file on the primary, the time
  until a streaming replica (``pg_basebackup``) has replayed it;
* the load average before and after (the machine is shared).

The questions were written for the development checkouts, not for CORPUS:
on a corpus that holds some of those repositories (corpus-1m has sympy,
corpus-multi has sphinx, fd, cobra, hono and gson) those questions are
about code that is there; the others still parse to their words and score
every posting of them, which is the work whose cost is measured. The table
gives p50 for both groups (by whether a question's repository name is a
folder name in CORPUS).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.common.paths import SHARED
from bench.common.stats import ms_pct

BENCH_SETTINGS = {
    "shared_buffers": "512MB",
    "work_mem": "64MB",
    "maintenance_work_mem": "256MB",
    "jit": "off",
}
SIZE_SQL = "SELECT pg_database_size(current_database())"
TABLES_SQL = (
    "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n"
    " ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC"
)


def questions(limit: int) -> list[dict]:
    found = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        found += json.loads((SHARED / name).read_text())
    return found[:limit]


def about_corpus(question: dict, corpus: Path) -> bool:
    """Whether the question's repository is in the corpus (a folder named after it)."""
    owner, name = question["repo"].split("/")
    folders = {p.name.split("@")[0].lower() for p in [corpus, *corpus.iterdir()] if p.is_dir()}
    return name.lower() in folders or f"{owner}__{name}".lower() in folders


def top5(reply) -> list[tuple[str, int, int]]:
    data = reply.to_json()
    ranked = [*data.get("hits", []), *data.get("omitted", [])]
    return [(h["path"], h["start_line"], h["end_line"]) for h in ranked[:5]]


def timed_searches(root: Path, texts: list[str], sides: dict[str, Path | None], rounds: int) -> dict:
    """Per side: every timing (seconds) by question, and each question's top 5.

    ``sides`` maps a name to the ``index_dir`` of a local store, or None for
    the configured (PostgreSQL) store. Sides alternate per question, ABBA."""
    from repolens import service

    names = list(sides)
    times: dict[str, list[list[float]]] = {n: [] for n in names}
    tops: dict[str, list] = {n: [] for n in names}
    for i, text in enumerate(texts):
        for name in names:
            tops[name].append(top5(service.search_code(text, root, index_dir=sides[name], auto_index=False)))
            times[name].append([])
        for r in range(rounds):
            for name in names if (i + r) % 2 == 0 else reversed(names):
                started = time.perf_counter()
                service.search_code(text, root, index_dir=sides[name], auto_index=False)
                times[name][-1].append(time.perf_counter() - started)
    return {"times": times, "tops": tops}


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--queries", type=int, default=120)
    ap.add_argument("--rounds", type=int, default=3, help="timed calls per question and store")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    from repolens import service
    from repolens.store.handles import readers
    from repolens.store.postgres.connect import close_pools
    from tests.pgserver import PgHarness

    asked = questions(args.queries)
    texts = [q["query"] for q in asked]
    inside = [about_corpus(q, args.corpus) for q in asked]
    work = Path(tempfile.mkdtemp(prefix="pg-perf-"))
    root = work / args.corpus.name
    shutil.copytree(args.corpus, root, symlinks=True)
    local_dir = work / "local"
    harness = PgHarness()
    report: dict = {"corpus": str(args.corpus), "queries": len(texts), "cpus": os.cpu_count()}
    report["load_before"] = os.getloadavg()
    try:
        primary = harness.primary(BENCH_SETTINGS)
        db = harness.create_database(primary)
        started = time.perf_counter()
        built = service.index_repo(root, index_dir=local_dir)
        report["local"] = {"index_s": time.perf_counter() - started, "chunks": built.chunks}
        report["local"]["bytes"] = folder_bytes(local_dir)

        os.environ["REPOLENS_STORE"] = db.url
        started = time.perf_counter()
        built = service.index_repo(root)
        report["postgres"] = {"index_s": time.perf_counter() - started, "chunks": built.chunks}
        empty = harness.create_database(primary)
        with empty.connect() as conn:
            base = conn.execute(SIZE_SQL).fetchone()[0]
        with db.connect() as conn:
            report["postgres"]["bytes_built"] = conn.execute(SIZE_SQL).fetchone()[0] - base
            # What autovacuum does within a minute: the build's deleted staging rows go.
            conn.execute("VACUUM")
            report["postgres"]["bytes"] = conn.execute(SIZE_SQL).fetchone()[0] - base
            report["postgres"]["tables"] = dict(conn.execute(TABLES_SQL).fetchall())
        report["load_searching"] = os.getloadavg()
        found = timed_searches(root, texts, {"local": local_dir, "postgres": None}, args.rounds)
        for name in ("local", "postgres"):
            per_q = found["times"][name]
            flat = [t for ts in per_q for t in ts]
            ins = [t for ts, ok in zip(per_q, inside, strict=True) if ok for t in ts]
            outs = [t for ts, ok in zip(per_q, inside, strict=True) if not ok for t in ts]
            report[name].update(
                p50_ms=ms_pct(flat, 0.5), p95_ms=ms_pct(flat, 0.95),
                p50_inside_ms=ms_pct(ins, 0.5), p50_outside_ms=ms_pct(outs, 0.5),
            )  # fmt: skip
        pairs = list(zip(found["tops"]["local"], found["tops"]["postgres"], strict=True))
        report["top5_identical"] = sum(a == b for a, b in pairs)
        report["top5_nonempty"] = sum(bool(a) for a, _ in pairs)
        report["questions_inside"] = sum(inside)

        replica = harness.replica(primary)
        victim = next(p for p in sorted(root.rglob("*.py")) if p.stat().st_size > 200)
        victim.write_text(victim.read_text() + "\n\ndef pg_perf_probe():\n    return 1\n")
        started = time.perf_counter()
        service.index_repo(root)
        refresh_s = time.perf_counter() - started
        lsn = primary.current_lsn()
        started = time.perf_counter()
        replica.wait_replayed(lsn, timeout=120)
        report["replica"] = {"refresh_s": refresh_s, "lag_after_refresh_s": time.perf_counter() - started}
    finally:
        os.environ.pop("REPOLENS_STORE", None)
        readers.clear()
        close_pools()
        harness.close()
        shutil.rmtree(work, ignore_errors=True)
    report["load_after"] = os.getloadavg()
    report["command"] = "python -m bench.postgres perf " + " ".join(sys.argv[1:])
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    print_report(report)


def print_report(report: dict) -> None:
    n, inside = report["queries"], report["questions_inside"]
    print(f"\n`{report['command']}`\n")
    loads = ", ".join(f"{report[k][0]:.1f}" for k in ("load_before", "load_searching", "load_after"))
    print(f"load average (1 min) before, while searching, after: {loads}; {report['cpus']} CPUs\n")
    print(
        f"| store | index s | chunks | size MB | search p50 ms | p95 ms"
        f" | p50, {inside} questions about the corpus | p50, the other {n - inside} |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ("local", "postgres"):
        r = report[name]
        cells = [
            f"{r['index_s']:.1f}", str(r["chunks"]), f"{r['bytes'] / 1e6:.1f}", f"{r['p50_ms']:.1f}",
            f"{r['p95_ms']:.1f}", f"{r['p50_inside_ms']:.1f}", f"{r['p50_outside_ms']:.1f}",
        ]  # fmt: skip
        print(f"| {name} | " + " | ".join(cells) + " |")
    local, pg = report["local"], report["postgres"]
    ratios = f"p50 {pg['p50_ms'] / local['p50_ms']:.2f}x, p95 {pg['p95_ms'] / local['p95_ms']:.2f}x"
    print(f"\nPostgreSQL / local: {ratios}")
    tables = ", ".join(f"{name} {size / 1e6:.1f}" for name, size in list(pg["tables"].items())[:6])
    print(
        f"PostgreSQL size {pg['bytes_built'] / 1e6:.1f} MB right after the build, {pg['bytes'] / 1e6:.1f} MB"
        f" after VACUUM; tables (MB, with indexes and TOAST): {tables}"
    )
    print(
        f"top-5 (path, span) identical: {report['top5_identical']}/{n}"
        f" ({report['top5_nonempty']} with a non-empty top 5)"
    )
    rep = report["replica"]
    lag_ms = rep["lag_after_refresh_s"] * 1000
    print(f"replica: refresh {rep['refresh_s']:.2f} s, replayed {lag_ms:.0f} ms after it")


if __name__ == "__main__":
    main()
