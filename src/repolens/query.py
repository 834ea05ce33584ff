"""Query understanding: turn a question into weighted lexical terms.

Agents ask two kinds of questions: a known identifier (``parse_url``) and a
paragraph of prose, often an issue text with code, paths and tracebacks in
it. The second kind is where plain BM25 goes wrong: English function words
are rare in code, so their IDF is high and they outscore the few terms that
matter. So:

* English stopwords are dropped (unless nothing else is left);
* tokens that come from code-looking spans (``snake_case``, ``camelCase``,
  ``dotted.names``, ``calls()``, backticks, paths) weigh more than prose;
* repeated terms weigh a little more, with diminishing returns;
* very long questions keep only their strongest terms.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from repolens.tokenize import STOPWORDS, split_identifier, tokenize

MAX_TERMS = 64
IDENTIFIER_WEIGHT = 2.0
WORD_WEIGHT = 1.0

_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
# Runs that look like code rather than prose.
_WORDISH = re.compile(r"[\w./:-]+")


@dataclass(frozen=True, slots=True)
class QueryTerm:
    token: str
    weight: float
    code: bool  # came from an identifier-looking span


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    text: str
    terms: tuple[QueryTerm, ...]

    @property
    def tokens(self) -> frozenset[str]:
        """Tokens a line must contain to count as a match when trimming hits."""
        return frozenset(t.token for t in self.terms)

    def weighted(self) -> list[tuple[str, float]]:
        return [(t.token, t.weight) for t in self.terms]


def looks_like_code(run: str) -> bool:
    """``snake_case``, ``camelCase``, ``dotted.name``, ``path/x.py``, ``f()``."""
    core = run.strip(".:-/")
    if not core:
        return False
    if "_" in core.strip("_") or "/" in core or "::" in core:
        return True
    if re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]", core):
        return True
    if re.search(r"\w\.\w", core) and not re.fullmatch(r"[\d.]+", core):
        return True
    return len(split_identifier(core)) > 1 and bool(re.search(r"[A-Za-z]\d|\d[A-Za-z]", core))


def parse_query(text: str) -> ParsedQuery:
    code_tokens: set[str] = set()
    for span in _CODE_SPAN.findall(text):
        code_tokens.update(tokenize(span))
    for run in _WORDISH.findall(text):
        if looks_like_code(run) or run.endswith("()"):
            code_tokens.update(tokenize(run))

    counts: dict[str, int] = {}
    for tok in tokenize(text):
        counts[tok] = counts.get(tok, 0) + 1
    content = {t: n for t, n in counts.items() if t not in STOPWORDS}
    if not content:
        content = counts  # a question made only of stopwords still searches
    terms = [
        QueryTerm(
            token=t,
            weight=(IDENTIFIER_WEIGHT if t in code_tokens else WORD_WEIGHT) * (1.0 + 0.5 * math.log(n)),
            code=t in code_tokens,
        )
        for t, n in content.items()
    ]
    if len(terms) > MAX_TERMS:
        # Stable: keep the strongest, ties in order of first appearance.
        keep = sorted(range(len(terms)), key=lambda i: -terms[i].weight)[:MAX_TERMS]
        terms = [terms[i] for i in sorted(keep)]
    return ParsedQuery(text=text, terms=tuple(terms))
