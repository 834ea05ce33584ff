"""One lexical posting as an ``int8``: the format the writer packs and the reader scores.

``cid << 32 | tf << 8 | length code`` (the one-byte field-norm code of the
field's length), so a list sorted by value is sorted by cid. Fields 0..3 are
the scored text fields, 4 is ``dirs`` (every folder prefix), 5 ``lang`` and
6 ``kind`` (see :mod:`repolens.store.postgres.lexical` for how each scores).

No numpy here: the indexing process imports this and not the scoring.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from repolens.store.bm25 import fieldnorm_to_id, split_tokens
from repolens.store.document import TEXT_FIELDS

if TYPE_CHECKING:
    from repolens.store.base import LexicalFields

DIRS, LANG, KIND = 4, 5, 6
SCORED = (*TEXT_FIELDS, "dirs")  # the fields with lengths and statistics
MAX_TF = (1 << 24) - 1


def pack(cid: int, tf: int, length: int) -> int:
    return cid << 32 | min(tf, MAX_TF) << 8 | fieldnorm_to_id(length)


# Per field (0..6), each token's packed postings: what a build gathers.
Lists = list[dict[str, list[int]]]


def new_lists() -> Lists:
    return [{} for _ in range(KIND + 1)]


def add_postings(lists: Lists, cid: int, fields: LexicalFields) -> list[int]:
    """Append the postings of chunk ``cid``'s document to ``lists`` (each
    list stays ascending when cids come ascending) and return its token
    count per scored field (path, name, sig, body, dirs)."""
    high = cid << 32
    step = 1 << 8  # tf 1
    lens: list[int] = []
    for f, name in enumerate(SCORED):
        value = fields.get(name, "")
        tokens = split_tokens(value) if isinstance(value, str) else [t for t in value if t]
        n = len(tokens)
        lens.append(n)
        into = lists[f]
        if n > MAX_TF:  # a tf past MAX_TF would carry into the cid: count, and cap
            for token, tf in Counter(tokens).items():
                into.setdefault(token, []).append(pack(cid, tf, n))
            continue
        first = high | step | fieldnorm_to_id(n)
        # A token's list ends with this chunk's posting once it was met here:
        # each meeting after the first adds one to its tf. Faster than counting first.
        for token in tokens:
            values = into.get(token)
            if values is None:
                into[token] = [first]
            elif values[-1] >= high:
                values[-1] += step
            else:
                values.append(first)
    one = pack(cid, 1, 1)
    for f, name in ((LANG, "lang"), (KIND, "kind")):
        value = fields.get(name, "")
        into = lists[f]
        for token in {value} if isinstance(value, str) else set(value):
            if token:
                into.setdefault(token, []).append(one)
    return lens


def postings(cid: int, fields: LexicalFields) -> tuple[list[tuple[str, int, int]], list[int]]:
    """The (token, field, packed) postings of one chunk's document, and its
    token count per scored field (see :func:`add_postings`)."""
    lists = new_lists()
    lens = add_postings(lists, cid, fields)
    return [(token, f, values[0]) for f, into in enumerate(lists) for token, values in into.items()], lens
