"""Which lines of source are prose (comments, docstrings) rather than code.

A packet that must cut a definition keeps its best lines. A docstring or a
comment says in words what the code does, so it holds a question's words
more often than the code that does the work; when both match, the code is
what an agent needs to see. This tells them apart from the text alone (at
query time there is no syntax tree), by each language's comment and
docstring syntax: a line is prose when it is wholly inside a comment or a
string that stands as a statement of its own (a docstring). A code line
with a trailing comment is code. Languages not listed (markup, data) have
no prose lines: everything in them is what they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Line comment markers per language.
_HASH = "python ruby bash perl r elixir julia starlark"
_SLASH = "javascript typescript tsx go rust java c cpp csharp kotlin swift scala dart zig objc groovy"
_SLASH += " proto vue svelte"
_LINE_COMMENTS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(_HASH.split(), ("#",)),
    **dict.fromkeys(_SLASH.split(), ("//",)),
    "php": ("//", "#"),
    **dict.fromkeys(("lua", "haskell", "elm", "sql"), ("--",)),
    "erlang": ("%",),
    "clojure": (";",),
}
# Block comments: (opening, closing), recognised where a line starts with the opening.
_C_BLOCK = (("/*", "*/"),)
_BLOCK_COMMENTS: dict[str, tuple[tuple[str, str], ...]] = {
    **dict.fromkeys((lang for lang, marks in _LINE_COMMENTS.items() if "//" in marks), _C_BLOCK),
    "lua": (("--[[", "]]"),),
    "haskell": (("{-", "-}"),),
    "elm": (("{-", "-}"),),
    "ocaml": (("(*", "*)"),),
    "sql": _C_BLOCK,
}
# Docstrings: a triple-quoted string that starts its line (optionally prefixed).
_DOCSTRING_LANGUAGES = frozenset({"python", "julia", "starlark"})
_DOCSTRING_OPEN = re.compile(r"""^[rRuUbBfF]{0,2}("{3}|'{3})""")


def prose_lines(lines: Sequence[str], language: str) -> set[int]:
    """Indexes of ``lines`` that are wholly comment or docstring in ``language``.

    ``lines`` should start outside any comment or string (a chunk's text
    does: chunks start at a definition, a statement or a comment).
    """
    markers = _LINE_COMMENTS.get(language, ())
    blocks = _BLOCK_COMMENTS.get(language, ())
    docstrings = language in _DOCSTRING_LANGUAGES
    out: set[int] = set()
    closing = ""  # the text that ends the comment or string we are in
    in_prose = False  # a comment or a docstring, not a string in code
    for i, line in enumerate(lines):
        text = line.strip()
        if closing:
            if in_prose:
                out.add(i)
            if closing in text:
                closing = ""
            continue
        opened = next((pair for pair in blocks if text.startswith(pair[0])), None) if blocks else None
        if opened is not None:
            out.add(i)
            closing = "" if opened[1] in text[len(opened[0]) :] else opened[1]
            in_prose = True
            continue
        if markers and text.startswith(markers):
            out.add(i)
            continue
        if not docstrings:
            continue
        m = _DOCSTRING_OPEN.match(text) if '"' in text[:3] or "'" in text[:3] else None
        if m is not None:
            out.add(i)
            closing = "" if m.group(1) in text[m.end() :] else m.group(1)
            in_prose = True
            continue
        # a triple-quoted string opened in code runs on as code
        closing = (
            next((q for q in ('"""', "'''") if text.count(q) % 2), "") if "''" in text or '""' in text else ""
        )
        in_prose = False
    return out
