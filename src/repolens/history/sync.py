"""Keep an index's history equal to the checked-out branch (write path).

Called by the indexer with the generation's writer, under its write lock,
after the code is written:

* ``HEAD`` unchanged (and the same recipe): nothing is read;
* ``HEAD`` moved forward (the stored head is an ancestor): only the new
  commits are read, and the oldest commits beyond the cap are dropped;
  unless the new commits rename a path: then it is read afresh, as a fresh
  build reads it (every commit names a path by its newest name, in its
  document too: the stored documents hold the old name's words), or merge
  commits older than the newest stored (git lists merged branches' commits
  by date: a fresh read interleaves them with the stored ones, and the
  stored order is the order ``history --path`` lists them in);
* anything else (a branch switch, a rebase or amend, a changed cap or
  document format): the history is read afresh from ``HEAD``;
* a shallow clone: the commits at its cut are left out (see gitlog); a
  deeper fetch reads the history afresh;
* no history (not a git work tree, no commits, git missing or failing, the
  cap set to 0): the stored history is emptied and the reason kept for the
  leg's note.

Each sync is one :meth:`~repolens.store.base.IndexWriter.update_history`
(atomic). Never raises for a git problem: a code index without history is
still an index.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from repolens.budget import counted
from repolens.history import gitlog
from repolens.store.base import CommitDoc, HistoryUpdate, IndexWriter
from repolens.tokens import tokenize, tokenize_path

# A commit touching more paths than this is not kept (see gitlog).
MAX_FILES_PER_COMMIT = 50
# Bump when what a commit's document holds changes: stored history is re-read.
DOC_VERSION = 1
# Trailer lines (``Signed-off-by: Name <mail>``, ``Co-authored-by: ...``) name
# people, not code; they stay in the stored body but are not searched.
_TRAILER = re.compile(r"^[A-Za-z][\w-]*-by:.*$", re.M)


@dataclass
class HistoryReport:
    # unchanged, read (first time), added, rebuilt (branch switch, rewrite), renamed, merged or none
    mode: str
    commits: int = 0  # stored afterwards
    added: int = 0
    too_big: int = 0
    at_cut: int = 0  # at the cut of a shallow clone
    head: str = ""
    note: str = ""

    def summary(self) -> str:
        """One line for ``repolens index``."""
        if self.mode == "none":
            return f"history: none ({self.note})"
        line = f"history: {counted(self.commits, 'commit')} up to {self.head[:10]}"
        if self.mode == "added":
            line += f" ({self.added} new)"
        elif self.mode == "rebuilt":
            line += " (read afresh: the branch changed or was rewritten)"
        elif self.mode == "renamed":
            line += " (read afresh: a new commit renamed a file)"
        elif self.mode == "merged":
            line += " (read afresh: a merge brought commits older than the newest read)"
        if self.too_big:
            line += f"; {self.too_big} touching over {MAX_FILES_PER_COMMIT} files left out"
        if self.at_cut:
            line += f"; {self.at_cut} at the cut of a shallow clone left out (git sees it add every file)"
        return line


def commit_doc(commit: CommitDoc, path_tokens: dict[str, list[str]]) -> CommitDoc:
    """A commit's BM25 document: its message and the paths it touched,
    tokenized like code (so ``fix parse_url`` meets ``parseUrl``).
    ``path_tokens`` caches paths' tokens: the same paths recur in many commits."""
    terms = Counter(tokenize(f"{commit.subject}\n{_TRAILER.sub('', commit.body)}"))
    for path in commit.paths:
        tokens = path_tokens.get(path)
        if tokens is None:
            tokens = path_tokens[path] = tokenize_path(path)
        terms.update(tokens)
    return commit._replace(terms=terms)


def sync_history(
    writer: IndexWriter, root: Path, limit: int, *, max_files: int = MAX_FILES_PER_COMMIT
) -> HistoryReport:
    """Bring the history of ``writer``'s generation up to ``HEAD`` of ``root``
    (see the module docstring); ``limit`` caps the commits kept, 0 = no history."""
    state = writer.history_state()
    recipe = f"doc v{DOC_VERSION}, cap {limit}, max files {max_files}"
    try:
        if limit <= 0:
            raise gitlog.NoHistory("history_commits is 0")
        head = gitlog.head(root)
        cut = gitlog.shallow_cut(root)
        if cut:  # another cut (a deeper fetch, --unshallow) reads the history afresh
            recipe += f", shallow {hashlib.sha1(' '.join(sorted(cut)).encode()).hexdigest()[:12]}"
        fresh = state is None or not state.head or state.recipe != recipe
        if not fresh and state is not None and state.head == head:
            return HistoryReport("unchanged", state.commits, head=head)
        since = None if fresh or state is None else state.head
        if since is not None and not gitlog.is_ancestor(root, since, head):
            since = None
        path_tokens: dict[str, list[str]] = {}
        afresh = ""  # why the new commits were read again with the old ones: renamed, merged
        filled = False
        while True:
            read = gitlog.LogRead()
            log = gitlog.iter_log(
                root, until=head, since=since, limit=limit, max_files=max_files, into=read, cut=cut
            )
            docs = [commit_doc(c, path_tokens) for c in log]
            if since is None or state is None:
                break
            filled = read.read >= limit  # the new commits alone fill the cap: the stored ones all go
            if not filled and any(old != new for old, new in read.renames.items()):
                afresh = "renamed"  # the stored commits' documents name the old path
            elif _interleaved(root, since, head, docs, state.newest):
                afresh = "merged"
            else:
                break
            since = None
    except gitlog.NoHistory as exc:
        note = str(exc)
        if state is not None and not state.head and state.note == note:
            return HistoryReport("unchanged", note=note)
        writer.update_history(HistoryUpdate(head="", recipe="", note=note))
        return HistoryReport("none", note=note)
    docs.reverse()  # oldest first: ids ascend with recency
    writer.update_history(HistoryUpdate(head, recipe, "", docs, replace=since is None or filled, keep=limit))
    after = writer.history_state()
    had = state is not None and bool(state.head)
    return HistoryReport(
        "added" if since is not None else afresh or ("rebuilt" if had else "read"),
        after.commits if after else 0,
        added=len(docs),
        too_big=read.too_big,
        at_cut=read.at_cut,
        head=head,
    )


def _interleaved(root: Path, since: str, head: str, new: list[CommitDoc], newest: int) -> bool:
    """Whether a fresh read would list the ``new`` commits (read from
    ``since`` to ``head``) among the stored ones rather than before them: a
    merge brought commits no newer than ``newest``, the newest stored (a
    branch begun before it). git lists the commits of merged branches by
    date, so appended they would be listed, and ``history --path`` would
    show them, in another order than a fresh build's."""
    return bool(new) and min(c.time for c in new) <= newest and gitlog.merges_between(root, since, head)
