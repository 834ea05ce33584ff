"""``python -m bench.indexing COMMAND [options]``: the commands named below."""

from bench import indexing
from bench.common.commands import dispatch

COMMANDS = {
    "throughput": "bench.indexing.throughput",
    "freshness": "bench.indexing.freshness",
    "history": "bench.indexing.history",
    "branches": "bench.indexing.branches",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.indexing", indexing.__doc__ or "", COMMANDS))
