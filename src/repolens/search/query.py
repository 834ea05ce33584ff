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
* the subject line of a longer question (an issue's title, a commit's
  subject) weighs more: it says what the question is about, while the body
  around it often pastes output (package lists, linter reports, reprs) whose
  many code-looking words would otherwise outweigh it;
* very long questions keep only their strongest terms.

A word that stands alone and ends in one ``*`` (``zorb*``, ``handleSub*``)
is a partial identifier: it searches as the word itself, and
:func:`with_completions` adds the indexed terms that start with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from repolens.record import Record
from repolens.tokens import STOPWORDS, split_identifier, tokenize, tokenize_with_forms

MAX_TERMS = 64
IDENTIFIER_WEIGHT = 2.0
WORD_WEIGHT = 1.0
# A term of the subject line of a question of several lines weighs this much
# more (development set, docs/benchmarks.md: 1.5 to 2 gain a SWE-bench
# question, 1.25 nothing, 3 loses as many questions as it gains).
SUBJECT_WEIGHT = 1.5

_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
# Runs that look like code rather than prose.
_WORDISH = re.compile(r"[\w./:-]+")
_IDENT = re.compile(r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_][\w]*)*")
# Lookbehinds keep matches from starting inside a run: without them a long
# unbroken run costs quadratic time (seconds for 20k characters).
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(")
MAX_IDENTIFIERS = 32
MAX_PATHS = 16
# A file path or name with an extension: ``a/b/c.py``, ``walk.rs``, ``x.test.ts``.
_PATH = re.compile(r"(?<![\w./-])(/?(?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][\w]{0,9})(?![\w/])")
_PATH_RUN = re.compile(r"[\w./-]+")
# A conventional-commit scope: ``fix(validator):``, ``feat(cli)!:``.
_SCOPE = re.compile(r"^\s*\w+\(([\w./,\s-]{1,60})\)!?:", re.M)
# A partial identifier: word characters (and inner hyphens) then one ``*``,
# neither inside a longer word nor glued to more ``*`` (``**bold**``,
# ``x*y``, ``**kwargs``), and followed by the end of the text, a space or
# closing punctuation (not ``*.py``: a glob).
_WORD = re.compile(r"\w")
_PREFIX = re.compile(r"(?<![\w*])(\w[\w-]*)\*(?=$|[\s)\]}'\"`,;:!?]|\.(?!\w))")
# At most this many prefixes in a question, each standing for at most this
# many indexed terms (the shortest: the closest to what was typed).
MAX_PREFIXES = 4
MAX_COMPLETIONS = 32
_NOT_FILE_EXT = frozenset({"com", "org", "net", "io", "html", "htm", "0", "1", "2", "3", "x", "e", "g", "i"})


class QueryTerm(Record):
    """One token of a query, with the weight the lexical leg gives it."""

    token: str
    weight: float
    code: bool  # came from an identifier-looking span
    surface: str = ""  # the word as the query spelled it (tokens are stems)


class ParsedQuery(Record):
    """A query as every leg reads it: weighted terms, and what it names literally."""

    text: str
    terms: tuple[QueryTerm, ...]
    # Identifiers the query names literally (``parse_url``, ``Store.save``),
    # in order of appearance: the symbol leg looks these up as definitions.
    identifiers: tuple[str, ...] = ()
    # Files the query mentions (``src/walk.rs``, traceback frames, ``cli.rs``)
    # and module scopes (``fix(validator):``): the path leg favours them.
    paths: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    # Partial identifiers (``zorb*``): (normalised prefix, the weight of
    # each term that completes it), for :func:`with_completions`.
    prefixes: tuple[tuple[str, float], ...] = ()
    # Tokens of the subject line (:func:`subject_line`): what the question
    # says it is about, which the role priors read (repolens.search.priors).
    subject: frozenset[str] = frozenset()

    @property
    def tokens(self) -> frozenset[str]:
        """Tokens a line must contain to count as a match when trimming hits."""
        return frozenset(t.token for t in self.terms)

    def weighted(self) -> list[tuple[str, float]]:
        return [(t.token, t.weight) for t in self.terms]

    def has_words(self) -> bool:
        """Whether the question holds a word besides its partial identifiers
        (``zorb*`` is a word's letters: nothing for the dense leg to embed)."""
        return _WORD.search(_PREFIX.sub("", self.text)) is not None


_MIXED_CASE = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_DOTTED = re.compile(r"\w\.\w")
_NUMBER = re.compile(r"[\d.]+")
_LETTER_DIGIT = re.compile(r"[A-Za-z]\d|\d[A-Za-z]")


def looks_like_code(run: str) -> bool:
    """``snake_case``, ``camelCase``, ``dotted.name``, ``path/x.py``, ``f()``."""
    core = run.strip(".:-/")
    if not core:
        return False
    if "_" in core.strip("_") or "/" in core or "::" in core:
        return True
    if _MIXED_CASE.search(core):
        return True
    if _DOTTED.search(core) and not _NUMBER.fullmatch(core):
        return True
    return len(split_identifier(core)) > 1 and bool(_LETTER_DIGIT.search(core))


def _code_runs(text: str) -> list[str]:
    """The distinct runs of ``text`` that look like code, in order of first
    appearance (a long issue repeats its names: each is judged once)."""
    return [run for run in dict.fromkeys(_WORDISH.findall(text)) if looks_like_code(run)]


def _identifiers(text: str, code_runs: list[str]) -> list[str]:
    """Identifier-looking names in ``text``: code spans, calls, and runs that
    look like code (``code_runs``, :func:`_code_runs`); a query that is one
    bare word counts as an identifier."""
    found: list[str] = []
    stripped = text.strip()
    if _IDENT.fullmatch(stripped) and len(stripped) > 1:
        found.append(stripped)
    for span in _CODE_SPAN.findall(text):
        found.extend(m.group(0) for m in _IDENT.finditer(span))
    found.extend(m.group(1) for m in _CALL.finditer(text))
    for run in code_runs:
        core = run.strip(".:-/")
        if "/" not in core:
            found.extend(m.group(0) for m in _IDENT.finditer(core))
    out = []
    # a name keeps its underscores only where the whole question is that name
    # (``_literal`` asks for ``_literal``, not ``Literal``); in prose they may
    # be emphasis (``_this_``)
    names = [stripped.strip(".")] if found and found[0] == stripped else [n.strip("._") for n in found]
    for name in dict.fromkeys(names):
        if len(name) > 1 and name.lower() not in STOPWORDS and not name.isdigit():
            out.append(name)
    return out[:MAX_IDENTIFIERS]


def _paths(text: str) -> list[str]:
    """File paths and names the query mentions, longest path form kept.

    Absolute prefixes (``/home/u/.local/lib/python3.7/site-packages/``) are
    left on: the path leg matches mentions to indexed files by suffix.
    """
    found: list[str] = []
    # A path is made of [\w./-] and starts where a run of them starts (the
    # lookbehind), so at most one begins each run, and only a run with a dot
    # can hold one: matched run by run, the same paths, without trying the
    # pattern at every word of a long issue.
    for run in _PATH_RUN.findall(text):
        m = _PATH.match(run) if "." in run else None
        if m is None:
            continue
        candidate = m.group(1).strip("./")
        ext = candidate.rsplit(".", 1)[-1].lower()
        if ext in _NOT_FILE_EXT or ext.isdigit() or "." not in candidate:
            continue
        if re.fullmatch(r"[\d.]+\w?", candidate):  # version numbers like 3.7.1
            continue
        found.append(candidate)
    return list(dict.fromkeys(found))[:MAX_PATHS]


def _scopes(text: str) -> list[str]:
    out = []
    for m in _SCOPE.finditer(text):
        out.extend(p.strip() for p in re.split(r"[,\s]+", m.group(1)) if p.strip())
    return list(dict.fromkeys(out))[:MAX_PATHS]


def subject_line(text: str) -> str:
    """The first non-empty line of ``text``: what a question says it is
    about; none ("") when it opens a fenced block (a question that starts
    with pasted code has no subject line, and a fence's language word is
    not what it asks about)."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    return "" if line.lstrip().startswith(("```", "~~~")) else line


def _has_body(text: str, subject: str) -> bool:
    """Whether ``text`` goes on after its subject line ``subject``: a one-line
    question is all subject, so none of its terms weighs more."""
    return bool(subject) and bool(text.partition(subject)[2].strip())


def parse_query(text: str, *, weighted: bool = True) -> ParsedQuery:
    """``weighted=False`` is plain BM25's view of the question, for measuring
    what query understanding earns: every token (stopwords too) at weight 1.
    A partial identifier (``zorb*``) is read as the word, and kept as a prefix."""
    asked = text
    prefixed = list(dict.fromkeys(_PREFIX.findall(text))) if "*" in text else []
    if prefixed:
        text = _PREFIX.sub(r"\1", text)
    code_tokens: set[str] = set()
    for span in _CODE_SPAN.findall(text):
        code_tokens.update(tokenize(span))
    code_runs = _code_runs(text)
    for run in code_runs:
        code_tokens.update(tokenize(run))
    for name in _CALL.findall(text):
        code_tokens.update(tokenize(name))

    counts: dict[str, int] = {}
    tokens, forms = tokenize_with_forms(text)
    for tok in tokens:
        counts[tok] = counts.get(tok, 0) + 1
    content = {t: n for t, n in counts.items() if t not in STOPWORDS} if weighted else counts
    if not content:
        content = counts  # a question made only of stopwords still searches
    subject_text = subject_line(text)
    subject = frozenset(tokenize(subject_text))
    stressed = subject if _has_body(text, subject_text) else frozenset()
    terms = [  # by position (token, weight, code, surface): a record made by keywords binds them in Python
        QueryTerm(
            t,
            (IDENTIFIER_WEIGHT if t in code_tokens else WORD_WEIGHT)
            * (1.0 + 0.5 * math.log(n))
            * (SUBJECT_WEIGHT if t in stressed else 1.0)
            if weighted
            else 1.0,
            t in code_tokens,
            forms.get(t, t),
        )
        for t, n in content.items()
    ]
    if len(terms) > MAX_TERMS:
        # Stable: keep the strongest, ties in order of first appearance.
        keep = sorted(range(len(terms)), key=lambda i: -terms[i].weight)[:MAX_TERMS]
        terms = [terms[i] for i in sorted(keep)]
    return ParsedQuery(
        text=asked,
        terms=tuple(terms),
        identifiers=tuple(_identifiers(text, code_runs)),
        paths=tuple(_paths(text)),
        scopes=tuple(_scopes(text)),
        prefixes=_prefixes(prefixed, terms, weighted),
        subject=subject,
    )


def _prefixes(words: list[str], terms: list[QueryTerm], weighted: bool) -> tuple[tuple[str, float], ...]:
    """The first :data:`MAX_PREFIXES` partial identifiers of 2+ characters,
    normalised as indexed whole identifiers are (lowercase, no ``_`` or
    ``-``), each with the weight its word's own terms have (its completions
    weigh what the word weighs)."""
    weights = {t.token: t.weight for t in terms}
    out: dict[str, float] = {}
    for word in words:
        prefix = word.replace("_", "").replace("-", "").lower()
        if len(prefix) < 2 or prefix in out:
            continue
        own = [weights[t] for t in tokenize(word) if t in weights]
        out[prefix] = max(own) if own and weighted else WORD_WEIGHT
        if len(out) == MAX_PREFIXES:
            break
    return tuple(out.items())


def with_completions(
    query: ParsedQuery, complete: Callable[[str, int], list[str]]
) -> tuple[ParsedQuery, list[str]]:
    """``query`` with the terms that complete each of its prefixes added,
    as ``complete(prefix, limit)`` lists them (an index's
    ``terms_with_prefix``: the shortest first), at most
    :data:`MAX_COMPLETIONS` each; and a note for a prefix that nothing
    completes or that had more completions than were kept."""
    if not query.prefixes:
        return query, []
    terms = {t.token: t for t in query.terms}
    notes = []
    for prefix, weight in query.prefixes:
        found = complete(prefix, MAX_COMPLETIONS + 1)
        if not found:
            notes.append(f"no indexed word starts with {prefix!r}")
        elif len(found) > MAX_COMPLETIONS:
            notes.append(
                f"{prefix}* stands for the {MAX_COMPLETIONS} shortest indexed words starting with it: "
                "type more of it for the others"
            )
        for token in found[:MAX_COMPLETIONS]:
            terms.setdefault(token, QueryTerm(token, weight, True, token))
    return query._replace(terms=tuple(terms.values())), notes
