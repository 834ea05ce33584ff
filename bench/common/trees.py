"""Source trees compared in one run: each benchmark that times repolens in
new processes (``bench.speed``, ``bench.postgres build``) can run several
trees side by side, ``--tree NAME=PATH/src``; this tree's ``src`` by default."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.common.paths import SRC

HERE_SRC = SRC


def env_for(src: Path) -> dict[str, str]:
    """The environment of a process that runs the repolens of ``src``: no
    ``REPOLENS_`` setting of the caller's leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    env["PYTHONPATH"] = str(src)
    return env


def compiled_copy(src: Path, dest: Path) -> Path:
    """``src`` copied to ``dest`` (without bytecode) and compiled there."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(dest)], check=True)
    return dest


def given_trees(specs: list[str]) -> dict[str, Path]:
    """``--tree NAME=PATH`` arguments as names to resolved folders; this tree's ``src`` when none."""
    return {n: Path(s).resolve() for n, s in (t.split("=", 1) for t in specs)} or {"this": HERE_SRC}
