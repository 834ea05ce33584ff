"""``python -m bench.speed COMMAND [options]``: the commands named below."""

from bench import speed
from bench.common.commands import dispatch

COMMANDS = {
    "index": "bench.speed.index",
    "cli": "bench.speed.cli",
    "serve": "bench.speed.serve",
    "search": "bench.speed.search",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.speed", speed.__doc__ or "", COMMANDS))
