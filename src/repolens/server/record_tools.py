"""Record the MCP SDK's ``tools/list`` reply for the stdio front (:mod:`repolens.server.tool_list`).

Run by hand after changing a tool or upgrading the SDK::

    python -m repolens.server.record_tools

It builds the server (so it imports the SDK and every tool), which the
front itself must never do: that is why it lives apart from the list it
writes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repolens.server.tool_list import RECORD_COMMAND, RECORDED, SDK_DISTRIBUTIONS


def sdk_replies(server: Any, lines: Sequence[str]) -> list[str]:
    """What the SDK's stdio server ``server`` writes for ``lines`` sent in
    one session (the input stays open until every request is answered)."""
    import anyio

    written: list[str] = []
    ids = [message["id"] for message in map(json.loads, lines) if "id" in message]

    class Lines:
        def __aiter__(self) -> Any:
            return self.lines()

        async def lines(self) -> Any:
            for line in lines:
                yield line
            while len(written) < len(ids):
                await anyio.sleep(0.005)

    class Out:
        async def write(self, text: str) -> None:
            written.append(text)

        async def flush(self) -> None:
            pass

    anyio.run(server.run_stdio_streams, Lines(), Out())
    return written


def sdk_tools_list(server: Any, protocol_version: str) -> str:
    """The SDK's reply line to ``tools/list`` (id 2) after ``initialize`` in ``protocol_version``."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": protocol_version,
            "capabilities": {},
            "clientInfo": {"name": "record", "version": "0"},
        },
    }
    messages = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages.append({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    return sdk_replies(server, [json.dumps(m) + "\n" for m in messages])[-1]


def record(path: Path = RECORDED) -> dict[str, Any]:
    """Record the SDK's ``tools/list`` reply of a stdio server of one
    repository, for every handshake protocol version it answers alike in."""
    from importlib import metadata

    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from repolens.server.tools import build_server

    replies = {v: sdk_tools_list(build_server(Path.cwd()), v) for v in HANDSHAKE_PROTOCOL_VERSIONS}
    latest = replies[HANDSHAKE_PROTOCOL_VERSIONS[-1]]
    recorded = {
        "made_by": RECORD_COMMAND,
        "sdk": {name: metadata.version(name) for name in SDK_DISTRIBUTIONS},
        "protocol_versions": [v for v, reply in replies.items() if reply == latest],
        "tools": json.loads(latest)["result"]["tools"],
    }
    path.write_text(json.dumps(recorded, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return recorded


if __name__ == "__main__":
    made = record()
    print(f"{RECORDED}: {len(made['tools'])} tools, protocol versions {', '.join(made['protocol_versions'])}")
