"""The indexes of a PostgreSQL store, listed and dropped (:mod:`repolens.store.inventory`,
which makes the listing's entries of what this module reads)."""

from __future__ import annotations

from pathlib import Path

from repolens.store.postgres import PgStore, _name
from repolens.store.postgres.connect import pooled, translate
from repolens.store.postgres.schema import found_version

# What a listing reads of each index's meta.
_SHOWN = ("files", "chunks", "updated_at", "created_at", "root", "repo_git_root", "repo_remote", "branch")


def pg_indexes(url: str) -> list[tuple[str, str, str, dict[str, str]]]:
    """Every repository key of the database, with its published generation
    (else its newest interrupted build), by key: (key, generation, state,
    meta), the state ``empty`` for a key with no generation left; [] for a
    database without repolens tables."""
    with translate(url), pooled(url) as conn:
        if found_version(conn) is None:
            return []
        rows = conn.execute(
            "SELECT r.key, g.seq, g.gen = r.current_gen,"
            " (SELECT coalesce(json_object_agg(m.key, m.value), '{}') FROM meta m"
            "  WHERE m.gen = g.gen AND m.key = ANY(%s))"
            " FROM repos r LEFT JOIN LATERAL (SELECT gen, seq FROM generations g WHERE g.repo_id = r.id"
            "  ORDER BY g.gen = r.current_gen DESC, g.seq DESC LIMIT 1) g ON true"
            " ORDER BY r.key",
            (list(_SHOWN),),
        ).fetchall()
    out = []
    for key, seq, published, meta in rows:
        if seq is None:
            out.append((key, "", "empty", {}))
            continue
        state = "published" if published else "building"
        out.append((key, _name(seq), state, {k: str(v) for k, v in (meta or {}).items()}))
    return out


def pg_drop(url: str, key: str) -> None:
    """Delete every generation of ``key``, its remembered results and its
    row, under its writer lock (``IndexLockedError`` while one writes)."""
    store = PgStore(Path("/"), url, key)
    with store.write_lock():
        store.drop_all()
