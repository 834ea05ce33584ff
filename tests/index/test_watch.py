"""The file watcher: changes on disk reach the index by themselves."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import run_git, run_repolens, wait_for
from repolens import service
from repolens.index.build import build_index
from repolens.index.watch import WatchEvent, start_watcher
from repolens.settings import load_settings
from repolens.store import open_store
from repolens.store.handles import readers


def _indexed_paths(root: Path) -> set[str]:
    reader = open_store(root).open_reader()
    try:
        return set(reader.paths())
    finally:
        reader.close()


@pytest.fixture
def watched(sample_repo: Path) -> Iterator[tuple[Path, list[WatchEvent]]]:
    events: list[WatchEvent] = []
    lock = threading.Lock()

    def record(event: WatchEvent) -> None:
        with lock:
            events.append(event)

    thread, stop = start_watcher(sample_repo, on_event=record)
    wait_for(lambda: bool(events), "the first refresh")
    yield sample_repo, events
    stop.set()
    thread.join(timeout=10)
    readers.clear()


def test_a_saved_file_becomes_searchable(watched):
    root, _ = watched
    (root / "src/web/fresh.py").write_text("def freshly_saved_handler():\n    return 1\n")
    wait_for(lambda: "src/web/fresh.py" in _indexed_paths(root), "the new file to be indexed")
    assert "freshly_saved_handler" in service.search_code("freshly_saved_handler", root).text


def test_a_directory_created_with_files_is_rescanned(watched):
    root, _ = watched
    folder = root / "pkg/deep/er"
    folder.mkdir(parents=True)
    for i in range(5):
        (folder / f"m{i}.py").write_text(f"def made_right_away_{i}():\n    pass\n")
    wait_for(lambda: {f"pkg/deep/er/m{i}.py" for i in range(5)} <= _indexed_paths(root), "all five files")


def test_ignore_file_changes_re_evaluate_what_is_indexed(watched):
    root, _ = watched
    assert "docs/guide.md" in _indexed_paths(root)
    (root / ".repolensignore").write_text("docs/\n")
    wait_for(lambda: "docs/guide.md" not in _indexed_paths(root), "docs/ to leave the index")


def settle(root: Path, events: list[WatchEvent], name: str = "zz_settled.py") -> int:
    """Save one more file and wait for its refresh: the watcher gets events in
    the order they happened, so every event before the save has been
    refreshed by then. The index of that refresh in ``events``."""
    (root / name).write_text("def settled():\n    return 1\n")
    wait_for(lambda: any(e.paths and name in e.paths for e in events), f"the refresh of {name}")
    return next(i for i, e in enumerate(events) if e.paths and name in e.paths)


def test_our_own_writes_do_not_trigger_refreshes(watched):
    root, events = watched

    def refresh_count() -> int:
        return sum(e.compacted is None for e in events)

    (root / "README.md").write_text("# Changed\n")
    wait_for(lambda: refresh_count() >= 2, "the refresh")
    # The refresh and then the compaction (once saves pause) write the index.
    wait_for(lambda: any(e.compacted for e in events), "the compaction")
    first = len(events)
    last = settle(root, events)
    # Neither one's writes started a refresh, nor joined the next save's.
    assert [e.compacted is None for e in events[first:last]] == [False] * (last - first)
    assert events[last].paths == {"zz_settled.py"}


def test_branch_switch_is_one_consistent_refresh(make_repo, tmp_path: Path):
    root = make_repo({f"pkg/m{i:03d}.py": f"def alpha_{i}():\n    return {i}\n" for i in range(300)})
    run_git(root, "checkout", "-q", "-b", "other")
    for i in range(300):
        (root / f"pkg/m{i:03d}.py").write_text(f"def beta_{i}():\n    return {i}\n")
    for i in range(300, 320):
        (root / f"pkg/m{i:03d}.py").write_text(f"def beta_{i}():\n    return {i}\n")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "other")
    run_git(root, "checkout", "-q", "main")
    build_index(root)
    events: list[WatchEvent] = []
    thread, stop = start_watcher(root, on_event=events.append)
    try:
        wait_for(lambda: bool(events), "the first refresh")
        run_git(root, "checkout", "-q", "other")
        wait_for(lambda: len(_indexed_paths(root)) == 320, "the other branch's files")
        last = settle(root, events)  # every event of the checkout refreshed by now
        refreshes = [e for e in events[1:last] if e.report is not None]
        assert sum(e.report.added + e.report.changed for e in refreshes) == 320
        assert len(refreshes) <= 3, "thousands of events must not mean thousands of refreshes"
        assert not [e for e in events if e.error]
    finally:
        stop.set()
        thread.join(timeout=10)
    assert "beta_7" in service.search_code("beta_7", root).text
    readers.clear()


def test_a_commit_that_changes_no_file_reaches_the_history(watched):
    """A commit (or a checkout) moves a ref, not a file of the tree: the
    watcher refreshes on it, so the history holds the commit and the index
    the branch it is on."""
    root, events = watched
    run_git(root, "commit", "-q", "--allow-empty", "-m", "Tune the capybara retries")
    wait_for(
        lambda: service.search_history("capybara retries", root).entries != [], "the commit in the history"
    )
    run_git(root, "checkout", "-q", "-b", "feature-x")
    wait_for(lambda: service.index_status(root).branch == "feature-x", "the branch recorded")
    assert not [e for e in events if e.error]


@pytest.mark.parametrize("where", ["linked worktree", "folder of the repository"])
def test_a_commit_reaches_the_history_where_git_keeps_its_refs_outside_the_root(
    sample_repo: Path, tmp_path: Path, where: str
):
    """A linked worktree's HEAD and refs, and those of a root below the top
    of its repository, are not under the root: the watcher watches them
    there, so a commit of a file already indexed reaches the history."""
    if where == "linked worktree":
        root = tmp_path / "feature"
        run_git(sample_repo, "worktree", "add", "-q", "-b", "feature", str(root))
    else:
        root = sample_repo / "src"
    events: list[WatchEvent] = []
    thread, stop = start_watcher(root, on_event=events.append)
    try:
        wait_for(lambda: bool(events), "the first refresh")
        (root / "retries.py").write_text("def capybara():\n    return 3\n")
        wait_for(lambda: "retries.py" in _indexed_paths(root), "the saved file indexed")
        run_git(root, "add", "retries.py")
        run_git(root, "commit", "-q", "-m", "Tune the capybara retries")
        wait_for(
            lambda: service.search_history("capybara retries", root).entries != [],
            "the commit in the history",
        )
        assert not [e for e in events if e.error]
    finally:
        stop.set()
        thread.join(timeout=10)
        readers.clear()


def _coverage(root: Path) -> tuple[int, int]:
    """(chunks with a vector, chunks) of the published index of ``root``."""
    reader = open_store(root).open_reader()
    try:
        return reader.vector_count(), reader.counts()["chunks"]
    finally:
        reader.close()


def _embedded(root: Path) -> bool:
    done, chunks = _coverage(root)
    return done == chunks


@pytest.mark.parametrize("vectors_from", ["the setting", "the index"])
def test_repolens_watch_keeps_the_vectors_of_an_index_that_has_them(
    make_repo, tmp_path: Path, monkeypatch, vectors_from: str
):
    """`repolens watch` refreshed the lexical index only: with `vectors =
    true` (or an index embedded once with --vectors) every chunk it changed
    stayed without a vector, which `serve` and a plain `repolens index` embed."""
    import subprocess
    import sys

    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    files = {f"m{i}.py": f"def handler_{i}():\n    return {i}\n" for i in range(5)}
    if vectors_from == "the setting":
        files[".repolens.toml"] = "vectors = true\n"
    root = make_repo(files)
    service.index_repo(root, vectors=True)
    assert _embedded(root)
    log = tmp_path / "watch.log"
    with log.open("w") as out:
        watcher = subprocess.Popen([sys.executable, "-m", "repolens", "watch"], cwd=root, stdout=out)
    try:
        wait_for(lambda: "file events" in log.read_text(), "the watcher's first look at the tree")
        (root / "m1.py").write_text("def handler_1():\n    return 'changed'\n\n\ndef helper():\n    pass\n")
        (root / "m_new.py").write_text("def brand_new_handler():\n    return 1\n")
        wait_for(lambda: "m_new.py" in _indexed_paths(root), "the saves refreshed")
        wait_for(lambda: _embedded(root), "the changed chunks embedded")
    finally:
        watcher.terminate()
        watcher.wait(10)
    readers.clear()


def test_repolens_watch_says_a_bad_setting_once(make_repo):
    """The embedder beside the watcher reads the settings too: a bad one is
    the one line of the watcher, not also a thread's traceback."""
    root = make_repo({"a.py": "x = 1\n", ".repolens.toml": "bogus = 1\n"})
    out = run_repolens("watch", cwd=root)
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: {root}/.repolens.toml: unknown setting 'bogus'; known: ")
    assert out.stderr.count("\n") == 1, out.stderr


def test_serving_embeds_in_the_background_when_vectors_are_on(make_repo, monkeypatch):
    from repolens.index.watch import start_background

    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    monkeypatch.setenv("REPOLENS_VECTORS", "1")
    root = make_repo({f"m{i}.py": f"def handler_{i}():\n    return {i}\n" for i in range(50)})
    build_index(root, settings=load_settings(root, {"vectors": False}))  # lexical only, as after a crash
    assert _coverage(root)[0] == 0
    stop = start_background({"app": root})
    try:
        wait_for(lambda: _embedded(root), "every chunk to get a vector")
        (root / "m_new.py").write_text("def brand_new_handler():\n    return 1\n")
        wait_for(lambda: "m_new.py" in _indexed_paths(root) and _embedded(root), "the new file embedded")

    finally:
        stop.set()
        time.sleep(0.5)
    readers.clear()


def test_a_burst_of_saves_is_refreshed_through_those_paths_alone(tmp_path: Path):
    import watchfiles

    from repolens.index.watch import SCOPED_MAX_PATHS, changed_paths

    def ev(*rels: str) -> set:
        return {(watchfiles.Change.modified, str(tmp_path / r)) for r in rels}

    assert changed_paths(tmp_path, ev("src/a.py", "b.md")) == {"src/a.py", "b.md"}
    for needs_full_scan in (
        ".gitignore",
        "sub/.gitignore",
        ".repolensignore",
        ".repolens.toml",
        ".git/info/exclude",
    ):
        assert changed_paths(tmp_path, ev("src/a.py", needs_full_scan)) is None
    assert changed_paths(tmp_path, ev(*(f"f{i}.py" for i in range(SCOPED_MAX_PATHS + 1)))) is None
    # a manifest beside a nested build/ decides whether build/ is output or source: the tree is
    # looked at again (the watcher kept tools/build/out.js once tools/package.json appeared)
    (tmp_path / "tools" / "build").mkdir(parents=True)
    (tmp_path / "lib").mkdir()
    assert changed_paths(tmp_path, ev("tools/package.json")) is None
    assert changed_paths(tmp_path, ev("lib/package.json", "package.json")) == {
        "lib/package.json",
        "package.json",
    }


@pytest.mark.parametrize("log_name", ["watch.log", "nohup.out"])
def test_a_watcher_writing_its_output_under_the_root_settles(sample_repo: Path, log_name: str):
    """``repolens watch > watch.log`` (or nohup's nohup.out) at the root:
    each line it wrote was a file event, whose refresh wrote another line,
    for ever (~10 lines a second, 10% of a core)."""
    import subprocess
    import sys

    build_index(sample_repo)
    log = sample_repo / log_name
    with log.open("w") as out:
        watcher = subprocess.Popen(
            [sys.executable, "-m", "repolens", "watch"], cwd=sample_repo, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        time.sleep(2)  # its first look at the tree
        (sample_repo / "src" / "fresh.py").write_text("def fresh():\n    pass\n")
        wait_for(lambda: "1 new" in log.read_text(), "the refresh of the saved file")
        time.sleep(3)
        size = log.stat().st_size
        time.sleep(3)
        assert log.stat().st_size == size, log.read_text()[-400:]
    finally:
        watcher.terminate()
        watcher.wait(10)
