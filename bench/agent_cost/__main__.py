"""``python -m bench.agent_cost COMMAND [options]``: the commands named below."""

from bench import agent_cost
from bench.common.commands import dispatch

COMMANDS = {
    "tools": "bench.agent_cost.tool_list",
    "transcripts": "bench.agent_cost.transcripts",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.agent_cost", agent_cost.__doc__ or "", COMMANDS))
