"""Settings: defaults <- config file <- environment <- call arguments.

The config file is ``.repolens.toml`` at the repository root (optional), with
keys at top level or under ``[repolens]``. Environment variables are
``REPOLENS_<KEY>`` in upper case. Every key is listed in the README table;
``SETTINGS`` below is the single source of truth for names, types, defaults
and bounds.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.errors import ConfigError
from repolens.validate import check_utf8

if TYPE_CHECKING:
    from repolens.models.factory import EmbedConfig

CONFIG_FILE = ".repolens.toml"
ENV_PREFIX = "REPOLENS_"


@dataclass(frozen=True)
class Settings:
    # discovery
    max_file_bytes: int = 1_048_576
    # chunking: "syntax" (tree-sitter where a grammar exists) or "windows"
    chunker: str = "syntax"
    # syntax chunks: definitions of at most this many lines are packed together
    chunk_merge_lines: int = 30

    # evidence packets
    top_k: int = 5
    max_chars: int = 6000
    hit_max_chars: int = 4000
    context_lines: int = 2
    # give each hit a fair share of the budget so the top hits all fit
    fair_share: bool = True
    # query understanding: identifiers and paths weigh more than prose, stopwords
    # are dropped (off = every query token at weight 1, as plain BM25)
    query_weights: bool = True
    # BM25 fields: a match in a name (x2) or signature (x1.5) counts more than
    # in a body. Off: it lost on every slice of the development set
    field_weights: bool = False
    # ranking: weight of the symbol leg (definitions the query names); 0 = off
    symbol_boost: float = 1.0
    # ranking: weight of files the query mentions (traceback paths, file names, scopes)
    path_boost: float = 0.5
    # ranking: scale scores by file role (source over tests, docs, generated)
    priors: bool = True
    # ranking: share of a file's other chunk scores added to each chunk
    file_weight: float = 0.5
    # ranking: the n-th chunk of one file counts diversity**n (1 = no spreading)
    diversity: float = 0.7
    # dense leg: compute vectors when indexing, and use them when searching
    vectors: bool = False
    dense: bool = True
    # dense leg: what is embedded for a chunk (see repolens.models.document)
    embed_style: str = "header+idents"
    # dense leg: how it is fused: rerank (re-scores the lexical candidates; won
    # on the development set), boost (also adds dense-only matches), or rrf
    fusion: str = "rerank"
    dense_weight: float = 0.5
    # dense leg: reuse vectors across indexes (branches, worktrees) from here
    embed_cache: str = ""
    # dense leg: from this many vectors, search an HNSW graph (usearch) instead
    # of every vector; 0 = always exact. Below 500k, exact search stays under
    # ~40 ms and ~770 MB, and is exact (docs/benchmarks.md)
    ann_min_vectors: int = 500_000


# (minimum, maximum) for integer settings; a value outside is a ConfigError.
_BOUNDS: dict[str, tuple[int, int]] = {
    "max_file_bytes": (1, 1 << 30),
    "top_k": (1, 50),
    "chunk_merge_lines": (0, 120),
    "max_chars": (200, 1_000_000),
    "hit_max_chars": (100, 1_000_000),
    "context_lines": (0, 50),
    "ann_min_vectors": (0, 1 << 40),
}
_FLOAT_BOUNDS: dict[str, tuple[float, float]] = {
    "symbol_boost": (0.0, 100.0),
    "file_weight": (0.0, 10.0),
    "dense_weight": (0.0, 100.0),
    "path_boost": (0.0, 100.0),
    "diversity": (0.0, 1.0),
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "chunker": ("syntax", "windows"),
    "embed_style": ("code", "header", "header+idents", "header+code"),
    "fusion": ("boost", "rrf", "rerank"),
}


def environ(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The environment variable ``name`` (from ``env``, default ``os.environ``),
    None when unset. Every variable repolens reads comes through here, so a
    value that is not UTF-8 is refused in one line naming it."""
    value = (os.environ if env is None else env).get(name)
    check_utf8(f"environment variable {name}", value, ConfigError, fix=f"set {name} to UTF-8 text")
    return value


def _coerce(key: str, value: Any, source: str) -> Any:
    default = getattr(Settings, key)
    if isinstance(default, bool):
        if isinstance(value, str):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
        elif isinstance(value, bool):
            return value
        raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
    if isinstance(default, float):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{source}: {key} must be a number, got {value!r}") from None
        flo, fhi = _FLOAT_BOUNDS.get(key, (float("-inf"), float("inf")))
        if not flo <= number <= fhi:
            raise ConfigError(f"{source}: {key} must be between {flo:g} and {fhi:g}, got {number:g}")
        return number
    if isinstance(default, int):
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{source}: {key} must be an integer, got {value!r}") from None
        lo, hi = _BOUNDS.get(key, (-(1 << 62), 1 << 62))
        if not lo <= number <= hi:
            raise ConfigError(f"{source}: {key} must be between {lo} and {hi}, got {number}")
        return number
    text = str(value)
    choices = _CHOICES.get(key)
    if choices and text not in choices:
        raise ConfigError(f"{source}: {key} must be one of {', '.join(choices)}, got {text!r}")
    return text


def _from_mapping(base: Settings, values: dict[str, Any], source: str) -> Settings:
    known = {f.name for f in fields(Settings)}
    changes = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"{source}: unknown setting {key!r}; known: {', '.join(sorted(known))}")
        changes[key] = _coerce(key, value, source)
    return replace(base, **changes)


def _config_file(root: Path | None) -> dict[str, Any]:
    if root is None:
        return {}
    path = root / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}): fix or remove it") from exc
    section = data.get("repolens", data)
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [repolens] must be a table")
    return section


def load_embed_config(root: Path | None = None) -> EmbedConfig:
    """Embedding settings: the ``[embed]`` table of the config file (or
    ``[repolens.embed]``), then ``REPOLENS_EMBED_<FIELD>`` variables."""
    from repolens.models.factory import EmbedConfig  # numpy: only when embeddings are wanted

    values: dict[str, Any] = {}
    table = _config_file(root).get("embed", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{CONFIG_FILE}: [embed] must be a table")
    values.update(table)
    for f in fields(EmbedConfig):
        if (value := environ(f"{ENV_PREFIX}EMBED_{f.name.upper()}")) is not None:
            values[f.name] = value
    return EmbedConfig.from_mapping(values)


def load_settings(root: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Resolve settings for ``root``; ``overrides`` (call arguments) win, ``None`` values are ignored."""
    settings = Settings()
    # [embed] is read by load_embed_config; [serve] and [roots] by repolens.server.config.
    section = {k: v for k, v in _config_file(root).items() if k not in ("embed", "rerank", "serve", "roots")}
    if section:
        settings = _from_mapping(settings, section, str(root / CONFIG_FILE) if root else CONFIG_FILE)
    env = {
        f.name: value for f in fields(Settings) if (value := environ(ENV_PREFIX + f.name.upper())) is not None
    }
    settings = _from_mapping(settings, env, "environment")
    if overrides:
        settings = _from_mapping(settings, {k: v for k, v in overrides.items() if v is not None}, "argument")
    return settings
