"""Agent-style sessions over stdio: do replies and errors say what to do next?

    python -m bench.agent_cost transcripts [--checkouts DIR] [--data DIR] [--index-cache DIR] [--questions N]

For the first ``--questions`` commit questions and identifier questions of
the development set, starts ``repolens serve --root CHECKOUT --no-watch``
and drives it with the MCP SDK's client as an agent would: lists the tools,
asks ``search_code`` the question, follows the first omission marker with
the ``read_snippet`` call it names, shows the result again with its
``query_id`` in mode=files, asks ``find_symbol`` for the identifier; then
asks ``get_focused_context``; then the calls with little to answer (no
match, one branch) and the mistakes agents make (an argument of the wrong
type, a bound passed, an unknown repository, kind, tool or argument, a
missing argument).
Prints each call with the key lines of its reply (its first lines and every
line naming a next step) and, for each error, whether it names what to do.
An index from ``--index-cache`` (as ``devsets.py`` builds them) is copied
first: searches write remembered results into it. Measures nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.common.devsets import add_checkout_options, checked_folders

MARKER = re.compile(r"use read_snippet (\S+) (\d+) (\d+)")
NEXT_STEP = re.compile(r"read_snippet|query_id|next files|next_cursor|(^|: )(pass|use|call|set|run|check) ")
# An error that says what to send instead: a fix, the type or the values expected.
FIX = re.compile(NEXT_STEP.pattern + r"|expected |must be |known (tools|arguments) are|: missing")
# Calls an agent makes once per repository: what the reply says when there is little to say.
ONCE: list[tuple[str, dict[str, Any]]] = [
    ("index_status", {}),
    ("list_repositories", {}),
    ("compare_branches", {"paths": ["README.md"]}),
    ("search_code", {"query": "zqxjv wvkpq"}),
    ("find_symbol", {"name": "no_such_symbol_zqxj"}),
    ("search_history", {"query": "why was this changed"}),
]
MISTAKES: list[tuple[str, dict[str, Any]]] = [
    ("search_history", {}),
    ("run_tests", {"runner": "make"}),
    ("search_code", {"query": "x", "top_k": "5"}),
    ("search_code", {"query": "x", "top_k": 500}),
    ("search_code", {"query": "x", "repo": "no-such-repo"}),
    ("search_code", {"query": "x", "kind": "spell"}),
    ("search_code", {"query": "x", "mode": "markdown"}),
    ("search_code", {"query": "x", "path": "no/such/folder"}),
    ("search_code", {"query": "x", "filter": "py"}),
    ("read_snippet", {"path": "README.md", "start": 1}),
    ("read_snippet", {"path": "no_such_file.py", "start": 1, "end": 5}),
    ("get_chunk", {"chunk_id": "nope"}),
    ("grep", {"pattern": "x"}),
]


def key_lines(text: str, first: int = 3) -> list[str]:
    lines = text.splitlines()
    return lines[:first] + [line for line in lines[first:] if NEXT_STEP.search(line)][:4]


async def session(root: Path, index_dir: Path, questions: list[dict[str, Any]]) -> None:
    args = ["-m", "repolens", "serve", "--root", str(root), "--index-dir", str(index_dir), "--no-watch"]
    params = StdioServerParameters(command=sys.executable, args=args)
    async with Client(params, read_timeout_seconds=300, mode="legacy") as client:

        async def call(tool: str, arguments: dict[str, Any]) -> str:
            result = await client.call_tool(tool, arguments)
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            shown = json.dumps(arguments, ensure_ascii=False)
            print(f"\n> {tool} {shown if len(shown) < 160 else shown[:157] + '...'}")
            if result.is_error:
                fix = "says what to do" if FIX.search(text) else "SAYS NOTHING TO DO"
                print(f"  error ({fix}): {text}")
            else:
                print(f"  {len(text):,} chars")
                for line in key_lines(text):
                    print(f"  | {line[:150]}")
            return text

        tools = (await client.list_tools()).tools
        print(f"\n## {root.name}: {len(tools)} tools listed")
        for q in questions:
            if q["set"] == "identifiers":
                await call("find_symbol", {"name": q["query"]})
                continue
            reply = await call("search_code", {"query": q["query"]})
            if marker := MARKER.search(reply):
                path, start, end = marker.groups()
                await call("read_snippet", {"path": path, "start": int(start), "end": int(end)})
            if query_id := re.search(r"^query_id (\S+)$", reply, re.M):
                await call("search_code", {"query_id": query_id.group(1), "mode": "files"})
            await call("get_focused_context", {"query": q["query"][:200], "max_chars": 1500})
        for tool, arguments in [*ONCE, *MISTAKES]:
            await call(tool, arguments)
        MISTAKES.clear()  # once is enough: the same replies on every repository
        ONCE.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_checkout_options(parser)
    parser.add_argument("--questions", type=int, default=3)
    args = parser.parse_args(argv)
    checked_folders(args)
    print(f"command: {shlex.join([Path(sys.executable).name, *sys.argv])}")
    chosen: dict[str, list[dict[str, Any]]] = {}
    for name in ("commits", "identifiers"):
        questions = json.loads((Path(args.data) / f"{name}-dev.json").read_text())
        for q in questions[: args.questions]:
            checkout = f"{q['repo'].replace('/', '__')}@{q['commit'][:12]}"
            chosen.setdefault(checkout, []).append(q)
    for checkout, questions in chosen.items():
        with tempfile.TemporaryDirectory(prefix="repolens-transcript-") as tmp:
            index_dir = Path(tmp) / "index"
            cached = sorted((Path(args.index_cache) / checkout).glob("*")) if args.index_cache else []
            if cached:
                shutil.copytree(cached[0], index_dir, symlinks=True)
            asyncio.run(session(Path(args.checkouts) / checkout, index_dir, questions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
