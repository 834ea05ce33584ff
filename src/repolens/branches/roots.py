"""The repositories a configuration names, each bound to where its index lives.

Sources, the first that names any root names them all (roots are not
merged): ``--root`` options, then ``REPOLENS_ROOTS``, then the ``[roots]``
table of the config file (``--config``, else ``$REPOLENS_CONFIG``, else
``.repolens.toml`` in the current directory); a command-line use case with
none of them sees the git worktrees of the current directory
(:func:`configured_roots`).

```toml
[roots]                 # name -> path (relative paths: to this file's folder)
app = "/srv/app"
lib = "../lib"
big = { path = "/srv/big", store = "postgresql://pg1/code" }  # its index on PostgreSQL, key "big"
"shop@main" = "/srv/shop-main"          # branches of one repository: NAME@BRANCH
"shop@develop" = "/srv/shop-dev"        # (TOML quotes a key holding "@")
web = { main = "/srv/web", next = "/srv/web-next" }   # the same, as a table: web@main, web@next

[registry]
path = "registry.toml"  # or REPOLENS_REGISTRY: repositories' project, base, head, ...
```

The server's own settings (``[serve]``: token, query log, ...) are read by
:mod:`repolens.server.config`, over these.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repolens.branches.names import REF_RE
from repolens.branches.registry import REGISTRY_ENV, Registry
from repolens.errors import ConfigError, RootError
from repolens.record import Record
from repolens.settings import CONFIG_FILE, environ, read_toml
from repolens.store import Binding, bind_root, locate, shown_url, store_flag, use_store_flag
from repolens.validate import check_dir, check_user_path, resolve_root, shown_path

CONFIG_ENV = "REPOLENS_CONFIG"
ROOTS_ENV = "REPOLENS_ROOTS"

# A repository name travels in tool arguments and URLs: keep it plain
# (a branch may follow: app@main, see repolens.branches.names).
NAME_RE = REF_RE


class ConfiguredRoots(Record):
    """What a configuration says of its repositories.

    ``roots`` keeps its order: the first root is the default of a local
    (stdio) server. ``missing``: with ``missing_ok``, configured roots whose
    folder is missing, name -> (path as given, error). ``bindings`` and
    ``store_flag``: what the config says of each root's index, and this
    process's ``--store``, re-applied by a worker process
    (:func:`apply_bindings`), which starts without them.
    """

    roots: dict[str, Path]
    missing: dict[str, tuple[str, str]]
    bindings: dict[Path, Binding]
    store_flag: str | None
    config_file: Path | None
    registry: Path | None


def load_roots(
    *,
    config_file: str | os.PathLike[str] | None = None,
    root_specs: Iterable[str] = (),
    missing_ok: bool = False,
    env: Mapping[str, str] | None = None,
) -> ConfiguredRoots:
    """The repositories of a configuration (see the module docstring);
    ``ConfigError``/``RootError`` with the fix.

    ``missing_ok`` (``refresh --all``): a root whose folder is missing is
    left out of ``roots`` and named in ``missing`` with its error, instead
    of failing the whole configuration.

    Every root is bound (:func:`repolens.store.bind_root`) to its name, the
    key of its index in a store however the store's URL is given, and to
    the store its entry or the file's ``[store]`` names; two roots whose
    indexes would be one are refused.
    """
    env = os.environ if env is None else env
    path = config_path(config_file, env)
    table = _roots_table(path)
    base = path.parent if path else None
    src = str(path) if path else CONFIG_FILE

    missing: dict[str, tuple[str, str]] = {}
    roots = parse_roots(root_specs, "--root", missing=missing if missing_ok else None)
    if not roots and not missing and (env_roots := environ(ROOTS_ENV, env) or "").strip():
        roots = parse_roots(env_roots.split(","), ROOTS_ENV, missing=missing if missing_ok else None)
    stores: dict[str, tuple[str, tuple[str, ...]]] = {}
    if not roots and not missing and table:
        for name, raw, entry in _root_items(table, src):
            where = f"{src} [roots]"
            try:
                folder = _resolve_dir(raw, base, where)
            except RootError as exc:
                if not missing_ok:
                    raise
                missing[name] = (str(_where_it_was(raw, base)), str(exc))
                continue
            _add_root(roots, name, folder, where)
            if entry.get("store"):
                stores[name] = _entry_store(entry, f"{src} [roots] {name}.store")
    if shared := _server_store(path):
        for name in roots:
            stores.setdefault(name, _entry_store(shared, f"{src} [store] url"))
    bindings = {root: Binding(name, src, *stores.get(name, ("", ()))) for name, root in roots.items()}
    given_store = store_flag()
    apply_bindings(bindings, given_store)
    _check_keys(roots, src)
    return ConfiguredRoots(roots, missing, bindings, given_store, path, registry_path(path, env))


def _roots_table(path: Path | None) -> dict[str, Any]:
    """The ``[roots]`` table of the config file ``path`` ({} when there is no file)."""
    if path is None or not path.is_file():
        return {}
    roots = read_toml(path).get("roots", {})
    if not isinstance(roots, dict):
        raise ConfigError(f"{path}: [roots] must be a table")
    return roots


def apply_bindings(bindings: Mapping[Path, Binding], flag: str | None) -> None:
    """Make this process open the roots' stores as the config says (a
    spawned worker process calls it with its recipe's config)."""
    use_store_flag(flag)
    for root, binding in bindings.items():
        bind_root(root, binding)


def _check_keys(roots: Mapping[str, Path], src: str) -> None:
    """Refuse two roots whose indexes would be one (a root is bound by its
    folder, so two names of one folder would share its key or index folder)."""
    seen: dict[tuple[str, str], str] = {}
    for name, root in roots.items():
        where = locate(root)
        place = (where.store.url, where.store.key) if where.store else ("", str(where.index_dir))
        if place in seen:
            shown = f"{shown_url(place[0])}#{place[1]}" if where.store else place[1]
            raise ConfigError(
                f"{src}: repositories {seen[place]} and {name} would share one index ({shown}), "
                f"both being {root}: name each folder once"
            )
        seen[place] = name


def name_for(path: Path) -> str:
    """A repository name derived from a folder name (``my repo`` -> ``my-repo``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name).strip("-._")[:64]
    return name or "repo"


def _where_it_was(raw: str, base: Path | None) -> Path:
    """The folder a missing root's ``raw`` path names (from ``base``, else
    the current folder), as its error names it."""
    path = Path(raw)
    try:
        path = path.expanduser()
    except RuntimeError:  # an unknown user's home: named as written
        return path
    return path if path.is_absolute() else (base or Path.cwd()) / path


def _resolve_dir(raw: str, base: Path | None, source: str) -> Path:
    return check_dir(f"{source}: repository root", raw, RootError, "pass an existing directory", base)


def parse_root_spec(spec: str) -> tuple[str | None, str]:
    """``NAME=PATH`` -> (NAME, PATH); a bare ``PATH`` -> (None, PATH).

    A prefix before ``=`` that is not a valid name belongs to the path, so
    ``/data/a=b`` is a path.
    """
    name, sep, path = spec.partition("=")
    if sep and NAME_RE.match(name.strip()):
        return name.strip(), path.strip()
    return None, spec.strip()


def parse_roots(
    specs: Iterable[str],
    source: str,
    base: Path | None = None,
    *,
    missing: dict[str, tuple[str, str]] | None = None,
) -> dict[str, Path]:
    """Roots from ``NAME=PATH`` / ``PATH`` items; names unique, paths existing
    (with ``missing``, a missing one is named there with its error instead)."""
    roots: dict[str, Path] = {}
    for spec in specs:
        if not spec.strip():
            continue
        name, raw = parse_root_spec(spec)
        if not raw:
            raise ConfigError(f"{source}: {spec!r} names no path: use NAME=PATH or PATH")
        try:
            path = _resolve_dir(raw, base, source)
        except RootError as exc:
            if missing is None:
                raise
            missing[name or name_for(Path(raw))] = (str(_where_it_was(raw, base)), str(exc))
            continue
        _add_root(roots, name or name_for(path), path, source, named=bool(name))
    return roots


def _add_root(roots: dict[str, Path], name: str, path: Path, source: str, *, named: bool = True) -> None:
    """``name`` -> ``path`` in ``roots``; ``named``: the name was given
    (``NAME=PATH``, a config key), not the folder's own."""
    if not NAME_RE.match(name):
        raise ConfigError(
            f"{source}: repository name {name!r} must be 1-64 letters, digits, '.', '_' or '-', "
            "optionally followed by @BRANCH"
        )
    if name in roots and roots[name] == path:
        raise ConfigError(f"{source}: {path} is given twice as {name!r}: give it once")
    plain = name.partition("@")[0]
    if clash := next(
        (k for k in roots if k.partition("@")[0] == plain and (k == plain) != (name == plain)), None
    ):
        # a repository's branches are compared by name: one without a branch has none to compare
        raise ConfigError(
            f"{source}: {clash!r} and {name!r} name branches of one repository, one of them without its "
            f"branch: name it {plain}@BRANCH"
        )
    if name in roots:
        fix = "give each its own NAME" if named else "name them apart with NAME=PATH"
        raise ConfigError(f"{source}: two repositories are named {name!r} ({roots[name]} and {path}): {fix}")
    roots[name] = path


def _entry_store(entry: Mapping[str, Any], where: str) -> tuple[str, tuple[str, ...]]:
    """The store URL a ``[roots]`` entry or the ``[store]`` table names, with its replicas."""
    from repolens.store import check_store_url, store_urls

    url = entry.get("store") if "store" in entry else entry.get("url")
    if not isinstance(url, str):
        raise ConfigError(f"{where}: the store must be a PostgreSQL URL string")
    reads = store_urls(entry["read_url"], f"{where} read_url") if entry.get("read_url") else ()
    return check_store_url(url, where), reads


def _server_store(path: Path | None) -> dict[str, Any]:
    """The server config file's ``[store]`` table: the store of every root that names none."""
    if path is None or not path.is_file():
        return {}
    table = read_toml(path).get("store", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [store] must be a table")
    return table if table.get("url") else {}


def config_path(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path | None:
    """``explicit`` (must exist), else ``$REPOLENS_CONFIG`` (must exist), else ``./.repolens.toml``."""
    for raw, source in ((explicit, "--config"), (environ(CONFIG_ENV, env) or None, CONFIG_ENV)):
        if raw:
            path = check_user_path(f"{source}: config file", raw, ConfigError)
            if not os.path.isfile(path):  # False, not an error, for a folder it may not look into
                raise ConfigError(f"{source}: config file {shown_path(str(path))} does not exist")
            return path.resolve()
    local = Path(CONFIG_FILE)
    return local.resolve() if local.is_file() else None


def _root_items(table: Mapping[str, Any], src: str) -> list[tuple[str, str, dict[str, Any]]]:
    """``[roots]`` as (name, path, options): ``name = "path"``, ``"name@branch" =
    "path"``, ``name = { path = "...", store = "..." }`` (its index on a store
    server), or ``name = { branch = "path", ... }`` (each branch ``name@branch``,
    a path or a ``{ path, store }`` table)."""
    items: list[tuple[str, str, dict[str, Any]]] = []
    for name, raw in table.items():
        if isinstance(raw, dict) and "path" not in raw:
            items.extend(_root_item(f"{name}@{branch}", sub, src) for branch, sub in raw.items())
        else:
            items.append(_root_item(name, raw, src))
    return items


def _root_item(name: str, raw: Any, src: str) -> tuple[str, str, dict[str, Any]]:
    entry: dict[str, Any] = {}
    if isinstance(raw, dict):
        entry, raw = raw, raw.get("path")
    if not isinstance(raw, str):
        raise ConfigError(
            f"{src}: [roots] {name} must be a path string, {{ path = ..., store = ... }} "
            "or a table of branch = path"
        )
    return name, raw, entry


def registry_path(config_file: Path | None, env: Mapping[str, str]) -> Path | None:
    """The registry file: ``$REPOLENS_REGISTRY``, else the config file's
    ``[registry] path`` (relative to that file's folder), else None."""
    if raw := (environ(REGISTRY_ENV, env) or "").strip():
        return check_user_path(REGISTRY_ENV, raw, ConfigError).resolve()
    if config_file is None or not config_file.is_file():
        return None
    table = read_toml(config_file).get("registry", {})
    if not isinstance(table, dict) or set(table) - {"path"}:
        raise ConfigError(f"{config_file}: [registry] takes one key, path (the registry file)")
    if not (raw := table.get("path")):
        return None
    if not isinstance(raw, str):
        raise ConfigError(f"{config_file}: [registry] path must be a string")
    return check_user_path(
        f"{config_file}: [registry] path", raw, ConfigError, base=config_file.parent
    ).resolve()


def configured_roots(
    config_file: str | Path | None = None, *, missing_ok: bool = False
) -> tuple[dict[str, Path], Registry, dict[str, tuple[str, str]]]:
    """The roots a command-line use case sees, the registry, and (with
    ``missing_ok``) the configured roots whose folder is missing: the server
    config's roots (``--config``, ``$REPOLENS_CONFIG``, ``./.repolens.toml``;
    ``REPOLENS_ROOTS``), else the git worktrees of the current directory,
    each ``<repository>@<branch>``."""
    from repolens.branches.registry import load_registry
    from repolens.discover.worktree import worktrees

    config = load_roots(config_file=config_file, missing_ok=missing_ok)
    roots = dict(config.roots)
    if not roots and not config.missing and (trees := worktrees(resolve_root(None))):
        name = name_for(trees[0][0])
        roots = {f"{name}@{branch}": path for path, branch in trees}
    return roots, load_registry(config.registry), config.missing
