"""compare_branches: which files differ between two branches of a repository.

Each file gets one status, decided by the content hashes the two indexes
recorded (never by timestamps):

* ``same``: in both, identical;
* ``modified``: in both, different;
* ``only_head``: new in head (absent from base);
* ``only_base``: removed in head;
* ``single_branch``: the repository has one branch configured, so there is
  nothing to compare it with (listed with that status, for the paths asked).

Files are the ``paths`` asked (a folder stands for the indexed files under
it, in either branch), or the files a ``query`` finds in either branch,
with their hits (lines and a short snippet). The reply is bounded like
every other: files that do not fit are counted in the shared trailer.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from repolens.branches.names import branches_of, parse_ref, unknown
from repolens.branches.registry import Registry
from repolens.budget import counted, did_not_fit
from repolens.errors import NotFoundError, UsageError
from repolens.store.base import IndexReader, Store

STATUSES = ("same", "modified", "only_head", "only_base", "single_branch")
# A listing shows what differs before what does not (in the order asked, or
# found, within each): the files that are the same are what a budget cuts.
_UNINFORMATIVE = frozenset({"same"})
# Folders in ``paths`` stand for at most this many files (the rest are
# counted, not compared): a bound on one call's work, far above a real tree.
MAX_FILES = 100_000
SNIPPET_CHARS = 100
# Hits searched per branch when a comparison is given a query.
COMPARE_HITS = 10
# A packet's code lines start with their number ("12: ").
_LINE_NUMBER = re.compile(r"^\d+: ")
DEFAULT_BASES = ("main", "master")


@dataclass(frozen=True, slots=True)
class BranchHit:
    """Where a query matched a file in one branch (``base`` or ``head``)."""

    side: str
    start_line: int
    end_line: int
    snippet: str

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.side,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "snippet": self.snippet,
        }


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    status: str
    hits: tuple[BranchHit, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "status": self.status}
        if self.hits:
            out["hits"] = [h.to_json() for h in self.hits]
        return out


@dataclass
class Comparison:
    """The files compared, in order (asked, or best match first)."""

    repo: str
    base: str
    head: str | None  # None: one branch configured
    files: list[FileStatus]
    query: str = ""
    not_found: list[str] = field(default_factory=list)  # paths asked that neither branch holds
    more: int = 0  # files of a folder beyond MAX_FILES
    max_chars: int = 4000
    notes: list[str] = field(default_factory=list)  # a side checked out on another branch than its name

    def counts(self) -> dict[str, int]:
        seen = Counter(f.status for f in self.files)
        return {s: seen[s] for s in STATUSES if seen[s]}

    def header(self) -> str:
        tally = ", ".join(f"{n} {s}" for s, n in self.counts().items())
        files = f"{counted(len(self.files) + self.more, 'file')}" + (f": {tally}" if tally else "")
        if self.head is None:
            return f"{self.repo}: one branch configured ({self.base}), nothing to compare with; {files}"
        what = f", files matching {self.query!r}" if self.query else ""
        return f"{self.repo}: base {self.base} vs head {self.head}{what}; {files}"

    def render(self) -> str:
        """At most ``max_chars``: the header, one line per file (its hits
        indented under it), then what did not fit. The first file is always
        shown, with its first hit's line cut to fit when it must: a reply
        never holds only counts."""
        lines = [self.header(), *(f"note: {n}" for n in self.notes)]
        if self.not_found:
            lines.append(f"in neither branch: {', '.join(self.not_found)}")
        used = sum(len(line) + 1 for line in lines)
        room = 80  # kept for the trailer
        left = [f.path for f in self.files]
        for n, entry in enumerate(self.files):
            block = [f"{entry.status:<13} {entry.path}"] + [
                f"  {h.side} {h.start_line}-{h.end_line}: {h.snippet}" for h in entry.hits
            ]
            size = sum(len(line) + 1 for line in block)
            if used + size > self.max_chars - room:
                if n > 0:
                    break
                block = _cut(block[:2], self.max_chars - used - room)
                size = sum(len(line) + 1 for line in block)
            lines.extend(block)
            used += size
            left = [f.path for f in self.files[n + 1 :]]
        extra = [*left, *([f"{self.more} more under the folders asked"] if self.more else [])]
        if extra:
            trailer = did_not_fit("file", left, self.max_chars - used - 1) if left else ""
            lines.append(trailer or f"... {self.more} more files under the folders asked")
        return "\n".join(lines)[: self.max_chars]

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "base": self.base,
            "head": self.head,
            "query": self.query,
            "counts": self.counts(),
            "files": [f.to_json() for f in self.files],
            "not_found": self.not_found,
            "more": self.more,
            "notes": self.notes,
        }


def _cut(block: list[str], room: int) -> list[str]:
    """A file's line and its first hit's in ``room`` chars (and a little
    more, when the trailer's room must give way): the hit's snippet cut
    short, never the file's name."""
    if len(block) < 2 or sum(len(line) + 1 for line in block) <= room:
        return block
    keep = max(room - len(block[0]) - 1, len(block[1].partition(": ")[0]) + 20)
    return [block[0], block[1][: keep - 4] + "..."] if keep < len(block[1]) else block


def informative_first(files: Sequence[FileStatus]) -> list[FileStatus]:
    """``files`` with the ones that differ first, each group in its order."""
    return sorted(files, key=lambda f: f.status in _UNINFORMATIVE)


def compare_stores(
    name: str,
    keys: Sequence[str],
    stores: Sequence[Store],
    paths: Sequence[str],
    query: str,
    found: Sequence[tuple[str, Sequence[Mapping[str, Any]]]] | None,
    max_chars: int,
) -> Comparison:
    """``name``'s branch ``keys[0]`` (base) against ``keys[1]`` (head, when
    given), their indexes in ``stores`` (published: the caller checked):
    on ``paths`` (checked subpaths, "." for the whole tree), or, with
    ``found``, on the files the query's hits name (per side, ``base`` or
    ``head``, as a JSON search reply lists them)."""
    from repolens.store.handles import readers

    base_reader = readers.get(stores[0])
    head_reader = readers.get(stores[1]) if len(stores) > 1 else None
    branch = [k.partition("@")[2] or k for k in keys]
    result = Comparison(name, branch[0], branch[1] if len(keys) > 1 else None, [], query, max_chars=max_chars)
    for key, wanted, reader in zip(keys, branch, (base_reader, head_reader), strict=False):
        # the index records the branch it was made from: another than the name says is compared as it is
        made_from = reader.meta().get("branch", "") if reader is not None else ""
        if "@" in key and made_from and made_from != wanted:
            result.notes.append(f"{key} is indexed from the branch {made_from}, not {wanted}")
    if found is not None:
        by_file = merge_hits(found)
        listed = statuses(base_reader, head_reader, list(by_file))
        result.files = [replace(f, hits=tuple(by_file[f.path])) for f in listed]
    else:
        result.files, result.not_found, result.more = compare_paths(base_reader, head_reader, paths)
    result.files = informative_first(result.files)
    return result


def pick_branches(
    repo: str, roots: Mapping[str, Path], registry: Registry, base: str | None, head: str | None
) -> tuple[str, str, str | None]:
    """(repository, base key, head key or None for a single branch): the
    keys of ``roots`` compared. ``repo`` may name a branch (``app@main``),
    which is then the base. Defaults: the registry's base and head, else
    ``main`` (or ``master``) and the one other branch."""
    ref = parse_ref(repo)
    grouped = branches_of(roots)
    if ref is None or ref.name not in grouped:
        raise unknown(repo, _repo_names(roots, registry))
    branches = grouped[ref.name]
    entry = registry.get(ref.name)
    base = base or ref.branch
    if len(branches) == 1:
        only = next(iter(branches))
        if (base and base != only) or (head and head != only):
            asked = base if base and base != only else head
            served = f"only {only}" if only else "one checkout, named without a branch"
            raise NotFoundError(
                f"repository {ref.name} has no branch {asked!r} configured ({served}): name each branch "
                f'in the server config\'s [roots] ("{ref.name}@BRANCH" = FOLDER) to compare them'
            )
        return ref.name, branches[only], None
    base = base or (entry.base if entry else "") or next((b for b in DEFAULT_BASES if b in branches), "")
    if not base:
        raise UsageError(f"pass base: {ref.name} has no main branch; its branches are {', '.join(branches)}")
    if base not in branches:
        raise NotFoundError(
            f"repository {ref.name} has no branch {base!r}: its branches are {', '.join(branches)}"
        )
    if not head:
        head = entry.head if entry and entry.head else ""
    if not head:
        others = [b for b in branches if b != base]
        if len(others) > 1:
            raise UsageError(
                f"pass head: {ref.name} has several branches besides {base}: {', '.join(others)}"
            )
        head = others[0]
    if head not in branches:
        raise NotFoundError(
            f"repository {ref.name} has no branch {head!r}: its branches are {', '.join(branches)}"
        )
    if head == base:
        raise UsageError(f"base and head are both {base}: name two different branches")
    return ref.name, branches[base], branches[head]


def _repo_names(roots: Mapping[str, Path], registry: Registry) -> list[str]:
    return list(dict.fromkeys([*branches_of(roots), *registry.entries]))


def compare_paths(
    base: IndexReader, head: IndexReader | None, paths: Sequence[str]
) -> tuple[list[FileStatus], list[str], int]:
    """The status of each file ``paths`` names (a folder: the files under it
    in either branch, at most ``MAX_FILES``): (statuses, paths in neither
    branch, files beyond the cap)."""
    wanted, not_found, more = _expand(base, head, paths)
    return statuses(base, head, wanted), not_found, more


def statuses(base: IndexReader, head: IndexReader | None, files: Sequence[str]) -> list[FileStatus]:
    """Each of ``files`` with its status, by the recorded content hashes."""
    ours = base.files(files)
    if head is None:
        return [FileStatus(p, "single_branch") for p in files if p in ours]
    theirs = head.files(files)
    out = []
    for path in files:
        a, b = ours.get(path), theirs.get(path)
        if a is None and b is None:
            continue
        status = (
            "only_head"
            if a is None
            else "only_base"
            if b is None
            else "same"
            if a.hash == b.hash
            else "modified"
        )
        out.append(FileStatus(path, status))
    return out


def _expand(
    base: IndexReader, head: IndexReader | None, paths: Sequence[str]
) -> tuple[list[str], list[str], int]:
    readers = [r for r in (base, head) if r is not None]
    files: dict[str, None] = {}
    not_found: list[str] = []
    every: list[list[str]] | None = None
    for raw in paths:
        path = raw.strip().strip("/") if raw.strip() not in ("", ".", "/") else ""
        if path and any(r.files([path]) for r in readers):
            files[path] = None
            continue
        if every is None:
            every = [r.paths() for r in readers]
        prefix = f"{path}/" if path else ""
        under = sorted({p for listed in every for p in listed if p.startswith(prefix)})
        if not under:
            not_found.append(raw)
        files.update(dict.fromkeys(under))
    wanted = list(files)
    return wanted[:MAX_FILES], not_found, max(0, len(wanted) - MAX_FILES)


def merge_hits(found: Iterable[tuple[str, Sequence[Mapping[str, Any]]]]) -> dict[str, list[BranchHit]]:
    """Query hits of each side (``base``/``head``, their JSON hits) by file,
    files in order of their best hit (head's and base's interleaved by rank)."""
    lists = [(side, list(hits)) for side, hits in found]
    by_file: dict[str, list[BranchHit]] = {}
    for rank in range(max((len(h) for _, h in lists), default=0)):
        for side, hits in lists:
            if rank < len(hits):
                hit = hits[rank]
                by_file.setdefault(hit["path"], []).append(
                    BranchHit(side, int(hit["start_line"]), int(hit["end_line"]), snippet(hit))
                )
    return by_file


def snippet(hit: Mapping[str, Any]) -> str:
    """The first line of a (JSON) hit's code that says something, shortened:
    not its header (``path:lines ...``) nor an omission marker."""
    header = f"{hit['path']}:"
    for raw in str(hit.get("text", "")).splitlines():
        line = _LINE_NUMBER.sub("", raw.strip(), count=1).strip()
        if line and not line.startswith(("...", header)):
            return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 3] + "..."
    return ""
