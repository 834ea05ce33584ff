"""What a git work tree says about itself: its branch, its commit, its siblings.

Read with ``git`` itself (never by parsing ``.git``), with the variables
that would point git elsewhere removed, as :mod:`repolens.discover.git`
does. Outside a work tree, or without git, every answer is empty.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from repolens.discover.git import _GIT_LOCATION_ENV

# A detached HEAD has no branch: it is named by its commit, shortened.
DETACHED_PREFIX = "detached-"


def _git(root: Path, *args: str) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_ENV}
    try:
        proc = subprocess.run([git, *args], cwd=root, env=env, capture_output=True, check=False)
    except OSError:
        return None
    return os.fsdecode(proc.stdout).strip() if proc.returncode == 0 else None


def head_facts(root: Path) -> dict[str, str]:
    """``{"branch": ..., "commit": ...}`` of the work tree at ``root`` ({}
    outside one). A detached HEAD's branch is ``detached-<12 hex>``, as
    :func:`worktrees` names it; a branch with no commit yet has its name
    and no commit."""
    commit = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") or ""
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    if branch:
        return {"branch": branch, "commit": commit}
    return {"branch": DETACHED_PREFIX + commit[:12], "commit": commit} if commit else {}


def git_dirs(root: Path) -> list[Path]:
    """The work tree's own git folder (its ``HEAD``) and the repository's
    (its branches), resolved, the same one twice for a main work tree; []
    outside a work tree."""
    out = _git(root, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    if not out or len(out.split("\n")) != 2:
        return []
    return [(root / line).resolve() for line in out.split("\n")]


def worktrees(root: Path) -> list[tuple[Path, str]]:
    """Every work tree of the repository ``root`` belongs to, as (folder,
    branch), the main one first; [] outside a work tree. Worktrees whose
    folder is gone are left out."""
    out = _git(root, "worktree", "list", "--porcelain")
    if not out:
        return []
    found: list[tuple[Path, str]] = []
    path: Path | None = None
    branch = ""
    for line in [*out.split("\n"), ""]:
        if line.startswith("worktree "):
            path, branch = Path(line.removeprefix("worktree ")), ""
        elif line.startswith("branch "):
            branch = line.removeprefix("branch ").removeprefix("refs/heads/")
        elif line.startswith("HEAD ") and not branch:
            branch = DETACHED_PREFIX + line.removeprefix("HEAD ")[:12]
        elif not line and path is not None:
            if path.is_dir() and branch:
                found.append((path.resolve(), branch))
            path = None
    return found
