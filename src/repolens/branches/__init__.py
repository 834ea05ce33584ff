"""Many repositories and many branches of each, side by side.

A repository's branches are indexed as ``name@branch`` (one index per
branch, from worktrees or separate checkouts). This package holds what
only matters once there is more than one:

* :mod:`.names` -- ``name@branch`` references and which configured root a
  caller means (``name`` alone: the registry's base, else the only branch);
* :mod:`.git` -- what a git work tree says about itself (branch, commit,
  sibling worktrees);
* :mod:`.reuse` -- indexing a branch from its siblings: unchanged files are
  copied (chunks, symbols, vectors) instead of chunked, vectors are shared
  by chunk;
* :mod:`.registry` -- the optional registry file (project, base, head, ...);
* :mod:`.compare` -- which files differ between two branches;
* :mod:`.catalog` -- what ``list_repositories`` shows;
* :mod:`.refresh` -- ``refresh --all``: every configured root, one JSON line each.

Everything reads an index through :mod:`repolens.store` (``open_store``,
``IndexReader``), so every store backend gets it.
"""
