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
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from repolens.errors import ConfigError

CONFIG_FILE = ".repolens.toml"
ENV_PREFIX = "REPOLENS_"


@dataclass(frozen=True)
class Settings:
    # discovery
    max_file_bytes: int = 1_048_576
    # chunking: "syntax" (tree-sitter where a grammar exists) or "windows"
    chunker: str = "syntax"
    # evidence packets
    top_k: int = 5
    max_chars: int = 6000
    hit_max_chars: int = 4000
    context_lines: int = 2
    # ranking: weight of the symbol leg (definitions the query names); 0 = off
    symbol_boost: float = 1.0


# (minimum, maximum) for integer settings; a value outside is a ConfigError.
_BOUNDS: dict[str, tuple[int, int]] = {
    "max_file_bytes": (1, 1 << 30),
    "top_k": (1, 50),
    "max_chars": (200, 1_000_000),
    "hit_max_chars": (100, 1_000_000),
    "context_lines": (0, 50),
}
_FLOAT_BOUNDS: dict[str, tuple[float, float]] = {"symbol_boost": (0.0, 100.0)}
_CHOICES: dict[str, tuple[str, ...]] = {"chunker": ("syntax", "windows")}


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


def load_settings(root: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Resolve settings for ``root``; ``overrides`` (call arguments) win, ``None`` values are ignored."""
    settings = Settings()
    if root is not None:
        path = root / CONFIG_FILE
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path} is not valid TOML ({exc}): fix or remove it") from exc
            section = data.get("repolens", data)
            if not isinstance(section, dict):
                raise ConfigError(f"{path}: [repolens] must be a table")
            settings = _from_mapping(settings, section, str(path))
    env = {
        f.name: os.environ[ENV_PREFIX + f.name.upper()]
        for f in fields(Settings)
        if ENV_PREFIX + f.name.upper() in os.environ
    }
    settings = _from_mapping(settings, env, "environment")
    if overrides:
        settings = _from_mapping(settings, {k: v for k, v in overrides.items() if v is not None}, "argument")
    return settings
