"""Where an MCP tool call looks: the served repositories and how a caller
names one (``repo``, alias ``root``: a served name, or locally also a path;
strict path checks for remote callers). Every call goes through
:mod:`repolens.server.calls`, which asks :class:`Repos`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from repolens.branches.names import branches_of, parse_ref, resolve_key, unknown
from repolens.branches.registry import EMPTY, Registry
from repolens.branches.roots import name_for
from repolens.branches.several import ALL, PROJECT, project_members, selected
from repolens.discover.rules import IgnoreRules
from repolens.errors import NotFoundError, PathError, RepolensError, RootError, UsageError
from repolens.reply.snippet import safe_path
from repolens.search.fanout import LABEL_SEP, MISSING_FOLDER, Target
from repolens.server.tool_list import LOCATION, location_description
from repolens.store import open_store
from repolens.validate import folder_back, resolve_root

log = logging.getLogger("repolens")

# The name the argument naming the repository (LOCATION) had over stdio before (still accepted).
LOCATION_ALIAS = "root"
# ``Repos(description=...)`` when the caller has made none: made from the repositories served.
FROM_ROOTS: Any = object()


class Repos:
    """The served repositories and how a caller names one.

    Every tool that looks at a repository takes ``repo`` (``root``, its
    name before, is an alias: :data:`LOCATION_ALIAS`). ``roots`` maps names
    to resolved folders. Local mode: ``resolve(repo)`` takes a served name
    or a path. Remote mode: a served name only. Either way a name may be
    ``name@branch``, and ``name`` alone of a repository with several
    branches means the ``registry``'s base, else the only one
    (:func:`repolens.branches.names.resolve_key`); no name means the only
    repository served (locally with none served: the current directory),
    and is refused, listing the names, when several are.

    ``missing`` maps the configured roots whose folder is missing to that
    folder (never shown to callers): each is named as not served, and looked
    at again by every call that names it (:meth:`look_again`), served from
    the first that finds it back.

    ``description``: what the tools' ``repo`` argument says
    (:func:`~repolens.server.tool_list.location_description`), made once at
    start; the stdio front passes the one its own tool list says.
    """

    def __init__(
        self,
        roots: Mapping[str, Path],
        *,
        remote: bool,
        index_dir: Path | None = None,
        registry: Registry = EMPTY,
        missing: Mapping[str, Path] | None = None,
        description: str | None = FROM_ROOTS,
    ) -> None:
        self.roots = {name: Path(path).resolve() for name, path in roots.items()}
        self.missing = dict(missing or {})  # configured roots whose folder is missing: named, not served
        if description is FROM_ROOTS:
            description = location_description(list(self.roots), remote=remote, missing=list(self.missing))
        self.description = description
        self._back = threading.Lock()  # calls run on several threads: one root comes back once
        self.remote = remote
        self.index_dir = index_dir
        self.registry = registry
        if remote and not self.roots:
            raise UsageError("a remote server needs at least one repository: pass --root NAME=PATH")
        if remote and index_dir is not None and len(self.roots) > 1:
            raise UsageError(
                "--index-dir names one index folder, but several repositories are served: "
                "set REPOLENS_INDEX_DIR (a parent folder, one index per repository) instead"
            )
        self._ignore = IgnoreRules() if remote else None
        self._folders: list[tuple[str, str]] | None = None

    @property
    def default(self) -> Path | None:
        return next(iter(self.roots.values()), None)

    @property
    def names(self) -> str:
        return ", ".join(self.roots) or "(none)"

    def location_param(self, several: bool = False) -> tuple[str, Any]:
        """Name and annotation of the tools' location parameter in this mode
        (described only where there is a choice to make: the stdio front
        fills in the same words, :mod:`repolens.server.tool_list`);
        ``several``: for a tool that also takes a list of them."""
        kind: Any = str | list[str] | None if several else str | None
        if self.description is None:
            return LOCATION, kind
        return LOCATION, Annotated[kind, Field(description=self.description)]

    def resolve(self, where: str | None) -> tuple[Path, Path | None]:
        """(root folder, index folder or None for the default) for a caller's
        argument; one with spaces or a line break around it (``"app\\n"``, a
        blank one) is refused, not read as the name inside it (or as none)."""
        if where is not None and (not where.strip() or where != where.strip()):
            raise UsageError(
                f"`{LOCATION}` {where!r} has spaces or a line break around it: pass the name alone"
            )
        if where == "*":  # every repository: the tools that answer for several take it before this
            raise UsageError(
                f"this tool answers for one repository: pass `{LOCATION}` as one name or path, not *"
            )
        if where is not None:
            self.look_again(self._named(where))
        if where is None:
            root = self._unnamed()
        elif self.remote:
            root = self._remote(where)
        elif (key := self.key(where)) is not None:
            root = self.roots[key]
        else:
            root = self._folder(where)
        # An explicit index folder belongs to the server's own root, not to any root a caller names.
        return root, self.index_dir if root == self.default else None

    def _unnamed(self) -> Path:
        """The repository a call that names none means: the only one served
        (or the only repository, of several branches), else an error listing them."""
        if not self.roots:
            return resolve_root(None)
        if len(self.roots) == 1:
            return next(iter(self.roots.values()))
        if len(names := branches_of(self.roots)) == 1:
            key = self.key(next(iter(names)))
            assert key is not None  # the name of served branches
            return self.roots[key]
        raise UsageError(f"several repositories are served: pass `{LOCATION}`, one of {self.names}")

    def _folder(self, where: str) -> Path:
        """The folder a local caller names that no served name matches. A
        name (``NAME`` or ``NAME@BRANCH``) that is no folder either, a guess,
        is refused with the names served: the tool list does not repeat them
        when one repository is served."""
        try:
            return resolve_root(where)
        except RootError:
            self._refuse_missing(where)
            if not self.roots or parse_ref(where) is None:
                raise
            raise NotFoundError(
                f"unknown repository {where.strip()!r}: none of that name is served ({self.names}) "
                "and no folder has that path",
                fix=f"pass a served name or a folder's path as {{{LOCATION}}}",
            ) from None

    def _remote(self, repo: str) -> Path:
        key = self.key(repo)
        if key is not None:
            return self.roots[key]
        if parse_ref(repo) is None and (any(c in repo for c in "/\\") or repo.startswith(("~", "."))):
            raise PathError(f"`{LOCATION}` names a served repository, not a folder: pass one of {self.names}")
        self._refuse_missing(repo)
        raise unknown(repo, self.roots)

    def _refuse_missing(self, name: str) -> None:
        """A configured root whose folder is missing is named as such, not as unknown."""
        if name in self.missing:
            raise RootError(f"repository {name!r} is {MISSING_FOLDER}; served: {self.names}")

    def targets(self, repo: str | list[str]) -> list[Target]:
        """The repositories a call names when it names several (a list, ``*``,
        ``project:NAME``: :mod:`repolens.branches.several`), each once; last,
        the configured roots whose folder is missing that it names (``*``, their
        project, or by name), which answer that they are not served: the
        reply says what it left out. Naming only such roots is an error."""
        named = self._missing_among(repo)
        self.look_again(named)
        out: dict[Path, Target] = {}
        unserved = [name for name in named if name in self.missing]  # (those not back)
        for entry in selected(repo, self.roots, self.registry, self.key):
            if entry in self.missing:
                if entry not in unserved:
                    unserved.append(entry)
                continue
            root, index_dir = (
                (self.roots[entry], self.index_dir_of(entry)) if entry in self.roots else self.resolve(entry)
            )
            key = next((k for k, path in self.roots.items() if path == root), None) or name_for(root)
            out.setdefault(root, Target(key, root, index_dir))
        if not out and unserved:
            self._refuse_missing(unserved[0])
        # (a missing root has no folder to callers, none to open: it answers that it is unserved)
        gone = [Target(name, None) for name in unserved]
        return [*out.values(), *gone]

    def _missing_among(self, repo: str | list[str]) -> list[str]:
        """The configured roots whose folder is missing that ``repo`` names:
        by name, or as ``*`` or a ``project:NAME`` would, were they served."""
        found: list[str] = []
        for spec in [repo] if isinstance(repo, str) else repo:
            spec = spec.strip() if isinstance(spec, str) else ""
            if spec == ALL:
                found += self.missing
            elif spec.startswith(PROJECT):
                members = project_members(spec.removeprefix(PROJECT).strip(), self.registry)
                found += [n for n in self.missing if n in members]
            else:
                found += self._named(spec)
        return list(dict.fromkeys(found))

    def _named(self, where: str) -> list[str]:
        """The configured roots whose folder is missing that ``where`` names:
        ``name``, ``name@branch``, or the name alone of one of its branches."""
        name = where.strip().partition("@")[0]
        return [key for key in self.missing if key == where.strip() or key.partition("@")[0] == name]

    def look_again(self, names: Iterable[str]) -> None:
        """Serve each of ``names`` whose configured folder was missing and is
        back (re-mounted, re-cloned), from this call on. A stat while it
        stays missing: cheap enough for every call that names it, and no
        restart is needed. (The server's watcher looks for it on its own:
        :func:`repolens.index.watch.start_background`.)"""
        for name in list(names):
            folder = self.missing.get(name)  # (another call may have served it since)
            root = folder_back(folder) if folder is not None else None
            if root is None:
                continue
            with self._back:
                if name not in self.missing:  # another call served it meanwhile
                    continue
                self.roots = {**self.roots, name: root}
                self.missing = {key: folder for key, folder in self.missing.items() if key != name}
                self._folders = None  # its index folder, for redact
            log.warning("%s: its configured folder is back: served", name)

    def split_label(self, path: str) -> tuple[str, str] | None:
        """``(key, path)`` for a path labelled with a served repository, as a
        reply over several names it (``app@main:src/x.py``); None otherwise."""
        name, sep, rest = path.partition(LABEL_SEP)
        if not sep or not rest or parse_ref(name) is None:
            return None
        key = self.key(name)
        return (key, rest) if key is not None else None

    def key(self, name: str) -> str | None:
        """The served root ``name`` means (``name@branch``, or ``name`` alone),
        None when it names no served repository."""
        return resolve_key(name, self.roots, base_of=self.registry.base_of, indexed=self._indexed)

    def index_dir_of(self, key: str) -> Path | None:
        """The index folder of a served root: the server's ``--index-dir`` for its own root."""
        return self.resolve(key)[1]

    def _indexed(self, root: Path) -> bool:
        try:
            return open_store(root, self.index_dir if root == self.default else None).current() is not None
        except RepolensError:
            return False

    def check_file(self, root: Path, path: str) -> str:
        """The root-relative form of a file path argument; strict checks for remote callers."""
        if not self.remote:
            return path
        _, rel = safe_path(root, path, strict=True)
        self._refuse_hidden(rel, path)
        return rel

    def check_filter(self, root: Path, path: str | None) -> str | None:
        """A path filter (file or folder); remote callers get the same checks
        as for files, but for one: it is looked up in the index and the
        history, never read, so it need not exist on disk (a deleted file's
        history; a mistyped one is told the nearest indexed path)."""
        if not self.remote or path is None:
            return path
        if not isinstance(path, str) or not path.strip():
            return None
        _, rel = safe_path(root, path, strict=True, allow_dir=True, must_exist=False)
        if rel == ".":
            return None
        self._refuse_hidden(rel, path)
        return rel

    def check_target(self, target: object) -> None:
        """A remote caller's ``find_references`` or ``impact`` target: a name,
        or a path relative to the repository, as every path it sends. An
        absolute one is refused whether it is inside the root or not: taken
        when it is, it would tell the caller where the server keeps it."""
        if not self.remote or not isinstance(target, str):
            return
        import re

        from repolens.service.navigation import PLACE

        place = re.match(PLACE, target.strip())
        path = place.group("path") if place else target.strip()
        if path.startswith(("/", "~")):
            shown = path if len(path) <= 200 else path[:200] + "..."
            raise PathError(f"path {shown!r} is absolute: pass a path relative to the repository")

    def _refuse_hidden(self, rel: str, raw: str) -> None:
        assert self._ignore is not None
        if self._ignore.hard_exclusion(rel) is not None:
            shown = raw if len(raw) <= 200 else raw[:200] + "..."
            raise PathError(
                f"path {shown!r} is a secret or version-control file by name: not served to remote callers"
            )

    def redact(self, text: str) -> str:
        """Remote replies name repositories, not server folders: neither a
        root nor an index folder outside it (``--index-dir``,
        ``REPOLENS_INDEX_DIR``), which reads ``<NAME index>``."""
        if not self.remote:
            return text
        for folder, shown in self._index_folders():
            text = text.replace(folder, shown)
        for name, root in sorted(self.roots.items(), key=lambda item: -len(str(item[1]))):
            text = text.replace(str(root), f"<{name}>")
        return text

    def _index_folders(self) -> list[tuple[str, str]]:
        """(folder, how a remote reply names it) of each served root's index
        outside the root, longest first; found once (a store is located, not opened)."""
        if self._folders is None:
            found = {}
            for name, root in self.roots.items():
                try:
                    where = open_store(root, self.index_dir if root == self.default else None).location
                except RepolensError:
                    continue
                if where.startswith("/") and not Path(where).is_relative_to(root):
                    found[where] = f"<{name} index>"
            self._folders = sorted(found.items(), key=lambda item: -len(item[0]))
        return self._folders
