"""Guess a file's language from its name (and, for a ``.h`` header, its text).

The language decides which chunker runs (syntax-aware for languages with a
grammar, headings for markdown, line windows for the rest) and is stored on
every chunk so searches can filter by it.

A ``.h`` header is C or C++ by its name alike, and most C++ projects keep
their headers in ``.h``: read as C, ``class Widget {...}`` is a function and
its methods are not symbols. :func:`language_of` reads the text as GitHub
linguist does (its ``.h`` heuristic, narrowed): C++ when, outside comments
and string literals, a line starts with ``class X``, ``struct X :``,
``namespace``, ``using namespace``, ``template <`` or an access specifier
(``public:``), or includes a C++ standard header (``#include <vector>``, no
``.h``), or the code holds ``::``; else C. The file alone decides, not the
repository's other files: a header-only C++ library has no ``.cpp``, and a
file's language must not change when another file is added or removed
(an unchanged file is not read again). Callers without the text (a path
only) keep :func:`language_for`, which says ``"c"``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_BY_EXTENSION: dict[str, str] = {
    # programming languages
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
    ".sc": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "bash",
    ".lua": "lua",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".jl": "julia",
    ".r": "r",
    ".R": "r",
    ".dart": "dart",
    ".zig": "zig",
    ".m": "objc",
    ".mm": "objc",
    ".pl": "perl",
    ".pm": "perl",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".elm": "elm",
    ".vue": "vue",
    ".svelte": "svelte",
    ".sql": "sql",
    ".proto": "proto",
    ".tf": "hcl",
    ".hcl": "hcl",
    ".groovy": "groovy",
    ".gradle": "groovy",
    # markup, config, data
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".adoc": "asciidoc",
    ".html": "html",
    ".htm": "html",
    ".css": "css",
    ".scss": "scss",
    ".sass": "scss",
    ".less": "css",
    ".json": "json",
    ".jsonc": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".conf": "ini",
    ".xml": "xml",
    ".cmake": "cmake",
}

_BY_NAME: dict[str, str] = {
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "Dockerfile": "dockerfile",
    "CMakeLists.txt": "cmake",
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Jenkinsfile": "groovy",
    "BUILD": "starlark",
    "WORKSPACE": "starlark",
}

# File extensions with a language of their own, as written in paths
# (``.py``, ``.R``): what makes the last dotted part of a name an extension.
EXTENSIONS = frozenset(_BY_EXTENSION)
# Every language a chunk can carry: what a language filter may name.
LANGUAGES = frozenset({*_BY_EXTENSION.values(), *_BY_NAME.values(), "text"})
# Short names people type for a language (a file extension, a nickname).
LANGUAGE_ALIASES: dict[str, str] = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "rs": "rust",
    "golang": "go",
    "c++": "cpp",
    "cs": "csharp",
    "c#": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "sh": "bash",
    "shell": "bash",
    "md": "markdown",
    "yml": "yaml",
    "objective-c": "objc",
    "terraform": "hcl",
}


def language_for(path: str) -> str:
    """The language name for a repository-relative path; ``"text"`` if unknown."""
    p = PurePosixPath(path)
    if p.name in _BY_NAME:
        return _BY_NAME[p.name]
    if p.name.startswith("Dockerfile"):
        return "dockerfile"
    return _BY_EXTENSION.get(p.suffix, _BY_EXTENSION.get(p.suffix.lower(), "text"))


# The names whose language their text decides (see the module's docstring).
_C_OR_CPP = frozenset({".h"})
_CPP_HEADERS = (
    "algorithm|any|array|atomic|bitset|cassert|cctype|cerrno|cfloat|chrono|climits|cmath|complex|"
    "condition_variable|cstdarg|cstddef|cstdint|cstdio|cstdlib|cstring|ctime|deque|exception|"
    "filesystem|format|forward_list|fstream|functional|future|initializer_list|iomanip|ios|iosfwd|"
    "iostream|istream|iterator|limits|list|locale|map|memory|mutex|new|numeric|optional|ostream|"
    "queue|random|ratio|regex|set|shared_mutex|span|sstream|stack|stdexcept|string|string_view|"
    "system_error|thread|tuple|type_traits|typeindex|typeinfo|unordered_map|unordered_set|utility|"
    "valarray|variant|vector"
)
# Compiled at first use, as _NOT_CODE: only a .h header's text being read
# (indexed, or re-chunked once changed) needs them, not a search.
_CPP_SIGNS = (
    r"(?m)^[ \t]*(?:"
    r"(?:class|struct)[ \t]+\w+[ \t]*(?:final[ \t]*)?:(?!:)"  # struct X : Base
    r"|class[ \t]+\w+"
    r"|(?:inline[ \t]+)?namespace\b|using[ \t]+namespace\b"
    r"|template[ \t]*<"
    r"|(?:public|private|protected)[ \t]*:(?!:)"
    rf"|\#[ \t]*include[ \t]*<(?:{_CPP_HEADERS})>"
    r")"
    r"|::"
)
# Comments and string or character literals, blanked before the signs are
# trusted (a comment saying "see Foo::bar", a string holding "::").
_NOT_CODE = r"(?s)//[^\n]*|/\*.*?(?:\*/|\Z)|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"


def looks_like_cpp(text: str) -> bool:
    """Whether a C-or-C++ header's text is C++ (the module's docstring says how)."""
    if re.search(_CPP_SIGNS, text) is None:  # most C headers: one scan, nothing blanked
        return False
    code = re.sub(_NOT_CODE, lambda m: "\n" * m.group().count("\n") or " ", text)
    return re.search(_CPP_SIGNS, code) is not None


def language_of(path: str, text: str) -> str:
    """The language of a file whose text is at hand: :func:`language_for`,
    except that a ``.h`` header whose text is C++ is ``"cpp"``."""
    language = language_for(path)
    if language == "c" and ambiguous(path) and looks_like_cpp(text):
        return "cpp"
    return language


def ambiguous(path: str) -> bool:
    """Whether ``path``'s language is decided by its text (C or C++), not its name alone."""
    return PurePosixPath(path).suffix.lower() in _C_OR_CPP
