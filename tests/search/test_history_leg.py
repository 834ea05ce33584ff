"""The history leg: past commits like the question vote for the files they touched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import UPLOAD_FILES, Git, MakeRepo, commit_upload_history
from conftest import UPLOAD_QUESTION as QUESTION
from conftest import commit_files as commit
from repolens import service
from repolens.history.heads import OFF_MOST
from repolens.ops.doctor import diagnose
from repolens.search.history_leg import history_leg, vote_files
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


def _voted(root: Path) -> tuple[set[str], list[str]]:
    """The files the leg votes for on the question, and its notes."""
    reader, _ = service.open_index(root)
    votes, notes = history_leg(reader, parse_query(QUESTION).weighted(), root)
    return set(votes.files), notes


def test_after_a_rewrite_the_leg_votes_with_the_commits_head_still_holds(
    make_repo: MakeRepo, git: Git, monkeypatch
):
    """An amend or a reset takes commits off the branch, and the leg went
    off until ``repolens index``. It now votes with the commits read that
    HEAD still holds, never with those it does not hold, and says how many
    it leaves out; HEAD moved forward, it votes as before, with no note."""
    root = make_repo({**UPLOAD_FILES, "a.py": "a = 1\n", "b.py": "b = 1\n"})  # "initial" touches all: no vote
    commit(
        git, root, "Retry the transfer when it fails", {"net/upload.py": UPLOAD_FILES["net/upload.py"] + "\n"}
    )
    options = {"cli/options.py": UPLOAD_FILES["cli/options.py"] + "\n"}
    commit(git, root, "Retry the transfer when the server fails", options)
    service.index_repo(root)
    read = git(root, "rev-parse", "--short=7", "HEAD").strip()
    assert _voted(root) == ({"net/upload.py", "cli/options.py"}, [])
    commit(git, root, "Unrelated", {"docs.md": "words\n"})  # forward: the history is still on the branch
    assert _voted(root) == ({"net/upload.py", "cli/options.py"}, [])

    def left_out() -> str:
        head = git(root, "rev-parse", "--short=7", "HEAD").strip()
        return (
            f"history leg: the indexed history ends at {read}, which HEAD ({head}) does not hold "
            "(a branch switch or a rewrite): it votes without the 1 commit HEAD does not hold; "
            "`repolens index` reads the new ones"
        )

    git(root, "reset", "-q", "--hard", "HEAD~2")  # the commit read (cli/options.py's) is off the branch
    assert _voted(root) == ({"net/upload.py"}, [left_out()])
    monkeypatch.setenv("REPOLENS_RANKING", "tuned")
    monkeypatch.setenv("REPOLENS_HISTORY_WEIGHT", "1.0")
    reply = service.search_code(QUESTION, root, mode="files")
    assert (next(f.path for f in reply.files or []), reply.notes[0]) == ("net/upload.py", left_out())

    service.index_repo(root)  # read afresh; then a commit read is amended
    commit(git, root, "Retry the transfer when the server fails", options)
    service.index_repo(root)
    read = git(root, "rev-parse", "--short=7", "HEAD").strip()
    assert _voted(root) == ({"net/upload.py", "cli/options.py"}, [])
    git(root, "commit", "-q", "--amend", "-m", "Retry the transfer when the server fails, reworded")
    assert _voted(root) == ({"net/upload.py"}, [left_out()])  # the amended commit is not read yet
    service.index_repo(root)
    assert _voted(root) == ({"net/upload.py", "cli/options.py"}, [])


def test_a_rewrite_of_too_many_commits_turns_the_leg_off_until_the_next_index(
    make_repo: MakeRepo, git: Git, monkeypatch
):
    """More commits off the branch than are listed to leave out: the leg
    does not vote, and says so, until ``repolens index`` reads the history."""
    root = make_repo({**UPLOAD_FILES, "a.py": "a = 1\n"})
    initial = git(root, "rev-parse", "HEAD").strip()
    stream = "".join(
        f"commit refs/heads/main\ncommitter T <t@example.com> {1_700_000_000 + i} +0000\ndata 1\nx\n"
        + (f"from {initial}\n" if i == 0 else "")
        + "\n"
        for i in range(OFF_MOST)
    )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, text=True, check=True)
    commit(
        git, root, "Retry the transfer when it fails", {"net/upload.py": UPLOAD_FILES["net/upload.py"] + "\n"}
    )
    monkeypatch.setenv("REPOLENS_HISTORY_COMMITS", "10")
    service.index_repo(root)
    read = git(root, "rev-parse", "--short=7", "HEAD").strip()
    assert _voted(root) == ({"net/upload.py"}, [])
    git(root, "reset", "-q", "--hard", initial)  # OFF_MOST + 1 commits off the branch
    assert _voted(root) == (
        set(),
        [
            f"history leg off: the indexed history ends at {read}, which HEAD ({initial[:7]}) does not hold "
            "(a branch switch or a rewrite), and more than 5,000 of its commits are off the branch; "
            "`repolens index` reads it afresh"
        ],
    )


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


def _fast_import(root: Path, start: str, commits: list[tuple[int, str, str]]) -> None:
    """Append ``commits`` (time, message, the one file it rewrites) to
    ``main`` after ``start``, in one ``git fast-import`` (a thousand commits
    in well under a second)."""
    stream = ""
    for i, (time, message, rel) in enumerate(commits):
        content = f"changed = {i}\n"
        stream += (
            f"commit refs/heads/main\ncommitter T <t@example.com> {time} +0000\n"
            f"data {len(message)}\n{message}\n"
            + (f"from {start}\n" if i == 0 else "")
            + f"M 100644 inline {rel}\ndata {len(content)}\n{content}\n"
        )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, text=True, check=True)


def test_after_a_rewrite_the_leg_reads_only_what_it_needs_and_votes_as_before(make_repo: MakeRepo, git: Git):
    """After a rewrite the leg read its 30 commits plus one per commit off
    the branch, each with its paths: up to 5,030 on every search until
    ``repolens index``. It now reads the best first and more only while
    too few of them are held, and its votes are the same: the 30 best
    commits HEAD holds, best first, each weighing its score over the best
    one's times its recency."""
    names = [f"m/{chr(97 + i // 26)}{chr(97 + i % 26)}.py" for i in range(35)]  # same length: same scores
    root = make_repo({**{rel: "x = 0\n" for rel in names}, "off.py": "y = 0\n"})  # "initial" touches all
    day, start = 86_400, int(git(root, "log", "-1", "--format=%ct")) + 86_400  # after "initial"
    held = [(start + i * day, "Retry the transfer when it fails", rel) for i, rel in enumerate(names)]
    strong = [
        (start + (40 + i) * day, "Retry the transfer, retry when the transfer fails", "off.py")
        for i in range(35)
    ]
    weak = [(start + (80 + i) * day, "Say when it fails", "off.py") for i in range(1000)]
    _fast_import(root, git(root, "rev-parse", "HEAD").strip(), held + strong + weak)
    git(root, "reset", "-q", "--hard", "main")
    service.index_repo(root)
    # the 35 strongest matches and 1,000 weak ones: off the branch
    git(root, "reset", "-q", "--hard", "HEAD~1035")
    assert (
        git(root, "log", "-1", "--format=%s %ct").strip() == f"Retry the transfer when it fails {held[-1][0]}"
    )

    reader, _ = service.open_index(root)
    terms = parse_query(QUESTION).weighted()
    ranked = reader.history_search(terms, 2000)
    score = dict(ranked)
    stored = reader.history_commits(score)
    by_hash = {c.hash: cid for cid, c in stored.items()}
    assert [stored[cid].subject for cid, _ in ranked[:35]] == [
        "Retry the transfer, retry when the transfer fails"
    ] * 35
    newest = start + 1079 * day  # the newest commit read, off the branch
    # the 30 newest held commits (equal scores: newer first), each touching its own file
    hashes = git(root, "log", "-30", "--format=%H").split()
    expected = {}
    for h, (time, _, rel) in zip(hashes, reversed(held[-30:]), strict=True):
        s = score[by_hash[h]]
        assert s == score[by_hash[hashes[0]]]
        expected[rel] = [(h, s, s / s * 0.5 ** (max(newest - time, 0) / day / 365.0))]

    read: list[int] = []  # the commits whose paths the leg reads

    def trace(sql: str) -> None:
        if "FROM history_files h JOIN files f" in sql:
            read.extend(int(i) for i in sql.split("IN (", 1)[1].split(")", 1)[0].split(","))

    reader.db.set_trace_callback(trace)  # type: ignore[attr-defined]
    votes, notes = history_leg(reader, terms, root)
    reader.db.set_trace_callback(None)  # type: ignore[attr-defined]
    assert "it votes without the 1035 commits HEAD does not hold" in notes[0]
    got = {
        path: [(s.commit.hash, s.score, s.weight) for s in vote.commits] for path, vote in votes.files.items()
    }
    assert got == expected
    assert len(read) == 120  # the best 30, then 90 more: 35 held among them (it read all 1,065 found)
