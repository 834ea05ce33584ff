"""Symbol lookup: where is NAME defined?

Backs ``repolens symbols NAME`` and the MCP tool ``find_symbol``. Reads the
``symbols`` table of an open index (every definition the chunkers found) and
answers with ranked definitions, never file contents.

Match tiers, best first. The first three are one indexed lookup on
``norm`` (lowercase, ``_``/``-`` removed), so they are always found together:

``exact``                  the name is the query
``case-insensitive``       ``parseurl`` finds ``parseURL``
``separator-insensitive``  ``handle_submit`` finds ``handleSubmit`` and ``_handle_submit``

A query with a qualifier (``Store.save``, ``Store::save``, ``Store#save``,
``(*Store).Save``, ``forms.handle_submit``) is matched against the
definition's full name, which is its file path as a module (``src/web/forms``)
followed by its qualified name, with all separators read as ``.``:

``qualified``              the name matches (as above) and the qualifier parts are the
                           parts just before it (exact spelling first)
``qualified-partial``      the name matches and each qualifier part is in the full name,
                           in order, maybe with parts between or as the start or end of
                           a longer part (``models.Model`` finds ``django/db/models/base.py``
                           ``Model``; ``Store.save`` finds ``SessionStore.save``)
``prefix``                 (only when neither matched) the name starts with the last
                           part and the qualifier parts are in the full name, spelled out
                           (``Store.sav`` finds ``Store.save``)

For a plain name, only when none of the first three matched:

``prefix``                 the name starts with the query (``handle`` finds ``handleSubmit``)
``substring``              the name contains the query (3+ characters)

A name ending in ``*`` (``zorb*``, ``Store.sav*``) asks for the prefix tier
whatever else matched: names that start with it follow the ones equal to it.

When nothing matches at all, up to three "did you mean" suggestions come
from a typo-tolerant comparison (``difflib``) against a bounded candidate
set: names sharing the query's first or second character and of similar
length, read from the ``norm`` index with ``LIMIT`` (so a typo in the first
two characters of a name can go unsuggested).

Within a tier: definitions (functions, classes, types) before constants,
modules and blocks; source files before examples, tests, docs, generated and
vendored code (:func:`repolens.roles.path_role`); then names closer to the
query (prefix and substring tiers: fewer extra characters; qualified tiers:
exact spelling, fewer skipped parts); then shorter qualified names.

Every lookup is a bounded number of indexed store queries
(:meth:`repolens.store.base.IndexReader.symbols` and friends); the substring
tier is one scan of the ``norm`` index inside the store, never a Python loop
over all symbols.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from repolens.budget import SYMBOLS_LIMIT, SYMBOLS_MAX_CHARS, counted
from repolens.errors import UsageError
from repolens.record import Record
from repolens.roles import LISTING_RANK, PRIMARY_DEFINITION_KINDS, SECONDARY_DEFINITION_KINDS, path_role
from repolens.store.base import IndexReader, NameMatch, SymbolFilters, SymbolRow, normalize_symbol
from repolens.validate import check_budget, check_int, check_kind, check_language, check_subpath

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_NAME_CHARS = 200
MAX_LIMIT = 200
# Rows read per tier: enough for any real name (``__init__`` in a large
# Python repository has a few thousand definitions); the rest are counted.
FETCH_CAP = 5000
# Candidate names read per bucket for typo suggestions.
FUZZY_BUCKET = 4000
FUZZY_CUTOFF = 0.75
SUGGESTIONS = 3
MIN_SUBSTRING = 3

TIERS = (
    "exact",
    "case-insensitive",
    "separator-insensitive",
    "qualified",
    "qualified-partial",
    "prefix",
    "substring",
)
_TIER_RANK = {t: i for i, t in enumerate(TIERS)}


# Separators between the parts of a qualified name, across languages.
# Markdown section paths read ``Install > From source``.
_SEPARATORS = re.compile(r"::|->|\s>\s|[.#\\:/]")
_DECORATION = re.compile(r"[()*&]|<[^<>]*>")
# Module parts that name a package rather than a module.
_INDEX_MODULES = frozenset({"__init__", "index", "mod", "lib", "main"})


class SymbolMatch(Record):
    """One definition that matched, and how."""

    name: str
    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str
    parent: str
    language: str
    tier: str  # one of TIERS, or "fuzzy" for a suggestion

    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def render(self, signature: bool = True) -> str:
        """``path:start-end kind qualname [language, tier]`` and, indented, the
        signature (left out when ``signature`` is false)."""
        label = self.qualname or self.name
        parent = f" in {self.parent}" if self.parent and self.parent not in label else ""
        head = f"{self.location()} {self.kind} {label}{parent} [{self.language}, {self.tier}]"
        return f"{head}\n    {self.signature}" if self.signature and signature else head

    def suggestion(self) -> str:
        return f"{self.qualname or self.name} ({self.kind}, {self.path}:{self.start_line})"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "qualname": self.qualname,
            "kind": self.kind,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "signature": self.signature,
            "parent": self.parent,
            "language": self.language,
            "tier": self.tier,
        }


@dataclass(frozen=True)
class SymbolMatches:
    """The answer to one lookup.

    ``matches`` are the ranked matches that ``text`` shows (at most
    ``limit``, and as many as fit in ``max_chars``); ``total`` counts every
    match, so ``total - len(matches)`` were left out. ``suggestions`` is
    filled only when nothing matched.
    """

    query: str
    matches: tuple[SymbolMatch, ...]
    total: int
    suggestions: tuple[SymbolMatch, ...]
    filters: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @property
    def more(self) -> int:
        return self.total - len(self.matches)

    def render(self) -> str:
        return self.text

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "filters": dict(self.filters),
            "total": self.total,
            "more": self.more,
            "matches": [m.to_json() for m in self.matches],
            "suggestions": [s.to_json() for s in self.suggestions],
        }


# -- the query -----------------------------------------------------------------


class _Query(Record):
    """A symbol name as given, split into its qualifier parts and name."""

    text: str
    parts: tuple[str, ...]  # qualifier parts then the name, decorations removed
    norm: str  # normalize_symbol(name)

    @property
    def name(self) -> str:
        return self.parts[-1]

    @property
    def qualified(self) -> bool:
        return len(self.parts) > 1


@lru_cache(maxsize=65_536)
def split_qualified(name: str) -> tuple[str, ...]:
    """``(*Store).Save`` -> ``("Store", "Save")``; ``a::b#c`` -> ``("a", "b", "c")``.

    Generic arguments, pointer and reference marks and call parentheses are
    dropped; whitespace inside a part is dropped too (``handle submit``).
    """
    text = name.strip()
    while True:  # nested generics: Map<K, List<V>>
        stripped = _DECORATION.sub("", text)
        if stripped == text:
            break
        text = stripped
    parts = [re.sub(r"\s+", "", p) for p in _SEPARATORS.split(text)]
    return tuple(p for p in parts if p)


def _parse(name: object) -> _Query:
    if not isinstance(name, str) or not name.strip():
        raise UsageError("symbol name is empty: pass a name such as parse_url or Store.save")
    text = name.strip()
    if len(text) > MAX_NAME_CHARS:
        raise UsageError(
            f"symbol name is {len(text)} chars; the limit is {MAX_NAME_CHARS}: "
            "pass one name such as parse_url"
        )
    parts = split_qualified(text)
    if not parts or not any(ch.isalnum() for ch in parts[-1]):
        raise UsageError(
            f"symbol name {text!r} has no letters or digits: pass a name such as parse_url or Store.save"
        )
    return _Query(text, parts, normalize_symbol(parts[-1]))


# -- reading the table ---------------------------------------------------------


def _describe(f: SymbolFilters) -> dict[str, str]:
    out = {"kind": f.kind, "path": f.path, "language": f.language}
    return {k: v for k, v in out.items() if v}


def _match(row: SymbolRow, tier: str) -> SymbolMatch:
    name, qual, kind, path, start, end, sig, parent, lang, _norm = row
    return SymbolMatch(name, qual, kind, path, int(start), int(end), sig, parent, lang, tier)


@lru_cache(maxsize=65_536)
def module_parts(path: str) -> tuple[str, ...]:
    """A file path read as a module name: ``src/web/forms.py`` -> ``src, web, forms``."""
    p = PurePosixPath(path)
    parts = [*p.parent.parts, p.stem] if p.stem else list(p.parent.parts)
    if parts and parts[-1] in _INDEX_MODULES:
        parts.pop()
    return tuple(parts)


def _full_parts(row: SymbolRow) -> tuple[str, ...]:
    """Module parts of the path, then the parts of the qualified name."""
    return _joined_parts(row[3], row[1] or row[0])


@lru_cache(maxsize=65_536)
def _joined_parts(path: str, qualname: str) -> tuple[str, ...]:
    return (*module_parts(path), *split_qualified(qualname))


@lru_cache(maxsize=65_536)
def _normed_parts(path: str, qualname: str) -> tuple[str, ...]:
    """:func:`_full_parts`, each normalised (lowercase, no ``_``/``-``)."""
    return tuple(normalize_symbol(p) for p in _joined_parts(path, qualname))


def _kind_rank(kind: str) -> int:
    if kind in PRIMARY_DEFINITION_KINDS:
        return 0
    return 1 if kind in SECONDARY_DEFINITION_KINDS else 2


# Languages whose functions and methods are declared apart from their definitions (a header's
# ``Widget make_widget(int);``, a class body's ``void draw();``): references reads it too.
PROTOTYPING = frozenset({"c", "cpp"})


def _declared_only(m: SymbolMatch) -> bool:
    """Whether ``m`` is a C or C++ declaration without its body: listed after the definitions,
    which ``refs`` and ``impact`` read first. A definition's signature is its header up to the
    body, a declaration's its first line: the statement's end, or a parameter list it does not
    close (``void send(int a,``)."""
    if m.language not in PROTOTYPING or m.kind not in ("function", "method"):
        return False  # (a class's or a struct's signature has no parameters, and no body on its line)
    sig = m.signature.rstrip()
    return sig.endswith(";") or "(" not in sig or sig.count("(") > sig.count(")")


def _rank_key(m: SymbolMatch, closeness: int = 0) -> tuple[object, ...]:
    return (
        _TIER_RANK.get(m.tier, len(TIERS)),
        _kind_rank(m.kind),
        _declared_only(m),
        LISTING_RANK[path_role(m.path)],
        closeness,
        len(m.qualname or m.name),
        m.path,
        m.start_line,
    )


# -- tiers ---------------------------------------------------------------------


def _name_tier(name: str, q: _Query) -> str:
    if name == q.name:
        return "exact"
    if name.lower() == q.name.lower():
        return "case-insensitive"
    return "separator-insensitive"


def _same_name(reader: IndexReader, q: _Query, f: SymbolFilters) -> tuple[list[tuple[SymbolMatch, int]], int]:
    same = NameMatch(names=(q.norm,))
    rows = reader.symbols(same, f, FETCH_CAP)
    total = len(rows) if len(rows) < FETCH_CAP else reader.count_symbols(same, f)
    return [(_match(r, _name_tier(r[0], q)), 0) for r in rows], total


def _in_order(want: Sequence[str], parts: Sequence[str], *, loose: bool) -> int | None:
    """Match qualifier parts ``want`` to ``parts`` in order, skipping parts between.

    A part matches when equal, or (``loose``, for wanted parts of 3+
    characters) when it starts or ends with the wanted part (``store`` in
    ``sessionstore``). Returns how many parts were skipped or matched
    loosely (0: a contiguous exact suffix), None if no match.
    """

    def near(w: str, p: str) -> bool:
        return p == w or (loose and len(w) >= MIN_SUBSTRING and (p.startswith(w) or p.endswith(w)))

    cost = 0
    i = len(parts) - 1
    for w in reversed(want):
        while i >= 0 and not near(w, parts[i]):
            i -= 1
            cost += 1
        if i < 0:
            return None
        cost += parts[i] != w
        i -= 1
    return cost


def _qualified(
    reader: IndexReader, q: _Query, f: SymbolFilters, prefix: bool = False
) -> tuple[list[tuple[SymbolMatch, int]], int]:
    """Tiers for a query with a qualifier; see the module docstring
    (``prefix``: the name ended in ``*``)."""
    quals = [normalize_symbol(p) for p in q.parts[:-1]]
    exact: list[tuple[SymbolMatch, int]] = []
    partial: list[tuple[SymbolMatch, int]] = []
    for r in reader.symbols(NameMatch(names=(q.norm,)), f, FETCH_CAP):
        full = _full_parts(r)
        normed = list(_normed_parts(r[3], r[1] or r[0])[:-1])
        if normed[len(normed) - len(quals) :] == quals:
            spelled = tuple(full[-len(q.parts) :]) == q.parts
            exact.append((_match(r, "qualified"), 0 if spelled else 1))
            continue
        cost = _in_order(quals, normed, loose=True)
        if cost is not None:
            partial.append((_match(r, "qualified-partial"), cost))
    found = exact or partial
    if (found and not prefix) or len(q.norm) < (1 if prefix else MIN_SUBSTRING):
        return found, len(found)
    # The name may be unfinished (Store.sav): names starting with it, whose
    # qualifier parts are spelled out in full.
    out = []
    for r in reader.symbols(NameMatch(prefix=q.norm), f, FETCH_CAP, order="length"):
        normed = list(_normed_parts(r[3], r[1] or r[0])[:-1])
        cost = _in_order(quals, normed, loose=False)
        if cost is not None:
            out.append((_match(r, "prefix"), len(r[9]) - len(q.norm) + cost))
    return found + out, len(found) + len(out)


def _prefixed(reader: IndexReader, q: _Query, f: SymbolFilters) -> tuple[list[tuple[SymbolMatch, int]], int]:
    """The prefix tier: names longer than the query that start with it."""
    # Shortest names first, so the rows cut by the cap are the least close.
    longer = NameMatch(prefix=q.norm)
    rows = reader.symbols(longer, f, FETCH_CAP, order="length")
    total = len(rows) if len(rows) < FETCH_CAP else reader.count_symbols(longer, f)
    return [(_match(r, "prefix"), len(r[9]) - len(q.norm)) for r in rows], total


def _fuzzy(reader: IndexReader, q: _Query, f: SymbolFilters) -> tuple[list[tuple[SymbolMatch, int]], int]:
    out, total = _prefixed(reader, q, f)
    if len(q.norm) >= MIN_SUBSTRING:
        inner = NameMatch(inner=q.norm)
        # Distinct names containing the query past their first character.
        norms = reader.symbol_names(inner, f, FETCH_CAP, order="length")
        rows = reader.symbols(NameMatch(names=tuple(norms)), f, FETCH_CAP) if norms else []
        capped = len(norms) >= FETCH_CAP or len(rows) >= FETCH_CAP
        total += reader.count_symbols(inner, f) if capped else len(rows)
        out.extend((_match(r, "substring"), len(r[9]) - len(q.norm)) for r in rows)
    return out, total


def _near_norms(reader: IndexReader, norm: str, f: SymbolFilters) -> list[str]:
    """Names within a typo or two of ``norm``, from bounded index ranges."""
    import difflib  # only for a name with no exact match (a new process's lookup need not load it)

    n = len(norm)
    slack = max(2, n // 3)
    candidates: set[str] = set()
    for first in dict.fromkeys(norm[:2]):
        near = NameMatch(prefix=first, prefix_itself=True, min_len=max(1, n - slack), max_len=n + slack)
        candidates.update(reader.symbol_names(near, f, FUZZY_BUCKET))
    candidates.discard(norm)
    return difflib.get_close_matches(norm, sorted(candidates), n=SUGGESTIONS * 3, cutoff=FUZZY_CUTOFF)


def _suggest(reader: IndexReader, q: _Query, f: SymbolFilters) -> list[SymbolMatch]:
    """Up to three near misses, closest first, one per qualified name.

    For a qualified query, definitions of the same name under another
    qualifier are always near misses (``Symbol.subs`` -> ``Basic.subs``).
    """
    norms = _near_norms(reader, q.norm, f)
    if q.qualified:
        norms = [q.norm, *norms]
    if not norms:
        return []
    rows = reader.symbols(NameMatch(names=tuple(norms)), f, FETCH_CAP)
    import difflib

    # SequenceMatcher caches what it learns about its second sequence: the query.
    matcher = difflib.SequenceMatcher(None, "", ".".join(normalize_symbol(p) for p in q.parts))
    ratios: dict[str, float] = {}
    scored: list[tuple[float, tuple[object, ...], SymbolMatch]] = []
    for r in rows:
        hay = ".".join(_normed_parts(r[3], r[1] or r[0])[-len(q.parts) :])
        ratio = ratios.get(hay)
        if ratio is None:
            matcher.set_seq1(hay)
            ratio = ratios[hay] = matcher.ratio() if matcher.quick_ratio() >= FUZZY_CUTOFF else 0.0
        if ratio >= FUZZY_CUTOFF or r[9] == q.norm:
            m = _match(r, "fuzzy")
            scored.append((-round(ratio, 3), _rank_key(m), m))
    scored.sort(key=lambda t: (t[0], t[1]))
    out: list[SymbolMatch] = []
    seen: set[str] = set()
    for _, _, m in scored:
        label = m.qualname or m.name
        if label in seen:
            continue
        seen.add(label)
        out.append(m)
        if len(out) >= SUGGESTIONS:
            break
    return out


# -- the lookup ----------------------------------------------------------------


def find_symbols(
    reader: IndexReader,
    name: str,
    *,
    kind: str | None = None,
    path: str | None = None,
    language: str | None = None,
    limit: int = SYMBOLS_LIMIT,
    max_chars: int = SYMBOLS_MAX_CHARS,
) -> SymbolMatches:
    """Definitions named ``name``, ranked (see the module docstring); a
    trailing ``*`` adds the names that start with it.

    ``kind`` (one of :data:`repolens.roles.KINDS`), ``path`` (a
    file or folder, root-relative) and ``language`` (one of
    :data:`repolens.chunking.languages.LANGUAGES`; aliases such as ``fn`` and
    ``py`` too) narrow the lookup.
    At most ``limit`` matches (1-200) are returned, and ``render()`` never
    exceeds ``max_chars`` (200-1,000,000). Raises ``UsageError`` for an
    empty name, one over 200 characters or one with no letters or digits,
    and for an unknown kind or language; ``PathError`` when nothing matches
    and nothing is indexed under ``path``.
    """
    lookup = SymbolLookup.parse(name, kind=kind, path=path, language=language)
    check_int("limit", limit, 1, MAX_LIMIT)
    check_budget(max_chars)
    found, total = lookup.ranked(reader)
    ranked = [m for m, _ in found[:limit]]
    f = lookup.filters
    if not ranked and f.path and not reader.has_path(f.path):
        from repolens.search.filters import no_indexed_file  # (a search's module: only for this error)

        raise no_indexed_file(reader, f.path)
    suggestions = tuple(lookup.suggestions(reader)) if not ranked else ()
    return lookup.render(ranked, total, suggestions, max_chars)


class SymbolLookup(Record):
    """A checked lookup (the name and its filters), to rank in one index or
    in several (:func:`repolens.service.find_symbol_across` merges their
    matches by :meth:`rank_key`, which depends on no index)."""

    query: _Query
    filters: SymbolFilters
    prefix: bool

    @classmethod
    def parse(
        cls, name: str, *, kind: str | None = None, path: str | None = None, language: str | None = None
    ) -> SymbolLookup:
        """``UsageError`` for a bad name, kind or language (see :func:`find_symbols`)."""
        q = _parse(name)
        f = SymbolFilters(
            kind=check_kind(kind),
            language=check_language(language),
            # read as a search reads its path filter, backslashes as slashes
            path=check_subpath(path.replace("\\", "/")) if path and path.strip() else None,
        )
        return cls(q, f, name.strip().endswith("*"))

    def ranked(self, reader: IndexReader) -> tuple[list[tuple[SymbolMatch, int]], int]:
        """Every match in ``reader`` with its closeness, best first, and how many there are."""
        q, f = self.query, self.filters
        if q.qualified:
            found, total = _qualified(reader, q, f, self.prefix)
        else:
            found, total = _same_name(reader, q, f)
            if self.prefix:
                longer, more = _prefixed(reader, q, f)
                found, total = found + longer, total + more
            elif not found:
                found, total = _fuzzy(reader, q, f)
        found.sort(key=lambda mc: self.rank_key(*mc))
        return found, total

    @staticmethod
    def rank_key(match: SymbolMatch, closeness: int) -> tuple[object, ...]:
        return _rank_key(match, closeness)

    def suggestions(self, reader: IndexReader) -> list[SymbolMatch]:
        return _suggest(reader, self.query, self.filters)

    def names(self, match: SymbolMatch) -> bool:
        """Whether the query's qualifier is ``match``'s own: the part before its name is the
        class (a Go method's receiver type) ``match`` is defined in, when it is defined in
        one, and the other parts are parts of its module and outer names, in order, spelled
        out. The qualified tiers take a part that only starts or ends a longer one too
        (``Store.save`` finds ``SessionStore.save``, ``Shape.Area`` finds ``Rect.Area`` of
        ``shapes.go``): near names for a lookup, never the definition a question about
        ``Shape.Area``'s uses means."""
        q = self.query
        if not q.qualified:
            return True
        qualname = match.qualname or match.name
        outer = list(_normed_parts(match.path, qualname)[:-1])
        want = [normalize_symbol(p) for p in q.parts[:-1]]
        if len(split_qualified(qualname)) > 1:  # a member: its class is the part before its name
            if not outer or outer[-1] != want[-1]:
                return False
            outer, want = outer[:-1], want[:-1]
        return _in_order(want, outer, loose=False) is not None

    def render(
        self, ranked: list[SymbolMatch], total: int, suggestions: tuple[SymbolMatch, ...], max_chars: int
    ) -> SymbolMatches:
        return _render(self.query.text, ranked, total, suggestions, _describe(self.filters), max_chars)


def _render(
    query: str,
    ranked: list[SymbolMatch],
    total: int,
    suggestions: tuple[SymbolMatch, ...],
    filters: dict[str, str],
    max_chars: int,
) -> SymbolMatches:
    where = f" ({', '.join(f'{k}={v}' for k, v in filters.items())})" if filters else ""
    if not ranked:
        text = f"No symbol matches {query!r}{where}."
        shown_suggestions = list(suggestions)
        while shown_suggestions:  # as many suggestions as fit
            more_text = "\nDid you mean: " + ", ".join(s.suggestion() for s in shown_suggestions) + "?"
            if len(text) + len(more_text) <= max_chars:
                text += more_text
                break
            shown_suggestions.pop()
        return SymbolMatches(query, (), 0, tuple(shown_suggestions), filters, text[:max_chars])
    head = f"{counted(total, 'symbol')} match {query!r}{where}:"
    lines = [head]
    size = len(head)
    shown: list[SymbolMatch] = []
    for i, m in enumerate(ranked):
        rest = total - i - 1
        tail = _more(rest) if rest else ""
        room = max_chars - size - 1 - (1 + len(tail) if tail else 0)
        # a match too long with its signature is still worth its location
        entry = next((e for e in (m.render(), m.render(signature=False)) if len(e) <= room), None)
        if entry is None:
            break
        lines.append(entry)
        size += 1 + len(entry)
        shown.append(m)
    more = total - len(shown)
    if more:
        lines.append(_more(more))
    text = "\n".join(lines)
    if len(text) > max_chars:  # not even one entry fits: keep the count and the hint
        text = f"{head}\n{_more(more)}"[:max_chars]
    return SymbolMatches(query, tuple(shown), total, (), filters, text)


def _more(n: int) -> str:
    return f"... {counted(n, 'more match', 'more matches')}; narrow with kind= or path="
