"""Whether ``HEAD`` still holds the history an index read: asked by every
search whose history leg votes, so asked cheaply.

The history leg votes with the commits read up to ``HistoryState.head``.
After a rewrite (``git commit --amend``, ``git reset --hard HEAD~1``, a
rebase, a branch switch) some of them are no longer on the branch, until
``repolens index`` reads the history afresh: the leg must not vote with
them (:func:`off_branch` lists them; it votes with the others). Asking
git costs a process (~2.5 ms) per search, about as much as the leg
itself; so HEAD's commit is first read from the files git keeps it in
(``HEAD``, the branch's loose ref, ``packed-refs``): when that is the commit
read, which is the common case, HEAD holds it and nothing runs. The files
are never trusted to say more: any other answer (HEAD moved, or a layout
they do not plainly say, such as reftable) is git's, and whether one
commit holds another never changes, so it is asked once per pair.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_HASH = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SYMREFS = 5  # HEAD -> branch -> ...: a longer chain is left to git
_HOLDS: dict[tuple[Path, str, str], bool] = {}  # (root, read, now): whether now holds read
_HOLDS_KEPT = 256
_OFF: dict[tuple[Path, str, str], frozenset[str] | None] = {}  # (root, read, now): commits now lost
OFF_MOST = 5_000  # more commits off the branch: the history is read afresh before it votes again
_GIT_DIRS: dict[Path, Path] = {}  # a root -> the git folder of its work tree


def left_behind(root: Path, read: str) -> str:
    """HEAD's commit when it no longer holds ``read`` (the commit the
    history was read up to), "" while it does or when git cannot say."""
    # the files read here, not by gitlog.head_now: a search must not load
    # gitlog (subprocess, tempfile...) while HEAD did not move
    now = head_in_files(root)
    if now == read:
        return ""
    from repolens.history import gitlog

    now = now or gitlog.head_now(root)
    if not now or now == read:
        return ""
    key = (root, read, now)
    holds = _HOLDS.get(key)
    if holds is None:
        if len(_HOLDS) >= _HOLDS_KEPT:
            _HOLDS.clear()
        holds = _HOLDS[key] = gitlog.is_ancestor(root, read, now)
    return "" if holds else now


def off_branch(root: Path, read: str, now: str) -> frozenset[str] | None:
    """The commits of the history read up to ``read`` that ``now`` (HEAD,
    which :func:`left_behind` found does not hold ``read``) does not hold:
    the leg votes without them. More than :data:`OFF_MOST` of them (a
    rewrite of a long history: they are not all listed) or None (git
    cannot say): the leg waits for ``repolens index``. Asked of git once
    per pair, as whether one holds the other."""
    key = (root, read, now)
    if key not in _OFF:
        from repolens.history import gitlog

        if len(_OFF) >= _HOLDS_KEPT:
            _OFF.clear()
        listed = gitlog.not_held(root, read, now, OFF_MOST)
        _OFF[key] = None if listed is None else frozenset(listed)
    return _OFF[key]


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
