"""The history leg (read path): past commits like the question vote for their files.

Where a change belongs is often written in the history rather than the code:
earlier commits worded like the question ("timeout ignored on retry") touched
the file that needs the change, even when the code itself shares few words
with the question. So:

1. BM25 over past commits (message and touched paths, tokenized like code,
   with the question's own term weights; the store scores, see
   :class:`repolens.store.base.HistoryState`) finds the ``K_COMMITS`` most
   similar;
2. each votes for the indexed files it touched with its similarity (its
   score over the best one's) times a recency decay (half-life one year,
   counted back from the newest commit stored, not the wall clock, so an
   old checkout is judged by its own time);
3. a file's strength is its votes over the best file's, in (0, 1]. A
   commit that touched most of the indexed files does not vote.

:func:`repolens.search.search_index` adds ``history_weight * top * strength`` to
each candidate chunk of a voted file, and lets the strongest files only the
history suggests join with their best chunk. Raw frequency of change was
measured useless, so a file gains nothing from being touched often by
unrelated commits.

The same ranking answers the ``history`` tool (:func:`commits_for`): the
commits most like a question, those that touched a file, or both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from repolens.budget import counted
from repolens.fronts import say
from repolens.record import Record
from repolens.store.base import HistoryCommit, HistoryState, IndexReader, LexFilters, StoredChunk

K_COMMITS = 30
HALF_LIFE_DAYS = 365.0
MAX_VOTED = 10  # files the leg may add to the candidates
_DAY = 86_400
_SUBJECT_CHARS = 60


def no_indexed_history() -> str:
    """The note of an index with no history read yet (in the caller's words)."""
    return f"this index has no history yet; {say('index')} reads it"


class SimilarCommit(Record):
    """A past commit worded like the question, and its vote."""

    commit: HistoryCommit
    score: float  # BM25
    weight: float  # score over the best commit's, times recency


class FileVote(Record):
    """The history's vote for one file."""

    strength: float  # in (0, 1]: this file's votes over the best file's
    commits: tuple[SimilarCommit, ...]  # the commits that voted, strongest first

    def explain(self) -> str:
        """``3 similar commits, e.g. 4d1c2a0 'Fix ...'`` (for ``--explain``)."""
        n = len(self.commits)
        best = self.commits[0].commit
        subject = best.subject
        if len(subject) > _SUBJECT_CHARS:
            subject = subject[: _SUBJECT_CHARS - 3].rstrip() + "..."
        return f"{n} similar commit{'s' if n != 1 else ''}, e.g. {best.hash[:7]} {subject!r}"


class HistoryVotes(Record):
    """The history leg's votes per file, or why it is off."""

    files: Mapping[str, FileVote] = MappingProxyType({})
    note: str = ""  # why the leg is off ("" when it is on)

    def strongest(self, n: int = MAX_VOTED) -> list[str]:
        return sorted(self.files, key=lambda p: -self.files[p].strength)[:n]


def unavailable(state: HistoryState | None) -> str:
    """Why an index with this history cannot answer from it ("" when it can)."""
    if state is None:
        return no_indexed_history()
    if state.note:
        return state.note
    if state.commits == 0:  # the indexer left out every commit there was (repolens.history.sync)
        return (
            "no commits to learn from: merges, commits touching very many files and those at the cut "
            "of a shallow clone are left out"
        )
    return ""


def similar_commits(
    reader: IndexReader,
    terms: Sequence[tuple[str, float]],
    k: int = K_COMMITS,
    *,
    newest: int,
    indexed_only: bool = True,
    without: frozenset[str] = frozenset(),
) -> list[SimilarCommit]:
    """The ``k`` commits most like the weighted ``terms``, best first, with
    their vote weight, their age counted back from ``newest`` (the
    history's :attr:`HistoryState.newest`; ``indexed_only``: their paths
    limited to indexed files), those of ``without`` left out (commits HEAD
    no longer holds: as many more are ranked, so that ``k`` remain).

    The ranking costs the same however long; reading the commits, with
    their paths, is what costs (reading ``k`` plus every commit off the
    branch made a search after a rewrite ~0.5-1 ms slower per hundred): so
    they are read in growing slices of the ranking (``k``, then four
    times as many each time) only until ``k`` of them are held."""
    ranked = reader.history_search(terms, k + len(without)) if terms else []
    found: list[tuple[int, float]] = []
    stored: dict[int, HistoryCommit] = {}
    start, end = 0, k
    while start < len(ranked) and len(found) < k:
        part = ranked[start:end]
        stored.update(reader.history_commits((cid for cid, _ in part), indexed_only=indexed_only))
        found += [(cid, score) for cid, score in part if cid in stored and stored[cid].hash not in without]
        start, end = end, 4 * end
    found = found[:k]
    if not found:
        return []
    best = found[0][1]
    out = []
    for cid, score in found:
        commit = stored.get(cid)
        if commit is None:
            continue
        age_days = max(newest - commit.time, 0) / _DAY
        recency = 0.5 ** (age_days / HALF_LIFE_DAYS)
        out.append(SimilarCommit(commit, score, score / best * recency))
    return out


def vote_files(
    reader: IndexReader,
    terms: Sequence[tuple[str, float]],
    k: int = K_COMMITS,
    *,
    without: frozenset[str] = frozenset(),
) -> HistoryVotes:
    """Files the commits most like ``terms`` touched, with their strength
    (see the module docstring), the commits of ``without`` left out; a note
    instead when there is no history."""
    state = reader.history_state()
    note = unavailable(state)
    if note or state is None:
        return HistoryVotes(note=note)
    files = int(reader.meta().get("files", "0") or 0)
    votes: dict[str, float] = {}
    voters: dict[str, list[SimilarCommit]] = {}
    for s in similar_commits(reader, terms, k, newest=state.newest, without=without):
        if _touches_most(len(s.commit.paths), files):
            continue
        for path in s.commit.paths:
            votes[path] = votes.get(path, 0.0) + s.weight
            voters.setdefault(path, []).append(s)
    best = max(votes.values(), default=0.0)
    if best <= 0:
        return HistoryVotes()
    return HistoryVotes(
        {
            path: FileVote(v / best, tuple(sorted(voters[path], key=lambda s: -s.weight)))
            for path, v in votes.items()
        }
    )


def _touches_most(touched: int, files: int) -> bool:
    """A commit that touched most of the indexed files (the first import of
    a small project) votes for everything alike, which says nothing about
    where a change belongs but would lift every weak candidate: it does not
    vote. (In a repository of more than 100 files the 50-file cap of
    :mod:`repolens.history.sync` already keeps such commits out.)"""
    return touched > 1 and 2 * touched > files


def history_leg(
    reader: IndexReader, terms: Sequence[tuple[str, float]], root: Path | None = None
) -> tuple[HistoryVotes, list[str]]:
    """The leg for a search: the votes, and a note when the index has no
    history yet or when ``HEAD`` of ``root`` no longer holds the history read
    (a rewrite, a branch switch), until ``repolens index`` reads it: the
    reader can act on it. The commits read that HEAD no longer holds do not
    vote, the others do; when too many are off the branch to list (or git
    cannot say which), the leg is off. Why the leg is off for good (outside
    git, before the first commit, ``history_commits = 0``) is no news to
    repeat on every reply: ``status`` and ``doctor`` say it."""
    state = reader.history_state()
    if root is not None and state is not None and not unavailable(state):
        from repolens.history.heads import OFF_MOST, left_behind, off_branch

        now = left_behind(root, state.head)
        if now:
            ended = (
                f"the indexed history ends at {state.head[:7]}, which HEAD ({now[:7]}) does not hold "
                "(a branch switch or a rewrite)"
            )
            off = off_branch(root, state.head, now)
            if off is None or len(off) > OFF_MOST:
                many = f", and more than {OFF_MOST:,} of its commits are off the branch" if off else ""
                note = f"{ended}{many}; {say('index')} reads it afresh"
                return HistoryVotes(note=note), [f"history leg off: {note}"]
            if off:  # (none: HEAD left only merges, which are not read)
                left_out = f"it votes without the {counted(len(off), 'commit')} HEAD does not hold"
                note = f"{ended}: {left_out}; {say('index')} reads the new ones"
                return vote_files(reader, terms, without=off), [f"history leg: {note}"]
    votes = vote_files(reader, terms)
    return votes, [f"history leg off: {votes.note}"] if state is None else []  # no history read yet


def join_voted(
    reader: IndexReader,
    votes: HistoryVotes,
    terms: Sequence[tuple[str, float]],
    fields: Mapping[str, float],
    filters: LexFilters,
    scores: dict[int, float],
    stored: dict[int, StoredChunk],
) -> None:
    """Let the strongest voted files that have no candidate chunk yet join
    ``scores`` (and ``stored``) with their best lexical chunk, within the
    search's language and kind filters."""
    present = {s.chunk.path for s in stored.values()}
    joining = [path for path in votes.strongest() if path not in present]
    best = reader.lexical_in_files(terms, fields, joining, 1, filters) if joining else {}
    for path in joining:
        for cid, score in best.get(path, ()):
            scores.setdefault(cid, score)
    stored.update(reader.chunks(cid for cid in scores if cid not in stored))


class FoundCommit(Record):
    """A commit for the ``history`` tool: every path it touched, its
    similarity to the question (0 without one) and, when a file was asked
    about, the name this commit gave that file."""

    commit: HistoryCommit
    score: float
    named: str = ""


def commits_for(
    reader: IndexReader,
    terms: Sequence[tuple[str, float]],
    path: str | None,
    top_k: int,
    *,
    keep: Callable[[list[str]], set[str]] | None = None,
) -> list[FoundCommit]:
    """At most ``top_k`` commits: most like ``terms`` (question only), or
    those that touched ``path``, newest first, the ones most like ``terms``
    first when there are terms. ``keep``, given the hashes of the commits
    found, says which may be shown (those HEAD still holds): more are
    found until ``top_k`` are kept or none is left."""
    want = top_k
    while True:
        found = _found(reader, terms, path, want)
        if keep is None:
            return found
        kept = keep([f.commit.hash for f in found])
        shown = [f for f in found if f.commit.hash in kept]
        if len(shown) >= top_k or len(found) < want:
            return shown[:top_k]
        want *= 4


def _found(
    reader: IndexReader, terms: Sequence[tuple[str, float]], path: str | None, top_k: int
) -> list[FoundCommit]:
    if path is None:
        ranked = reader.history_search(terms, top_k) if terms else []
        named: dict[int, str] = {}
    else:
        touching = reader.history_of_file(path)
        named = dict(touching)
        scores = dict(reader.history_search(terms, len(touching) + 1000)) if terms and touching else {}
        # newest first; a stable sort keeps that among equal scores
        ranked = sorted(((cid, scores.get(cid, 0.0)) for cid, _ in touching), key=lambda r: -r[1])[:top_k]
    stored = reader.history_commits(cid for cid, _ in ranked)
    return [FoundCommit(stored[cid], score, named.get(cid, "")) for cid, score in ranked if cid in stored]
