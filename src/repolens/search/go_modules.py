"""Go's import paths, for :mod:`repolens.search.references`.

A Go file imports a package by its module's path (the ``module`` line of
the nearest ``go.mod`` above the package's folder) followed by the folder
below that module's root: ``github.com/spf13/cobra`` is the top folder of
the repository whose ``go.mod`` says ``module github.com/spf13/cobra``. A
file alone cannot say it (its path has no module in it, and the top folder
has no folder name at all), so the index keys a package by its folders
(:func:`repolens.chunking.refs.definition_keys`), and the key an importing
file spells is added here, from the ``go.mod`` files the index holds, when
a question is asked.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from repolens.chunking.refs import split_key
from repolens.store.base import IndexReader

_MODULE_LINE = re.compile(r"^module\s+\"?([^\s\"]+)", re.MULTILINE)
# Indexes whose modules are kept (a process asks one or a few).
_HELD = 16
_ROOTS: dict[str, dict[str, list[str]]] = {}


def module_roots(reader: IndexReader) -> dict[str, list[str]]:
    """The folder of each ``go.mod`` the index holds ("" the repository's
    top) -> its module path's parts; read once per index content (keyed
    by :meth:`IndexReader.cache_key`)."""
    key = reader.cache_key()
    roots = _ROOTS.get(key)
    if roots is None:
        if len(_ROOTS) >= _HELD:
            _ROOTS.clear()
        roots = _ROOTS[key] = {}
        for path in reader.paths():
            if path == "go.mod" or path.endswith("/go.mod"):
                text = "\n".join(stored.chunk.text for stored in reader.chunks_of_file(path))
                m = _MODULE_LINE.search(text)
                if m:
                    roots[path.removesuffix("go.mod").rstrip("/")] = split_key(m.group(1))
    return roots


def import_key(reader: IndexReader, path: str, qualname: str) -> str:
    """The key a file importing the package of ``path`` spells for its
    definition ``qualname`` (module path, folder below the module's root,
    name), "" when no ``go.mod`` holds ``path``."""
    roots = module_roots(reader)
    if not roots:
        return ""
    folder = PurePosixPath(path).parent.parts
    for i in range(len(folder), -1, -1):
        module = roots.get("/".join(folder[:i]))
        if module is not None:
            return ".".join([*module, *folder[i:], *split_key(qualname)])
    return ""
