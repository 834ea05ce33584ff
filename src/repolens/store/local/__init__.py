"""The local store: an index in files beside the repository (the default).

Each generation is a folder holding a SQLite database (files, chunks,
symbols, vectors, meta) and a tantivy index (BM25); :mod:`.layout` says how
the folders are laid out, locked and published. It meets the guarantees of
:mod:`repolens.store.base` with a symlink swapped by one ``rename`` (atomic
publish), ``flock`` (one writer), SQLite's WAL (readers keep a snapshot while
the writer commits) and an outbox between SQLite and tantivy (batches).
"""

from __future__ import annotations
