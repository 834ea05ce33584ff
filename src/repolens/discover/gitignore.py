"""Gitignore files as git reads them, for the walker (outside a git work tree).

Each pattern is compiled by :mod:`pathspec` (``GitIgnoreSpecPattern``); here
is what git adds around it: invalid lines are dropped rather than fatal, the
.gitignore files of nested folders stack, the deepest deciding first, and a
folder is judged as git judges it, by the last pattern that matches the
folder itself (:class:`Gitignore`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore import GitIgnorePatternError
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from repolens.record import Record


def compile_gitignore(lines: Iterable[str]) -> GitIgnoreSpec | None:
    """Compile .gitignore lines the way git reads them: invalid lines are dropped.

    Returns None when no line is a pattern (empty file, only comments).
    """
    lines = list(lines)
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except GitIgnorePatternError:
        valid = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except GitIgnorePatternError:
                continue
            valid.append(line)
        spec = GitIgnoreSpec.from_lines(valid)
    if not any(p.include is not None for p in spec.patterns):
        return None
    return spec


class Gitignore(Record):
    """One .gitignore file's patterns, each as git matches it against a
    file (``files``) and a folder (``folders``): the last pattern matching
    the path itself decides, a folder-only one (``x/``) matching folders
    only.

    pathspec's own verdict (``GitIgnoreSpec.check_file``) counts a folder's
    patterns for what is inside it, and lets a re-including one win: a
    folder asked as ``src/`` under ``*`` then ``!*/`` is ignored (git keeps
    it: ``!*/`` is the last pattern matching it), ``a/**`` ignores ``a/``
    (git: only what is inside ``a``), and under ``!*/`` in a nested
    .gitignore every file is re-included, so the ``*.out`` of the file above
    no longer applies. The walker judges a folder before looking inside, and
    prunes it when ignored, so a pattern matching a folder above the path
    (pathspec's ``ps_d`` group) never decides for it."""

    files: tuple[tuple[re.Pattern[str], bool], ...]
    folders: tuple[tuple[re.Pattern[str], bool], ...]

    def ignores(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included, None: no pattern matches ``path``."""
        verdict = None
        for regex, include in self.folders if is_dir else self.files:
            found = regex.search(path)
            if found is not None and found.groupdict().get("ps_d") is None:
                verdict = include
        return verdict


def _patterns(lines: Iterable[str], *, folder: bool) -> tuple[tuple[re.Pattern[str], bool], ...]:
    """Each pattern of ``lines`` compiled, for a folder's path: a
    folder-only pattern without its slash (see :class:`Gitignore`)."""
    out = []
    for line in lines:
        text = line
        if folder:
            text = line if line.endswith("\\ ") else line.rstrip(" ")
            text = text.removesuffix("/")
        try:
            regex, include = GitIgnoreSpecPattern.pattern_to_regex(text)
        except (GitIgnorePatternError, ValueError):  # git drops an invalid line
            continue
        if regex is not None and include is not None:
            out.append((re.compile(regex), include))
    return tuple(out)


def read_gitignore(path: str | os.PathLike[str]) -> Gitignore | None:
    """Compile one .gitignore-style file; None when it is missing, unreadable or empty."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:  # git skips a BOM too
            lines = fh.read().splitlines()
    except OSError:
        return None
    files = _patterns(lines, folder=False)
    return Gitignore(files, _patterns(lines, folder=True)) if files else None


class GitIgnoreChain(Record):
    """The .gitignore files that apply inside one directory (walk mode).

    ``levels`` holds (prefix, file) pairs, outermost first; ``prefix`` is the
    root-relative folder of that .gitignore with a trailing slash ("" at the
    root). Patterns are matched relative to their own folder, and a deeper
    file overrides a shallower one, as in git.
    """

    levels: tuple[tuple[str, Gitignore], ...] = ()

    def child(self, prefix: str, ignore: Gitignore | None) -> GitIgnoreChain:
        if ignore is None:
            return self
        return GitIgnoreChain((*self.levels, (prefix, ignore)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """True if git would ignore root-relative path ``rel`` (whose folders it does not)."""
        for prefix, ignore in reversed(self.levels):
            verdict = ignore.ignores(rel[len(prefix) :], is_dir)
            if verdict is not None:
                return verdict
        return False
