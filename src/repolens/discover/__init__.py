"""Which files get indexed: git's file list or a walker, ignore rules, size and type filters.

``discover(root)`` lists candidate files without reading them (names and
``lstat`` only). ``load_text(path)`` is the content filter the indexer calls
when it reads a file, so each file is read once. Both report skips as
``SkipReason`` values; the indexer adds its content skips to
``Discovery.skipped`` and, when nothing is left, raises
``nothing_to_index(discovery, content_skips)``.

Modes:

* **git** -- inside a git work tree, the list is git's: tracked files plus
  untracked files that are not ignored (``git ls-files --cached --others
  --exclude-standard``, so nested .gitignore, .git/info/exclude and the
  global excludes file all apply). Paths git lists but that are gone from
  disk count as ``missing``; submodules and nested repositories as
  ``submodule``.
* **walk** -- elsewhere (or when git is missing), an ``os.scandir`` walk that
  applies every .gitignore it meets (and ``.git/info/exclude`` if present)
  with the same semantics, and does not descend into ignored directories.

Both modes then apply :mod:`repolens.discover.rules` (internal folders, secrets,
built-in noise, ``.repolensignore``), symlink rules and the size cap.
Skip counts are per path: in walk mode a directory that is not descended
counts once, whatever it holds; in git mode every listed file counts.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import shutil
import stat
import subprocess
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from repolens.discover.rules import (
    ROOT_STATE,
    DirState,
    Exclusion,
    GitIgnoreChain,
    IgnoreRules,
    load_project_patterns,
    read_gitignore,
)
from repolens.errors import NothingToIndexError, UsageError
from repolens.store import resolve_root

DEFAULT_MAX_FILE_BYTES = 1_048_576
BINARY_SNIFF_BYTES = 8192
MODES = ("auto", "git", "walk")

# Counted by the indexer when load_text had to replace invalid UTF-8; the
# file is still indexed, so this is a note, not a skip reason.
DECODED_WITH_REPLACEMENT = "decoded_with_replacement"

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


class SkipReason(StrEnum):
    """Why a path was not indexed. Values are the keys of ``Discovery.skipped``."""

    GITIGNORED = "gitignored"  # .gitignore / info/exclude (walk mode; git hides these)
    IGNORED = "ignored"  # a built-in noise rule
    REPOLENSIGNORE = "repolensignore"  # a .repolensignore pattern
    SECRET = "secret"
    TOO_LARGE = "too_large"
    EMPTY = "empty"
    BINARY = "binary"
    SYMLINK_OUTSIDE = "symlink_outside"
    SYMLINK_DIR = "symlink_dir"
    SYMLINK_BROKEN = "symlink_broken"
    SYMLINK_DUPLICATE = "symlink_duplicate"
    MISSING = "missing"
    SUBMODULE = "submodule"
    NOT_REGULAR = "not_regular"
    UNREADABLE = "unreadable"
    BAD_NAME = "bad_name"


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to index. For a symlink, ``path`` is the link and size/mtime are its target's."""

    path: str  # root-relative POSIX path
    root: Path  # the resolved root it was discovered under
    size: int
    mtime_ns: int

    @property
    def abs_path(self) -> Path:
        # Computed, not stored: building thousands of Path objects up front
        # was the largest single cost of discovery.
        return self.root / self.path


@dataclass
class Discovery:
    root: Path  # resolved
    files: list[SourceFile]  # sorted by path
    skipped: Counter[str]  # SkipReason value -> number of paths
    mode: str  # "git" or "walk"
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES


@dataclass(frozen=True, slots=True)
class LoadedText:
    """A file's text as indexed.

    The UTF-8 BOM is stripped and CRLF is turned into LF, so line N is the
    N-th ``"\\n"``-separated line -- the numbering git, grep and editors show.
    A lone CR is kept as a character (split with ``text.split("\\n")``, not
    ``str.splitlines``, which also breaks on CR, form feeds and U+2028).
    ``data`` is the file's bytes as read (hash these to detect changes).
    ``replaced`` is True when invalid UTF-8 was decoded as U+FFFD.
    """

    text: str
    data: bytes
    replaced: bool = False

    @property
    def lines(self) -> int:
        """Lines as an editor numbers them (a final newline does not start another)."""
        return self.text.count("\n") + (0 if self.text.endswith("\n") else 1)


def discover(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    index_dir: str | os.PathLike[str] | None = None,
    mode: str = "auto",
) -> Discovery:
    """List the files to index under ``root``.

    ``mode`` is "auto" (git inside a work tree, else walk), "git" or "walk".
    ``index_dir`` is excluded when it lies inside ``root`` (``.repolens``
    folders always are). Files above ``max_file_bytes`` (stat size) are
    counted ``too_large``, empty ones ``empty``; no file is read.

    Raises RootError when ``root`` is missing or not a directory, UsageError
    for a bad ``max_file_bytes`` or ``mode`` (or mode "git" outside a work
    tree), ConfigError for an invalid ``.repolensignore``.
    """
    if max_file_bytes < 1:
        raise UsageError(f"max_file_bytes must be at least 1, got {max_file_bytes}")
    if mode not in MODES:
        raise UsageError(f"discovery mode must be one of {', '.join(MODES)}, got {mode!r}")
    root_path = resolve_root(root)
    rules = IgnoreRules(load_project_patterns(root_path), index_rel=_index_rel(root_path, index_dir))
    collector = _Collector(root_path, rules, max_file_bytes)
    listed = None if mode == "walk" else _git_ls_files(root_path)
    if listed is None and mode == "git":
        raise UsageError(
            f"{root_path} is not inside a git work tree (or git is not installed): use mode 'walk'"
        )
    if listed is not None:
        collector.collect_git(listed)
        return collector.finish("git")
    collector.walk()
    return collector.finish("walk")


def discover_paths(
    root: str | os.PathLike[str],
    paths: Iterable[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    index_dir: str | os.PathLike[str] | None = None,
) -> Discovery | None:
    """:func:`discover` restricted to ``paths`` (root-relative), for the
    watcher's refresh after a few saves: git lists just those paths, and the
    same rules decide. ``None`` when only a full discovery can answer: not a
    git work tree, or one of the paths is now a directory or a symlink
    (whose target rules are checked against the whole file list)."""
    root_path = resolve_root(root)
    wanted = sorted(set(paths))
    if not wanted:
        return Discovery(root_path, [], Counter(), "git", max_file_bytes)
    for rel in wanted:
        p = root_path / rel
        if p.is_symlink() or p.is_dir():
            return None
    listed = _git_ls_files(root_path, wanted)
    if listed is None:
        return None
    rules = IgnoreRules(load_project_patterns(root_path), index_rel=_index_rel(root_path, index_dir))
    collector = _Collector(root_path, rules, max_file_bytes)
    collector.collect_git(listed)
    return collector.finish("git")


def file_hash(data: bytes) -> str:
    """A file's content identity: equal hashes mean the index need not read it again."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def load_text(path: str | os.PathLike[str], *, max_file_bytes: int | None = None) -> LoadedText | SkipReason:
    """Read one file for indexing, or say why it is skipped.

    NUL in the first 8 KiB -> BINARY; nothing but whitespace -> EMPTY; gone
    -> MISSING; permission denied -> UNREADABLE; more than ``max_file_bytes``
    -> TOO_LARGE (discovery already applied the cap by size; pass
    ``Discovery.max_file_bytes`` to also catch files that grew since, None
    reads the whole file). Invalid UTF-8 is decoded with replacement
    characters and flagged (count it as ``DECODED_WITH_REPLACEMENT``). Other
    OS errors propagate.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read() if max_file_bytes is None else fh.read(max_file_bytes + 1)
    except (FileNotFoundError, NotADirectoryError):
        return SkipReason.MISSING
    except (PermissionError, IsADirectoryError):
        return SkipReason.UNREADABLE
    if max_file_bytes is not None and len(data) > max_file_bytes:
        return SkipReason.TOO_LARGE
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return SkipReason.BINARY
    body = data[len(codecs.BOM_UTF8) :] if data.startswith(codecs.BOM_UTF8) else data
    replaced = False
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", errors="replace")
        replaced = True
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if not text.strip():
        return SkipReason.EMPTY
    return LoadedText(text, data, replaced)


def nothing_to_index(
    discovery: Discovery, content_skips: Mapping[str, int] | None = None
) -> NothingToIndexError:
    """The error for a root with no indexable file; ``content_skips`` are load_text's counts."""
    skipped = Counter(discovery.skipped)
    if content_skips:
        skipped.update(content_skips)
    return nothing_to_index_error(
        discovery.root, skipped, mode=discovery.mode, max_file_bytes=discovery.max_file_bytes
    )


# reason -> (phrase for one path, phrase for several); "{limit}" is the size cap.
_PHRASES: dict[str, tuple[str, str]] = {
    SkipReason.GITIGNORED: ("matched .gitignore", "matched .gitignore"),
    SkipReason.IGNORED: (
        "matched the built-in noise rules (re-include with `!pattern` in .repolensignore)",
        "matched the built-in noise rules (re-include with `!pattern` in .repolensignore)",
    ),
    SkipReason.REPOLENSIGNORE: ("matched .repolensignore", "matched .repolensignore"),
    SkipReason.SECRET: ("looked like a secret (never indexed)", "looked like secrets (never indexed)"),
    SkipReason.TOO_LARGE: (
        "was larger than {limit} (raise max_file_bytes)",
        "were larger than {limit} (raise max_file_bytes)",
    ),
    SkipReason.EMPTY: ("was empty", "were empty"),
    SkipReason.BINARY: ("was binary", "were binary"),
    SkipReason.SYMLINK_OUTSIDE: (
        "was a symlink pointing outside the root",
        "were symlinks pointing outside the root",
    ),
    SkipReason.SYMLINK_DIR: (
        "was a symlink to a directory (not followed)",
        "were symlinks to directories (not followed)",
    ),
    SkipReason.SYMLINK_BROKEN: ("was a broken symlink", "were broken symlinks"),
    SkipReason.SYMLINK_DUPLICATE: ("was a symlink to a listed file", "were symlinks to listed files"),
    SkipReason.MISSING: (
        "is tracked by git but missing on disk",
        "are tracked by git but missing on disk",
    ),
    SkipReason.SUBMODULE: (
        "was a submodule or nested repository (index it separately)",
        "were submodules or nested repositories (index them separately)",
    ),
    SkipReason.NOT_REGULAR: ("was not a regular file", "were not regular files"),
    SkipReason.UNREADABLE: ("could not be read (permission denied)", "could not be read (permission denied)"),
    SkipReason.BAD_NAME: ("had a name that is not valid UTF-8", "had names that are not valid UTF-8"),
}
# Reasons that can stand for a whole directory in walk mode.
_DIRECTORY_REASONS = frozenset(
    {
        SkipReason.GITIGNORED,
        SkipReason.IGNORED,
        SkipReason.REPOLENSIGNORE,
        SkipReason.SECRET,
        SkipReason.UNREADABLE,
    }
)


def nothing_to_index_error(
    root: Path,
    skipped: Mapping[str, int],
    *,
    mode: str = "walk",
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> NothingToIndexError:
    """The error for ``root``, saying in one line why nothing can be indexed.

    ``skipped`` is the combined count: discovery's plus load_text's. Keys
    outside ``SkipReason`` are named as they are; DECODED_WITH_REPLACEMENT
    is a note and ignored. ``mode`` and ``max_file_bytes`` are the
    discovery's (they change the wording).
    """
    return NothingToIndexError(_describe(root, skipped, mode, max_file_bytes))


def _describe(root: Path, skipped: Mapping[str, int], mode: str, max_file_bytes: int) -> str:
    counts = {key: n for key, n in skipped.items() if n > 0 and key != DECODED_WITH_REPLACEMENT}
    head = f"nothing to index in {root}: "
    if not counts:
        if mode == "git":
            return (
                head + "git lists no files here (the directory is empty or everything in it is git-ignored)"
            )
        return head + "the directory is empty"
    limit = format_bytes(max_file_bytes)

    def phrase(key: str, n: int) -> str:
        one, many = _PHRASES.get(key, (f"was skipped ({key})", f"were skipped ({key})"))
        return (one if n == 1 else many).format(limit=limit)

    noun = "paths" if mode == "walk" and _DIRECTORY_REASONS.intersection(counts) else "files"
    order = list(_PHRASES)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], order.index(kv[0]) if kv[0] in order else 99))
    total = sum(counts.values())
    if len(ranked) == 1:
        key, n = ranked[0]
        if n == 1:
            return head + f"the only {noun[:-1]} {phrase(key, 1)}"
        return head + f"all {n} {noun} {phrase(key, n)}"
    parts = ", ".join(f"{n} {phrase(key, n)}" for key, n in ranked)
    return head + f"none of {total} {noun} is indexable: {parts}"


def format_bytes(n: int) -> str:
    """1048576 -> "1 MiB", 1536 -> "1.5 KiB", 100 -> "100 bytes"."""
    if n < 1024:
        return f"{n} byte" + ("" if n == 1 else "s")
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


def _index_rel(root: Path, index_dir: str | os.PathLike[str] | None) -> str | None:
    """``index_dir`` relative to ``root`` (POSIX), or None when it lies outside."""
    if index_dir is None:
        return None
    resolved = Path(index_dir).expanduser().resolve()
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else None


def _git_ls_files(root: Path, paths: Sequence[str] | None = None) -> list[str] | None:
    """git's file list for ``root`` (relative to it), or None outside a work tree
    or without git. ``paths`` restricts it to those paths, taken literally."""
    git = shutil.which("git")
    if git is None:
        return None
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_ENV}
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


def _bad_name(rel: str) -> bool:
    if rel.isascii():
        return False
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept as surrogates by os.fsdecode
        return True
    return False


@dataclass
class _Collector:
    root: Path
    rules: IgnoreRules
    max_file_bytes: int
    files: list[SourceFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    # root-relative paths of the regular files listed, to drop symlinks to them
    _listed: set[str] = field(default_factory=set)
    _links: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        if reason != Exclusion.INTERNAL:
            self.skipped[str(reason)] += 1

    def collect_git(self, listed: list[str]) -> None:
        root_str = str(self.root)
        rules = self.rules
        states: dict[str, DirState] = {"": ROOT_STATE}

        def state_of(rel_dir: str) -> DirState:
            state = states.get(rel_dir)
            if state is None:
                parent_rel, _, name = rel_dir.rpartition("/")
                parent = state_of(parent_rel)
                state = parent if parent.prune else rules.classify_dir(rel_dir, name, parent)
                states[rel_dir] = state
            return state

        for rel in listed:
            if rel.endswith("/"):  # an untracked nested repository
                self.skip(SkipReason.SUBMODULE)
                continue
            if _bad_name(rel):
                self.skip(SkipReason.BAD_NAME)
                continue
            parent_rel, _, name = rel.rpartition("/")
            parent = state_of(parent_rel)
            if parent.prune:
                assert parent.excluded is not None
                self.skip(parent.excluded)
                continue
            excluded = rules.classify_file(rel, name, parent)
            if excluded is not None:
                self.skip(excluded)
                continue
            abs_str = f"{root_str}/{rel}"
            try:
                st = os.lstat(abs_str)
            except (FileNotFoundError, NotADirectoryError):
                self.skip(SkipReason.MISSING)
                continue
            if stat.S_ISDIR(st.st_mode):  # a submodule's gitlink
                self.skip(SkipReason.SUBMODULE)
                continue
            self.add(rel, abs_str, st)

    def walk(self) -> None:
        rules = self.rules
        info_exclude = read_gitignore(self.root / ".git" / "info" / "exclude")
        stack = [("", str(self.root), GitIgnoreChain().child("", info_exclude), ROOT_STATE)]
        while stack:
            rel_dir, abs_dir, chain, state = stack.pop()
            try:
                with os.scandir(abs_dir) as it:
                    entries = list(it)
            except PermissionError:
                self.skip(SkipReason.UNREADABLE)
                continue
            prefix = rel_dir + "/" if rel_dir else ""
            for entry in entries:
                if entry.name == ".gitignore" and entry.is_file(follow_symlinks=False):
                    chain = chain.child(prefix, read_gitignore(entry.path))
            for entry in entries:
                name = entry.name
                rel = prefix + name
                if _bad_name(name):
                    self.skip(SkipReason.BAD_NAME)
                    continue
                # git matches a symlink as a file, even one pointing to a directory
                is_dir = entry.is_dir(follow_symlinks=False)
                if chain.levels and chain.ignored(rel, is_dir):
                    self.skip(SkipReason.GITIGNORED)
                    continue
                if is_dir:
                    child = rules.classify_dir(rel, name, state)
                    if child.prune:
                        assert child.excluded is not None
                        self.skip(child.excluded)
                    else:
                        stack.append((rel, entry.path, chain, child))
                    continue
                excluded = rules.classify_file(rel, name, state)
                if excluded is not None:
                    self.skip(excluded)
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    self.skip(SkipReason.MISSING)
                    continue
                self.add(rel, entry.path, st)

    def add(self, rel: str, abs_str: str, st: os.stat_result) -> None:
        """A path that passed the name rules; ``st`` is its lstat."""
        if stat.S_ISLNK(st.st_mode):
            self._links.append((rel, abs_str))  # resolved once all regular files are known
        elif not stat.S_ISREG(st.st_mode):
            self.skip(SkipReason.NOT_REGULAR)
        elif self._size_ok(st):
            self.files.append(SourceFile(rel, self.root, st.st_size, st.st_mtime_ns))
            self._listed.add(rel)

    def _size_ok(self, st: os.stat_result) -> bool:
        if st.st_size > self.max_file_bytes:
            self.skip(SkipReason.TOO_LARGE)
            return False
        if st.st_size == 0:
            self.skip(SkipReason.EMPTY)
            return False
        return True

    def _add_link(self, rel: str, abs_str: str) -> None:
        """A symlink is indexed under its own path if its target is a file inside the root not listed yet."""
        root_str = str(self.root)
        target = os.path.realpath(abs_str)
        if not target.startswith(root_str + os.sep):
            self.skip(SkipReason.SYMLINK_OUTSIDE if target != root_str else SkipReason.SYMLINK_DIR)
            return
        try:
            st = os.stat(target)
        except OSError:
            self.skip(SkipReason.SYMLINK_BROKEN)
            return
        if stat.S_ISDIR(st.st_mode):
            self.skip(SkipReason.SYMLINK_DIR)
            return
        if not stat.S_ISREG(st.st_mode):
            self.skip(SkipReason.NOT_REGULAR)
            return
        target_rel = target[len(root_str) + 1 :].replace(os.sep, "/")
        excluded = self.rules.hard_exclusion(target_rel)
        if excluded is not None:
            self.skip(excluded)
            return
        if target_rel in self._listed:
            self.skip(SkipReason.SYMLINK_DUPLICATE)
            return
        if self._size_ok(st):
            self.files.append(SourceFile(rel, self.root, st.st_size, st.st_mtime_ns))
            self._listed.add(target_rel)

    def finish(self, mode: str) -> Discovery:
        for rel, abs_str in sorted(self._links):
            self._add_link(rel, abs_str)
        self.files.sort(key=lambda f: f.path)
        return Discovery(self.root, self.files, self.skipped, mode, self.max_file_bytes)
