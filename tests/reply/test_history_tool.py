"""The history for agents: `repolens history` and the MCP tool `search_history`
list the commits relevant to a question, a file, or both, within a budget."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import Git, MakeRepo
from conftest import commit_files as commit
from repolens import service
from repolens.errors import PathError, UsageError
from repolens.search.fanout import Target
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_readers():
    yield
    readers.clear()


@pytest.fixture
def story_repo(make_repo: MakeRepo, git: Git) -> Path:
    root = make_repo({"store.py": "".join(f"value_{i} = {i}\n" for i in range(30))})
    commit(
        git,
        root,
        "Expire sessions after an hour",
        {"store.py": "TTL = 3600\n" + (root / "store.py").read_text()},
    )
    commit(git, root, "Add the web form", {"form.py": "def submit():\n    return True\n"})
    (root / "session").mkdir()
    git(root, "mv", "store.py", "session/store.py")
    commit(git, root, "Move the store into session")
    renumbered = "TTL = 3600\n" + "".join(f"value_{i} = {i + 1}\n" for i in range(30))
    commit(git, root, "Renumber every value", {"session/store.py": renumbered})
    service.index_repo(root)
    return root


def test_the_history_of_a_question_lists_the_most_similar_commits(story_repo: Path, git: Git):
    reply = service.search_history("when do sessions expire", story_repo, top_k=3)
    first = reply.entries[0]
    assert (first.subject, first.paths) == ("Expire sessions after an hour", ("session/store.py",))
    sha = git(story_repo, "log", "-1", "--format=%h %cs", "--abbrev=7", "--grep", "Expire").strip()
    assert reply.text.startswith("history for 'when do sessions expire': ")
    assert f"{sha} Expire sessions after an hour\n  files: session/store.py" in reply.text
    assert reply.to_json()["commits"][0]["hash"].startswith(sha.split()[0])


def test_the_history_of_a_file_follows_renames_and_shows_changed_lines(story_repo: Path):
    reply = service.search_history(path="session/store.py", root=story_repo)
    assert [e.subject for e in reply.entries] == [
        "Renumber every value",
        "Move the store into session",
        "Expire sessions after an hour",
        "initial",
    ]
    renumber, move, expire, _ = reply.entries
    assert expire.diff == ("@@ -0,0 +1 @@", "+TTL = 3600")  # under its old name, store.py
    assert move.diff == ("renamed from store.py",)  # a rename, not every line added
    assert len(renumber.diff) == 20 and renumber.diff_omitted == 41  # 1 hunk header, 30 - and 30 +
    sha = renumber.hash[:7]
    assert f"  ... (41 more changed lines; git show {sha} -- session/store.py)" in reply.text
    ranked = service.search_history("sessions expire", story_repo, path="session/store.py")
    assert ranked.entries[0].subject == "Expire sessions after an hour"
    # asked by the name it had before the move: the same commits, and a note saying so
    old_name = service.search_history(path="store.py", root=story_repo)
    assert [e.hash for e in old_name.entries] == [e.hash for e in reply.entries]
    said = "store.py is named session/store.py since a rename: its commits under every name"
    assert old_name.notes[0] == said


@pytest.mark.parametrize("name", ["docs/my notes.py", "it's $HOME.py", 'quo"te (1).py'])
def test_the_git_show_a_marker_names_works_as_written_for_any_name(make_repo: MakeRepo, git: Git, name: str):
    """The marker counting the changed lines not shown names a command an
    agent runs in a shell as it is: a name with spaces or shell characters
    is quoted."""
    root = make_repo({name: "".join(f"v{i} = {i}\n" for i in range(30))})
    commit(git, root, "Renumber", {name: "".join(f"v{i} = {i + 1}\n" for i in range(30))})
    service.index_repo(root)
    reply = service.search_history(path=name, root=root, top_k=1)
    marker = reply.text.splitlines()[-1]
    assert marker.startswith("  ... (41 more changed lines; git show "), reply.text
    command = marker.split("; ", 1)[1].removesuffix(")")
    shown = subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "+v29 = 30" in shown.stdout


def test_a_change_git_shows_no_line_of_says_what_changed(make_repo: MakeRepo, git: Git):
    """A mode change, a binary file and an empty file changed no line:
    each says what changed rather than showing nothing. A removed ``--
    comment`` line is a changed line, not a file header."""
    root = make_repo({"run.sh": "echo hi\n", "data.bin": b"ab\0cd", "q.sql": "-- all rows\nselect 1;\n"})
    (root / "run.sh").chmod(0o755)
    commit(git, root, "Make run.sh executable")
    commit(git, root, "Update the blob", {"data.bin": b"ab\0ce"})
    commit(git, root, "Add a package", {"pkg/__init__.py": ""})
    commit(git, root, "Drop the comment", {"q.sql": "select 1;\n"})
    service.index_repo(root)

    def diffs(path: str) -> list[tuple[str, ...]]:
        return [e.diff for e in service.search_history(path=path, root=root).entries]

    assert diffs("run.sh") == [("mode 100644 -> 100755",), ("@@ -0,0 +1 @@", "+echo hi")]
    assert diffs("data.bin") == [("binary file changed",), ("binary file added",)]
    assert diffs("pkg/__init__.py") == [("empty file added",)]
    assert diffs("q.sql")[0] == ("@@ -1 +0,0 @@", "--- all rows")
    reply = service.search_history(path="run.sh", root=root)
    assert "Make run.sh executable\n  files: run.sh\n  mode 100644 -> 100755\n\n" in reply.text


def test_a_name_holding_a_newline_is_quoted_as_git_quotes_it(make_repo: MakeRepo, git: Git):
    """git allows a newline in a file's name: written as it is, it broke the
    reply's layout (one name read as two lines); it is quoted as git quotes
    it, wherever a reply names it."""
    root = make_repo({"old\nname.py": "".join(f"v{i} = {i}\n" for i in range(9)), "b.py": "b = 1\n"})
    commit(git, root, "Tweak the odd module", {"we\nird.py": "w = 1\n", "b.py": "b = 2\n"})
    git(root, "mv", "old\nname.py", "plain.py")
    commit(git, root, "Rename the module", {"plain.py": (root / "plain.py").read_text() + "v9 = 9\n"})
    service.index_repo(root)
    tweak = service.search_history("tweak odd module", root, top_k=1).text
    assert tweak.endswith(' Tweak the odd module\n  files: b.py, "we\\nird.py"')
    renamed = service.search_history(path="plain.py", root=root, top_k=1).text
    said = ' Rename the module\n  files: plain.py\n  renamed from "old\\nname.py"\n'
    assert renamed.endswith(f"{said}  @@ -9,0 +10 @@ v8 = 8\n  +v9 = 9")


def test_a_note_naming_a_file_quotes_it_as_the_files_line_does(make_repo: MakeRepo, git: Git):
    """The note of a file renamed since (``X is named Y since a rename``)
    wrote a name holding a newline or a control character as it is, one
    name read as two lines, while the files line quotes it: the note quotes
    it the same way."""
    root = make_repo({"old.py": "v = 1\n", "b.py": "b = 1\n"})
    git(root, "mv", "old.py", "new\nna\x01me.py")
    commit(git, root, "Rename the module")
    service.index_repo(root)
    reply = service.search_history(path="old.py", root=root)
    named = '"new\\nna\\001me.py"'
    assert reply.notes == [f"old.py is named {named} since a rename: its commits under every name"]
    assert f"\n  files: {named}\n" in reply.text and "new\nna" not in reply.text
    (root / 'not "yet".py').write_text("y = 1\n")  # indexed, never committed
    service.index_repo(root)
    notes = service.search_history(path='not "yet".py', root=root).notes
    assert notes == ['no commit in the indexed history touches "not \\"yet\\".py"']


def test_a_root_below_the_top_of_the_repository_sees_a_rename_as_one(make_repo: MakeRepo, git: Git):
    """Indexed from a folder of its repository, the commit that renamed a
    file shows the rename and what else changed, as at the top."""
    top = make_repo({"app/old.py": "".join(f"v{i} = {i}\n" for i in range(5)), "other.py": "x = 1\n"})
    git(top, "mv", "app/old.py", "app/new.py")
    commit(git, top, "Rename old to new", {"app/new.py": (top / "app/new.py").read_text() + "extra = 1\n"})
    root = top / "app"
    service.index_repo(root)
    renamed = service.search_history(path="new.py", root=root).entries[0]
    assert renamed.subject == "Rename old to new"
    assert renamed.diff == ("renamed from old.py", "@@ -5,0 +6 @@ v4 = 4", "+extra = 1")


def test_an_empty_commit_says_it_touched_no_file(make_repo: MakeRepo, git: Git):
    root = make_repo({"a.py": "a = 0\n"})
    sha = commit(git, root, "Retrigger the capybara build")  # git commit --allow-empty
    service.index_repo(root)
    reply = service.search_history("capybara build", root)
    head = f"{sha[:7]} {reply.entries[0].date} Retrigger the capybara build"
    assert reply.text.endswith(f"{head}\n  files: none")


def test_a_commit_on_several_branches_asked_together_is_listed_once(
    make_repo: MakeRepo, git: Git, tmp_path: Path
):
    """Two branches of one repository share their older commits: asked
    together, each shared commit is listed once, naming every branch that
    holds it, and top_k counts commits, not copies."""
    main = make_repo({"a.py": "a = 0\n"})
    shared = commit(git, main, "Expire sessions after an hour", {"s.py": "ttl = 1\n"})
    dev = tmp_path / "dev"
    git(main, "worktree", "add", "-q", "-b", "dev", str(dev))
    own = commit(git, dev, "Tweak the session store on dev", {"t.py": "x = 1\n"})
    for root in (main, dev):
        service.index_repo(root)
    targets = [Target("app@main", main), Target("app@dev", dev)]
    reply = service.search_history_across("session", targets, top_k=2)
    assert sorted(e.hash for e in reply.entries) == sorted([shared, own])
    both = next(e for e in reply.entries if e.hash == shared)
    assert sorted((both.repo, *both.also)) == ["app@dev", "app@main"]
    assert f"\n\n{both.repo},{both.also[0]} {shared[:7]} " in reply.text
    assert "app@dev " + own[:7] in reply.text and reply.text.count(shared[:7]) == 1
    listed = {c["hash"]: c for c in reply.to_json()["commits"]}
    assert listed[shared]["also_in"] == list(both.also) and "also_in" not in listed[own]


def test_the_history_reply_fits_its_budget(story_repo: Path):
    reply = service.search_history(path="session/store.py", root=story_repo, max_chars=700)
    assert len(reply.text) <= 700
    hashes = [e.hash[:7] for e in reply.omitted]
    commits = f"{len(hashes)} more commit{'' if len(hashes) == 1 else 's'}"
    assert hashes and reply.text.endswith(f"... {commits} did not fit: {', '.join(hashes)}")


def test_the_json_holds_the_changed_lines_the_text_holds(story_repo: Path):
    """``--json`` within ``--max-chars`` carries the evidence the text shows:
    a commit cut in the text is cut alike in the JSON (its other changed
    lines counted in diff_omitted), the commits that did not fit are named
    in omitted. The JSON held every changed line of a commit the text cut."""
    out = _cli("--path", "session/store.py", "--root", str(story_repo), "--max-chars", "400", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    text = service.search_history(path="session/store.py", root=story_repo, max_chars=400).text
    [renumber] = data["commits"]  # the best commit, cut
    shown = [line[2:] for line in text.splitlines()[4:] if line.startswith("  ") and "git show" not in line]
    assert text.splitlines()[3] == "  files: session/store.py"
    assert renumber["diff"] == shown and 0 < len(shown) < 20
    assert renumber["diff_omitted"] == 61 - len(shown)  # 1 hunk header, 30 lines removed and 30 added
    assert f"  ... ({renumber['diff_omitted']} more changed lines; git show {renumber['hash'][:7]} " in text
    assert len(data["omitted"]) == 3 and text.endswith(", ".join(h[:7] for h in data["omitted"]))


@pytest.mark.parametrize("max_chars", [200, 300, 500, 800])
@pytest.mark.parametrize("top_k", [1, 4])
def test_the_best_commits_hash_and_subject_fit_at_every_budget(story_repo: Path, max_chars: int, top_k: int):
    """A commit too big for the budget is shown cut (its changed lines
    counted with the ``git show`` that shows them), never left out whole."""
    question = "which commit renumbered the values of the session store " * 4
    for query in (None, question):
        reply = service.search_history(
            query, story_repo, path="session/store.py", top_k=top_k, max_chars=max_chars
        )
        best = reply.entries[0]
        assert len(reply.text) <= max_chars
        assert f"\n\n{best.hash[:7]} {best.date} {best.subject}" in reply.text
    if max_chars <= 300:
        sha = best.hash[:7]
        assert reply.text.splitlines()[3].startswith("  ")  # a changed line or the marker
        assert f"changed lines; git show {sha} -- session/store.py)" in reply.text


def test_a_subject_longer_than_the_budget_leaves_room_for_the_commits_after_it(make_repo: MakeRepo, git: Git):
    """The best commit's subject is cut beside the line naming the commits
    that did not fit: that line is not crowded out by one long subject."""
    root = make_repo({"a.py": "x = 0\n"})
    for i in range(1, 4):
        commit(git, root, f"update {i} " + "word " * 300, {"a.py": f"x = {i}\n"})
    service.index_repo(root)
    for query, path in (("update word", None), (None, "a.py")):
        reply = service.search_history(query, root, path=path, top_k=3, max_chars=400)
        assert len(reply.text) <= 400
        best, omitted = reply.entries[0], [e.hash[:7] for e in reply.omitted]
        assert reply.text.splitlines()[2].startswith(f"{best.hash[:7]} {best.date} update ")
        assert len(omitted) == 2
        assert reply.text.endswith(f"... 2 more commits did not fit: {', '.join(omitted)}")


def test_the_history_tool_says_what_is_wrong(story_repo: Path, plain_dir: Path):
    with pytest.raises(UsageError, match="a question, a file path, or both"):
        service.search_history(root=story_repo)
    with pytest.raises(UsageError, match="inside the repository"):
        service.search_history(path="../elsewhere.py", root=story_repo)
    with pytest.raises(UsageError, match="top_k must be between 1 and 50"):
        service.search_history("x", story_repo, top_k=0)
    with pytest.raises(UsageError, match="max_chars must be between 200"):
        service.search_history("x", story_repo, max_chars=10)
    with pytest.raises(PathError, match=r"^no indexed file is under 'nothing\.py'"):
        service.search_history(path="nothing.py", root=story_repo)
    (plain_dir / "a.py").write_text("x = 1\n", encoding="utf-8")
    assert service.search_history("x", plain_dir).notes == ["no history: not a git work tree"]


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}
    cmd = [sys.executable, "-m", "repolens", "history", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_a_folder_as_the_path_is_refused_naming_one_of_its_files(story_repo: Path):
    """The history takes one file: a folder is not answered with '0 commits,
    no commit touches it' while commits touched the files in it."""
    for folder in ("session", "session/", str(story_repo / "session")):
        with pytest.raises(UsageError) as refused:
            service.search_history(path=folder, root=story_repo)
        assert str(refused.value) == (
            "path 'session' is a folder, not a file (it holds 'session/store.py'): pass one file as path"
        )
    bad = _cli("--path", "session", "--root", str(story_repo))
    assert bad.returncode == 2
    said = "path 'session' is a folder, not a file (it holds 'session/store.py'): pass one file as --path"
    assert bad.stderr == f"error: {said}\n"


def test_the_history_command_prints_text_or_json_and_refuses_bad_input(story_repo: Path):
    out = _cli("sessions expire", "--root", str(story_repo), "--top-k", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("history for 'sessions expire': 1 commit\n\n")
    assert "Expire sessions after an hour" in out.stdout
    out = _cli("--path", "session/store.py", "--root", str(story_repo), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["path"] == "session/store.py" and len(data["commits"]) == 4
    bad = _cli("--root", str(story_repo))
    assert bad.returncode != 0
    assert bad.stderr.strip() == "error: pass a question, a file path, or both to search the history"
    bad = _cli("x", "--root", str(story_repo), "--top-k", "99")
    assert bad.returncode != 0 and bad.stderr == "error: top_k must be between 1 and 50, got 99\n"
    assert "Traceback" not in bad.stderr


def test_the_mcp_tool_over_stdio(story_repo: Path):
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}
    args = ["-m", "repolens", "serve", "--root", str(story_repo), "--no-watch"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)

    async def session() -> dict:
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return {
                "schema": tools["search_history"].input_schema["properties"],
                "question": await client.call_tool(
                    "search_history", {"query": "sessions expire", "top_k": 1}
                ),
                "file": await client.call_tool(
                    "search_history", {"path": "session/store.py", "max_chars": 400}
                ),
                "empty": await client.call_tool("search_history", {}),
            }

    out = asyncio.run(session())
    assert {"query", "path", "top_k", "max_chars", "repo"} <= set(out["schema"])
    text = out["question"].content[0].text
    assert not out["question"].is_error and "Expire sessions after an hour" in text
    file_text = out["file"].content[0].text
    assert len(file_text) <= 400 and "did not fit" in file_text
    assert out["empty"].is_error
    assert "a question, a file path, or both" in out["empty"].content[0].text


def test_a_history_behind_head_says_so_and_lists_only_commits_head_holds(make_repo: MakeRepo, git: Git):
    """HEAD moved since the index read the history: ahead, the reply says how
    many newer commits it lacks; rewritten (a reset, a rebase, a branch
    switch), the commits HEAD no longer holds are left out, even after git
    deleted them, and top_k is still filled with those it holds."""
    root = make_repo({"a.py": "a = 0\n"})
    for i in range(1, 5):
        commit(git, root, f"Tweak a, step {i}", {"a.py": f"a = {i}\n"})
    service.index_repo(root)
    indexed = git(root, "rev-parse", "--short=7", "HEAD").strip()

    def history() -> tuple[list[str], list[str]]:
        readers.clear()
        reply = service.search_history("tweak step", root, path="a.py", top_k=2)
        return [e.subject for e in reply.entries], reply.notes

    commit(git, root, "Tweak a, step 5", {"a.py": "a = 5\n"})
    commit(git, root, "Add b", {"b.py": "b = 1\n"})
    assert history() == (
        ["Tweak a, step 4", "Tweak a, step 3"],
        [f"the indexed history ends at {indexed}: HEAD has 2 newer commits; `repolens index` reads them"],
    )
    git(root, "reset", "-q", "--hard", "HEAD~4")  # steps 3, 4 and 5 and b are gone
    head = git(root, "rev-parse", "--short=7", "HEAD").strip()
    said = (
        f"the indexed history ends at {indexed}, which HEAD ({head}) does not hold (a branch switch "
        "or a rewrite): commits HEAD does not hold are left out; `repolens index` reads it afresh"
    )
    assert history() == (["Tweak a, step 2", "Tweak a, step 1"], [said])
    git(root, "reflog", "expire", "--expire=now", "--all")
    git(root, "gc", "-q", "--prune=now")
    assert history() == (["Tweak a, step 2", "Tweak a, step 1"], [said])
    service.index_repo(root)
    assert history() == (["Tweak a, step 2", "Tweak a, step 1"], [])


def test_a_history_read_before_the_first_commit_says_there_is_one_now(make_repo: MakeRepo, git: Git):
    root = make_repo({"a.py": "a = 0\n"}, commit=False)
    service.index_repo(root)
    first = commit(git, root, "First")
    readers.clear()
    assert service.search_history("first", root).notes == [
        f"no history: the repository has no commits yet; HEAD is {first[:7]} now: `repolens index` reads it"
    ]


def test_a_history_whose_commits_were_all_left_out_says_why(make_repo: MakeRepo):
    """One commit of 60 files (a mass change) is left out of the history:
    the reply says that, not only that there is nothing to learn from."""
    root = make_repo({f"pkg/m{i}.py": f"VALUE_{i} = {i}\n" for i in range(60)})
    service.index_repo(root)
    reply = service.search_history(path="pkg/m1.py", root=root)
    assert reply.notes == [
        "no history: no commits to learn from: merges, commits touching very many files and those at the cut "
        "of a shallow clone are left out"
    ]


def test_whether_head_moved_is_read_from_git_files_and_answers_as_git(
    make_repo: MakeRepo, git: Git, tmp_path: Path, git_calls
):
    """Every history reply asked git whether HEAD moved since the index (a
    process, ~2.5 ms) though the search's history leg reads HEAD from git's
    files. Now the reply does too: no git runs while HEAD is where the
    history was read, and git's answer is the reply's otherwise, whatever
    the layout: a moved HEAD, a detached one, a linked worktree, packed refs."""
    from repolens.history.gitlog import Moved

    root = make_repo({"app/a.py": "a = 1\n"})
    other = tmp_path / "other"
    git(root, "worktree", "add", "-q", "-b", "other", str(other))
    commit(git, other, "On other", {"b.py": "b = 1\n"})
    indexed = {where: git(where, "rev-parse", "HEAD").strip() for where in (root, other)}
    for where in indexed:
        service.index_repo(where)

    def gits(where: Path) -> Moved | None:
        """What git alone says of how HEAD moved since the index (the root is the top: all count)."""
        now, read = git(where, "rev-parse", "HEAD").strip(), indexed[where]
        if now == read:
            return None
        ahead = subprocess.run(["git", "merge-base", "--is-ancestor", read, now], cwd=where).returncode == 0
        newer = int(git(where, "rev-list", "--count", "--no-merges", f"{read}..{now}")) if ahead else 0
        return Moved(now, newer, rewritten=not ahead)

    def agree(where: Path) -> list[str]:
        """Git's answer is the reply's; the git commands the reply ran."""
        git_calls()
        readers.clear()
        notes = service.search_history("a", where).notes
        ran = git_calls()
        moved, behind = gits(where), [n for n in notes if n.startswith("the indexed history ends at ")]
        if moved is None:
            assert behind == []
        elif moved.rewritten:
            assert len(behind) == 1 and f", which HEAD ({moved.now[:7]}) does not hold " in behind[0]
        else:
            assert len(behind) == 1 and f": HEAD has {moved.newer} newer commit" in behind[0]
        return ran

    assert agree(root) == [] and agree(other) == []  # HEAD where it was read: no git
    git(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/other").exists()
    assert agree(root) == [] and agree(other) == []
    commit(git, other, "Later on other", {"c.py": "c = 1\n"})  # moved ahead: git counts the newer commits
    assert agree(other) != []
    git(root, "checkout", "-q", "--detach", "HEAD")
    assert agree(root) == []
    git(root, "checkout", "-q", "--detach", "other")  # detached, and moved ahead
    assert agree(root) != []
    git(other, "reset", "-q", "--hard", "main")  # rewritten: HEAD no longer holds the commit read
    assert agree(other) != [] and getattr(gits(other), "rewritten", False)
