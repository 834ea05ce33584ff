"""Never cite line numbers that no longer hold without saying so.

Before a reply is rendered, the files its top hits come from are checked
against the index (a stat; a hash when size or mtime moved). For a file
that changed since indexing, the file is re-chunked on the fly:

* a chunk whose text is unchanged (same content id) is cited at its
  current lines, silently: its lines are true again;
* a chunk whose definition still exists (same kind and qualified name) is
  cited with its current text and lines, marked
  ``(stale: file changed since indexing)``; when several chunks carry that
  name (the parts of a split definition), the one sharing the most lines
  with the indexed chunk, then the nearest;
* a chunk of a definition that is no longer in the file (renamed, deleted)
  is shown as indexed, marked ``(stale: definition no longer in the file;
  lines as indexed)``: never another definition's code in its place;
* otherwise (a chunk that is no definition) the indexed chunk is shown,
  marked stale: its lines may not hold, and the mark says so. A deleted
  file is marked likewise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from repolens.chunking import Chunk
from repolens.chunking.labels import split_names
from repolens.fronts import say
from repolens.search.hits import Hit, SearchOutcome
from repolens.search.staleness import changed_files
from repolens.store.base import IndexReader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.chunking.chunker import ChunkedFile, ChunkFn
    from repolens.settings import Settings

# Reading and re-chunking a file (``repolens.discover.load``, the language
# table) is imported only when a cited file's size or mtime moved: a search
# of an up-to-date index stats its files and needs neither.

STALE = "stale: file changed since indexing"
GONE = "stale: file deleted since indexing"
LOST = "stale: definition no longer in the file; lines as indexed"


def freshen_outcome(root: Path, reader: IndexReader, outcome: SearchOutcome, settings: Settings) -> None:
    """Check the hits a reply may cite (the first ``3 * top_k``) against the
    files on disk, in place; a note counts the files that changed."""
    hits, stale_files = freshen(root, reader, outcome.hits, _chunker(settings), first=settings.top_k * 3)
    outcome.hits = hits
    if stale_files:
        outcome.notes.append(
            f"{stale_files} cited file{'s' if stale_files > 1 else ''} changed since indexing; "
            f"{say('index')} refreshes the index"
        )


def _chunker(settings: Settings) -> ChunkFn:
    """``chunk_file`` bound to the chunking settings: (path, text, language)
    -> ChunkedFile. The grammars load when the first file is chunked, so a
    search that finds every cited file unchanged never loads a parser."""
    mode, merge = settings.chunker, settings.chunk_merge_lines

    def chunk(path: str, text: str, language: str) -> ChunkedFile:
        from repolens.chunking.dispatch import chunk_file

        return chunk_file(path, text, language, mode=mode, merge_lines=merge)

    return chunk


def _current_chunks(root: Path, path: str, chunk: ChunkFn) -> list[Chunk] | str:
    """The file's chunks now, or why it has none: deleted (:data:`GONE`),
    or no longer indexable (binary, empty, too large, unreadable)."""
    from repolens.chunking.languages import language_of
    from repolens.discover.load import LoadedText, load_text
    from repolens.discover.skips import SkipReason

    loaded = load_text(root / path)
    if not isinstance(loaded, LoadedText):
        why = loaded.value.replace("_", " ")
        return (
            GONE
            if loaded is SkipReason.MISSING
            else f"stale: file {why} now, not indexable; lines as indexed"
        )
    return chunk(path, loaded.text, language_of(path, loaded.text)).chunks


def freshen(
    root: Path, reader: IndexReader, hits: Sequence[Hit], chunk: ChunkFn, *, first: int
) -> tuple[list[Hit], int]:
    """The hits with the first ``first`` checked against the files on disk;
    returns (hits, how many files had changed)."""
    head = list(hits[:first])
    paths = sorted({h.chunk.path for h in head})
    if not paths:
        return list(hits), 0
    current: dict[str, list[Chunk] | str] = {}
    for path in changed_files(root, reader, paths):
        current[path] = _current_chunks(root, path, chunk)  # why, for a file gone or unindexable
    if not current:
        return list(hits), 0
    out = []
    for h in head:
        if h.chunk.path not in current:
            out.append(h)
            continue
        out.append(_relocated(h, current[h.chunk.path]))
    return out + list(hits[first:]), len(current)


def _relocated(hit: Hit, now: list[Chunk] | str) -> Hit:
    if isinstance(now, str):
        return replace(hit, stale=now)
    by_id = {c.id: c for c in now}
    same = by_id.get(hit.chunk.id)
    if same is not None:
        return replace(hit, chunk=replace(same))
    old = hit.chunk
    if not old.qualname:
        return replace(hit, stale=STALE)
    same_name = [c for c in now if c.qualname == old.qualname and c.kind == old.kind]
    if not same_name:
        # small definitions packed into one chunk (``a, b (+2 more)``) may be packed
        # otherwise now: the chunks holding any of them hold them still
        names = set(split_names(old.qualname)[0])
        if len(names) > 1:
            same_name = [c for c in now if names.intersection(split_names(c.qualname)[0])]
    if not same_name:
        return replace(hit, stale=LOST)
    return replace(hit, chunk=_closest(old, same_name), stale=STALE)


def _closest(old: Chunk, candidates: list[Chunk]) -> Chunk:
    """The candidate sharing the most non-blank lines with ``old``, then the nearest to it."""
    before = {line.strip() for line in old.text.split("\n")} - {""}

    def key(c: Chunk) -> tuple[int, int]:
        shared = len(before & {line.strip() for line in c.text.split("\n")})
        return (-shared, abs(c.start_line - old.start_line))

    return min(candidates, key=key)
