"""Read the checked-out branch's history with git: one ``git log``, parsed;
and a commit's changed lines of one file (``git show``).

Only ``HEAD`` and its ancestors are read (never ``--all``): the history an
answer may draw on is the history of the code being searched. Merges are
left out (their change is the sum of the commits they merge, which are
read); a commit touching more than ``max_files`` paths (a mass reformat, a
vendored import, a licence header) is not kept, since it says nothing about
where one change belongs, but its renames still count.

Renames are followed the cheap way git offers: ``-M`` pairs a deleted and an
added path within one commit, and, reading newest first, every older commit's
paths are mapped to the names they have now. A deleted path ends its chain,
so an unrelated file later created under the same name is not confused with
it.

In a shallow clone the oldest commits git has (the cut) look as if they
added every file of their tree: that is not their change, so they are not
kept either.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repolens.discover.git import git_env
from repolens.history.head_files import head_in_files
from repolens.store.base import CommitDoc

# Each commit's header in the ``git log -z`` stream: a record separator, then
# hash, committer time, subject and body, each NUL-terminated. The file list
# follows as NUL-separated ``status, path[, new path]`` fields.
_FORMAT = "%x1e%H%x00%ct%x00%s%x00%b%x00"
_HEADER = re.compile(rb"[0-9a-f]{40,64}\0")
_STATUS = re.compile(r"[ACDMRTUXB]\d*")
# Config that would change ``git log``'s output whatever the user has set.
_CONFIG = ("-c", "log.showSignature=false", "-c", "core.quotePath=false", "-c", "diff.renameLimit=1000")


NO_COMMITS = "the repository has no commits yet"


class NoHistory(Exception):
    """The root has no history git can read; ``str()`` says why, for a note."""


@dataclass
class LogRead:
    """What one ``git log`` gave: kept commits newest first (as the store
    keeps them, their ``terms`` still empty), how many were
    read and how many were too big to keep, and ``renames``: the name each
    path older than every commit read now has (apply it to commits stored
    before, which are older)."""

    commits: list[CommitDoc] = field(default_factory=list)
    read: int = 0
    too_big: int = 0
    renames: dict[str, str] = field(default_factory=dict)
    at_cut: int = 0  # commits at the cut of a shallow clone, not kept


def _git(root: Path, *args: str, given: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """A short git command, run to the end (``given``: its standard input)."""
    stdin = subprocess.DEVNULL if given is None else subprocess.PIPE
    with _popen(root, *args, stdin=stdin) as proc:
        out, err = proc.communicate(given)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def head(root: Path) -> str:
    """The commit ``HEAD`` points at; ``NoHistory`` outside a work tree or
    before the first commit."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise NoHistory(refused_for_owner(inside.stderr) or "not a git work tree")
    proc = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if proc.returncode != 0:
        raise NoHistory(NO_COMMITS)
    return proc.stdout.decode("ascii").strip()


def head_now(root: Path) -> str:
    """The commit ``HEAD`` points at, "" when git cannot say (no commit,
    not a work tree, git missing): for a reply, which never fails on it.
    Asked by every ``status`` and ``history`` reply: git's files say it
    first (:func:`~repolens.history.head_files.head_in_files`, no process), git
    runs only when they do not plainly say it."""
    return head_in_files(root) or head_by_git(root)


def head_by_git(root: Path) -> str:
    """:func:`head_now` as git alone says it (where its files do not plainly say it)."""
    try:
        proc = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except NoHistory:
        return ""
    return proc.stdout.decode("ascii").strip() if proc.returncode == 0 else ""


@dataclass(frozen=True)
class Moved:
    """How ``HEAD`` moved since the history was read up to a commit."""

    now: str  # HEAD's commit
    newer: int  # commits iter_log would read now (HEAD descends from the one read)
    rewritten: bool  # HEAD no longer holds the commit read (a branch switch, a reset, a rebase)


def moved_since(root: Path, indexed: str) -> Moved | None:
    """How ``HEAD`` moved since the history was read up to ``indexed``;
    None when it did not (or only by commits the history leaves out:
    merges, commits that touch no file under the root) or git cannot say.
    A few git commands when it moved, none when git's files say it did not
    (:func:`head_now`)."""
    now = head_now(root)
    if not now or now == indexed:
        return None
    if not is_ancestor(root, indexed, now):
        return Moved(now, 0, rewritten=True)
    try:
        proc = _git(root, "rev-list", "--count", "--no-merges", f"{indexed}..{now}", *_scope(root))
    except NoHistory:
        return None
    newer = int(proc.stdout.strip() or 0) if proc.returncode == 0 else 0
    return Moved(now, newer, rewritten=False) if newer else None


def held(root: Path, hashes: Iterable[str], head: str) -> set[str]:
    """Those of the commits ``hashes`` that ``head`` holds (is or descends
    from); a commit git no longer has (deleted by a garbage collection after
    a rewrite) is not held; all of them when git fails (the reply says the
    history is behind). Two git commands whatever the number of hashes."""
    hashes = list(dict.fromkeys(hashes))
    try:
        listed = _git(root, "cat-file", "--batch-check", given="".join(f"{h}\n" for h in hashes).encode())
        if listed.returncode != 0:
            return set(hashes)
        rows = [line.split() for line in listed.stdout.splitlines()]  # "HASH commit SIZE" or "HASH missing"
        present = {row[0].decode("ascii") for row in rows if row[1:2] == [b"commit"]}
        if not present:
            return set()
        # the present ones, and their ancestors, that head does not hold
        apart = _git(
            root, "rev-list", "--stdin", given="".join(f"{h}\n" for h in [*present, f"^{head}"]).encode()
        )
    except NoHistory:
        return set(hashes)
    return present - set(apart.stdout.decode("ascii").split()) if apart.returncode == 0 else set(hashes)


_DUBIOUS = re.compile(rb"detected dubious ownership in repository at '([^'\n]+)'")


def refused_for_owner(stderr: bytes) -> str:
    """What git's ``stderr`` says when it refuses a repository another user
    owns (a service user reading a developer's checkout), with the setting
    that trusts it; "" for anything else."""
    found = _DUBIOUS.search(stderr)
    if found is None:
        return ""
    top = os.fsdecode(found.group(1))
    return (
        f"git refuses the repository at {top}, which another user owns: to trust it, "
        f"run `git config --global --add safe.directory {top}`"
    )


def is_ancestor(root: Path, old: str, new: str) -> bool:
    """Whether ``old`` is ``new`` or one of its ancestors (False when ``old``
    no longer exists, e.g. after a rewrite and a garbage collection)."""
    return _git(root, "merge-base", "--is-ancestor", old, new).returncode == 0


def not_held(root: Path, read: str, now: str, most: int) -> list[str] | None:
    """The non-merge commits ``read`` holds and ``now`` does not (those a
    rewrite or a branch switch took off the branch), at most ``most + 1``:
    more than ``most`` is too many to leave out one by one, and listing them
    all would cost as much as reading the history afresh. None when git
    cannot say (``read`` deleted by a garbage collection)."""
    try:
        proc = _git(root, "rev-list", "--no-merges", "-n", str(most + 1), read, f"^{now}", "--")
    except NoHistory:
        return None
    return proc.stdout.decode("ascii").split() if proc.returncode == 0 else None


def merges_between(root: Path, old: str, new: str) -> bool:
    """Whether a merge commit is among those ``new`` holds and ``old`` does
    not (True when git cannot say: the caller then reads afresh)."""
    try:
        proc = _git(root, "rev-list", "--merges", "-n", "1", f"{old}..{new}")
    except NoHistory:
        return True
    return proc.returncode != 0 or bool(proc.stdout.strip())


def shallow_cut(root: Path) -> frozenset[str]:
    """The commits at the cut of a shallow clone (git's ``shallow`` file:
    their parents were not fetched); empty for a whole clone."""
    try:
        proc = _git(root, "rev-parse", "--git-path", "shallow")
    except NoHistory:
        return frozenset()
    try:
        text = (root / os.fsdecode(proc.stdout.strip())).read_text(encoding="ascii")
    except (OSError, ValueError):  # no such file: not shallow
        return frozenset()
    return frozenset(text.split())


def iter_log(
    root: Path,
    *,
    until: str,
    since: str | None,
    limit: int,
    max_files: int,
    into: LogRead,
    cut: frozenset[str] = frozenset(),
) -> Iterator[CommitDoc]:
    """Non-merge commits reachable from ``until`` and not from ``since``,
    newest first, at most ``limit`` read (commits too big to keep count,
    and those of ``cut``, a shallow clone's :func:`shallow_cut`).

    Commits are yielded while git is still writing, so what the caller does
    with each (tokenizing) overlaps git's own work. ``into`` is filled with
    the counts and the renames once the iterator is exhausted; ``NoHistory``
    is raised at the end when git fails.
    """
    revs = [until] if since is None else [f"{since}..{until}"]
    # A root below the top of its work tree sees the commits that touched it,
    # with paths relative to it, as the index stores them.
    scope = _scope(root)
    scope = ["--relative", *scope] if scope else ["--"]
    args = ["log", "--no-merges", "--no-color", "--encoding=UTF-8", "-z", "--name-status", "-M"]
    args += [f"--format={_FORMAT}", "-n", str(limit), *revs, *scope]
    parser = _Parser(max_files, into, cut)
    # stderr to a file: a pipe git fills with warnings while we read stdout would stall both
    with tempfile.TemporaryFile() as errors, _popen(root, *args, stderr=errors) as proc:
        stdout = proc.stdout
        assert stdout is not None
        for record in _records(iter(lambda: stdout.read1(1 << 16), b"")):
            commit = parser.commit(record)
            if commit is not None:
                yield commit
        proc.wait()
        errors.seek(0)
        error = errors.read(4096)
    if proc.returncode != 0:
        message = error.decode("utf-8", "replace").strip().splitlines()
        raise NoHistory(f"git log failed: {message[0] if message else f'exit {proc.returncode}'}")
    into.renames = parser.alias


def _scope(root: Path) -> list[str]:
    """The pathspec of the commits a root sees: ``-- .`` below the top of
    its work tree (the commits that touched it), none at the top (every
    commit, empty ones too)."""
    return ["--", "."] if _git(root, "rev-parse", "--show-prefix").stdout.strip() else []


def _popen(
    root: Path, *args: str, stderr: Any = subprocess.PIPE, stdin: Any = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    exe = shutil.which("git")
    if exe is None:
        raise NoHistory("git is not installed")
    try:
        return subprocess.Popen(
            [exe, *_CONFIG, *args],
            cwd=root,
            env=git_env(),
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    except OSError as exc:
        raise NoHistory(f"git could not run ({exc.strerror})") from None


def _records(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Commit records from the stream, split at commit headers. A record
    separator inside a message or a path is not followed by a hash and NUL,
    so such a piece is glued back onto the record it belongs to; a record is
    complete when the next header arrives."""
    current: bytes | None = None
    tail = b""
    for chunk in itertools.chain(chunks, [b"\x1e"]):  # the final separator completes the last piece
        pieces = (tail + chunk).split(b"\x1e")
        tail = pieces.pop()
        for piece in pieces:
            if _HEADER.match(piece):
                if current is not None:
                    yield current
                current = piece
            elif current is not None:
                current += b"\x1e" + piece
    if current is not None:
        yield current


def _changes(fields: list[str]) -> list[tuple[str, str, str]]:
    """``(status letter, old path, new path)`` from the name-status fields."""
    out = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if not _STATUS.fullmatch(status):  # not a status where one is due: stop, keep what was read
            break
        letter = status[0]
        if letter in "RC" and i + 2 < len(fields):
            out.append((letter, fields[i + 1], fields[i + 2]))
            i += 3
        elif i + 1 < len(fields):
            out.append((letter, fields[i + 1], fields[i + 1]))
            i += 2
        else:
            break
    return out


class _Parser:
    """Turns records into commits, newest first, following renames: ``alias``
    maps a path's name to its newest name for every commit still to come
    (older ones)."""

    def __init__(self, max_files: int, result: LogRead, cut: frozenset[str] = frozenset()) -> None:
        self.max_files = max_files
        self.result = result
        self.cut = cut
        self.alias: dict[str, str] = {}

    def commit(self, record: bytes) -> CommitDoc | None:
        head = record.split(b"\0", 4)
        if len(head) < 5:
            return None
        sha, stamp, subject, body, rest = head
        self.result.read += 1
        if self.cut and sha.decode("ascii", "replace") in self.cut:  # its "change" is its whole tree
            self.result.at_cut += 1
            return None
        # git puts a NUL and a newline between the header and the file list
        fields = [f.decode("utf-8", "replace") for f in rest.lstrip(b"\0\n").split(b"\0") if f]
        changes = _changes(fields)
        # a deleted file ends here: a later file of that name is another file
        names = {(new if letter == "D" else self.alias.get(new, new)): new for letter, _, new in changes}
        for letter, old, new in changes:  # these apply to the older commits
            if letter == "R":
                self.alias[old] = self.alias.get(new, new)
            elif letter == "D":
                self.alias.pop(old, None)
        if len(names) > self.max_files:
            self.result.too_big += 1
            return None
        return CommitDoc(
            hash=sha.decode("ascii", "replace"),
            time=int(stamp or 0),
            subject=subject.decode("utf-8", "replace").strip(),
            body=body.decode("utf-8", "replace").strip(),
            paths=tuple(names),
            named=tuple(names.values()),
            terms={},  # the document is made by the indexer (repolens.history.sync)
        )


def parse_log(out: bytes, max_files: int) -> LogRead:
    """Commits from a whole ``git log -z --name-status`` output in
    :data:`_FORMAT` (what :func:`iter_log` does to the stream)."""
    result = LogRead()
    parser = _Parser(max_files, result)
    result.commits = [c for c in map(parser.commit, _records([out])) if c is not None]
    result.renames = parser.alias
    return result


# How git writes a character of a name it quotes (C-style, quote_c_style).
_ESCAPES = {"\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r", '"': '"', "\\": "\\"}
_TO_QUOTE = re.compile(r'[\x00-\x1f"\\\x7f]')


def quoted(path: str) -> str:
    """``path`` as git writes it (``core.quotePath=false``): as it is,
    unless it holds a control character, a double quote or a backslash;
    then in double quotes, those escaped C-style (``"we\\nird.py"``), so
    that a name is one line of a reply and cannot pass for two names."""
    if not _TO_QUOTE.search(path):
        return path
    return '"' + _TO_QUOTE.sub(lambda m: "\\" + _ESCAPES.get(m[0], f"{ord(m[0]):03o}"), path) + '"'


def changed_lines(root: Path, sha: str, name: str) -> list[str]:
    """Hunk headers and changed lines of ``name`` in commit ``sha`` (no
    context, each cut at 200 characters); empty when git cannot show them.
    A file the commit renamed to ``name`` shows what changed besides the
    rename, after a ``renamed from OLD`` line (limited to ``name`` alone,
    git sees no rename and shows the whole file as added)."""
    shown = _show(root, sha, name)
    if shown is None:
        return []
    if shown.startswith("new file mode") or "\nnew file mode" in shown:
        old = _renamed_from(root, sha, name)
        if old:
            return [f"renamed from {quoted(old)}", *_hunks(_show(root, sha, old, name) or "")]
    return _hunks(shown)


def _show(root: Path, sha: str, *names: str) -> str | None:
    """``git show`` of ``names`` in ``sha``, renames paired, no context; None when git cannot."""
    args = ["show", "--format=", "--no-color", "--no-ext-diff", "-M", "-U0", sha, "--", *names]
    try:
        proc = _git(root, *args)
    except NoHistory:
        return None
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def _renamed_from(root: Path, sha: str, name: str) -> str:
    """The path commit ``sha`` renamed to ``name`` ("" when it added it).
    Paths relative to ``root``, as the index names them (``--relative``:
    a root below the top of its work tree)."""
    try:
        proc = _git(root, "show", "--format=", "--no-color", "-M", "--name-status", "-z", "--relative", sha)
    except NoHistory:
        return ""
    fields = proc.stdout.decode("utf-8", "replace").split("\0") if proc.returncode == 0 else []
    for i, field_ in enumerate(fields):
        if field_.startswith("R") and i + 2 < len(fields) and fields[i + 2] == name:
            return fields[i + 1]
    return ""


def _hunks(shown: str) -> list[str]:
    """Hunk headers and changed lines of ``git show -U0`` output (a removed
    ``-- comment`` line is one, though it starts like a file header), and a
    line for each change git shows no line of: a mode (``mode 100644 ->
    100755``), a binary file, an empty file added or deleted."""
    out: list[str] = []
    for section in re.split(r"^(?=diff --git )", shown, flags=re.M):
        header, _, hunks = section.partition("\n@@")
        said = [_said(line, header) for line in header.splitlines()]
        out += [line for line in said if line]
        if hunks:
            body = ("@@" + hunks).splitlines()
            out += [line[:200] for line in body if line.startswith(("@@", "+", "-"))]
        elif not any(said) and section.startswith("diff --git "):
            if "\nnew file mode " in header:
                out.append("empty file added")
            elif "\ndeleted file mode " in header:
                out.append("empty file deleted")
    return out


def _said(line: str, header: str) -> str:
    """What a line of a file's ``git show`` header says that its changed
    lines do not ("" for the others: index, names, similarity)."""
    if line.startswith("new mode "):
        old = next(
            (h.removeprefix("old mode ") for h in header.splitlines() if h.startswith("old mode ")), "?"
        )
        return f"mode {old} -> {line.removeprefix('new mode ')}"
    if line.startswith("Binary files ") and line.endswith(" differ"):
        if line.startswith("Binary files /dev/null and "):
            return "binary file added"
        return "binary file deleted" if line.endswith(" and /dev/null differ") else "binary file changed"
    return ""
