"""The lexical half of an index: BM25 over chunks with tantivy.

Why tantivy and not SQLite FTS5: measured on the Django source (14k chunks,
the same tokens in both; ``bench/lexical_backends.py``), tantivy answered
long questions in 0.5 ms p50 against 22 ms for FTS5, built faster and was
40% smaller, and it takes a weight per query term (FTS5's ``bm25()`` does
not), which query understanding needs. The price is a second store beside
SQLite; ``store.local.sqlite`` keeps an outbox (``lex_pending``) so the two are
reconciled after a crash.

Documents come pre-tokenized (:mod:`repolens.store.document`) and are
indexed with a whitespace analyzer, so indexing and querying split text the
same way. Fields are scored separately (path, symbol name, signature/doc,
body) and combined with per-field weights at query time.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import tantivy

from repolens.chunking import Chunk
from repolens.errors import IndexCorruptError
from repolens.store.base import LexFilters, LexicalFields
from repolens.store.document import LEXICAL_VERSION, TEXT_FIELDS, document_fields

__all__ = ["LEXICAL_VERSION", "LexicalIndex"]

_ANALYZER = "ws"
# tantivy's writer has one indexing thread and starts with the first
# document, so it indexes while the files are still being prepared (a writer
# started at the commit left all of it to the end). One thread costs a
# flask-sized index ~20-30 ms less CPU than two, and was no slower on
# corpus-1m, where worker processes keep both cores busy anyway
# (docs/benchmarks.md, issue 15: small indexes, fifth pass).
_HEAP_BYTES = 64_000_000


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
                    raise IndexCorruptError(f"lexical index {directory} is missing")
                opener = _open_read_only if self.read_only else _open
                self.index = opener(directory)
        except (ValueError, OSError) as exc:
            raise IndexCorruptError(f"lexical index {directory} cannot be read ({exc})") from exc
        _register(self.index)
        self._writer: tantivy.IndexWriter | None = None
        self._last_query: tuple[object, tantivy.Query | None] = (None, None)
        self._dirty = False  # added or deleted since the last commit

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
        (possibly in another process)."""
        n = 0
        for cid, fields in items:
            self._dirty = True
            self._w().add_document(tantivy.Document(cid=cid, **fields))
            n += 1
        return n

    def delete(self, cids: Iterable[int]) -> None:
        w = self._w()
        for cid in cids:
            self._dirty = True
            w.delete_documents_by_term("cid", cid)

    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._dirty = False
            self._share_meta()

    def abort(self) -> None:
        """Drop everything added or deleted since the last commit (the SQLite
        transaction they mirror was rolled back) and release the writer."""
        self._dirty = False
        if self._writer is not None:
            self._writer.rollback()
            self._writer = None

    def close(self) -> None:
        """Commit what is left (a commit with nothing new still rewrites and
        syncs tantivy's meta), finish merges and release tantivy's own writer lock."""
        if self._writer is not None:
            writer = self._writer
            if self._dirty:
                writer.commit()
                self._dirty = False
            writer.wait_merging_threads()
            self._writer = None
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
