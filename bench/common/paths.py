"""Where benchmarks find their inputs, never a machine's folder.

* the repository itself: :data:`REPO_ROOT` (this file's grandparent's parent);
* the public development set (questions, ``make_checkouts.sh``): the shared
  folder beside the repository (beside its main work tree, from a linked
  one), :data:`SHARED` (``$REPOLENS_BENCH_SHARED`` overrides it);
* everything a benchmark makes or reads that lives outside the repository
  (checkouts, corpora, index caches, mined data, databases):
  ``$REPOLENS_BENCH_DATA`` (:func:`bench_data`); a script names its folders
  under it (``checkouts``, ``checkouts-git``, ``corpora/corpus-1m``, ...) as
  defaults, and an argument overrides each.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SRC = REPO_ROOT / "src"
DATA_ENV = "REPOLENS_BENCH_DATA"


def _main_checkout(root: Path) -> Path:
    """The main work tree of ``root``'s repository: ``root`` itself, or, in a
    linked work tree (``git worktree add``, where ``.git`` is a file naming
    ``<main>/.git/worktrees/<name>``), the one it was added from."""
    dot_git = root / ".git"
    if not dot_git.is_file():
        return root
    gitdir = Path(dot_git.read_text().removeprefix("gitdir:").strip())
    common = gitdir / "commondir"
    if not common.is_file():
        return root
    return (gitdir / common.read_text().strip()).resolve().parent


def _shared() -> Path:
    """The shared folder beside the repository (beside its main work tree
    when this is a linked one), unless ``$REPOLENS_BENCH_SHARED`` names one."""
    if given := os.environ.get("REPOLENS_BENCH_SHARED"):
        return Path(given)
    beside = REPO_ROOT.parent / "shared" / "bench"
    main = _main_checkout(REPO_ROOT).parent / "shared" / "bench"
    return beside if beside.is_dir() or not main.is_dir() else main


SHARED = _shared()


def bench_data(*parts: str) -> Path:
    """A folder under ``$REPOLENS_BENCH_DATA``; exits with the fix when the variable is unset."""
    base = os.environ.get(DATA_ENV)
    if not base:
        raise SystemExit(
            f"set {DATA_ENV} to the folder that holds the bench data (checkouts, corpora, caches), "
            "or pass the folder as an argument"
        )
    return Path(base).joinpath(*parts)


def data_default(*parts: str) -> Path | None:
    """An argument's default under ``$REPOLENS_BENCH_DATA``, or None when it is
    unset (the argument is then required at use, see :func:`bench_data`)."""
    base = os.environ.get(DATA_ENV)
    return Path(base).joinpath(*parts) if base else None
