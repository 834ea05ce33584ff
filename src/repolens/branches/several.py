"""Which repositories a question over several names: a list, ``*``, or ``project:NAME``.

``search_code``, ``find_symbol`` and ``search_history`` (and ``repolens
search --repo ... --project``) take, where one repository is named, several:

* a list of names (``["app", "lib@develop"]``), each as ``repo`` takes one
  (:mod:`repolens.branches.names`; locally a folder's path too);
* ``*``: every served repository, once: the branch ``repo=NAME`` means
  (the registry's base, the only one, the only one indexed), else its first
  configured branch; name other branches in a list to add them;
* ``project:NAME``: the served repositories of a registry project, likewise.

Each becomes a :class:`repolens.search.fanout.Target`; a name given twice
counts once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from repolens.branches.names import branches_of
from repolens.branches.registry import Registry
from repolens.errors import NotFoundError, UsageError
from repolens.validate import shown_value

ALL = "*"
PROJECT = "project:"


def names_several(repo: object) -> bool:
    """Whether a ``repo`` argument names several repositories (a list, ``*``, ``project:NAME``)."""
    if isinstance(repo, list | tuple):
        return True
    return isinstance(repo, str) and (repo.strip() == ALL or repo.strip().startswith(PROJECT))


def selected(
    repo: str | Sequence[str],
    roots: Mapping[str, Path],
    registry: Registry,
    key_of: Callable[[str], str | None],
) -> list[str]:
    """The entries ``repo`` names, in order, each once: a served root's key,
    or (a list's entry that names none: ``key_of`` returned None) the entry as
    given, for the caller to take as a folder. ``key_of(name)`` is the key a
    single name means (raising ``NotFoundError`` for an unknown one)."""
    if isinstance(repo, str):
        spec = repo.strip()
        if spec == ALL:
            if not roots:
                raise UsageError(f"{ALL!r} names every served repository, and none is served: name one")
            return [_default_key(name, keys, key_of) for name, keys in branches_of(roots).items()]
        if spec.startswith(PROJECT):
            return _project(spec.removeprefix(PROJECT).strip(), roots, registry, key_of)
        return [key_of(spec) or spec]
    entries = list(repo)
    if not entries:
        raise UsageError("repo is an empty list: name at least one repository")
    out: list[str] = []
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            raise UsageError("every repo of the list must be a repository name")
        if entry.strip() == ALL or entry.strip().startswith(PROJECT):
            keys = selected(entry, roots, registry, key_of)
        else:
            keys = [key_of(entry.strip()) or entry.strip()]
        out += [k for k in keys if k not in out]
    return out


def _default_key(name: str, keys: Mapping[str, str], key_of: Callable[[str], str | None]) -> str:
    """The branch of repository ``name`` that ``*`` or a project means."""
    try:
        key = key_of(name)
    except NotFoundError:  # several branches, none preferred: the first configured
        key = None
    return key or next(iter(keys.values()))


def project_members(project: str, registry: Registry) -> set[str]:
    """The names the registry gives project ``project``; a ``NotFoundError``
    naming its projects when it has none of that name (a mistyped project
    must not answer "nothing there")."""
    members = {name for name, e in registry.entries.items() if e.project == project}
    if not members:
        known = sorted({e.project for e in registry.entries.values() if e.project})
        listed = ", ".join(known) if known else "none (set `project` on the registry's entries)"
        raise NotFoundError(f"no project {shown_value(project)} in the registry: its projects are {listed}")
    return members


def _project(
    project: str, roots: Mapping[str, Path], registry: Registry, key_of: Callable[[str], str | None]
) -> list[str]:
    """The served repositories of registry project ``project``."""
    if not project:
        known = sorted({e.project for e in registry.entries.values() if e.project})
        raise UsageError(f"pass {PROJECT}NAME with a project of the registry: {', '.join(known) or 'none'}")
    members = project_members(project, registry)
    grouped = branches_of(roots)
    served = [name for name in grouped if name in members]
    if not served:
        raise NotFoundError(
            f"project {project!r} has no served repository (its repositories: {', '.join(sorted(members))})"
        )
    return [_default_key(name, grouped[name], key_of) for name in served]
