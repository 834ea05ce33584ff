"""What a server serves, and to whom: repositories by name, the bearer token,
the query log and whether remote callers may rebuild.

Sources, later wins: the server config file (``--config``, else
``$REPOLENS_CONFIG``, else ``.repolens.toml`` in the current directory; its
``[serve]`` and ``[roots]`` tables), then the environment, then command-line
options. Roots are not merged across sources: the first source that names any
root (command line, then ``REPOLENS_ROOTS``, then ``[roots]``) names them all.

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

[serve]
token_file = "/etc/repolens/token"   # or REPOLENS_TOKEN / REPOLENS_TOKEN_FILE
query_log = "/var/log/repolens.jsonl" # or REPOLENS_QUERY_LOG
allow_rebuild = false
page = true                          # or REPOLENS_PAGE: the search page of serve --http
metrics = "token"                    # or REPOLENS_METRICS: /metrics behind the token, "open" or "off"
access_log = "stderr"                # or REPOLENS_ACCESS_LOG: a JSON line per HTTP request; "off" or a file
```
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repolens.branches.names import REF_RE
from repolens.branches.registry import REGISTRY_ENV, Registry
from repolens.errors import ConfigError, RootError, UsageError
from repolens.settings import coerce, environ, read_toml
from repolens.store import Binding, bind_root, locate, store_flag, use_store_flag
from repolens.validate import check_dir, check_user_path, resolve_root, shown_path

CONFIG_FILE = ".repolens.toml"
CONFIG_ENV = "REPOLENS_CONFIG"
ROOTS_ENV = "REPOLENS_ROOTS"
TOKEN_ENV = "REPOLENS_TOKEN"
TOKEN_FILE_ENV = "REPOLENS_TOKEN_FILE"
QUERY_LOG_ENV = "REPOLENS_QUERY_LOG"
PAGE_ENV = "REPOLENS_PAGE"
METRICS_ENV = "REPOLENS_METRICS"
ACCESS_LOG_ENV = "REPOLENS_ACCESS_LOG"
METRICS_CHOICES = ("token", "open", "off")
ACCESS_LOG_STDERR = "stderr"
ACCESS_LOG_OFF = "off"

# A repository name travels in tool arguments and URLs: keep it plain
# (a branch may follow: app@main, see repolens.branches.names).
NAME_RE = REF_RE
MIN_TOKEN_CHARS = 16
_TOKEN_RE = re.compile(r"^[\x21-\x7e]+$")  # printable ASCII, no spaces: safe in a header
SERVE_KEYS = (
    "token_file",
    "query_log",
    "allow_rebuild",
    "allow_tests",
    "watch",
    "page",
    "metrics",
    "access_log",
)
TOKEN_HINT = "generate one with `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`"


@dataclass(frozen=True)
class ServeConfig:
    """Everything a server needs besides its transport.

    ``roots`` keeps its order: the first root is the default of a local
    (stdio) server. ``token`` is None when no source names one.
    """

    roots: dict[str, Path] = field(default_factory=dict)
    token: str | None = None
    token_source: str = ""
    query_log: Path | None = None
    allow_rebuild: bool = False
    allow_tests: bool = False
    watch: bool = True
    config_file: Path | None = None
    registry: Path | None = None
    # refresh --all: configured roots whose folder is missing: name -> (path as given, error)
    missing: dict[str, tuple[str, str]] = field(default_factory=dict)
    # what the config says of each root's index, and this process's --store:
    # re-applied by a worker process (apply_bindings), which starts without them
    bindings: dict[Path, Binding] = field(default_factory=dict)
    store_flag: str | None = None
    # serve --http: the search page on or off, who may read /metrics (token,
    # open, off), and where the access log goes (stderr, off, or a file)
    page: bool = True
    metrics: str = "token"
    access_log: str | Path = ACCESS_LOG_STDERR


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
            from repolens.store.postgres.connect import redact

            shown = f"{redact(place[0])}#{place[1]}" if where.store else place[1]
            raise ConfigError(
                f"{src}: repositories {seen[place]} and {name} would share one index ({shown}), "
                f"both being {root}: name each folder once"
            )
        seen[place] = name


def name_for(path: Path) -> str:
    """A repository name derived from a folder name (``my repo`` -> ``my-repo``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", path.name).strip("-._")[:64]
    return name or "repo"


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
            missing[name or name_for(Path(raw))] = (raw, str(exc))
            continue
        _add_root(roots, name or name_for(path), path, source)
    return roots


def _add_root(roots: dict[str, Path], name: str, path: Path, source: str) -> None:
    if not NAME_RE.match(name):
        raise ConfigError(
            f"{source}: repository name {name!r} must be 1-64 letters, digits, '.', '_' or '-', "
            "optionally followed by @BRANCH"
        )
    if name in roots:
        raise ConfigError(f"{source}: two repositories are named {name!r}: name them with NAME=PATH")
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


def read_config_file(path: Path | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``[serve]`` and ``[roots]`` tables of ``path`` (both empty when there is no file)."""
    if path is None or not path.is_file():
        return {}, {}
    data = read_toml(path)
    serve, roots = data.get("serve", {}), data.get("roots", {})
    if not isinstance(serve, dict) or not isinstance(roots, dict):
        raise ConfigError(f"{path}: [serve] and [roots] must be tables")
    unknown = sorted(set(serve) - set(SERVE_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown [serve] key {unknown[0]!r}; known: {', '.join(SERVE_KEYS)}")
    return serve, roots


def read_token_file(path: Path, source: str) -> str:
    path = check_user_path(f"{source}: token file", path, ConfigError)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: token file {shown_path(str(path))} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc.__class__.__name__
        raise ConfigError(f"{source}: cannot read token file {shown_path(str(path))} ({reason})") from None
    return check_token(text.strip(), f"token file {shown_path(str(path))}")


def check_token(token: str, source: str) -> str:
    """A usable bearer token: at least 16 printable ASCII characters, no spaces."""
    if len(token) < MIN_TOKEN_CHARS or not _TOKEN_RE.match(token):
        raise ConfigError(
            f"{source}: the bearer token must be at least {MIN_TOKEN_CHARS} printable ASCII characters "
            f"without spaces: {TOKEN_HINT}"
        )
    return token


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


def load_serve_config(
    *,
    config_file: str | os.PathLike[str] | None = None,
    root_specs: Iterable[str] = (),
    token_file: str | os.PathLike[str] | None = None,
    query_log: str | os.PathLike[str] | None = None,
    allow_rebuild: bool | None = None,
    allow_tests: bool | None = None,
    watch: bool | None = None,
    read_token: bool = True,
    missing_ok: bool = False,
    env: Mapping[str, str] | None = None,
) -> ServeConfig:
    """Resolve a server's configuration; raises ``ConfigError``/``RootError`` with the fix.

    ``read_token=False`` (stdio) leaves the token sources alone.
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
    serve, table = read_config_file(path)
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
                missing[name] = (raw, str(exc))
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

    token, token_source = None, ""
    if not read_token:
        pass
    elif token_file:
        token, token_source = read_token_file(Path(token_file), "--token-file"), "--token-file"
    elif env_token := environ(TOKEN_ENV, env):
        token, token_source = check_token(env_token.strip(), TOKEN_ENV), TOKEN_ENV
    elif env_token_file := environ(TOKEN_FILE_ENV, env):
        token, token_source = read_token_file(Path(env_token_file), TOKEN_FILE_ENV), TOKEN_FILE_ENV
    elif serve.get("token_file"):
        token_path = check_user_path(
            f"{src} [serve] token_file", str(serve["token_file"]), ConfigError, base=base
        )
        token = read_token_file(token_path, src)
        token_source = f"{src} [serve] token_file"

    log_path: Path | None = None
    if query_log:
        log_path = check_user_path("--query-log", query_log, ConfigError)
    elif env_log := environ(QUERY_LOG_ENV, env):
        log_path = check_user_path(QUERY_LOG_ENV, env_log, ConfigError)
    elif serve.get("query_log"):
        log_path = check_user_path(
            f"{src} [serve] query_log", str(serve["query_log"]), ConfigError, base=base
        )

    registry = registry_path(path, env)

    def flag(given: bool | None, key: str, default: bool) -> bool:
        return given if given is not None else coerce(key, serve.get(key, default), bool, where=f"{src}: ")

    http = _http_options(serve, env, src, base)

    return ServeConfig(
        roots=roots,
        token=token,
        token_source=token_source,
        query_log=log_path.resolve() if log_path else None,
        allow_rebuild=flag(allow_rebuild, "allow_rebuild", False),
        allow_tests=flag(allow_tests, "allow_tests", False),
        watch=flag(watch, "watch", True),
        config_file=path,
        registry=registry,
        missing=missing,
        bindings=bindings,
        store_flag=given_store,
        **http,
    )


def _http_options(
    serve: Mapping[str, Any], env: Mapping[str, str], src: str, base: Path | None
) -> dict[str, Any]:
    """``page``, ``metrics`` and ``access_log`` of ``serve --http``: each from
    its environment variable, else the config file's ``[serve]``, else the
    default of :class:`ServeConfig`."""
    defaults = ServeConfig()

    def given(key: str, variable: str) -> tuple[Any, str, Path | None]:
        """The value, where it came from (for a message) and the folder a relative path is under."""
        if (raw := environ(variable, env)) is not None:
            return raw, variable, None
        return serve.get(key, getattr(defaults, key)), f"{src} [serve] {key}", base

    raw, where, _ = given("page", PAGE_ENV)
    page = coerce("page", raw, bool, where=f"{where}: ")
    raw, where, _ = given("metrics", METRICS_ENV)
    metrics = coerce("metrics", raw, str, where=f"{where}: ", choices=METRICS_CHOICES)
    raw, where, folder = given("access_log", ACCESS_LOG_ENV)
    if not isinstance(raw, str | Path) or not str(raw).strip():
        raise ConfigError(
            f"{where}: access_log must be {ACCESS_LOG_STDERR!r}, {ACCESS_LOG_OFF!r} or a file's path"
        )
    access_log: str | Path = str(raw).strip()
    if access_log not in (ACCESS_LOG_STDERR, ACCESS_LOG_OFF):
        access_log = check_user_path(where, access_log, ConfigError, base=folder).resolve()
    return {"page": page, "metrics": metrics, "access_log": access_log}


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


def require_roots(config: ServeConfig) -> dict[str, Path]:
    if not config.roots:
        raise UsageError(
            "no repository to serve: pass --root PATH or --root NAME=PATH (repeatable), "
            f"set {ROOTS_ENV}=name=/path,..., or add a [roots] table to {CONFIG_FILE}"
        )
    return config.roots


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

    config = load_serve_config(config_file=config_file, read_token=False, missing_ok=missing_ok)
    roots = dict(config.roots)
    if not roots and not config.missing and (trees := worktrees(resolve_root(None))):
        name = name_for(trees[0][0])
        roots = {f"{name}@{branch}": path for path, branch in trees}
    return roots, load_registry(config.registry), config.missing
