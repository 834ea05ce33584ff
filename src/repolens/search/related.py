"""Words related to a question's, as the bundled model relates them, at the cost of a look-up.

The dense leg finds code by meaning and costs five times the index time.
``search/data/related.tsv`` keeps a sliver of the bundled MiniLM instead:
for each of a few thousand words common in code, the words the model puts
nearest it (``remove`` -> ``delete``, ``check`` -> ``verify``), distilled
by ``python -m bench.meaning related`` from repositories that are not the development
set's (its first line is the provenance). A search looks its question's
words up in it and the learned ranking reads, as features, how much of
those related words each candidate and its file hold: nothing is embedded
at index or search time, and no numpy is loaded.

The table is read once per process (a sorted list of lines, searched by
bisection: ~1 ms for the file, microseconds a word).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from repolens.search.shares import Shares

RELATED_FILE = "related.tsv"


@lru_cache(maxsize=1)
def _lines() -> list[str]:
    """The table's lines (``stem<TAB>stem:sim ...``, sorted), without its provenance line;
    empty when the file is missing (a packaging mistake: the features are then 0)."""
    try:
        text = (Path(__file__).with_name("data") / RELATED_FILE).read_text(encoding="utf-8")
    except OSError:
        return []
    return text.split("\n")[1:]


@lru_cache(maxsize=4096)
def neighbours(token: str) -> tuple[tuple[str, float], ...]:
    """The words related to ``token`` (a stem, as the tokenizer makes it),
    strongest first. Kept for the process's next questions (the table never
    changes under it): a pasted issue looks up ~40 words, most of them again
    in the next issue about the same code."""
    lines = _lines()
    key = token + "\t"
    i = bisect_left(lines, key)
    if i == len(lines) or not lines[i].startswith(key):
        return ()
    out = []
    for pair in lines[i][len(key) :].split():
        word, _, sim = pair.rpartition(":")
        out.append((word, float(sim)))
    return tuple(out)


def related_weights(terms: Sequence[tuple[str, float]]) -> dict[str, float]:
    """The words related to the question's ``terms`` (token, weight) that the
    question does not hold itself, each weighing its strongest term's weight
    times their similarity."""
    own = {tok for tok, _ in terms}
    out: dict[str, float] = {}
    for tok, weight in terms:
        for word, sim in neighbours(tok):
            if word not in own and weight * sim > out.get(word, 0.0):
                out[word] = weight * sim
    return out


RELATED_FEATURES: tuple[str, ...] = ("related_terms", "file_related_terms")


def related_columns(
    related: Mapping[str, float],
    texts: Sequence[str],
    paths: Sequence[str],
    find: Callable[[Sequence[str], Sequence[str]], list[frozenset[str]]] | None = None,
    in_text: Sequence[frozenset[str]] | None = None,
) -> dict[str, list[float]]:
    """:data:`RELATED_FEATURES` for candidates of ``texts`` (their chunks'
    text) in files ``paths``: the share of the related words' weight (the
    question's :func:`related_weights`) a chunk holds (anywhere, in any
    case, as the question's own terms are counted: ``find(texts, words)``
    says which words each text holds, by default one test per word and
    text; ``in_text``, when given, says it already, found with the
    question's terms in one pass), and that all its file's candidates hold
    together."""
    total = math.fsum(related.values())
    n = len(texts)
    if not total:
        return {name: [0.0] * n for name in RELATED_FEATURES}
    words = list(related)
    if in_text is None:
        in_text = (
            find(texts, words) if find else [frozenset(w for w in words if w in t.lower()) for t in texts]
        )
    # the related words each text holds, met as sets (the smaller side walked, in C)
    held = [frozenset(related.keys() & found) for found in in_text]
    per_file: dict[str, set[str]] = {}
    for path, found in zip(paths, held, strict=True):
        per_file.setdefault(path, set()).update(found)
    share = Shares(related)
    file_share = dict(zip(per_file, share.each(frozenset(f) for f in per_file.values()), strict=True))
    return {
        "related_terms": share.each(held),
        "file_related_terms": [file_share[path] for path in paths],
    }
