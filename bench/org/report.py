"""The tables of ``bench.org scale``, from its DATA/results.json and
DATA/builds.jsonl (``python -m bench.org scale report`` prints them again)."""

from __future__ import annotations

import re
from collections.abc import Sequence

SIDES = ("org", "control")


def table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    print("\n| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cells in rows:
        print("| " + " | ".join(map(str, cells)) + " |")


def print_report(results: dict, builds: list[dict]) -> None:
    print(f"\n`{results['command']}` (code at {', '.join(dict.fromkeys(results['commits']))})")
    stages = sorted(results["stages"].items(), key=lambda kv: int(kv[0]))
    if stages:
        print_stages(stages)
    print_throughput(builds)
    if stages:
        print_profile(*stages[-1])
    if "later" in results:
        print_later(results["later"])


def print_stages(stages: list[tuple[str, dict]]) -> None:
    """Latency per stage: ``org`` (the stage's database) and ``control`` (the
    probes alone, the same run's baseline), in process and over HTTP; each
    stage's p50 over the first stage's, as measured and with each stage's
    own control as the yardstick (what the machine's load did meanwhile);
    and ``org`` over ``control`` in the same stage (the same minutes)."""
    first = stages[0][1]["in_process"]
    rows = []
    for n, st in stages:
        org, ctl = st["in_process"]["org"], st["in_process"]["control"]
        grown = org["p50_ms"] / first["org"]["p50_ms"]
        against = grown / (ctl["p50_ms"] / first["control"]["p50_ms"])
        cells = [n, f"{st['size']['lines'] / 1e6:.1f} M"]
        cells += [f"{x[k]:.1f}" for x in (org, ctl) for k in ("p50_ms", "p95_ms")]
        cells += [f"{grown:.2f}x", f"{against:.2f}x", f"{org['p50_ms'] / ctl['p50_ms']:.2f}x",
                  f"{org['p95_ms'] / ctl['p95_ms']:.2f}x"]  # fmt: skip
        for side in SIDES:
            h = st.get("http", {}).get(side)
            cells += [f"{h['p50_ms']:.1f}", f"{h['p95_ms']:.1f}"] if h else ["-", "-"]
        rows.append([*cells, f"{st['load_searching'][0]:.1f}"])
    head = ["indexes", "lines", "p50 ms", "p95", "control p50", "p95", "p50 / first", "the same, by control",
            "p50 / control", "p95 / control",
            "HTTP p50", "p95", "control p50", "p95", "load"]  # fmt: skip
    table(head, rows)
    rows = []
    for n, st in stages:
        size = st["size"]
        top = ", ".join(f"{t} {v['total'] / 1e9:.2f}" for t, v in list(size["tables"].items())[:5])
        per_m = database_bytes(size) / 1e6 / (size["lines"] / 1e6)
        rows.append([n, f"{database_bytes(size) / 1e9:.2f}", f"{size['lines']:,}", f"{per_m:.0f}",
                     f"{size['files']:,}", f"{size['chunks']:,}", top])  # fmt: skip
    table(
        ["indexes", "database GB", "lines", "MB per million lines", "files", "chunks", "largest (GB)"], rows
    )


def database_bytes(size: dict) -> int:
    """The database's size over an empty one's. The first stages recorded
    lost it (the indexed source's bytes, also called ``bytes``, overwrote
    it): their tables' total stands in, within the catalogs' few MB."""
    if "database_bytes" in size:
        return size["database_bytes"]
    return sum(t["total"] for t in size["tables"].values())


def label(sql: str) -> str:
    """A statement short enough for a table and still told apart (its start and end)."""
    if not sql:
        return "(the pool's connection check: an empty statement)"
    return f"`{sql}`" if len(sql) <= 75 else f"`{sql[:48]} ... {sql[-24:]}`"


def print_profile(n: str, st: dict) -> None:
    prof = st["profile"]
    wall, inside = prof["wall_ms"], prof["statements_ms"]
    print(f"\nWhere a search's time goes at {n} indexes ({prof['searches']} searches, {wall:.1f} ms"
          f" each, {inside:.1f} ms of it in statements):")  # fmt: skip
    rows = []
    for shape in prof["shapes"][:12]:
        server = re.search(r"Execution Time: ([\d.]+)", shape.get("plan", ""))
        rows.append([label(shape["sql"]), f"{shape['per_search']:.1f}", f"{shape['ms_per_search']:.2f}",
                     f"{shape['max_ms']:.1f}", server.group(1) if server else "-"])  # fmt: skip
    table(["statement", "per search", "ms per search", "slowest ms", "its EXPLAIN ANALYZE ms"], rows)
    http = st.get("http")
    if http:
        print(f"\nHTTP servers answered /health after {http['org']['ready_s']:.1f} s ({n} roots)"
              f" and {http['control']['ready_s']:.1f} s (the control's)")  # fmt: skip
    print_across({n: st["across"]})


def print_across(by_count: dict[str, dict]) -> None:
    """Cross-repository search per stage, and where a search's time goes:
    the repositories' parts summed over the threads that ran them (wall and
    CPU), the process's CPU, the statements' time seen by the client."""
    rows = []
    for n, cross in by_count.items():
        if "pending" in cross:
            rows.append([n, f"PENDING ({cross['pending']})", *[""] * 7])
            continue
        prof = cross["profile"]
        statements = sum(s["per_search"] for s in prof["shapes"])
        cells = [cross["p50_ms"], cross["p95_ms"], prof["wall_ms"], prof["repository_ms"],
                 prof["repository_cpu_ms"], prof["process_cpu_ms"], prof["statements_ms"]]  # fmt: skip
        rows.append([n, *(f"{x:,.0f}" for x in cells), f"{statements:,.0f}"])
    head = ["cross-repository search over", "p50 ms", "p95 ms", "profiled ms", "repositories' parts ms",
            "their CPU ms", "process CPU ms", "in statements ms", "statements"]  # fmt: skip
    table(head, rows)


def print_later(later: dict) -> None:
    """``org_scale.py later``: the Python time by area, the cross-repository search."""
    py = later["python"]
    print(f"\nA single-repository search's Python time by area at {later['indexes']} indexes"
          f" (cProfile, {py['searches']} searches, {py['wall_ms']:.1f} ms each under the profiler;"
          f" code at {later['commit']}):")  # fmt: skip
    total = sum(py["areas"].values())
    rows = [[a, f"{ms:.2f}", f"{ms / total:.0%}"] for a, ms in py["areas"].items() if ms >= 0.1]
    table(["area (own time)", "ms per search", "share"], rows)
    rows = [[f"`{f['function']}`", f"{f['calls']:.1f}", f"{f['own_ms']:.2f}", f"{f['total_ms']:.2f}"]
            for f in py["functions"][:10]]  # fmt: skip
    table(["function", "calls per search", "own ms", "with callees ms"], rows)
    print_across(later["across"])


def print_throughput(builds: list[dict]) -> None:
    org = [b for b in builds if b["db"] == "org" and not b["pg"]["rc"] and b.get("lines")]
    groups = [
        ("all", org),
        *((s, [b for b in org if b["source"] == s]) for s in sorted({b["source"] for b in org})),
    ]
    rows = []
    for label, group in groups if org else []:
        lines, files = sum(b["lines"] for b in group), sum(b["files"] for b in group)
        secs, cpu = sum(b["pg"]["s"] for b in group), sum(b["pg"]["cpu_s"] for b in group)
        rows.append([f"{label} ({len(group)})", f"{lines:,}", f"{files:,}", f"{secs:,.0f}",
                     f"{lines / secs:,.0f}", f"{files / secs:,.1f}", f"{cpu:,.0f}"])  # fmt: skip
    table(["built into PostgreSQL", "lines", "files", "s", "lines/s", "files/s", "indexer CPU s"], rows)
    sample = [b for b in org if "local" in b]
    rows = [[b["key"], f"{b['lines']:,}", f"{b['local']['s']:.1f}", f"{b['pg']['s']:.1f}",
             f"{b['pg']['s'] / b['local']['s']:.2f}x"] for b in sample]  # fmt: skip
    if sample:
        local, pg = sum(b["local"]["s"] for b in sample), sum(b["pg"]["s"] for b in sample)
        lines = sum(b["lines"] for b in sample)
        rows.append([f"all {len(sample)}", f"{lines:,}", f"{local:.1f}", f"{pg:.1f}", f"{pg / local:.2f}x"])
    table(
        ["built both ways, one after the other", "lines", "local s", "PostgreSQL s", "PostgreSQL / local"],
        rows,
    )
