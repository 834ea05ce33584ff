"""The dense leg's write side: filling vectors after the lexical index.

Embedding never blocks the first answer. The lexical index is published
first; vectors are then computed in batches and committed to the published
generation as they finish (through :class:`repolens.store.base.IndexWriter`),
so an interrupted run resumes where it stopped and searches meanwhile use
whatever share is done (and say so).

Vectors are float16 rows keyed by chunk. The index records the embedder's
identity and the embedding style; vectors of another model are never mixed
in, and searching with another model is refused with the fix. A rebuild
copies the vectors of unchanged chunks from the previous generation
(matched by content-derived chunk id), and an optional cache folder shares
them across indexes (branches, worktrees: :mod:`repolens.store.embed_cache`).
Searching them is the store's (exact, or a graph for big indexes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from repolens.errors import EmbedderError, IndexVersionError
from repolens.fronts import say
from repolens.models.base import Embedder
from repolens.models.document import embedding_text
from repolens.store.base import IndexWriter
from repolens.store.embed_cache import EmbedCache

if TYPE_CHECKING:
    from repolens.index.reuse import Donors
    from repolens.settings import Settings
    from repolens.store.base import Store

BATCH = 64
ProgressFn = Callable[[int, int], None]


@dataclass
class VectorReport:
    done: int = 0
    total: int = 0
    embedded: int = 0  # computed by the model in this run
    reused: int = 0  # copied from a previous generation or the cache
    seconds: float = 0.0
    interrupted: bool = False
    reason: str = ""  # why every vector was dropped first, if it was
    ann: str = ""  # what was done to the dense graph (IndexWriter.sync_dense_index), if anything

    def summary(self) -> str:
        state = "interrupted, resumes on the next run" if self.interrupted else "complete"
        pct = 100.0 * self.done / max(self.total, 1)
        line = (
            f"vectors: {self.done}/{self.total} chunks ({pct:.0f}%, {state}); "
            f"{self.embedded} embedded, {self.reused} reused in {self.seconds:.1f}s"
        )
        lines = [line] + [f"vectors: {extra}" for extra in (self.reason, self.ann) if extra]
        return "\n".join(lines)


def coverage(writer: IndexWriter) -> tuple[int, int]:
    """(chunks with a vector, chunks)."""
    return writer.vector_count(), writer.counts()["chunks"]


def bind_embedder(writer: IndexWriter, embedder: Embedder, style: str) -> None:
    """Record the model and style, or refuse when the index holds another's."""
    meta = writer.meta()
    identity = meta.get("embed_identity")
    other = identity and (identity != embedder.identity or meta.get("embed_style") != style)
    if other and writer.vector_count():
        raise EmbedderError(
            f"the index holds vectors of {identity} ({meta.get('embed_style')}) but the configured "
            f"model is {embedder.identity} ({style}): {say('run rebuild')}, or restore "
            "the embed settings the index was built with"
        )
    writer.write_meta({"embed_identity": embedder.identity, "embed_style": style, "embed_dim": embedder.dim})


def drop_if_other_model(writer: IndexWriter, embedder: Embedder, style: str) -> str:
    """Delete every vector when the index holds another model's or style's;
    return the one-line reason ("" when nothing was dropped)."""
    meta = writer.meta()
    identity = meta.get("embed_identity")
    if not identity or (identity == embedder.identity and meta.get("embed_style") == style):
        return ""
    writer.begin()
    writer.drop_vectors()
    writer.commit()
    return (
        f"embedding settings changed ({identity} -> {embedder.identity}, {style}): re-embedding every chunk"
    )


def fill(
    writer: IndexWriter,
    embedder: Embedder,
    *,
    style: str,
    cache_dir: Path | None = None,
    batch: int = BATCH,
    progress: ProgressFn | None = None,
    should_stop: Callable[[], bool] | None = None,
    max_batches: int | None = None,
    donor: Callable[[list[str]], dict[str, bytes]] | None = None,
) -> VectorReport:
    """Embed every chunk that has no vector yet, committing each batch.

    A chunk's vector is taken, before the model is asked, from ``donor``
    (chunk ids -> vectors of sibling branches' indexes, same model and
    style), then from the cache.

    ``should_stop`` is polled between batches (Ctrl-C, server shutdown); the
    work done so far is kept either way.
    """
    started = time.monotonic()
    bind_embedder(writer, embedder, style)
    report = VectorReport()
    report.done, report.total = coverage(writer)
    cache = EmbedCache(cache_dir, embedder.identity, style) if cache_dir else None
    batches = 0
    try:
        while max_batches is None or batches < max_batches:
            batches += 1
            if should_stop is not None and should_stop():
                report.interrupted = True
                break
            cids = writer.chunks_missing_vectors(batch)
            if not cids:
                break
            stored = writer.chunks(cids)
            cids = [c for c in cids if c in stored]
            texts = [embedding_text(stored[c].chunk, style) for c in cids]
            blobs: dict[int, bytes] = {}
            if donor is not None:
                given = donor([stored[c].chunk.id for c in cids])
                blobs = {c: given[stored[c].chunk.id] for c in cids if stored[c].chunk.id in given}
            if cache is not None:
                keys = [cache.key(t) for t in texts]
                hits = cache.get(keys)
                blobs.update(
                    {c: hits[k] for c, k in zip(cids, keys, strict=True) if k in hits and c not in blobs}
                )
            report.reused += len(blobs)
            todo = [i for i, c in enumerate(cids) if c not in blobs]
            if todo:
                vecs = embedder.embed_documents([texts[i] for i in todo]).astype(np.float16)
                for i, row in zip(todo, vecs, strict=True):
                    blobs[cids[i]] = row.tobytes()
                report.embedded += len(todo)
                if cache is not None:
                    cache.put([(keys[i], blobs[cids[i]]) for i in todo])
            writer.begin()
            writer.put_vectors(blobs.items())
            writer.commit()
            report.done += len(blobs)
            if progress is not None:
                progress(report.done, report.total)
    finally:
        if cache is not None:
            cache.close()
    report.seconds = time.monotonic() - started
    return report


# -- a generation's vectors, for the indexer (repolens.index.build) ------------------


def reuse_vectors(store: Store, building: str, previous: str, embedder: Embedder, settings: Settings) -> int:
    try:
        writer = store.open_writer(building)
    except IndexVersionError:
        return 0
    try:
        bind_embedder(writer, embedder, settings.embed_style)
        return writer.copy_vectors(previous, embedder.identity, settings.embed_style)
    finally:
        writer.close()


def embed_generation(
    store: Store,
    gen: str,
    embedder: Embedder,
    settings: Settings,
    progress: ProgressFn | None,
    donors: Donors | None = None,
) -> VectorReport:
    writer = store.open_writer(gen)
    cache = Path(settings.embed_cache).expanduser() if settings.embed_cache else None
    try:
        dropped = drop_if_other_model(writer, embedder, settings.embed_style)
        report = fill(
            writer,
            embedder,
            style=settings.embed_style,
            cache_dir=cache,
            progress=progress,
            donor=donors.vectors if donors is not None else None,
        )
        report.reason = dropped
        if not report.interrupted:
            report.ann = writer.sync_dense_index(settings.ann_min_vectors)
        return report
    except KeyboardInterrupt:  # batches done so far are committed: the next run resumes
        done, total = coverage(writer)
        return VectorReport(done=done, total=total, interrupted=True)
    finally:
        writer.close()
