"""find_references against a language server, the judge, on real repositories.

    python -m bench.refs_judge [--per-repo 70] [--seed 39] [--languages python,typescript,go]
        [--python DIR ...] [--typescript DIR ...] [--go DIR ...]
    python -m bench.refs_judge --speed CORPUS --index-dir D [--queries 200]
    python -m bench.refs_judge --commits SET.json [SET.json ...] --index-cache D

``--commits``: for each development question whose change touched more
than one file, ``impact`` (depth 1, 2 and 3) of the first changed file's
changed lines (the definitions they touch, and the module's top level
when they hold a use there), in the checkout of the commit before it: how often it
reaches the commit's other changed files (a commit counts when it reaches
one of them; file recall is over all of them).

For each repository (default: the Python checkouts of psf/requests,
pallets/flask and pytest-dev/pytest in ``$REPOLENS_BENCH_DATA/checkouts``,
the TypeScript checkouts of ``$REPOLENS_BENCH_DATA/refs-judge/`` —
honojs/hono, trpc/trpc and vitest-dev/vitest — and the Go ones there —
gin-gonic/gin, go-chi/chi, spf13/cobra and urfave/cli; see docs/benchmarks.md
for how they were made), the script builds a repolens index in a temporary folder,
samples ``--per-repo`` definitions (functions, methods and classes of
source files, and Go's types: structs, interfaces and named types; seeded),
asks repolens for their uses (:func:`repolens.search.references.references`)
and asks the judge (jedi for Python, the TypeScript language service,
installed into ``$REPOLENS_BENCH_DATA/lsp`` on first use; gopls for Go,
from Debian's packages: ``bench/common/lsp_judges.py``).

A reference is a (path, line); the definition's own line is left out of
both sides, and the judge's references in files repolens does not index;
for Go, both sides' in files the go command does not build here (the
judge never reads them: ``_examples/``, another platform's files), and a
definition the judge fails on (gopls crashes on some) is left out.
Printed per repository and per language: definitions asked, the judge's
references, repolens's resolved ones with their precision and recall, the
recall of resolved and name matches together, the name matches' precision,
and repolens's warm lookup p50.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.common.lsp_judges import Query, install, judged_files, references
from bench.common.paths import bench_data
from repolens.index.build import build_index
from repolens.roles import path_role
from repolens.search.references import references as repolens_references
from repolens.settings import load_settings
from repolens.store import open_store

WARMUP = 50  # --speed: definitions asked before the timed ones (not among them)
SHOW = 0  # --show N: print N missed and N wrong references per definition to stderr
# The default repositories of each language: (folder of $REPOLENS_BENCH_DATA, name prefixes).
DEFAULTS = {
    "python": ("checkouts", ("psf__requests@", "pallets__flask@", "pytest-dev__pytest@")),
    "typescript": ("refs-judge", ("honojs__hono@", "trpc__trpc@", "vitest-dev__vitest@")),
    "go": ("refs-judge", ("gin-gonic__gin@", "go-chi__chi@", "spf13__cobra@", "urfave__cli@")),
}
LANGUAGES = tuple(DEFAULTS)
KINDS = frozenset({"function", "method", "class"})
# Go has no classes: its types are what is sampled with its functions and methods.
KINDS_OF = {"go": KINDS | {"struct", "interface", "type"}}
EXTENSIONS = {"python": (".py",), "typescript": (".ts", ".tsx"), "go": (".go",)}


def default_repos(language: str) -> list[Path]:
    folder, prefixes = DEFAULTS[language]
    found = sorted(p for p in bench_data(folder).glob("*") if p.is_dir())
    return [next(p for p in found if p.name.startswith(prefix)) for prefix in prefixes]


def sample(reader, language: str, per_repo: int, rng: random.Random, judged: set[str] | None) -> list:
    exts = EXTENSIONS[language]
    kinds = KINDS_OF.get(language, KINDS)
    rows = []
    for path in reader.paths():
        if not path.endswith(exts) or path_role(path) != "source" or path.endswith(".d.ts"):
            continue
        if judged is not None and path not in judged:
            continue
        for s in outer_symbols(reader.symbols_of_file(path)):
            if s.kind in kinds and len(s.name) >= 3 and not s.name.startswith("__"):
                rows.append(s)
    rows.sort(key=lambda s: (s.path, s.start_line))
    return rng.sample(rows, min(per_repo, len(rows)))


def outer_symbols(symbols: list) -> list:
    """A file's symbols but the functions defined inside its functions:
    symbols for lookup, whose references are not kept
    (``repolens.chunking.nested``)."""
    functions = {s.qualname for s in symbols if s.kind in ("function", "method")}
    return [s for s in symbols if s.parent not in functions]


# A definition starts at its doc comment and decorators: its name is not asked there.
COMMENT_OR_DECORATOR = ("/*", "*", "//", "#", "@")
# A Go method's receiver comes before its name (func (m *Mux) Use): the name is looked for after it.
GO_RECEIVER = re.compile(r"^\s*func\s*\([^)]*\)")


def name_position(root: Path, s) -> Query | None:
    lines = (root / s.path).read_text(encoding="utf-8", errors="replace").split("\n")
    word = re.compile(rf"(?<![\w$]){re.escape(s.name)}(?![\w$])")
    for n in range(s.start_line, min(s.end_line, s.start_line + 30) + 1):
        line = lines[n - 1] if n - 1 < len(lines) else ""
        receiver = GO_RECEIVER.match(line)
        skipped = line.lstrip().startswith(COMMENT_OR_DECORATOR)
        m = None if skipped else word.search(line, receiver.end() if receiver else 0)
        if m:
            return Query(s.path, n, m.start())
    return None


def judge_repo(language: str, judge: Path, root: Path, per_repo: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(root, Path(tmp) / "index")
        build_index(root, store=store, settings=dataclasses.replace(load_settings(root), vectors=False))
        reader = store.open_reader()
        # The files the judge reads (Go: those the go command builds here); uses in others are left out.
        judged = judged_files(language, root)
        chosen = sample(reader, language, per_repo, random.Random(seed), judged)
        asked = [(s, q) for s in chosen if (q := name_position(root, s)) is not None]
        files = [p for p in reader.paths() if p.endswith(EXTENSIONS[language])]
        indexed = set(reader.paths())
        answers = references(language, judge, root, [q for _, q in asked], files)
        totals = {
            "symbols": 0,
            "judge": 0,
            "resolved": 0,
            "hit": 0,
            "names": 0,
            "name_hit": 0,
            "all_hit": 0,
            "errors": 0,
        }
        times = []
        for (s, q), (truth, _, error) in zip(asked, answers, strict=True):
            if error:  # left out of both sides, said on stderr
                totals["errors"] += 1
                if SHOW:
                    print(f"    error {s.qualname} ({s.path}:{q.line}): {error}", file=sys.stderr)
                continue
            own = {(s.path, q.line), (s.path, s.start_line)}
            truth = {r for r in truth if r[0] in indexed} - own
            started = time.perf_counter()
            found = repolens_references(reader, s)
            times.append(time.perf_counter() - started)
            resolved = {(r.path, r.line) for r in found.resolved if judged is None or r.path in judged} - own
            names = {(r.path, r.line) for r in found.name_matches if judged is None or r.path in judged}
            names -= own | resolved
            totals["symbols"] += 1
            totals["judge"] += len(truth)
            totals["resolved"] += len(resolved)
            totals["hit"] += len(resolved & truth)
            totals["names"] += len(names)
            totals["name_hit"] += len(names & truth)
            totals["all_hit"] += len((resolved | names) & truth)
            if SHOW:
                for kind, refs in (("missed", truth - resolved), ("wrong", resolved - truth)):
                    for p, n in sorted(refs)[:SHOW]:
                        text = (root / p).read_text(errors="replace").split("\n")[n - 1].strip()[:100]
                        print(f"    {kind} {s.qualname} ({s.path}): {p}:{n}: {text}", file=sys.stderr)
        totals["p50_ms"] = statistics.median(times) * 1000 if times else 0.0
        reader.close()
        return totals


def speed(corpus: Path, index_dir: Path, queries: int, seed: int) -> None:
    """Warm ``find_references`` and ``impact`` (depth 2) on ``corpus``'s index
    in ``index_dir`` (built first when missing): p50 and p95 over
    ``queries`` definitions, each asked once, after ``WARMUP`` others (the
    process and its store's pages warm, no answer remembered)."""
    from repolens.service import navigation

    store = open_store(corpus, index_dir)
    if store.current() is None:
        build_index(corpus, store=store, settings=dataclasses.replace(load_settings(corpus), vectors=False))
    reader = store.open_reader()
    rows = [
        s
        for path in reader.paths()
        if path_role(path) == "source"
        for s in outer_symbols(reader.symbols_of_file(path))
        if s.kind in KINDS and len(s.name) >= 3
    ]
    rows.sort(key=lambda s: (s.path, s.start_line))
    picked = random.Random(seed).sample(rows, min(queries + WARMUP, len(rows)))
    warm, chosen = picked[:WARMUP], picked[WARMUP:]
    print(f"{len(chosen)} definitions of {corpus.name}, warm ({WARMUP} others asked first, each once)")
    print("| call | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|")
    for label, ask in (
        (
            "find_references",
            lambda s: navigation._references_text(reader, f"{s.path}:{s.start_line}", None, 1, 6000),
        ),
        ("impact, depth 2", lambda s: navigation._impact_text(reader, f"{s.path}:{s.start_line}", 2, 6000)),
    ):
        for s in warm:
            ask(s)
        times = []
        for s in chosen:
            started = time.perf_counter()
            ask(s)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"| {label} | {statistics.median(times):.1f} | {p95:.1f} | {times[-1]:.0f} |")
    reader.close()


def commits(sets: list[Path], cache: Path) -> None:
    import json

    from repolens.search.ref_walks import impact
    from repolens.search.references import definitions_in, top_level_uses

    questions = [q for f in sets for q in json.loads(f.read_text()) if len(set(q["gold_files"])) > 1]
    named = ", ".join(f.name for f in sets)
    print(f"{len(questions)} development questions whose change touched several files ({named})")
    print("| depth | commits reaching another changed file | files reached / other changed files | p50 ms |")
    print("|---|---|---|---|")
    reached = {1: [0, 0, 0], 2: [0, 0, 0], 3: [0, 0, 0]}
    times: dict[int, list[float]] = {1: [], 2: [], 3: []}
    asked = 0
    for q in questions:
        owner, name = q["repo"].split("/")
        root = bench_data("checkouts") / f"{owner}__{name}@{q['commit'][:12]}"
        if not root.is_dir():
            print(f"  no checkout {root.name}", file=sys.stderr)
            continue
        store = open_store(root, cache / root.name)
        if store.current() is None:
            build_index(root, store=store, settings=dataclasses.replace(load_settings(root), vectors=False))
        reader = store.open_reader()
        first = q["gold_ranges"][0]["path"]
        others = set(q["gold_files"]) - {first}
        definitions, modules = [], []
        for r in q["gold_ranges"]:
            if r["path"] == first:
                definitions += [
                    d
                    for d in definitions_in(reader, first, r["start_line"], r["end_line"])
                    if d not in definitions
                ]
                if not modules and top_level_uses(reader, first, r["start_line"], r["end_line"]):
                    modules = [first]
        asked += 1
        for depth in (1, 2, 3):
            started = time.perf_counter()
            files = {s.path for s in impact(reader, definitions, depth, modules).steps}
            times[depth].append((time.perf_counter() - started) * 1000)
            hit = len(files & others)
            reached[depth][0] += hit > 0
            reached[depth][1] += hit
            reached[depth][2] += len(others)
        reader.close()
    for depth, (commits_hit, hit, total) in reached.items():
        p50 = statistics.median(times[depth]) if times[depth] else 0.0
        share, files = ratio(commits_hit, asked), ratio(hit, total)
        print(f"| {depth} | {commits_hit} of {asked} ({share}) | {hit} / {total} ({files}) | {p50:.0f} |")


def ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def row(name: str, t: dict) -> str:
    return (
        f"| {name} | {t['symbols']} | {t['judge']:,} | {t['resolved']:,} | "
        f"{ratio(t['hit'], t['resolved'])} | "
        f"{ratio(t['hit'], t['judge'])} | {ratio(t['all_hit'], t['judge'])} | {t['names']:,} | "
        f"{ratio(t['name_hit'], t['names'])} | {t.get('p50_ms', 0):.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-repo", type=int, default=70)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--python", nargs="*", type=Path)
    parser.add_argument("--typescript", nargs="*", type=Path)
    parser.add_argument("--go", nargs="*", type=Path)
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    parser.add_argument(
        "--show", type=int, default=0, help="Print N missed and wrong references per definition."
    )
    parser.add_argument(
        "--speed", type=Path, help="Time warm find_references and impact on this corpus instead."
    )
    parser.add_argument("--index-dir", type=Path, help="With --speed: its index (built there when missing).")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--commits", nargs="*", type=Path, help="Development sets: impact of each change.")
    parser.add_argument(
        "--index-cache", type=Path, help="With --commits: where the checkouts' indexes are kept."
    )
    args = parser.parse_args()
    if args.speed:
        print("$ python -m bench.refs_judge " + " ".join(sys.argv[1:]))
        speed(args.speed.resolve(), args.index_dir or Path(tempfile.mkdtemp()), args.queries, args.seed)
        return
    if args.commits:
        print("$ python -m bench.refs_judge " + " ".join(sys.argv[1:]))
        commits(args.commits, args.index_cache or Path(tempfile.mkdtemp()))
        return
    global SHOW
    SHOW = args.show
    languages = args.languages.split(",")
    unknown = set(languages) - set(LANGUAGES)
    if unknown:
        parser.error(
            f"--languages: no judge for {', '.join(sorted(unknown))} (known: {', '.join(LANGUAGES)})"
        )
    print("$ python -m bench.refs_judge " + " ".join(sys.argv[1:]))
    judges = install(bench_data("lsp"), languages)
    print()
    print(
        "| repository | definitions | judge's refs | resolved | precision | recall |"
        " recall with name matches | name matches | name-match precision | repolens p50 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for language in languages:
        repos = getattr(args, language) or default_repos(language)
        summed: dict = {}
        for root in repos:
            started = time.monotonic()
            t = judge_repo(language, judges[language], root.resolve(), args.per_repo, args.seed)
            errors = f", {t['errors']} definitions the judge failed on (left out)" if t["errors"] else ""
            print(f"  {root.name}: {time.monotonic() - started:.0f} s{errors}", file=sys.stderr)
            print(row(f"{language}: {root.name}", t), flush=True)
            for k, v in t.items():
                summed[k] = summed.get(k, 0) + v if k != "p50_ms" else max(summed.get(k, 0), v)
        print(row(f"**{language}, all**", summed), flush=True)


if __name__ == "__main__":
    main()
