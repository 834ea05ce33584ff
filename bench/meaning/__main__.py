"""``python -m bench.meaning COMMAND [options]``: the commands named below."""

from bench import meaning
from bench.common.commands import dispatch

COMMANDS = {
    "set": "bench.meaning.devset",
    "related": "bench.meaning.related",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.meaning", meaning.__doc__ or "", COMMANDS))
