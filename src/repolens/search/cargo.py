"""Rust's crate names, for :mod:`repolens.search.references`.

A crate's library is named from outside its source by the crate's name:
its tests, examples and benches (``use clap::Arg``, or a full path with no
``use``: ``clap::Arg::new()``, keyed alike) and the other crates of
its workspace (``use clap_builder::Command``) spell ``clap::Arg``, where
the crate's own modules spell ``crate::Arg`` (kept as ``Arg``: a key is the
end of a path). A file alone cannot say that name (its path has none: a
definition is keyed by its modules' folders,
:func:`repolens.chunking.refs.definition_keys`), so it is read here from
the nearest ``Cargo.toml`` above the file (``[package] name``, ``-`` read
as ``_`` as Cargo does; a ``[lib] name`` overrides it), when a question is
asked:

* a definition of the library's source (the folder of its root,
  ``src/lib.rs`` unless ``[lib] path`` says otherwise; not ``src/main.rs``
  nor ``src/bin/``, which are binaries no other crate names) has the key
  ``<crate>.<module path in the crate>.<name>`` too (:func:`import_key`); its
  re-exports (``pub use builder::Arg`` in ``lib.rs``) give their keys the
  same way, so ``clap.Arg`` is ``crate::builder::arg::Arg``'s;
* a use in the library's source is also read with its crate's name before
  its target (:func:`crate_target`): ``crate::Arg::new()`` in ``lib.rs``,
  kept as ``Arg.new``, is ``clap.Arg.new``, the root's re-export.

A crate with no library root in the index has no such keys: the name of
another crate is never taken for it.

A type another crate defines types a file's locals under ``?`` and its
crate's name (``use clap::Arg; let a = Arg::new("x"); a.get_id()``:
``?clap.Arg.get_id``; a file alone cannot say whose crate ``clap`` is):
:func:`own_crate_target` places it when the repository defines that crate,
as the same crate's type would be; another crate's (``std``'s ``Rc``,
serde's from crates.io) stays a name match. A path that no crate but a
module of the file's library starts (the 2015 edition's ``use
de::value::X`` in serde, relative to the crate's root; the 2018 edition's
``use value::X`` in ``de/mod.rs``, relative to the file's module) is placed
in that module (:func:`module_key`: ``serde.de.value.X``), read from the
index's files when a question is asked.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath

from repolens.chunking.refs import IN_NAMESPACES, module_parts, split_key
from repolens.search.kept import FILES_HELD, INDEXES_HELD, per_index, text_of
from repolens.store.base import IndexReader

_LIB_ROOT = "src/lib.rs"  # Cargo's default library root, below the package's folder


@dataclass(frozen=True)
class Crate:
    """A package's library: its name as code spells it, the folder of its root, the root."""

    name: str
    source: str  # the folder of the library's root ("" the repository's top)
    root: str


@per_index(INDEXES_HELD)
def crates(reader: IndexReader) -> dict[str, Crate | None]:
    """The folder of each ``Cargo.toml`` the index holds ("" the repository's top) -> its
    library (None: a package with none, or a workspace's manifest alone); read once per
    index content."""
    paths = set(reader.paths())
    found = {}
    for path in sorted(paths):
        if path == "Cargo.toml" or path.endswith("/Cargo.toml"):
            folder = path.removesuffix("Cargo.toml").rstrip("/")
            found[folder] = _library(reader, path, folder, paths)
    return found


def _library(reader: IndexReader, manifest: str, folder: str, paths: set[str]) -> Crate | None:
    """The library a ``Cargo.toml`` declares, when its root is indexed (None otherwise, or
    when the manifest cannot be read: no key is better than a wrong one)."""
    try:
        data = tomllib.loads(text_of(reader, manifest))
    except tomllib.TOMLDecodeError:
        return None
    package, lib = data.get("package"), data.get("lib")
    package = package if isinstance(package, dict) else {}
    lib = lib if isinstance(lib, dict) else {}
    name = lib.get("name") or package.get("name")
    if not isinstance(name, str) or not package:
        return None
    root_in_package = lib.get("path") if isinstance(lib.get("path"), str) else _LIB_ROOT
    root = str(PurePosixPath(folder, root_in_package)) if folder else str(PurePosixPath(root_in_package))
    if root not in paths:
        return None
    source = str(PurePosixPath(root).parent)
    return Crate(name.replace("-", "_"), "" if source == "." else source, root)


@per_index(FILES_HELD)
def library_of(reader: IndexReader, path: str) -> tuple[Crate, list[str]] | None:
    """The library whose source holds ``path``, and the module path of ``path`` in it (None:
    no library's: a test, an example, a binary)."""
    known = crates(reader)
    folder = PurePosixPath(path).parent.parts
    for i in range(len(folder), -1, -1):
        here = "/".join(folder[:i])
        if here not in known:
            continue
        crate = known[here]  # the nearest Cargo.toml's package is the file's
        if crate is None:
            return None
        if path == crate.root:
            return crate, []
        source = PurePosixPath(crate.source).parts if crate.source else ()
        if folder[: len(source)] != source:
            return None
        inside = PurePosixPath(path).parts[len(source) :]
        if inside == ("main.rs",) or inside[0] == "bin":
            return None
        parts = module_parts(path, "rust")[len(source) :]
        return crate, parts
    return None


@per_index(INDEXES_HELD)
def crate_names(reader: IndexReader) -> frozenset[str]:
    """The names of the libraries the index holds, as code spells them."""
    return frozenset(c.name for c in crates(reader).values() if c is not None)


def own_crate_target(reader: IndexReader, target: str, path: str) -> str:
    """A ``?`` target of the Rust file ``path`` (``?clap.Arg.get_id``: a member of a value of
    another crate's type) as a key, when its crate is one the repository defines, or when its
    head is no crate but a module of the file's own (:func:`module_key`); "" otherwise: its
    members are name matches, as no type would place them."""
    rest = target.removeprefix(IN_NAMESPACES)
    head = rest.partition(".")[0]
    if head in crate_names(reader):
        return rest
    module = module_key(reader, path, head)
    return f"{module}{rest[len(head) :]}" if module else ""


@per_index(FILES_HELD)
def module_key(reader: IndexReader, path: str, head: str) -> str:
    """The key of the module ``head`` a relative ``use head::..`` of ``path`` names in the
    file's library, by its crate's name (``serde.de``): a module the file's own holds (the 2018
    edition's ``use value::X`` in ``de/mod.rs``), else one of the crate's root (the 2015
    edition's ``use de::value::X`` anywhere in serde); "" when the library has no such module
    file (another crate's path, or a file of no library)."""
    found = library_of(reader, path)
    if found is None:
        return ""
    crate, parts = found
    files = _rust_files(reader)
    for module in ([*parts, head], [head]):
        folder = PurePosixPath(crate.source, *module) if crate.source else PurePosixPath(*module)
        if f"{folder}.rs" in files or f"{folder}/mod.rs" in files:
            return ".".join([crate.name, *module])
    return ""


@per_index(INDEXES_HELD)
def _rust_files(reader: IndexReader) -> frozenset[str]:
    """The paths of the index's Rust files."""
    return frozenset(p for p in reader.paths() if p.endswith(".rs"))


def import_key(reader: IndexReader, path: str, qualname: str) -> str:
    """The key another crate (or the package's tests) spells for the definition
    ``qualname`` of ``path``: the crate's name, the module path, the name; "" when
    ``path`` is no library's source."""
    found = library_of(reader, path)
    if found is None:
        return ""
    crate, parts = found
    return ".".join([crate.name, *parts, *split_key(qualname)])


def crate_target(reader: IndexReader, path: str, target: str) -> str:
    """``target`` of a use in ``path`` with its crate's name before it (``crate::Arg::new``
    in the library's source, kept as ``Arg.new``: ``clap.Arg.new``); "" outside a library."""
    found = library_of(reader, path)
    return f"{found[0].name}.{target}" if found is not None else ""
