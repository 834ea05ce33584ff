"""A use followed back through the modules that re-export what it names.

Below :mod:`repolens.search.ref_walks` (which follows a use to its definition)
and :mod:`repolens.search.ref_members` (which meets a class's bases through
them): both read a re-export the same way, and neither imports the other.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from repolens.chunking.refs import module_parts
from repolens.search.ref_keys import family, keys_of, spells
from repolens.store.base import IndexReader, RefRow

# Languages whose modules bind what they import for other files to import (``binds`` rows).
_BINDING = frozenset({"python", "javascript", "typescript", "tsx", "rust"})


def modules_named(reader: IndexReader, name: str) -> list[tuple[str, str]]:
    """The files (path, language) of a language in ``_BINDING`` whose module's
    last part is ``name`` (``pkg`` of ``pkg/__init__.py``, of ``src/pkg/index.ts``),
    among the indexed paths with a part ``name`` (:func:`path_index`, built once
    per index content): a use's target names a module by the end of its path only."""
    from repolens.search.mentions import path_index  # (only for a use no definition's name resolves)

    paths = path_index(reader.cache_key(), reader.paths).by_part.get(name.lower(), [])
    near = [
        p
        for p in paths
        if PurePosixPath(p).parent.name == name or PurePosixPath(p).name.startswith(name + ".")
    ]
    return [
        (path, r.language)
        for path, r in reader.files(near).items()
        if r.language in _BINDING and module_parts(path, r.language)[-1:] == [name]
    ]


def through_reexport(reader: IndexReader, row: RefRow) -> RefRow | None:
    """``row`` as the module its target names binds it: ``BaseModel(1)`` after
    ``from pkg import BaseModel`` (target ``pkg.BaseModel``), where
    ``pkg/__init__.py`` says ``from .models import Model as BaseModel``, is
    that line's use of ``Model`` (``pkg.models.Model``); ``BaseModel.save``
    is ``Model.save``. None when no indexed module binds it. The uses of a
    definition follow its re-exports forward (:func:`repolens.search.ref_keys.aliased`);
    a use met first is followed back to it, one module at a time."""
    if not family(row.language) & _BINDING:
        return None
    parts = row.target.split(".")
    for i in range(len(parts) - 1, 0, -1):  # the longest module first: pkg.sub.X before pkg.sub
        bound, rest = parts[i], parts[i + 1 :]
        spelled = ".".join(parts[: i + 1])
        for path, language in modules_named(reader, parts[i - 1]):
            if language not in family(row.language) or not spells(
                spelled, keys_of(reader, path, bound, language)
            ):
                continue
            for b in reader.refs_of_files([path]).get(path, []):
                if b.binds == bound and not b.scope and b.target:
                    return b._replace(
                        kind=row.kind, name=row.name if rest else b.name, target=".".join([b.target, *rest])
                    )
    return None
