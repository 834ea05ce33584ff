"""Which paths are excluded by name: .gitignore, built-in noise, secrets, .repolensignore.

All pattern matching is gitignore syntax, done by :mod:`pathspec`
(``GitIgnoreSpec``). This module only decides *which* rules apply to a path
and in what order: the built-in lists are data in
:mod:`repolens.discover.noise`, .gitignore files are read by
:mod:`repolens.discover.gitignore`, and :mod:`repolens.discover.listing`
walks the file system or takes git's list.

Layers, checked in this order for every directory and file:

1. **Internal folders** (``.git``, ``.hg``, ``.svn``, ``.bzr``, ``.jj``,
   ``.repolens`` and the index folder if it lies inside the root): skipped
   silently, never counted, cannot be re-included.
2. **.gitignore** (walk mode only; in a git work tree git itself has already
   left those files out). Git's verdict is final: ``.repolensignore`` cannot
   re-include a git-ignored file, because indexing something the project
   chose to hide from git would be surprising.
3. **Secrets by name** (``SECRET_RULES``): final, counted as ``secret``;
   ``!`` lines in ``.repolensignore`` cannot resurrect them.
4. **Built-in noise rules** (``NOISE_RULES``) followed by the project's
   ``.repolensignore``, as one gitignore list in which the last match wins:
   ``.repolensignore`` adds exclusions, and its ``!pattern`` lines re-include
   what a built-in rule excluded (``!dist/``, ``!vendor/keep.js``).

Directories: as in git, an excluded directory hides everything beneath it and
is not descended -- with one extension: a ``!`` line containing a slash
(``!vendor/keep.js``, ``!node_modules/pkg/``, ``!**/dist/``) keeps the
directories on its path open, so it can re-include a file inside a built-in
excluded directory. A ``!`` line without a slash (``!dist/``, ``!*.min.js``)
applies at any depth but does not reach into excluded directories, so
``!dist/`` re-includes ``dist/`` but not ``node_modules/pkg/dist/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore import GitIgnorePatternError

from repolens.discover.gitignore import compile_gitignore
from repolens.discover.noise import (
    BUILD_OUTPUT_NAMES,
    INTERNAL_NAMES,
    NOISE_PATTERNS,
    PROJECT_MANIFESTS,
    SECRET_RULES,
)
from repolens.discover.skips import SkipReason
from repolens.errors import ConfigError
from repolens.record import Record

PROJECT_IGNORE_FILE = ".repolensignore"

_GLOB_CHARS = frozenset("*?[\\")


class DirState(Record):
    """The verdict for one directory.

    ``excluded`` is why the directory (and, by default, everything beneath it)
    is excluded, or None. ``prune`` means nothing beneath it can be
    re-included, so a walker must not descend.
    """

    excluded: SkipReason | None = None
    prune: bool = False


ROOT_STATE = DirState()


def _pattern_body(line: str) -> str:
    return line.removeprefix("!").rstrip("/")


def _literal_run(line: str) -> str:
    """The longest run of plain characters in a glob ("" if it has brackets or escapes)."""
    body = _pattern_body(line)
    if "[" in body or "\\" in body:
        return ""
    return max(body.replace("?", "*").split("*"), key=len)


_NAME_CACHE_SIZE = 100_000


class NameRules:
    """Gitignore rules that each match one path component (a file or folder name).

    ``check(name, is_dir)`` returns pathspec's verdict: True (excluded), False
    (re-included by a ``!`` line) or None (no rule matched). Compiling a few
    hundred patterns costs every index a visible part of its start, and
    calling pathspec for every file ~20 µs, so neither is done for all of
    them: a lookup index built from the pattern text (literal names, ``*.ext``
    suffixes, and for the remaining globs their longest literal run) lists the
    patterns that *can* match a name, and only those, in their order, are
    compiled (once per such set) and asked. A pattern that cannot match never
    changes pathspec's verdict (the last match wins, and only matches count),
    so the verdict is the full list's; the index never decides a match.
    """

    def __init__(self, lines: Sequence[str]) -> None:
        for line in lines:
            if "/" in _pattern_body(line):
                raise ValueError(f"NameRules pattern must match one path component: {line!r}")
        self._lines = tuple(lines)
        self._literals: dict[str, list[int]] = {}
        self._suffixes: dict[str, list[int]] = {}
        # (index, the glob's longest literal run: a name it matches contains
        # it, e.g. ".min." for ``*.min.*``; "" when it has none)
        self._globs: list[tuple[int, str]] = []
        for i, line in enumerate(lines):
            body = _pattern_body(line)
            if not _GLOB_CHARS.intersection(body):
                self._literals.setdefault(body, []).append(i)
            elif body.startswith("*.") and not _GLOB_CHARS.intersection(body[1:]):
                self._suffixes.setdefault(body[1:], []).append(i)
            else:
                self._globs.append((i, _literal_run(line)))
        self._specs: dict[tuple[int, ...], GitIgnoreSpec] = {}
        # A verdict depends on the name alone, and names repeat: folders (src,
        # tests, node_modules) and files too (__init__.py, index.ts, mod.rs:
        # half of a large tree's file names are repeats).
        self._dir_cache: dict[str, bool | None] = {}
        self._file_cache: dict[str, bool | None] = {}

    def check(self, name: str, is_dir: bool) -> bool | None:
        cache = self._dir_cache if is_dir else self._file_cache
        try:
            return cache[name]
        except KeyError:
            pass
        verdict = self._check(name + "/" if is_dir else name, name)
        if len(cache) >= _NAME_CACHE_SIZE:  # a long-lived server's rules meet ever new names
            cache.clear()
        cache[name] = verdict
        return verdict

    def _check(self, path: str, name: str) -> bool | None:
        candidates = self._candidates(name)
        if not candidates:
            return None
        spec = self._specs.get(candidates)
        if spec is None:
            spec = self._specs[candidates] = GitIgnoreSpec.from_lines([self._lines[i] for i in candidates])
        return spec.check_file(path).include

    def _candidates(self, name: str) -> tuple[int, ...]:
        """Indexes of the patterns that may match ``name``, in pattern order."""
        found = list(self._literals.get(name, ()))
        dot = name.find(".")
        while dot != -1:
            found.extend(self._suffixes.get(name[dot:], ()))
            dot = name.find(".", dot + 1)
        found.extend(i for i, anchor in self._globs if anchor in name)
        return tuple(sorted(found))


def load_project_patterns(root: Path) -> list[str]:
    """The lines of ``<root>/.repolensignore`` ([] when absent).

    Raises ConfigError naming the line when a pattern is not valid gitignore
    syntax (unlike .gitignore, a typo here should not pass silently).
    """
    path = root / PROJECT_IGNORE_FILE
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")  # a BOM is no pattern
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"cannot read {path} ({exc.strerror}): fix its permissions or remove it") from exc
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        try:
            GitIgnoreSpec.from_lines([line])
        except GitIgnorePatternError:
            raise ConfigError(
                f"{path}:{number}: {line!r} is not a valid gitignore pattern: fix or remove it"
            ) from None
    return lines


def _reinclude_paths(lines: Iterable[str]) -> list[tuple[str, ...]]:
    """Path segments of the ``!`` lines that contain a slash (see module docstring)."""
    paths = []
    for raw in lines:
        line = raw.strip()
        if not line.startswith("!"):
            continue
        body = line[1:].rstrip("/")
        if "/" in body:
            paths.append(tuple(body.lstrip("/").split("/")))
    return paths


class IgnoreRules:
    """Internal folders, secrets, built-in noise rules and ``.repolensignore`` for one root.

    Paths are root-relative POSIX strings. ``classify_dir`` and
    ``classify_file`` take the state of the parent directory, so a caller
    evaluates top-down (the walker naturally; git mode via a cache).
    """

    def __init__(
        self, project_lines: Sequence[str] = (), *, index_rel: str | None = None, root: Path | None = None
    ) -> None:
        self.index_rel = index_rel
        self.root = root  # where a nested build folder's manifest is looked for (see BUILD_OUTPUT_NAMES)
        self.noise = NameRules(NOISE_PATTERNS)
        self.secrets = NameRules(SECRET_RULES)
        self.project = compile_gitignore(project_lines)
        # Last match wins across built-ins then the project file; pathspec
        # reports the index of the deciding pattern, which tells the two apart
        # (it drops empty lines, and no built-in line is empty). Compiled only
        # for a project file with patterns: nothing else asks it.
        self.combined = (
            GitIgnoreSpec.from_lines([*NOISE_PATTERNS, *project_lines]) if self.project is not None else None
        )
        self._reinclude = _reinclude_paths(project_lines) if self.project is not None else []
        self._segment_specs: dict[str, GitIgnoreSpec] = {}

    def classify_dir(self, rel: str, name: str, parent: DirState) -> DirState:
        if name in INTERNAL_NAMES or rel == self.index_rel:
            return DirState(SkipReason.INTERNAL, prune=True)
        if self.secrets.check(name, True):
            return DirState(SkipReason.SECRET, prune=True)
        excluded = self._rules_verdict(rel, name, True, parent)
        if excluded is SkipReason.IGNORED and self._source_named_like_output(rel, name, parent):
            return ROOT_STATE
        if excluded is None:
            return ROOT_STATE
        return DirState(excluded, prune=not self._reinclude_may_reach(rel))

    def _source_named_like_output(self, rel: str, name: str, parent: DirState) -> bool:
        """A folder a built-in rule skips as build output (``build/``), but
        below the top and beside no project manifest: source (see
        :data:`~repolens.discover.noise.BUILD_OUTPUT_NAMES`)."""
        if name not in BUILD_OUTPUT_NAMES or "/" not in rel or self.root is None:
            return False
        if parent.excluded is not None:  # the verdict was its parent's, not its name's
            return False
        folder = self.root / rel.rsplit("/", 1)[0]
        return not any((folder / manifest).is_file() for manifest in PROJECT_MANIFESTS)

    def classify_file(self, rel: str, name: str, parent: DirState) -> SkipReason | None:
        """Why file ``rel`` (whose parent is not pruned) is excluded, or None."""
        if name in INTERNAL_NAMES:
            return SkipReason.INTERNAL
        if self.secrets.check(name, False):
            return SkipReason.SECRET
        return self._rules_verdict(rel, name, False, parent)

    def hard_exclusion(self, rel: str) -> SkipReason | None:
        """Internal or secret by any component of ``rel`` (used for symlink targets)."""
        if self.index_rel is not None and (rel == self.index_rel or rel.startswith(self.index_rel + "/")):
            return SkipReason.INTERNAL
        parts = rel.split("/")
        for i, part in enumerate(parts):
            if part in INTERNAL_NAMES:
                return SkipReason.INTERNAL
            if self.secrets.check(part, i < len(parts) - 1):
                return SkipReason.SECRET
        return None

    def _rules_verdict(self, rel: str, name: str, is_dir: bool, parent: DirState) -> SkipReason | None:
        path = rel + "/" if is_dir else rel
        if self.project is not None and self.project.check_file(path).include is not None:
            assert self.combined is not None
            result = self.combined.check_file(path)
            if not result.include:
                return None
            assert result.index is not None
            return SkipReason.REPOLENSIGNORE if result.index >= len(NOISE_PATTERNS) else SkipReason.IGNORED
        if self.noise.check(name, is_dir):
            return SkipReason.IGNORED
        # No rule names this path itself: it shares its parent's fate (a
        # directory pattern such as ``node_modules/`` covers its contents).
        return parent.excluded

    def _reinclude_may_reach(self, rel_dir: str) -> bool:
        """Could a ``!`` line with a slash match something at or beneath ``rel_dir``?"""
        dirs = rel_dir.split("/")
        for segments in self._reinclude:
            for pattern_seg, dir_seg in zip(segments, dirs, strict=False):
                if pattern_seg == "**":
                    return True
                if not self._segment_matches(pattern_seg, dir_seg):
                    break
            else:
                return True
        return False

    def _segment_matches(self, pattern_seg: str, name: str) -> bool:
        spec = self._segment_specs.get(pattern_seg)
        if spec is None:
            spec = self._segment_specs[pattern_seg] = GitIgnoreSpec.from_lines(["/" + pattern_seg])
        return bool(spec.check_file(name).include)
