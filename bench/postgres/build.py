"""A fresh build into PostgreSQL against a fresh local build, side by side, over several corpora.

    python -m bench.postgres build CORPUS [CORPUS ...] [--runs 3] [--tree NAME=SRC ...] [--first-in-database]

Each run is ``repolens index CORPUS --no-vectors`` in a new process: into a
new local index folder, and with ``--store`` into a new database of one
throw-away PostgreSQL 18 + pgvector (tests/pgserver.py, loopback, the
settings of ``bench.postgres perf``). The database already holds repolens's
tables, as every build but a database's first finds them (one database
keeps many repositories): the tree under test indexed a one-file
repository into it first, untimed; ``--first-in-database`` times the build
that makes them instead. The trees (``src`` folders run through
``PYTHONPATH``, as in ``bench.speed index``) and the stores take turns,
in reverse order on odd runs, so a change in the shared machine's load
falls on all alike.

Prints the command line and a markdown table: per corpus and tree, the
p50 wall seconds of each store, PostgreSQL / local (the ratio of the p50s),
the indexing process's CPU (its workers included) and the database
server's CPU (every server process, the exited connection backends
included) during the PostgreSQL build; then per tree the ratio of the sums
over the corpora (what indexing all of them takes), the median and the
largest ratio.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common.trees import HERE_SRC, compiled_copy, env_for
from bench.postgres.perf import BENCH_SETTINGS
from bench.speed.index import corpus_size

TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu(postmaster: int) -> float:
    """CPU seconds of a PostgreSQL server so far: the postmaster with its
    reaped children (exited backends) and its living children."""

    def stat(pid: int) -> list[str]:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2 :].split()

    fields = stat(postmaster)
    total = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != postmaster:
            try:
                mine = stat(int(entry.name))
            except (OSError, ValueError):
                continue
            if int(mine[1]) == postmaster:  # ppid
                total += int(mine[11]) + int(mine[12])
    return total / TICKS


def build(src: Path, corpus: Path, where: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the indexing process and its workers) of one ``repolens index``."""
    cmd = [sys.executable, "-m", "repolens", "index", str(corpus), "--no-vectors", *where]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env_for(src), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{shlex.join(cmd)} failed: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=SRC")
    parser.add_argument(
        "--first-in-database", action="store_true", help="time the build that creates the tables"
    )
    args = parser.parse_args(argv)
    given = {n: Path(s).resolve() for n, s in (t.split("=", 1) for t in args.tree)} or {"this": HERE_SRC}
    from tests.pgserver import PgHarness

    load_before = os.getloadavg()
    # rows[(corpus, tree)] = {"local": [(wall, cpu)], "postgres": [(wall, cpu, server cpu)]}
    rows: dict[tuple[Path, str], dict[str, list[tuple[float, ...]]]] = {}
    harness = PgHarness()
    try:
        server = harness.primary(BENCH_SETTINGS)
        postmaster = int(Path(server.data_dir, "postmaster.pid").read_text().split()[0])
        with tempfile.TemporaryDirectory(prefix="repolens-pg-build-") as tmp:
            trees = {name: compiled_copy(src, Path(tmp) / "trees" / name) for name, src in given.items()}
            other = Path(tmp) / "other"  # the repository a database held before
            other.mkdir()
            (other / "main.py").write_text("def main():\n    return 0\n")
            cells = [(name, store) for name in trees for store in ("local", "postgres")]
            for n, corpus in enumerate(c.resolve() for c in args.corpora):
                for name in trees:
                    rows[corpus, name] = {"local": [], "postgres": []}
                for i in range(args.runs):
                    for name, store in cells if i % 2 == 0 else cells[::-1]:
                        if store == "local":
                            where = ["--index-dir", str(Path(tmp) / f"index-{n}-{name}-{i}")]
                            rows[corpus, name]["local"].append(build(trees[name], corpus, where))
                            continue
                        db = harness.create_database(server)
                        if not args.first_in_database:
                            build(trees[name], other, ["--store", db.url])
                        before = server_cpu(postmaster)
                        wall, cpu = build(trees[name], corpus, ["--store", db.url])
                        rows[corpus, name]["postgres"].append((wall, cpu, server_cpu(postmaster) - before))
                        harness.drop_database(db)
    finally:
        harness.close()
    print_table(rows, given, args, load_before)
    return 0


def print_table(rows: dict, given: dict[str, Path], args: argparse.Namespace, load_before: tuple) -> None:
    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}")
    loads = f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after"
    print(f"machine: {os.cpu_count()} CPUs, load average {loads}; {args.runs} runs per cell, alternating")
    made = "by the timed build" if args.first_in_database else "before it (untimed)"
    print(f"each PostgreSQL build into a new database, its tables made {made}")
    for name, src in given.items():
        print(f"tree {name}: {src}")
    print(
        "\n| corpus | files | MB | tree | local s p50 | PostgreSQL s p50 | PostgreSQL / local"
        " | indexer CPU s local / PostgreSQL | server CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    # per tree: [(local p50, PostgreSQL p50)] over the corpora
    p50s: dict[str, list[tuple[float, float]]] = {name: [] for name in given}
    for (corpus, name), cell in rows.items():
        files, mb = corpus_size(corpus)
        local = statistics.median(v[0] for v in cell["local"])
        pg = statistics.median(v[0] for v in cell["postgres"])
        cpu_local = statistics.median(v[1] for v in cell["local"])
        cpu_pg = statistics.median(v[1] for v in cell["postgres"])
        server = statistics.median(v[2] for v in cell["postgres"])
        p50s[name].append((local, pg))
        print(
            f"| {corpus.name} | {files} | {mb:.1f} | {name} | {local:.2f} | {pg:.2f} | {pg / local:.2f}x"
            f" | {cpu_local:.1f} / {cpu_pg:.1f} | {server:.1f} |"
        )
    print("\n| tree | corpora | local s (sum) | PostgreSQL s (sum) | sum ratio | median ratio | largest |")
    print("|---|---|---|---|---|---|---|")
    for name, found in p50s.items():
        local = sum(v[0] for v in found)
        pg = sum(v[1] for v in found)
        ratios = [p / lo for lo, p in found]
        print(
            f"| {name} | {len(found)} | {local:.2f} | {pg:.2f} | {pg / local:.2f}x"
            f" | {statistics.median(ratios):.2f}x | {max(ratios):.2f}x |"
        )


if __name__ == "__main__":
    raise SystemExit(main())
