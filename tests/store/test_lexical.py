"""Lexical retrieval: BM25 with the code-aware tokenizer, on a real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from repolens import service
from repolens.index.build import build_index
from repolens.search.query import ParsedQuery, QueryTerm
from repolens.search.ranking import RankingOptions, search_index
from repolens.settings import Settings
from repolens.store import open_store
from repolens.store.handles import readers
from repolens.tokens import tokenize


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _paths(root: Path, query: str, k: int = 5) -> list[str]:
    data = service.search_code(query, root, top_k=k, max_chars=50_000).packet.to_json()
    return [h["path"] for h in data["hits"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("handleSubmit", {"src/web/forms.py", "web/app.js"}),
        ("handle_submit", {"src/web/forms.py", "web/app.js"}),
        ("parse_url", {"src/web/forms.py", "web/app.js"}),
        ("parseURL", {"src/web/forms.py", "web/app.js"}),
    ],
)
def test_identifier_finds_every_naming_style(sample_repo: Path, query: str, expected: set[str]):
    assert expected <= set(_paths(sample_repo, query, k=3))


def test_path_components_are_searchable(sample_repo: Path):
    assert "src/auth/session.py" in _paths(sample_repo, "auth")


# Ten modules about parsing tokens; one unrelated file that happens to be
# full of English words that are rare in code.
_PARSER_FILES = {
    f"lang/stage{i}.py": (
        f"def stage{i}(tokens):\n"
        f"    # the parser stage {i} reads tokens\n"
        "    return [t for t in tokens if t]\n"
    )
    for i in range(10)
}
_TRAP_FILES = {
    **_PARSER_FILES,
    "lang/parser.py": (
        "class Parser:\n"
        "    def parse(self, tokens):\n"
        "        for token in tokens:\n"
        "            self.handle(token)\n"
        "\n"
        "    def handle(self, token):\n"
        "        if token.kind == 'end':\n"
        "            return self.finish()\n"
    ),
    "notes/changelog.txt": (
        "When and where does it happen, and what would we do then?\n"
        "When it does, then we do what we would do, and where we would do it.\n"
    ),
}


def test_english_words_rare_in_code_do_not_dominate_a_long_question(make_repo):
    root = make_repo(_TRAP_FILES)
    question = "when and where does the parser handle the end token, and what would it do then?"
    assert _paths(root, question)[0] == "lang/parser.py"

    # The trap is real: the same question with its stopwords given full
    # weight puts the changelog first.
    build_index(root)
    reader = open_store(root).open_reader()
    try:
        raw = tuple(QueryTerm(tok, 1.0, False) for tok in dict.fromkeys(tokenize(question)))
        tuned = RankingOptions.from_settings(Settings(ranking="tuned", priors=False))
        trapped = search_index(reader, ParsedQuery(question, raw), options=tuned)
        assert trapped.hits[0].chunk.path == "notes/changelog.txt"
    finally:
        reader.close()


def test_filters_by_subpath_and_language(sample_repo: Path):
    assert set(_paths(sample_repo, "handleSubmit parse_url", k=10)) >= {"src/web/forms.py", "web/app.js"}
    only_src = service.search_code("handleSubmit", sample_repo, path="src").packet.to_json()
    assert {h["path"] for h in only_src["hits"]} == {"src/web/forms.py"}
    only_js = service.search_code("handleSubmit", sample_repo, language="javascript").packet.to_json()
    assert {h["path"] for h in only_js["hits"]} == {"web/app.js"}


def _doc(word: str) -> dict[str, str | list[str]]:
    return {
        "path": "a py",
        "name": "",
        "sig": "",
        "body": word,
        "lang": "python",
        "kind": ["block"],
        "dirs": ["a"],
    }


def _found(lex, word: str) -> list[int]:
    lex.reload()
    return sorted(cid for cid, _ in lex.search([(word, 1.0)], {"body": 1.0}, 10))


def test_adds_deletes_commits_and_aborts_apply_in_order(tmp_path: Path):
    """The writer indexes in its own thread while documents still arrive:
    adds, deletes, commits and aborts must still apply in the order given,
    and an abort drops only what came after the last commit."""
    from repolens.store.local import lexical

    lex = lexical.LexicalIndex(tmp_path / "lex", create=True)
    docs = {1: _doc("alpha"), 2: _doc("alpha"), 3: _doc("beta"), 5: _doc("beta")}
    lex.add_fields([(1, docs[1]), (2, docs[2]), (3, docs[3])])
    lex.delete([2])
    lex.add_fields([(2, docs[2])])
    _commit(lex, docs)
    assert _found(lex, "alpha") == [1, 2] and _found(lex, "beta") == [3]
    lex.add_fields([(4, _doc("gamma"))])
    lex.abort()
    lex.add_fields([(5, docs[5])])
    _commit(lex, docs)
    lex.add_fields([(6, _doc("beta"))])
    lex.close()  # what was never committed is dropped
    assert _found(lex, "gamma") == [] and _found(lex, "beta") == [3, 5]


def _commit(lex, docs: dict) -> None:
    """A batch's commit, as the writer makes it (the database committed too)."""
    lex.commit(lambda cids: [(cid, docs[cid]) for cid in cids])
    lex.forget_previous()


def test_a_search_during_a_rewrite_in_pieces_finds_every_document(tmp_path: Path):
    """A segment cut into pieces is rewritten a commit a piece, and each
    commit deletes the old copies of its own piece only: a search between
    two of them (the next piece's refill takes seconds on a large segment)
    finds every document, once."""
    from repolens.store.local import lexical

    docs = {cid: _doc("alpha") for cid in range(1000)}
    lex = lexical.LexicalIndex(tmp_path / "lex", create=True)
    lex.add_fields(docs.items())
    _commit(lex, docs)
    lex.close()
    refresh = lexical.LexicalIndex(tmp_path / "lex")  # a refresh: its rewrite is cut into fifths
    reader = lexical.LexicalIndex(tmp_path / "lex")
    seen = []

    def refill(cids):
        reader.reload()
        seen.append(reader.num_docs)
        return [(cid, docs[cid]) for cid in cids]

    refresh.delete([0])
    del docs[0]
    refresh.commit(refill)
    refresh.forget_previous()
    refresh.close()
    reader.reload()
    assert seen == [1000, 999, 999, 999, 999] and reader.num_docs == 999  # (the first before any commit)


def test_a_refresh_rewrites_a_fifth_of_the_index_and_keeps_at_most_seven_segments():
    """What an edit costs is the size of the segment it hits: a rewrite is cut
    into fifths of the index, and small segments are joined before tantivy's
    own policy would merge eight of them into one (the whole repository)."""
    from repolens.store.local.segments import MAX_SEGMENTS, rewrite_plan

    one_segment = [(0, cid) for cid in range(1000)]
    pieces = rewrite_plan(one_segment, {0}, adding=True, layout=True)
    assert [len(p) for p in pieces] == [200] * 5 and sorted(cid for piece in pieces for cid in piece) == list(
        range(1000)
    )

    fifths = [(cid // 200, cid) for cid in range(1000)]
    assert rewrite_plan(fifths, {3}, adding=True, layout=True) == [list(range(600, 800))]

    young = [*fifths, (5, 1000), (6, 1001)]  # two small segments of earlier refreshes
    pieces = rewrite_plan(young, {3}, adding=True, layout=True)
    assert sorted(cid for piece in pieces for cid in piece) == [*range(600, 800), 1000]  # the smaller joins
    assert len({0, 1, 2, 4, 6}) + len(pieces) + 1 == MAX_SEGMENTS

    assert rewrite_plan(fifths, {3}, adding=False, layout=False) == [list(range(600, 800))]
    assert rewrite_plan(fifths, set(), adding=True, layout=False) == []


@pytest.mark.parametrize(("commits", "segments"), [(7, 7), (8, 1)])
def test_tantivy_merges_eight_segments_of_a_size_into_one_and_never_seven(tmp_path: Path, commits, segments):
    """Why a refresh never leaves more than MAX_SEGMENTS (:mod:`.segments`):
    tantivy merges eight segments of a size (every one under 10,000
    documents is one size), estimating the token counts of those with
    deletions from rounded lengths; seven it leaves alone."""
    from repolens.store.local import lexical
    from repolens.store.local.segments import MAX_SEGMENTS, read_meta

    assert MAX_SEGMENTS == 7
    lex = lexical.LexicalIndex(tmp_path / "lex", create=True)
    docs = {}
    for cid in range(commits):  # a build's batches: a segment each
        docs[cid] = _doc("alpha")
        lex.add_fields([(cid, docs[cid])])
        _commit(lex, docs)
    lex.close()  # waits for tantivy's merges
    assert len(read_meta(lex.directory)["segments"]) == segments


def test_each_piece_deletes_its_old_copies_unless_the_index_would_hold_eight_segments_meanwhile():
    """Pieces that delete their own old copies leave the old segments alive,
    partly rewritten, until their last piece: never more than MAX_SEGMENTS
    at once, or tantivy merges them (then the first commit deletes all)."""
    from repolens.store.local.segments import piece_by_piece

    old = [(seg, seg * 1000 + i) for seg in range(4) for i in range(120)]  # 4 segments, 480 documents
    docs = [cid for _, cid in old]
    pieces = [docs[i : i + 200] for i in range(0, len(docs), 200)]
    others = [(10 + seg, 10_000 + seg) for seg in range(4)]
    # after the first piece: the others, 1 new, and 3 old ones still alive
    assert piece_by_piece([*old, *others[:3]], pieces)  # 3 + 1 + 3 = 7
    assert not piece_by_piece([*old, *others], pieces)  # 4 + 1 + 3 = 8
