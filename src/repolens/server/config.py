"""What a server serves, and to whom: repositories by name, the bearer token,
the query log and whether remote callers may rebuild.

Sources, later wins: the server config file (``--config``, else
``$REPOLENS_CONFIG``, else ``.repolens.toml`` in the current directory; its
``[serve]`` table), then the environment, then command-line options. The
repositories served, and the ``[roots]``, ``[store]`` and ``[registry]``
tables that name them, are read by :mod:`repolens.branches.roots`.

```toml
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
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repolens.branches.roots import ROOTS_ENV, config_path, load_roots
from repolens.errors import ConfigError, RootError, UsageError
from repolens.settings import CONFIG_FILE, CONFIG_TABLES, coerce, environ, read_toml
from repolens.store import Binding
from repolens.validate import check_user_path, shown_path

TOKEN_ENV = "REPOLENS_TOKEN"
TOKEN_FILE_ENV = "REPOLENS_TOKEN_FILE"
QUERY_LOG_ENV = "REPOLENS_QUERY_LOG"
PAGE_ENV = "REPOLENS_PAGE"
METRICS_ENV = "REPOLENS_METRICS"
ACCESS_LOG_ENV = "REPOLENS_ACCESS_LOG"
METRICS_CHOICES = ("token", "open", "off")
ACCESS_LOG_STDERR = "stderr"
ACCESS_LOG_OFF = "off"

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


def read_serve_table(path: Path | None) -> dict[str, Any]:
    """The ``[serve]`` table of ``path`` ({} when there is no file), every key known."""
    if path is None or not path.is_file():
        return {}
    data = read_toml(path)
    known = sorted({*CONFIG_TABLES, "repolens"})
    if strange := sorted(k for k, v in data.items() if isinstance(v, dict) and k not in known):
        raise ConfigError(f"{path}: unknown table [{strange[0]}]; known: {', '.join(known)}")
    serve = data.get("serve", {})
    if not isinstance(serve, dict):
        raise ConfigError(f"{path}: [serve] must be a table")
    unknown = sorted(set(serve) - set(SERVE_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown [serve] key {unknown[0]!r}; known: {', '.join(SERVE_KEYS)}")
    return serve


def read_token_file(path: Path, source: str) -> str:
    path = check_user_path(f"{source}: token file", path, ConfigError)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{source}: token file {shown_path(str(path))} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc.__class__.__name__
        raise ConfigError(f"{source}: cannot read token file {shown_path(str(path))} ({reason})") from None
    token = check_token(text.strip(), f"token file {shown_path(str(path))}")
    _warn_if_readable(path)
    return token


def _warn_if_readable(path: Path) -> None:
    """A line on stderr when others than its owner may read the token file
    (a secret; stdout is the protocol's on stdio, so stderr it is)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return
    if mode & 0o077:
        print(
            f"repolens: warning: token file {shown_path(str(path))} is readable by other users "
            f"(mode {mode:o}): chmod 600 {shown_path(str(path))}",
            file=sys.stderr,
            flush=True,
        )


def check_token(token: str, source: str) -> str:
    """A usable bearer token: at least 16 printable ASCII characters, no spaces."""
    if len(token) < MIN_TOKEN_CHARS or not _TOKEN_RE.match(token):
        raise ConfigError(
            f"{source}: the bearer token must be at least {MIN_TOKEN_CHARS} printable ASCII characters "
            f"without spaces: {TOKEN_HINT}"
        )
    return token


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

    ``read_token=False`` (stdio) leaves the token sources alone. The roots,
    and ``missing_ok``, are :func:`repolens.branches.roots.load_roots`'s.
    """
    env = os.environ if env is None else env
    path = config_path(config_file, env)
    serve = read_serve_table(path)
    base = path.parent if path else None
    src = str(path) if path else CONFIG_FILE
    configured = load_roots(config_file=path, root_specs=root_specs, missing_ok=missing_ok, env=env)

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

    def flag(given: bool | None, key: str, default: bool) -> bool:
        return given if given is not None else coerce(key, serve.get(key, default), bool, where=f"{src}: ")

    http = _http_options(serve, env, src, base)

    return ServeConfig(
        roots=configured.roots,
        token=token,
        token_source=token_source,
        query_log=log_path.resolve() if log_path else None,
        allow_rebuild=flag(allow_rebuild, "allow_rebuild", False),
        allow_tests=flag(allow_tests, "allow_tests", False),
        watch=flag(watch, "watch", True),
        config_file=path,
        registry=configured.registry,
        missing=configured.missing,
        bindings=configured.bindings,
        store_flag=configured.store_flag,
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


def announce_missing(config: ServeConfig) -> None:
    """A server's configured roots whose folder is missing (unmounted,
    deleted): each named on stderr, and the others served, not refused for
    one; with none left to serve, the first one's error."""
    if not config.missing:
        return
    require_roots(config)
    for name, (_, error) in config.missing.items():
        print(
            f"repolens: warning: {name} is not served: {error}; serving {', '.join(config.roots)} "
            "(and it, once its folder is back)",
            file=sys.stderr,
            flush=True,
        )


def missing_folders(config: ServeConfig) -> dict[str, Path]:
    """The configured roots whose folder is missing, name -> that folder: a
    server looks there again when a call names one (:class:`repolens.server.repos.Repos`)."""
    return {name: Path(folder) for name, (folder, _) in config.missing.items()}


def require_roots(config: ServeConfig) -> dict[str, Path]:
    """The roots to serve; none is an error (the first missing folder's, when every one is missing)."""
    if not config.roots and config.missing:
        raise RootError(next(iter(config.missing.values()))[1])
    if not config.roots:
        raise UsageError(
            "no repository to serve: pass --root PATH or --root NAME=PATH (repeatable), "
            f"set {ROOTS_ENV}=name=/path,..., or add a [roots] table to {CONFIG_FILE}"
        )
    return config.roots
