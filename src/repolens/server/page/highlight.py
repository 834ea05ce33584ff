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
the same guess the index makes; a ``.h`` header's caller passes the one its
lines shown say (:func:`repolens.chunking.languages.language_of`: C or C++).
:func:`tokens` returns ``(kind, text)`` pairs whose texts join back to the
line; the page escapes each text and gives it the CSS class ``t-KIND``
(``kw``, ``str``, ``com``, ``num``, ``def``).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

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
def _lexer(language: str) -> re.Pattern[str] | None:
    """The one pattern that reads a line of ``language``; None: no colours.
    Only what gets a colour is matched (a keyword, not every word), so a
    line costs as many matches as it has coloured pieces."""
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
    words = set(f"{_COMMON} {_KEYWORDS.get(base, '')} {_KEYWORDS.get(language, '')} {extra}".split())
    definers = "|".join(sorted(words & _DEFINERS, key=len, reverse=True))
    others = "|".join(map(re.escape, sorted(words - _DEFINERS, key=len, reverse=True)))
    parts = [f"(?P<com>{'|'.join(comments)})"] if comments else []
    parts.append(f"(?P<str>{_STRING})")
    if definers:
        parts.append(rf"(?<![\w$])(?P<dkw>{definers})(?P<dsp>\s+)(?P<dname>{_WORD})")
    parts += [
        rf"(?<![\w$])(?P<kw>{definers + '|' if definers else ''}{others})(?![\w$])",
        f"(?P<num>{_NUMBER})",
    ]
    return re.compile("|".join(parts))


@lru_cache(maxsize=1024)
def _lexer_of(path: str) -> re.Pattern[str] | None:
    """The lexer of a file by its name (a packet's lines ask it once per line)."""
    return _lexer(language_for(path))


def tokens(line: str, path: str, language: str | None = None) -> list[tuple[str, str]]:
    """``line`` of the file at ``path`` as ``(kind, text)`` pairs (kind ``""``:
    plain), in order, their texts joined giving ``line`` back; ``language``:
    the file's when known from its text, else its name says."""
    pattern = _lexer_of(path) if language is None else _lexer(language)
    if pattern is None or not line:
        return [("", line)] if line else []
    out: list[tuple[str, str]] = []
    at = 0
    for match in pattern.finditer(line):
        start = match.start()
        if start > at:
            out.append(("", line[at:start]))
        kind = match.lastgroup
        if kind == "dname":  # a definition keyword, the space, the name it defines
            out += [("kw", match["dkw"]), ("", match["dsp"]), ("def", match["dname"])]
        else:
            out.append((kind or "", match.group()))
        at = match.end()
    if at < len(line):
        out.append(("", line[at:]))
    return out
