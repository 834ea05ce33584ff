"""The history for an agent: the commits most relevant to a question, a file, or both.

This answers "why is this code like this / when did it change". Each commit
comes with its short hash, date, subject and touched paths; when a file is
asked about, also the lines that commit changed in it (read with ``git
show``, at most ``MAX_DIFF_LINES`` per commit, the rest named by a marker
with the command that shows it). The reply fits ``max_chars``: commits that
do not fit are named in a last line, like a packet's hits
(:mod:`repolens.budget` words both).

* question only: the commits most like it (the history leg's BM25), best first;
* file only: the commits that touched it, newest first (renames followed);
* both: the file's commits, those most like the question first.

A history that ``HEAD`` moved away from since ``repolens index`` read it
says so in a note, and shows only the commits ``HEAD`` holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repolens.budget import (
    HISTORY_MAX_CHARS,
    HISTORY_TOP_K,
    counted,
    did_not_fit,
    diff_marker,
    more_did_not_fit,
)
from repolens.fronts import say
from repolens.history.gitlog import NO_COMMITS, changed_lines, head_now, held, moved_since, quoted
from repolens.search.history_leg import commits_for, unavailable
from repolens.search.query import parse_query
from repolens.store.base import HistoryState, IndexReader

MAX_DIFF_LINES = 20
MAX_PATHS_SHOWN = 8
# The note of a history that HEAD moved away from since it was read (a
# reply over several repositories keeps it, with the "no history" ones).
BEHIND_HEAD = "the indexed history ends at"
_ABOUT_CHARS = 200
# The question and path echoed in the head line are cut to a quarter of the
# budget, at least this many characters, so that small budgets hold a commit.
_ABOUT_MIN = 40
# A best commit whose head line alone overflows the budget keeps at least
# this much of its subject (then "...") beside the line naming the others.
_SUBJECT_MIN = 20


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    hash: str
    date: str  # committer date, YYYY-MM-DD (UTC)
    subject: str
    paths: tuple[str, ...]  # every path it touched, newest names
    score: float = 0.0  # similarity to the question (0 without one)
    diff: tuple[str, ...] = ()  # changed lines of the asked file, hunk headers included
    diff_omitted: int = 0  # changed lines not shown
    named: str = ""  # the asked file's name in this commit
    repo: str = ""  # the repository's key, in a reply over several
    also: tuple[str, ...] = ()  # the other repositories (branches) of the reply that hold it

    def head(self) -> str:
        """``hash date subject``: the line that names the commit (``repo hash
        date subject`` in a reply over several repositories, ``repo,other``
        when several of them hold it)."""
        head = f"{self.hash[:7]} {self.date} {self.subject}"
        return f"{','.join((self.repo, *self.also))} {head}" if self.repo else head

    def render(self) -> str:
        return self.shown_within(None)[0]

    def shown_within(self, limit: int | None) -> tuple[str, HistoryEntry]:
        """The entry, whole when it fits in ``limit`` chars (None: no limit).
        Else its head line, then as many changed lines as fit beside the
        marker that counts the rest and names the ``git show`` that shows
        them (its files line too when it fits beside that marker); a head
        line longer than ``limit`` is cut in its subject (the hash stays).
        With the entry as shown, for the JSON: its changed lines those the
        text holds, the others counted in ``diff_omitted``."""
        text, lines_shown = self._within(limit)
        if lines_shown == len(self.diff):
            return text, self
        left_out = self.diff_omitted + len(self.diff) - lines_shown
        return text, replace(self, diff=self.diff[:lines_shown], diff_omitted=left_out)

    def _within(self, limit: int | None) -> tuple[str, int]:
        """:meth:`shown_within`'s text, and how many changed lines it shows."""
        shown = ", ".join(map(quoted, self.paths[:MAX_PATHS_SHOWN])) or "none"  # an empty commit
        more = len(self.paths) - MAX_PATHS_SHOWN
        head = self.head()
        lines = [head, f"  files: {shown}{f', +{more} more' if more > 0 else ''}"]
        lines += [f"  {line}" for line in self.diff]
        if self.diff_omitted:
            lines.append(self._marker(self.diff_omitted))
        text = "\n".join(lines)
        if limit is None or len(text) <= limit:
            return text, len(self.diff)
        if len(head) > limit:
            return head[: max(limit - 3, len(self.hash[:7]))] + "...", 0
        out, size = [head], len(head)
        left = len(self.diff) + self.diff_omitted
        # the files line only beside the marker that says how to see the changes
        if size + 1 + len(lines[1]) + (1 + len(self._marker(left)) if left else 0) <= limit:
            out.append(lines[1])
            size += 1 + len(lines[1])
        for line in self.diff:
            after = f"\n{self._marker(left - 1)}" if left > 1 else ""
            if size + 1 + len(line) + 2 + len(after) > limit:
                break
            out.append(f"  {line}")
            size += 3 + len(line)
            left -= 1
        if left and size + 1 + len(self._marker(left)) <= limit:
            out.append(self._marker(left))
        return "\n".join(out), len(self.diff) + self.diff_omitted - left

    def _marker(self, n: int) -> str:
        return f"  {diff_marker(n, self.hash[:7], self.named)}"

    def to_json(self) -> dict[str, Any]:
        return {
            **({"repo": self.repo} if self.repo else {}),
            **({"also_in": list(self.also)} if self.also else {}),
            "hash": self.hash,
            "date": self.date,
            "subject": self.subject,
            "paths": list(self.paths),
            "score": round(self.score, 4),
            "diff": list(self.diff),
            "diff_omitted": self.diff_omitted,
        }


@dataclass
class HistoryReply:
    query: str | None
    path: str | None
    entries: list[HistoryEntry] = field(default_factory=list)  # the ones shown
    omitted: list[HistoryEntry] = field(default_factory=list)  # found, but over the budget
    notes: list[str] = field(default_factory=list)
    text: str = ""

    def render(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "path": self.path,
            "commits": [e.to_json() for e in self.entries],
            "omitted": [e.hash for e in self.omitted],
            "notes": self.notes,
        }


def history_reply(
    reader: IndexReader,
    root: Path,
    query: str | None,
    *,
    path: str | None = None,
    top_k: int = HISTORY_TOP_K,
    max_chars: int = HISTORY_MAX_CHARS,
    notes: Sequence[str] = (),
) -> HistoryReply:
    """The commits for ``query`` and/or ``path`` (see the module docstring),
    at most ``top_k``, rendered within ``max_chars``. Arguments are checked
    by the caller; a note says when there is no history or nothing matched
    (after ``notes``, the caller's)."""
    reply = HistoryReply(query, path)
    reply.entries, found_notes = history_entries(reader, root, query, path=path, top_k=top_k)
    reply.notes = [*notes, *found_notes]
    return render_history(reply, max_chars)


def history_entries(
    reader: IndexReader, root: Path, query: str | None, *, path: str | None = None, top_k: int = HISTORY_TOP_K
) -> tuple[list[HistoryEntry], list[str]]:
    """The commits of :func:`history_reply`, best first, and its notes."""
    entries: list[HistoryEntry] = []
    state = reader.history_state()
    note = unavailable(state)
    if note:
        return entries, [f"no history: {note}{_first_commit_since(root, state)}"]
    assert state is not None
    notes = []
    behind, keep = _behind_head(root, state.head)
    if behind:
        notes.append(behind)
    terms = parse_query(query).weighted() if query else []
    found = commits_for(reader, terms, path, top_k, keep=keep)
    if path is not None and not found:
        notes.append(f"no commit in the indexed history touches {quoted(path)}")
    elif not found:
        notes.append("no commit in the indexed history matches the question")
    for f in found:
        c = f.commit
        date = datetime.fromtimestamp(c.time, UTC).date().isoformat()
        diff = changed_lines(root, c.hash, f.named) if path is not None else []
        entries.append(
            HistoryEntry(
                c.hash,
                date,
                c.subject,
                c.paths,
                f.score,
                diff=tuple(diff[:MAX_DIFF_LINES]),
                diff_omitted=max(len(diff) - MAX_DIFF_LINES, 0),
                named=f.named,
            )
        )
    return entries, notes


def once_each(entries: Sequence[HistoryEntry]) -> list[HistoryEntry]:
    """``entries`` of several repositories, best first, each commit once: a
    commit several of them hold (branches of one repository) is kept where
    it ranks best and names the others in ``also``. The same commit seen
    with other paths (roots at other folders of one repository) is another
    entry."""
    out: list[HistoryEntry] = []
    at: dict[tuple[str, tuple[str, ...]], int] = {}
    for entry in entries:
        i = at.setdefault((entry.hash, entry.paths), len(out))
        if i == len(out):
            out.append(entry)
        elif entry.repo not in (out[i].repo, *out[i].also):
            out[i] = replace(out[i], also=(*out[i].also, entry.repo))
    return out


def _behind_head(root: Path, indexed: str) -> tuple[str, Callable[[list[str]], set[str]] | None]:
    """When ``HEAD`` moved since the history was read (up to ``indexed``):
    the note saying so, and, when ``HEAD`` no longer holds ``indexed`` (a
    branch switch, a reset, a rebase), which commits found may be shown
    (those ``HEAD`` holds); ("", None) when it did not move or git cannot say.
    Asked by every reply: :func:`moved_since` runs no git while git's files
    say HEAD is where the history was read."""
    moved = moved_since(root, indexed)
    if moved is None:
        return "", None
    if not moved.rewritten:
        newer = counted(moved.newer, "newer commit")
        return f"{BEHIND_HEAD} {indexed[:7]}: HEAD has {newer}; {say('index')} reads them", None
    now = moved.now
    return (
        f"{BEHIND_HEAD} {indexed[:7]}, which HEAD ({now[:7]}) does not hold (a branch switch or a rewrite): "
        f"commits HEAD does not hold are left out; {say('index')} reads it afresh",
        lambda hashes: held(root, hashes, now),
    )


def _first_commit_since(root: Path, state: HistoryState | None) -> str:
    """What to add to the note of a history read before the first commit,
    when there is one now."""
    if state is None or state.note != NO_COMMITS:
        return ""
    now = head_now(root)
    return f"; HEAD is {now[:7]} now: {say('index')} reads it" if now else ""


def render_history(reply: HistoryReply, max_chars: int) -> HistoryReply:
    """The text: a head line, the commits that fit, then one line naming
    those that did not (it always fits: it drops names to fit). A commit
    that does not fit whole is shown cut (:meth:`HistoryEntry.shown_within`)
    when its head line fits, and the best one always is: its hash and
    subject fit at every budget, beside the trailer's count or alone."""
    about = " and ".join(p for p in (repr(reply.query) if reply.query else "", quoted(reply.path or "")) if p)
    about_chars = min(_ABOUT_CHARS, max(_ABOUT_MIN, max_chars // 4))  # leave room for the best commit
    parts = [f"history for {about[:about_chars]}: {counted(len(reply.entries), 'commit')}"]
    parts += [f"note: {n}" for n in reply.notes]
    used = sum(len(p) + 2 for p in parts)
    shown: list[HistoryEntry] = []
    for i, entry in enumerate(reply.entries):
        rest = reply.entries[i + 1 :]
        reserves = [len(did_not_fit("commit", [e.hash[:7] for e in rest], max_chars)) + 2 if rest else 0]
        if rest and not shown:  # the best commit before the list of the others
            reserves += [len(more_did_not_fit("commit", len(rest))) + 2, 0]
        fitted = _fitted(entry, max_chars - used, reserves, must=not shown)
        if fitted is None:
            reply.omitted = reply.entries[i:]
            break
        block, as_shown = fitted
        parts.append(block)
        used += len(block) + 2
        shown.append(as_shown)  # its JSON holds the changed lines the text holds
        if block != entry.render():  # cut: the commits after it are named in the trailer
            reply.omitted = list(rest)
            break
    reply.entries = shown
    text = "\n\n".join(parts)
    if reply.omitted:
        trailer = did_not_fit("commit", [e.hash[:7] for e in reply.omitted], max_chars - len(text) - 2)
        if trailer:
            text += "\n\n" + trailer
    reply.text = text[:max_chars]
    return reply


def _fitted(
    entry: HistoryEntry, room: int, reserves: list[int], *, must: bool
) -> tuple[str, HistoryEntry] | None:
    """``entry`` in ``room`` chars beside the trailer's ``reserves`` (most
    first): whole beside the most, else cut beside the most that leaves room
    for more than its head line, else for its head line; None when not even
    that fits, unless it ``must`` show (the best commit). A head line that
    fits beside none is cut in its subject: beside the most of the trailer
    that leaves its hash, its date and the start of its subject (the others
    are still named), else alone. With the entry as shown
    (:meth:`HistoryEntry.shown_within`)."""
    whole = entry.render()
    if len(whole) + reserves[0] <= room:
        return whole, entry
    head_only = None
    for reserve in reserves:
        if len(entry.head()) <= room - reserve:
            cut = entry.shown_within(room - reserve)
            if "\n" in cut[0]:
                return cut
            head_only = head_only or cut
    if head_only is not None:
        return head_only
    if not must:
        return None
    least = len(entry.head()) - len(entry.subject) + _SUBJECT_MIN
    for reserve in reserves:
        if room - reserve >= least:
            return entry.shown_within(room - reserve)
    return entry.shown_within(max(room, 0))
