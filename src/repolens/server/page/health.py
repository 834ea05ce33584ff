"""Index health at a glance: each served repository's index, as ``index_status`` tells it.

The facts are :func:`repolens.service.index_status`'s (the ``index_status``
tool calls the same), for the repository the served name resolves to (the
tools' :class:`~repolens.server.repos.Repos`), with server folders
redacted as in every remote reply; plus whether a writer holds the index's
lock now (:meth:`repolens.store.base.Store.writing`) and which builds are
under way or were interrupted (:meth:`~repolens.store.base.Store.building`).
A repository whose index cannot be read shows that error's one line; a
configured root whose folder is missing (not served) is listed as such.
"""

from __future__ import annotations

from dataclasses import dataclass

from repolens import service
from repolens.errors import RepolensError
from repolens.search.fanout import MISSING_FOLDER
from repolens.server.repos import Repos
from repolens.store import open_store


@dataclass(frozen=True)
class Health:
    name: str
    files: int | None = None
    chunks: int | None = None
    symbols: int | None = None
    vectors: str = ""
    updated: str = ""
    changed: int | None = None
    changed_detail: str = ""
    history: str = ""
    branch: str = ""
    store: str = ""
    building: str = ""  # "yes", "no", "unknown"; with the builds under way
    error: str = ""


def health_of(repos: Repos, name: str) -> Health:
    """The facts of served repository ``name`` (blocking: stats every file, as ``index_status``)."""
    try:
        root, index_dir = repos.resolve(name)
        status = service.index_status(root, index_dir=index_dir)
        store = open_store(root, index_dir)
        writing = store.writing()
        builds = store.building()
    except RepolensError as exc:
        return Health(name, error=repos.redact(str(exc)), building=_writing_of(name, repos))
    running = "unknown" if writing is None else ("yes" if writing else "no")
    if builds:
        running += f" (generation {', '.join(builds)} {'being built' if writing else 'interrupted'})"
    vectors = (
        f"{status.vectors_done}/{status.vectors_total}" if status.settings.get("embed_identity") else "off"
    )
    return Health(
        name=name,
        files=status.files,
        chunks=status.chunks,
        symbols=status.symbols,
        vectors=vectors,
        updated=status.updated_at,
        changed=status.changed,
        changed_detail=f"{status.new} new, {status.modified} modified, {status.deleted} deleted",
        history=status.history,
        branch=status.branch,
        store=repos.redact(status.index_dir) + (f" (named by {status.named_by})" if status.named_by else ""),
        building=running,
    )


def missing_health(repos: Repos) -> list[Health]:
    """A row per configured root whose folder is missing: not served, but
    listed, so the table does not look complete without it."""
    return [Health(name, error=MISSING_FOLDER, building="no") for name in repos.missing]


def _writing_of(name: str, repos: Repos) -> str:
    """Whether a writer holds the lock of a repository whose status failed (its first build, say)."""
    try:
        root, index_dir = repos.resolve(name)
        writing = open_store(root, index_dir).writing()
    except RepolensError:
        return "unknown"
    return "unknown" if writing is None else ("yes" if writing else "no")
