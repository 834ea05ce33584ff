"""Questions across repositories: ``search_code``, ``find_symbol`` and
``search_history`` over a list, ``*`` or a registry project, through the SDK's
client and the command line, on both stores."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from conftest import write_lock_held, write_tree_files
from repolens import service
from repolens.search.fanout import Target, ask_each, held_each
from repolens.server.tools import build_server
from repolens.validate import shown_path

BILLING = {
    "billing/cards.py": (
        "def charge_card(card, amount):\n"
        '    """Charge the card through the payment gateway; declined cards raise."""\n'
        "    return gateway.charge(card.token, amount)\n"
    ),
    "billing/refunds.py": "def refund(charge):\n    return gateway.refund(charge.id)\n",
}
WEB = {
    "web/headers.py": (
        "def parse_header(line):\n"
        '    """Parse one HTTP header line into its name and value."""\n'
        '    name, _, value = line.partition(":")\n'
        "    return name.strip().lower(), value.strip()\n"
    ),
    "web/routes.py": "ROUTES = {'/': 'index', '/about': 'about'}\n",
}
DOCS = {"guide/intro.md": "# Welcome\n\nHow to install the tool and write a first page.\n"}
QUESTION = "charge the card through the payment gateway and parse the HTTP header line"


@pytest.fixture
def three(make_repo, tmp_path: Path, store_url) -> dict[str, Path]:
    """Three indexed repositories (in the store ``store_url`` names), and a registry."""
    roots = {
        "billing": make_repo(BILLING, name="billing"),
        "web": make_repo(WEB, name="web"),
        "docs": make_repo(DOCS, name="docs"),
    }
    for root in roots.values():
        service.index_repo(root)
    return roots


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    path = tmp_path / "registry.toml"
    path.write_text(
        '[[repository]]\nname = "billing"\nproject = "shop"\n\n'
        '[[repository]]\nname = "web"\nproject = "shop"\n\n'
        '[[repository]]\nname = "docs"\nproject = "handbook"\n'
    )
    return path


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _calls(roots: dict[str, Path], calls: list[tuple[str, dict]], **server) -> list:
    async def session() -> list:
        async with Client(build_server(roots, **server)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(session())


def _cited(text: str) -> list[str]:
    """The ``repo:path`` of each block of a packet, in order."""
    heads = [line.split(" ", 1)[0] for line in text.splitlines() if line and ":" in line.split(" ", 1)[0]]
    return [h.rsplit(":", 1)[0] for h in heads if h.rsplit(":", 1)[-1].replace("-", "").isdigit()]


def test_one_reply_ranks_hits_of_two_repositories_each_named(three, registry):
    listed, every, project = _calls(
        three,
        [
            ("search_code", {"query": QUESTION, "repo": ["billing", "web", "docs"]}),
            ("search_code", {"query": QUESTION, "repo": "*"}),
            ("search_code", {"query": QUESTION, "repo": "project:shop"}),
        ],
        registry=registry,
    )
    assert not listed.is_error, _text(listed)
    cited = _cited(_text(listed))
    assert {c.split(":")[0] for c in cited} == {"billing", "web"}, _text(listed)
    assert cited[0] in ("billing:billing/cards.py", "web:web/headers.py")
    assert {"billing:billing/cards.py", "web:web/headers.py"} <= set(cited)
    assert "query_id" not in _text(listed)  # a search of several is not remembered
    assert _cited(_text(every)) == cited
    assert _cited(_text(project)) == cited  # docs is in another project


def test_find_symbol_and_history_over_several(three, git):
    git(three["web"], "commit", "-q", "--allow-empty", "-m", "Parse header lines without a colon")
    service.index_repo(three["web"])
    symbols, history, bad_path = _calls(
        three,
        [
            ("find_symbol", {"name": "charge_card", "repo": "*"}),
            ("search_history", {"query": "header lines colon", "repo": ["web", "billing"]}),
            ("search_history", {"query": "header", "path": "web/headers.py", "repo": "*"}),
        ],
    )
    assert _text(symbols).splitlines()[1].startswith("billing:billing/cards.py:1-3 function charge_card")
    assert "web " in _text(history) and "Parse header lines without a colon" in _text(history)
    assert bad_path.is_error and "pass one repo with path" in _text(bad_path)


def test_a_repository_that_cannot_answer_is_named_and_the_others_answer(three, make_repo):
    roots = {**three, "new": make_repo({"x.py": "def parse_header():\n    pass\n"}, name="new")}
    (reply,) = _calls(roots, [("search_code", {"query": QUESTION, "repo": "*"})])
    text = _text(reply)
    assert not reply.is_error
    assert "new did not answer: no index" in text
    assert "billing:billing/cards.py" in text and "web:web/headers.py" in text
    (none,) = _calls({"new": roots["new"]}, [("search_code", {"query": QUESTION, "repo": ["new"]})])
    assert none.is_error and "no repository could answer" in _text(none)


def test_when_none_answers_each_reason_is_said_once_naming_every_repository_giving_it(three, make_repo):
    """QA: a reply where no repository answered said the reason once only when all gave the
    same one; two sharing a path none holds beside a third with no index were each named
    with the same line again. Each reason is one line naming all it is about."""
    roots = {"billing": three["billing"], "web": three["web"], "new": make_repo(name="new")}
    (reply,) = _calls(roots, [("search_code", {"query": QUESTION, "repo": "*", "path": "nothing/"})])
    assert reply.is_error
    text = _text(reply)
    assert text.startswith(
        "no repository could answer: billing, web did not answer: no indexed file is under 'nothing': "
        "pass a folder or file the index holds as `path`; new did not answer: no index for "
    ), text
    assert text.count("did not answer") == 2 and text.endswith(" and ask again"), text


def test_a_repository_whose_first_index_is_being_built_is_said_so(three, make_repo):
    """Its note said "no index ... run repolens index" while another process
    was building that index, as a search of it alone does not."""
    from repolens.store import open_store

    new = make_repo({"x.py": "def parse_header():\n    pass\n"}, name="new")
    with write_lock_held(open_store(new)):
        (reply,) = _calls({**three, "new": new}, [("search_code", {"query": QUESTION, "repo": "*"})])
    text = _text(reply)
    assert not reply.is_error and "billing:billing/cards.py" in text
    assert "note: new did not answer: the index of " in text and "is being built by another process" in text


def test_the_budget_is_shared_and_a_cited_file_is_read_by_its_label(three):
    small, json_reply, read, again = _calls(
        three,
        [
            ("search_code", {"query": QUESTION, "repo": "*", "max_chars": 500}),
            ("search_code", {"query": QUESTION, "repo": "*", "mode": "json"}),
            ("read_snippet", {"path": "web:web/headers.py", "start": 1, "end": 2}),
            ("search_code", {"repo": "*", "query_id": "abc"}),
        ],
    )
    assert len(_text(small)) <= 500 and _cited(_text(small))
    assert '"path": "billing:billing/cards.py"' in _text(json_reply) or "billing:billing/cards.py" in _text(
        json_reply
    )
    assert "def parse_header(line):" in _text(read)
    assert again.is_error and "not remembered" in _text(again)


def test_remote_callers_name_served_repositories_only(three):
    unknown, folder = _calls(
        three,
        [
            ("search_code", {"query": QUESTION, "repo": ["billing", "nope"]}),
            ("search_code", {"query": QUESTION, "repo": ["billing", str(three["web"])]}),
        ],
        remote=True,
    )
    assert unknown.is_error and "nope" in _text(unknown)
    assert folder.is_error and str(three["web"]) not in _text(folder)


def test_the_command_line_asks_several_by_repo_and_project(three, registry, tmp_path: Path, store_url):
    config = tmp_path / "k.toml"
    config.write_text(
        "[roots]\n"
        + "".join(f'{name} = "{root}"\n' for name, root in three.items())
        + f'\n[registry]\npath = "{registry}"\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("REPOLENS_CONFIG", "REPOLENS_ROOTS")}

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "repolens", *args, "--config", str(config)]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)

    every = run("search", QUESTION, "--repo", "*")
    two = run("search", QUESTION, "--repo", "billing", "--repo", "web", "--files")
    shop = run("symbols", "parse_header", "--project", "shop")
    one = run("search", "parse header", "--repo", "web")
    bad = run("search", QUESTION, "--repo", "billing", "--repo", "nope")
    assert every.returncode == 0, every.stderr
    assert {c.split(":")[0] for c in _cited(every.stdout)} == {"billing", "web"}
    assert two.returncode == 0 and two.stdout.startswith(("1. billing:", "1. web:")), two.stdout
    assert "web:web/headers.py:1-4 function parse_header" in shop.stdout
    assert one.returncode == 0 and "web/headers.py" in one.stdout and "web:" not in one.stdout
    assert bad.returncode == 1 and "unknown repository 'nope'" in bad.stderr
    assert "billing, web, docs" in bad.stderr


def test_a_configured_root_gone_from_disk_is_named_and_the_others_answer(three, tmp_path: Path, store_url):
    """One [roots] folder missing (unmounted, deleted) failed every command
    of the file, for every other repository too, as the config's error."""
    gone = tmp_path / "unmounted"
    config = tmp_path / "k.toml"
    config.write_text("[roots]\n" + "".join(f'{n} = "{r}"\n' for n, r in three.items()) + f'old = "{gone}"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("REPOLENS_CONFIG", "REPOLENS_ROOTS")}

    def run(*args: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "repolens", *args, "--config", str(config)]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)

    one, every, old = (
        run("search", "parse header", "--repo", "web"),
        run("search", QUESTION, "--repo", "*"),
        run("symbols", "parse_header", "--repo", "old"),
    )
    assert one.returncode == 0 and "web/headers.py" in one.stdout, one.stderr
    assert every.returncode == 0, every.stderr
    assert every.stdout.startswith(
        f"note: old did not answer: repository root {shown_path(str(gone))} does not exist"
    )
    assert {c.split(":")[0] for c in _cited(every.stdout)} == {"billing", "web"}
    assert old.returncode == 1 and old.stderr.startswith(
        f"error: repository root {shown_path(str(gone))} does not"
    )


def test_repositories_are_asked_at_once_each_on_its_own_thread_every_time(tmp_path: Path):
    import threading

    from repolens.search.fanout import ACROSS_THREADS

    # Each ask waits for as many others as there are threads: asked one at a
    # time, the first would wait alone and the barrier would break.
    together = threading.Barrier(ACROSS_THREADS, timeout=20)

    def ask(target: Target) -> int:
        together.wait()
        return threading.get_ident()

    targets = [Target(f"r{i}", tmp_path) for i in range(2 * ACROSS_THREADS)]
    first = ask_each(targets, ask)
    assert [a.error for a in first] == [""] * len(targets)
    second = ask_each(targets, lambda t: threading.get_ident())
    assert [a.value for a in first] == [a.value for a in second]  # a repository keeps its thread
    assert len({a.value for a in first}) == ACROSS_THREADS


def test_of_many_repositories_those_holding_most_of_the_question_are_searched_in_full(three, monkeypatch):
    from repolens.search import across

    monkeypatch.setattr(across, "FULL_SEARCHES", 2)  # three repositories are "many"
    (reply,) = _calls(three, [("search_code", {"query": QUESTION, "repo": "*"})])
    text = _text(reply)
    assert "3 repositories asked: the 2 whose indexes hold most of the question's words" in text
    assert {c.split(":")[0] for c in _cited(text)} == {"billing", "web"}


def test_the_probe_finds_what_each_index_holds_and_names_one_never_built(three, make_repo):
    """On PostgreSQL the repositories of one database are probed in one
    statement: each answer is what that repository's own reader says."""
    from repolens.store import open_store
    from repolens.store.handles import readers

    unbuilt = make_repo({"new/x.py": "def charge():\n    pass\n"}, name="unbuilt")
    tokens = ["charg", "card", "header", "welcom", "zebra"]
    targets = [*(Target(key, root) for key, root in three.items()), Target("unbuilt", unbuilt)]
    answers = held_each(targets, tokens)
    assert [a.target.key for a in answers] == ["billing", "web", "docs", "unbuilt"]
    for answer in answers[:3]:
        own = readers.get(open_store(answer.target.root)).held_terms(tokens)
        assert answer.value == own and not answer.error, answer.target.key
    assert answers[0].value >= {"charg", "card"} and "zebra" not in answers[0].value
    assert answers[2].value == {"welcom"}
    assert answers[3].value is None and "no index for" in answers[3].error


def test_choose_weighs_a_word_by_how_few_repositories_hold_it():
    from repolens.search.across import choose
    from repolens.search.query import parse_query

    query = parse_query("parse the session cookie header")
    held = {
        "a": frozenset({"pars", "header"}),  # common words: every repository holds them
        "b": frozenset({"pars", "header", "cooki"}),
        "c": frozenset({"pars", "header", "session"}),
        "d": frozenset({"pars"}),
    }
    tokens = {t.token for t in query.terms}
    assert {"pars", "cooki", "session", "header"} <= tokens, tokens
    assert choose(held, query, 2) == ["b", "c"]
    assert choose(held, query, 9) == ["a", "b", "c", "d"]  # in the order given


# Disjoint and overlapping words: each repository's history holds words of
# the question, a partial identifier (``sess*``) is completed from each
# index's own words, and one repository's settings keep stopwords.
DISJOINT = {
    "alpha": (
        {"auth/sessions.py": "def expire_session(sessionstore):\n    return sessionstore.clear()\n"},
        "Expire the session store",
    ),
    "beta": (
        {"net/headers.py": "def parse_headers(lines):\n    return dict(l.split(':') for l in lines)\n"},
        "Parse the headers of a request",
    ),
    "gamma": (
        {
            "web/app.py": "def session_headers(sessionid):\n    return {'cookie': sessionid}\n",
            ".repolens.toml": "query_weights = false\n",
        },
        "Send the session cookie in the headers",
    ),
}


def test_the_merge_of_disjoint_and_overlapping_words_answers(make_repo, git):
    """No repository's own reading of the question (completions of ``sess*``
    from its index, stopwords its settings keep) makes the merge look up a
    term it did not weigh: every question answers, ranked across all three."""
    roots = {}
    for name, (files, subject) in DISJOINT.items():
        root = roots[name] = make_repo({"README.md": f"# {name}\n"}, name=name)
        write_tree_files(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", subject)
        service.index_repo(root)
    targets = [Target(name, root) for name, root in roots.items()]
    for question in [
        "sess* expire the store",
        "the headers of the session",
        "parse the sessionstore headers",
    ]:
        reply = service.search_across(question, targets)
        cited = {path.split(":", 1)[0] for path in _cited(reply.text)}
        assert cited and cited <= set(roots), reply.text
        assert "did not answer" not in reply.text and "a bug" not in reply.text, reply.text
