"""What the store is given for each chunk's lexical document.

Documents are tokenized by :mod:`repolens.tokens` before they reach the
store (in the indexer's worker processes), and queries by the same module,
so every backend indexes and looks up the very same tokens. Each text field
is scored on its own and combined with per-field weights at query time
(:meth:`repolens.store.base.IndexReader.lexical`); ``lang``, ``kind`` and
``dirs`` hold raw values for filters.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath

from repolens.chunking import Chunk
from repolens.tokens import token_text, tokenize_path

# The scored fields: path, symbol name, signature and doc, body.
TEXT_FIELDS = ("path", "name", "sig", "body")
# The version of these documents and of the lexical index made of them (its
# fields, analyzers and scoring), recorded in every index: another is refused.
# Here, not beside the tantivy schema, so that checking an index's versions
# does not load tantivy (``symbols`` never searches it).
LEXICAL_VERSION = 2


@lru_cache(maxsize=1024)
def _path_fields(path: str) -> tuple[str, tuple[str, ...]]:
    """The ``path`` field and the folder prefixes of ``path``: the same for
    every chunk of a file, so made once per file (the last few files are kept)."""
    parts = PurePosixPath(path).parts
    return " ".join(tokenize_path(path)), tuple("/".join(parts[: i + 1]) for i in range(len(parts)))


def document_fields(chunk: Chunk) -> dict[str, str | list[str]]:
    """The fields of ``chunk``: space-joined tokens for the text fields; its
    language, its kinds and every folder above it for the filters."""
    names = token_text(f"{chunk.name} {chunk.qualname}") if chunk.qualname or chunk.name else ""
    path, dirs = _path_fields(chunk.path)
    return {
        "path": path,
        "name": names,
        "sig": token_text(f"{chunk.signature}\n{chunk.doc}") if chunk.signature or chunk.doc else "",
        "body": token_text(chunk.text),
        "lang": chunk.language,
        "kind": [chunk.kind, *chunk.kinds],
        "dirs": list(dirs),
    }
