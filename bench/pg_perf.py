"""Local store vs PostgreSQL store on one corpus, same machine, same run.

    python bench/pg_perf.py CORPUS [--queries N] [--out FILE.json]

Indexes CORPUS (a folder) into a fresh local index and into a throw-away
PostgreSQL 18 + pgvector (tests/pgserver.py, loopback), then prints:

* index time and size (local folder; PostgreSQL database size);
* warm search latency (the 120 development questions, ``search_code`` in
  process, packet mode; each question once to warm, then timed once), p50/p95;
* parity: questions whose top 5 (path, start, end) are identical in both;
* replica lag: after a refresh of one edited file on the primary, the time
  until a streaming replica (``pg_basebackup``) has replayed it.
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

SHARED = Path("/work/shared/bench")
TESTS = Path(__file__).resolve().parents[1] / "tests"
BENCH_SETTINGS = {
    "shared_buffers": "512MB",
    "work_mem": "64MB",
    "maintenance_work_mem": "256MB",
    "jit": "off",
}


def questions(limit: int) -> list[str]:
    found = []
    for name in ("swebench-dev.json", "commits-dev.json"):
        found += [q["query"] for q in json.loads((SHARED / name).read_text())]
    return found[:limit]


def top5(reply) -> list[tuple[str, int, int]]:
    data = reply.to_json()
    ranked = [*data.get("hits", []), *data.get("omitted", [])]
    return [(h["path"], h["start_line"], h["end_line"]) for h in ranked[:5]]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] * 1000


def timed_searches(root: Path, texts: list[str]) -> tuple[list[float], list[list[tuple[str, int, int]]]]:
    from repolens import service

    times, tops = [], []
    for text in texts:
        service.search_code(text, root, auto_index=False)  # warm
        started = time.perf_counter()
        reply = service.search_code(text, root, mode="json", auto_index=False)
        times.append(time.perf_counter() - started)
        tops.append(top5(reply))
    return times, tops


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--queries", type=int, default=120)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(TESTS))
    from pgserver import PgHarness
    from repolens import service
    from repolens.store.handles import readers
    from repolens.store.postgres.connect import close_pools

    texts = questions(args.queries)
    work = Path(tempfile.mkdtemp(prefix="pg-perf-"))
    root = work / args.corpus.name
    shutil.copytree(args.corpus, root, symlinks=True)
    harness = PgHarness()
    report: dict = {"corpus": str(args.corpus), "queries": len(texts), "cpus": os.cpu_count()}
    try:
        primary = harness.primary(BENCH_SETTINGS)
        db = harness.create_database(primary)
        os.environ["REPOLENS_INDEX_DIR"] = str(work / "local")
        started = time.perf_counter()
        built = service.index_repo(root)
        report["local"] = {"index_s": time.perf_counter() - started, "chunks": built.chunks}
        report["local"]["bytes"] = folder_bytes(work / "local")
        local_times, local_tops = timed_searches(root, texts)
        del os.environ["REPOLENS_INDEX_DIR"]

        os.environ["REPOLENS_STORE"] = db.url
        started = time.perf_counter()
        service.index_repo(root)
        report["postgres"] = {"index_s": time.perf_counter() - started}
        with db.connect() as conn:
            report["postgres"]["bytes"] = conn.execute(
                "SELECT pg_database_size(current_database())"
            ).fetchone()[0]
            empty = harness.create_database(primary)
            with empty.connect() as e:
                report["postgres"]["bytes"] -= e.execute(
                    "SELECT pg_database_size(current_database())"
                ).fetchone()[0]
        pg_times, pg_tops = timed_searches(root, texts)
        same = sum(a == b for a, b in zip(local_tops, pg_tops, strict=True))
        for name, times in (("local", local_times), ("postgres", pg_times)):
            report[name].update(p50_ms=pct(times, 0.5), p95_ms=pct(times, 0.95))
        report["top5_identical"] = same

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
        readers.clear()
        close_pools()
        harness.close()
        shutil.rmtree(work, ignore_errors=True)
    report["command"] = "python bench/pg_perf.py " + " ".join(sys.argv[1:])
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    n = report["queries"]
    print(f"\n`{report['command']}`\n")
    print("| store | index s | size MB | search p50 ms | p95 ms |")
    print("|---|---|---|---|---|")
    for name in ("local", "postgres"):
        r = report[name]
        cells = [f"{r['index_s']:.1f}", f"{r['bytes'] / 1e6:.1f}", f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\ntop-5 (path, span) identical: {report['top5_identical']}/{n}")
    rep = report["replica"]
    lag_ms = rep["lag_after_refresh_s"] * 1000
    print(f"replica: refresh {rep['refresh_s']:.2f} s, replayed {lag_ms:.0f} ms after it")


if __name__ == "__main__":
    main()
