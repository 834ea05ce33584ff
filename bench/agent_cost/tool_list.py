"""What the MCP tool list costs an agent up front, per tool.

    python -m bench.agent_cost tools

Lists the tools of a server built for one repository (this checkout) with
the SDK's in-memory client and measures the JSON of each tool as sent in
``tools/list`` (name, description, input schema), and the prompt. Tokens are
estimated at 4 characters each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from mcp import Client

from bench.common.paths import REPO_ROOT
from repolens.server.tools import build_server


async def measure(root: Path) -> None:
    async with Client(build_server({"repo": root})) as client:
        tools = (await client.list_tools()).tools
        prompts = (await client.list_prompts()).prompts
        guide = await client.get_prompt(prompts[0].name) if prompts else None
    sizes = {t.name: len(json.dumps(t.model_dump(mode="json", exclude_none=True))) for t in tools}
    total = len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))
    print("| tool | chars | description chars |")
    print("|---|---|---|")
    for t in tools:
        print(f"| `{t.name}` | {sizes[t.name]:,} | {len(t.description or '')} |")
    print(f"| **all {len(tools)} tools** | **{total:,}** (~{total // 4:,} tokens) | |")
    if guide is not None:
        text = guide.messages[0].content.text
        print(f"\nprompt `{prompts[0].name}`: {len(text):,} chars")


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    print("$ python -m bench.agent_cost tools\n")
    asyncio.run(measure(REPO_ROOT))


if __name__ == "__main__":
    main()
