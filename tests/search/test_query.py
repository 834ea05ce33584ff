"""Query parsing: weighted terms, the identifiers, paths and scopes a question names."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from repolens.index.build import build_index
from repolens.search.filters import Filters
from repolens.search.query import (
    _NOT_FILE_EXT,
    _PATH,
    IDENTIFIER_WEIGHT,
    MAX_COMPLETIONS,
    MAX_PATHS,
    MAX_TERMS,
    SUBJECT_WEIGHT,
    WORD_WEIGHT,
    _paths,
    looks_like_code,
    parse_query,
    with_completions,
)
from repolens.search.ranking import search
from repolens.settings import load_settings
from repolens.store import open_store


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


def test_the_subject_line_of_a_longer_question_weighs_more() -> None:
    assert weights("Session expiry ignores skew\n\nthe cache logs skew") == {
        "session": SUBJECT_WEIGHT * WORD_WEIGHT,
        "expiri": SUBJECT_WEIGHT * WORD_WEIGHT,
        "ignor": SUBJECT_WEIGHT * WORD_WEIGHT,
        "skew": round(SUBJECT_WEIGHT * WORD_WEIGHT * (1 + 0.5 * math.log(2)), 3),
        "cach": WORD_WEIGHT,
        "log": WORD_WEIGHT,
    }
    # the subject is the first line with words; a question of one line is all subject
    assert weights("\n  \nSession expiry\nthe cache")["session"] == SUBJECT_WEIGHT * WORD_WEIGHT
    assert weights("Session expiry\n\n")["session"] == weights("Session expiry")["session"] == WORD_WEIGHT
    # a question that opens with a fenced block has no subject line
    fenced = weights("```python\nsession.expire()\n```\nthe cache")
    assert fenced["python"] == WORD_WEIGHT
    assert fenced == weights("~~~python\nsession.expire()\n~~~\nthe cache")


# An issue whose body pastes the reporter's package list: more of its words
# are in the environment report than the subject's are in the xfail code.
XFAIL_FILES = {
    "src/runner/xfail.py": '''"""Expected failures: a test marked xfail may fail without failing the run."""


def evaluate_xfail(item):
    """The xfail marker of ``item``, whether added when collected or dynamically while it runs."""
    for marker in item.iter_markers(name="xfail"):
        if marker.kwargs.get("run", True):
            return marker
    return None


def outcome(item, failed):
    """A failure of a test with an xfail marker is ignored (reported as xfailed)."""
    return "xfailed" if failed and evaluate_xfail(item) else ("failed" if failed else "passed")
''',
    "src/report/environment.py": '''"""A run's header: installed packages and their versions."""


def package_rows(distributions):
    """One row per installed package: name, version and location."""
    return [(d.name, d.version, d.location) for d in distributions]


NOTABLE = ("aiohttp", "attrs", "boto", "bokeh", "numpy", "pandas", "pluggy", "sphinx")
''',
}
XFAIL_ISSUE = """Dynamically adding an xfail marker no longer ignores the failure
```
Package    Version  Location
aiohttp    3.6.2
attrs      19.1.0
boto       2.49.0
bokeh      1.3.4
numpy      1.18.1
pandas     1.0.3
sphinx     3.0.0
```
"""


def test_the_subject_outranks_pasted_output_in_the_body(plain_dir: Path, write_tree) -> None:
    write_tree(plain_dir, XFAIL_FILES)
    build_index(plain_dir)
    reader = open_store(plain_dir, None).open_reader()
    try:
        outcome = search(reader, plain_dir, XFAIL_ISSUE, load_settings(plain_dir), Filters())
        assert outcome.hits[0].chunk.path == "src/runner/xfail.py"
    finally:
        reader.close()


def test_identifiers_come_from_code_spans_calls_and_code_looking_runs() -> None:
    parsed = parse_query("handleSubmit calls `Store.save` and then parse_url() twice")
    assert parsed.identifiers == ("Store.save", "parse_url", "handleSubmit")  # spans, calls, runs
    assert parse_query("parse_url").identifiers == ("parse_url",)  # one bare word is a name
    assert parse_query("_literal").identifiers == ("_literal",)  # spelled as asked
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


def test_paths_found_run_by_run_are_those_the_pattern_finds_anywhere() -> None:
    """``_paths`` tries the path pattern once per run of path characters
    holding a dot; scanning the whole text with it (the reference below)
    finds the same paths."""
    rng = random.Random(36)
    texts = ["see src/a.py.", "a.b.c/d.py-x", "/home/u/x.tar.gz/", "v3.7.1 and lib/x.js:10 (a/b.rs)"]
    texts += ["".join(rng.choice("ab./-_( )\n:x1Z") for _ in range(rng.randint(1, 40))) for _ in range(5000)]
    for text in texts:
        assert _paths(text) == _paths_anywhere(text), text


def _paths_anywhere(text: str) -> list[str]:
    found = []
    for m in _PATH.finditer(text):
        candidate = m.group(1).strip("./")
        ext = candidate.rsplit(".", 1)[-1].lower()
        version = re.fullmatch(r"[\d.]+\w?", candidate)
        if ext in _NOT_FILE_EXT or ext.isdigit() or "." not in candidate or version:
            continue
        found.append(candidate)
    return list(dict.fromkeys(found))[:MAX_PATHS]


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


@pytest.mark.parametrize(
    ("text", "plain", "prefixes"),
    [
        ("zorb*", "zorb", ("zorb",)),
        ("find handleSub* and parse_ur*.", "find handleSub and parse_ur.", ("handlesub", "parseur")),
        ("is `zorb*` (or Store.sa*) used?", "is `zorb` (or Store.sa) used?", ("zorb", "sa")),
        ("**bold** and *emphasis*", "**bold** and *emphasis*", ()),
        ("x*y + 2**3 and f(**kwargs) or int* p", "x*y + 2**3 and f(**kwargs) or int p", ("int",)),
        ("pytest tests/test_*.py", "pytest tests/test_*.py", ()),
        ("a* b* c*", "a b c", ()),  # a letter is no prefix: nothing is indexed that short
        ("a* b* c* d* e*", "a b c d e", ()),
        ("aa* bb* cc* dd* ee*", "aa bb cc dd ee", ("aa", "bb", "cc", "dd")),
    ],
)
def test_a_word_ending_in_one_star_is_read_as_the_word_and_kept_as_a_prefix(
    text: str, plain: str, prefixes: tuple[str, ...]
) -> None:
    parsed = parse_query(text)
    assert tuple(p for p, _ in parsed.prefixes) == prefixes
    assert parsed.text == text
    assert parsed._replace(text=plain, prefixes=()) == parse_query(plain)


def test_completions_join_at_the_weight_of_their_word_with_notes_for_none_and_too_many() -> None:
    asked: list[tuple[str, int]] = []

    def complete(prefix: str, limit: int) -> list[str]:
        asked.append((prefix, limit))
        words = {
            "zorb": ["zorb", "zorbular", "zorbifyal"],
            "handlesub": [],
            "qq": [f"qq{i}" for i in range(40)],
        }
        return words[prefix][:limit]

    parsed = parse_query("where is zorb* used by handleSub* and qq*")
    done, notes = with_completions(parsed, complete)
    assert asked == [
        ("zorb", MAX_COMPLETIONS + 1),
        ("handlesub", MAX_COMPLETIONS + 1),
        ("qq", MAX_COMPLETIONS + 1),
    ]
    assert notes == [
        "no indexed word starts with 'handlesub'",
        f"qq* stands for the {MAX_COMPLETIONS} shortest indexed words starting with it: "
        "type more of it for the others",
    ]
    added = {t.token: t.weight for t in done.terms[len(parsed.terms) :]}
    word = {t.token: t.weight for t in parsed.terms}
    assert list(added) == ["zorbular", "zorbifyal", *(f"qq{i}" for i in range(MAX_COMPLETIONS))]
    assert added["zorbular"] == word["zorb"] and added["qq0"] == word["qq"]
    assert done._replace(terms=parsed.terms) == parsed
    assert with_completions(parse_query("no prefix here"), complete) == (parse_query("no prefix here"), [])
