"""References: each use of a name in a file, and the key it resolves to.

A chunker finds definitions (:class:`repolens.chunking.Symbol`); the
reference extractor (:mod:`repolens.chunking.refs.extract`, run on the same
tree) finds the uses: calls, imports, attribute and type uses, base classes,
decorators, and reads of the names a file imports or defines. Each is a
:class:`Ref`: the name used, its line, its kind, the definition it sits in
(``scope``) and, where the language's scope and import rules allow it from
this file alone, the ``target`` it resolves to, as a *key*:

``=Q``          the definition ``Q`` (a qualified name) of this same file
``^C.name``     ``name`` looked up in the bases of class ``C`` of this file (``super()``)
``a.b.c.Q``     the definition ``Q`` of the module ``a.b.c``, as the file names it (an
                import, a package's own name): parts joined by ``.``, whatever the
                language's separator (``/``, ``::``)
``?N.name``     the type ``N`` (and its member ``name``) of a namespace the file brings in
                wholesale (C#'s ``using Billing.Models;``) or of one holding the use, or of
                none: which is known when a question is asked (:data:`IN_NAMESPACES`)
``""``          unresolved: a *name match*, labelled so in replies

A key names a module the way the importing file spells it, which is the end
of the path of the file defining it (``repolens.chunking.Chunk`` is
``src/repolens/chunking/__init__.py``'s ``Chunk``): :func:`definition_keys`
gives every key that means a definition, and a search compares the two as
strings. Nothing here needs another file, so an edit to one file changes
only that file's references (resolution across files happens when a
question is asked: :mod:`repolens.search.references`).

A ``field`` row is no use: it says that the class ``C`` (its scope is
``C.x``) declares its field ``x`` of the type its target names, so that
``obj.x.name`` in another file, ``obj`` of type ``C``, can be resolved when
a question is asked; its scope is a function's own name when the function
declares what it returns (Go's ``func NewC() *C``, Python's ``def f() -> C``
or ``return C()``: ``f().name``), a method's when it is the method's result
(``c.make().name``). A ``member`` row is no use either: the Go interface
``I`` (its scope is ``I.m``, its target ``I``'s key) declares the method
``m``, so the types having all of ``I``'s methods are found when a question
is asked. Nor is a ``fixture`` row, a pytest fixture (:mod:`.fixtures`),
whose keys ``@N`` and ``@N.a.b`` name a fixture as a test's file sees it.
Nor is an ``access`` row, Rust's field read or written after a dot
(``self.short``, beside the method ``fn short``): a method there is called
(``.short(``) or named by a path (``Self::short``, an ``attr``), so the row
is kept apart when it is written, not told from the line when a question is asked.

``binds`` is the name a module-level import or export binds in this file
(``from .base import Model`` in a package's ``__init__``, ``export default
foo``): a key through which other files may reach the definition
(a re-export).

A file's references travel as :class:`RefRows`: one text row per reference
(its six fields tab-separated, in line order) and the distinct names they
use. That is the form the store keeps (compressed, ``repolens.store.ref_rows``)
and a worker process sends; the extractor writes the rows as it finds the
uses, so a use costs no object of its own (a million-line corpus holds ~1.3
million uses). :meth:`RefRows.refs` reads them back as :class:`Ref` s.

This module holds what the read path needs; it imports no grammar.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from repolens.record import Record

# Kinds of use, in the order a reply lists them.
REF_KINDS = ("call", "base", "decorator", "type", "import", "export", "attr", "name")
# Kinds of row that are no use: what a file says of its definitions' types, read when
# a question is asked (a typed field or result, a Go interface's method, a pytest fixture),
# and a field's access (``RefSpec.field_access``: no field is a definition a question names).
FIXTURE_KIND = "fixture"
ACCESS_KIND = "access"
NO_USE_KINDS = frozenset({"field", "member", FIXTURE_KIND, ACCESS_KIND})


class Ref(Record):
    """One use of a name in a file (see the module docstring)."""

    name: str
    line: int
    kind: str
    scope: str = ""  # the qualified name of the innermost definition holding the use
    target: str = ""  # the key it resolves to; "" for a name match
    binds: str = ""  # a module-level import or export: the name it binds here


class RefRows(Record):
    """A file's references as text (see the module docstring): ``text`` is
    one row per reference, ``name, line, kind, scope, target, binds``
    tab-separated (a tab or newline in a scope made a space: a qualified
    name may hold one), rows joined by newlines in line order; ``names`` the
    distinct names they use, sorted."""

    text: str
    names: tuple[str, ...]

    def refs(self) -> list[Ref]:
        """The rows as references."""
        out = []
        for row in self.text.split("\n"):
            name, line, kind, scope, target, binds = row.split("\t")
            out.append(Ref(name, int(line), kind, scope, target, binds))
        return out


_CLEAN = str.maketrans({"\t": " ", "\n": " "})


def clean_scope(scope: str) -> str:
    """``scope`` as a row holds it (no tab, no newline)."""
    return scope.translate(_CLEAN)


def ref_row(ref: Ref) -> str:
    """The row of one reference (see :class:`RefRows`)."""
    name, line, kind, scope, target, binds = ref
    return f"{name}\t{line}\t{kind}\t{clean_scope(scope)}\t{target}\t{binds}"


def ref_rows(refs: Sequence[Ref]) -> RefRows | None:
    """``refs`` (in line order) as rows; None for none."""
    if not refs:
        return None
    return RefRows("\n".join(map(ref_row, refs)), tuple(sorted({r.name for r in refs})))


# How the module of a file is named, by language: "stem" languages name a
# module by its folders and file (Python, JavaScript, Rust, ...), "folder"
# ones by its folders alone (a Go package, a Java package: the file's name
# is not part of what imports say).
_FOLDER_LANGUAGES = frozenset({"go", "java", "kotlin", "scala", "groovy", "csharp", "swift", "dart"})
# File names that stand for their folder, by language (others: none).
_INDEX_STEMS = {
    "python": frozenset({"__init__"}),
    "javascript": frozenset({"index"}),
    "typescript": frozenset({"index"}),
    "tsx": frozenset({"index"}),
    "rust": frozenset({"mod", "lib", "main"}),
}
_PARTS = re.compile(r"::|[./\\:#]")
# The package of a folder language's file at the repository's top (Go's
# module root, Java's default package): its import path is not a folder (Go's
# is the module path ``go.mod`` names, matched when a question is asked), so
# its definitions and the uses the other files of that package make of them
# are keyed by this part instead.
ROOT_PACKAGE = "~"
# Languages whose namespaces are declared in the code, not named by folders or files (C#'s
# ``namespace Billing.Models``, Ruby's ``module Shop``): a definition is keyed by its qualified
# name wherever it is, by the other files of its namespace and of its class (a C# partial
# class, a Ruby module or class reopened) as by its own.
QUALIFIED_LANGUAGES = frozenset({"csharp", "ruby"})


def split_key(key: str) -> list[str]:
    """The parts of a key or qualified name (``Type::method``, ``(*T).M`` -> ``T``, ``M``);
    a line break or tab in one is a space (a C++ template specialization's name spans lines:
    a key is a row's field, one line)."""
    return [p for p in _PARTS.split(key.replace("(*", "").replace(")", "").translate(_CLEAN)) if p]


def namespace_at(starts: Sequence[tuple[int, str]], line: int) -> str:
    """The key of the namespace ``line`` of a file is in, given where each of the file's
    namespaces starts (``starts``: first line, key, in line order): the last to start by the
    line ("" none: the global one). PHP's ``namespace App\\Shop;`` statements and ``namespace
    X { }`` blocks alike: the rule a file's uses are keyed by (:mod:`.targets`), and a question
    reads where a definition is declared by (:mod:`repolens.search.php`)."""
    k = bisect.bisect_left(starts, (line + 1, "")) - 1
    return starts[k][1] if k >= 0 else ""


def enclosing(qualname: str) -> str:
    """The qualified name holding ``qualname`` ("" none), whatever its separator
    (``geo`` of ``geo::Square``, ``Item`` of ``Item.Builder``)."""
    starts = [m.start() for m in _PARTS.finditer(qualname)]
    return qualname[: starts[-1]] if starts else ""


def module_parts(path: str, language: str) -> list[str]:
    """The parts naming ``path``'s module, as an import spells their end."""
    p = PurePosixPath(path)
    folders = [part for part in p.parent.parts if part not in ("", ".")]
    if language in _FOLDER_LANGUAGES:
        return folders
    stem = p.name.split(".")[0] if language in ("javascript", "typescript", "tsx") else p.stem
    if stem in _INDEX_STEMS.get(language, ()):
        return folders
    return [*folders, *split_key(stem)]


# The head of a key naming a type by its name alone, in a namespace the file brings in or one
# holding the use (C#): a question tries each (repolens.search.ref_namespaces.namespace_targets); in
# Rust, a type of another crate, the repository's own perhaps (?clap.Arg).
IN_NAMESPACES = "?"

# The name a Kotlin class's companion object has when it names none: its members are the class's.
COMPANION = "Companion"
_COMPANION_OBJECT = r"\bcompanion\s+object\b"  # compiled at first use: a search needs none


def companion_object(signature: str) -> bool:
    """Whether a Kotlin definition's signature declares a companion object (named or not:
    ``companion object Factory``), whose members are its class's (``A.build()``)."""
    return re.search(_COMPANION_OBJECT, signature) is not None


TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing costs a search in a new process ~3 ms to import)
    from typing import Protocol

    class _Definition(Protocol):
        name: str
        qualname: str
        kind: str
        parent: str


def extension_function(s: _Definition) -> bool:
    """Whether definition ``s`` (a chunker's symbol or a stored one) is a function declared on
    a receiver type (Kotlin's ``fun String.shout()``, named ``String.shout``): a file calls it
    by its name on a value of that type (``x.shout()``), and imports it by that name."""
    return not s.parent and s.kind == "function" and s.qualname != s.name


def qualname_forms(qualname: str, language: str) -> list[str]:
    """``qualname`` as a key spells it, and the other names its language gives the
    definition (a Kotlin companion object's member is its class's: ``Repo.create``
    of ``Repo.Companion.create``)."""
    parts = split_key(qualname)
    forms = [".".join(parts)]
    if language == "kotlin" and COMPANION in parts[:-1]:
        forms.append(".".join([p for p in parts[:-1] if p != COMPANION] + parts[-1:]))
    return forms


def definition_keys(path: str, qualname: str, language: str) -> frozenset[str]:
    """Every key an importing file may spell for the definition ``qualname``
    of ``path``: its module's parts from any folder down, then its
    qualified name (at least one module part: a bare name is a name match);
    in a language naming its definitions by namespace (:data:`QUALIFIED_LANGUAGES`)
    its qualified name too."""
    parts = module_parts(path, language) or ([ROOT_PACKAGE] if language in _FOLDER_LANGUAGES else [])
    keys: set[str] = set()
    for form in qualname_forms(qualname, language):
        own = form.split(".") if form else []
        full = [*parts, *own]
        keys.update(".".join(full[i:]) for i in range(len(parts)))
        if language in QUALIFIED_LANGUAGES and own:
            keys.add(form)
    return frozenset(keys)


def package_key(path: str, language: str) -> str:
    """The key prefix of names visible without import in ``path``'s package
    (Go, Java, Kotlin, ...: the other files of its folder), "" when the
    language has no such package."""
    if language not in _FOLDER_LANGUAGES:
        return ""
    return ".".join(module_parts(path, language)) or ROOT_PACKAGE


def same_file_key(qualname: str) -> str:
    return "=" + ".".join(split_key(qualname))


def type_name(key: str) -> str:
    """The name of the type a key means (``Cls`` of ``=Cls`` and of ``a.b.Cls``):
    what a ``field`` row is named, so that a question about ``Cls`` reads it."""
    return split_key(key.lstrip("=^?"))[-1]


__all__ = [
    "ACCESS_KIND",
    "COMPANION",
    "FIXTURE_KIND",
    "IN_NAMESPACES",
    "NO_USE_KINDS",
    "QUALIFIED_LANGUAGES",
    "REF_KINDS",
    "ROOT_PACKAGE",
    "Ref",
    "RefRows",
    "clean_scope",
    "companion_object",
    "definition_keys",
    "enclosing",
    "module_parts",
    "namespace_at",
    "package_key",
    "qualname_forms",
    "ref_row",
    "ref_rows",
    "same_file_key",
    "split_key",
    "type_name",
]
