"""pytest fixtures as a question sees them: the keys ``@N`` and ``@N.a.b`` made definite.

A file's extraction keeps a parameter of a test or fixture, its uses in the
function and the members reached through it with a key naming a fixture as
that file sees it (:mod:`repolens.chunking.refs.fixtures`), since which file
defines it depends on others. Here, when a question is asked, each such key
becomes the key of a definition:

* ``@N`` (``@^N``): the fixture ``N`` pytest finds for the use's file, the
  first of: the file itself (not for ``@^N``, a fixture overriding one of its
  name), the ``conftest.py`` of its folder and of each folder above, the
  modules of pytest's own plugins (``_pytest``); its key is its definition's;
* ``@N.a.b``: ``T.a.b``, ``T`` the key of the class that fixture gives (its
  ``fixture`` row's target), as its own file spells it; a fixture giving its
  parameter ``M`` (target ``@M``) gives what ``M`` gives, as its file sees ``M``.

A use whose fixture is not found is what it was before fixtures were
followed: a parameter is a local (dropped), a call on it a name match, an
attribute dropped. The fixtures of a name are read once per question (by
the row name ``@N``, which only their definitions carry).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from repolens.chunking.refs import FIXTURE_KIND, module_parts, split_key
from repolens.store.base import IndexReader, RefRow

# The folder of pytest's own plugins: their fixtures are seen from everywhere.
_BUILTIN_PLUGINS = "_pytest"


class Fixtures:
    """The fixtures read for one question, by name, and the keys they make definite."""

    def __init__(self, reader: IndexReader) -> None:
        self.reader = reader
        self.by_name: dict[str, dict[str, RefRow]] = {}  # name -> path -> its fixture row

    def resolve(self, rows: Iterable[RefRow]) -> list[RefRow]:
        """``rows`` with every fixture key made a definition's key (see the
        module docstring); a use whose fixture is not found keeps the
        meaning it had without fixtures (dropped, or a name match)."""
        rows = list(rows)
        wanted = {_fixture_name(r.target) for r in rows if r.target.startswith("@")}
        self._read(wanted - set(self.by_name))
        out = []
        for row in rows:
            t = row.target
            if not t.startswith("@"):
                out.append(row)
                continue
            skip_own = t.startswith("@^")
            name, _, rest = t[2 if skip_own else 1 :].partition(".")
            fixture = self._visible(row.path, name, skip_own)
            key = ""
            if fixture is not None:
                key = _definition_key(fixture) if not rest else self._type_key(fixture)
                key = f"{key}.{rest}" if key and rest else key
            if key:
                out.append(row._replace(target=key))
            elif rest and row.kind != "attr":
                out.append(row._replace(target=""))  # a call on an object of unknown type
        return out

    def _type_key(self, fixture: RefRow, depth: int = 3) -> str:
        """:func:`_type_key` of the fixture, or of the fixture it gives the value of
        (``@N``: its parameter ``N``, as its own file sees that one), ``depth`` fixtures deep."""
        t = fixture.target
        if not t.startswith("@") or not depth:
            return _type_key(fixture)
        name = _fixture_name(t)
        if name not in self.by_name:
            self._read({name})
        given = self._visible(fixture.path, name, t.startswith("@^"))
        return self._type_key(given, depth - 1) if given is not None else ""

    def _read(self, names: set[str]) -> None:
        if not names:
            return
        for name in names:
            self.by_name[name] = {}
        for row in self.reader.refs_named(sorted("@" + n for n in names)):
            if row.kind != FIXTURE_KIND:
                continue
            held = self.by_name[row.name[1:]]
            if row.path not in held or held[row.path].line < row.line:  # the last definition wins
                held[row.path] = row

    def _visible(self, path: str, name: str, skip_own: bool) -> RefRow | None:
        """The fixture ``name`` pytest finds for a test in ``path`` (None: none)."""
        defined = self.by_name.get(name)
        if not defined:
            return None
        if not skip_own and path in defined:
            return defined[path]
        folder = posixpath.dirname(path)
        while True:
            conftest = posixpath.join(folder, "conftest.py")
            if conftest != path and conftest in defined:
                return defined[conftest]
            if not folder:
                break
            folder = posixpath.dirname(folder)
        builtin = sorted(p for p in defined if _BUILTIN_PLUGINS in p.split("/")[:-1])
        return defined[builtin[0]] if builtin else None


def _fixture_name(target: str) -> str:
    return target.lstrip("@^").partition(".")[0]


def _definition_key(fixture: RefRow) -> str:
    """The longest key of the fixture's function (one :func:`definition_keys` gives)."""
    return ".".join([*module_parts(fixture.path, fixture.language), *split_key(fixture.scope)])


def _type_key(fixture: RefRow) -> str:
    """The key of the class the fixture gives, as other files spell it ("" unknown)."""
    t = fixture.target
    if not t or t.startswith("@"):
        return ""
    if t.startswith("="):  # a class of the fixture's own file
        return ".".join([*module_parts(fixture.path, fixture.language), *split_key(t[1:])])
    return t
