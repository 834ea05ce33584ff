"""Graph features measured before the engine computes them (issue 39, item 4).

Does a candidate that calls, or is called by, the search's top hits hold the
lines to change more often than its score says? For one search's candidates
(the tuned order), from the references the index stores
(:meth:`repolens.store.base.IndexReader.refs_of_files`), each candidate gets:

``graph_calls_top``            top hits (other chunks) whose name a use in the candidate names
``graph_calls_top_resolved``   top hits a use in the candidate resolves to (its key)
``graph_called_by_top``        top hits that name the candidate's own name in a use
``graph_called_by_top_resolved`` top hits with a use that resolves to the candidate
``graph_file_linked``          top hits of other files linked to the candidate's file
                               either way by a resolved use (its imports included)

each as ``log1p(count)``. ``bench.train_ranker extract`` stores them as
EXTRA columns, and ``cv --with`` / ``compare +NAME`` say whether a model
gains from them; the engine computes them only if it does.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence

from repolens.chunking import Chunk
from repolens.chunking.refs import definition_keys, same_file_key

GRAPH_FEATURES = (
    "graph_calls_top",
    "graph_calls_top_resolved",
    "graph_called_by_top",
    "graph_called_by_top_resolved",
    "graph_file_linked",
)
TOP = 5  # the hits a candidate is linked to: the tuned order's first
_NOT_USES = frozenset({"field"})  # a class's declared field is no use


def _keys(c: Chunk) -> frozenset[str]:
    """The keys a use in another file, or this one, may resolve to for ``c``'s definition."""
    if not c.qualname:
        return frozenset()
    return definition_keys(c.path, c.qualname, c.language) | {same_file_key(c.qualname)}


def _resolves_to(target: str, use_path: str, c: Chunk, keys: frozenset[str]) -> bool:
    if not target or target not in keys:
        return False
    return use_path == c.path if target.startswith("=") else True


def graph_columns(reader, chunks: Mapping[int, Chunk], order: Sequence[int]) -> dict[int, list[float]]:
    """:data:`GRAPH_FEATURES` of each candidate of ``chunks``; ``order`` is
    the tuned order of their cids (its first :data:`TOP` are the top hits)."""
    top = [cid for cid in order[:TOP] if cid in chunks]
    refs = reader.refs_of_files(sorted({c.path for c in chunks.values()}))
    lines = {path: [r.line for r in rows] for path, rows in refs.items()}
    keys = {cid: _keys(chunks[cid]) for cid in chunks}

    def uses(c: Chunk) -> list:
        rows = refs.get(c.path, [])
        at = lines.get(c.path, [])
        lo, hi = bisect.bisect_left(at, c.start_line), bisect.bisect_right(at, c.end_line)
        return [r for r in rows[lo:hi] if r.kind not in _NOT_USES]

    used = {cid: uses(chunks[cid]) for cid in chunks}
    # the file of each candidate: every use in it, and the keys of its candidates' definitions
    file_uses = {path: [r for r in rows if r.kind not in _NOT_USES] for path, rows in refs.items()}
    file_keys: dict[str, set[str]] = {}
    for cid, c in chunks.items():
        file_keys.setdefault(c.path, set()).update(k for k in keys[cid] if not k.startswith("="))
    links: dict[tuple[str, int], bool] = {}

    def file_linked(path: str, t: int) -> bool:
        if (path, t) not in links:
            tc = chunks[t]
            links[path, t] = any(
                _resolves_to(r.target, path, tc, keys[t]) for r in file_uses.get(path, ())
            ) or any(r.target in file_keys.get(path, ()) for r in file_uses.get(tc.path, ()))
        return links[path, t]

    out: dict[int, list[float]] = {}
    for cid, c in chunks.items():
        calls = calls_res = called = called_res = linked = 0
        names = {r.name for r in used[cid]}
        for t in top:
            if t == cid:
                continue
            tc = chunks[t]
            if tc.name and tc.name in names:
                calls += 1
            if any(_resolves_to(r.target, c.path, tc, keys[t]) for r in used[cid]):
                calls_res += 1
            if c.name and any(r.name == c.name for r in used[t]):
                called += 1
            if any(_resolves_to(r.target, tc.path, c, keys[cid]) for r in used[t]):
                called_res += 1
            if tc.path != c.path and file_linked(c.path, t):
                linked += 1
        out[cid] = [math.log1p(x) for x in (calls, calls_res, called, called_res, linked)]
    return out
