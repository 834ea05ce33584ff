"""``python -m bench.org COMMAND [options]``: the commands named below."""

from bench import org
from bench.common.commands import dispatch

COMMANDS = {
    "scale": "bench.org.scale",
    "across": "bench.org.across",
    "ranking": "bench.org.ranking",
}

if __name__ == "__main__":
    raise SystemExit(dispatch("bench.org", org.__doc__ or "", COMMANDS))
