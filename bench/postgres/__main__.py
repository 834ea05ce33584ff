"""``python -m bench.postgres COMMAND [options]``: the commands named below."""

from bench import postgres
from bench.common.commands import dispatch

COMMANDS = {
    "perf": "bench.postgres.perf",
    "build": "bench.postgres.build",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.postgres", postgres.__doc__ or "", COMMANDS))
