"""Where benchmarks find their inputs, never a machine's folder.

* the repository itself: :data:`REPO_ROOT` (this file's grandparent's parent);
* the public development set (questions, ``make_checkouts.sh``): the shared
  folder beside the repository, :data:`SHARED` (``$REPOLENS_BENCH_SHARED``
  overrides it);
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
SHARED = Path(os.environ.get("REPOLENS_BENCH_SHARED") or REPO_ROOT.parent / "shared" / "bench")
DATA_ENV = "REPOLENS_BENCH_DATA"


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
