"""History ingestion: commits read from git into the index and kept equal to HEAD
(incremental, read afresh on a branch switch or rewrite, none outside git)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import Git, MakeRepo
from conftest import commit_files as commit
from repolens import service
from repolens.history import gitlog
from repolens.history.sync import sync_history
from repolens.search.history_leg import similar_commits
from repolens.store.base import IndexWriter, Store
from repolens.store.handles import readers
from repolens.store.postgres.connect import close_pools


@pytest.fixture(autouse=True)
def _fresh_readers():
    yield
    readers.clear()
    close_pools()


class Index:
    """An empty published index of a repository, whose history the tests sync by hand."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def sync(self, root: Path, limit: int, **kw):
        with self.store.write_lock():
            writer: IndexWriter = self.store.open_writer(self.store.current())
            try:
                return sync_history(writer, root, limit, **kw)
            finally:
                writer.close()

    def stored(self) -> list[tuple[str, list[str]]]:
        """(subject, paths) of every stored commit, newest first."""
        reader = self.store.open_reader()
        try:
            commits = reader.history_commits(range(1, 1000))  # ids ascend with recency
            return [(c.subject, list(c.paths)) for _, c in sorted(commits.items(), reverse=True)]
        finally:
            reader.close()

    def similar(self, term: str) -> list[str]:
        reader = self.store.open_reader()
        try:
            found = similar_commits(reader, [(term, 1.0)], newest=0, indexed_only=False)
            return [s.commit.subject for s in found]
        finally:
            reader.close()


@pytest.fixture
def index(tmp_path: Path, store_factory) -> Iterator[Index]:
    """A published index (of a folder outside git, so it holds no history
    yet), in each store backend."""
    yield published(store_factory, tmp_path / "scratch")


def published(store_factory, scratch: Path) -> Index:
    """A published index of the new folder ``scratch`` (outside git)."""
    scratch.mkdir()
    (scratch / "keep.py").write_text("k = 1\n", encoding="utf-8")
    store = store_factory(scratch)
    service.build_index(scratch, store=store)
    return Index(store)


def move(git: Git, root: Path, old: str, new: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", old, new)


def test_commits_are_read_newest_first_with_paths_and_messages(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "x = 1\n"})
    commit(git, root, "Add the parser\n\nIt reads tokens.", {"parser.py": "def parse(): pass\n"})
    commit(git, root, "Fix the parser and a", {"parser.py": "def parse(): return 1\n", "a.py": "x = 2\n"})
    report = index.sync(root, 100)
    assert (report.mode, report.commits, report.added) == ("read", 3, 3)
    assert index.stored() == [
        ("Fix the parser and a", ["a.py", "parser.py"]),
        ("Add the parser", ["parser.py"]),
        ("initial", ["a.py"]),
    ]
    assert "history: 3 commits up to" in report.summary()


def test_a_sync_reads_only_the_new_commits(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "x = 0\n"})
    first = index.sync(root, 100)
    assert index.sync(root, 100).mode == "unchanged"
    commit(git, root, "Second", {"a.py": "x = 1\n"})
    commit(git, root, "Third", {"b.py": "y = 1\n"})
    report = index.sync(root, 100)
    assert (first.mode, report.mode, report.added, report.commits) == ("read", "added", 2, 3)
    assert [s for s, _ in index.stored()] == ["Third", "Second", "initial"]


def test_a_rewrite_or_a_branch_switch_reads_the_history_afresh(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "x = 0\n"})
    commit(git, root, "Wrong message", {"a.py": "x = 1\n"})
    index.sync(root, 100)
    git(root, "commit", "-q", "--amend", "-m", "Right message")
    report = index.sync(root, 100)
    assert report.mode == "rebuilt"
    assert [s for s, _ in index.stored()] == ["Right message", "initial"]
    git(root, "checkout", "-q", "-b", "other", "HEAD~1")
    commit(git, root, "On the other branch", {"c.py": "z = 1\n"})
    assert index.sync(root, 100).mode == "rebuilt"
    assert [s for s, _ in index.stored()] == ["On the other branch", "initial"]
    assert index.similar("messag") == []  # the amended-away commits are gone


@pytest.fixture
def on(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    """``on(day)``: the commits made next are dated that day of January 2020
    (git lists a merged branch's commits by date)."""

    def dated(day: int) -> None:
        for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
            monkeypatch.setenv(var, f"2020-01-0{day}T00:00:00")

    return dated


def test_a_merge_of_older_commits_stores_them_in_the_order_of_a_fresh_read(
    make_repo: MakeRepo, git: Git, index, store_factory, tmp_path: Path, on: Callable[[int], None]
):
    """A branch begun before the last sync and merged after it: git lists
    its commits by date, among the stored ones. Appended after them, they
    were listed (by ``history --path`` too) first, and a fresh build listed
    them in date order."""

    on(1)
    root = make_repo({"a.py": "".join(f"v{i} = {i}\n" for i in range(9))})
    git(root, "checkout", "-q", "-b", "feature")
    on(2)
    commit(git, root, "Feature tweak", {"a.py": (root / "a.py").read_text().replace("v8 = 8", "v8 = 80")})
    git(root, "checkout", "-q", "main")
    on(3)
    commit(git, root, "Main tweak", {"a.py": (root / "a.py").read_text().replace("v0 = 0", "v0 = 10")})
    index.sync(root, 100)
    on(4)
    git(root, "merge", "-q", "--no-edit", "feature")
    report = index.sync(root, 100)
    in_git = git(root, "log", "--no-merges", "--format=%s").split("\n")[:-1]
    assert in_git == ["Main tweak", "Feature tweak", "initial"]
    assert [s for s, _ in index.stored()] == in_git
    assert (report.mode, report.added) == ("merged", 3)
    assert report.summary().endswith("(read afresh: a merge brought commits older than the newest read)")
    fresh = published(store_factory, tmp_path / "fresh")
    fresh.sync(root, 100)
    assert fresh.stored() == index.stored()
    on(5)  # a merge of newer commits only: they come first in a fresh read too
    git(root, "checkout", "-q", "feature")
    commit(git, root, "Newer feature", {"b.py": "b = 1\n"})
    git(root, "checkout", "-q", "main")
    on(6)
    git(root, "merge", "-q", "--no-edit", "feature")
    assert index.sync(root, 100).mode == "added"
    assert [s for s, _ in index.stored()] == ["Newer feature", *in_git]


def test_a_merge_of_older_commits_that_fill_the_cap_is_read_as_a_fresh_read(
    make_repo: MakeRepo, git: Git, index, store_factory, tmp_path: Path, on: Callable[[int], None]
):
    """New commits that alone fill the cap replace the stored ones, but a
    merge of commits older than the newest stored one is still read afresh:
    ``since..HEAD`` lists the branch's old commits where a fresh read of
    HEAD keeps the newer stored one among the cap's."""

    on(1)
    root = make_repo({"a.py": "".join(f"v{i} = {i}\n" for i in range(9))})
    git(root, "checkout", "-q", "-b", "feature")
    on(2)
    for i in (1, 2, 3):
        commit(git, root, f"Old {i}", {f"f{i}.py": f"f = {i}\n"})
    git(root, "checkout", "-q", "main")
    on(3)
    commit(git, root, "Stored", {"a.py": (root / "a.py").read_text().replace("v0 = 0", "v0 = 10")})
    index.sync(root, 3)
    on(4)
    git(root, "merge", "-q", "--no-edit", "feature")
    commit(git, root, "New", {"b.py": "b = 1\n"})
    report = index.sync(root, 3)
    fresh = published(store_factory, tmp_path / "fresh")
    fresh.sync(root, 3)
    assert [s for s, _ in index.stored()] == [s for s, _ in fresh.stored()] == ["New", "Stored", "Old 3"]
    assert report.mode == "merged"


def test_renamed_files_keep_their_history_under_the_new_name(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"old/store.py": "class Store:\n    pass\n" * 20})
    commit(git, root, "Teach the store to expire", {"old/store.py": "class Store:\n    ttl = 1\n" * 20})
    move(git, root, "old/store.py", "new/store.py")
    commit(git, root, "Move the store")
    index.sync(root, 100)
    assert index.stored() == [
        ("Move the store", ["new/store.py"]),
        ("Teach the store to expire", ["new/store.py"]),
        ("initial", ["new/store.py"]),
    ]


def test_a_rename_after_the_last_sync_reads_the_history_as_a_fresh_build(
    make_repo: MakeRepo, git: Git, index
):
    """The stored commits' paths moved to the new name, but their documents
    kept the old name's words: ``tropical`` found 2 commits refreshed and 4
    fresh, and the history leg scored the search otherwise."""
    root = make_repo({"fruit.py": "def alpha():\n    return 1\n" * 20})
    commit(git, root, "Tune alpha", {"fruit.py": "def alpha():\n    return 2\n" * 20})
    commit(git, root, "Add another module", {"other.py": "x = 1\n"})
    index.sync(root, 100)
    move(git, root, "fruit.py", "tropical.py")
    commit(git, root, "Rename the module")
    report = index.sync(root, 100)
    assert (report.mode, report.added) == ("renamed", 4)
    assert report.summary().endswith("(read afresh: a new commit renamed a file)")
    assert index.stored() == [
        ("Rename the module", ["tropical.py"]),
        ("Add another module", ["other.py"]),
        ("Tune alpha", ["tropical.py"]),
        ("initial", ["tropical.py"]),
    ]
    assert sorted(index.similar("tropic")) == ["Rename the module", "Tune alpha", "initial"]
    assert index.similar("fruit") == []


def test_a_deleted_path_does_not_follow_a_later_file_of_that_name(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "first = 1\n" * 20})
    git(root, "rm", "-q", "a.py")
    commit(git, root, "Drop a")
    commit(git, root, "A new a", {"a.py": "second = 2\n" * 20})
    move(git, root, "a.py", "c.py")
    commit(git, root, "Rename the new a")
    index.sync(root, 100)
    assert index.stored() == [
        ("Rename the new a", ["c.py"]),
        ("A new a", ["c.py"]),
        ("Drop a", ["a.py"]),
        ("initial", ["a.py"]),
    ]


def test_commits_touching_too_many_files_are_left_out_but_their_renames_count(
    make_repo: MakeRepo, git: Git, index
):
    root = make_repo({"lib/core.py": "def core():\n    return 'core'\n" * 20})
    commit(git, root, "Reformat everything", {f"gen/f{i}.py": f"v = {i}\n" for i in range(8)})
    move(git, root, "lib", "src")
    commit(git, root, "Move lib to src", {f"gen/f{i}.py": f"v = {i + 1}\n" for i in range(8)})
    report = index.sync(root, 100, max_files=5)
    assert report.too_big == 2
    assert index.stored() == [("initial", ["src/core.py"])]
    assert "2 touching over" in report.summary()


def test_a_shallow_clone_leaves_out_the_commit_at_its_cut(
    make_repo: MakeRepo, git: Git, index, tmp_path: Path
):
    """In a shallow clone git sees the oldest commit it has as adding every
    file of its tree: that is not its change, so it is not kept (the history
    of f1.py is not 'created in commit 4'); fetching the rest reads it all."""
    origin = make_repo({"common.py": "n = 0\n"}, name="origin")
    for i in range(1, 7):
        commit(git, origin, f"Commit number {i}", {"common.py": f"n = {i}\n", f"f{i}.py": f"v = {i}\n"})
    root = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{origin}", str(root))
    report = index.sync(root, 100)
    assert index.stored() == [
        ("Commit number 6", ["common.py", "f6.py"]),
        ("Commit number 5", ["common.py", "f5.py"]),
    ]
    assert report.summary().endswith(
        "; 1 at the cut of a shallow clone left out (git sees it add every file)"
    )
    assert index.sync(root, 100).mode == "unchanged"
    git(root, "fetch", "-q", "--unshallow")
    report = index.sync(root, 100)
    assert (report.mode, report.commits) == ("rebuilt", 7)
    assert index.stored()[-2:] == [("Commit number 1", ["common.py", "f1.py"]), ("initial", ["common.py"])]


def test_the_cap_keeps_the_newest_commits(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "x = 0\n"})
    for i in range(1, 5):
        commit(git, root, f"Change number {i} zebra{i}", {"a.py": f"x = {i}\n"})
    index.sync(root, 3)
    assert [s for s, _ in index.stored()] == [
        "Change number 4 zebra4",
        "Change number 3 zebra3",
        "Change number 2 zebra2",
    ]
    for i in range(5, 8):
        commit(git, root, f"Change number {i} zebra{i}", {"a.py": f"x = {i}\n"})
        assert index.sync(root, 3).mode == "added"
    assert [s for s, _ in index.stored()] == [
        "Change number 7 zebra7",
        "Change number 6 zebra6",
        "Change number 5 zebra5",
    ]
    assert index.similar("zebra2") == []  # terms of trimmed commits are not found any more
    assert index.similar("zebra6") == ["Change number 6 zebra6"]


def test_new_commits_that_fill_the_cap_replace_the_stored_ones_read_once(
    make_repo: MakeRepo, git: Git, index, git_calls
):
    """New commits that alone fill the cap replace every stored commit; one
    of them renaming a file made the sync read the whole history again
    (the stored commits' documents name the old path, but none is kept),
    then report it read afresh. It reads the new commits once and says so."""
    root = make_repo({"a.py": "first = 1\n" * 20})
    commit(git, root, "Tune a", {"a.py": "first = 2\n" * 20})
    index.sync(root, 3)
    move(git, root, "a.py", "c.py")
    commit(git, root, "Rename a")
    commit(git, root, "Tune c", {"c.py": "second = 3\n" * 20})
    commit(git, root, "Tune c again", {"c.py": "second = 4\n" * 20})
    git_calls()
    report = index.sync(root, 3)
    assert len([args for args in git_calls() if args.startswith("log ") or " log " in args]) == 1
    assert (report.mode, report.added, report.commits) == ("added", 3, 3)
    assert report.summary().endswith(" (3 new)")
    assert index.stored() == [
        ("Tune c again", ["c.py"]),
        ("Tune c", ["c.py"]),
        ("Rename a", ["c.py"]),
    ]


def test_a_changed_cap_reads_the_history_afresh(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "x = 0\n"})
    commit(git, root, "Second", {"a.py": "x = 1\n"})
    assert index.sync(root, 1).commits == 1
    report = index.sync(root, 100)
    assert (report.mode, report.commits) == ("rebuilt", 2)


def test_trailers_are_kept_but_not_searched(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"a.py": "x = 0\n"})
    message = "Fix the cache\n\nSigned-off-by: Quentin Zuckerbrot <qz@example.invalid>"
    commit(git, root, message, {"a.py": "x = 1\n"})
    index.sync(root, 100)
    assert index.similar("zuckerbrot") == []
    assert index.similar("cach") == ["Fix the cache"]


def test_unusual_messages_and_paths_are_parsed(make_repo: MakeRepo, git: Git, index, tmp_path: Path):
    root = make_repo({"plain.py": "p = 1\n"})
    message = tmp_path / "message.txt"
    message.write_bytes("Odd \x1e separator\n\nBody with\x1e one more and ünïcode".encode())
    (root / "dir with space").mkdir()
    (root / "dir with space" / "naïve file.py").write_text("n = 1\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-F", str(message))
    index.sync(root, 100)
    assert index.stored()[0] == ("Odd \x1e separator", ["dir with space/naïve file.py"])
    assert index.similar("ünïcode") == ["Odd \x1e separator"]


def test_a_root_below_the_top_of_the_repository_sees_its_own_paths(make_repo: MakeRepo, git: Git, index):
    root = make_repo({"app/main.py": "m = 1\n", "other/x.py": "x = 1\n"})
    commit(git, root, "Change the app", {"app/main.py": "m = 2\n"})
    commit(git, root, "Change the other", {"other/x.py": "x = 2\n"})
    index.sync(root / "app", 100)
    assert index.stored() == [("Change the app", ["main.py"]), ("initial", ["main.py"])]


def test_no_history_outside_git_or_before_the_first_commit(plain_dir: Path, make_repo: MakeRepo, index):
    (plain_dir / "a.py").write_text("x = 1\n", encoding="utf-8")
    assert "history: none (not a git work tree)" in service.index_repo(plain_dir).summary()
    assert "history:" not in service.index_repo(plain_dir).summary()  # said once, not on every refresh
    assert service.index_status(plain_dir).history == "none (not a git work tree)"
    empty = make_repo({"a.py": "x = 1\n"}, name="empty", commit=False)
    report = index.sync(empty, 100)
    assert (report.mode, report.note) == ("none", "the repository has no commits yet")
    assert index.sync(empty, 0).note == "history_commits is 0"
    assert index.stored() == []


def test_head_now_and_status_read_head_from_git_files_as_git_says(
    make_repo: MakeRepo, git: Git, tmp_path: Path, git_calls
):
    """``head_now`` and ``status`` ran git for HEAD's commit every time
    (``status`` even when HEAD was where the history was read). Now git's
    files say it (``head_files.head_in_files``, as every search reads them), no
    process, and git's answer it is: after a commit, an amend, a detached
    checkout, packed refs, in a linked worktree and a folder of the work
    tree. Git answers what the files do not say."""
    root = make_repo({"app/a.py": "a = 1\n", "b.py": "b = 1\n"})
    other = tmp_path / "other"
    git(root, "worktree", "add", "-q", "-b", "other", str(other))

    def agree(where: Path) -> None:
        git_calls()
        now = gitlog.head_now(where)
        assert git_calls() == []
        assert now == git(where, "rev-parse", "HEAD").strip()
        service.index_repo(where)
        git_calls()
        history = service.index_status(where).history
        ran = git_calls()
        assert [args for args in ran if " ls-files " not in f" {args} "] == []  # but discovery's file list
        assert history.endswith(f" up to {now[:10]}")

    for where in (root, root / "app", other, other / "app"):
        agree(where)
    commit(git, root, "Second", {"b.py": "b = 2\n"})
    agree(root)
    git(root, "commit", "-q", "--amend", "-m", "Second, reworded")
    agree(root)
    commit(git, other, "On other", {"c.py": "c = 1\n"})
    agree(other)
    git(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/main").exists()
    agree(root)
    agree(other)
    git(root, "checkout", "-q", "--detach", "HEAD~1")
    agree(root)
    unborn = make_repo({"a.py": "x = 1\n"}, name="unborn", commit=False)
    for where in (unborn, tmp_path):  # no commit yet; not a work tree
        git_calls()
        assert gitlog.head_now(where) == ""
        assert git_calls() != []  # the files do not say: git does


def test_a_checkout_git_refuses_for_its_owner_names_safe_directory(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
):
    """A service user reading a developer's checkout: git refuses it ("dubious
    ownership"); the history line says so and names the setting that trusts
    it, rather than "not a git work tree"."""
    root = make_repo({"a.py": "x = 1\n"})
    monkeypatch.setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")  # git's own switch for this case
    trust = f"git config --global --add safe.directory {root}"
    why = f"git refuses the repository at {root}, which another user owns: to trust it, run `{trust}`"
    assert f"history: none ({why})" in service.index_repo(root).summary().splitlines()
    assert service.index_status(root).history == f"none ({why})"


def test_parse_log_reads_status_pairs_and_renames():
    out = (
        b"\x1e" + b"b" * 40 + b"\x001700000100\x00Newer\x00\x00\x00\nR087\x00x.py\x00y.py\x00M\x00z.py\x00"
        b"\x1e" + b"a" * 40 + b"\x001700000000\x00Older\x00body\n\x00\x00\nA\x00x.py\x00"
    )
    read = gitlog.parse_log(out, 50)
    assert [(c.subject, c.body, c.paths, c.time) for c in read.commits] == [
        ("Newer", "", ("y.py", "z.py"), 1_700_000_100),
        ("Older", "body", ("y.py",), 1_700_000_000),
    ]
    assert read.renames == {"x.py": "y.py"}


def test_indexing_reads_the_history_and_keeps_it_current(make_repo: MakeRepo, git: Git, tmp_path: Path):
    root = make_repo({"a.py": "def alpha():\n    return 1\n"})
    commit(git, root, "Tune alpha", {"a.py": "def alpha():\n    return 2\n"})
    assert "history: 2 commits up to" in service.index_repo(root).summary()
    assert "history:" not in service.index_repo(root).summary()  # unchanged: not repeated
    commit(git, root, "Another change", {"b.py": "y = 1\n"})
    assert "history: 3 commits up to" in service.index_repo(root).summary()
    head = git(root, "rev-parse", "HEAD").strip()
    assert f"\nhistory: 3 commits up to {head[:10]}\n" in service.index_status(root).render()
    rebuilt = service.index_repo(root, rebuild=True).summary()
    assert "history: 3 commits up to" in rebuilt
    git(root, "checkout", "-q", "-b", "side", "HEAD~2")
    said = service.index_status(root).history  # HEAD moved since: status says so
    assert (
        said == f"3 commits up to {head[:10]}, which HEAD no longer holds: `repolens index` reads it afresh"
    )
    assert "(read afresh: the branch changed or was rewritten)" in service.index_repo(root).summary()
    commit(git, root, "On the side", {"c.py": "z = 1\n"})
    said = service.index_status(root).history
    assert said.endswith(", behind HEAD by 1 commit: `repolens index` reads it")
