"""Tree-sitter grammars and what their nodes mean.

Each supported language has a :class:`LangSpec`: which PyPI grammar package
provides it (all are binary wheels with the parser compiled in: nothing is
downloaded at run time), which node types are definitions and of what kind,
how a definition's name and qualified name are found, and which sibling nodes
(doc comments, decorators, attributes) belong to the definition after them.

Kinds form a small fixed vocabulary (:data:`repolens.roles.KINDS`). A node type maps either
to a kind (the name is the node's ``name`` field; classes, modules and other
containers have their members in the ``body`` field) or to a handler
function for anything less regular. Handlers get the node and the enclosing
:class:`Scope` and return a :class:`Found` or ``None`` (not a definition).

Modules: ``base`` (kinds, :class:`LangSpec`, the helpers handlers share),
then one module per language family, each exporting its ``SPECS``:
``scripting`` (Python, Ruby, PHP, Lua, Bash, Perl, Julia), ``web``
(JavaScript, TypeScript, TSX, Dart), ``c_family`` (C, C++, Objective-C,
C#), ``jvm`` (Java, Kotlin, Scala, Groovy), ``systems`` (Go, Rust, Zig,
Swift), ``functional`` (Haskell, Elixir, OCaml). This module holds the
registry and loads the grammars.

Qualified names follow each language's idiom: ``Class.method`` for most,
``Type::method`` for Rust and C++, ``(*Recv).Method`` / ``Recv.Method`` for
Go, ``Mod::Class#method`` / ``Mod::Class.method`` for Ruby, ``-[Class sel:]``
for Objective-C, ``Pkg::sub`` for Perl. Block-scoped namespaces are part of
the name (C++, C#, Rust ``mod``, TS ``namespace``, Ruby/Elixir/Julia/OCaml
modules); file-level package declarations (Java, Kotlin, Scala, Go, PHP) are
not.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
import threading
import warnings

import tree_sitter as ts

from repolens.chunking.grammars import c_family, functional, jvm, scripting, systems, web
from repolens.chunking.grammars.base import (
    CLASS_KINDS,
    CONTAINER_KINDS,
    Found,
    Handler,
    LangSpec,
    Scope,
    classify,
    qualify,
    text,
)
from repolens.roles import KIND_ALIASES, KINDS  # the kind vocabulary, re-exported

__all__ = [
    "CLASS_KINDS",
    "CONTAINER_KINDS",
    "KINDS",
    "KIND_ALIASES",
    "SPECS",
    "Found",
    "Handler",
    "LangSpec",
    "Scope",
    "available_languages",
    "classify",
    "grammar_versions",
    "load_language",
    "parser_for",
    "qualify",
    "spec_for",
    "text",
]

# Every supported language by its repolens name.
SPECS: dict[str, LangSpec] = {
    s.name: s for family in (scripting, web, c_family, jvm, systems, functional) for s in family.SPECS
}


def spec_for(language: str, path: str = "") -> LangSpec | None:
    """The spec for ``language`` (``path`` picks OCaml interfaces, C and C++ headers), or ``None``."""
    spec = SPECS.get(language)
    if spec is not None and language == "ocaml" and path.endswith(".mli"):
        return functional.OCAML_INTERFACE
    if spec is not None and language in ("c", "cpp") and path.lower().endswith(c_family.HEADER_EXTENSIONS):
        return c_family.C_HEADER if language == "c" else c_family.CPP_HEADER
    return spec


# Parsers hold state while parsing: one per thread and grammar.
_local = threading.local()


@functools.cache
def load_language(module: str, entry: str) -> ts.Language | None:
    """The grammar from an installed wheel; ``None`` if it is missing or incompatible.

    Cached for the process: installed packages do not change under it.
    """
    try:
        capsule = getattr(importlib.import_module(module), entry)()
        if isinstance(capsule, int):  # perl's wheel returns a raw pointer (deprecated form)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return ts.Language(capsule)
        return ts.Language(capsule)
    except (ImportError, AttributeError, ValueError, TypeError):
        return None


def parser_for(spec: LangSpec) -> ts.Parser | None:
    cache: dict[tuple[str, str], ts.Parser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    key = (spec.module, spec.entry)
    parser = cache.get(key)
    if parser is None:
        lang = load_language(spec.module, spec.entry)
        if lang is None:
            return None
        parser = cache[key] = ts.Parser(lang)
    return parser


def available_languages() -> list[str]:
    """Language names whose grammar is installed and loads."""
    return sorted(name for name, s in SPECS.items() if load_language(s.module, s.entry) is not None)


@functools.cache
def grammar_versions() -> tuple[tuple[str, str], ...]:
    """``(package, version)`` of tree-sitter and every grammar package, for index fingerprints."""
    packages = sorted({"tree-sitter", *(s.package for s in SPECS.values())})
    found = _dist_info_folders()
    return tuple((pkg, _installed_version(pkg, found)) for pkg in packages)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _dist_info_folders() -> dict[str, str]:
    """Each distribution's metadata folder (``.dist-info`` or ``.egg-info``)
    by normalized name: the first on ``sys.path``, as :mod:`importlib.metadata`
    finds it. One listing per ``sys.path`` folder for all packages."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            children = os.listdir(entry or ".")
        except OSError:
            continue
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                found.setdefault(
                    _normalize(low.rpartition(".")[0].partition("-")[0]), os.path.join(entry, child)
                )
    return found


def _installed_version(package: str, found: dict[str, str]) -> str:
    """The version :func:`importlib.metadata.version` gives (``-`` when the
    package is not installed), read from the ``Version:`` header of the
    wheel's METADATA. Importing :mod:`importlib.metadata` (its email parser,
    ...) and asking it costs more than a small repository's whole
    discovery, so it is only the fallback for anything else (an egg, a
    metadata file without that header, a package not found here)."""
    folder = found.get(_normalize(package))
    if folder is not None and folder.lower().endswith(".dist-info"):
        try:
            with open(os.path.join(folder, "METADATA"), encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Version:"):
                        return line.removeprefix("Version:").strip()
                    if not line.strip():  # end of the headers
                        break
        except OSError:
            pass
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"
