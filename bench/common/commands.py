"""One entry, several commands: ``python -m bench.<entry> <command> [options]``.

An entry that groups benchmarks of one kind (``bench.speed``,
``bench.replies``, ...) maps command names to the modules that implement
them (``"module"``, or ``"module word"`` for a module whose own first
argument is ``word``); each module has a ``main(argv)`` with its own
``argparse`` options.
Modules are imported only when their command runs, so one command's
dependencies (the MCP client, psycopg) never load for another.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence


def dispatch(prog: str, doc: str, commands: Mapping[str, str], argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv[0]`` names (a module of ``commands``, by dotted
    name) with the rest of ``argv``; without one, or with ``-h``, print
    ``doc`` and the commands, each with its module's first docstring line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in commands:
        lines = [f"usage: python -m {prog} COMMAND [options]   (COMMAND --help for its options)", "", doc, ""]
        for name, target in commands.items():
            first = (importlib.import_module(target.split()[0]).__doc__ or "").strip().splitlines()
            lines.append(f"  {name:<12} {first[0] if first else ''}")
        print("\n".join(lines))
        if args and args[0] not in ("-h", "--help"):
            print(f"\nunknown command {args[0]!r}", file=sys.stderr)
            return 2
        return 0 if args else 2
    module, *prefix = commands[args[0]].split()
    # argparse names the program after argv[0]: the command as typed
    sys.argv = [f"python -m {prog}" if prefix else f"python -m {prog} {args[0]}", *args[1:]]
    return importlib.import_module(module).main([*prefix, *args[1:]]) or 0
