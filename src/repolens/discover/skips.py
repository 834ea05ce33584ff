"""Why a file is not indexed: one vocabulary of skip reasons, and the
one-line message for a root where nothing is left.

Discovery (names and ``lstat``), the ignore rules and loading all answer
with a :class:`SkipReason`. The error for an empty result names the reasons
by count, most frequent first, in the words of ``_PHRASES``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path

from repolens.errors import NothingToIndexError
from repolens.settings import Settings

DEFAULT_MAX_FILE_BYTES = Settings.max_file_bytes

# Counted by the indexer when load_text had to replace invalid UTF-8; the
# file is still indexed, so this is a note, not a skip reason.
DECODED_WITH_REPLACEMENT = "decoded_with_replacement"


class SkipReason(StrEnum):
    """Why a path was not indexed: the one vocabulary of discovery, the
    ignore rules and loading. The values are the keys of
    ``Discovery.skipped`` and are written into indexes and reports, so they
    never change; ``INTERNAL`` (version-control and index folders) is never
    counted."""

    INTERNAL = "internal"  # .git, .repolens, the index folder: never counted
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
    NOT_IN_LANGUAGES = "not_in_languages"  # a language the ``languages`` setting leaves out


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
    SkipReason.BAD_NAME: (
        "had a name that is not valid UTF-8 or holds a line break",
        "had names that are not valid UTF-8 or hold a line break",
    ),
    SkipReason.NOT_IN_LANGUAGES: (
        "was not in the languages setting ({languages})",
        "were not in the languages setting ({languages})",
    ),
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
    languages: Sequence[str] = (),
) -> NothingToIndexError:
    """The error for ``root``, saying in one line why nothing can be indexed.

    ``skipped`` is the combined count: discovery's plus load_text's. Keys
    outside ``SkipReason`` are named as they are; DECODED_WITH_REPLACEMENT
    is a note and ignored. ``mode``, ``max_file_bytes`` and ``languages``
    are the discovery's (they change the wording).
    """
    return NothingToIndexError(_describe(root, skipped, mode, max_file_bytes, languages))


def _describe(
    root: Path, skipped: Mapping[str, int], mode: str, max_file_bytes: int, languages: Sequence[str] = ()
) -> str:
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
        return (one if n == 1 else many).format(limit=limit, languages=", ".join(languages))

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
