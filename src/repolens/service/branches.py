"""Use cases of many repositories and branches (:mod:`repolens.branches`):
the repositories a command line names, comparing two branches, refreshing
every configured root (see :mod:`repolens.service`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from repolens.budget import COMPARE_MAX_CHARS
from repolens.errors import NotFoundError, RepolensError, RootError, UsageError
from repolens.service.searches import search_code
from repolens.store import open_store
from repolens.validate import resolve_root

# Each use case imports its own stack when it runs: a new process (``repolens
# read`` from a shell) must not pay for the search, reply and store modules
# another use case needs (``tests/test_cli_imports.py``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from repolens.branches.compare import Comparison
    from repolens.branches.refresh import RefreshResult
    from repolens.branches.registry import Registry
    from repolens.search.fanout import Target


def named_repositories(
    repos: Sequence[str],
    project: str | None = None,
    config_file: str | Path | None = None,
) -> tuple[list[Target], bool]:
    """The configured repositories the command line's ``--repo`` (repeatable;
    ``*``: all) and ``--project`` name (see :mod:`repolens.branches.several`),
    from the roots of the config file (``--config``, ``$REPOLENS_CONFIG``,
    ``./.repolens.toml``), else the git worktrees of the current directory;
    a ``--repo`` that names none may be a folder. Also whether they are
    several (a list, ``*`` or a project): one reply over them all."""
    from repolens.branches.names import resolve_key
    from repolens.branches.roots import configured_roots, name_for
    from repolens.branches.several import PROJECT, names_several, selected
    from repolens.search.fanout import Target

    spec = [*repos, *([f"{PROJECT}{project}"] if project is not None else [])]
    if not spec:
        raise UsageError("name a repository with --repo NAME (repeatable, '*' for all) or --project NAME")
    roots, registry, missing = configured_roots(config_file, missing_ok=True)
    # A configured root whose folder is gone answers with why (a note among several, the
    # error alone), and the others answer: it must not fail every command of the file.
    roots = {**roots, **{name: Path(path) for name, (path, _) in missing.items()}}

    def key_of(name: str) -> str | None:
        return resolve_key(name, roots, base_of=registry.base_of, indexed=_has_index)

    out: dict[Path, Target] = {}
    for entry in selected(spec if len(spec) > 1 else spec[0], roots, registry, key_of):
        root = roots[entry] if entry in roots else _folder(entry, roots)
        key = next((k for k, path in roots.items() if path == root), None) or name_for(root)
        out.setdefault(root, Target(key, root))
    return list(out.values()), len(spec) > 1 or names_several(spec[0])


def _folder(entry: str, roots: Mapping[str, Path]) -> Path:
    """A ``--repo`` that names no configured repository: a folder, or an error naming the configured ones."""
    try:
        return resolve_root(entry)
    except RootError:
        configured = ", ".join(roots) or "none (--config, $REPOLENS_CONFIG or ./.repolens.toml name them)"
        raise NotFoundError(
            f"unknown repository {entry!r}: no folder has that path, and the configured ones are {configured}"
        ) from None


def _has_index(root: Path) -> bool:
    try:
        return open_store(root).current() is not None
    except RepolensError:
        return False


def compare_branches(
    repo: str,
    roots: Mapping[str, Path],
    registry: Registry,
    *,
    base: str | None = None,
    head: str | None = None,
    paths: Sequence[str] = (),
    query: str | None = None,
    max_chars: int | None = None,
    index_dir_of: Callable[[str], Path | None] = lambda key: None,
    check_path: Callable[[Path, str], str | None] | None = None,
) -> Comparison:
    """Compare two branches of ``repo`` (see :mod:`repolens.branches.compare`)
    on ``paths`` or on the files ``query`` finds in either, within
    ``max_chars`` (None: :data:`~repolens.budget.COMPARE_MAX_CHARS`).
    ``index_dir_of`` gives a root key's index folder (None: the default);
    ``check_path`` is the caller's own check of a path under the base
    branch's root, as its other tools check theirs (a server's
    :meth:`~repolens.server.repos.Repos.check_filter`: a remote caller's
    paths are relative, and name no secret). The arguments are checked in
    their order, so the first one that is wrong is the one named."""
    from repolens.branches.compare import COMPARE_HITS, compare_stores, pick_branches
    from repolens.validate import check_budget, check_path_count, check_query, check_subpath

    if not isinstance(repo, str) or not repo.strip():
        raise UsageError("pass repo: a repository name (NAME or NAME@BRANCH)")
    name, base_key, head_key = pick_branches(repo.strip(), roots, registry, base, head)
    if bool(paths) == bool(query):
        raise UsageError(
            "pass either paths (files or folders to compare) or query (compare the files it finds)"
        )
    check_path_count("paths", paths)
    clean: list[str] = []
    for path in paths:
        if check_path is not None and isinstance(path, str) and path.strip():  # a blank one: check_subpath's
            path = check_path(roots[base_key], path) or "."
        clean.append(check_subpath(path, roots[base_key]) or ".")
    if query:
        check_query(query)
    max_chars = COMPARE_MAX_CHARS if max_chars is None else max_chars
    check_budget(max_chars)
    keys = [k for k in (base_key, head_key) if k is not None]
    stores = [open_store(roots[k], index_dir_of(k)) for k in keys]
    for store in stores:
        if store.current() is None:
            raise store.missing()

    def hits(key: str) -> list[dict[str, Any]]:
        options = {"index_dir": index_dir_of(key), "top_k": COMPARE_HITS, "mode": "json", "auto_index": False}
        return search_code(query, roots[key], **options).to_json().get("hits", [])

    found = [(side, hits(key)) for side, key in zip(("base", "head"), keys, strict=False)] if query else None
    return compare_stores(name, keys, stores, clean, query or "", found, max_chars)


def refresh_all(config_file: str | Path | None = None) -> Iterator[RefreshResult]:
    """Refresh every configured root, every branch (``refresh --all``), one
    result as each is done; a configured root whose folder is missing is a
    failed result, and the others are refreshed. Without a configured root,
    the git worktrees of the current directory. Errors of the configuration
    itself are raised before any root is touched."""
    from repolens.branches.refresh import refresh_roots
    from repolens.branches.roots import configured_roots

    roots, registry, missing = configured_roots(config_file, missing_ok=True)
    if not roots and not missing:
        raise UsageError(
            "no repository to refresh: add a [roots] table to the config file (--config, "
            "$REPOLENS_CONFIG or ./.repolens.toml), set REPOLENS_ROOTS=name=/path,..., "
            "or run it inside a git work tree (its worktrees are refreshed)"
        )
    yield from refresh_roots(roots, registry, missing)
