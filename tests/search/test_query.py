"""Query parsing: weighted terms, the identifiers, paths and scopes a question names."""

from __future__ import annotations

import pytest

from repolens.search.query import (
    IDENTIFIER_WEIGHT,
    MAX_TERMS,
    WORD_WEIGHT,
    looks_like_code,
    parse_query,
)


def weights(text: str) -> dict[str, float]:
    return {t.token: round(t.weight, 3) for t in parse_query(text).terms}


def test_prose_loses_its_stopwords_and_keeps_the_words_as_written() -> None:
    parsed = parse_query("How does the session store expire old sessions?")
    assert [(t.token, t.surface) for t in parsed.terms] == [
        ("session", "session"),
        ("store", "store"),
        ("expir", "expire"),
        ("old", "old"),
    ]
    assert parsed.tokens == frozenset({"session", "store", "expir", "old"})
    assert parsed.identifiers == parsed.paths == parsed.scopes == ()


def test_code_weighs_more_than_prose_and_repeats_a_little_more() -> None:
    assert weights("parse_url fails") == {
        "parseurl": IDENTIFIER_WEIGHT,
        "pars": IDENTIFIER_WEIGHT,
        "url": IDENTIFIER_WEIGHT,
        "fail": WORD_WEIGHT,
    }
    # twice: 1 + 0.5 * ln 2
    assert weights("parse_url calls parse_url")["parseurl"] == round(IDENTIFIER_WEIGHT * 1.3466, 3)


def test_a_question_made_only_of_stopwords_still_searches() -> None:
    assert list(weights("the the the")) == ["the"]


def test_unweighted_is_plain_bm25() -> None:
    parsed = parse_query("the parse_url", weighted=False)
    assert {t.weight for t in parsed.terms} == {1.0}
    assert "the" in parsed.tokens


def test_a_long_question_keeps_its_strongest_terms_in_order() -> None:
    words = [f"q{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(MAX_TERMS + 10)]  # qaa, qab, ...
    text = " ".join(words) + " the_end"  # one identifier among plain words, last
    tokens = [t.token for t in parse_query(text).terms]
    assert len(tokens) == MAX_TERMS
    # the identifier's two tokens weigh more: kept, in their place (last);
    # of the plain words, the first ones are kept
    assert tokens[:3] == words[:3]
    assert tokens[-2:] == ["theend", "end"]
    assert words[-1] not in tokens


def test_identifiers_come_from_code_spans_calls_and_code_looking_runs() -> None:
    parsed = parse_query("handleSubmit calls `Store.save` and then parse_url() twice")
    assert parsed.identifiers == ("Store.save", "parse_url", "handleSubmit")  # spans, calls, runs
    assert parse_query("parse_url").identifiers == ("parse_url",)  # one bare word is a name
    assert parse_query("the session").identifiers == ()


def test_paths_include_traceback_frames_and_file_names_but_not_versions_or_hosts() -> None:
    text = (
        'File "/home/u/.local/lib/python3.7/site-packages/sympy/matrices/dense.py", line 12\n'
        "see walk.rs, python 3.7.1 and www.example.com"
    )
    assert parse_query(text).paths == (
        "home/u/.local/lib/python3.7/site-packages/sympy/matrices/dense.py",
        "walk.rs",
    )


def test_commit_scopes() -> None:
    assert parse_query("fix(validator, cli): refuse empty names").scopes == ("validator", "cli")
    assert parse_query("feat(core)!: drop python 3.8").scopes == ("core",)
    assert parse_query("a fix (validator): not a scope").scopes == ()


@pytest.mark.parametrize(
    ("run", "code"),
    [
        ("snake_case", True),
        ("camelCase", True),
        ("dotted.name", True),
        ("path/x.py", True),
        ("utf8", True),
        ("plain", False),
        ("3.7.1", False),
        ("...", False),
    ],
)
def test_looks_like_code(run: str, code: bool) -> None:
    assert looks_like_code(run) is code
