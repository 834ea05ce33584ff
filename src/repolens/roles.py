"""The vocabulary of what code is: the role of a path, the kind of a chunk,
and the weights and orders search and replies give them.

A path's role (:func:`path_role`) is what it is for: source, tests, docs,
generated or vendored code. Ranking uses it as a prior: a definition in
``src/`` is what an agent usually means, the same name in ``tests/`` or
``vendor/`` less often. The classification is by name only (folders, file
names, extensions), so it is cheap enough to run on every candidate of a
query and never reads a file.

Roles, checked in this order (the first that applies wins):

``vendored``   third-party code kept in the tree (``vendor/``, ``node_modules/``, ...)
``generated``  code written by tools (``*_pb2.py``, ``*.pb.go``, ``*.min.js``, ``generated/``)
``test``       tests and their fixtures (``tests/``, ``test_*.py``, ``*_test.go``, ``*.spec.ts``)
``example``    examples and demos (``examples/``, ``samples/``, ``demo/``)
``doc``        documentation (``docs/``, ``*.md``, ``*.rst``, ``README``)
``config``     configuration and build files (``*.toml``, ``*.yaml``, ``Dockerfile``)
``source``     everything else
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    PathRole = Literal["source", "test", "doc", "generated", "vendored", "config", "example"]
else:
    PathRole = str  # a search imports no typing (docs/development.md)

# How much a role's chunks count against source code with the same evidence
# when search ranks hits (search.priors; not applied to a role the query
# asks about, such as "the test for ...").
RANKING_WEIGHT: dict[str, float] = {
    "source": 1.0,
    "config": 0.8,
    "example": 0.8,
    "test": 0.7,
    "doc": 0.6,
    "generated": 0.5,
    "vendored": 0.5,
}
# How much a role's files count against source files with equal evidence in
# the ranked file overview (reply.files). Milder than RANKING_WEIGHT on
# purpose: it scales a file's sum of chunk relevances, which RANKING_WEIGHT
# has already discounted, so it only tips close calls toward source. The
# two were tuned apart; changing either changes replies.
OVERVIEW_WEIGHT: dict[str, float] = {
    "source": 1.0,
    "config": 0.9,
    "example": 0.85,
    "test": 0.8,
    "doc": 0.75,
    "generated": 0.6,
    "vendored": 0.6,
}
# Where a role's definitions go among equally good symbol matches
# (search.symbols): source first, vendored code last.
LISTING_RANK: dict[str, int] = {
    "source": 0,
    "example": 1,
    "test": 2,
    "config": 3,
    "doc": 4,
    "generated": 5,
    "vendored": 6,
}

# -- kinds: what a chunk is ----------------------------------------------------

# What an agent usually means by a name: callables and types. A symbol search
# lists these first, then the secondary kinds.
PRIMARY_DEFINITION_KINDS = frozenset(
    {"function", "method", "class", "struct", "interface", "trait", "enum", "type"}
)
SECONDARY_DEFINITION_KINDS = frozenset({"constant", "impl", "module"})
# Chunks that define something by name (the file overview says a file
# "defines" a name the query mentions only for these).
DEFINITION_KINDS = PRIMARY_DEFINITION_KINDS | SECONDARY_DEFINITION_KINDS
# Every chunk kind: a definition, a markdown section, a block of code between
# definitions, or a line window (files without a grammar). The kind filter
# of search and symbols takes these names.
KINDS = DEFINITION_KINDS | {"section", "block", "window"}
# Short names people type for a kind (keywords of the languages that define them).
KIND_ALIASES: dict[str, str] = {
    "func": "function",
    "fn": "function",
    "def": "function",
    "fun": "function",
    "cls": "class",
    "const": "constant",
    "mod": "module",
    "namespace": "module",
}

# -- roles: what a path is for -------------------------------------------------

_VENDORED_DIRS = frozenset(
    {
        "vendor",
        "vendors",
        "vendored",
        "_vendor",
        "third_party",
        "third-party",
        "thirdparty",
        "3rdparty",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "site-packages",
        "pods",
        "carthage",
        "deps",
    }
)
_GENERATED_DIRS = frozenset({"generated", "__generated__", "gen-src", "autogen"})
# File names are checked with str methods, not regular expressions: compiling
# these three took ~1 ms of every new process's search (docs/benchmarks.md,
# issue 15). tests/search/test_priors.py holds the patterns they replace and
# checks that both agree.
_GENERATED_SUFFIXES = (
    *("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi", "_pb.js", "_pb.d.ts"),
    *(".pb.go", ".pb.cc", ".pb.h", ".pb.c", ".pb.gw.go", "_gen.go"),
    *(".min.js", ".min.css", ".designer.cs", ".g.dart", ".freezed.dart"),
)


def _generated_name(name: str) -> bool:
    """Protobuf and gRPC stubs, minified bundles, ``zz_generated.*``, and
    ``*.generated.<ext>``, ``*_generated.<ext>``, ``*.gen.<ext>``."""
    if name.startswith("zz_generated.") or name.endswith(_GENERATED_SUFFIXES):
        return True
    stem, _, ext = name.rpartition(".")
    return bool(ext) and stem.endswith((".generated", "_generated", ".gen"))


_TEST_DIRS = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "test_data", "e2e", "__mocks__"}
)
_TEST_SUFFIXES = (
    *("_test.py", "_tests.py", "_spec.rb", "_test.rb"),
    *(f"_test.{ext}" for ext in ("go", "rs", "ex", "exs", "dart", "cc", "cpp", "c")),
    # foo.test.ts, foo.spec.mjs, foo.test.jsx, ...
    *(
        f".{kind}.{m}{js}s{x}"
        for kind in ("test", "spec")
        for m in ("", "c", "m")
        for js in "jt"
        for x in ("", "x")
    ),
    # FooTest.java, FooSpec.scala, FooIT.kt, ...
    *(
        f"{word}.{ext}"
        for word in ("Test", "Tests", "Spec", "IT")
        for ext in ("java", "kt", "scala", "cs", "php", "swift")
    ),
)
_TEST_NAMES = frozenset({"test.py", "tests.py", "conftest.py"})


def _test_name(name: str) -> bool:
    if name in _TEST_NAMES or name.endswith(_TEST_SUFFIXES):
        return True
    return name.startswith("test_") and name.endswith(".py") and len(name) > len("test_.py")


_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man"})
_DOC_EXTENSIONS = frozenset(
    {".md", ".markdown", ".mdx", ".rst", ".adoc", ".asciidoc", ".txt", ".org", ".rdoc"}
)
_DOC_STEMS = frozenset(
    {
        "readme",
        "changelog",
        "changes",
        "history",
        "license",
        "copying",
        "contributing",
        "authors",
        "news",
        "notice",
    }
)
_CONFIG_EXTENSIONS = frozenset(
    {".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".properties", ".lock", ".json", ".jsonc", ".plist"}
)
_CONFIG_NAMES = frozenset(
    {
        "dockerfile",
        "makefile",
        "cmakelists.txt",
        "requirements.txt",
        "gemfile",
        "rakefile",
        "procfile",
        "justfile",
        "pom.xml",
        "build.gradle",
        "settings.gradle",
        ".editorconfig",
        ".gitignore",
        ".gitattributes",
    }
)
_CONFIG_SUFFIXES = tuple(f".config.{m}{js}s" for m in ("", "c", "m") for js in "jt")


def _config_name(lname: str) -> bool:
    """``*.config.js`` (and ``.ts``, ``.mjs``, ...), ``tsconfig*.json``, and
    ``.<name>rc`` or ``.<name>rc.<ext>`` (``.eslintrc``, ``.babelrc.json``)."""
    if lname.endswith(_CONFIG_SUFFIXES) or (lname.startswith("tsconfig") and lname.endswith(".json")):
        return True
    if not lname.startswith("."):
        return False
    head, dot, ext = lname[1:].partition(".")
    return (
        len(head) > len("rc")
        and head.endswith("rc")
        and _word(head[:-2], "-")
        and (not dot or (bool(ext) and _word(ext)))
    )


def _word(text: str, extra: str = "") -> bool:
    """Whether every character of ``text`` is a word character (``\\w``) or in ``extra``."""
    return all(c.isalnum() or c == "_" or c in extra for c in text)


@lru_cache(maxsize=65_536)
def path_role(path: str) -> PathRole:
    """The role of a repository-relative POSIX path; see the module docstring.

    Cached: a pure function of the string, so the cache is never stale.
    """
    parts = PurePosixPath(path).parts
    if parts and ":" in parts[0]:  # labelled with its repository (app@main:tests/x.py): the path's role
        head = parts[0].split(":", 1)[1]
        parts = ((head,) if head else ()) + parts[1:]
    if not parts:
        return "source"
    dirs = [p.lower() for p in parts[:-1]]
    name = parts[-1]
    lname = name.lower()
    if any(d in _VENDORED_DIRS for d in dirs):
        return "vendored"
    if any(d in _GENERATED_DIRS for d in dirs) or _generated_name(name):
        return "generated"
    if any(d in _TEST_DIRS for d in dirs) or _test_name(name):
        return "test"
    if any(d in _EXAMPLE_DIRS for d in dirs):
        return "example"
    if lname in _CONFIG_NAMES or _config_name(lname):
        return "config"
    suffix = PurePosixPath(lname).suffix
    if any(d in _DOC_DIRS for d in dirs) or suffix in _DOC_EXTENSIONS:
        return "doc"
    if lname.split(".", 1)[0] in _DOC_STEMS and suffix in ("", ".txt"):
        return "doc"
    if suffix in _CONFIG_EXTENSIONS:
        return "config"
    return "source"
