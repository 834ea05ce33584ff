"""What ``list_repositories`` shows: every repository, its branches, what
each branch's index holds, and what the registry says about it.

Repositories are the served roots grouped by name (``app@main`` and
``app@develop`` are one repository with two branches); a repository only
the registry lists is shown as not served. ``project`` keeps the
repositories of one project (as the registry says).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from repolens.branches.names import branches_of
from repolens.branches.registry import Registry, RegistryEntry
from repolens.branches.several import project_members
from repolens.budget import counted
from repolens.errors import RepolensError

if TYPE_CHECKING:
    from repolens.index.status import IndexStatus


@dataclass(frozen=True)
class RepoGroup:
    """One repository: its name, its configured branches (key -> folder), its registry entry."""

    name: str
    branches: dict[str, Path]
    entry: RegistryEntry | None

    def heading(self) -> str:
        """``app (project shop; base main, head develop): The storefront <url>``."""
        entry = self.entry
        if entry is None:
            return self.name
        facts = [f"project {entry.project}"] if entry.project else []
        if entry.base:
            facts.append(f"base {entry.base}" + (f", head {entry.head}" if entry.head else ""))
        text = self.name + (f" ({'; '.join(facts)})" if facts else "")
        about = " ".join(x for x in (entry.description, f"<{entry.url}>" if entry.url else "") if x)
        return f"{text}: {about}" if about else text


def groups(roots: Mapping[str, Path], registry: Registry, project: str | None = None) -> list[RepoGroup]:
    """Served repositories in configuration order, then those only the
    registry lists; with ``project``, those of that registry project (one
    the registry does not know is a ``NotFoundError``)."""
    members = project_members(project, registry) if project else None
    out = [
        RepoGroup(name, {key: roots[key] for key in keys.values()}, registry.get(name))
        for name, keys in branches_of(roots).items()
    ]
    served = {g.name for g in out}
    out += [RepoGroup(name, {}, entry) for name, entry in registry.entries.items() if name not in served]
    return out if members is None else [g for g in out if g.name in members]


def branch_line(key: str, root: Path, status: Callable[[Path], IndexStatus]) -> str:
    """``app@main: /srv/app - 3 files, 9 chunks, vectors 9/9; updated ..., up to date (branch main)``;
    ``status(root)`` is the root's :class:`repolens.index.status.IndexStatus`."""
    try:
        st = status(root)
    except RepolensError as exc:
        return f"{key}: {root} - {exc}"
    fresh = "up to date" if not st.changed else f"{counted(st.changed, 'file')} changed since"
    vectors = f", vectors {st.vectors_done}/{st.vectors_total}" if st.settings.get("embed_identity") else ""
    size = f"{counted(st.files, 'file')}, {counted(st.chunks, 'chunk')}{vectors}"
    recorded = f" (branch {st.branch})" if st.branch and not key.endswith(f"@{st.branch}") else ""
    return f"{key}: {root} - {size}; updated {st.updated_at}, {fresh}{recorded}"


def render_group(group: RepoGroup, status: Callable[[Path], IndexStatus]) -> list[str]:
    """A repository's lines: a lone unnamed branch without registry facts is
    one line (as a plain served root always was); otherwise a heading and
    one indented line per branch."""
    if not group.branches:
        return [f"{group.heading()} - in the registry, not served"]
    lines = [branch_line(key, root, status) for key, root in group.branches.items()]
    if group.entry is None and list(group.branches) == [group.name]:
        return lines
    return [group.heading(), *(f"  {line}" for line in lines)]
