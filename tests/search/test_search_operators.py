"""What a search can ask besides its words: a keyword every hit contains
exactly, a lowest score, on each store backend."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client

from repolens import service
from repolens.errors import UsageError
from repolens.index.build import build_index
from repolens.search.filters import Filters
from repolens.search.query import parse_query
from repolens.search.ranking import NO_WORD, RankingOptions, search_index
from repolens.server.tools import build_server
from repolens.settings import Settings
from repolens.store import open_store
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


# Twenty files that say "ledger" often, and three that say it once and hold
# the marker: the marked ones rank last for "ledger".
_LEDGERS = {
    **{
        f"books/ledger{i:02d}.py": f"def ledger{i:02d}(ledger):\n    return ledger.ledger + ledger.total\n"
        for i in range(20)
    },
    **{
        f"audit/check{i}.py": f"def check{i}(entry):\n    # AUDIT_MARK: reviewed\n    return entry.ledger\n"
        for i in range(3)
    },
    "audit/lower.py": "def lower(entry):\n    # audit_mark: lower case\n    return entry.ledger\n",
}


@pytest.fixture
def ledgers(make_repo, store_url) -> Path:
    return make_repo(_LEDGERS)


def _paths(reply) -> list[str]:
    return [h["path"] for h in reply.to_json()["hits"]]


def test_a_keyword_keeps_the_hits_containing_it_exactly(ledgers: Path):
    found = service.search_code("ledger", ledgers, mode="json", top_k=10, keyword="AUDIT_MARK")
    assert sorted(_paths(found)) == ["audit/check0.py", "audit/check1.py", "audit/check2.py"]
    both = service.search_code("ledger", ledgers, mode="json", keyword=["AUDIT_MARK", "check1"])
    assert _paths(both) == ["audit/check1.py"]
    lower = service.search_code("ledger", ledgers, mode="json", keyword="audit_mark")
    assert _paths(lower) == ["audit/lower.py"]  # case counts
    none = service.search_code("ledger", ledgers, keyword="AUDIT_MARK: approved")
    assert none.text.startswith("note: no match contains 'AUDIT_MARK: approved'\n\nNo matching chunks found.")


def test_a_keyword_is_looked_for_below_the_candidates_a_search_ranks(ledgers: Path):
    """With two hits wanted, a search ranks eight candidates; the three marked
    chunks are the last of twenty-four: the lexical leg is asked deeper."""
    build_index(ledgers)
    reader = open_store(ledgers, None).open_reader()
    try:
        parsed = parse_query("ledger")
        options = RankingOptions.from_settings(Settings())
        plain = search_index(reader, parsed, options=options, limit=2, filters=Filters(include=("audit/**",)))
        assert plain.hits == []  # a path filter alone looks among the first eight only
        marked = search_index(
            reader, parsed, options=options, limit=2, filters=Filters(keywords=("AUDIT_MARK",))
        )
        assert [h.chunk.path for h in marked.hits] == ["audit/check0.py", "audit/check1.py"]
    finally:
        reader.close()


def test_min_score_drops_the_hits_below_it_and_says_when_none_is_left(ledgers: Path):
    hits = service.search_code("ledger", ledgers, mode="json", top_k=30).to_json()["hits"]
    scores = [h["score"] for h in hits]
    assert len(hits) == 24 and scores[19] > 0.5 > scores[20]  # the books, then the audits
    kept = service.search_code("ledger", ledgers, mode="json", top_k=30, min_score=0.5).to_json()
    assert [h["path"] for h in kept["hits"]] == [h["path"] for h in hits[:20]]
    nothing = service.search_code("ledger", ledgers, min_score=1e6)
    note = f"note: every hit scored below min_score 1e+06 (the best {scores[0]:.3g})"
    assert nothing.text.startswith(f"{note}\n\nNo matching chunks found.")
    files = service.search_code("ledger", ledgers, mode="files", min_score=1e6)
    assert files.text.startswith(f"{note}\n\nNo matching files found.")  # the note in every mode


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keyword": ""}, "keyword must be text every hit contains"),
        ({"keyword": ["ok", "  "]}, "keyword must be text every hit contains"),
        ({"keyword": ["k"] * 9}, "keyword: at most 8 strings, got 9"),
        ({"min_score": -1}, "min_score must be a number >= 0 (the score a hit shows), got -1"),
        ({"min_score": float("nan")}, "min_score must be a number >= 0"),
        ({"min_score": True}, "min_score must be a number >= 0"),
        ({"min_score": "2"}, "min_score must be a number >= 0"),
    ],
)
def test_bad_keywords_and_scores_are_refused_in_one_line(ledgers: Path, kwargs, message):
    with pytest.raises(UsageError) as err:
        service.search_code("ledger", ledgers, **kwargs)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_remembered_search_keeps_its_keyword_and_refuses_a_new_one(ledgers: Path):
    first = service.search_code("ledger", ledgers, keyword="AUDIT_MARK", min_score=0.01)
    again = service.search_code(None, ledgers, query_id=first.query_id, mode="json")
    assert sorted(_paths(again)) == ["audit/check0.py", "audit/check1.py", "audit/check2.py"]
    for extra in ({"keyword": "x"}, {"min_score": 0.0}):
        with pytest.raises(UsageError, match="shown with its own question and filters"):
            service.search_code(None, ledgers, query_id=first.query_id, **extra)


def test_the_search_tool_takes_a_keyword_and_a_lowest_score(ledgers: Path):
    async def session() -> list:
        async with Client(build_server(ledgers)) as client:
            return [
                await client.call_tool(
                    "search_code", {"query": "ledger", "keyword": "AUDIT_MARK", "mode": "files"}
                ),
                await client.call_tool("search_code", {"query": "ledger", "min_score": 1e6}),
                await client.call_tool("search_code", {"query": "ledger", "min_score": -1}),
            ]

    marked, too_high, negative = asyncio.run(session())
    assert not marked.is_error and _text(marked).startswith("1. audit/check")
    assert [line.split(" (")[0] for line in _text(marked).splitlines()[:3]] == [
        "1. audit/check0.py",
        "2. audit/check1.py",
        "3. audit/check2.py",
    ]
    assert not too_high.is_error and _text(too_high).startswith(
        "note: every hit scored below min_score 1e+06"
    )
    assert negative.is_error and _text(negative) == (
        "min_score must be a number >= 0 (the score a hit shows), got -1.0"
    )


def test_the_search_tool_takes_what_the_command_line_takes(ledgers: Path):
    """``keyword`` a list (the CLI takes up to 8), ``include``/``exclude`` a
    plain string (the CLI takes one each time): refused over MCP before."""

    async def session() -> list:
        async with Client(build_server(ledgers)) as client:
            return [
                await client.call_tool(
                    "search_code", {"query": "ledger", "keyword": ["AUDIT_MARK", "def"], "mode": "files"}
                ),
                await client.call_tool(
                    "search_code", {"query": "ledger", "include": "audit/*", "mode": "files"}
                ),
                await client.call_tool(
                    "search_code", {"query": "ledger", "exclude": "audit/*", "mode": "files"}
                ),
            ]

    keywords, included, excluded = asyncio.run(session())
    assert not keywords.is_error and _text(keywords).startswith("1. audit/check"), _text(keywords)
    assert not included.is_error and all(
        line.split(". ", 1)[1].startswith("audit/") for line in _text(included).splitlines()[:-1]
    )
    assert not excluded.is_error and "audit/" not in _text(excluded)


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


# -- a partial identifier: zorb* ------------------------------------------------------

_ZORBS = {
    "src/core.py": "def zorbular(x):\n    return x + 1\n",
    "src/more.py": "ZORB = 3\n",
    "src/many.py": "".join(f"zq{a}{b} = 1\n" for a in "abcde" for b in "abcdefgh"),
}


@pytest.fixture
def zorbs(make_repo, store_url) -> Path:
    return make_repo(_ZORBS)


def test_a_word_ending_in_a_star_finds_the_identifiers_it_starts(zorbs: Path):
    assert _paths(service.search_code("zorb", zorbs, mode="json")) == ["src/more.py"]
    found = service.search_code("zorb*", zorbs)
    assert "src/core.py:1-2 function zorbular" in found.text and "1: def zorbular(x):" in found.text
    assert "src/more.py:1-1" in found.text
    assert sorted(_paths(service.search_code("where is zorbu* used", zorbs, mode="json"))) == ["src/core.py"]
    again = service.search_code(None, zorbs, query_id=found.query_id)  # remembered: the same lines
    assert again.text == found.text


def test_a_prefix_says_when_nothing_or_too_much_completes_it(zorbs: Path):
    assert service.search_code("qx*", zorbs).text.startswith(
        "note: no indexed word starts with 'qx'\n\nNo matching chunks found."
    )
    many = service.search_code("zq*", zorbs)
    assert many.text.startswith(
        "note: zq* stands for the 32 shortest indexed words starting with it: type more of it for the others"
    )
    assert "src/many.py" in many.text


def test_a_question_with_no_word_to_search_says_so(zorbs: Path):
    """``s*`` (one letter) answered "No matching chunks found." with no word of why."""
    for question in ("s*", "a", "x y"):
        reply = service.search_code(question, zorbs)
        assert reply.text.startswith(f"note: {NO_WORD}\n\nNo matching chunks found."), question


def test_a_partial_identifier_alone_is_not_searched_by_meaning(make_repo, monkeypatch: pytest.MonkeyPatch):
    """With vectors on, ``sess*`` added hits only the dense leg found (the
    README, scoring 0.00): a partial identifier is a word's letters, not a
    meaning; the same hits as without vectors."""
    root = make_repo()  # SAMPLE_FILES
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    service.index_repo(root, vectors=True)
    with_vectors = _paths(service.search_code("sess*", root, mode="json"))
    monkeypatch.setenv("REPOLENS_DENSE", "0")
    assert with_vectors == _paths(service.search_code("sess*", root, mode="json"))
    assert "README.md" not in with_vectors
