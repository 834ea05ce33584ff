"""Priors: source is weighed over tests, docs and generated code, unless the query asks for them."""

from __future__ import annotations

import pytest

from repolens.roles import OVERVIEW_WEIGHT, RANKING_WEIGHT, path_role
from repolens.search.priors import role_weight, wanted_roles
from repolens.search.query import parse_query

NONE: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    ("path", "weight"),
    [
        ("src/auth/session.py", 1.0),
        ("pyproject.toml", 0.8),
        ("examples/basic.py", 0.8),
        ("tests/test_session.py", 0.7),
        ("docs/usage.md", 0.6),
        ("api/service_pb2.py", 0.5),
        ("vendor/lib/x.go", 0.5),
    ],
)
def test_each_role_has_its_ranking_weight(path: str, weight: float) -> None:
    assert role_weight(path, NONE) == weight == RANKING_WEIGHT[path_role(path)]


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        ("where is the session saved", set()),
        ("the test for session expiry", {"test"}),
        ("tests of parse_url", {"test"}),
        ("what do the docs say about the README", {"doc"}),
        ("an example of a demo app", {"example"}),
        ("the CI workflow configuration", {"config"}),
        ("a pytest fixture in the documentation", {"test", "doc"}),
    ],
)
def test_a_query_about_a_role_names_it(query: str, wanted: set[str]) -> None:
    assert wanted_roles(parse_query(query)) == wanted


def test_only_the_subject_line_of_a_long_question_asks_for_a_role() -> None:
    """A pasted issue mentions tests and docs in passing; its subject says what it is about."""
    issue = "Session expiry ignores the clock skew\n\nSteps: run pytest, see the documentation.\n"
    assert wanted_roles(parse_query(issue)) == set()
    assert wanted_roles(parse_query("\nThe test for session expiry fails\n\nsince 2.0")) == {"test"}


def test_a_wanted_role_is_not_discounted() -> None:
    wanted = wanted_roles(parse_query("the test for session expiry"))
    assert role_weight("tests/test_session.py", wanted) == 1.0
    assert role_weight("docs/usage.md", wanted) == RANKING_WEIGHT["doc"]


def test_the_overview_discounts_every_role_less_than_ranking_does() -> None:
    """The overview's weights scale scores that ranking has already discounted."""
    assert OVERVIEW_WEIGHT.keys() == RANKING_WEIGHT.keys()
    assert OVERVIEW_WEIGHT["source"] == RANKING_WEIGHT["source"] == 1.0
    assert all(OVERVIEW_WEIGHT[r] > RANKING_WEIGHT[r] for r in RANKING_WEIGHT if r != "source")
