"""JSON parity on the development set: ``search --json`` carries what the packet shows.

    python -m bench.replies json --checkouts DIR [--data DIR] [--index-cache DIR]
        [--max-chars 6000,2000,300] [--input query|title|both] [--only REGEX] [--limit N]

For every development question (the full text, a pasted issue or commit
message, and its title), at every budget, the question is searched twice with
the default settings, once as a packet and once as JSON, and the two replies
must agree: the JSON parses; its ``hits`` are the packet's rendered blocks in
the same order (path, start and end line) with the same text (so the same
lines and markers); its ``omitted`` are the hits the packet names as not
fitting; the hits' text fits ``max_chars`` (the budget is the evidence, not
the JSON around it); the echoed question is at most ``QUERY_ECHO_CHARS``
characters with its full length in ``query_chars``.

Indexes come from the development benchmark's cache (``devsets.py``'s
``default`` variant; built there when missing). Prints a table per input and
budget, every disagreement, and the command line; exits 1 on any
disagreement.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys

from bench.common.devsets import (
    add_checkout_options,
    checked_folders,
    checkout_name,
    engine_state,
    ensure_index,
    identity_key,
    index_identity,
    load_queries,
)
from bench.common.stats import table
from repolens import service
from repolens.reply.json_reply import QUERY_ECHO_CHARS
from repolens.reply.modes import SearchReply
from repolens.settings import load_settings
from repolens.store.handles import readers


def disagreements(packet: SearchReply, reply: SearchReply, question: str, budget: int) -> list[str]:
    """What the JSON reply gets wrong against the packet reply of the same search."""
    assert packet.packet is not None
    try:
        data = json.loads(reply.text)
    except json.JSONDecodeError as exc:
        return [f"JSON does not parse: {exc}"]
    out = []
    shown = [(r.block.path, r.block.start_line, r.block.end_line) for r in packet.packet.rendered]
    hits = [(h["path"], h["start_line"], h["end_line"]) for h in data["hits"]]
    if hits != shown:
        out.append(f"hits {hits} != packet {shown}")
    elif [h["text"] for h in data["hits"]] != [r.text for r in packet.packet.rendered]:
        out.append("a hit's text differs from the packet's block")
    omitted = [(o["path"], o["start_line"], o["end_line"]) for o in data["omitted"]]
    if omitted != [(b.path, b.start_line, b.end_line) for b in packet.packet.omitted]:
        out.append("omitted hits differ")
    evidence = sum(len(h["text"]) for h in data["hits"])
    if evidence > budget:
        out.append(f"hits' text is {evidence} chars over a budget of {budget}")
    if data["query"] != question[:QUERY_ECHO_CHARS] or data["query_chars"] != len(question):
        out.append("the echoed question is not its first chars with its length")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_checkout_options(ap, "checkouts")
    ap.add_argument("--max-chars", default=f"{load_settings(None).max_chars},2000,300")
    ap.add_argument("--input", choices=["query", "title", "both"], default="both")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--only", help="regex on query ids")
    args = ap.parse_args(argv)
    checked_folders(args)
    budgets = [int(b) for b in args.max_chars.split(",")]
    inputs = ["query", "title"] if args.input == "both" else [args.input]
    queries = load_queries(args.data, args.only, args.limit)
    if not queries:
        sys.exit("no queries selected")

    stats: dict[tuple[str, int], dict[str, list]] = {
        (i, b): {"n": [], "hits": [], "packet": [], "json": []} for i in inputs for b in budgets
    }
    problems: list[str] = []
    for q in queries:
        root = args.checkouts.resolve() / checkout_name(q)
        identity = index_identity(load_settings(root))
        index_dir = args.index_cache.expanduser().resolve() / checkout_name(q) / identity_key(identity)
        status = ensure_index(root, index_dir, identity, reindex=False)
        if not status.ok:
            problems.append(f"{q['id']}: index {status.state} {status.error}")
            continue
        for inp in inputs:
            for budget in budgets:
                kw = {"index_dir": index_dir, "max_chars": budget, "auto_index": False}
                packet = service.search_code(q[inp], root, **kw)
                reply = service.search_code(q[inp], root, mode="json", **kw)
                s = stats[inp, budget]
                s["n"].append(1)
                s["hits"].append(len(packet.packet.rendered) if packet.packet else 0)
                s["packet"].append(len(packet.text))
                s["json"].append(len(reply.text))
                problems += [
                    f"{q['id']} {inp} max_chars={budget}: {p}"
                    for p in disagreements(packet, reply, q[inp], budget)
                ]
        readers.clear()

    print(f"$ {shlex.join(['python', *sys.argv])}\n")
    print(f"{engine_state()}; queries {len(queries)}\n")
    rows = []
    for (inp, budget), s in stats.items():
        n = len(s["n"])
        if not n:
            continue
        bad = sum(1 for p in problems if f" {inp} max_chars={budget}:" in p)
        rows.append(
            [
                inp,
                str(budget),
                str(n),
                str(n - bad),
                str(sum(s["hits"])),
                str(sum(1 for h in s["hits"] if not h)),
                f"{statistics.median(s['packet']):.0f}",
                f"{statistics.median(s['json']):.0f}",
                f"{max(s['json'])}",
            ]
        )
    head = "input|max_chars|replies|JSON = packet|hits shown|replies with no hit|packet chars p50"
    print(table([*head.split("|"), "JSON chars p50", "JSON chars max"], rows))
    print(f"\n{len(problems)} disagreements")
    for p in problems[:50]:
        print(f"- {p}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
