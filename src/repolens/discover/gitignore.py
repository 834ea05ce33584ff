"""Gitignore files as git reads them, for the walker (outside a git work tree).

Matching itself is :mod:`pathspec`'s (``GitIgnoreSpec``); here is what git
adds around it: invalid lines are dropped rather than fatal, and the
.gitignore files of nested folders stack, the deepest deciding first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore import GitIgnorePatternError

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


def read_gitignore(path: str | os.PathLike[str]) -> GitIgnoreSpec | None:
    """Compile one .gitignore-style file; None when it is missing, unreadable or empty."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return compile_gitignore(fh.read().splitlines())
    except OSError:
        return None


class GitIgnoreChain(Record):
    """The .gitignore files that apply inside one directory (walk mode).

    ``levels`` holds (prefix, spec) pairs, outermost first; ``prefix`` is the
    root-relative folder of that .gitignore with a trailing slash ("" at the
    root). Patterns are matched relative to their own folder, and a deeper
    file overrides a shallower one, as in git.
    """

    levels: tuple[tuple[str, GitIgnoreSpec], ...] = ()

    def child(self, prefix: str, spec: GitIgnoreSpec | None) -> GitIgnoreChain:
        if spec is None:
            return self
        return GitIgnoreChain((*self.levels, (prefix, spec)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """True if git would ignore root-relative path ``rel``."""
        suffix = "/" if is_dir else ""
        for prefix, spec in reversed(self.levels):
            verdict = spec.check_file(rel[len(prefix) :] + suffix).include
            if verdict is not None:
                return verdict
        return False
