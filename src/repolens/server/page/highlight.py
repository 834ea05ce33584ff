"""Syntax colours for the search page: a small tokenizer of our own, one line at a time.

Why not Pygments: the page may add no run-time dependency beyond Jinja2 and
prometheus_client, and a full lexer would be wrong here more often than
right, since a packet shows a file's lines with gaps (``... (lines 6-37
omitted)``): a string or comment that opens in a line not shown would
colour everything after it. So each line is read alone, for what it shows:
comments (by the language's markers), closed string literals, numbers, the
language's keywords, and the name a definition keyword introduces. A
string left open on its line is plain text, and a block comment's middle
lines are too (unless they start as one: ``*`` or ``/*``).

The language comes from the file's name (:func:`repolens.chunking.languages.language_for`),
the same guess the index makes. :func:`tokens` returns ``(kind, text)``
pairs whose texts join back to the line; the page escapes each text and
gives it the CSS class ``t-KIND`` (``kw``, ``str``, ``com``, ``num``, ``def``).
"""

from __future__ import annotations

import re
from functools import cache

from repolens.chunking.languages import language_for

_HASH = frozenset(
    {"python", "ruby", "bash", "perl", "r", "elixir", "julia", "yaml", "toml", "make", "dockerfile"}
    | {"cmake", "starlark", "hcl", "ini", "nim", "php"}
)
_SLASH = frozenset(
    {"c", "cpp", "csharp", "java", "javascript", "typescript", "tsx", "go", "rust", "kotlin", "swift"}
    | {"scala", "dart", "php", "groovy", "zig", "objc", "proto", "hcl", "vue", "svelte", "css", "scss"}
)
_DASH = frozenset({"lua", "haskell", "sql", "elm"})
_PERCENT = frozenset({"erlang"})
_PROSE = frozenset({"markdown", "rst", "text", "asciidoc"})

_COMMON = "if else for while return break continue true false null class import in"
_KEYWORDS: dict[str, str] = {
    "python": "def lambda from as with try except finally raise yield async await pass None True False "
    "and or not is elif global nonlocal assert del match case self",
    "javascript": "function const let var new this typeof instanceof async await try catch finally throw "
    "export default switch case of undefined yield static extends super do delete void",
    "go": "func package var const type struct interface map chan go defer select switch case default "
    "range nil fallthrough goto",
    "rust": "fn let mut pub impl trait struct enum mod use crate self Self super match loop where as ref "
    "move async await dyn unsafe const static type None Some Ok Err",
    "java": "public private protected static final void new this super extends implements interface "
    "abstract try catch finally throw throws switch case default package enum synchronized var",
    "ruby": "def end module do then elsif unless until begin rescue ensure yield self nil require",
    "bash": "then fi do done case esac function local export elif",
    "lua": "function local end then elseif do repeat until nil not and or",
    "c": "struct enum union typedef static const void int char unsigned signed long short sizeof "
    "switch case default goto extern return NULL",
    "kotlin": "fun val var when object data sealed override private public internal companion is as",
    "swift": "func let var struct enum protocol extension guard self nil switch case",
    "haskell": "module where let data type newtype instance deriving do case of then",
    "sql": "select from where join left right inner outer on group by order insert update delete "
    "create table values and or not as SELECT FROM WHERE JOIN ON GROUP BY ORDER INSERT UPDATE DELETE "
    "CREATE TABLE VALUES AND OR NOT AS",
}
_ALSO = {
    "typescript": ("javascript", "type interface enum implements private public readonly namespace declare"),
    "tsx": ("javascript", "type interface enum implements private public readonly"),
    "vue": ("javascript", ""),
    "svelte": ("javascript", ""),
    "cpp": (
        "c",
        "class namespace template typename public private protected virtual override new delete "
        "this auto nullptr using",
    ),
    "objc": ("c", "self nil YES NO"),
    "csharp": ("java", "namespace using var readonly override virtual async await"),
    "scala": ("java", "def val var object trait case match yield with"),
    "groovy": ("java", "def"),
    "dart": ("java", "final var async await late required"),
    "php": ("java", "function echo array foreach"),
    "zig": ("rust", "fn pub const var"),
    "elixir": ("ruby", "defmodule defp"),
    "perl": ("ruby", "sub my our use"),
}
# Keywords after which the next word is the name being defined.
_DEFINERS = frozenset(
    {"def", "class", "fn", "func", "function", "fun", "struct", "interface", "trait", "enum", "type"}
    | {"module", "defmodule", "defp", "sub", "impl", "object", "protocol", "mod"}
)

_STRING = r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`"
_NUMBER = r"\b(?:0[xXbBoO][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)\b"
_WORD = r"[A-Za-z_$][\w$]*"


@cache
def _lexer(language: str) -> tuple[re.Pattern[str], frozenset[str]] | None:
    """The one pattern that reads a line of ``language``, and its keywords; None: no colours."""
    if language in _PROSE:
        return None
    comments = []
    if language in _HASH:
        comments.append(r"#.*")
    if language in _SLASH:
        comments += [r"//.*", r"/\*.*?(?:\*/|$)", r"^\s*\*(?:\s.*|/.*|$)"]
    if language in _DASH:
        comments.append(r"--.*")
    if language in _PERCENT:
        comments.append(r"%.*")
    if language == "ocaml":
        comments.append(r"\(\*.*?(?:\*\)|$)")
    if language in ("html", "xml", "vue", "svelte", "markdown"):
        comments.append(r"<!--.*?(?:-->|$)")
    base, extra = _ALSO.get(language, (language, ""))
    words = frozenset(f"{_COMMON} {_KEYWORDS.get(base, '')} {_KEYWORDS.get(language, '')} {extra}".split())
    parts = [f"(?P<com>{'|'.join(comments)})"] if comments else []
    parts += [f"(?P<str>{_STRING})", f"(?P<num>{_NUMBER})", f"(?P<word>{_WORD})"]
    return re.compile("|".join(parts)), words


def tokens(line: str, path: str) -> list[tuple[str, str]]:
    """``line`` of the file at ``path`` as ``(kind, text)`` pairs (kind ``""``:
    plain), in order, their texts joined giving ``line`` back."""
    lexer = _lexer(language_for(path))
    if lexer is None or not line:
        return [("", line)] if line else []
    pattern, keywords = lexer
    out: list[tuple[str, str]] = []
    at = 0
    defining = False
    for match in pattern.finditer(line):
        if match.start() > at:
            out.append(("", line[at : match.start()]))
        text = match.group()
        kind = match.lastgroup or ""
        if kind == "word":
            if defining:
                kind, defining = "def", False
            elif text in keywords:
                kind, defining = "kw", text in _DEFINERS
            else:
                kind = ""
        elif kind:
            defining = False
        out.append((kind, text))
        at = match.end()
    if at < len(line):
        out.append(("", line[at:]))
    return _merged(out)


def _merged(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Neighbouring pairs of one kind as one (fewer spans for the page to send)."""
    out: list[tuple[str, str]] = []
    for kind, text in pairs:
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))
    return out
