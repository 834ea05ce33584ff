"""What a search costs through the search page, against the same MCP call.

    python -m bench.serving page [ROOT] [--rounds 30] [--workers 1] [--explain]

Starts ``repolens serve --http`` on ROOT as ``bench.serving load`` does
(default: this checkout; a random bearer token, a free port, the index in a
temporary folder, built first, the watcher and the access log on),
then, for each of --rounds rounds and each question of ``bench.serving load``'s
QUERIES, asks it twice, interleaved, in an order that alternates: once as an
MCP ``tools/call`` of ``search_code`` (one JSON-RPC POST to ``/mcp``, read to
the end of its event stream), once as the page's ``GET /search`` with the
same arguments (the whole HTML page, colours, links and, with --explain, the
charts). One client, one request at a time, keep-alive connections, the
bearer header for both. Every page's reply text is checked against the MCP
text (they must be the same). Prints the command line and one markdown
table: requests, p50, p90 and mean latency of each, the page's ratio to
MCP, and the server's CPU time per request (``CPU ms``) while each front's requests ran
(``/proc``: what the other sessions sharing the machine disturb least);
then the median of each pair's page / MCP ratio.
Client and server share the machine.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import secrets
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx2

from bench.common.paths import REPO_ROOT
from bench.common.stats import pct
from bench.serving.load import QUERIES, cpu_seconds, free_port, start_server

REPLY = re.compile(r'<textarea id="reply-text" hidden readonly>(.*?)</textarea>', re.S)


def mcp_text(client: httpx2.Client, url: str, arguments: dict, rid: int) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "search_code", "arguments": arguments},
    }
    reply = client.post(url, json=body, headers={"Accept": "application/json, text/event-stream"})
    reply.raise_for_status()
    data = next(line[6:] for line in reply.text.splitlines() if line.startswith("data: "))
    result = json.loads(data)["result"]
    assert not result.get("isError"), result
    return result["content"][0]["text"]


def page_text(client: httpx2.Client, url: str, arguments: dict) -> str:
    query = {"q": arguments["query"], "repo": arguments["repo"]}
    if arguments.get("explain"):
        query["explain"] = "1"
    reply = client.get(f"{url}?{urlencode(query)}")
    reply.raise_for_status()
    found = REPLY.search(reply.text)
    assert found, reply.text[:500]
    return html.unescape(found[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("root", nargs="?", default=str(REPO_ROOT))
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--explain", action="store_true", help="ask for explain (the page draws its charts)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    token = secrets.token_urlsafe(24)
    port = free_port()
    print("$ python -m bench.serving page " + shlex.join(sys.argv[1:]))
    with tempfile.TemporaryDirectory(prefix="page-cost-") as tmp:
        where = ["--index-dir", str(Path(tmp) / "index")]
        proc = start_server(root, port, token, where, Path(tmp) / "server.err", args.workers)
        base = f"http://127.0.0.1:{port}"
        times: dict[str, list[float]] = {"mcp": [], "page": []}
        cpu = {"mcp": 0.0, "page": 0.0}  # the server's CPU seconds while each front's requests ran
        ratios: list[float] = []  # page / MCP of each pair, asked one after the other
        same = asked = 0
        try:
            with httpx2.Client(headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
                for i, query in enumerate(QUERIES):  # warm: the first search of each question
                    arguments = {
                        "query": query,
                        "repo": "bench",
                        **({"explain": True} if args.explain else {}),
                    }
                    mcp_text(client, f"{base}/mcp", arguments, i)
                    page_text(client, f"{base}/search", arguments)
                for n in range(args.rounds):
                    for i, query in enumerate(QUERIES):
                        arguments = {
                            "query": query,
                            "repo": "bench",
                            **({"explain": True} if args.explain else {}),
                        }
                        order = ("mcp", "page") if (n + i) % 2 == 0 else ("page", "mcp")
                        texts = {}
                        for front in order:
                            used = cpu_seconds(proc.pid)
                            started = time.perf_counter()
                            if front == "mcp":
                                texts[front] = mcp_text(client, f"{base}/mcp", arguments, i)
                            else:
                                texts[front] = page_text(client, f"{base}/search", arguments)
                            times[front].append((time.perf_counter() - started) * 1000)
                            cpu[front] += cpu_seconds(proc.pid) - used
                        ratios.append(times["page"][-1] / times["mcp"][-1])
                        asked += 1
                        same += texts["mcp"] == texts["page"]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    mcp = times["mcp"]
    print(
        f"\n{root.name}, --workers {args.workers}{', explain' if args.explain else ''}: "
        f"{same} of {asked} page replies identical to the MCP call's\n"
    )
    print("| front | requests | p50 ms | p90 ms | mean ms | p50 / MCP | mean / MCP | CPU ms | CPU / MCP |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, front in (("MCP tools/call", "mcp"), ("page GET /search", "page")):
        values = times[front]
        mean = statistics.fmean(values)
        used = cpu[front] * 1000 / len(values)
        print(
            f"| {name} | {len(values)} | {pct(values, 0.5):.1f} | {pct(values, 0.9):.1f} | {mean:.1f} "
            f"| {pct(values, 0.5) / pct(mcp, 0.5):.2f} | {mean / statistics.fmean(mcp):.2f} "
            f"| {used:.1f} | {cpu[front] / cpu['mcp']:.2f} |"
        )
    print(f"\nmedian of the {len(ratios)} pairs' page / MCP: {statistics.median(ratios):.2f}")
    return 0 if same == asked else 1


if __name__ == "__main__":
    raise SystemExit(main())
