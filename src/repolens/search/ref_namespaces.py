"""What a ``?`` target means when a question is asked: the namespaces a use may name.

A file's extraction cannot always say which namespace a name it does not bind
belongs to (a C# ``using Billing.Models;``, a Java ``import q.*;``, a C header
it includes, another Rust crate): it keys the use ``?Invoice``
(:data:`repolens.chunking.refs.IN_NAMESPACES`), and the question, which can
read the other files' rows, tries each namespace the language says the name
may be in (:func:`namespace_targets`).
"""

from __future__ import annotations

from repolens.chunking.refs import package_key, split_key
from repolens.search import cargo
from repolens.search.kept import FILES_HELD, per_index
from repolens.store.base import IndexReader, RefRow

# Languages whose ``?`` targets are a file's with a package imported wholesale (Java's
# ``import q.*;``): the type is its package's or that one's, never a scope's or a bare name's.
_PACKAGE_STARS = frozenset({"java", "kotlin"})


def namespace_targets(reader: IndexReader, row: RefRow) -> list[str]:
    """The targets a ``?`` target (:data:`IN_NAMESPACES`: ``?Invoice.Total``) may mean: the
    rest in each namespace its file brings in wholesale (its ``*`` imports: C#'s ``using
    Billing.Models;``), in each namespace or class holding the use (the heads of its scope),
    and alone (the global namespace's, or one spelled out: ``?Billing.Models.Invoice``). In
    Java and Kotlin, in the file's package and in each package it imports wholesale (each is
    tried: which defines it is not looked up, so a type of both names both). In Rust, a
    member of another crate's type, when the repository defines that crate, or of a module
    of the file's library a relative path names (:func:`cargo.own_crate_target`)."""
    rest = row.target[1:]
    if row.language == "rust":  # a member of another crate's type: the repository's own crate's only
        own = cargo.own_crate_target(reader, row.target, row.path)
        return [own] if own else []
    if row.language in _INCLUDING:
        return _included_targets(reader, row.path, row.scope, rest)
    if row.language in _PACKAGE_STARS:
        package = package_key(row.path, row.language)
        return [f"{package}.{rest}", *(f"{h}.{rest}" for h in _wholesale(reader, row.path) if h)]
    parts = split_key(row.scope)
    heads = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    heads.update(_wholesale(reader, row.path))
    return [rest, *(f"{h}.{rest}" for h in sorted(heads) if h)]


# Languages whose ``?`` targets are a file's with a header it includes (:func:`_included_targets`).
_INCLUDING = frozenset({"c", "cpp"})


def _included_targets(reader: IndexReader, path: str, scope: str, rest: str) -> list[str]:
    """The targets ``?make_widget`` (``?Widget.create``) may mean in a C or C++ file: the name
    as declared by each header the file includes (``widget.make_widget``: a header and its source
    file share a key, so the definition in ``widget.cpp`` is one), alone or in each namespace
    holding the use (``ns.Widget``, the use in ``ns::run``); never the bare name, which any file
    of the repository may define."""
    parts = split_key(scope)
    heads = ["", *(".".join(parts[:i]) + "." for i in range(1, len(parts) + 1))]
    return [f"{header}.{head}{rest}" for header in included(reader, path) for head in heads]


@per_index(FILES_HELD)
def included(reader: IndexReader, path: str) -> tuple[str, ...]:
    """The keys of the headers a C or C++ file includes (its ``import`` rows binding no name)."""
    rows = reader.refs_of_files([path]).get(path, [])
    return tuple(sorted({r.target for r in rows if r.kind == "import" and r.target}))


@per_index(FILES_HELD)
def _wholesale(reader: IndexReader, path: str) -> tuple[str, ...]:
    """The namespaces ``path`` brings in wholesale (the targets of its ``*`` imports)."""
    rows = reader.refs_of_files([path]).get(path, [])
    return tuple(r.target for r in rows if r.kind == "import" and r.name == "*")
