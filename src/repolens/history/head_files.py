"""HEAD's commit as git's files plainly say it, with no process.

A search (:mod:`repolens.history.heads`), ``status`` and the history reply
(:func:`repolens.history.gitlog.head_now`) ask where HEAD is, often: a git
process costs ~2.5 ms. The files git keeps it in (``HEAD``, the branch's
loose ref, ``packed-refs``) say it in the common layouts; any other layout
(reftable, a chain of symbolic refs) is left to git, by the caller. A
module of its own, below both of its callers: it runs nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_HASH = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SYMREFS = 5  # HEAD -> branch -> ...: a longer chain is left to git
_GIT_DIRS: dict[Path, Path] = {}  # a root -> the git folder of its work tree


def head_in_files(root: Path) -> str:
    """HEAD's commit of the work tree holding ``root``, as its git files
    plainly say; "" when they do not (not found, reftable, a ref git
    resolves otherwise)."""
    git_dir = _git_dir(root)
    if git_dir is None:
        return ""
    common = git_dir
    text = _read(git_dir / "commondir")  # a linked worktree: its branches are the repository's
    if text:
        common = git_dir / text
    text = _read(git_dir / "HEAD")
    for _ in range(_SYMREFS):
        if _HASH.fullmatch(text):
            return text
        ref = text.removeprefix("ref: ")
        if ref == text or not ref.startswith("refs/heads/"):
            return ""
        text = _read(common / ref) or _packed(common, ref)
    return ""


def _git_dir(root: Path) -> Path | None:
    """:func:`_find_git_dir`, found once per root (a search asks each time;
    a root with none is looked for again: it may become a work tree)."""
    found = _GIT_DIRS.get(root)
    if found is None:
        found = _find_git_dir(root)
        if found is not None:
            _GIT_DIRS[root] = found
    return found


def _find_git_dir(root: Path) -> Path | None:
    """The git folder of the work tree ``root`` is in: the nearest
    ``.git`` folder, or the one a ``.git`` file names (a linked worktree)."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        text = _read(dot_git)
        if text.startswith("gitdir: "):
            return folder / text.removeprefix("gitdir: ")
        if os.path.lexists(dot_git):
            return None
    return None


def _packed(common: Path, ref: str) -> str:
    """``ref``'s commit in ``packed-refs`` ("" when it is not there)."""
    try:
        with open(common / "packed-refs", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                sha, _, name = line.rstrip("\n").partition(" ")
                if name == ref:
                    return sha
    except OSError:
        pass
    return ""


def _read(path: Path) -> str:
    """A small file's first line, stripped ("" when it cannot be read)."""
    try:
        with open(path, "rb") as f:  # binary: a text layer costs more than the read
            first = f.read(4096).partition(b"\n")[0]
    except OSError:
        return ""
    return first.strip().decode("utf-8", "replace")
