"""The segments of a tantivy index: which to rewrite, and putting its previous commit back.

**Rewrites.** A segment that holds a deleted document is rewritten whole
(see :meth:`repolens.store.local.lexical.LexicalIndex.commit`), at once by
an explicit refresh, when the saves pause for the watcher's, so its size is
what an edit of one of its files costs. :func:`rewrite_plan` keeps them
small for a refresh: what it rewrites is cut into pieces of about a fifth of
the index, one segment each, and the smallest segments join a rewrite
whenever the index would hold more than ``MAX_SEGMENTS``: tantivy's own
policy merges eight segments of a size (every segment under 10,000
documents is one size) into one, which would put a whole small repository
back into one segment, and estimate the token counts of those with
deletions from rounded lengths, which no later rewrite could find.

**Undo.** A batch commits the lexical index before SQLite (:mod:`.writer`),
so until SQLite has committed too, tantivy's previous commit must stay
restorable: a SQLite commit that fails (a full disk) or a crash between the
two puts it back. tantivy deletes the files of the segments a commit
dropped as soon as it has committed, so at the first change of a batch the
state files and every file its ``meta.json`` names are hard-linked into
``previous/`` (no data is copied, and tantivy never looks into a
sub-folder); restoring links them back, forgetting removes the folder.
Which commit SQLite holds is its ``lexical_opstamp`` (the opstamp in
tantivy's ``meta.json``): a writer that opens a generation after a crash
restores ``previous/`` unless SQLite recorded the commit that replaced it
(:func:`recover`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from repolens.store.base import LEXICAL_PIECES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PREVIOUS = "previous"
MIN_PIECE = 64  # documents; smaller pieces would cost more commits than they save
MAX_SEGMENTS = 7  # one fewer than tantivy merges at once
# keep_previous tries again when a merge ends while it links (rare)
_TRIES = 5
_STATE = ("meta.json", ".managed.json")
# A segment's files: <32 hex digits of its id>.<component>, deletes <id>.<opstamp>.del
# Compiled at first use: a search needs none.
_SEGMENT_FILE = r"^([0-9a-f]{32})\.(?:(\d+)\.del|[a-z.]+)$"
_FOOTER_MAGIC = 1337  # the last four bytes of every file tantivy writes for a segment


def read_meta(directory: Path) -> dict[str, Any]:
    """tantivy's ``meta.json`` ({} when it is missing or cut)."""
    try:
        meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def deleted_per_segment(meta: dict[str, Any]) -> list[tuple[int, int]]:
    """(documents, of them deleted) of each segment, in the order tantivy's
    searcher numbers them (``DocAddress.segment_ord``)."""
    out = []
    for seg in meta.get("segments", ()):
        deletes = seg.get("deletes") or {}
        out.append((int(seg.get("max_doc", 0)), int(deletes.get("num_deleted_docs", 0))))
    return out


def rewrite_plan(
    live: Sequence[tuple[int, int]], hit: set[int], *, adding: bool, layout: bool, sharing: bool = False
) -> list[list[int]]:
    """The documents to delete and add again, in pieces (a commit each).

    ``live``: (segment, cid) of every document that stays; ``hit``: the
    segments that lose one, which are rewritten whole. With ``layout`` (a
    refresh) the pieces hold about a fifth of the index, and the smallest
    other segments join until the index holds at most ``MAX_SEGMENTS``,
    counting one more for new documents when ``adding`` (unless
    ``sharing``: they go into the last piece's segment when there is one);
    else (a build) the rewrite is one piece. The smallest segments come
    first, each segment's documents together (see :func:`piece_by_piece`).
    """
    sizes = Counter(seg for seg, _ in live)
    chosen = set(hit) & set(sizes)
    piece = max(MIN_PIECE, -(-len(live) // LEXICAL_PIECES)) if layout else max(len(live), 1)

    def segments_after() -> int:
        pieces = -(-sum(sizes[seg] for seg in chosen) // piece)
        return len(sizes) - len(chosen) + pieces + (adding and not (sharing and pieces))

    if layout:
        for seg in sorted(sizes, key=lambda seg: (sizes[seg], seg)):
            if segments_after() <= MAX_SEGMENTS:
                break
            chosen.add(seg)
    docs = [cid for _, _, cid in sorted((sizes[seg], seg, cid) for seg, cid in live if seg in chosen)]
    return [docs[i : i + piece] for i in range(0, len(docs), piece)]


def piece_by_piece(live: Sequence[tuple[int, int]], pieces: Sequence[Sequence[int]]) -> bool:
    """Whether each piece of a rewrite may delete its documents' old copies
    in its own commit, so that a search between the commits finds every
    document once (deleting them all in the first commit leaves the later
    pieces out of searches for as long as their refill takes: seconds for a
    large segment). Not when the index would meanwhile hold more than
    ``MAX_SEGMENTS``, the old segments that are partly rewritten included:
    tantivy would merge them, deletions and all.

    ``live``: (segment, cid) of every committed live document.
    """
    segment_of = {cid: seg for seg, cid in live}
    left = Counter(segment_of[cid] for piece in pieces for cid in piece)
    others = len({seg for seg, _ in live}) - len(left)
    for done, piece in enumerate(pieces[:-1], start=1):
        left.subtract(segment_of[cid] for cid in piece)
        if others + done + sum(1 for n in left.values() if n > 0) > MAX_SEGMENTS:
            return False
    return True


def _referenced(meta: dict[str, Any]) -> dict[str, int | None]:
    """Segment id (hex) -> the opstamp of its deletes file, of every segment ``meta`` names."""
    out: dict[str, int | None] = {}
    for seg in meta.get("segments", ()):
        deletes = seg.get("deletes") or {}
        out[str(seg.get("segment_id", "")).replace("-", "")] = deletes.get("opstamp")
    return out


def damaged_file(directory: Path) -> str:
    """The first file of the committed segments whose contents do not match
    their checksum, said with what is wrong ("" when every one matches).

    tantivy ends each file with a footer (JSON holding a CRC-32 of the rest,
    its length, and a magic number) but checks it only when asked
    (``Index::validate_checksum``, which the Python binding lacks): a search
    that reads a damaged file may panic, fail, or answer from wrong data.
    Reading them all costs ~3 ms a MB."""
    import struct

    from repolens.store import deflate

    referenced = _referenced(read_meta(directory))
    present = set()
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if not (re.match(_SEGMENT_FILE, entry.name) and _is_referenced(entry.name, referenced)):
            continue
        present.add(entry.name[:32])
        data = Path(entry.path).read_bytes()
        length, magic = struct.unpack("<II", data[-8:]) if len(data) >= 8 else (0, 0)
        body_end = len(data) - 8 - length
        try:
            crc = json.loads(data[body_end:-8])["crc"] if magic == _FOOTER_MAGIC and body_end >= 0 else None
        except (ValueError, TypeError, KeyError):
            crc = None
        if crc is None:
            return f"{entry.name}: its footer is damaged"
        if deflate.crc32(memoryview(data)[:body_end]) != crc:
            return f"{entry.name}: its checksum does not match its contents"
    if missing := sorted(set(referenced) - present):
        return f"{missing[0]}: the segment's files are missing"
    return ""


def _is_referenced(name: str, referenced: dict[str, int | None]) -> bool:
    m = re.match(_SEGMENT_FILE, name)
    if m is None:
        return True  # not a segment's file: state, locks, ``previous/``
    if m.group(1) not in referenced:
        return False
    return m.group(2) is None or int(m.group(2)) == referenced[m.group(1)]


def keep_previous(directory: Path) -> None:
    """Link the committed state into ``previous/``, before a batch's commits
    (kept until :func:`forget_previous`)."""
    import shutil  # the write path only: a search loads this module, not shutil

    forget_previous(directory)
    staging = directory / f".{PREVIOUS}.tmp"
    for _ in range(_TRIES):
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        try:
            _link_state(directory, staging)
        except FileNotFoundError:  # a merge of the last batch's segments ended meanwhile: again
            continue
        os.replace(staging, directory / PREVIOUS)  # whole or not at all: recover() trusts what it finds
        return
    raise OSError(f"the files of the lexical index in {directory} kept changing")


def _link_state(directory: Path, into: Path) -> None:
    """Hard-link the state files, then every file of the segments the linked
    ``meta.json`` names, into ``into``."""
    for name in _STATE:
        if name == "meta.json" or (directory / name).exists():
            os.link(directory / name, into / name)
    referenced = _referenced(read_meta(into))
    for entry in os.scandir(directory):
        if re.match(_SEGMENT_FILE, entry.name) and _is_referenced(entry.name, referenced):
            os.link(entry.path, into / entry.name)
    missing = {seg for seg in referenced if not any(into.glob(f"{seg}.*"))}
    if missing:
        raise FileNotFoundError(f"segment files gone: {sorted(missing)}")


def forget_previous(directory: Path) -> None:
    import shutil  # the write path only: a search loads this module, not shutil

    shutil.rmtree(directory / PREVIOUS, ignore_errors=True)


def restore_previous(directory: Path) -> bool:
    """Put back the state kept by :func:`keep_previous` (no tantivy writer may
    be open); False when none was kept."""
    previous = directory / PREVIOUS
    if not previous.is_dir():
        return False
    for entry in os.scandir(previous):
        if entry.name not in _STATE and not (directory / entry.name).exists():
            os.link(entry.path, directory / entry.name)
    for name in _STATE:  # the state last: it names files that are all back
        with contextlib.suppress(FileNotFoundError):
            os.replace(previous / name, directory / name)
    forget_previous(directory)
    remove_unreferenced(directory)
    return True


def remove_unreferenced(directory: Path) -> None:
    """Delete segment files ``meta.json`` does not name: what a failed or
    undone commit wrote. No tantivy writer may be open (it would be writing
    such files)."""
    meta = read_meta(directory)
    if not meta:
        return
    referenced = _referenced(meta)
    for entry in os.scandir(directory):
        if entry.is_file(follow_symlinks=False) and not _is_referenced(entry.name, referenced):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)


def recover(directory: Path, recorded: str | None) -> None:
    """After a crash: keep tantivy's commit if SQLite recorded it
    (``recorded``, its ``lexical_opstamp``), else restore the previous one.
    Either way the files of a commit that did not land go: a writer killed
    while tantivy committed may have written a segment's deletions
    (``<id>.<opstamp>.del``) but not the ``meta.json`` naming them, and the
    next writer, counting opstamps from the same commit, would meet the file
    when it commits (``FileAlreadyExists``)."""
    if not (directory / PREVIOUS).is_dir():
        return
    if recorded is not None and str(read_meta(directory).get("opstamp")) == recorded:
        forget_previous(directory)
        remove_unreferenced(directory)
    else:
        restore_previous(directory)
