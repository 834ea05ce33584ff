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


def postings(cid: int, fields: LexicalFields) -> tuple[list[tuple[str, int, int]], list[int]]:
    """The (token, field, packed) postings of one chunk's document, and its
    token count per scored field (path, name, sig, body, dirs)."""
    out: list[tuple[str, int, int]] = []
    lens: list[int] = []
    for f, name in enumerate(SCORED):
        value = fields.get(name, "")
        tokens = split_tokens(value) if isinstance(value, str) else [t for t in value if t]
        lens.append(len(tokens))
        base = pack(cid, 0, len(tokens))  # a field's length is coded once, not per token
        out.extend((token, f, base | min(tf, MAX_TF) << 8) for token, tf in Counter(tokens).items())
    for f, name in ((LANG, "lang"), (KIND, "kind")):
        value = fields.get(name, "")
        for token in {value} if isinstance(value, str) else set(value):
            if token:
                out.append((token, f, pack(cid, 1, 1)))
    return out, lens
