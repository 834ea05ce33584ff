"""Guess a file's language from its name.

The language decides which chunker runs (syntax-aware for languages with a
grammar, headings for markdown, line windows for the rest) and is stored on
every chunk so searches can filter by it.
"""

from __future__ import annotations

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
