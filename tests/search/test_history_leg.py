"""The history leg: past commits like the question vote for the files they touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import UPLOAD_FILES, Git, MakeRepo, commit_upload_history
from conftest import UPLOAD_QUESTION as QUESTION
from conftest import commit_files as commit
from repolens import service
from repolens.ops.doctor import diagnose
from repolens.search.history_leg import vote_files
from repolens.search.query import parse_query
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_readers():
    yield
    readers.clear()


@pytest.fixture
def upload_repo(make_repo: MakeRepo, git: Git) -> Path:
    root = make_repo(UPLOAD_FILES)
    commit_upload_history(git, root)
    return root


def _files(root: Path, question: str) -> list[str]:
    reply = service.search_code(question, root, mode="files")
    return [f.path for f in reply.files or []]


def test_a_similar_past_commit_moves_the_file_it_touched_first(upload_repo: Path, git: Git, monkeypatch):
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")  # history_weight is a lever of the tuned ranking
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "0")
    assert _files(upload_repo, QUESTION)[0] == "cli/options.py"
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "1.0")
    assert _files(upload_repo, QUESTION)[0] == "net/upload.py"
    sha = git(upload_repo, "rev-parse", "--short=7", "HEAD~1").strip()
    packet = service.search_code(QUESTION, upload_repo, explain=True).text
    assert f"; history: 1 similar commit, e.g. {sha} 'Retry the transfer when it fails'" in packet


def test_a_file_only_the_history_names_joins_the_candidates(make_repo: MakeRepo, git: Git, monkeypatch):
    # more lexical candidates than a search keeps, all better than upload.py's one weak match
    noise = {f"noise/n{i}.py": f"retry_{i} = 'retry retry failure failure'\n" for i in range(110)}
    root = make_repo({**noise, "net/upload.py": "def send(data):\n    return data  # failure\n"})
    commit(git, root, "Retry uploads", {"net/upload.py": "def send(data):\n    return data  # failure!\n"})
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")  # where history_weight 0 leaves the leg out
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "0")
    assert "net/upload.py" not in _files(root, "retry failure")
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "0.3")
    assert "net/upload.py" in _files(root, "retry failure")


def test_the_vote_decays_with_age_counted_from_the_newest_commit(make_repo: MakeRepo, git: Git, monkeypatch):
    root = make_repo({"a.py": "x = 0\n", "b.py": "y = 0\n", "c.py": "z = 0\n"})
    for rel, date in (("a.py", "2001-01-01T00:00:00"), ("b.py", "2003-01-01T00:00:00")):
        monkeypatch.setenv("GIT_COMMITTER_DATE", date)
        commit(git, root, "Retry the transfer", {rel: "changed = 1\n"})
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2003-01-01T00:00:00")
    commit(git, root, "Unrelated", {"c.py": "z = 1\n"})
    reader, _ = service.open_index(root)
    votes = vote_files(reader, parse_query("retry the transfer").weighted())
    assert set(votes.files) == {"a.py", "b.py"}
    assert votes.files["b.py"].strength == 1.0
    # two years (730 days) older, one-year half-life: a quarter
    assert votes.files["a.py"].strength == pytest.approx(0.25, rel=0.01)


def test_after_a_rewrite_the_leg_stops_voting_until_the_next_index(upload_repo: Path, git: Git, monkeypatch):
    """An amend or a reset takes commits off the branch: the leg voted with
    them until ``repolens index``. It now says HEAD no longer holds the
    history and does not vote; HEAD moved forward, it votes as before."""
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "1.0")
    assert _files(upload_repo, QUESTION)[0] == "net/upload.py"  # the retry commit votes
    commit(
        git, upload_repo, "Unrelated", {"docs.md": "words\n"}
    )  # forward: the history is still on the branch
    assert _files(upload_repo, QUESTION)[0] == "net/upload.py"
    assert not any("history" in n for n in service.search_code(QUESTION, upload_repo).notes)
    indexed = git(upload_repo, "rev-parse", "--short=7", "HEAD~1").strip()
    for rewrite in (["reset", "-q", "--hard", "HEAD~2"], ["commit", "-q", "--amend", "-m", "Reworded"]):
        git(upload_repo, *rewrite)
        head = git(upload_repo, "rev-parse", "--short=7", "HEAD").strip()
        reply = service.search_code(QUESTION, upload_repo, mode="files")
        assert next(f.path for f in reply.files or []) == "cli/options.py"
        assert reply.notes[0] == (
            f"history leg off: the indexed history ends at {indexed}, which HEAD ({head}) does not hold "
            "(a branch switch or a rewrite); `repolens index` reads it afresh"
        )
    service.index_repo(upload_repo)  # read afresh: the retry commit is gone for good
    reply = service.search_code(QUESTION, upload_repo, mode="files")
    assert not any("history" in n for n in reply.notes)


def test_the_leg_off_for_good_is_said_by_status_and_doctor_not_by_every_reply(
    make_repo: MakeRepo, plain_dir: Path, monkeypatch
):
    """Outside git or before the first commit the leg is off until that
    changes: ``status`` and ``doctor`` say so, once; replies carry no note."""
    (plain_dir / "a.py").write_text("def retry():\n    return 1\n", encoding="utf-8")
    reply = service.search_code("retry", plain_dir)
    assert not any("history" in n for n in reply.notes)
    assert reply.text.startswith("a.py:1-2 function retry (score ")
    status = service.index_status(plain_dir).render()
    assert "\nhistory: none (not a git work tree): the history leg is off\n" in status
    checks = {c.name: (c.state, c.detail) for c in diagnose(plain_dir).checks}
    assert checks["history"] == ("off", "none (not a git work tree): searches rank without past commits")
    unborn = make_repo({"a.py": "def retry():\n    return 1\n"}, name="unborn", commit=False)
    assert not any("history" in n for n in service.search_code("retry", unborn).notes)
    history = {c.name: c.detail for c in diagnose(unborn).checks}["history"]
    assert history.startswith("none (the repository has no commits yet)")
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "0")
    assert {c.name: c.detail for c in diagnose(plain_dir).checks}["history"] == "history_weight is 0"


def test_a_commit_touching_most_files_does_not_vote(make_repo: MakeRepo, git: Git):
    root = make_repo({"a.py": "x = 0\n", "b.py": "y = 0\n", "c.py": "z = 0\n", "d.py": "w = 0\n"})
    commit(
        git, root, "Retry the transfer everywhere", {"a.py": "x = 1\n", "b.py": "y = 1\n", "c.py": "z = 1\n"}
    )
    commit(git, root, "Retry the transfer in d", {"d.py": "w = 1\n"})
    reader, _ = service.open_index(root)
    assert set(vote_files(reader, parse_query("retry the transfer").weighted()).files) == {"d.py"}
