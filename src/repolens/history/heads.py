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

from pathlib import Path

from repolens.history.head_files import head_in_files

_HOLDS: dict[tuple[Path, str, str], bool] = {}  # (root, read, now): whether now holds read
_HOLDS_KEPT = 256
_OFF: dict[tuple[Path, str, str], frozenset[str] | None] = {}  # (root, read, now): commits now lost
OFF_MOST = 5_000  # more commits off the branch: the history is read afresh before it votes again


def left_behind(root: Path, read: str) -> str:
    """HEAD's commit when it no longer holds ``read`` (the commit the
    history was read up to), "" while it does or when git cannot say."""
    # the files read here, not by gitlog.head_now: a search must not load
    # gitlog (subprocess, tempfile...) while HEAD did not move
    now = head_in_files(root)
    if now == read:
        return ""
    from repolens.history import gitlog

    now = now or gitlog.head_by_git(root)  # (the files said nothing plain)
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
