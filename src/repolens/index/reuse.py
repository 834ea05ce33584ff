"""Indexing a branch from its siblings: copy what is identical, compute the rest.

A sibling is another index of the same repository (another branch's
worktree or checkout) in the same kind of store. When a build or refresh
has files to read, :class:`Donors` is asked first:

* **files**: a file whose content hash equals the sibling's copy of the
  same path is not chunked again: its chunks, symbols, references and (when both were
  embedded by the same model and style) vectors are copied from the
  sibling, and only its lexical documents are made again (tokenizing is
  most of what a copy costs; tree-sitter and the model are spared).
  Hashes decide, never timestamps: the file is read and hashed once here,
  only when its size equals the sibling's.
* **vectors**: a chunk still missing a vector takes the sibling's vector of
  the same chunk id (path, kind, name and text: the same embedding input),
  else, in a store holding many repositories (PostgreSQL), the vector
  another repository's index holds for that chunk id
  (:meth:`~repolens.store.base.Store.shared_vectors`).

Siblings must have been built with the same chunking, tokenizer and schema
(the index identity): otherwise nothing is copied from them. A sibling
being refreshed while this runs is safe: its hashes are read again after
its chunks, and a file whose hash moved meanwhile is chunked here instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.chunking import Symbol
from repolens.chunking.refs import ref_rows
from repolens.discover import LoadedText, file_hash, load_text
from repolens.discover import worktree as git
from repolens.errors import RepolensError
from repolens.index.prepare import Prepared
from repolens.record import Record
from repolens.store import open_store
from repolens.store.document import document_fields
from repolens.store.ref_rows import as_refs, pack

if TYPE_CHECKING:
    from repolens.discover import SourceFile
    from repolens.store.base import FileRecord, IndexReader, Store, SymbolRow


# Files copied from a sibling per round of reads: bounds the statements' size
# and the memory of one round (their chunks' text).
COPY_BATCH = 256


class Reused(Record):
    """A file taken from a sibling: ready to add, with the vectors to keep."""

    prepared: Prepared
    vectors: dict[str, bytes]


def sibling_stores(root: Path, also: Iterable[Path] = ()) -> list[Store]:
    """The indexed siblings of ``root`` in their default stores: the roots
    ``also`` names (other configured branches), then the other worktrees of
    its git repository. Those without an index are left out."""
    seen = {root.resolve()}
    found: list[Store] = []
    for path in [*also, *(p for p, _ in git.worktrees(root))]:
        path = path.resolve()
        if path in seen:
            continue
        seen.add(path)
        try:
            store = open_store(path)
            if store.current() is not None:
                found.append(store)
        except (RepolensError, OSError):
            continue
    return found


@dataclass
class _Donor:
    reader: IndexReader
    name: str
    vectors: bool  # embedded by the model and style this build uses
    files: dict[str, FileRecord] = field(default_factory=dict)


class Donors:
    """What the build of ``own`` copies from: the siblings (opened on first
    use and closed by :meth:`close`; ``stores`` None: found with
    :func:`sibling_stores`), and for vectors the other repositories of
    ``own``'s store."""

    def __init__(
        self,
        own: Store,
        stores: Sequence[Store] | None,
        identity: Mapping[str, str],
        embed: tuple[str, str] | None,
    ) -> None:
        self.own = own
        self.root = own.root
        self._stores = stores
        self._identity = dict(identity)
        self._embed = embed
        self._donors: list[_Donor] | None = None

    def _open(self) -> list[_Donor]:
        if self._donors is not None:
            return self._donors
        self._donors = []
        stores = self._stores if self._stores is not None else sibling_stores(self.root)
        for store in stores:
            if store.root == self.root:
                continue
            try:
                reader = store.open_reader()
            except (RepolensError, OSError):
                continue
            meta = reader.meta()
            if any(meta.get(k) != v for k, v in self._identity.items()) or meta.get("state") != "ready":
                reader.close()
                continue
            same_model = self._embed is not None and (
                meta.get("embed_identity"),
                meta.get("embed_style"),
            ) == (self._embed)
            self._donors.append(_Donor(reader, meta.get("branch") or store.root.name, same_model))
        return self._donors

    def take(
        self, work: Sequence[tuple[SourceFile, FileRecord | None]], max_file_bytes: int
    ) -> dict[str, Reused]:
        """The files of ``work`` (path, the index's record or None) that a
        sibling holds with the same content, by path, ready to add."""
        donors = self._open()
        if not donors:
            return {}
        for donor in donors:
            if not donor.files:
                donor.files = donor.reader.files()
        same: dict[str, tuple[_Donor, str]] = {}  # path -> the sibling holding its content, its hash
        for src, rec in work:
            digest = ""
            for donor in donors:
                theirs = donor.files.get(src.path)
                if theirs is None or theirs.size != src.size or (rec is not None and rec.hash == theirs.hash):
                    continue
                if not digest:
                    loaded = load_text(src.abs_path, max_file_bytes=max_file_bytes)
                    if not isinstance(loaded, LoadedText):
                        break
                    digest = file_hash(loaded.data)
                if digest == theirs.hash:
                    same[src.path] = (donor, digest)
                    break
        kept: dict[str, Reused] = {}
        for donor in donors:
            paths = [p for p, (d, _) in same.items() if d is donor]
            for i in range(0, len(paths), COPY_BATCH):
                part = paths[i : i + COPY_BATCH]
                copies = self._copy(donor, part)
                # Keep only files whose sibling copy did not change while it was read.
                now = donor.reader.files(part)
                for path in part:
                    reused = copies[path]
                    if path in now and now[path].hash == same[path][1] and reused.prepared.chunks:
                        kept[path] = reused
        return kept

    def _copy(self, donor: _Donor, paths: Sequence[str]) -> dict[str, Reused]:
        """The sibling's files at ``paths``, read in four statements."""
        chunks = donor.reader.chunks_of_files(paths)
        symbols = donor.reader.symbols_of_files(paths)
        refs = donor.reader.refs_of_files(paths)
        ids = [s.chunk.id for found in chunks.values() for s in found]
        vectors = donor.reader.vectors_of_chunks(ids) if donor.vectors else {}
        out: dict[str, Reused] = {}
        for path in paths:
            rec = donor.files[path]
            file_chunks = [s.chunk for s in chunks.get(path, ())]
            flags = set(rec.flags.split(","))
            prepared = Prepared(
                path=rec.path,
                digest=rec.hash,
                lines=rec.lines,
                replaced="decoded_with_replacement" in flags,
                language=rec.language,
                parse_error="parse_error" in flags,
                chunks=file_chunks,
                symbols=[_symbol(r) for r in symbols.get(path, ())],
                fields=[document_fields(c) for c in file_chunks],
                refs=pack(ref_rows(as_refs(refs.get(path, ())))),
            )
            out[path] = Reused(prepared, {c.id: vectors[c.id] for c in file_chunks if c.id in vectors})
        return out

    def vectors(self, chunk_ids: list[str]) -> dict[str, bytes]:
        """Vectors (same model and style) of those chunk ids the siblings
        hold, then of those other repositories of this store hold."""
        found: dict[str, bytes] = {}
        for donor in self._open():
            if donor.vectors:
                missing = [i for i in chunk_ids if i not in found]
                if not missing:
                    return found
                found.update(donor.reader.vectors_of_chunks(missing))
        missing = [i for i in chunk_ids if i not in found]
        if missing and self._embed is not None:
            # The chunking decides a chunk's signature and doc, part of its embedding input.
            wanted = {"chunker": self._identity["chunker"], "embed_identity": self._embed[0]}
            found.update(self.own.shared_vectors(missing, {**wanted, "embed_style": self._embed[1]}))
        return found

    def close(self) -> None:
        for donor in self._donors or []:
            donor.reader.close()
        self._donors = None


def _symbol(row: SymbolRow) -> Symbol:
    return Symbol(
        row.name,
        row.qualname,
        row.kind,
        row.path,
        row.start_line,
        row.end_line,
        row.signature,
        row.parent,
        row.language,
    )
