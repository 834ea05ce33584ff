"""Commit questions: which commits qualify, their cleaned messages, their gold lines.

The rules are the development set's (``shared/bench/README.md``, "How the
queries were chosen", commits): non-merge commits whose subject is not a
release/deps/CI/docs/refactor/typo/lint/format chore, that modify 1-3
existing non-test source files of the repository's languages (adding or
deleting none) with at most 400 changed lines there, and whose cleaned
message has at least 8 words and names no changed file. Gold ranges are read
from ``git diff -U0`` hunks against the parent.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bench.mining.paths import RepoSpec, in_source_folders, path_kind

MAX_GOLD_FILES = 3
MAX_CHANGED_LINES = 400
MIN_WORDS = 8
MAX_CHARS = 1200
MAX_GOLD_BYTES = 1_000_000  # a larger file is often not indexed at all

_CHORE = re.compile(
    # conventional-commit chores, reverts, merges, version bumps
    r"^(chore|docs?|ci|build|style|refactor|test|tests|release|deps|mnt|maint|lint|typo|format)(\(.*?\))?!?:"
    r"|^(revert|merge|bump|release|prepare|reformat|format|v?\d+\.\d+)\b|\[(skip ci|ci skip)\]"
    # release/deps/CI/docs/refactor/typo/lint words anywhere; not "formatting" (black's subject
    # matter), nor "release" and "workflow" alone (features of gh: gh release, gh workflow)
    r"|\b(bump(ed|s)?|changelog|dependabot|renovate|deps|ci|github actions|release notes|docs|doc"
    r"|documentation|docstrings?|readme|refactor(ed|ing|s)?|typos?|spelling|misspell\w*|lint(ing|er|s)?"
    r"|copyright|license|whitespace|pre-commit)\b"
    r"|\b(update|upgrade|pin|unpin)\w*\s+(\S+\s+)?dependenc|\breleas\w*\s+v?\d+\.\d+"
    r"|\b(for|prepare|cut|new)\s+release\b|\b(ci|github|actions?)\s+workflows?\b|\.github/"
    # formatter and linter runs
    r"|\b(gofmt|rustfmt|cargo fmt|go fmt|clang-format|prettier|eslint|clippy|rubocop|isort|spotless|ktlint)\b"
    r"|\b(run|apply|applied|ran|with)\s+(black|ruff|isort|prettier|eslint|clippy|rustfmt|gofmt)\b",
    re.IGNORECASE,
)
_TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|helped-by"
    r"|assisted-by|generated-by|thanks-to|cc|change-id|reviewed-on|pr-url|link|bug|issue|see-also"
    r"|differential revision|original-commit|closes|fixes|resolves|refs?)\s*:",
    re.IGNORECASE,
)
_REF = r"(#\d+|gh-\d+|[\w.-]+/[\w.-]+#\d+|https?://\S+)"
# A line that only points at issues or pull requests: "Fixes #12", "Closes: #3, #4", "See https://...".
_REF_LINE = re.compile(
    rf"^\s*[-*]?\s*((fix(es|ed)?|close[sd]?|resolve[sd]?|refs?|see|related( to)?|part of|cf\.?|for)\b[\s:]*)?"
    rf"{_REF}([\s,]*(and\s+)?{_REF})*\s*\.?\s*$",
    re.IGNORECASE,
)
_REVERTS = re.compile(r"^\s*This reverts commit [0-9a-f]{7,40}\.?\s*$", re.IGNORECASE)
# Both take a space before them along, so no double space is left behind.
_GITHUB_URL = re.compile(r" ?<?https?://(www\.)?github\.com/\S*>?")
_ISSUE_NUMBER = re.compile(
    r"\s*\((#\d+(,\s*#\d+)*)\)| ?([\w.-]+/[\w.-]+#\d+|\bgh-\d+\b|#\d+\b)", re.IGNORECASE
)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Change:
    """One file of a commit's raw diff (renames off: a rename is a delete and an add)."""

    status: str  # A, M, D, T
    old_mode: str
    new_mode: str
    old_blob: str
    path: str


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    date: str  # author date, ISO 8601
    message: str
    changes: tuple[Change, ...]


def git(gd: Path, *args: str) -> str:
    """Run git on the bare mirror ``gd``; output decoded leniently (old commits hold latin-1)."""
    cmd = ["git", "-c", "core.quotePath=false", "--git-dir", str(gd), *args]
    proc = subprocess.run(cmd, capture_output=True, check=True)
    return proc.stdout.decode("utf-8", "replace")


def window_commits(gd: Path, snapshot: str, end: str) -> Iterator[Commit]:
    """Non-merge commits that descend from ``snapshot`` and are ancestors of ``end``.

    ``--ancestry-path`` keeps only descendants of the snapshot, so a commit's
    parent is the snapshot or one of its descendants: the snapshot's tree and
    history are older than the state the commit was written against.
    """
    fmt = "%x00%x01%H%x00%P%x00%aI%x00%B%x00"
    out = git(gd, "log", "--no-merges", "--ancestry-path", "--raw", "--no-renames", "--no-abbrev",
              "-z", f"--format={fmt}", f"{snapshot}..{end}")  # fmt: skip
    for record in out.split("\x00\x01")[1:]:
        sha, parents, date, message, raw = record.split("\x00", 4)
        yield Commit(sha, tuple(parents.split()), date, message, parse_raw(raw))


def parse_raw(raw: str) -> tuple[Change, ...]:
    """The files of one commit's ``--raw -z`` output."""
    fields = raw.strip("\n\x00").split("\x00")
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip("\n:").split()
        if len(parts) == 5:
            changes.append(Change(parts[4][0], parts[0], parts[1], parts[2], path))
    return tuple(changes)


def clean_message(message: str) -> str:
    """The development set's cleaning: trailers, issue/PR references and GitHub
    URLs dropped, blank runs collapsed, cut at ~``MAX_CHARS`` on a word boundary."""
    lines = []
    for line in message.replace("\r\n", "\n").split("\n"):
        if _TRAILER.match(line) or _REF_LINE.match(line) or _REVERTS.match(line):
            continue
        line = _ISSUE_NUMBER.sub("", _GITHUB_URL.sub("", line))
        lines.append(line.rstrip())
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    if len(text) > MAX_CHARS:
        cut = text[:MAX_CHARS]
        text = cut[: max(cut.rfind(" "), cut.rfind("\n"), MAX_CHARS // 2)].rstrip()
    return text


def is_chore(subject: str) -> bool:
    return bool(_CHORE.search(subject))


def names_a_file(text: str, paths: list[str]) -> bool:
    """Whether the message names a changed file (its base name, extension included)."""
    lowered = text.lower()
    for path in paths:
        name = PurePosixPath(path).name.lower()
        if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", lowered):
            return True
    return False


@dataclass(frozen=True)
class Candidate:
    """A commit that passed the file and message rules, with its gold paths."""

    commit: Commit
    query: str
    gold_files: tuple[str, ...]
    old_blobs: tuple[str, ...]  # the gold files' blobs in the parent, in gold_files order


def qualify(
    commit: Commit, spec: RepoSpec, snapshot_blobs: dict[str, str] | None, min_words: int = MIN_WORDS
) -> Candidate | str:
    """The commit as a question, or the name of the first rule it fails.

    Gold files must be byte-identical in the snapshot and in the commit's
    parent (same blob id), so the snapshot's tree shows exactly the code the
    fix was written against. ``snapshot_blobs`` None: that rule is not checked
    (when placing snapshots).
    """
    if len(commit.parents) != 1:
        return "merge"
    subject = commit.message.split("\n", 1)[0]
    if is_chore(subject):
        return "chore subject"
    gold, other_code = [], False
    for ch in commit.changes:
        kind = path_kind(ch.path, spec)
        links = "120000" in (ch.old_mode, ch.new_mode) or "160000" in (ch.old_mode, ch.new_mode)
        if kind == "source" and not links:
            if ch.status != "M":
                return "adds or deletes a source file"
            gold.append(ch)
        elif kind == "code" and not ch.path.endswith(spec.exts) and in_source_folders(ch.path):
            other_code = True  # code of another language beside the source: gold would be partial
    if not gold:
        return "no source file"
    if len(gold) > MAX_GOLD_FILES:
        return "too many source files"
    if other_code:
        return "changes code of another language"
    if snapshot_blobs is not None and any(snapshot_blobs.get(ch.path) != ch.old_blob for ch in gold):
        return "gold file differs at the snapshot"
    query = clean_message(commit.message)
    if len(_WORD.findall(query)) < min_words:
        return f"message under {min_words} words"
    if names_a_file(query, [ch.path for ch in commit.changes]):
        return "message names a changed file"
    gold.sort(key=lambda ch: ch.path)
    return Candidate(commit, query, tuple(ch.path for ch in gold), tuple(ch.old_blob for ch in gold))


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def diff_hunks(
    gd: Path, parent: str, sha: str, paths: tuple[str, ...]
) -> dict[str, list[tuple[int, int, int]]]:
    """Per path, the ``(old_start, old_count, new_count)`` of each ``-U0`` hunk; a binary file has none."""
    out = git(gd, "diff", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color",
              "--diff-algorithm=myers", parent, sha, "--", *paths)  # fmt: skip
    hunks: dict[str, list[tuple[int, int, int]]] = {}
    for section in out.split("\ndiff --git ")[0:]:
        head = re.search(r"^\+\+\+ b/(.+)$", section, re.MULTILINE)
        if not head:
            continue
        hunks[head.group(1)] = [
            (int(a), int(b) if b else 1, int(d) if d else 1) for a, b, _c, d in _HUNK.findall(section)
        ]
    return hunks


def gold_ranges(hunks: list[tuple[int, int, int]], n_lines: int) -> list[tuple[int, int]]:
    """Lines of the parent's file that the fix deleted or replaced; for a pure
    insertion, the two lines around the insertion point (clamped to the file)."""
    out = []
    for start, deleted, _added in hunks:
        if deleted:
            out.append((start, start + deleted - 1))
        elif n_lines:
            out.append((max(start, 1), min(start + 1, n_lines)))
    return sorted(set(out))


def commit_question(cand: Candidate, gd: Path, tree: Path) -> dict | str:
    """The gold of a qualified commit from its hunks, or why it is dropped.

    ``tree``: the snapshot's checkout, whose gold files equal the parent's.
    """
    sha, parent = cand.commit.sha, cand.commit.parents[0]
    hunks = diff_hunks(gd, parent, sha, cand.gold_files)
    changed = sum(d + a for path in cand.gold_files for _s, d, a in hunks.get(path, ()))
    if any(not hunks.get(path) for path in cand.gold_files):
        return "binary or mode-only change"
    if changed > MAX_CHANGED_LINES:
        return "over 400 changed lines"
    ranges = []
    for path in cand.gold_files:
        file = tree / path
        if not file.is_file() or file.stat().st_size > MAX_GOLD_BYTES:
            return "gold file missing from the checkout or too large"
        n_lines = len(file.read_bytes().splitlines())
        ranges += [
            {"path": path, "start_line": s, "end_line": e} for s, e in gold_ranges(hunks[path], n_lines)
        ]
    return {"gold_files": list(cand.gold_files), "gold_ranges": ranges}
