"""``python -m bench.serving COMMAND [options]``: the commands named below."""

from bench import serving
from bench.common.commands import dispatch

COMMANDS = {
    "calls": "bench.serving.calls",
    "load": "bench.serving.load",
    "page": "bench.serving.page",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.serving", serving.__doc__ or "", COMMANDS))
