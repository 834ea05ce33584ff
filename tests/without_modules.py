"""A repolens command run by an interpreter that cannot import some modules,
as after a ``pip install .`` without an extra: a finder placed first on
``sys.meta_path`` refuses them exactly as a missing package is refused
(``ModuleNotFoundError``), before repolens is imported."""

from __future__ import annotations

import sys

_CODE = """
import sys
BLOCKED = set(sys.argv.pop(1).split(","))

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _Missing())
from repolens.cli import main
raise SystemExit(main())
"""


def repolens_without(*modules: str) -> list[str]:
    """The command line that runs ``repolens`` without ``modules`` (top-level
    names): append the command's arguments."""
    return [sys.executable, "-c", _CODE, ",".join(modules)]
