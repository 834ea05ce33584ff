"""BM25 exactly as the lexical index (tantivy) scores it: the spec for any other store.

A second store (PostgreSQL) must rank lexically like the local one, so this
module writes down what tantivy computes for the queries
:meth:`repolens.store.local.lexical.LexicalIndex.search` builds, and reproduces it
from our own token lists. ``tests/store/test_bm25_reference.py`` holds it to
tantivy's scores (relative error below 1e-5; tantivy works in float32).

**The query.** For each query term ``(token, weight)`` and each field ``f``
(``path``, ``name``, ``sig``, ``body``) with weight ``w_f > 0``, a term query
boosted by ``weight * w_f``; all of them OR-ed. A document's score is the sum,
over the (term, field) pairs it contains, of::

    weight * w_f * idf(t, f) * (K1 + 1) * tf / (tf + K1 * (1 - B + B * dl / avgdl))

* ``K1 = 1.2``, ``B = 0.75`` (fixed in tantivy).
* ``tf``: occurrences of the token in the document's field.
* ``idf(t, f) = ln(1 + (N - n + 0.5) / (n + 0.5))``, ``n`` the number of
  documents whose field ``f`` contains the token, ``N`` the number of
  documents (all of them, also those where ``f`` is empty). Both are index-wide
  (summed over segments), not per segment.
* ``dl``: the field's length in tokens, **quantized to one byte** (Lucene's
  SmallFloat scheme: exact up to 39, then 8 steps per power of two, see
  :func:`fieldnorm_to_id`); a long body of 1000 tokens counts as 984.
* ``avgdl = total tokens of the field / N``, with the exact (not quantized)
  token count. Tokens are the words of :func:`repolens.store.document.document_fields`
  split on ASCII whitespace.

**Filters** (:class:`~repolens.store.base.LexFilters`) are extra MUST
clauses and they score too: a ``subpath`` adds the BM25 of the term
``subpath`` in the ``dirs`` field (boost 1, ``tf = 1``, ``dl`` = the number of
folder prefixes of the path, itself included); ``languages`` and ``kinds``
each add a constant 1.0 to every document they let through.

**Ties** are broken by tantivy's document address (segment, then document
number), which no other store can see; :meth:`Bm25Reference.search` breaks
them by ascending cid. Near-ties may also swap through float32 rounding.

**What a live index changes.** Tantivy keeps deleted documents in ``N``,
``n`` and the token totals until a merge drops them, and after merging
segments with deletions it re-estimates the token totals from the quantized
lengths. So after an incremental refresh its statistics drift slightly from
the live corpus; on a freshly built index they are exact, and that exact form
is the spec (a database computes it from live rows, which is better anyway).
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repolens.store.base import LexFilters

K1 = 1.2
B = 0.75
TEXT_FIELDS = ("path", "name", "sig", "body")
# Lengths below this are stored exactly; above, 3 bits of mantissa per power of two.
_EXACT_CODES = 24
# Tantivy's whitespace tokenizer splits on ASCII whitespace only (not U+000B).
_ASCII_SPACE = re.compile(r"[ \t\n\f\r]+")
# What str.split() also splits ASCII text at: without them it splits the same, in C (in about half the time).
_OTHER_ASCII_SPACE = re.compile("[\x0b\x1c-\x1f]")


def id_to_fieldnorm(code: int) -> int:
    """The field length a one-byte code stands for (0..255 -> 0..2_013_265_944)."""
    if code < _EXACT_CODES:
        return code
    rest = code - _EXACT_CODES
    mantissa, shift = rest & 0b111, rest >> 3
    return _EXACT_CODES + (mantissa if shift == 0 else (mantissa | 0b1000) << (shift - 1))


_FIELDNORMS = tuple(id_to_fieldnorm(code) for code in range(256))


def fieldnorm_to_id(length: int) -> int:
    """The code of the largest representable length not above ``length`` (rounds down)."""
    return bisect.bisect_right(_FIELDNORMS, length) - 1


def quantized_length(length: int) -> int:
    """``length`` as the scorer sees it: 41 -> 40, 100 -> 96, 1000 -> 984."""
    return _FIELDNORMS[fieldnorm_to_id(length)]


def idf(doc_freq: int, num_docs: int) -> float:
    return math.log(1.0 + (num_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def term_score(tf: int, length: int, doc_freq: int, num_docs: int, avg_length: float) -> float:
    """BM25 of one term in one field of one document, before the boost."""
    norm = K1 * (1.0 - B + B * quantized_length(length) / avg_length)
    return idf(doc_freq, num_docs) * (K1 + 1.0) * tf / (tf + norm)


def split_tokens(text: str) -> list[str]:
    """A field's tokens, split as the index's whitespace analyzer splits them."""
    if text.isascii() and _OTHER_ASCII_SPACE.search(text) is None:
        return text.split()
    return [t for t in _ASCII_SPACE.split(text) if t]


@dataclass
class _Field:
    """Postings and lengths of one field."""

    postings: dict[str, dict[int, int]] = field(default_factory=lambda: defaultdict(dict))
    lengths: dict[int, int] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return sum(self.lengths.values())


class Bm25Reference:
    """An in-memory index over ``{cid: document_fields(chunk)}``, scoring like
    :meth:`LexicalIndex.search` on a freshly built index. Slow and exact: a
    reference for tests and for other stores, not a search engine."""

    def __init__(self, docs: Mapping[int, Mapping[str, str | Sequence[str]]]) -> None:
        self.num_docs = len(docs)
        self.fields: dict[str, _Field] = {name: _Field() for name in (*TEXT_FIELDS, "dirs")}
        self.langs: dict[int, str] = {}
        self.kinds: dict[int, frozenset[str]] = {}
        for cid, doc in docs.items():
            for name in TEXT_FIELDS:
                value = doc.get(name, "")
                self._add(name, cid, split_tokens(value) if isinstance(value, str) else list(value))
            dirs = doc.get("dirs", ())
            self._add("dirs", cid, [dirs] if isinstance(dirs, str) else list(dirs))
            lang = doc.get("lang", "")
            self.langs[cid] = lang if isinstance(lang, str) else ""
            kind = doc.get("kind", ())
            self.kinds[cid] = frozenset([kind] if isinstance(kind, str) else kind)

    def _add(self, name: str, cid: int, tokens: list[str]) -> None:
        f = self.fields[name]
        f.lengths[cid] = len(tokens)
        for token, tf in Counter(tokens).items():
            f.postings[token][cid] = tf

    def _field_scores(self, name: str, token: str, boost: float) -> dict[int, float]:
        f = self.fields[name]
        posting = f.postings.get(token, {})
        if not posting:
            return {}
        avg = f.total_tokens / self.num_docs
        n = len(posting)
        return {
            cid: boost * term_score(tf, f.lengths[cid], n, self.num_docs, avg) for cid, tf in posting.items()
        }

    def scores(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        filters: LexFilters | None = None,
    ) -> dict[int, float]:
        """Every matching cid with its score (what ``search`` ranks)."""
        total: dict[int, float] = defaultdict(float)
        for token, weight in terms:
            for name, fw in field_weights.items():
                if fw <= 0 or weight <= 0:
                    continue
                for cid, s in self._field_scores(name, token, weight * fw).items():
                    total[cid] += s
        if filters is None:
            return dict(total)
        return self._filtered(total, filters)

    def _filtered(self, total: dict[int, float], f: LexFilters) -> dict[int, float]:
        out = {}
        subpath = f.subpath.strip("/") if f.subpath else ""
        dirs = self._field_scores("dirs", subpath, 1.0) if subpath else {}
        for cid, score in total.items():
            if subpath:
                if cid not in dirs:
                    continue
                score += dirs[cid]
            if f.languages:
                if self.langs[cid] not in f.languages:
                    continue
                score += 1.0
            if f.kinds:
                if not self.kinds[cid] & set(f.kinds):
                    continue
                score += 1.0
            out[cid] = score
        return out

    def search(
        self,
        terms: Sequence[tuple[str, float]],
        field_weights: Mapping[str, float],
        limit: int,
        filters: LexFilters | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``limit`` (cid, score), best first, ties by ascending cid."""
        found = self.scores(terms, field_weights, filters)
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:limit]
