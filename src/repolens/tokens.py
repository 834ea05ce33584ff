"""One code-aware tokenizer, shared by indexing and queries.

Identifiers are split at snake_case, kebab-case, camelCase, PascalCase and
letter/digit boundaries, and the whole identifier is kept as one more token
in a *normalised* form: lowercase with ``_`` and ``-`` removed. The normalised
whole form is what lets a query ``handleSubmit`` meet ``handle_submit`` and
``HandleSubmit`` on one token, and ``parse_url`` meet ``parseURL``.

The tokenizer is versioned: an index records ``TOKENIZER_VERSION`` and refuses
to be read by a different one, because documents and queries must be split
the same way for BM25 to mean anything.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterator, Sequence
from functools import lru_cache
from itertools import chain

import snowballstemmer

TOKENIZER_VERSION = 1

# Longest token kept. Longer runs are hashes, base64 or minified noise, and
# would only bloat the vocabulary.
MAX_TOKEN_LEN = 48

# An identifier-ish run: letters, digits, underscores, and inner hyphens
# (kebab-case). Unicode letters count, so non-ASCII identifiers survive.
# Compiled at first use (re's cache), as _SEPARATORS: only non-ASCII text
# needs it, which most searches never meet.
_RUN = r"[^\W_]\w*(?:-[^\W_]\w*)*|_+[^\W_]\w*(?:-[^\W_]\w*)*"
# The same runs on ASCII text (where the ASCII and Unicode meanings of \w
# agree), found faster: scanning for runs is the larger part of tokenizing,
# and most lines and files are ASCII.
_RUN_ASCII = re.compile(_RUN, re.ASCII)


def _runs(text: str) -> list[str]:
    return _RUN_ASCII.findall(text) if text.isascii() else re.findall(_RUN, text)


# Boundaries inside one run: lower->Upper (parseUrl), UPPER->Upper+lower
# (URLParser -> URL|Parser), letter<->digit (utf8, md5sum).
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")

# English function words: nearly absent from code, so BM25 would give them a
# high IDF and let them dominate a long prose question. They are dropped from
# queries (see ``repolens.search.query``) but still indexed, so a query that consists
# only of such words (or names an identifier like ``when``) still works.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because
    been before being below between both but by can could did do does doing
    down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why
    will with would you your yours yourself yourselves also however since
    though via thus hence whether either neither yet still even already
    always never often would like want need seems seem get got make made let
    lets use used using i'm it's don't doesn't didn't isn't wasn't can't
    won't
    """.split()  # noqa: SIM905
)


def _char_class(c: str) -> int:
    if c.isdigit():
        return 2
    return 0 if c.isupper() else 1


def _split_unicode(piece: str) -> list[str]:
    """The ``_PARTS`` rules for pieces with non-ASCII letters (``re`` has no
    Unicode case classes)."""
    parts: list[str] = []
    start = 0
    n = len(piece)
    for i in range(1, n):
        prev, cur = _char_class(piece[i - 1]), _char_class(piece[i])
        nxt = _char_class(piece[i + 1]) if i + 1 < n else -1
        boundary = (
            (prev == 2) != (cur == 2)  # letter <-> digit
            or (prev == 1 and cur == 0)  # lower -> Upper
            or (prev == 0 and cur == 0 and nxt == 1)  # URLParser: L|P
        )
        if boundary:
            parts.append(piece[start:i].lower())
            start = i
    parts.append(piece[start:].lower())
    return parts


_SEPARATORS = r"[_\-]+"  # compiled at first use: only a non-ASCII word is split at them


def _one_part(word: str) -> bool:
    """Whether an ASCII run is its own only part: the common cases
    (``self``, ``return``, ``1800``), what ``_PARTS`` would find whole."""
    return (word.isalpha() and word.islower()) or word.isdigit()


def split_identifier(word: str) -> list[str]:
    """Split one identifier-ish run into lowercase parts (no whole form)."""
    if word.isascii():
        if _one_part(word):
            return [word]
        # No _PARTS alternative matches ``_`` or ``-``, or looks past one, so
        # one scan of the whole word finds the parts of its pieces.
        return [part.lower() for part in _PARTS.findall(word)]
    parts: list[str] = []
    for piece in re.split(_SEPARATORS, word):
        if not piece:
            continue
        if piece.isascii():
            parts.extend(m.group(0).lower() for m in _PARTS.finditer(piece))
        else:
            parts.extend(_split_unicode(piece))
    return parts


_STEMMER = snowballstemmer.stemmer("english")


def stem(word: str) -> str:
    """English stem of one lowercase word part; stopwords stay as they are
    so that queries can still recognise them."""
    if word in STOPWORDS or not word.isalpha():
        return word
    return _STEMMER.stemWord(word)


@lru_cache(maxsize=262_144)
def _run_tokens(run: str) -> tuple[str, ...]:
    """Tokens of one run. Cached: identifiers repeat heavily across a repo,
    and this is the indexing hot path. Pure function, so never invalid.

    Word parts are stemmed (``sessions``/``expired`` meet ``session``/
    ``expire``); the whole identifier is kept exact, so a query naming an
    identifier still prefers the chunks that spell it.
    """
    parts = split_identifier(run)
    stems = [stem(p) for p in parts if 1 < len(p) <= MAX_TOKEN_LEN]
    if len(parts) > 1:
        whole = run.replace("_", "").replace("-", "").lower()
        if 1 < len(whole) <= MAX_TOKEN_LEN:
            return (whole, *stems)
    return tuple(stems)


def _tokens(text: str) -> Iterator[str]:
    return chain.from_iterable(map(_run_tokens, _runs(text)))


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order, with repeats (for term frequencies).

    Single characters are dropped: loop variables and operators carry no
    signal and would make every posting list huge.
    """
    return list(_tokens(text))


def token_text(text: str) -> str:
    """``" ".join(tokenize(text))``, the form a document field is stored in,
    made faster for ASCII text: split at the characters no run holds (see
    ``_NOT_IN_RUNS``) instead of scanned for runs, and each distinct piece
    joined once. Indexing spends most of its tokenizing time here."""
    if not text.isascii():
        return " ".join(_tokens(text))
    return " ".join(filter(None, map(_PIECE_TEXTS.__getitem__, text.translate(_NOT_IN_RUNS).split())))


class _PieceTexts(dict[str, str]):
    """The tokens of each ASCII piece seen, space-joined, made on first
    sight. A dict looked up from C (``map(d.__getitem__, ...)``), not an
    ``lru_cache``: a lookup is most of what tokenizing a document costs, and
    this one is about a third cheaper. Never stale (a piece's tokens depend
    on the piece alone); emptied when full, to bound memory.

    A piece without a hyphen is one run (or only underscores, which yield
    nothing); its tokens are not also kept in ``_run_tokens``' cache, which
    queries and replies share. The commonest pieces, one lowercase word or a
    number, take a short way to the same tokens."""

    def __missing__(self, piece: str) -> str:
        if len(self) >= _PIECE_CACHE_SIZE:
            self.clear()
        if "-" in piece:
            text = " ".join(_hyphened_tokens(piece))
        elif _one_part(piece):  # what _run_tokens makes of it, without its tuple
            text = stem(piece) if 1 < len(piece) <= MAX_TOKEN_LEN else ""
        else:
            text = " ".join(_run_tokens.__wrapped__(piece))
        self[piece] = text
        return text


_PIECE_CACHE_SIZE = 262_144
_PIECE_TEXTS = _PieceTexts()


def _hyphened_tokens(piece: str) -> Iterator[str]:
    """The tokens of an ASCII piece with a hyphen, which may hold several
    runs (``a--b``) or one kebab-case run (``a-b``)."""
    return chain.from_iterable(map(_run_tokens, _RUN_ASCII.findall(piece)))


def has_token(text: str, wanted: frozenset[str] | set[str]) -> bool:
    """Whether ``text`` yields any token in ``wanted``: :func:`tokenize` with
    an early stop, for testing line after line of a chunk."""
    return not wanted.isdisjoint(_tokens(text))


# Every ASCII character that no run holds, made a space (line breaks are
# kept, to split lines at): a run never spans one, so ASCII text splits at
# them into pieces that each hold whole runs. A piece without a hyphen is one
# run whole (underscores, a letter or digit, word characters), or only
# underscores, which yield no token.
_NOT_IN_RUNS = str.maketrans(
    {chr(c): " " for c in range(128) if not chr(c).isalnum() and chr(c) not in "_-\n"}
)


def _piece_tokens(pieces: set[str]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Each of the distinct ``pieces`` of ASCII text (see ``_NOT_IN_RUNS``)
    with its tokens; only those with a hyphen are scanned for runs."""
    hyphened = {piece for piece in pieces if "-" in piece}
    plain = pieces - hyphened if hyphened else pieces
    yield from zip(plain, map(_run_tokens, plain), strict=True)
    for piece in hyphened:
        yield piece, tuple(_hyphened_tokens(piece))


def _pieces_by_line(lines: Sequence[str]) -> list[list[str]] | None:
    """The pieces of each of ``lines`` (see ``_NOT_IN_RUNS``), in order;
    None unless all of them are ASCII, without line breaks."""
    text = "\n".join(lines)
    if not text.isascii():
        return None
    split = text.translate(_NOT_IN_RUNS).split("\n")
    return [line.split() for line in split] if len(split) == len(lines) else None


def lines_with_token(lines: Sequence[str], wanted: frozenset[str] | set[str]) -> list[int]:
    """The indexes of ``lines`` that yield a token in ``wanted``: :func:`has_token`
    of each line, all at once. ASCII lines are split at what no run holds,
    each distinct piece is tested once, and a line matches when it holds a
    piece that matched: a chunk's lines repeat their names."""
    pieces = _pieces_by_line(lines)
    if pieces is None:
        return [i for i, line in enumerate(lines) if has_token(line, wanted)]
    matching = {
        p for p, found in _piece_tokens(set(chain.from_iterable(pieces))) if not wanted.isdisjoint(found)
    }
    return [i for i, line in enumerate(pieces) if not matching.isdisjoint(line)] if matching else []


def tokens_by_line(lines: Sequence[str], kept: Container[str]) -> list[list[str]]:
    """For each of ``lines``, its tokens that are in ``kept``, in order and
    with repeats (:func:`tokenize` of each line, filtered), all lines at
    once: each distinct piece of ASCII lines is tokenized once."""
    pieces = _pieces_by_line(lines)
    if pieces is None:
        return [[t for t in tokenize(line) if t in kept] for line in lines]
    among = {
        p: list(filter(kept.__contains__, found))
        for p, found in _piece_tokens(set(chain.from_iterable(pieces)))
    }
    return [[t for p in line for t in among[p]] for line in pieces]


def terms_in(text: str, terms: frozenset[str]) -> frozenset[str]:
    """The ones of ``terms`` that ``text`` yields (``terms & set(tokenize(text))``),
    without making that set. Each distinct piece (ASCII) or run is split once,
    so asking which query terms a whole chunk contains costs a fraction of
    tokenizing it."""
    if not text.isascii():
        return terms.intersection(chain.from_iterable(map(_run_tokens, set(re.findall(_RUN, text)))))
    pieces = set(text.translate(_NOT_IN_RUNS).split())
    return terms.intersection(chain.from_iterable(found for _, found in _piece_tokens(pieces)))


class TermsIn:
    """:func:`terms_in` for one set of ``terms`` asked of many texts (the
    chunks of every hit of a search across repositories, a reply's hits and
    their lines): each distinct ASCII piece is tokenized once for all of
    them, and a text's pieces are then matched against those known to yield
    a term as sets, not token by token. Code repeats its pieces from chunk to
    chunk, so most are known. :meth:`lines_with_term` and
    :meth:`terms_by_line` are :func:`lines_with_token` and
    :func:`tokens_by_line` for these terms, on the same pieces."""

    def __init__(self, terms: frozenset[str]) -> None:
        self.terms = terms
        self._seen: set[str] = set()
        # piece -> the tokens it yields that are terms, in order, with repeats
        self._yielding: dict[str, tuple[str, ...]] = {}

    def _learn(self, pieces: set[str]) -> None:
        new = pieces - self._seen
        if new:
            self._seen |= new
            terms = self.terms
            for piece, found in _piece_tokens(new):
                if not terms.isdisjoint(found):
                    self._yielding[piece] = tuple(filter(terms.__contains__, found))

    def __call__(self, text: str) -> frozenset[str]:
        if not text.isascii():
            return terms_in(text, self.terms)
        pieces = set(text.translate(_NOT_IN_RUNS).split())
        self._learn(pieces)
        matched = pieces.intersection(self._yielding)
        return frozenset().union(*(self._yielding[p] for p in matched)) if matched else frozenset()

    def lines_with_term(self, lines: Sequence[str]) -> list[int]:
        """``lines_with_token(lines, self.terms)``."""
        pieces = _pieces_by_line(lines)
        if pieces is None:
            return lines_with_token(lines, self.terms)
        self._learn(set(chain.from_iterable(pieces)))
        yielding = self._yielding.keys()
        return [i for i, line in enumerate(pieces) if not yielding.isdisjoint(line)]

    def terms_by_line(self, lines: Sequence[str]) -> list[list[str]]:
        """``tokens_by_line(lines, self.terms)``."""
        pieces = _pieces_by_line(lines)
        if pieces is None:
            return tokens_by_line(lines, self.terms)
        self._learn(set(chain.from_iterable(pieces)))
        yielding = self._yielding
        return [[t for p in line if p in yielding for t in yielding[p]] for line in pieces]


def surface_forms(text: str) -> dict[str, str]:
    """Each token of ``text`` mapped to the first word that produced it, for
    showing people words rather than stems (``expir`` -> ``expired``). A
    run met again maps nothing new, so each distinct run is split once."""
    return _forms(_runs(text))


def tokenize_with_forms(text: str) -> tuple[list[str], dict[str, str]]:
    """``(tokenize(text), surface_forms(text))``, ``text`` scanned for runs once."""
    runs = _runs(text)
    return list(chain.from_iterable(map(_run_tokens, runs))), _forms(runs)


def _forms(runs: list[str]) -> dict[str, str]:
    forms: dict[str, str] = {}
    for run in dict.fromkeys(runs):
        for token, word in _run_forms(run):
            forms.setdefault(token, word)
    return forms


@lru_cache(maxsize=65_536)
def _run_forms(run: str) -> tuple[tuple[str, str], ...]:
    """(token, the word it came from) of one run, in the order
    :func:`surface_forms` meets them: the whole identifier first, then each
    part's stem. Cached as :func:`_run_tokens` is, and for the same reason."""
    parts = split_identifier(run)
    whole = ((run.replace("_", "").replace("-", "").lower(), run),) if len(parts) > 1 else ()
    return (*whole, *((stem(part), part) for part in parts))


def tokenize_path(path: str) -> list[str]:
    """Tokens of a repository-relative path: every component, split like code.

    ``src/auth/SessionStore.py`` yields ``src auth sessionstore session store py``.
    """
    return tokenize(path.replace("/", " ").replace(".", " "))
