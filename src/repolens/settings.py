"""Settings: defaults <- config file <- environment <- call arguments.

The config file is ``.repolens.toml`` at the repository root (optional), with
keys at top level or under ``[repolens]``. Environment variables are
``REPOLENS_<KEY>`` in upper case. Every key is listed in docs/configuration.md;
:class:`Settings` below is the single source of truth for names, types and
defaults, ``_BOUNDS``/``_FLOAT_BOUNDS``/``_CHOICES`` for what each accepts.
Every value of every section goes through one coercer (:func:`coerce`);
a stage's own section (``[embed]``, ``[rerank]``) is read by the stage's
settings type (:mod:`repolens.models.embed_config`,
:mod:`repolens.models.rerank_config`) through :func:`section_values`, so
this module imports no stage.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

from repolens.errors import ConfigError, RepolensError, UsageError
from repolens.validate import (
    MAX_BUDGET,
    MAX_CONTEXT_LINES,
    MAX_TOP_K,
    MIN_BUDGET,
    check_language,
    check_utf8,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

CONFIG_FILE = ".repolens.toml"
ENV_PREFIX = "REPOLENS_"


@dataclass(frozen=True)
class Settings:
    """Every setting: its name, type and default (docs/configuration.md lists each one)."""

    # discovery
    max_file_bytes: int = 1_048_576
    # discovery: index only files of these languages (names or aliases, as
    # --lang takes them); () = every language
    languages: tuple[str, ...] = ()
    # chunking: "syntax" (tree-sitter where a grammar exists) or "windows"
    chunker: str = "syntax"
    # syntax chunks: definitions of at most this many lines are packed together
    chunk_merge_lines: int = 30

    # evidence packets
    top_k: int = 5
    max_chars: int = 6000
    hit_max_chars: int = 4000
    context_lines: int = 2
    # packets: name up to this many files in all, the ones after the hits'
    # own as one-line pointers to their best span (0 = no pointers)
    cite_files: int = 10
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
    # ranking: the n-th chunk of one file counts diversity**n (1 = no spreading).
    # 0.8 since packets name the next files as pointers: the hits can go
    # deeper into the best files (Line@5 +3 points, docs/benchmarks.md)
    diversity: float = 0.8
    # ranking: "tuned" (the fused score of the legs orders the candidates) or
    # "learned" (a model over every leg's features: repolens.search.learned)
    ranking: str = "learned"
    # dense leg: compute vectors when indexing, and use them when searching
    vectors: bool = False
    dense: bool = True
    # dense leg: what is embedded for a chunk (see repolens.models.document)
    embed_style: str = "header+idents"
    # dense leg: how it is fused: rerank (re-scores the lexical candidates; won
    # on the development set), boost (also adds dense-only matches), or rrf
    fusion: str = "rerank"
    dense_weight: float = 0.5
    # dense leg, rerank fusion: when lexical search is weak (fewer candidates
    # than a packet shows, or a chunk closer in meaning than every lexical
    # candidate), the dense leg's own best matches join the candidates
    dense_fallback: bool = True
    # dense leg: reuse vectors across indexes (branches, worktrees) from here
    embed_cache: str = ""
    # dense leg: from this many vectors, search an HNSW graph (usearch) instead
    # of every vector; 0 = always exact. Below 500k, exact search stays under
    # ~40 ms and ~770 MB, and is exact (docs/benchmarks.md)
    ann_min_vectors: int = 500_000
    # history leg: how many of the branch's newest commits are indexed (0 = none)
    history_commits: int = 5000
    # history leg: weight of the files that past commits like the question
    # touched (0 = off). 0.5 won on the development set (docs/benchmarks.md)
    history_weight: float = 0.5
    # a question about a repository whose first index another process is
    # building (a server started beside its indexer) waits this many seconds
    # for it to be published, then says it is being built
    index_wait: float = 30.0

    # test runs: the Python whose pytest runs the tests (a path, relative to
    # the root, or a command on PATH); "" = the root's .venv or venv, else
    # pytest on PATH (repolens.testrun.runners.pytest_command)
    test_python: str = ""


# (minimum, maximum) for integer settings; a value outside is a ConfigError.
_BOUNDS: dict[str, tuple[int, int]] = {
    "max_file_bytes": (1, 1 << 30),
    "top_k": (1, MAX_TOP_K),
    "chunk_merge_lines": (0, 120),
    "max_chars": (MIN_BUDGET, MAX_BUDGET),
    "hit_max_chars": (100, MAX_BUDGET),
    "context_lines": (0, MAX_CONTEXT_LINES),
    "cite_files": (0, 50),
    "ann_min_vectors": (0, 1 << 40),
    "history_commits": (0, 1_000_000),
}
_FLOAT_BOUNDS: dict[str, tuple[float, float]] = {
    "symbol_boost": (0.0, 100.0),
    "file_weight": (0.0, 10.0),
    "dense_weight": (0.0, 100.0),
    "path_boost": (0.0, 100.0),
    "diversity": (0.0, 1.0),
    "history_weight": (0.0, 100.0),
    "index_wait": (0.0, 3600.0),
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "chunker": ("syntax", "windows"),
    "embed_style": ("code", "header", "header+idents", "header+code"),
    "fusion": ("boost", "rrf", "rerank"),
    "ranking": ("tuned", "learned"),
}


# The tables a config file may hold besides the settings (read by
# repolens.models.embed_config and .rerank_config, repolens.server.config and
# repolens.store.locate); ``[repolens]`` holds the settings when it is there.
CONFIG_TABLES = ("embed", "rerank", "serve", "roots", "registry", "store")


# The meta key recording the chunking settings an index was built with.
CHUNKING_SETTINGS = "chunking_settings"


def chunking_settings(settings: Settings) -> str:
    """The settings that decide the chunks, as an index records them and a
    note names them (``chunker=syntax, chunk_merge_lines=30``)."""
    return f"chunker={settings.chunker}, chunk_merge_lines={settings.chunk_merge_lines}"


def environ(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The environment variable ``name`` (from ``env``, default ``os.environ``),
    None when unset. Every variable repolens reads comes through here, so a
    value that is not UTF-8 is refused in one line naming it."""
    value = (os.environ if env is None else env).get(name)
    check_utf8(f"environment variable {name}", value, ConfigError, fix=f"set {name} to UTF-8 text")
    return value


def coerce(
    key: str,
    value: Any,
    hint: Any,
    *,
    where: str = "",
    bounds: tuple[float, float] | None = None,
    choices: Sequence[str] = (),
    error: type[RepolensError] = ConfigError,
) -> Any:
    """``value`` (from TOML, an environment string or an argument) as the type
    ``hint`` names: ``bool``, ``int``, ``float`` or ``str``, optionally
    ``| None`` (then None passes). The one conversion every setting goes
    through: ``[repolens]`` keys, ``[embed]``, ``[rerank]`` and ``[serve]``.

    Booleans take ``true``/``false`` and the strings 1/0, true/false,
    yes/no, on/off; numbers take numbers or their text, but never a boolean,
    and an integer never a fraction; strings must be strings; a tuple (of
    strings) takes a list of strings or one comma-separated string. ``bounds``
    (inclusive) and ``choices`` narrow the value. Anything else raises
    ``error`` with one line: ``where`` (the source, such as ``"environment:
    "``) then ``key must be ..., got value``.
    """
    target = _target_type(hint)
    if value is None and target is not hint:
        return None
    if target is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise error(f"{where}{key} must be true or false, got {value!r}")
    if target is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
            raise error(f"{where}{key} must be a list of strings, got {value!r}")
        return tuple(v.strip() for v in items if v.strip())
    if target is str:
        if not isinstance(value, str):
            raise error(f"{where}{key} must be a string, got {value!r}")
        if choices and value not in choices:
            raise error(f"{where}{key} must be one of {', '.join(choices)}, got {value!r}")
        return value
    noun = "an integer" if target is int else "a number"
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        number = target(value)
        if target is int and isinstance(value, float) and value != number:
            raise ValueError(value)
    except (TypeError, ValueError):
        raise error(f"{where}{key} must be {noun}, got {value!r}") from None
    if bounds is not None and not bounds[0] <= number <= bounds[1]:
        lo, hi, got = (f"{n:g}" if target is float else str(n) for n in (*bounds, number))
        raise error(f"{where}{key} must be between {lo} and {hi}, got {got}")
    return number


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _target_type(hint: Any) -> type:
    """``int`` for ``int`` and for ``int | None``."""
    if isinstance(hint, types.UnionType):
        return next(a for a in hint.__args__ if a is not type(None))
    return hint


def _from_mapping(
    base: Settings, values: dict[str, Any], source: str, spelled: Callable[[str], str] = str
) -> Settings:
    """``base`` with ``values`` (from ``source``) coerced over it; an error
    names each key as ``spelled`` writes it (a variable's own name)."""
    known = {f.name for f in fields(Settings)}
    changes = {}
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"{source}: unknown setting {key!r}; known: {', '.join(sorted(known))}")
        default = getattr(Settings, key)
        changes[key] = coerce(
            spelled(key),
            value,
            type(default),
            where=f"{source}: ",
            bounds=_BOUNDS.get(key) or _FLOAT_BOUNDS.get(key),
            choices=_CHOICES.get(key, ()),
        )
        if key == "languages":
            changes[key] = _languages(changes[key], source)
    return replace(base, **changes)


def _languages(names: tuple[str, ...], source: str) -> tuple[str, ...]:
    """The ``languages`` setting in canonical names (aliases such as ``py``
    mapped), each once and sorted: an index records it, and the same
    languages given otherwise are the same setting."""
    try:
        return tuple(sorted({name for name in map(check_language, names) if name}))
    except UsageError as exc:
        raise ConfigError(f"{source}: languages: {exc}") from None


def read_toml(path: Path) -> dict[str, Any]:
    """The top-level table of the TOML file ``path``; ConfigError (with the fix) when it is not TOML."""
    import tomllib  # only when a config file exists

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}): fix or remove it") from exc


def config_table(root: Path | None) -> dict[str, Any]:
    """The repository's config file as a dict: its ``[repolens]`` table, or the
    whole file when it has none; {} without a root or a file."""
    if root is None:
        return {}
    path = root / CONFIG_FILE
    if not path.is_file():
        return {}
    data = read_toml(path)
    section = data.get("repolens", data)
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [repolens] must be a table")
    return section


def section_values(root: Path | None, section: str, names: Iterable[str]) -> dict[str, Any]:
    """The ``[section]`` table of the config file (or ``[repolens.section]``),
    then the ``REPOLENS_<SECTION>_<NAME>`` variables of ``names`` over it."""
    table = config_table(root).get(section, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{CONFIG_FILE}: [{section}] must be a table")
    values: dict[str, Any] = dict(table)
    for name in names:
        if (value := environ(f"{ENV_PREFIX}{section.upper()}_{name.upper()}")) is not None:
            values[name] = value
    return values


def section_given(root: Path | None, section: str) -> bool:
    """Whether ``[section]`` (or ``[repolens.section]``) is in the config file
    or any ``REPOLENS_<SECTION>_*`` variable is set: when neither is, the
    section's settings are its defaults, without reading them."""
    prefix = f"{ENV_PREFIX}{section.upper()}_"
    return section in config_table(root) or any(name.startswith(prefix) for name in os.environ)


def section_config(cls: type[T], section: str, values: Mapping[str, Any], error: type[RepolensError]) -> T:
    """The dataclass ``cls`` of one config section from a dict (config file,
    environment): keys with or without the ``section.`` prefix, each value
    coerced to its field's type (:func:`coerce`), None keeps the default, an
    unknown key is refused. Errors are ``error``, naming ``section.key``."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    import typing  # a stage's own section only: a search imports no typing

    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        name = key.removeprefix(f"{section}.")
        if name not in known:
            raise error(f"unknown setting {section}.{name}; valid: {', '.join(sorted(known))}")
        if value is not None:
            kwargs[name] = coerce(f"{section}.{name}", value, hints[name], error=error)
    return cls(**kwargs)


def load_section(cls: type[T], root: Path | None, section: str, error: type[RepolensError]) -> T:
    """The dataclass ``cls`` of ``[section]`` for ``root``: the config file's
    table, then the ``REPOLENS_<SECTION>_<FIELD>`` variables over it
    (:func:`section_values`), read as :func:`section_config` reads a dict.
    How a stage's own settings type (``[embed]``, ``[rerank]``) is loaded."""
    names = (f.name for f in fields(cls))  # type: ignore[arg-type]
    return section_config(cls, section, section_values(root, section, names), error)


# The keys of the [embed] and [rerank] tables, each with the type its stage reads
# it as: the fields of repolens.models.embed_config.EmbedConfig and
# .rerank_config.RerankConfig, which import this module (tests/test_settings.py
# holds them equal). A stage reads its table only when it runs (vectors on, a
# reranker set up), and a misspelt key or value must not wait for that, when every
# other key of the file is refused at once.
_TEXT = str | None
STAGE_KEYS: dict[str, dict[str, Any]] = {
    "embed": {
        "api_key_env": _TEXT,
        "base_url": _TEXT,
        "batch_size": int | None,
        "dim": int | None,
        "document_prefix": _TEXT,
        "family": _TEXT,
        "max_tokens": int | None,
        "model": _TEXT,
        "model_path": _TEXT,
        "path": _TEXT,
        "pooling": _TEXT,
        "provider": str,
        "query_prefix": _TEXT,
        "threads": int | None,
        "timeout": float | None,
        "tokenizer_path": _TEXT,
    },
    "rerank": {
        "batch_size": int,
        "max_tokens": int,
        "model_path": _TEXT,
        "path": _TEXT,
        "provider": str,
        "threads": int | None,
        "tokenizer_path": _TEXT,
        "top_n": int,
        "weight": float,
    },
}
# The values a stage key takes: the embedders (repolens.models.factory), the
# families of repolens.models.local.PRESETS and its poolings, the rerankers.
STAGE_CHOICES: dict[str, tuple[str, ...]] = {
    "embed.provider": ("onnx", "local", "openai", "fake", "none"),
    "embed.family": (
        "sentence-transformers",
        "coderankembed",
        "nomic",
        "bge",
        "arctic",
        "e5",
        "gte",
        "jina-code",
    ),
    "embed.pooling": ("mean", "cls", "last", "auto"),
    "rerank.provider": ("none", "local"),
}
# The keys whose stage reads them with spaces around and case aside (pooling is taken as written).
_STAGE_FOLDED = frozenset({"embed.provider", "embed.family", "rerank.provider"})
# (minimum, maximum) of a stage's numbers that hold for every provider.
STAGE_BOUNDS: dict[str, tuple[float, float]] = {
    "rerank.max_tokens": (8, 1 << 20),
    "rerank.top_n": (1, 1000),
    "rerank.weight": (0, 100),
    "rerank.threads": (0, 1024),
    "rerank.batch_size": (1, 4096),
}


def check_stage_value(
    section: str,
    name: str,
    value: Any,
    *,
    where: str = "",
    spelled: str = "",
    error: type[RepolensError] = ConfigError,
) -> Any:
    """``value`` of ``section.name`` as its stage reads it (:func:`coerce`, then
    :data:`STAGE_CHOICES` and :data:`STAGE_BOUNDS`), or ``error`` in one line
    naming the key (as ``spelled``, a variable's own name, when given) and
    what it takes."""
    key = f"{section}.{name}"
    named = spelled or key
    value = coerce(
        named, value, STAGE_KEYS[section][name], where=where, bounds=STAGE_BOUNDS.get(key), error=error
    )
    choices = STAGE_CHOICES.get(key, ())
    read = value.strip().lower() if key in _STAGE_FOLDED and value is not None else value
    if choices and read is not None and read not in choices:
        raise error(f"{where}{named} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _check_stage_tables(table: Mapping[str, Any], source: str) -> None:
    """``[embed]`` and ``[rerank]``: a table each, of known keys (see
    :data:`STAGE_KEYS`), each value one its stage takes."""
    for section, known in STAGE_KEYS.items():
        values = table.get(section)
        if values is None:
            continue
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: [{section}] must be a table")
        for key, value in values.items():
            name = key.removeprefix(f"{section}.")
            if name not in known:
                raise ConfigError(
                    f"{source}: unknown setting {section}.{name}; valid: {', '.join(sorted(known))}"
                )
            check_stage_value(section, name, value, where=f"{source}: ")


def _check_stage_environment() -> None:
    """The ``REPOLENS_EMBED_<KEY>`` and ``REPOLENS_RERANK_<KEY>`` variables of
    the stages' keys, as :func:`_check_stage_tables` checks the file's: a bad
    one surfaced only when its stage ran (mid-search, or never for a command
    that does not embed). Other names under those prefixes are not the
    stages' (``REPOLENS_EMBED_STYLE`` is ``embed_style``, ``REPOLENS_EMBED_API_KEY``
    a key), so only the keys are read."""
    for section, known in STAGE_KEYS.items():
        for name in known:
            variable = f"{ENV_PREFIX}{section.upper()}_{name.upper()}"
            if (value := environ(variable)) is not None:
                check_stage_value(section, name, value, where="environment: ", spelled=variable)


def load_settings(root: Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    """Resolve settings for ``root``; ``overrides`` (call arguments) win, ``None`` values are ignored."""
    settings = Settings()
    # [embed] and [rerank] are read by repolens.models.embed_config and .rerank_config; [serve],
    # [roots] and [registry] by repolens.server.config and repolens.branches.roots;
    # [store] by repolens.store.locate.
    table = config_table(root)
    source = str(root / CONFIG_FILE) if root else CONFIG_FILE
    section = {k: v for k, v in table.items() if k not in CONFIG_TABLES}
    if section:
        settings = _from_mapping(settings, section, source)
    _check_stage_tables(table, source)
    _check_stage_environment()
    env = {
        f.name: value for f in fields(Settings) if (value := environ(ENV_PREFIX + f.name.upper())) is not None
    }
    settings = _from_mapping(settings, env, "environment", lambda key: ENV_PREFIX + key.upper())
    if overrides:
        given = {k: v for k, v in overrides.items() if v is not None}
        try:
            settings = _from_mapping(settings, given, "argument")
        except ConfigError as exc:  # a call's own argument is a usage error, as every other one is
            raise UsageError(str(exc).removeprefix("argument: ")) from None
    return settings
