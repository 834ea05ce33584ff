"""git's file list: what a git work tree holds, as git itself decides.

Tracked files plus untracked files that are not ignored, so nested
.gitignore files, .git/info/exclude and the global excludes file all apply
without repolens reading them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

# Variables that would point git at another repository than the one at cwd
# (set, for example, when repolens runs inside a git hook).
_GIT_LOCATION_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


def git_env() -> dict[str, str]:
    """The environment for a git subprocess that must read the repository at
    its working directory, whatever variables a calling git hook has set."""
    return {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_ENV}


def git_ls_files(root: Path, paths: Sequence[str] | None = None) -> list[str] | None:
    """git's file list for ``root`` (relative to it), or None outside a work tree
    or without git. ``paths`` restricts it to those paths, taken literally."""
    git = shutil.which("git")
    if git is None:
        return None
    env = git_env()
    spec = ["--", *paths] if paths is not None else []
    command = [git, "--literal-pathspecs", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        proc = subprocess.run(
            [*command, *spec],
            cwd=root,
            env=env,
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    if proc.returncode != 0:
        # Not a work tree, inside .git, or a repository git refuses to read
        # (safe.directory): the walker applies the .gitignore files itself.
        return None
    # A path is listed once per stage while a merge conflict is unresolved.
    return list(dict.fromkeys(os.fsdecode(p) for p in proc.stdout.split(b"\0") if p))
