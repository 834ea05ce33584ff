"""``refresh --all``: bring every configured root (every branch) up to date.

For cron or a systemd timer beside running servers: each root is refreshed
under its store's write lock (waiting for a server's watcher that holds it;
readers are never blocked, and see each committed batch), base branches
first so that the other branches copy from a fresh base. One result per
root, whatever happens to the others; the caller prints them as JSON lines
and exits non-zero when any failed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.branches.names import branches_of
from repolens.branches.registry import Registry
from repolens.errors import RepolensError

if TYPE_CHECKING:
    from repolens.index.report import IndexReport

# A server's watcher may be writing: wait this long for it before failing the root.
LOCK_WAIT_S = 120.0


@dataclass
class RefreshResult:
    """One line of ``refresh --all``; ``error`` None when the root was refreshed."""

    repo: str
    root: str
    branch: str = ""
    mode: str = ""
    files_changed: int = 0
    files_reused: int = 0
    chunks_reused: int = 0
    chunks_embedded: int = 0
    vectors_reused: int = 0
    seconds: float = 0.0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def refresh_order(roots: Mapping[str, Path], registry: Registry) -> list[str]:
    """Root keys, each repository's base branch first (the registry's base,
    else ``main`` or ``master``), then its others in configuration order."""
    order: list[str] = []
    for name, branches in branches_of(roots).items():
        base = registry.base_of(name) or next((b for b in ("main", "master") if b in branches), None)
        keys = list(branches.values())
        if base in branches:
            keys.remove(branches[base])
            keys.insert(0, branches[base])
        order += keys
    return order


def siblings_of(key: str, roots: Mapping[str, Path]) -> list[Path]:
    """The folders of the other configured branches of ``key``'s repository."""
    for branches in branches_of(roots).values():
        if key in branches.values():
            return [roots[k] for k in branches.values() if k != key]
    return []


def refresh_roots(
    roots: Mapping[str, Path], registry: Registry, missing: Mapping[str, tuple[str, str]] | None = None
) -> Iterator[RefreshResult]:
    """Refresh every root (see the module docstring), yielding each result as
    it is done; first a failed result for each configured root whose folder
    is ``missing`` (name -> (path, error))."""
    for name, (path, error) in (missing or {}).items():
        yield RefreshResult(repo=name, root=path, error=error)
    for key in refresh_order(roots, registry):
        root = roots[key]
        started = time.monotonic()
        result = RefreshResult(repo=key, root=str(root))
        try:
            report = _refresh(root, siblings_of(key, roots))
        except RepolensError as exc:
            result.error = str(exc)
        except Exception as exc:  # one root's bug must not stop the others; it is reported
            result.error = f"unexpected {type(exc).__name__}: {' '.join(str(exc).split())}"
        else:
            result.branch, result.mode = report.branch, report.mode
            result.files_changed = report.added + report.changed + report.deleted
            result.files_reused, result.chunks_reused = report.files_reused, report.chunks_reused
            if report.vectors is not None:
                result.chunks_embedded = report.vectors.embedded
                result.vectors_reused = report.vectors.reused + report.vectors_copied
        result.seconds = round(time.monotonic() - started, 3)
        yield result


def _refresh(root: Path, siblings: Sequence[Path]) -> IndexReport:
    """``root``'s index brought up to date with its own settings, as ``repolens
    index ROOT`` does, identical files copied from its ``siblings``' indexes."""
    from repolens.index.build import build_index
    from repolens.index.reuse import sibling_stores
    from repolens.settings import load_settings
    from repolens.validate import resolve_root

    root = resolve_root(root)
    return build_index(
        root,
        settings=load_settings(root),
        lock_wait=LOCK_WAIT_S,
        siblings=sibling_stores(root, siblings) if siblings else None,
    )
