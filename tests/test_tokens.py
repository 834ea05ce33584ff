"""The code-aware tokenizer: one splitter for documents and queries."""

import json
import random
from pathlib import Path

import pytest

from repolens.search.query import looks_like_code, parse_query
from repolens.store.handles import readers
from repolens.tokens import (
    TermsIn,
    has_token,
    lines_with_token,
    terms_in,
    tokenize,
    tokenize_path,
    tokens_by_line,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("handleSubmit", ["handlesubmit", "handl", "submit"]),
        ("handle_submit", ["handlesubmit", "handl", "submit"]),
        ("HandleSubmit", ["handlesubmit", "handl", "submit"]),
        ("handle-submit", ["handlesubmit", "handl", "submit"]),
        ("parseURL", ["parseurl", "pars", "url"]),
        ("URLParser", ["urlparser", "url", "parser"]),
        ("utf8", ["utf8", "utf"]),
        ("md5sum", ["md5sum", "md", "sum"]),
        ("__init__", ["init"]),
        ("x = y + 1", []),
        ("naïveValue", ["naïvevalue", "naïv", "valu"]),
    ],
)
def test_identifiers_split_stem_their_parts_and_keep_the_exact_whole(text, expected):
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("query", "document"),
    [
        ("handleSubmit", "def handle_submit(form):"),
        ("handleSubmit", "class HandleSubmit:"),
        ("parse_url", "function parseURL(s) {"),
        ("ParseUrl", "PARSE_URL = 1"),
    ],
)
def test_query_identifier_meets_every_naming_style(query, document):
    whole = tokenize(query)[0]
    assert whole in tokenize(document)


def test_word_forms_meet_on_one_stem():
    assert tokenize("sessions expired expires") == tokenize("session expire expire")


def test_path_components_are_tokens():
    assert tokenize_path("src/auth/SessionStore.py") == [
        "src",
        "auth",
        "sessionstore",
        "session",
        "store",
        "py",
    ]


def test_long_noise_tokens_are_dropped():
    assert tokenize("a" * 200) == []


def test_stopwords_leave_the_query_but_not_when_nothing_else_is_left():
    q = parse_query("how does the parser handle tokens when the input ends")
    assert [t.token for t in q.terms] == ["parser", "handl", "token", "input", "end"]
    only = parse_query("when and if")
    assert {t.token for t in only.terms} == {"when", "and", "if"}


def test_unweighted_queries_are_plain_bm25_terms():
    """query_weights = false: the baseline query understanding is measured against."""
    q = parse_query("the `retry_count` option is the retry_count", weighted=False)
    assert {t.weight for t in q.terms} == {1.0}
    assert "the" in [t.token for t in q.terms]


def test_query_understanding_can_be_switched_off_for_a_search(sample_repo, monkeypatch):
    from repolens import service

    def scores() -> list[float]:
        reply = service.search_code("how are the submitted forms handled", sample_repo, mode="json")
        readers.clear()
        return [h["score"] for h in json.loads(reply.text)["hits"]]

    weighted = scores()
    monkeypatch.setenv("REPOLENS_QUERY_WEIGHTS", "0")
    plain = scores()
    assert weighted and plain and weighted != plain  # stopwords and flat field weights change scores


def test_code_spans_weigh_more_than_prose():
    q = parse_query("the `retry_count` option is ignored by fetchPage")
    weights = {t.token: t.weight for t in q.terms}
    assert weights["retrycount"] > weights["option"]
    assert weights["fetchpage"] > weights["ignor"]


@pytest.mark.parametrize(
    "run", ["snake_case", "camelCase", "os.path.join", "src/x.py", "Type::method", "HTTPServer"]
)
def test_looks_like_code(run):
    assert looks_like_code(run)


@pytest.mark.parametrize("run", ["hello", "3.14", "Python", "--", "well-known"])
def test_prose_does_not_look_like_code(run):
    assert not looks_like_code(run)


def test_an_identifier_splits_as_its_separated_pieces_do():
    """Parts of ``a_b-c`` are the parts of ``a``, ``b`` and ``c`` in turn (the
    tokenizer scans a whole ASCII identifier at once, relying on this)."""
    import random
    import re

    from repolens.tokens import split_identifier

    rnd = random.Random(15)
    alphabet = "aBz9Q_-xURLParse0"
    for _ in range(20_000):
        word = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 16)))
        pieces = [p for p in re.split(r"[_\-]+", word) if p]
        expected = [part for piece in pieces for part in split_identifier(piece)]
        assert split_identifier(word) == expected, word
    assert split_identifier("parse_URLParser-v2") == ["parse", "url", "parser", "v", "2"]


@pytest.mark.parametrize(
    "text",
    [
        "a--b -c- _-a __ _x_ x-_y a-b-c- -",
        "handle-submit\x1cfoo_bar\x0bBaz\tqux",
        "naïve-Value x_y",
        "",
        "__init__",
    ],
)
def test_the_terms_a_text_holds_are_among_its_tokens(text):
    every = frozenset(tokenize(text))
    assert terms_in(text, every | {"zz"}) == every
    assert terms_in(text, frozenset({"zz", "handl", "foo"})) == every & {"handl", "foo"}


def _texts() -> list[str]:
    """This project's sources, and noise of the characters runs start, hold
    and end at (mostly ASCII: that is the fast path)."""
    sources = [
        p.read_text(encoding="utf-8") for p in sorted(Path(__file__).parents[1].glob("src/repolens/**/*.py"))
    ]
    rng = random.Random(13)
    noise = ["".join(rng.choice("aZ9_- .\n-_\t") for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    return sources + noise + [f"{text}é" for text in noise[:300]]


def test_the_terms_any_text_holds_are_among_its_tokens():
    """ASCII text is split at the characters no run holds rather than
    scanned: the same runs, whatever the hyphens and underscores around."""
    for text in _texts():
        every = frozenset(tokenize(text))
        assert terms_in(text, every | {"zz"}) == every, text


def test_terms_asked_of_many_texts_are_found_as_in_each_alone():
    """One TermsIn over many texts remembers the pieces it has split: what
    it finds in each is what terms_in finds in that text alone."""
    texts = _texts()
    wanted = frozenset(tokenize(" ".join(texts[::40]))) | {"zz"}
    found_in = TermsIn(wanted)
    for text in [*texts, *texts[:200]]:  # the second time, every piece is known
        assert found_in(text) == terms_in(text, wanted), text
    assert TermsIn(frozenset())(texts[0]) == frozenset()


def test_the_lines_with_a_token_are_those_that_have_one():
    texts = _texts()
    wanted = frozenset(tokenize(" ".join(texts[::50])))
    for text in texts:
        lines = text.split("\n")
        for tokens in (wanted, frozenset(tokenize(lines[0])), frozenset({"x9", "az"})):
            expected = [i for i, line in enumerate(lines) if has_token(line, tokens)]
            assert lines_with_token(lines, tokens) == expected, text
    assert lines_with_token(["a_b\nc_d", "e_f"], frozenset({"cd"})) == [0]


def test_the_tokens_of_each_line_are_those_tokenize_finds():
    texts = _texts()
    kept = frozenset(tokenize(" ".join(texts[::50])))
    for text in texts:
        lines = text.split("\n")
        for tokens in (kept, frozenset(tokenize(lines[-1]))):
            assert tokens_by_line(lines, tokens) == [
                [t for t in tokenize(line) if t in tokens] for line in lines
            ]
    assert tokens_by_line(["a_b\nc_d", "e_f"], frozenset({"cd", "ef"})) == [["cd"], ["ef"]]


def test_one_termsin_finds_the_lines_and_tokens_of_many_texts_as_each_alone():
    """A reply asks one TermsIn of the lines of many hits (and some twice):
    the lines with a term and each line's terms are what lines_with_token
    and tokens_by_line find in those lines alone."""
    texts = _texts()
    wanted = frozenset(tokenize(" ".join(texts[::50]))) | {"zz"}
    found_in = TermsIn(wanted)
    for text in [*texts, *texts[:200]]:
        lines = text.split("\n")
        assert found_in.lines_with_term(lines) == lines_with_token(lines, wanted), text
        assert found_in.terms_by_line(lines) == tokens_by_line(lines, wanted), text
        assert found_in(text) == terms_in(text, wanted), text
    assert TermsIn(frozenset({"cd"})).lines_with_term(["a_b\nc_d", "e_f"]) == [0]


def test_a_document_field_is_the_tokens_joined():
    """Fields are made by splitting ASCII text at what no run holds, with
    each distinct piece joined once: the same tokens as a scan finds."""
    from repolens.tokens import token_text

    longest = f"{'a' * 49} {'9' * 49} {'b' * 48} {'7' * 48}"  # over and at MAX_TOKEN_LEN
    odd = ["a--b -c- _-a __ _x_ x-_y a-b-c- -", "0123 x2 1800\n9-9 __9", "naïve-Value x_y", longest]
    for text in [*_texts(), *odd]:
        assert token_text(text) == " ".join(tokenize(text)), text


def test_the_piece_cache_is_bounded_and_stays_right_when_emptied(monkeypatch) -> None:
    """The cache of pieces' tokens is emptied when full: memory stays
    bounded on a big repository, and what it gives is unchanged."""
    from repolens import tokens
    from repolens.tokens import token_text

    monkeypatch.setattr(tokens, "_PIECE_CACHE_SIZE", 3)
    tokens._PIECE_TEXTS.clear()
    text = "parseUrl sessions 1800 x __init__ a-b HTTPServer utf8 the sessions parseUrl"
    assert token_text(text) == " ".join(tokenize(text))
    assert len(tokens._PIECE_TEXTS) <= 3
    assert token_text(text) == " ".join(tokenize(text))
    tokens._PIECE_TEXTS.clear()
