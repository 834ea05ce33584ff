"""Which repository an index holds, so that one index never holds two.

A PostgreSQL store names a repository's index by a key (``app@main``); an
explicit ``--index-dir`` names a folder. Both can be given to two
repositories by mistake, and the second writer would then refresh the
first one's index into its own, file by file, while servers answer from the
mix. So every index records the identity of what it holds, and a writer or
reader whose repository is another one is refused (:func:`check_identity`).

The identity of a git repository is its root commit (the first commit of
its history: the same in every clone, branch and worktree, whatever the
folder) and its ``origin`` URL (two forks share a root commit, not a
remote); outside git it is the absolute folder. An index written before
identities were recorded carries only the folder it was built from (meta
``root``), and is compared by that.
"""

from __future__ import annotations

import re
from pathlib import Path

from repolens.errors import IndexIdentityError
from repolens.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.store.base import Store

# Meta keys (with ``root``, the folder the index was built from, written since the first version).
GIT_ROOT_KEY = "repo_git_root"
REMOTE_KEY = "repo_remote"


class RepoIdentity(Record):
    """What an index holds: ``path`` always, ``git_root`` and ``remote`` for a git repository."""

    path: str
    git_root: str = ""
    remote: str = ""

    def meta(self) -> dict[str, str]:
        """The meta keys recording this identity."""
        return {"root": self.path, GIT_ROOT_KEY: self.git_root, REMOTE_KEY: self.remote}

    def describe(self) -> str:
        """``git root 1a2b3c4d5e, origin github.com/x/app, at /srv/app`` (one line, no secrets)."""
        parts = []
        if self.git_root:
            parts.append(f"git root {self.git_root[:10]}")
        if self.remote:
            parts.append(f"origin {_strip_credentials(self.remote)}")
        parts.append(f"at {self.path}" if parts else self.path)
        return ", ".join(parts)


def _git(root: Path, *args: str) -> str | None:
    # git is asked only when the folders differ: a search of an index built
    # here loads no subprocess machinery for this check.
    from repolens.discover.worktree import _git as git

    return git(root, *args)


def identity_of(root: Path) -> RepoIdentity:
    """The identity of the repository at ``root`` (reads git: a full walk of
    the history for its root commit, so a writer asks this, once per write)."""
    roots = _git(root, "rev-list", "--max-parents=0", "HEAD")
    if not roots:
        return RepoIdentity(str(root))
    return RepoIdentity(str(root), min(roots.split()), _remote(root))


def recorded_identity(meta: dict[str, str]) -> RepoIdentity | None:
    """The identity an index's meta records, None when it records none."""
    path = meta.get("root", "")
    if not path:
        return None
    return RepoIdentity(path, meta.get(GIT_ROOT_KEY, ""), meta.get(REMOTE_KEY, ""))


def holds(recorded: RepoIdentity, root: Path) -> bool:
    """Whether an index recording ``recorded`` holds the repository at
    ``root``: the same folder, or (git) the same root commit, present in
    ``root``'s history, and no other ``origin``. Cheap when the folder is the
    same; otherwise one or two ``git`` calls, never a walk of the history."""
    if recorded.path == str(root):
        return True
    if not recorded.git_root:
        return False
    if _git(root, "cat-file", "-e", f"{recorded.git_root}^{{commit}}") is None:
        return False
    remote = _remote(root)
    return not (recorded.remote and remote and _normal_remote(recorded.remote) != _normal_remote(remote))


def check_identity(meta: dict[str, str], store: Store) -> None:
    """Refuse (``IndexIdentityError``) an index of ``store`` whose ``meta``
    records another repository than the store's root, with the store's fix
    (:meth:`~repolens.store.base.Store.foreign_fix`); a place that can only
    be the root's own is not checked."""
    fix = store.foreign_fix()
    recorded = recorded_identity(meta)
    if fix is None or recorded is None or holds(recorded, store.root):
        return
    mine = identity_of(store.root)
    # The fix names folders: user data, so the message carries it (no template).
    raise IndexIdentityError(
        f"the index {store.location} holds another repository ({recorded.describe()}), "
        f"not {store.root} ({mine.describe()}): {fix}"
    )


def _remote(root: Path) -> str:
    """The ``origin`` URL (else the first remote's), without credentials; "" when none."""
    url = _git(root, "config", "--get", "remote.origin.url")
    if not url:
        first = (_git(root, "remote") or "").split()
        url = _git(root, "config", "--get", f"remote.{first[0]}.url") if first else ""
    return _strip_credentials(url or "")


def _strip_credentials(url: str) -> str:
    return re.sub(r"^([a-z][a-z0-9+.-]*://)[^/@]*@", r"\1", url.strip(), flags=re.IGNORECASE)


def _normal_remote(url: str) -> str:
    """``git@github.com:x/app.git`` and ``https://github.com/x/app`` alike: host/path, lower case."""
    url = _strip_credentials(url).lower()
    url = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url)
    url = re.sub(r"^[^/@]*@", "", url)  # user@ of the scp-like form
    url = url.replace(":", "/", 1) if "/" not in url.split(":", 1)[0] else url
    return url.removesuffix("/").removesuffix(".git")
