"""Record every reply mode for the development questions, and compare two recordings.

    python -m bench.replies record OUT.jsonl [--checkouts DIR] [--only REGEX] [--limit N]
    python -m bench.replies compare BEFORE.jsonl AFTER.jsonl
    python -m bench.replies focus BEFORE.jsonl AFTER.jsonl [--data DIR]

A refactor that must not change behaviour is proven with it: record before the
first move, record again after, compare. Each line of a recording is one
question with what every reply mode printed for it:

* ``packet``, ``files``, ``json``: ``search`` on the full question (text
  packet, ranked file overview, JSON);
* ``packet_title``: ``search`` on the title (short questions take other paths
  through query parsing);
* ``symbols``: ``symbols`` for the most identifier-like word of the title;
* ``focus``: ``focus`` on the title.

Indexes come from the development benchmark's cache (``bench.devset``, the
``default`` variant), so a recording takes about a minute once they exist.
``compare`` prints the first differing line of every differing reply and
exits 1 when any reply differs. ``focus`` scores the ``focus`` replies of
recordings as the development benchmark scores a search
(:mod:`bench.common.metrics`: each block shown is a hit, its definition's
span the hit's range, the lines it prints the lines shown; blocks the
trailer only names are left out): Line@5, Shown@5 and file Acc@5, per set
and in all, for each recording, for a change that is meant to change
focus's order.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from bench.common import devsets
from bench.common.metrics import Answer, Hit, line_ranges, mean, score
from bench.common.stats import fmt, table
from repolens.errors import RepolensError

try:  # the use cases moved from repolens.service to repolens.service
    from repolens import service as use_cases
except ImportError:  # pragma: no cover - before the move
    from repolens import api as use_cases

MODES = ("packet", "files", "json", "packet_title", "symbols", "focus")
_BACKTICKED = re.compile(r"`([^`\s]{2,80})`")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.:]*[A-Za-z0-9_]")


def symbol_name(title: str) -> str:
    """The word of ``title`` most likely to name a definition: a backticked
    span, else one with a separator or an inner capital, else the longest."""
    ticked = _BACKTICKED.findall(title)
    if ticked:
        return ticked[0].strip("()")
    words = _WORD.findall(title)
    shaped = [w for w in words if "_" in w or "." in w or "::" in w or re.search(r"[a-z][A-Z]", w)]
    if shaped:
        return shaped[0]
    return max(words, key=len, default="main")


def _attempt(fn) -> str:
    """A reply's text, or the error it raised (errors are behaviour too)."""
    try:
        return fn()
    except RepolensError as exc:
        return f"error: {type(exc).__name__}: {exc}"


def replies(q: dict, root: Path, index_dir: Path) -> dict[str, str]:
    def search(text: str, mode: str) -> str:
        return use_cases.search_code(text, root, index_dir=index_dir, mode=mode, auto_index=False).text

    name = symbol_name(q["title"])
    return {
        "packet": _attempt(lambda: search(q["query"], "packet")),
        "files": _attempt(lambda: search(q["query"], "files")),
        "json": _attempt(lambda: search(q["query"], "json")),
        "packet_title": _attempt(lambda: search(q["title"], "packet")),
        "symbols": _attempt(lambda: use_cases.find_symbol(name, root, index_dir=index_dir).render()),
        "focus": _attempt(lambda: use_cases.focus(q["title"], root, index_dir=index_dir).render()),
    }


def record(args: argparse.Namespace) -> int:
    queries = devsets.load_queries(args.data, args.only, args.limit)
    variants = devsets.parse_variants("default", [])
    build = argparse.Namespace(checkouts=args.checkouts, index_cache=args.index_cache, reindex=False)
    dirs, status = devsets.build_indexes(queries, variants, build)
    with open(args.out, "w", encoding="utf-8") as fh:
        for i, q in enumerate(queries, 1):
            ck = devsets.checkout_name(q)
            st = status[ck, "default"]
            if not st.ok:
                row = dict.fromkeys(MODES, f"index {st.state}: {st.error}")
            else:
                row = replies(q, args.checkouts / ck, dirs[ck, "default"])
            fh.write(json.dumps({"id": q["id"], **row}, ensure_ascii=False) + "\n")
            print(f"[{i}/{len(queries)}] {q['id']}", file=sys.stderr, flush=True)
    print(f"recorded {len(queries)} questions x {len(MODES)} modes -> {args.out}", file=sys.stderr)
    return 0


def _load(path: Path) -> dict[str, dict[str, str]]:
    if not path.is_file():
        raise SystemExit(f"{path} is not a recording: make one with python -m bench.replies record {path}")
    rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {row["id"]: row for row in rows}


def _first_difference(a: str, b: str) -> str:
    la, lb = a.split("\n"), b.split("\n")
    for n, (x, y) in enumerate(zip(la, lb, strict=False), 1):
        if x != y:
            return f"line {n}:\n      - {x[:160]}\n      + {y[:160]}"
    return f"length: {len(la)} vs {len(lb)} lines"


def compare(args: argparse.Namespace) -> int:
    before, after = _load(args.before), _load(args.after)
    differing = 0
    for qid in sorted(set(before) | set(after)):
        if qid not in before or qid not in after:
            print(f"{qid}: only in {'before' if qid in before else 'after'}")
            differing += 1
            continue
        for mode in MODES:
            a, b = before[qid].get(mode, ""), after[qid].get(mode, "")
            if a != b:
                differing += 1
                print(f"{qid} [{mode}] {_first_difference(a, b)}")
    total = len(set(before) | set(after)) * len(MODES)
    print(f"{total - differing} of {total} replies identical, {differing} differ")
    return 1 if differing else 0


# A focus block's header: ``path:start-end kind name (score 1.00) matched: 3-4``.
_BLOCK = re.compile(r"^(?P<path>\S+?):(?P<start>\d+)-(?P<end>\d+) .*\(score [-\d.e+]+\)(?: matched: .*)?$")
_SHOWN = re.compile(r"^(\d+): ")


def focus_hits(text: str) -> list[Hit]:
    """The blocks a ``focus`` reply shows, in order, as scored hits."""
    hits: list[Hit] = []
    shown: list[int] = []
    for line in text.split("\n"):
        if (block := _BLOCK.match(line)) is not None:
            if hits:
                hits[-1] = Hit(hits[-1].path, hits[-1].ranges, line_ranges(shown))
            hits.append(Hit(block["path"], ((int(block["start"]), int(block["end"])),)))
            shown = []
        elif hits and (number := _SHOWN.match(line)) is not None:
            shown.append(int(number[1]))
    if hits:
        hits[-1] = Hit(hits[-1].path, hits[-1].ranges, line_ranges(shown))
    return hits


def focus_table(args: argparse.Namespace) -> int:
    queries = {q["id"]: q for q in devsets.load_queries(args.data, None, None)}
    recordings = [(path.name, _load(path)) for path in args.recordings]
    rows = []
    for scope in ("all", *dict.fromkeys(q["set"] for q in queries.values())):
        asked = [qid for qid, q in queries.items() if scope in ("all", q["set"])]
        cells = [scope, str(len(asked))]
        for _, recorded in recordings:
            scored = [score(Answer(focus_hits(recorded[qid]["focus"])), queries[qid]) for qid in asked]
            cells += [fmt(mean([s[key] for s in scored])) for key in ("line5", "shown5", "acc5")]
        rows.append(cells)
    heads = [f"{m} {name}" for name, _ in recordings for m in ("Line@5", "Shown@5", "file Acc@5")]
    print(table(["set", "questions", *heads], rows))
    command = " ".join(["python -m bench.replies focus", *map(str, args.recordings)])
    print(f"\n(focus on each question's title; {command})")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record every reply mode for the development questions")
    rec.add_argument("out", type=Path)
    devsets.add_checkout_options(rec, "checkouts")
    rec.add_argument("--only", help="regex on query ids")
    rec.add_argument("--limit", type=int)
    cmp_ = sub.add_parser("compare", help="compare two recordings; exit 1 when any reply differs")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    foc = sub.add_parser("focus", help="Line@5 of the focus replies of recordings, per set")
    foc.add_argument("recordings", type=Path, nargs="+")
    foc.add_argument("--data", type=Path, default=devsets.SHARED, help="folder of the question files")
    args = ap.parse_args(argv)
    if args.command == "record":
        devsets.checked_folders(args)
        return record(args)
    if args.command == "focus":
        return focus_table(args)
    return compare(args)


if __name__ == "__main__":
    raise SystemExit(main())
