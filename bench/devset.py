"""Retrieval quality on the development set: repolens variants against an rg baseline.

    python -m bench.devset --checkouts DIR [--data DIR] [--index-cache DIR]
        [--variants windows,syntax] [--variant NAME:key=val,key=val ...] [--baseline rg|none]
        [--input query|title|both] [--sets swebench,commits,identifiers] [--files a.json,b.json]
        [--limit N] [--only REGEX] [--top-k N] [--detail] [--reindex] [--out results.json]

Scores every query of ``shared/bench/{swebench,commits,identifiers}-dev.json``
(or of ``--files`` in ``--data``, such as the mined set's ``questions.json``)
against the checkout of its repo@commit, as ``shared/bench/README.md``
("Metrics to report") defines it: one query at a time, each system's own
ranking and its default output. Each set has its key figure (``KEY_FIGURES``):
all gold files within the first 5 for the issue and commit questions, the one
definition first (R@1, i.e. Acc@1) for the bare-identifier ones.

Indexes are built first, in one pass, into a cache outside the repository
keyed by the settings that affect indexing (``INDEX_KEYS``) and the code's
format and chunking versions, so repeated runs reuse them.

A *variant* is a named dict of repolens settings, applied as ``REPOLENS_<KEY>``
environment variables while it indexes and searches. The ``rg`` baseline is a
keyword grep for the query's words; ``rg`` is what an agent reads within the
same character budget as repolens, ``rg/full`` the same ranking unbudgeted.

Prints markdown tables and the command line; ``--out`` writes per-query
results as JSON so two runs can be diffed. This is a measuring instrument:
nothing here is tuned, and a query's ``source`` field is never read.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path

from bench.common.devsets import (
    DATA_FILES,
    KEY_FIGURES,
    VARIANTS,
    Variant,
    build_indexes,
    checkout_name,
    engine_state,
    load_queries,
    parse_variants,
    repolens_answer,
    settings_env,
)
from bench.common.metrics import Answer, Hit, score, summarize
from bench.common.paths import SHARED, data_default
from bench.common.stats import fmt, table
from repolens import service
from repolens.settings import ENV_PREFIX, Settings, load_settings
from repolens.store.handles import readers
from repolens.tokens import STOPWORDS

WARMUP_QUERY = "function return value error"  # opens the index before timing
RG_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RG_CONTEXT = 2


# -- systems ---------------------------------------------------------------------


def rg_words(text: str) -> list[str]:
    """Identifier-like words of ``text``, lower-cased, stopwords and words under 3 chars dropped."""
    words = (w.lower() for w in RG_WORD.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) >= 3 and w not in STOPWORDS))


def rg_matches(words: list[str], root: Path) -> tuple[dict[str, dict], float, str]:
    """Run rg once for all words; per file: distinct words, match count, matched lines."""
    cmd = ["rg", "--json", "-i", "-F", "--no-require-git", *(a for w in words for a in ("-e", w))]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True)
    latency = (time.perf_counter() - start) * 1000
    note = "" if proc.returncode in (0, 1) else f"rg exit {proc.returncode}: {proc.stderr[:200]!r}"
    files: dict[str, dict] = {}
    for line in proc.stdout.splitlines():
        if not line.startswith(b'{"type":"match"'):
            continue
        data = json.loads(line)["data"]
        path = data["path"].get("text")
        if path is None:  # non-UTF-8 path
            continue
        entry = files.setdefault(path, {"words": set(), "count": 0, "lines": set()})
        entry["lines"].add(data["line_number"])
        for sub in data["submatches"]:
            entry["words"].add(sub["match"].get("text", "").lower())
            entry["count"] += 1
    return files, latency, note


def rg_groups(lines: set[int], n_lines: int) -> list[tuple[int, int]]:
    """Matched lines widened by the context and merged like ``rg -C2`` does."""
    groups: list[list[int]] = []
    for n in sorted(lines):
        lo, hi = max(1, n - RG_CONTEXT), min(n_lines, n + RG_CONTEXT)
        if groups and lo <= groups[-1][1] + 1:
            groups[-1][1] = max(groups[-1][1], hi)
        else:
            groups.append([lo, hi])
    return [(a, b) for a, b in groups]


def rg_answers(text: str, root: Path, top_k: int, budget: int) -> tuple[Answer, Answer]:
    """The rg baseline: (what fits in ``budget`` chars, the same unbudgeted).

    Files rank by distinct words matched, then total matches (then path). The
    text is ``rg -C2 --heading`` style for the first ``top_k`` files; a hit is
    one file with the line ranges of its context groups. In the budgeted
    answer a file counts only if its heading is shown, a range only for its
    fully shown lines.
    """
    words = rg_words(text)
    if not words:
        return Answer(note="no words to grep"), Answer(note="no words to grep")
    files, latency, note = rg_matches(words, root)
    ranked = sorted(files, key=lambda p: (-len(files[p]["words"]), -files[p]["count"], p))[:top_k]
    parts: list[str] = []
    full_hits: list[Hit] = []
    shown_hits: list[Hit] = []
    offset = 0  # where the next part starts in the joined text
    for path in ranked:
        src = (root / path).read_text(encoding="utf-8", errors="replace").split("\n")
        matched = files[path]["lines"]
        groups = rg_groups(matched, len(src))
        out = [path]
        pos = offset + len(path) + 1
        shown: list[tuple[int, int]] = []
        for i, (a, b) in enumerate(groups):
            if i:
                out.append("--")
                pos += 3
            last_shown = None
            for n in range(a, b + 1):
                line = f"{n}{':' if n in matched else '-'}{src[n - 1]}"
                out.append(line)
                pos += len(line) + 1
                if pos - 1 <= budget:
                    last_shown = n
            if last_shown is not None:
                shown.append((a, last_shown))
        part = "\n".join(out)
        full_hits.append(Hit(path, tuple(groups)))
        if offset + len(path) <= budget:
            shown_hits.append(Hit(path, tuple(shown)))
        parts.append(part)
        offset += len(part) + 2
    full_text = "\n\n".join(parts)
    extra = {"words": len(words), "matched_files": len(files), "chars_full": len(full_text)}
    budgeted = Answer(shown_hits, min(len(full_text), budget), latency, note, extra)
    return budgeted, Answer(full_hits, len(full_text), latency, note, extra)


# -- the run ---------------------------------------------------------------------


def run_queries(queries, variants, dirs, status, args, inputs) -> tuple[list[dict], bool]:
    """Score every (query, input, system); returns (rows, interrupted)."""
    rows: list[dict] = []
    top_k = args.top_k
    defaults = load_settings(None)
    rg_k, budget = top_k or defaults.top_k, defaults.max_chars
    by_ck: dict[str, list[dict]] = {}
    for q in queries:
        by_ck.setdefault(checkout_name(q), []).append(q)

    def add(q: dict, inp: str, system: str, answer: Answer) -> None:
        m = score(answer, q)
        keep = ("id", "set", "repo", "language")
        hits = [[h.path, [list(r) for r in h.ranges[:20]]] for h in answer.hits[:10]]
        rows.append(
            {
                **{k: q[k] for k in keep},
                "input": inp,
                "system": system,
                **m,
                "hits": hits,
                "note": answer.note,
                **answer.extra,
            }
        )

    try:
        for i, (ck, qs) in enumerate(by_ck.items(), 1):
            print(f"[{i}/{len(by_ck)}] searching {ck} ({len(qs)} queries)", file=sys.stderr, flush=True)
            root = args.checkouts / ck
            for v in variants:
                st = status[ck, v.name]
                with settings_env(v.overrides):
                    if st.ok:
                        service.search_code(WARMUP_QUERY, root, index_dir=dirs[ck, v.name], auto_index=False)
                    for q in qs:
                        for inp in inputs:
                            if not st.ok:
                                add(q, inp, v.name, Answer(note=f"index {st.state}: {st.error}"))
                                continue
                            try:
                                answer = repolens_answer(q[inp], root, dirs[ck, v.name], top_k, args.warm)
                            except Exception as exc:  # scored 0 with the reason; the run goes on
                                answer = Answer(note=f"{type(exc).__name__}: {exc}")
                            add(q, inp, v.name, answer)
                readers.clear()
            if args.baseline == "rg":
                for q in qs:
                    for inp in inputs:
                        if (root / ".checkout_ok").is_file():
                            shown, full = rg_answers(q[inp], root, rg_k, budget)
                        else:
                            shown = full = Answer(note="missing checkout")
                        add(q, inp, "rg", shown)
                        add(q, inp, "rg/full", full)
    except KeyboardInterrupt:
        print("interrupted: reporting the queries every system answered", file=sys.stderr)
        n_systems = len({r["system"] for r in rows})
        done = Counter((r["id"], r["input"]) for r in rows)
        complete = {key for key, n in done.items() if n == n_systems}
        return [r for r in rows if (r["id"], r["input"]) in complete], True
    return rows, False


# -- reporting -------------------------------------------------------------------


HEADLINE = (
    "scope|system|n|Acc@1|Acc@5|Acc@10|MRR@10|Line@5|Line@5(fn)|Func@5|Shown@5|lines@5"
    "|chars p50|chars p90|chars mean|ms p50|ms p90"
)
# summary key -> decimals shown, in HEADLINE's column order
HEADLINE_COLS = {
    "acc1": 2,
    "acc5": 2,
    "acc10": 2,
    "mrr": 3,
    "line5": 2,
    "line5_fn": 2,
    "func5": 2,
    "shown5": 2,
    "span5_p50": 0,
}
HEADLINE_COLS |= {"chars_p50": 0, "chars_p90": 0, "chars_mean": 0, "lat_p50": 1, "lat_p90": 1}


def set_names(rows: list[dict]) -> list[str]:
    """The sets present in ``rows``, in ``KEY_FIGURES`` order (rows come by checkout,
    and the identifier questions share checkouts with the other sets)."""
    order = list(KEY_FIGURES)
    present = {r["set"] for r in rows}
    return sorted(present, key=lambda name: (order.index(name) if name in order else len(order), name))


def headline(rows: list[dict], systems: list[str]) -> str:
    out = []
    for scope in ("all", *set_names(rows)):
        for system in systems:
            sel = [r for r in rows if r["system"] == system and scope in ("all", r["set"])]
            if sel:
                s = summarize(sel)
                out.append([scope, system, str(s["n"]), *(fmt(s[k], d) for k, d in HEADLINE_COLS.items())])
    return table(HEADLINE.split("|"), out)


def key_figures(rows: list[dict], systems: list[str]) -> str:
    """Each set's own figure (``KEY_FIGURES``), one column per system."""
    out = []
    for name in set_names(rows):
        key = KEY_FIGURES.get(name, "acc5")
        sel = [r for r in rows if r["set"] == name]
        cells = [name, str(len({r["id"] for r in sel})), "R@1" if key == "acc1" else "Acc@5"]
        cells += [fmt(summarize([r for r in sel if r["system"] == s])[key]) for s in systems]
        out.append(cells)
    return table(["set", "n", "figure", *systems], out)


def breakdown(rows: list[dict], systems: list[str], field: str) -> str:
    """Acc@1 / Acc@5 / MRR / Line@5 per set and value of ``field`` (language, repo), one
    column per system. Sets stay apart: a language's identifier questions are not its issues."""
    groups = sorted({(r["set"], r[field]) for r in rows}, key=lambda g: (set_names(rows).index(g[0]), g[1]))
    out = []
    for name, value in groups:
        sel = [r for r in rows if r["set"] == name and r[field] == value]
        cells = [f"{name}/{value}", str(len({r["id"] for r in sel}))]
        for system in systems:
            s = summarize([r for r in sel if r["system"] == system])
            cells.append(f"{fmt(s['acc1'])} / {fmt(s['acc5'])} / {fmt(s['mrr'], 3)} / {fmt(s['line5'])}")
        out.append(cells)
    return table([f"set/{field}", "n", *(f"{s} Acc@1 / Acc@5 / MRR / Line@5" for s in systems)], out)


def index_table(status: dict, variants: list[Variant]) -> str:
    out = []
    for v in variants:
        sts = [st for (_, name), st in status.items() if name == v.name]
        built = sorted(st.seconds for st in sts if st.state == "built")
        cached = [st.seconds for st in sts if st.state == "cached"]
        failed = [st for st in sts if not st.ok]
        cells = [v.name, str(len(sts)), str(len(built)), str(len(cached)), str(len(failed))]
        if built:
            cells += [fmt(statistics.median(built), 1), fmt(built[-1], 1), fmt(sum(built), 0)]
        else:
            cells += ["cached"] * 3
        cells.append(fmt(sum(cached), 0) if cached else "-")
        cells.append(str(sum(st.files for st in sts)))
        cells.append(str(sum(st.chunks for st in sts)))
        out.append(cells)
    head = "variant|checkouts|built|cached|failed|build p50 s|build max s|build total s|cached: recorded s"
    return table([*head.split("|"), "files", "chunks"], out)


def all_fail(rows: list[dict], inp: str) -> list[str]:
    """Query ids where no system puts any gold file in its list."""
    ids = dict.fromkeys(r["id"] for r in rows if r["input"] == inp)
    return [i for i in ids if not any(r["mrr"] for r in rows if r["id"] == i and r["input"] == inp)]


def report(rows, status, variants, args, inputs, interrupted, timings) -> None:
    systems = (["rg", "rg/full"] if args.baseline == "rg" else []) + [v.name for v in variants]
    setting_vars = {ENV_PREFIX + f.name.upper() for f in fields(Settings)}
    ambient = {k: v for k, v in os.environ.items() if k in setting_vars}
    print(f"$ {shlex.join(['python', *sys.argv])}\n")
    print(
        f"{engine_state()}; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
        f"queries {len({r['id'] for r in rows})} ({', '.join(set_names(rows))}); inputs {', '.join(inputs)}"
    )
    for v in variants:
        print(f"variant {v.name}: {v.overrides or 'defaults'}")
    if ambient:
        print(f"ambient environment (applies to every variant): {ambient}")
    if args.top_k:
        print(f"DIAGNOSTIC: --top-k {args.top_k}, not the default output an agent sees")
    print(f"wall time: indexing {timings['index']:.0f}s, queries {timings['query']:.0f}s")
    if interrupted:
        print("INTERRUPTED: partial results")
    print(
        "\nrg = keyword grep of the query's words, ranked by distinct words then matches, "
        f"-C{RG_CONTEXT} text cut at the {load_settings(None).max_chars}-char budget; rg/full = uncut. "
        "Line@5(fn) also counts gold_functions; Func@5: every gold function overlaps one of the "
        "first 5 hits (questions with one; its own n); Shown@5 counts only the lines a hit shows "
        "(a repolens block shows some lines of its span); "
        "lines@5 = median lines spanned by the first 5 hits; "
        "ms = latency per query"
        + (
            " (warm: each question's second asking)."
            if args.warm
            else " (its first asking after one warm-up query per checkout)."
        )
    )
    print("\n## Index\n")
    print(index_table(status, variants))
    for inp in inputs:
        sel = [r for r in rows if r["input"] == inp]
        print(f"\n## Input: {inp}\n")
        print(headline(sel, systems))
        print(f"\n### {inp}: key figure per set (identifiers: R@1 = Acc@1; the others: Acc@5)\n")
        print(key_figures(sel, systems))
        print(f"\n### {inp}: per language (Acc@1 / Acc@5 / MRR@10 / Line@5)\n")
        print(breakdown(sel, systems, "language"))
        if args.detail:
            print(f"\n### {inp}: per repo (Acc@1 / Acc@5 / MRR@10 / Line@5)\n")
            print(breakdown(sel, systems, "repo"))
            fails = all_fail(rows, inp)
            print(f"\n{inp}: no system finds a gold file for {len(fails)} queries: {', '.join(fails)}")
    notes = [(r["id"], r["input"], r["system"], r["note"]) for r in rows if r["note"]]
    if notes:
        print(f"\n## Notes ({len(notes)} answers degraded)\n")
        for note in notes[:40]:
            print("- " + " ".join(note))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.devset", description=__doc__.splitlines()[0])
    ap.add_argument(
        "--checkouts",
        type=Path,
        default=data_default("checkouts-git"),
        help="folder of <owner>__<name>@<commit12> checkouts (default $REPOLENS_BENCH_DATA/checkouts-git, "
        "the history checkouts)",
    )
    ap.add_argument("--data", type=Path, default=SHARED, help="folder of the question files")
    ap.add_argument(
        "--index-cache",
        type=Path,
        default=data_default("index-cache"),
        help="where indexes are cached, one folder per checkout and index identity "
        "(default $REPOLENS_BENCH_DATA/index-cache)",
    )
    ap.add_argument("--variants", default="windows,syntax", help=f"comma list of {', '.join(VARIANTS)}")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VAL,...")
    ap.add_argument("--baseline", choices=["rg", "none"], default="rg")
    ap.add_argument("--input", choices=["query", "title", "both"], default="both")
    ap.add_argument("--top-k", type=int, help="diagnostic: deeper lists than the default output")
    ap.add_argument(
        "--sets",
        default=",".join(KEY_FIGURES),
        help=f"comma list of question sets to score (default: all of {', '.join(KEY_FIGURES)})",
    )
    ap.add_argument(
        "--files",
        default=",".join(DATA_FILES),
        help="comma list of question files in --data (default: the development set's three; "
        "the mined set: questions.json)",
    )
    ap.add_argument("--limit", type=int)
    ap.add_argument("--only", help="regex on query ids")
    ap.add_argument("--detail", action="store_true", help="per-repo tables and all-fail queries")
    ap.add_argument("--reindex", action="store_true", help="rebuild cached indexes")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="time each question's second asking (the steady-state latency of a server)",
    )
    ap.add_argument("--out", type=Path, help="write per-query results as JSON")
    args = ap.parse_args(argv)
    if args.checkouts is None or args.index_cache is None:
        sys.exit(
            "no checkouts or index cache: set REPOLENS_BENCH_DATA or pass --checkouts DIR and "
            "--index-cache DIR. Make the checkouts with\n"
            f"  HISTORY=1 MIRRORS=<mirrors root> {args.data / 'make_checkouts.sh'} DIR"
        )
    if not args.checkouts.is_dir():
        sys.exit(
            f"{args.checkouts} is not a directory: make the checkouts with {args.data}/make_checkouts.sh"
        )
    if args.baseline == "rg" and not shutil.which("rg"):
        sys.exit("rg (ripgrep) is not on PATH: install it or pass --baseline none")
    args.checkouts = args.checkouts.resolve()
    args.index_cache = args.index_cache.expanduser().resolve()
    inputs = ["query", "title"] if args.input == "both" else [args.input]
    variants = parse_variants(args.variants, args.variant)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if unknown := set(sets) - set(KEY_FIGURES):
        sys.exit(f"unknown set(s) {', '.join(sorted(unknown))}; known: {', '.join(KEY_FIGURES)}")
    files = tuple(f.strip() for f in args.files.split(",") if f.strip())
    if missing := [f for f in files if not (args.data / f).is_file()]:
        sys.exit(f"no question file {', '.join(missing)} in {args.data}")
    queries = load_queries(args.data, args.only, args.limit, sets, files)
    if not queries:
        sys.exit("no queries selected")

    t0 = time.monotonic()
    try:
        dirs, status = build_indexes(queries, variants, args)
    except KeyboardInterrupt:
        sys.exit("interrupted while indexing; finished indexes are cached")
    t1 = time.monotonic()
    rows, interrupted = run_queries(queries, variants, dirs, status, args, inputs)
    timings = {"index": t1 - t0, "query": time.monotonic() - t1}
    report(rows, status, variants, args, inputs, interrupted, timings)
    if args.out:
        index = {f"{ck} {name}": vars(st) for (ck, name), st in status.items()}
        payload = {
            "command": shlex.join(["python", *sys.argv]),
            "repolens": engine_state(),
            "variants": {v.name: v.overrides for v in variants},
            "index": index,
            "interrupted": interrupted,
            "results": rows,
        }
        args.out.write_text(json.dumps(payload, indent=1))
        print(f"\nper-query results: {args.out}", file=sys.stderr)
    if interrupted:
        sys.exit(130)


if __name__ == "__main__":
    main()
