"""Where an index lives, behind one interface (:mod:`repolens.store.base`).

The local store (SQLite + tantivy files in ``<root>/.repolens`` or
``--index-dir``) is :mod:`repolens.store.local`. :func:`format_versions`
are what an index must have been written with to be read by this code;
anything else is refused with the fix (:func:`check_versions`), never
misread. This module imports no database or search engine.
"""

from __future__ import annotations

from pathlib import Path

from repolens.errors import IndexCorruptError, IndexVersionError


def format_versions() -> dict[str, int]:
    """The versions an index must match to be read by this code."""
    from repolens.store.local.lexical import LEXICAL_VERSION
    from repolens.store.local.sqlite import SCHEMA_VERSION
    from repolens.tokens import TOKENIZER_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "tokenizer_version": TOKENIZER_VERSION,
        "lexical_version": LEXICAL_VERSION,
    }


def check_versions(meta: dict[str, str], where: Path) -> None:
    """Refuse an index that is incomplete or written with other versions."""
    if not meta:
        raise IndexCorruptError(f"index for {where} is incomplete", fix="re-run `repolens index`")
    for key, expected in format_versions().items():
        found = meta.get(key)
        if found != str(expected):
            what = key.removesuffix("_version")
            raise IndexVersionError(
                f"index for {where} was written with {what} version {found or 'unknown'} "
                f"but this repolens reads version {expected}: re-run `repolens index`"
            )
