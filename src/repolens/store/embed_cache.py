"""A cache of vectors shared by every index on this machine.

Vectors by (model, style, text), in a plain SQLite file under the
configured folder (``embed_cache``): branches, worktrees and rebuilds of
the same code embed each text once. It is not part of any index, so it
stays a local file whatever store the index lives in. Entries never go
stale: the key is a hash of everything that determines the vector.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path


class EmbedCache:
    """The cache in ``folder`` for one model and embedding style."""

    def __init__(self, folder: Path, identity: str, style: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(folder / "vectors.db", timeout=30.0, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS cache (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
        self.salt = f"{identity}\0{style}\0".encode()

    def key(self, text: str) -> bytes:
        return hashlib.blake2b(self.salt + text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def get(self, keys: list[bytes]) -> dict[bytes, bytes]:
        marks = ",".join("?" * len(keys))
        return dict(self.db.execute(f"SELECT key, vec FROM cache WHERE key IN ({marks})", keys).fetchall())

    def put(self, items: list[tuple[bytes, bytes]]) -> None:
        self.db.executemany("INSERT OR IGNORE INTO cache(key, vec) VALUES(?, ?)", items)

    def close(self) -> None:
        self.db.close()
