"""The history for an agent: the commits most relevant to a question, a file, or both.

This answers "why is this code like this / when did it change". Each commit
comes with its short hash, date, subject and touched paths; when a file is
asked about, also the lines that commit changed in it (read with ``git
show``, at most ``MAX_DIFF_LINES`` per commit, the rest named by a marker
with the command that shows it). The reply fits ``max_chars``: commits that
do not fit are named in a last line, like a packet's hits
(:mod:`repolens.reply.budget` words both).

* question only: the commits most like it (the history leg's BM25), best first;
* file only: the commits that touched it, newest first (renames followed);
* both: the file's commits, those most like the question first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repolens.history.gitlog import changed_lines
from repolens.reply.budget import counted, did_not_fit, diff_marker
from repolens.search.history_leg import commits_for, unavailable
from repolens.search.query import parse_query
from repolens.store.base import IndexReader

MAX_DIFF_LINES = 20
MAX_PATHS_SHOWN = 8
_ABOUT_CHARS = 200


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

    def render(self) -> str:
        shown = ", ".join(self.paths[:MAX_PATHS_SHOWN])
        more = len(self.paths) - MAX_PATHS_SHOWN
        lines = [
            f"{self.hash[:7]} {self.date} {self.subject}",
            f"  files: {shown}{f', +{more} more' if more > 0 else ''}",
        ]
        lines += [f"  {line}" for line in self.diff]
        if self.diff_omitted:
            lines.append(f"  {diff_marker(self.diff_omitted, self.hash[:7], self.named)}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
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
    top_k: int = 10,
    max_chars: int = 6000,
) -> HistoryReply:
    """The commits for ``query`` and/or ``path`` (see the module docstring),
    at most ``top_k``, rendered within ``max_chars``. Arguments are checked
    by the caller; a note says when there is no history or nothing matched."""
    reply = HistoryReply(query, path)
    note = unavailable(reader.history_state())
    if note:
        reply.notes.append(f"no history: {note}")
        return _render(reply, max_chars)
    terms = parse_query(query).weighted() if query else []
    found = commits_for(reader, terms, path, top_k)
    if path is not None and not reader.history_of_file(path):
        reply.notes.append(f"no commit in the indexed history touches {path}")
    elif not found:
        reply.notes.append("no commit in the indexed history matches the question")
    for f in found:
        c = f.commit
        date = datetime.fromtimestamp(c.time, UTC).date().isoformat()
        diff = changed_lines(root, c.hash, f.named) if path is not None else []
        reply.entries.append(
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
    return _render(reply, max_chars)


def _render(reply: HistoryReply, max_chars: int) -> HistoryReply:
    """The text: a head line, the commits that fit, then one line naming
    those that did not (it always fits: it drops names to fit)."""
    about = " and ".join(p for p in (repr(reply.query) if reply.query else "", reply.path or "") if p)
    parts = [f"history for {about[:_ABOUT_CHARS]}: {counted(len(reply.entries), 'commit')}"]
    parts += [f"note: {n}" for n in reply.notes]
    used = sum(len(p) + 2 for p in parts)
    shown: list[HistoryEntry] = []
    for i, entry in enumerate(reply.entries):
        block = entry.render()
        rest = reply.entries[i + 1 :]
        reserve = len(did_not_fit("commit", [e.hash[:7] for e in rest], max_chars)) + 2 if rest else 0
        if used + len(block) + reserve > max_chars:
            reply.omitted = reply.entries[i:]
            break
        parts.append(block)
        used += len(block) + 2
        shown.append(entry)
    reply.entries = shown
    text = "\n\n".join(parts)
    if reply.omitted:
        trailer = did_not_fit("commit", [e.hash[:7] for e in reply.omitted], max_chars - len(text) - 2)
        if trailer:
            text += "\n\n" + trailer
    reply.text = text[:max_chars]
    return reply
