"""Search modes (packet, files, json), query_id re-rendering, filters, symbol boost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from repolens import service
from repolens.errors import NotFoundError, PathError, UsageError
from repolens.index.build import build_index
from repolens.reply.json_reply import QUERY_ECHO_CHARS
from repolens.service.stores import open_index
from repolens.settings import Settings
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


# A class defined once and mentioned in many places: the mentions outnumber
# the definition, so only the symbol boost can put the definition first.
_MENTIONS = {
    f"app/use{i}.py": (
        "from store import SessionStore\n\n"
        f"def use{i}():\n"
        "    store = SessionStore()\n"
        "    # SessionStore keeps sessions; SessionStore is thread safe\n"
        "    return SessionStore.default(store)\n"
    )
    for i in range(8)
}
_STORE = {
    "store.py": (
        "import time\n\n\n"
        "class SessionStore:\n"
        '    """Sessions in memory."""\n\n'
        "    def __init__(self):\n"
        "        self.items = {}\n\n"
        "    def expire(self, now=None):\n"
        "        now = now or time.time()\n"
        "        self.items = {k: v for k, v in self.items.items() if v > now}\n"
    ),
    "tests/test_store.py": (
        "from store import SessionStore\n\ndef test_expire():\n    SessionStore().expire()\n"
    ),
    "docs/store.md": "# SessionStore\n\nThe session store expires sessions.\n",
}


@pytest.fixture
def store_repo(make_repo) -> Path:
    return make_repo({**_MENTIONS, **_STORE})


def test_one_identifier_query_returns_its_definition_first(store_repo: Path):
    data = service.search_code("SessionStore", store_repo, mode="json").to_json()
    first = data["hits"][0]
    # store.py is small, so its imports and the class share one chunk
    assert (first["path"], first["qualname"]) == ("store.py", "SessionStore")


# A name spelled one way, and a definition spelled another way that its
# words favour: the class the file is about, mentioned everywhere.
_SPELLED = {
    "naming/strategy.py": (
        "class FieldNamingStrategy:\n"
        '    """A field naming strategy: how a field naming strategy names a field."""\n\n'
        "    def translate(self, field):\n"
        "        return field.name\n"
    ),
    **{
        f"naming/use{i}.py": (
            "from naming.strategy import FieldNamingStrategy\n\n"
            f"def strategy{i}():\n"
            "    # the field naming strategy of this field: a FieldNamingStrategy\n"
            "    return FieldNamingStrategy()\n"
        )
        for i in range(6)
    },
    "gson.py": (
        "class Gson:\n"
        "    def __init__(self, strategy):\n"
        "        self.strategy = strategy\n\n"
        "    def fieldNamingStrategy(self):\n"
        "        return self.strategy\n"
    ),
    "cnf.py": (
        "class Literal:\n"
        '    """A literal: a literal symbol or its negation, as a literal of a clause."""\n\n'
        "    def __init__(self, lit, is_Not=False):\n"
        "        self.lit = lit  # the literal\n"
        "        self.is_Not = is_Not\n"
    ),
    "fnodes.py": "class _literal(float):\n    _token = None\n",
}


@pytest.mark.parametrize(
    ("name", "path", "definition"),
    [
        ("fieldNamingStrategy", "gson.py", "def fieldNamingStrategy"),
        ("_literal", "fnodes.py", "class _literal"),
    ],
)
def test_a_bare_name_finds_the_definition_spelled_so_before_one_spelled_otherwise(
    make_repo, name: str, path: str, definition: str
):
    repo = make_repo(_SPELLED)
    first = service.search_code(name, repo, mode="json").to_json()["hits"][0]
    assert first["path"] == path and definition in first["text"]


def test_without_symbol_boost_mentions_can_outrank_the_definition(store_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")  # a lever of the tuned ranking
    monkeypatch.setenv("REPOLENS_SYMBOL_BOOST", "0")
    monkeypatch.setenv("REPOLENS_PRIORS", "0")
    data = service.search_code("SessionStore", store_repo, mode="json").to_json()
    assert data["hits"][0]["path"] != "store.py"


def test_files_mode_ranks_files_with_reasons(store_repo: Path):
    question = "where does SessionStore expire sessions?"
    reply = service.search_code(question, store_repo, mode="files", top_k=11)  # every file, with its role
    lines = reply.text.splitlines()
    assert lines[0].startswith("1. store.py (score ")
    assert "defines SessionStore" in lines[0] and "source file" in lines[0]
    assert lines[-1] == f"query_id {reply.query_id}"
    roles = {f.path: f.role for f in reply.files}
    assert roles["tests/test_store.py"] == "test" and roles["docs/store.md"] == "doc"


@pytest.mark.parametrize("top_k", [1, 2, 7])
def test_files_mode_lists_top_k_files(store_repo: Path, top_k: int):
    reply = service.search_code("SessionStore sessions", store_repo, mode="files", top_k=top_k)
    assert len(reply.files) == top_k
    assert [line.split(". ")[0] for line in reply.text.splitlines()[:-1]] == [
        str(i + 1) for i in range(top_k)
    ]
    again = service.search_code(None, store_repo, query_id=reply.query_id, mode="files", top_k=top_k)
    assert again.text == reply.text


def test_source_preferred_over_docs_and_tests_when_close(store_repo: Path):
    reply = service.search_code("session store expire", store_repo, mode="files", top_k=11)
    order = [f.path for f in reply.files]
    assert order.index("store.py") < order.index("tests/test_store.py")
    assert order.index("store.py") < order.index("docs/store.md")


def test_query_id_re_renders_in_another_mode_without_searching(store_repo: Path):
    packet = service.search_code("SessionStore expire", store_repo)
    assert packet.text.endswith(f"query_id {packet.query_id}")
    files = service.search_code(None, store_repo, query_id=packet.query_id, mode="files")
    assert files.query_id == packet.query_id
    assert files.files[0].path == "store.py"
    again = service.search_code(None, store_repo, query_id=packet.query_id)
    assert again.text == packet.text
    as_json = json.loads(service.search_code(None, store_repo, query_id=packet.query_id, mode="json").text)
    assert as_json["query_id"] == packet.query_id
    assert [h["path"] for h in as_json["hits"]] == [r.block.path for r in packet.packet.rendered]


def test_a_question_ranked_under_other_settings_has_its_own_query_id(
    store_repo: Path, monkeypatch: pytest.MonkeyPatch
):
    """The id names the result, not only the question: asked again under another
    ranking (or with --explain), it is another result, and the first id still
    recalls the first."""
    learned = service.search_code("SessionStore expire", store_repo)
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")
    tuned = service.search_code("SessionStore expire", store_repo)
    explained = service.search_code("SessionStore expire", store_repo, explain=True)
    assert len({learned.query_id, tuned.query_id, explained.query_id}) == 3
    assert service.search_code("SessionStore expire", store_repo).query_id == tuned.query_id  # the same again
    monkeypatch.delenv("REPOLENS_RANKING")
    assert service.search_code(None, store_repo, query_id=learned.query_id).text == learned.text
    assert service.search_code(None, store_repo, query_id=tuned.query_id).text == tuned.text


def test_query_id_of_an_older_index_is_refused(store_repo: Path):
    reply = service.search_code("SessionStore", store_repo)
    build_index(store_repo)  # nothing changed: the id still holds
    assert service.search_code(None, store_repo, query_id=reply.query_id).text == reply.text
    (store_repo / "store.py").write_text("class SessionStore:\n    pass\n")
    build_index(store_repo)
    with pytest.raises(NotFoundError, match="older index"):
        service.search_code(None, store_repo, query_id=reply.query_id)
    with pytest.raises(UsageError, match="10 hex digits"):
        service.search_code(None, store_repo, query_id="../../etc")


def test_a_result_remembered_with_orjson_or_json_re_renders_alike(store_repo: Path, monkeypatch):
    """A server (which imports orjson) and a one-shot command (which does
    not) remember a result in their own JSON; either reads back the same."""
    import orjson

    monkeypatch.setitem(sys.modules, "orjson", orjson)
    fast = service.search_code("SessionStore expire", store_repo)
    reader, _ = open_index(store_repo, auto_index=False)
    written = reader.recall(fast.query_id)
    assert written == orjson.dumps(json.loads(written)).decode() != json.dumps(json.loads(written))
    monkeypatch.delitem(sys.modules, "orjson")
    plain = service.search_code("expire the session", store_repo)
    written = reader.recall(plain.query_id)
    assert written == json.dumps(json.loads(written)) != orjson.dumps(json.loads(written)).decode()
    for reply in (fast, plain):
        assert service.search_code(None, store_repo, query_id=reply.query_id).text == reply.text


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data.update(ranked=[[1, None, {}, {}]]),  # a score that is no number
        lambda data: data.pop("query"),
        lambda data: data.update(ranked=[["x"]]),
    ],
)
def test_a_damaged_remembered_result_is_refused_with_the_fix(store_repo: Path, damage):
    """A payload that reads as JSON but not as a result (damaged, or written
    by another version) is "run the search again", never a traceback."""
    reply = service.search_code("SessionStore", store_repo)
    reader, _ = open_index(store_repo, auto_index=False)
    data = json.loads(reader.recall(reply.query_id))
    damage(data)
    assert reader.remember(reply.query_id, json.dumps(data))
    with pytest.raises(NotFoundError, match="run the search again"):
        service.search_code(None, store_repo, query_id=reply.query_id)
    assert reader.remember(reply.query_id, "not json")
    with pytest.raises(NotFoundError, match="run the search again"):
        service.search_code(None, store_repo, query_id=reply.query_id)


@pytest.mark.parametrize(
    ("kwargs", "allowed"),
    [
        ({"path": "app"}, lambda p: p.startswith("app/")),
        ({"include": ["tests/**"]}, lambda p: p.startswith("tests/")),
        ({"exclude": ["app/*", "tests/*"]}, lambda p: not p.startswith(("app/", "tests/"))),
        ({"language": "markdown"}, lambda p: p.endswith(".md")),
        ({"kind": "class"}, lambda p: p == "store.py"),
    ],
)
def test_filters_apply_to_every_search(store_repo: Path, kwargs, allowed):
    data = service.search_code(
        "SessionStore session store", store_repo, mode="json", top_k=20, **kwargs
    ).to_json()
    paths = [h["path"] for h in data["hits"]] + [f["path"] for f in data["files"]]
    assert paths and all(allowed(p) for p in paths)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"mode": "table"}, "mode must be one of"),
        ({"path": "../x"}, "inside the repository"),
        ({"include": [""]}, "glob patterns"),
    ],
)
def test_bad_search_arguments(store_repo: Path, kwargs, needle):
    with pytest.raises(UsageError, match=needle):
        service.search_code("x", store_repo, **kwargs)


def test_a_path_filter_under_which_nothing_is_indexed_says_so_and_names_the_nearest(store_repo: Path):
    for mode in ("packet", "files", "json"):
        with pytest.raises(PathError) as err:
            service.search_code("SessionStore", store_repo, path="ap", mode=mode)
        assert str(err.value) == (
            "no indexed file is under 'ap'; the nearest indexed path is 'app': "
            "pass a folder or file the index holds as path"
        )
    with pytest.raises(PathError, match=r"under 'app/missing/x\.py'; the nearest indexed path is 'app':"):
        service.search_code("SessionStore", store_repo, path="app/missing/x.py")
    with pytest.raises(PathError, match=r"^no indexed file is under 'zzz': pass"):
        service.search_code("SessionStore", store_repo, path="zzz")
    # a path that holds files answers as before when nothing there matches
    nothing = service.search_code("xylophone", store_repo, path="app")
    assert nothing.text.startswith("No matching chunks found.")


# -- the JSON form carries what the packet shows -------------------------------------------

_SERVICE = {
    f"svc/handler{i}.py": (
        f"from svc.session import SessionStore\n\n\n"
        f"def handle_request{i}(request, store: SessionStore):\n"
        f'    """Serve request {i}: load the session, render the page."""\n'
        + "".join(f"    step{j} = store.load(request.session_id)  # {'x' * 50}\n" for j in range(40))
        + "    return render(request, step0)\n"
    )
    for i in range(8)
}

_TRACEBACK = "\n".join(
    [
        "Traceback (most recent call last):",
        *(
            f'  File "/srv/app/svc/handler{i}.py", line {10 + i}, in handle_request{i}\n'
            f"    step{i} = store.load(request.session_id)"
            for i in range(8)
        ),
        '  File "/srv/app/store.py", line 12, in expire',
        "    self.items = {k: v for k, v in self.items.items() if v > now}",
        "KeyError: 'session expired'",
    ]
)
_LONG_ISSUE = (
    "SessionStore.load raises KeyError after the session expires\n\n"
    + "When a session expires while a request is being served, every handler that loads the "
    "session store fails instead of starting a new session. "
    * 12
    + "\n\n```\n"
    + _TRACEBACK
    + "\n```\n\n"
    + "Expected: expire() drops old sessions and load() starts a new one. " * 10
)


@pytest.mark.parametrize("question", ["where does the session store expire sessions", _LONG_ISSUE])
def test_json_reply_carries_the_packets_hits_lines_and_markers(make_repo, question):
    assert 2000 <= len(_LONG_ISSUE) <= 8000
    repo = make_repo({**_MENTIONS, **_STORE, **_SERVICE})
    packet = service.search_code(question, repo)
    reply = service.search_code(question, repo, mode="json")
    data = json.loads(reply.text)
    shown = [(r.block.path, r.block.start_line, r.block.end_line) for r in packet.packet.rendered]
    assert len(shown) >= 3
    assert [(h["path"], h["start_line"], h["end_line"]) for h in data["hits"]] == shown
    assert [h["text"] for h in data["hits"]] == [r.text for r in packet.packet.rendered]
    assert [(o["path"], o["start_line"]) for o in data["omitted"]] == [
        (b.path, b.start_line) for b in packet.packet.omitted
    ]
    # max_chars budgets the evidence; the question is echoed capped, with its length
    assert sum(len(h["text"]) for h in data["hits"]) <= 6000
    assert data["query"] == question[:QUERY_ECHO_CHARS]
    assert data["query_chars"] == len(question)


# -- the shown score is the one that decided the order ---------------------------------------


def _long_function(name: str, mentions: int) -> str:
    body = [f"    expire_session(token)  # session {i}" for i in range(mentions)]
    body += [f"    step_{i} = {i}" for i in range(36 - mentions)]
    return "\n".join([f"def {name}(token):", *body, "    return token", "", ""])


def test_shown_scores_decide_the_order_and_explain_names_the_spread(make_repo):
    files = {"auth/tokens.py": "".join(_long_function(f"drop_{i}", 12 - i) for i in range(4))}
    files |= {f"web/view{i}.py": _long_function(f"view_{i}", 5) for i in range(4)}
    repo = make_repo(files)
    reply = service.search_code("expire session", repo, top_k=8, explain=True, max_chars=20_000)
    blocks = [r.block for r in reply.packet.rendered]
    paths = [b.path for b in blocks]
    assert paths[0] == "auth/tokens.py"
    web = paths.index("web/view0.py")
    assert "auth/tokens.py" in paths[web:]  # the spread put other files before its later chunks
    scores = [b.score for b in blocks]
    assert scores == sorted(scores, reverse=True)
    for b in blocks:
        assert b.explain.endswith(f"= {b.score:.3g}")
    in_file = [b for b in blocks if b.path == "auth/tokens.py"]
    assert " spread " not in in_file[0].explain
    assert " x spread 0.80 (2nd in its file) = " in in_file[1].explain
    assert " x spread 0.64 (3rd in its file) = " in in_file[2].explain
    # a re-render shows the same scores and factors; the file overview sums scores before the spread
    again = service.search_code(None, repo, query_id=reply.query_id, top_k=8, explain=True, max_chars=20_000)
    assert again.text == reply.text
    files = service.search_code("expire session", repo, mode="files")
    assert service.search_code(None, repo, query_id=files.query_id, mode="files").text == files.text
    own = [b.score / Settings().diversity ** k for k, b in enumerate(in_file)]
    assert files.files[0].path == "auth/tokens.py"
    assert files.files[0].score == pytest.approx(sum(s * 0.5**k for k, s in enumerate(own)))


# -- no silent surprises -------------------------------------------------------------


def test_a_glob_starting_with_star_slash_matches_in_any_folder(store_repo: Path):
    """``*/use3.py`` is what a user writes for "use3.py in some folder"; in
    gitignore's syntax it is one folder deep from the root only, and
    ``--exclude '*/session.py'`` excluded nothing deeper."""
    (store_repo / "app/deep").mkdir()
    (store_repo / "app/deep/use3.py").write_text((store_repo / "app/use3.py").read_text())
    build_index(store_repo)
    for glob in ("*/use3.py", "**/use3.py", "use3.py"):
        data = service.search_code(
            "SessionStore", store_repo, mode="json", top_k=20, include=[glob]
        ).to_json()
        assert {h["path"] for h in data["hits"]} == {"app/use3.py", "app/deep/use3.py"}, glob
        data = service.search_code(
            "SessionStore", store_repo, mode="json", top_k=20, exclude=[glob]
        ).to_json()
        assert not {h["path"] for h in data["hits"]} & {"app/use3.py", "app/deep/use3.py"}, glob


def test_a_kind_filter_that_takes_chunks_holding_the_kind_says_so(make_repo):
    """Small definitions are chunked together: ``--kind method`` takes the
    class's block that holds them, and a note says why a class came back."""
    root = make_repo(
        {
            "store.py": (
                "class SessionStore:\n    def save(self):\n        return 1\n\n"
                "    def load(self):\n        return 2\n"
            )
        }
    )
    reply = service.search_code("session store save", root, kind="method")
    assert reply.text.splitlines()[0] == (
        "note: kind method: 1 hit is of kind class and holds one (small definitions are chunked together)"
    )
    assert reply.text.splitlines()[2].startswith("store.py:1-6 class SessionStore")


def test_the_files_mode_shows_the_notes_too(store_repo: Path):
    """``--min-score 1e308 --files`` said "No matching files found." alone."""
    files = service.search_code("SessionStore", store_repo, mode="files", min_score=1e308)
    packet = service.search_code("SessionStore", store_repo, min_score=1e308)
    note = "note: every hit scored below min_score 1e+308 (the best 1)"
    assert files.text == f"{note}\n\nNo matching files found.\nquery_id {files.query_id}"
    assert packet.text.splitlines()[0] == note


def test_a_changed_chunker_setting_is_noted_until_the_index_is_rebuilt(store_repo: Path):
    build_index(store_repo)
    (store_repo / ".repolens.toml").write_text('chunker = "windows"\n')
    note = (
        "note: the index was chunked with chunker=syntax, chunk_merge_lines=30; the settings now say "
        "chunker=windows, chunk_merge_lines=30: run `repolens index` to rebuild it"
    )
    assert service.search_code("SessionStore", store_repo).text.splitlines()[0] == note
    assert service.search_code("SessionStore", store_repo, mode="files").text.splitlines()[0] == note
    build_index(store_repo)
    assert "note:" not in service.search_code("SessionStore", store_repo).text
