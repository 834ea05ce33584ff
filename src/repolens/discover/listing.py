"""The file list: git's or a walk's, through the ignore rules, symlink rules and size cap.

A :class:`Collector` takes paths top-down (git mode: git's list, cached per
folder; walk mode: ``os.scandir`` applying every .gitignore it meets), asks
:class:`~repolens.discover.rules.IgnoreRules` about each name, takes the
``lstat`` of what is left and counts every skip by :class:`SkipReason`. No
file is read, but for a ``.h`` header when the ``languages`` setting keeps
one of C and C++ and not the other: its text says which it is, as the index
will read it (:func:`repolens.chunking.languages.language_of`), once while
its stat stays.
Symlinks are resolved last, once every regular file is known, so a link to a
listed file is not indexed twice.
"""

from __future__ import annotations

import os
import stat
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from repolens.chunking.languages import ambiguous, language_for, language_of
from repolens.discover.gitignore import GitIgnoreChain, read_gitignore
from repolens.discover.load import LoadedText, load_text
from repolens.discover.rules import ROOT_STATE, DirState, IgnoreRules
from repolens.discover.skips import DEFAULT_MAX_FILE_BYTES, SkipReason
from repolens.record import Record


class SourceFile(Record):
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


# The mtime an index records for a file it cannot trust to have stayed as
# read (see Discovery.kept_mtime): never a stat's, so the next run reads it.
RACY_MTIME = -1
# How close to the listing a file's mtime makes it so: a filesystem's
# timestamps are as coarse as 2 s (FAT, exFAT, some network shares), and the
# kernel's clock for them lags the one read here by up to a tick.
RACY_WINDOW_NS = 2_000_000_000


@dataclass
class Discovery:
    """What :func:`repolens.discover.discover` found: the files to index and the skip counts."""

    root: Path  # resolved
    files: list[SourceFile]  # sorted by path
    skipped: Counter[str]  # SkipReason value -> number of paths
    mode: str  # "git" or "walk"
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    languages: tuple[str, ...] = ()  # only files of these (() = all)
    listed_ns: int = field(default_factory=time.time_ns)  # the clock before the first stat

    def kept_mtime(self, src: SourceFile) -> int:
        """The mtime to record for ``src`` once read: its own, or
        :data:`RACY_MTIME` when it was modified so close to the listing
        that a later write in the same timestamp tick would leave size and
        mtime as recorded (git's "racily clean" entries): the next run then
        reads it again rather than trusting the stat, once."""
        return src.mtime_ns if src.mtime_ns < self.listed_ns - RACY_WINDOW_NS else RACY_MTIME


# The language each ``.h`` header's text said, by its stat: the watcher lists a
# repository again and again, and reading every header each time (to tell C
# from C++ when ``languages`` keeps one) doubled the CPU of listing a tree of
# 3,000 headers and 3,000 C files.
# Trusted as far as the index trusts a file's size and mtime; a header modified
# close to a listing is read again (see Discovery.kept_mtime).
_header_languages: dict[tuple[str, int, int, int, int], str] = {}
_HEADERS_HELD = 20_000


def _bad_name(rel: str) -> bool:
    """A name a reply cannot cite: not UTF-8, or holding a line break (every
    reply cites a path on a line of its own: ``path:lines ...``)."""
    if "\n" in rel or "\r" in rel:
        return True
    if rel.isascii():
        return False
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept as surrogates by os.fsdecode
        return True
    return False


@dataclass
class Collector:
    root: Path
    rules: IgnoreRules
    max_file_bytes: int
    languages: tuple[str, ...] = ()
    files: list[SourceFile] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    # root-relative paths of the regular files listed, to drop symlinks to them
    _listed: set[str] = field(default_factory=set)
    _links: list[tuple[str, str]] = field(default_factory=list)
    # every path the ignore rules let through (listed or not: too large, empty...),
    # and why the rules kept out the others met (a folder: everything under it)
    _passed: set[str] = field(default_factory=set)
    _kept_out: dict[str, SkipReason] = field(default_factory=dict)
    listed_ns: int = field(default_factory=time.time_ns)  # made before any stat

    def skip(self, reason: SkipReason) -> None:
        if reason != SkipReason.INTERNAL:
            self.skipped[str(reason)] += 1

    def keep_out(self, rel: str, reason: SkipReason) -> None:
        """``rel`` (a file, or a folder and all under it) is not indexed by a rule."""
        self.skip(reason)
        self._kept_out[rel] = reason

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
                self.keep_out(rel, parent.excluded)
                continue
            excluded = rules.classify_file(rel, name, parent)
            if excluded is not None:
                self.keep_out(rel, excluded)
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
            except OSError:  # no permission, a path over PATH_MAX, a folder gone or of /proc
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
                    self.keep_out(rel, SkipReason.GITIGNORED)
                    continue
                if is_dir:
                    child = rules.classify_dir(rel, name, state)
                    if child.prune:
                        assert child.excluded is not None
                        self.keep_out(rel, child.excluded)
                    else:
                        stack.append((rel, entry.path, chain, child))
                    continue
                excluded = rules.classify_file(rel, name, state)
                if excluded is not None:
                    self.keep_out(rel, excluded)
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    self.skip(SkipReason.MISSING)
                    continue
                except OSError:
                    self.skip(SkipReason.UNREADABLE)
                    continue
                self.add(rel, entry.path, st)

    def add(self, rel: str, abs_str: str, st: os.stat_result) -> None:
        """A path that passed the name rules; ``st`` is its lstat."""
        self._passed.add(rel)
        if self.languages and self._language(rel, abs_str, st) not in self.languages:
            self.skip(SkipReason.NOT_IN_LANGUAGES)  # (a link's language is its own name's, as indexed)
            return
        if stat.S_ISLNK(st.st_mode):
            self._links.append((rel, abs_str))  # resolved once all regular files are known
        elif not stat.S_ISREG(st.st_mode):
            self.skip(SkipReason.NOT_REGULAR)
        elif self._size_ok(st):
            self.files.append(SourceFile(rel, self.root, st.st_size, st.st_mtime_ns))
            self._listed.add(rel)

    def _language(self, rel: str, abs_str: str, st: os.stat_result) -> str:
        """The language ``rel`` is indexed as: its name's, or for a ``.h``
        header its text's when the setting keeps C or C++ but not both
        (a C++ header kept out of ``languages = ["c"]`` rather than indexed
        as cpp in it, and kept in ``["cpp"]``). A link's text is its
        target's; a file that cannot be read as text is left to the checks
        after (size, binary) under its name's language."""
        language = language_for(rel)
        if language != "c" or not ambiguous(rel) or ("c" in self.languages) == ("cpp" in self.languages):
            return language
        try:
            target = os.stat(abs_str) if stat.S_ISLNK(st.st_mode) else st
        except OSError:
            return language
        if not stat.S_ISREG(target.st_mode) or target.st_size > self.max_file_bytes:  # (a FIFO would block)
            return language
        seen = (abs_str, target.st_dev, target.st_ino, target.st_size, target.st_mtime_ns)
        known = _header_languages.get(seen)
        if known is not None:
            return known
        loaded = load_text(abs_str, max_file_bytes=self.max_file_bytes)
        if not isinstance(loaded, LoadedText):
            return language
        language = language_of(rel, loaded.text)
        if target.st_mtime_ns < self.listed_ns - RACY_WINDOW_NS:  # (as Discovery.kept_mtime)
            if len(_header_languages) >= _HEADERS_HELD:
                _header_languages.clear()
            _header_languages[seen] = language
        return language

    def _size_ok(self, st: os.stat_result) -> bool:
        if st.st_size > self.max_file_bytes:
            self.skip(SkipReason.TOO_LARGE)
            return False
        if st.st_size == 0:
            self.skip(SkipReason.EMPTY)
            return False
        return True

    def _add_link(self, rel: str, abs_str: str) -> None:
        """A symlink is indexed under its own path if its target is a file
        inside the root not listed yet, and not one .gitignore or
        .repolensignore keeps out: a link must not show what they hide
        (``config.py`` -> a git-ignored ``config.local.py``). A target a
        built-in noise rule left out is indexed (a link into
        ``node_modules`` is made on purpose)."""
        root_str = str(self.root)
        try:
            target = os.path.realpath(abs_str)
        except OSError:  # a link that cannot be resolved (/proc's, no permission)
            self.skip(SkipReason.SYMLINK_BROKEN)
            return
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
        if target_rel not in self._passed:
            kept_out = self._why_kept_out(target_rel)
            if kept_out in (SkipReason.GITIGNORED, SkipReason.REPOLENSIGNORE):
                self.skip(kept_out)
                return
        if self._size_ok(st):
            self.files.append(SourceFile(rel, self.root, st.st_size, st.st_mtime_ns))
            self._listed.add(target_rel)

    def _why_kept_out(self, rel: str) -> SkipReason:
        """Why the rules kept out ``rel``, a path they did not let through:
        its own verdict or its nearest folder's; else git did not list it
        (git lists no ignored file)."""
        while rel:
            reason = self._kept_out.get(rel)
            if reason is not None:
                return reason
            rel = rel.rpartition("/")[0]
        return SkipReason.GITIGNORED

    def finish(self, mode: str) -> Discovery:
        for rel, abs_str in sorted(self._links):
            self._add_link(rel, abs_str)
        self.files.sort(key=lambda f: f.path)
        return Discovery(
            self.root, self.files, self.skipped, mode, self.max_file_bytes, self.languages, self.listed_ns
        )
