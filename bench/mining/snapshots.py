"""Where a repository's snapshots go, so that few indexes answer many commit questions.

A commit C can be asked at a snapshot S only if S is an ancestor of C's
parent and C's gold files did not change between them. Measured over the
mined repositories, that holds for about 30% of the qualifying commits
within 50 first-parent commits of an evenly placed S and for under 5% past
150: gold files are the busy ones. So each snapshot is placed where it can
serve the most commits: the first-parent range is cut into equal segments
(which keeps the snapshots spread over the years), and each segment's
snapshot is the first-parent commit inside it that the most qualifying
commits could be asked at, counting only commits that land within the
window after it.

A commit's valid snapshots are the first-parent commits from the last
change of one of its gold files on the first-parent line up to its branch
point (the newest first-parent commit its parent descends from); for a
commit made on a side branch, the gold blobs at the branch point are
compared with its parent's. The placement only estimates: the questions
are then mined from each window with the exact checks (``mine_commits``).
"""

from __future__ import annotations

import math
import subprocess
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path

from bench.mining.commits import Candidate, git, parse_raw, qualify, window_commits
from bench.mining.paths import RepoSpec


@dataclass(frozen=True)
class Snapshot:
    spec: RepoSpec
    sha: str
    date: str
    end: str  # the last first-parent commit of its window
    served: int  # commits the placement expected it to serve

    @property
    def checkout(self) -> str:
        return f"{self.spec.repo.replace('/', '__')}@{self.sha[:12]}"


def first_parent(gd: Path, since: datetime, until: datetime) -> list[tuple[str, str]]:
    """``(sha, committer date)`` of the default branch's first-parent commits in
    ``[since, until]``, oldest first."""
    rows = []
    for line in git(gd, "log", "--first-parent", "--format=%H %cI", "HEAD").splitlines():
        sha, date = line.split()
        when = datetime.fromisoformat(date)
        if when > until:
            continue
        if when < since:
            break
        rows.append((sha, date))
    return rows[::-1]


def _changes_on_line(gd: Path, fp: list[tuple[str, str]], pos: dict[str, int]) -> dict[str, list[int]]:
    """Per path, the first-parent positions whose commit changed it (against its first parent)."""
    out = git(gd, "log", "--first-parent", "--diff-merges=first-parent", "--raw", "--no-renames",
              "--no-abbrev", "-z", "--format=%x00%x01%H%x00", f"{fp[0][0]}..{fp[-1][0]}")  # fmt: skip
    changed: dict[str, list[int]] = defaultdict(list)
    for record in out.split("\x00\x01")[1:]:
        sha, raw = record.split("\x00", 1)
        for ch in parse_raw(raw):
            changed[ch.path].append(pos[sha])
    return {path: sorted(p) for path, p in changed.items()}


def _positions(gd: Path, fp: list[tuple[str, str]], pos: dict[str, int]) -> tuple[dict, dict]:
    """For every commit of the range: where it lands on the first-parent line (the
    first position whose commit contains it) and its branch point (the newest
    position it descends from; -1 if none in the range)."""
    parents: dict[str, list[str]] = {}
    order = []
    for line in git(
        gd, "rev-list", "--topo-order", "--reverse", "--parents", f"{fp[0][0]}..{fp[-1][0]}"
    ).split("\n"):
        if line:
            sha, *ps = line.split()
            parents[sha] = ps
            order.append(sha)
    newest: dict[str, int] = {fp[0][0]: 0}
    for sha in order:  # parents before children
        newest[sha] = pos[sha] if sha in pos else max((newest.get(p, -1) for p in parents[sha]), default=-1)
    landed: dict[str, int] = {}
    for q, (sha, _) in enumerate(fp):
        stack = [sha]
        while stack:
            x = stack.pop()
            if x in landed or x not in parents:
                continue
            landed[x] = q
            stack.extend(parents[x])
    return landed, newest


def blobs_at(gd: Path, specs: list[str]) -> list[str]:
    """Blob ids of ``<commit>:<path>`` specs, "" for a path the commit lacks."""
    if not specs:
        return []
    cmd = ["git", "--git-dir", str(gd), "cat-file", "--batch-check=%(objectname)"]
    proc = subprocess.run(cmd, input="\n".join(specs) + "\n", capture_output=True, text=True, check=True)
    return [line if " missing" not in line else "" for line in proc.stdout.splitlines()]


def valid_ranges(gd: Path, spec: RepoSpec, fp: list[tuple[str, str]]) -> list[tuple[int, int, int]]:
    """``(first, last, landed)`` per qualifying commit of the range: the positions
    of the snapshots it can be asked at, and where it lands."""
    pos = {sha: i for i, (sha, _) in enumerate(fp)}
    changed = _changes_on_line(gd, fp, pos)
    landed, newest = _positions(gd, fp, pos)
    cands: list[tuple[Candidate, int]] = []
    for commit in window_commits(gd, fp[0][0], fp[-1][0]):
        cand = qualify(commit, spec, None)
        branch = newest.get(commit.parents[0], -1) if len(commit.parents) == 1 else -1
        if isinstance(cand, Candidate) and branch >= 0 and commit.sha in landed:
            cands.append((cand, branch))
    # a side-branch commit: its gold blobs at the branch point must be its parent's
    side = [(c, b) for c, b in cands if c.commit.parents[0] != fp[b][0]]
    specs = [f"{fp[b][0]}:{path}" for c, b in side for path in c.gold_files]
    blobs = iter(blobs_at(gd, specs))
    same = {c.commit.sha: [next(blobs) for _ in c.gold_files] == list(c.old_blobs) for c, b in side}
    out = []
    for cand, branch in cands:
        if not same.get(cand.commit.sha, True):
            continue
        first = 0
        for path in cand.gold_files:
            changes = changed.get(path, [])
            i = bisect_right(changes, branch)
            first = max(first, changes[i - 1] if i else 0)
        out.append((first, branch, landed[cand.commit.sha]))
    return out


def choose_snapshots(
    spec: RepoSpec, gd: Path, fp: list[tuple[str, str]], k_max: int, window: int
) -> list[Snapshot]:
    """One snapshot per ``window`` first-parent commits of the range (2 to ``k_max``),
    each the best-serving commit of its segment (the module docstring says how);
    a window runs to the next snapshot or ``window`` commits after its own."""
    n = len(fp)
    k = min(k_max, max(2, math.ceil(n / window)))
    if n < 2 * k:
        return []
    ranges = valid_ranges(gd, spec, fp)
    bounds = [i * n // k for i in range(k + 1)]
    picks: list[tuple[int, int]] = []
    for lo, hi in pairwise(bounds):
        served = [0] * (hi - lo)
        for first, last, land in ranges:
            for p in range(max(first, lo, land - window), min(last, hi - 1) + 1):
                served[p - lo] += 1
        best = max(range(hi - lo), key=lambda i: (served[i], -i))
        picks.append((lo + best, served[best]))
    snaps = []
    for i, (p, served) in enumerate(picks):
        end = min(p + window, picks[i + 1][0] if i + 1 < k else n - 1)
        snaps.append(Snapshot(spec, fp[p][0], fp[p][1], fp[end][0], served))
    return snaps
