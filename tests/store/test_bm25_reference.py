"""The BM25 spec (repolens.store.bm25) reproduces the lexical index's (tantivy's) scores."""

from __future__ import annotations

import random

import pytest

from conftest import SAMPLE_FILES, write_tree_files
from repolens.index.build import build_index
from repolens.search.legs import FIELD_WEIGHTS, FLAT_FIELDS
from repolens.search.query import parse_query
from repolens.store import open_store
from repolens.store.base import LexFilters
from repolens.store.bm25 import (
    TEXT_FIELDS,
    Bm25Reference,
    fieldnorm_to_id,
    id_to_fieldnorm,
    quantized_length,
    split_tokens,
)
from repolens.store.document import document_fields
from repolens.store.local.reader import LocalReader

REL = 1e-5
WORDS = """
    parse request response session token cache header cookie route handler config error value
    stream buffer socket timeout retry encode decode json schema field record index query result
    matrix vector symbol expand simplify integrate series limit solve printer latex
""".split()  # noqa: SIM905


def _module(rng: random.Random, i: int) -> str:
    """A Python module of functions whose bodies run from a few tokens to hundreds,
    words drawn with a skew, so lengths cross the exact range of the length code."""
    out = [f'"""Module {i}: {" ".join(rng.choices(WORDS, k=rng.randint(2, 12)))}."""\n']
    for j in range(rng.randint(2, 6)):
        a, b = rng.sample(WORDS, 2)
        body_len = rng.choice([3, 10, 30, 45, 80, 150, 400])
        words = rng.choices(WORDS, weights=[1 / (k + 1) for k in range(len(WORDS))], k=body_len)
        lines = [" ".join(words[k : k + 8]) for k in range(0, len(words), 8)]
        body = "\n".join(f"    # {line}" for line in lines)
        out.append(
            f'\ndef {a}_{b}_{j}(value, {b}=None):\n    """{a.title()} the {b}."""\n{body}\n    return {a}\n'
        )
    name = f"{rng.choice(WORDS).title()}Store{i}"
    out.append(f"\n\nclass {name}:\n    def save(self, record):\n        return record\n")
    return "".join(out)


def _fixture_files(seed: int, count: int, prefix: str) -> dict[str, str]:
    rng = random.Random(seed)
    files = {f"{prefix}/{rng.choice(WORDS)}/mod_{i:02d}.py": _module(rng, i) for i in range(count)}
    files[f"docs/{prefix}.md"] = "# Notes\n\n" + "\n\n".join(
        " ".join(rng.choices(WORDS, k=rng.randint(20, 300))) for _ in range(6)
    )
    return files


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[LocalReader, Bm25Reference, dict]:
    """A repository indexed by repolens in two passes (a refresh that only adds
    files makes a second segment), with the reference built from the same chunks."""
    root = tmp_path_factory.mktemp("bm25") / "repo"
    write_tree_files(root, {**SAMPLE_FILES, **_fixture_files(1, 24, "pkg")})
    build_index(root)
    write_tree_files(root, _fixture_files(2, 10, "extra"))
    build_index(root)
    handle = open_store(root).open_reader()
    cids = [row[0] for row in handle.db.execute("SELECT cid FROM chunks")]
    docs = {cid: document_fields(s.chunk) for cid, s in handle.chunks(cids).items()}
    yield handle, Bm25Reference(docs), docs
    handle.close()


def _queries(docs: dict, n: int) -> list[list[tuple[str, float]]]:
    """Single tokens of every field, random weighted mixes, and parsed questions."""
    rng = random.Random(7)
    vocab = sorted({t for d in docs.values() for f in TEXT_FIELDS for t in split_tokens(d[f])})
    queries = [[(t, 1.0)] for t in vocab[:: max(1, len(vocab) // 150)]]
    for _ in range(n):
        terms = rng.sample(vocab, rng.randint(2, 20))
        queries.append([(t, rng.choice([0.5, 1.0, 1.3466, 2.0, 2.6931, 3.1])) for t in terms])
    for text in ("parse the request header", "SessionStore.save expires sessions", "`encode_json` fails"):
        queries.append(parse_query(text).weighted())
    queries.append([("nosuchtokenanywhere", 1.0), ("parse", 2.0)])
    return queries


def _assert_same(got: list[tuple[int, float]], expected: dict[int, float]) -> None:
    assert {cid for cid, _ in got} == set(expected)
    for cid, score in got:
        assert score == pytest.approx(expected[cid], rel=REL), cid


def test_the_fixture_spans_segments_and_quantized_lengths(indexed):
    handle, ref, docs = indexed
    assert handle.lex.index.searcher().num_segments >= 2
    assert handle.lex.num_docs == ref.num_docs == len(docs)
    lengths = ref.fields["body"].lengths.values()
    assert any(quantized_length(n) != n for n in lengths)  # longer than the exact range


@pytest.mark.parametrize("fields", [FIELD_WEIGHTS, FLAT_FIELDS], ids=["field-weights", "flat"])
def test_every_match_scores_as_tantivy_scores_it(indexed, fields):
    handle, ref, docs = indexed
    queries = _queries(docs, 200)
    assert len(queries) > 300
    for terms in queries:
        _assert_same(handle.lex.search(terms, fields, 100_000), ref.scores(terms, fields))


def test_the_top_hits_are_tantivys_top_hits_up_to_ties(indexed):
    handle, ref, docs = indexed
    for terms in _queries(docs, 100):
        got = handle.lex.search(terms, FIELD_WEIGHTS, 10)
        expected = ref.search(terms, FIELD_WEIGHTS, 10)
        every = ref.scores(terms, FIELD_WEIGHTS)
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=REL)
        # Ranks hold the same cids wherever the score is not shared with another
        # match (one ranked below the cut included: which of two tied matches
        # makes the tenth place is up to tantivy's segments).
        for (cid, score), (ref_cid, _) in zip(got, expected, strict=True):
            tied = [c for c, s in every.items() if c != ref_cid and s == pytest.approx(score, rel=REL)]
            if not tied:
                assert cid == ref_cid


def test_filters_add_their_own_scores(indexed):
    handle, ref, docs = indexed
    paths = sorted({d["dirs"][-1] for d in docs.values()})
    folders = sorted({d["dirs"][0] for d in docs.values()})
    filters = [
        *(LexFilters(p) for p in paths[::5]),
        *(LexFilters(f + "/") for f in folders),
        LexFilters(None, ("python",), ()),
        LexFilters(None, ("python", "markdown"), ("function", "method")),
        LexFilters("pkg", ("python",), ("class",)),
    ]
    for terms in _queries(docs, 20):
        for f in filters:
            _assert_same(
                handle.lex.search(terms, FIELD_WEIGHTS, 100_000, f), ref.scores(terms, FIELD_WEIGHTS, f)
            )


def test_lengths_are_coded_in_one_byte_exact_up_to_39():
    assert [fieldnorm_to_id(n) for n in range(41)] == list(range(41))
    assert [id_to_fieldnorm(c) for c in (40, 41, 48, 49, 57, 255)] == [40, 42, 56, 60, 96, 2_013_265_944]
    assert [quantized_length(n) for n in (41, 42, 43, 100, 1000, 10**12)] == [
        40,
        42,
        42,
        96,
        984,
        2_013_265_944,
    ]
    codes = [id_to_fieldnorm(c) for c in range(256)]
    assert codes == sorted(set(codes))
    assert all(fieldnorm_to_id(v) == c and fieldnorm_to_id(v - 1) == c - 1 for c, v in enumerate(codes) if c)


def test_tokens_split_on_ascii_whitespace_only():
    assert split_tokens(" a\tb\nc\r\fd  ") == ["a", "b", "c", "d"]
    assert split_tokens("a\u00a0b\x0bc") == ["a\u00a0b\x0bc"]
    # ASCII, which str.split() would also split at \x0b and \x1c-\x1f
    assert split_tokens("a\x0bb\x1cc\x1dd\x1ee\x1ff g") == ["a\x0bb\x1cc\x1dd\x1ee\x1ff", "g"]


def test_the_reference_scores_plain_fields_without_an_index():
    ref = Bm25Reference({1: {"body": "a b a"}, 2: {"body": "b c"}, 3: {"body": ""}})
    assert ref.num_docs == 3
    scores = ref.scores([("a", 1.0)], {"body": 1.0})
    assert list(scores) == [1]
    assert ref.search([("b", 1.0)], {"body": 1.0}, 5)[0][0] == 2  # shorter field wins at equal tf
