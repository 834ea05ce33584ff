"""The versions an index is written with, and the check every backend runs on opening one.

An index records :func:`format_versions` in its meta; one written with other
versions is refused with the fix (:func:`check_versions`), never misread.
Both backends (:mod:`repolens.store.local`, :mod:`repolens.store.postgres`)
import this module, so it imports neither (nor :mod:`repolens.store`, which
opens them).
"""

from __future__ import annotations

from pathlib import Path

from repolens.errors import IndexCorruptError, IndexVersionError
from repolens.fronts import say

# The version of the index's records (the local store's SQLite tables, and
# the same records as PostgreSQL keeps them): another is refused. Bump it
# with any change to what :mod:`repolens.store.local.sqlite` writes.
SCHEMA_VERSION = 4


def format_versions() -> dict[str, int]:
    """The versions an index must match to be read by this code."""
    from repolens.store.document import LEXICAL_VERSION
    from repolens.tokens import TOKENIZER_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "tokenizer_version": TOKENIZER_VERSION,
        "lexical_version": LEXICAL_VERSION,
    }


def check_versions(meta: dict[str, str], where: Path) -> None:
    """Refuse an index that is incomplete or written with other versions."""
    if not meta:
        raise IndexCorruptError(f"index for {where} is incomplete", fix=say("re-run index"))
    for key, expected in format_versions().items():
        found = meta.get(key)
        if found != str(expected):
            what = key.removesuffix("_version")
            raise IndexVersionError(
                f"index for {where} was written with {what} version {found or 'unknown'} "
                f"but this repolens reads version {expected}: {say('re-run index')}"
            )
