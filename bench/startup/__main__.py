"""``python -m bench.startup COMMAND [options]``: the commands named below."""

from bench import startup
from bench.common.commands import dispatch

COMMANDS = {
    "index": "bench.startup.index",
    "cli": "bench.startup.cli",
    "serve": "bench.startup.serve",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.startup", startup.__doc__ or "", COMMANDS))
