"""Priors: what kind of file an answer usually lives in.

A question about behaviour is answered by source code far more often than by
the changelog, the test or the generated file that mentions the same words,
and BM25 cannot know that. The prior scales a chunk's score by its file's
role (``repolens.roles.path_role``), unless the query asks about that role
("the test for ...", "docs say ..."): then that role is not discounted.
Only the question's subject (its first line) can ask: a pasted issue or
commit message mentions tests, docs and examples in passing ("steps to
reproduce: run pytest", "see the documentation") while it is about source
code, and lifting the discount for a word in its body let tests and the
changelog crowd source out of the packet.
"""

from __future__ import annotations

from repolens.roles import RANKING_WEIGHT, PathRole, path_role
from repolens.search.query import ParsedQuery
from repolens.tokens import tokenize

# Query words that make a role the subject of the question (tokenized, so
# "tests" and "testing" count as "test").
_ROLE_WORDS: dict[PathRole, frozenset[str]] = {
    role: frozenset(tokenize(words))
    for role, words in {
        "test": "test spec fixture pytest unittest",
        "doc": "doc documentation readme changelog guide tutorial",
        "example": "example demo",
        "config": "config configuration workflow dockerfile",
    }.items()
}


def wanted_roles(query: ParsedQuery) -> frozenset[str]:
    """Roles the query's subject line is about (never discounted for this
    query), from the tokens :func:`~repolens.search.query.parse_query` kept."""
    return frozenset(role for role, words in _ROLE_WORDS.items() if query.subject & words)


def role_weight(path: str, wanted: frozenset[str]) -> float:
    """The ranking weight of ``path``'s role (:data:`repolens.roles.RANKING_WEIGHT`),
    1 when the query is about that role."""
    role = path_role(path)
    return 1.0 if role in wanted else RANKING_WEIGHT.get(role, 1.0)
