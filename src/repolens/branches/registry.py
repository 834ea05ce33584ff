"""The registry: what a team says about its repositories, beside what is indexed.

An optional file (``[registry] path`` in the server config, or
``$REPOLENS_REGISTRY``), TOML or JSON by its suffix, lists repositories::

    [[repository]]                 # JSON: {"repositories": [{...}, ...]}
    name = "app"                   # required, as in [roots] (app@main, ...)
    project = "shop"
    base = "main"                  # compare_branches' base, and what `app` alone means
    head = "develop"               # compare_branches' head ("" or absent: none)
    description = "The storefront"
    url = "https://git.example.com/shop/app"

Every value is a string; an unknown key, a missing name or a name listed
twice is a ``ConfigError`` naming the file and the entry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from repolens.branches.names import NAME_PATTERN
from repolens.errors import ConfigError
from repolens.settings import read_toml

REGISTRY_ENV = "REPOLENS_REGISTRY"


@dataclass(frozen=True, slots=True)
class RegistryEntry:
    name: str
    project: str = ""
    base: str = ""
    head: str = ""
    description: str = ""
    url: str = ""

    def to_json(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


@dataclass(frozen=True)
class Registry:
    """Entries by name, in file order; empty when no registry is configured."""

    entries: Mapping[str, RegistryEntry]
    path: Path | None = None

    def get(self, name: str) -> RegistryEntry | None:
        return self.entries.get(name)

    def base_of(self, name: str) -> str | None:
        entry = self.entries.get(name)
        return entry.base or None if entry else None


EMPTY = Registry({})
_KEYS = tuple(f.name for f in fields(RegistryEntry))


def load_registry(path: Path | None) -> Registry:
    """The registry in ``path`` (``EMPTY`` for None); ``ConfigError`` with the fix otherwise."""
    if path is None:
        return EMPTY
    if not path.is_file():
        raise ConfigError(f"registry file {path} does not exist: create it or remove [registry] path")
    if path.suffix.lower() == ".json":
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc}): fix or remove it") from exc
    else:
        data = read_toml(path)
    items = data.get("repositories", data.get("repository")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(f"{path}: list repositories as [[repository]] tables (JSON: a repositories list)")
    entries: dict[str, RegistryEntry] = {}
    for n, item in enumerate(items, 1):
        entry = _entry(item, f"{path}: repository {n}")
        if entry.name in entries:
            raise ConfigError(f"{path}: repository {entry.name!r} is listed twice")
        entries[entry.name] = entry
    return Registry(entries, path)


def _entry(item: object, where: str) -> RegistryEntry:
    if not isinstance(item, dict):
        raise ConfigError(f"{where} must be a table of {', '.join(_KEYS)}")
    unknown = sorted(set(item) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known: {', '.join(_KEYS)}")
    for key, value in item.items():
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {key} must be a string, got {value!r}")
    name = item.get("name", "")
    if not re.fullmatch(NAME_PATTERN, name):
        raise ConfigError(f"{where}: name must be 1-64 letters, digits, '.', '_' or '-', got {name!r}")
    return RegistryEntry(**item)
