"""Where an index lives, behind one interface (:mod:`repolens.store.base`).

:func:`open_store` gives the :class:`~repolens.store.base.Store` of a
repository: today always the local store (SQLite + tantivy files in
``<root>/.repolens`` or ``--index-dir``, :mod:`repolens.store.local`).
:func:`format_versions` are what an index must have been written with to
be read by this code; anything else is refused with the fix
(:func:`check_versions`), never misread.

This module stays light (no database or search-engine import): discovery
and the adapters import it for :func:`resolve_root`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.errors import ROOT_FIX, IndexCorruptError, IndexVersionError, RootError

if TYPE_CHECKING:
    from repolens.store.base import Store


def resolve_root(root: str | os.PathLike[str] | None) -> Path:
    """The repository root, resolved (``RootError`` when it is not a directory)."""
    path = Path(root if root is not None else ".").expanduser()
    if not path.is_dir():
        state = "is not a directory" if path.exists() else "does not exist"
        raise RootError(f"repository root {path} {state}", fix=ROOT_FIX)
    return path.resolve()


def open_store(root: str | os.PathLike[str] | None, index_dir: str | os.PathLike[str] | None = None) -> Store:
    """The store of ``root``: the local one in ``index_dir`` (default
    ``$REPOLENS_INDEX_DIR/<key>`` or ``<root>/.repolens``). Cheap: nothing
    is opened until a reader or writer is asked for."""
    from repolens.store.local import LocalStore
    from repolens.store.local.layout import resolve_index_dir

    root_path = resolve_root(root)
    return LocalStore(root_path, resolve_index_dir(root_path, index_dir))


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
