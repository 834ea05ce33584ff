"""Priors: source is weighed over tests, docs and generated code, unless the query asks for them."""

from __future__ import annotations

import re

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


def test_the_priors_read_the_question_as_parsed_once() -> None:
    """The subject line is tokenized when the question is parsed, once per
    search: the priors read those tokens, not the question's text again
    (the same tokens as the subject line's own, a partial identifier's
    ``*`` aside, which splits no token)."""
    parsed = parse_query("The test for zorb* expiry\n\nSteps: see the documentation")
    assert parsed.subject == {"the", "test", "for", "zorb", "expiri"}
    assert wanted_roles(parsed) == {"test"}
    assert wanted_roles(parsed._replace(text="what the docs say")) == {"test"}
    assert wanted_roles(parsed._replace(subject=frozenset({"doc"}))) == {"doc"}


def test_a_wanted_role_is_not_discounted() -> None:
    wanted = wanted_roles(parse_query("the test for session expiry"))
    assert role_weight("tests/test_session.py", wanted) == 1.0
    assert role_weight("docs/usage.md", wanted) == RANKING_WEIGHT["doc"]


def test_the_overview_discounts_every_role_less_than_ranking_does() -> None:
    """The overview's weights scale scores that ranking has already discounted."""
    assert OVERVIEW_WEIGHT.keys() == RANKING_WEIGHT.keys()
    assert OVERVIEW_WEIGHT["source"] == RANKING_WEIGHT["source"] == 1.0
    assert all(OVERVIEW_WEIGHT[r] > RANKING_WEIGHT[r] for r in RANKING_WEIGHT if r != "source")


# The patterns roles.py matched file names with before it used str methods
# (compiling them cost every new process ~1 ms); the checks must agree with
# them on every name (names holding a line break aside: ``$`` and ``.``
# treat one specially).
_GENERATED_FILE = re.compile(
    r"""(
        _pb2(_grpc)?\.pyi?$ | \.pb\.(go|cc|h|c)$ | _pb\.(js|d\.ts)$ | \.pb\.gw\.go$
      | ^zz_generated\. | [._]generated\.[^.]+$ | \.gen\.[^.]+$ | _gen\.go$
      | \.min\.(js|css)$ | \.designer\.cs$ | \.g\.dart$ | \.freezed\.dart$
    )""",
    re.X,
)
_TEST_FILE = re.compile(
    r"""(
        ^test_.+\.py$ | _tests?\.py$ | ^tests?\.py$ | ^conftest\.py$
      | _test\.(go|rs|exs?|dart|cc|cpp|c)$ | \.(test|spec)\.[cm]?[jt]sx?$
      | (Test|Tests|Spec|IT)\.(java|kt|scala|cs|php|swift)$ | _spec\.rb$ | _test\.rb$
    )""",
    re.X,
)
_CONFIG_FILE = re.compile(r"(\.config\.[cm]?[jt]s$|^\.[\w-]+rc(\.\w+)?$|^tsconfig.*\.json$)")


def _pieces(words: str) -> list[str]:
    """The empty string and each of ``words``."""
    return ["", *words.split()]


# Names are a head, a middle and a tail (each may be empty), and the upper
# and lower case of each.
_HEADS = _pieces(
    "a x. . _ - test_ test tests zz_generated zz_generated. tsconfig conftest "
    ".eslint .a-b .é Foo foo_ foo. r rc .rc .x_rc Ü"
)
_MIDDLES = _pieces(
    "_pb2 _pb2_grpc _pb .pb .pb.gw _gen .min .designer .g .freezed "
    ".generated _generated generated .gen gen _test _tests _spec .test .spec "
    "Test Tests Spec IT it .config config rc .a rc. rc.json rc.a.b rc-x"
)
_TAILS = _pieces(
    ". py .py .pyi .go .cc .h .c .cpp .rs .ex .exs .dart .js .d.ts .ts .mjs .cts .jsx "
    ".tsx .mtsx .css .cs .java .kt .scala .php .swift .rb .json .JSON .json.bak .toml "
    "x .x.y .é .a-b .é1_"
)


def test_the_file_name_checks_agree_with_the_patterns_they_replace():
    from repolens import roles

    names = {h + m + t for h in _HEADS for m in _MIDDLES for t in _TAILS}
    names |= {n.upper() for n in names} | {n.lower() for n in names}
    assert len(names) > 30_000
    for name in names:
        assert roles._generated_name(name) == bool(_GENERATED_FILE.search(name)), name
        assert roles._test_name(name) == bool(_TEST_FILE.search(name)), name
        lname = name.lower()
        assert roles._config_name(lname) == bool(_CONFIG_FILE.search(lname)), name
