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

Modules: ``listing`` (the walk and git's list through the rules), ``git``
(``git ls-files``), ``rules`` and ``gitignore`` (the logic of ignoring),
``noise`` (the built-in lists: data only), ``load`` (reading one file),
``skips`` (the one vocabulary of skip reasons, and the message when nothing
is left).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.discover.load import LoadedText, file_hash, load_text
from repolens.discover.skips import (
    DECODED_WITH_REPLACEMENT,
    DEFAULT_MAX_FILE_BYTES,
    SkipReason,
    format_bytes,
    nothing_to_index_error,
)
from repolens.errors import NothingToIndexError, UsageError
from repolens.validate import resolve_root

if TYPE_CHECKING:
    from repolens.discover.listing import Collector, Discovery, SourceFile

__all__ = [
    "DECODED_WITH_REPLACEMENT",
    "DEFAULT_MAX_FILE_BYTES",
    "MODES",
    "Discovery",
    "LoadedText",
    "SkipReason",
    "SourceFile",
    "discover",
    "discover_paths",
    "file_hash",
    "format_bytes",
    "load_text",
    "nothing_to_index",
    "nothing_to_index_error",
]

MODES = ("auto", "git", "walk")
# Listing (pathspec, the ignore rules) loads on first use (PEP 562): the read
# path only loads files (``load_text``, ``file_hash``), it never lists them.
_LISTING = frozenset({"Discovery", "SourceFile"})


def __getattr__(name: str) -> Any:
    if name not in _LISTING:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from repolens.discover import listing

    return getattr(listing, name)


def discover(
    root: str | os.PathLike[str],
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    index_dir: str | os.PathLike[str] | None = None,
    mode: str = "auto",
    languages: Sequence[str] = (),
) -> Discovery:
    """List the files to index under ``root``.

    ``mode`` is "auto" (git inside a work tree, else walk), "git" or "walk".
    ``index_dir`` is excluded when it lies inside ``root`` (``.repolens``
    folders always are). Files above ``max_file_bytes`` (stat size) are
    counted ``too_large``, empty ones ``empty``, and with ``languages``
    (canonical names) files of other languages ``not_in_languages``; no
    file is read.

    Raises RootError when ``root`` is missing or not a directory, UsageError
    for a bad ``max_file_bytes`` or ``mode`` (or mode "git" outside a work
    tree), ConfigError for an invalid ``.repolensignore``.
    """
    if max_file_bytes < 1:
        raise UsageError(f"max_file_bytes must be at least 1, got {max_file_bytes}")
    if mode not in MODES:
        raise UsageError(f"discovery mode must be one of {', '.join(MODES)}, got {mode!r}")
    from repolens.discover.git import git_ls_files

    root_path = resolve_root(root)
    collector = _collector(root_path, index_dir, max_file_bytes, languages)
    listed = None if mode == "walk" else git_ls_files(root_path)
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
    languages: Sequence[str] = (),
) -> Discovery | None:
    """:func:`discover` restricted to ``paths`` (root-relative), for the
    watcher's refresh after a few saves: git lists just those paths, and the
    same rules decide. ``None`` when only a full discovery can answer: not a
    git work tree, or one of the paths is now a directory or a symlink
    (whose target rules are checked against the whole file list)."""
    from repolens.discover.git import git_ls_files
    from repolens.discover.listing import Discovery

    root_path = resolve_root(root)
    wanted = sorted(set(paths))
    if not wanted:
        return Discovery(root_path, [], Counter(), "git", max_file_bytes, tuple(languages))
    for rel in wanted:
        p = root_path / rel
        if p.is_symlink() or p.is_dir():
            return None
    listed = git_ls_files(root_path, wanted)
    if listed is None:
        return None
    collector = _collector(root_path, index_dir, max_file_bytes, languages)
    collector.collect_git(listed)
    return collector.finish("git")


def nothing_to_index(
    discovery: Discovery, content_skips: Mapping[str, int] | None = None
) -> NothingToIndexError:
    """The error for a root with no indexable file; ``content_skips`` are load_text's counts."""
    skipped = Counter(discovery.skipped)
    if content_skips:
        skipped.update(content_skips)
    return nothing_to_index_error(
        discovery.root,
        skipped,
        mode=discovery.mode,
        max_file_bytes=discovery.max_file_bytes,
        languages=discovery.languages,
    )


def _collector(
    root: Path, index_dir: str | os.PathLike[str] | None, max_file_bytes: int, languages: Sequence[str] = ()
) -> Collector:
    """A collector applying ``root``'s ignore rules (reads its ``.repolensignore``)."""
    from repolens.discover.listing import Collector
    from repolens.discover.rules import IgnoreRules, load_project_patterns

    rules = IgnoreRules(load_project_patterns(root), index_rel=_index_rel(root, index_dir), root=root)
    return Collector(root, rules, max_file_bytes, tuple(languages))


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
