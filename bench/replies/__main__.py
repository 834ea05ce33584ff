"""``python -m bench.replies COMMAND [options]``: the commands named below."""

from bench import replies
from bench.common.commands import dispatch

COMMANDS = {
    "record": "bench.replies.record record",
    "compare": "bench.replies.record compare",
    "focus": "bench.replies.record focus",
    "json": "bench.replies.json_parity",
    "postgres": "bench.replies.postgres",
    "drift": "bench.replies.drift",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.replies", replies.__doc__ or "", COMMANDS))
