"""The lexical half of an index: BM25 over chunks with tantivy.

Why tantivy and not SQLite FTS5: measured on the Django source (14k chunks,
the same tokens in both; ``bench.probes.lexical_backends``), tantivy answered
long questions in 0.5 ms p50 against 22 ms for FTS5, built faster and was
40% smaller, and it takes a weight per query term (FTS5's ``bm25()`` does
not), which query understanding needs. The price is a second store beside
SQLite, committed with it batch by batch (:mod:`.writer`), and statistics
that count deleted documents until their segment is rewritten (see
:meth:`LexicalIndex.commit`).

Documents come pre-tokenized (:mod:`repolens.store.document`) and are
indexed with a whitespace analyzer, so indexing and querying split text the
same way. Fields are scored separately (path, symbol name, signature/doc,
body) and combined with per-field weights at query time.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import tantivy

from repolens.chunking import Chunk
from repolens.store.base import LexFilters, LexicalFields
from repolens.store.document import LEXICAL_VERSION, TEXT_FIELDS, document_fields
from repolens.store.local.failures import damaged, failure, lexical_damage
from repolens.store.local.segments import (
    MAX_SEGMENTS,
    MIN_PIECE,
    deleted_per_segment,
    forget_previous,
    keep_previous,
    piece_by_piece,
    read_meta,
    remove_unreferenced,
    restore_previous,
    rewrite_plan,
)

__all__ = ["LEXICAL_VERSION", "LexicalIndex", "Stopped"]

_ANALYZER = "ws"
# tantivy's writer has one indexing thread and starts with the first
# document, so it indexes while the files are still being prepared (a writer
# started at the commit left all of it to the end). One thread costs a
# flask-sized index ~20-30 ms less CPU than two, and was no slower on
# corpus-1m, where worker processes keep both cores busy anyway
# (docs/benchmarks.md, issue 15: small indexes, fifth pass).
_HEAP_BYTES = 64_000_000
# A refresh holds at most this many new documents apart (see
# LexicalIndex.commit); more (a checkout of another branch) go straight into
# the segment the commit rewrites, which ranks the same.
_HELD_MAX = 20_000

# A rewrite asks the database for this many documents' fields at a time
# (~50 ms of tokenizing), and a compaction looks whether to stop between.
_REFILL_SLICE = 256

# The fields of documents by cid, from the database (LexicalIndex.commit).
Refill = Callable[[Sequence[int]], Iterable[tuple[int, LexicalFields]]]


class Stopped(Exception):
    """A compaction was told to stop (:meth:`LexicalIndex.compact`)."""


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("cid", stored=False, indexed=True, fast=True)
    for name in TEXT_FIELDS:
        sb.add_text_field(name, tokenizer_name=_ANALYZER, index_option="freq")
    for name in ("lang", "kind", "dirs"):
        sb.add_text_field(name, tokenizer_name="raw", index_option="basic")
    return sb.build()


def _register(index: tantivy.Index) -> None:
    index.register_tokenizer(_ANALYZER, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())


class LexicalIndex:
    """A tantivy index in ``directory``; create it with ``create=True``.

    A folder this process cannot write is opened read-only (see
    :func:`_open_read_only`); writing to it then fails.
    """

    def __init__(self, directory: Path, *, create: bool = False) -> None:
        self.directory = directory
        self.schema = _schema()
        self.read_only = not create and not os.access(directory, os.W_OK)
        self._stamp = _meta_stamp(directory)
        try:
            if create:
                directory.mkdir(parents=True, exist_ok=True)
                self.index = tantivy.Index(self.schema, path=str(directory), reuse=True)
            else:
                if not tantivy.Index.exists(str(directory)):
                    raise damaged(directory.parent, f"{directory.name}: its files are missing")
                opener = _open_read_only if self.read_only else _open
                self.index = opener(directory)
        except (ValueError, OSError) as exc:
            raise failure(exc, directory.parent) or lexical_damage(directory.parent, exc) from exc
        if not create and self.index.schema != self.schema:  # a meta.json damaged into other JSON
            raise damaged(directory.parent, f"{directory.name}/meta.json: its schema is not the index's")
        _register(self.index)
        self._writer: tantivy.IndexWriter | None = None
        self._last_query: tuple[object, tantivy.Query | None] = (None, None)
        self._dirty = False  # added or deleted since the last commit
        self._deleted: set[int] = set()  # since the last commit
        # a refresh's new documents, held for its last commit (see commit)
        self._held: dict[int, LexicalFields] | None = None if create else {}

    # -- writing ---------------------------------------------------------
    def _w(self) -> tantivy.IndexWriter:
        """The writer, started on first use (see ``_HEAP_BYTES``)."""
        if self._writer is None:
            self._writer = self.index.writer(heap_size=_HEAP_BYTES, num_threads=1)
        return self._writer

    def add(self, items: Iterable[tuple[int, Chunk]]) -> int:
        return self.add_fields((cid, document_fields(chunk)) for cid, chunk in items)

    def add_fields(self, items: Iterable[tuple[int, LexicalFields]]) -> int:
        """Add documents whose fields were made by :func:`document_fields`
        (possibly in another process). A refresh holds them until its commit
        (see :meth:`commit`); a build indexes them at once."""
        n = 0
        for cid, fields in items:
            self._changing()
            if self._held is not None and len(self._held) < _HELD_MAX:
                self._held[cid] = fields
            else:
                self._w().add_document(tantivy.Document(cid=cid, **fields))
            n += 1
        return n

    def delete(self, cids: Iterable[int]) -> None:
        w = self._w()
        for cid in cids:
            self._changing()
            self._deleted.add(cid)
            if self._held is not None:
                self._held.pop(cid, None)
            w.delete_documents_by_term("cid", cid)

    def _changing(self) -> None:
        """Before the first change since the last commit, keep the committed
        state (until :meth:`forget_previous`), so that :meth:`abort` can put
        it back whatever tantivy wrote meanwhile (:mod:`.segments`)."""
        if not self._dirty:
            keep_previous(self.directory)
            self._dirty = True

    def commit(self, refill: Refill, *, compact: bool = True) -> int | None:
        """Commit what was added and deleted since the last commit; the
        opstamp of the last commit (None when there was nothing to commit).

        Deleted documents must not count: tantivy's BM25 statistics (the
        number of documents, of documents holding a term, of tokens per
        field) still count a deleted document until its segment is merged,
        and a merge estimates the token counts of a segment with deletions
        from lengths rounded to one byte. A refreshed index would then rank
        unlike a fresh build of the same files (up to 56% apart, near-ties
        swapped). So with ``compact`` every segment holding a deleted
        document is rewritten whole: its other documents are deleted too
        and added again (``refill`` gives their fields from the database),
        and tantivy drops a segment whose documents are all deleted. The
        rewrite is cut in pieces (:func:`~.segments.rewrite_plan`), a commit
        each, which deletes its own documents' old copies when it can
        (:func:`~.segments.piece_by_piece`), so a search between them finds
        every document once; a refresh's own new documents follow in a
        commit of their own: editing the same files again rewrites their
        small segment, and a file elsewhere rewrites its piece, not the
        whole repository (new documents share the last commit when its
        piece is small).

        Without ``compact`` (the watcher, between saves: a rewrite costs
        ~200 µs a document, a fifth of corpus-1m 1.4 s) deletions stay
        tantivy's until :meth:`compact`, and one commit holds the new
        documents. Either way no merge can take a segment with deletions,
        whose estimated token counts no later rewrite would find: tantivy
        merges only eight segments of a size, and a refresh keeps at most
        ``MAX_SEGMENTS`` by joining the smallest (those of earlier saves).
        """
        if not self._dirty:
            return None
        held = list((self._held or {}).items())
        live, pieces = self._rewrite_plan(adding=bool(held), compact=compact)
        # New documents share a small last piece (a segment of new documents
        # rewritten), saving a commit (~20-50 ms on a slow disk).
        apart = compact and bool(held) and bool(pieces) and len(pieces[-1]) >= MIN_PIECE
        return self._rewrite(live, pieces, refill, held, apart=apart)

    def only_added(self) -> bool:
        """Whether every change since the last commit added a document (no
        deletion, no refresh holding its documents): what may wait for a
        later commit (:meth:`repolens.store.local.writer.LocalWriter.commit`)."""
        return self._dirty and not self._deleted and self._held is None

    def committed_cids(self) -> set[int]:
        """The cid of every committed live document."""
        return {cid for _, cid in self._live()}

    def compact(self, refill: Refill, should_stop: Callable[[], bool]) -> tuple[int, int] | None:
        """Rewrite the smallest segment holding deleted documents (see
        :meth:`commit`), joining the smallest others so that the next save
        finds a free segment slot: (the opstamp of the last commit, how many
        documents were rewritten), None when no segment holds a deleted
        document. Raises :class:`Stopped`, the rewrite left uncommitted, as
        soon as ``should_stop()`` (asked every few hundred documents) says
        so: the caller aborts the batch."""
        counts = deleted_per_segment(read_meta(self.directory))
        if not any(deleted for _, deleted in counts):
            return None
        self._changing()
        live = self._live()
        sizes = Counter(seg for seg, _ in live)
        hit = _segments_with_deletions(live, counts)
        if hit is None:  # the searcher numbers segments otherwise: rewrite them all
            hit = set(sizes)
        elif hit:
            hit = {min(hit, key=lambda seg: (sizes[seg], seg))}
        pieces = rewrite_plan(live, hit, adding=True, layout=True)
        opstamp = self._rewrite(live, pieces, refill, [], apart=False, should_stop=should_stop)
        return opstamp, sum(len(piece) for piece in pieces)

    def has_deletions(self) -> bool:
        """Whether a committed segment holds a deleted document (see :meth:`compact`)."""
        return any(deleted for _, deleted in deleted_per_segment(read_meta(self.directory)))

    def _rewrite(
        self,
        live: list[tuple[int, int]],
        pieces: list[list[int]],
        refill: Refill,
        held: list[tuple[int, LexicalFields]],
        *,
        apart: bool,
        should_stop: Callable[[], bool] | None = None,
    ) -> int:
        """Delete the documents of ``pieces`` and add them again, a commit a
        piece (:func:`~.segments.piece_by_piece`), then the ``held`` new
        documents (in the last piece's commit unless ``apart``); the last
        opstamp. (A deletion takes the copies added before it, not after.)"""
        writer = self._w()
        by_piece = piece_by_piece(live, pieces)
        for i, piece in enumerate(pieces):
            if by_piece or i == 0:
                gone = piece if by_piece else [cid for p in pieces for cid in p]
                writer.delete_documents_by_query(tantivy.Query.term_set_query(self.schema, "cid", gone))
            for start in range(0, len(piece), _REFILL_SLICE):
                _stop_if(should_stop)
                for cid, fields in refill(piece[start : start + _REFILL_SLICE]):
                    writer.add_document(tantivy.Document(cid=cid, **fields))
            if i < len(pieces) - 1 or apart:
                _stop_if(should_stop)  # (a commit of a fifth of corpus-1m takes ~0.2 s)
                writer.commit()
        for cid, fields in held:
            writer.add_document(tantivy.Document(cid=cid, **fields))
        _stop_if(should_stop)
        opstamp = writer.commit()
        self._clear()
        self._share_meta()
        return opstamp

    def _rewrite_plan(self, *, adding: bool, compact: bool) -> tuple[list[tuple[int, int]], list[list[int]]]:
        """What :meth:`commit` rewrites: with ``compact``, the documents that
        stay in the committed segments holding a deleted one; for a refresh,
        the small segments its layout joins. With the committed documents
        that stay, (segment, cid)."""
        counts = deleted_per_segment(read_meta(self.directory))
        layout = self._held is not None
        lost = compact and (bool(self._deleted) or any(deleted for _, deleted in counts))
        if not lost and (not layout or len(counts) + adding <= MAX_SEGMENTS):
            return [], []  # nothing to rewrite, nor to join: no need to list the documents
        live = self._live()
        hit = {seg for seg, cid in live if cid in self._deleted} if compact else set()
        if compact and any(deleted for _, deleted in counts):  # left by the watcher, or an older version
            old = _segments_with_deletions(live, counts)
            hit.update({seg for seg, _ in live} if old is None else old)
        staying = [(seg, cid) for seg, cid in live if cid not in self._deleted]
        return staying, rewrite_plan(staying, hit, adding=adding, layout=layout, sharing=not compact)

    def _live(self) -> list[tuple[int, int]]:
        """(segment_ord, cid) of every committed live document."""
        self.index.reload()
        return _live_documents(self.index.searcher())

    def _clear(self) -> None:
        self._dirty = False
        self._deleted.clear()
        if self._held is not None:
            self._held.clear()

    def forget_previous(self) -> None:
        """The database committed the batch too: the previous state is not needed."""
        forget_previous(self.directory)

    def abort(self) -> None:
        """Undo the batch: drop what was added or deleted and put back the
        state kept at its first change, even if it committed since (the
        SQLite transaction it mirrors was rolled back), with the files a
        failed commit left deleted; release the writer."""
        self._clear()
        if self._writer is not None:
            writer, self._writer = self._writer, None
            with contextlib.suppress(ValueError):  # a writer a full disk killed cannot roll back
                writer.rollback()
            with contextlib.suppress(ValueError):
                writer.wait_merging_threads()
            del writer
        if restore_previous(self.directory):
            self.index = _open(self.directory)
            _register(self.index)
        else:
            remove_unreferenced(self.directory)

    def close(self) -> None:
        """Drop what was never committed (its batch was not either), finish
        merges and release tantivy's own writer lock."""
        if self._dirty:
            self.abort()
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.wait_merging_threads()
            self._share_meta()

    def _share_meta(self) -> None:
        """tantivy writes its two small state files owner-only (0600), unlike
        the segments: give them the read bits of their folder, so whoever may
        read the folder (another user, a CI job) can open the index."""
        mode = self.directory.stat().st_mode & 0o666
        for name in ("meta.json", ".managed.json"):
            path = self.directory / name
            with contextlib.suppress(FileNotFoundError):
                if path.stat().st_mode & 0o777 != mode:
                    path.chmod(mode)

    # -- reading ---------------------------------------------------------
    def reload(self) -> None:
        """See the last commit. A read-only index is opened anew when its
        owner committed since (its searcher does not follow the files)."""
        if not self.read_only:
            self.index.reload()
        elif (stamp := _meta_stamp(self.directory)) != self._stamp:
            self.index, self._stamp = _open_read_only(self.directory), stamp
            _register(self.index)

    @property
    def num_docs(self) -> int:
        return self.index.searcher().num_docs

    def doc_freq(self, field: str, token: str) -> int:
        return self.index.searcher().doc_freq(field, token)

    def held_terms(self, tokens: Sequence[str]) -> frozenset[str]:
        """See :meth:`repolens.store.base.IndexReader.held_terms`."""
        searcher = self.index.searcher()
        return frozenset(t for t in tokens if any(searcher.doc_freq(field, t) for field in TEXT_FIELDS))

    def terms_with_prefix(self, prefix: str, limit: int) -> list[str]:
        """See :meth:`repolens.store.base.IndexReader.terms_with_prefix`."""
        if not prefix or limit <= 0:
            return []
        searcher = self.index.searcher()
        found = {term for field in TEXT_FIELDS for term, _ in searcher.terms_with_prefix(field, prefix)}
        return sorted(found, key=lambda term: (len(term), term))[:limit]

    def search(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: dict[str, float],
        limit: int,
        filters: LexFilters | None = None,
        within: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        """Top ``limit`` (cid, score) for weighted terms, summed over fields.

        Each (term, weight) contributes ``weight * field_weight * BM25`` per
        field; terms are OR-ed, so a chunk matching more terms scores higher.
        ``within``: only chunks under one of these paths (instead of
        ``filters.subpath``), each scoring as under that subpath alone.
        """
        query = self._terms_query(terms, field_weights)
        if query is None or limit <= 0:  # tantivy panics on a limit of 0
            return []
        must = _filter_clauses(self.schema, filters, within)
        if must:
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *must])
        searcher = self.index.searcher()
        hits = searcher.search(query, limit, count=False).hits
        if not hits:
            return []
        cids = searcher.fast_field_values("cid", [addr for _, addr in hits])
        return [(int(c), float(s)) for (s, _), c in zip(hits, cids, strict=True) if c is not None]

    def _terms_query(
        self, terms: Sequence[tuple[str, float]], field_weights: dict[str, float]
    ) -> tantivy.Query | None:
        """The weighted terms OR-ed over the fields (None when nothing has a
        weight). The last one is kept: one question searches the same terms
        several times (the candidates, then the best chunks of the files it
        names or the history votes for), and building a long question's
        clauses costs about a millisecond."""
        key = (tuple(terms), tuple(field_weights.items()))
        if self._last_query[0] == key:
            return self._last_query[1]
        clauses = []
        for token, weight in terms:
            for field, fw in field_weights.items():
                if fw <= 0 or weight <= 0:
                    continue
                q = tantivy.Query.term_query(self.schema, field, token, index_option="freq")
                clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, weight * fw)))
        query = tantivy.Query.boolean_query(clauses) if clauses else None
        self._last_query = (key, query)
        return query


def _meta_stamp(directory: Path) -> tuple[int, int]:
    try:
        st = (directory / "meta.json").stat()
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size)


_LOCK_FILES = (".tantivy-meta.lock", ".tantivy-writer.lock")


def _open(directory: Path) -> tantivy.Index:
    return tantivy.Index.open(str(directory))


def _open_read_only(directory: Path) -> tantivy.Index:
    """Open a tantivy index in a folder this process cannot write.

    tantivy takes a lock file in the index folder to open any reader, and
    creating (even opening) that file needs write access. So the index is
    opened through a private folder of links to its files, where the lock
    can be taken; once open, the searcher reads the files it mapped, and the
    private folder is removed: nothing is written beside the index.

    Its reader never reloads by itself (:meth:`LexicalIndex.reload` opens
    the index anew): tantivy's default reader watches ``meta.json`` from a
    thread, which, seeing the link removed, could take the lock again in the
    private folder while it is being removed, and leave it behind.
    """
    import shutil  # (with tempfile) only for a read-only index: a search need not load them
    import tempfile

    shadow = Path(tempfile.mkdtemp(prefix="repolens-ro-"))
    try:
        for entry in directory.iterdir():
            if entry.name not in _LOCK_FILES:
                (shadow / entry.name).symlink_to(entry)
        index = _open(shadow)
        index.config_reader(reload_policy="manual")
        return index
    finally:
        shutil.rmtree(shadow, ignore_errors=True)


def _filter_clauses(
    schema: tantivy.Schema, f: LexFilters | None, within: Sequence[str] = ()
) -> list[tuple[tantivy.Occur, tantivy.Query]]:
    """The ``Must`` clauses of ``f``; ``within`` replaces its subpath by any
    of several (a chunk lies under one of them: it adds that one's BM25,
    as the subpath alone would)."""
    if f is None and not within:
        return []
    f = f or LexFilters()
    out = []
    if within:
        subpaths = [tantivy.Query.term_query(schema, "dirs", p.strip("/")) for p in within]
        anyof = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in subpaths])
        out.append((tantivy.Occur.Must, anyof))
    elif f.subpath:
        out.append((tantivy.Occur.Must, tantivy.Query.term_query(schema, "dirs", f.subpath.strip("/"))))
    for field, values in (("lang", f.languages), ("kind", f.kinds)):
        if values:
            q = tantivy.Query.term_set_query(schema, field, list(values))
            out.append((tantivy.Occur.Must, q))
    return out


def _stop_if(should_stop: Callable[[], bool] | None) -> None:
    if should_stop is not None and should_stop():
        raise Stopped


def _segments_with_deletions(
    live: Sequence[tuple[int, int]], counts: Sequence[tuple[int, int]]
) -> set[int] | None:
    """The segments (``segment_ord``) that ``counts`` (from ``meta.json``)
    say hold deleted documents; None when the live documents per segment do
    not match ``counts`` (the searcher numbers segments otherwise)."""
    per_segment = Counter(seg for seg, _ in live)
    if [per_segment[i] for i in range(len(counts))] != [docs - dead for docs, dead in counts]:
        return None
    return {i for i, (_, deleted) in enumerate(counts) if deleted}


def _live_documents(searcher: tantivy.Searcher) -> list[tuple[int, int]]:
    """(segment_ord, cid) of every live document."""
    if searcher.num_docs == 0:
        return []
    addresses = [address for _, address in searcher.search(tantivy.Query.all_query(), searcher.num_docs).hits]
    cids = searcher.fast_field_values("cid", addresses)
    return [(a.segment_ord, int(c)) for a, c in zip(addresses, cids, strict=True) if c is not None]
