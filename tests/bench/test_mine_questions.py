"""The training-question miner (bench.mine_questions, bench.mining) on real git repositories made here."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from bench.mine_questions import verify_commit_questions
from bench.mining.commits import Change, Commit, clean_message, commit_question, qualify, window_commits
from bench.mining.defs import brace_end, identifier_questions, run_ctags
from bench.mining.issues import MIN_ISSUE_WORDS, definitions, frames_to, issue_question, symptoms
from bench.mining.paths import RepoSpec
from conftest import Git, commit_files

SPEC = RepoSpec("owner/name", "python", ("python",))
APP = "".join(f"value_{i} = {i}\n" for i in range(1, 11))


def blobs_of(git: Git, repo: Path, commit: str) -> dict[str, str]:
    out = git(repo, "ls-tree", "-r", commit)
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def checkout_of(git: Git, repo: Path, commit: str, dest: Path) -> Path:
    git(repo, "worktree", "add", "-q", "--detach", str(dest), commit)
    return dest


def test_a_commit_is_asked_at_the_snapshot_with_the_lines_it_replaced(
    git: Git, git_repo: Path, tmp_path: Path
):
    snap = commit_files(
        git, git_repo, "initial", {"src/app.py": APP, "src/util.py": "def helper():\n    pass\n"}
    )
    lines = APP.splitlines(keepends=True)
    lines[2:4] = ["value_3 = 30\n", "value_4 = 40\n"]  # lines 3-4 replaced
    lines.insert(7, "value_7b = 7\n")  # inserted after line 7
    fix = commit_files(
        git,
        git_repo,
        "Make the parser keep the third and fourth values apart (#12)\n\nThey were merged before.\n\n"
        "Signed-off-by: A Person <a@example.org>\nFixes #12\n",
        {"src/app.py": "".join(lines)},
    )
    commit_files(
        git,
        git_repo,
        "Make the parser accept tabs as separators in every input line",
        {"src/app.py": "".join(lines) + "value_11 = 11\n"},
    )
    tree = checkout_of(git, git_repo, snap, tmp_path / "snapshot")
    verdicts = {
        c.sha: qualify(c, SPEC, blobs_of(git, git_repo, snap))
        for c in window_commits(git_repo / ".git", snap, "HEAD")
    }
    cand = verdicts.pop(fix)
    assert list(verdicts.values()) == ["gold file differs at the snapshot"]  # app.py changed since
    assert cand.query == "Make the parser keep the third and fourth values apart\n\nThey were merged before."
    gold = commit_question(cand, git_repo / ".git", tree)
    assert gold == {
        "gold_files": ["src/app.py"],
        "gold_ranges": [
            {"path": "src/app.py", "start_line": 3, "end_line": 4},
            {"path": "src/app.py", "start_line": 7, "end_line": 8},
        ],
    }
    question = {"id": f"commit:owner/name@{fix[:12]}", "set": "commits", "repo": "owner/name", "commit": snap}
    question |= {"gold_files": ["src/app.py"], "source": {"fix_commit": fix, "parent": snap}}
    assert verify_commit_questions([question], {"owner/name": git_repo / ".git"}) == []
    past_fix = {**question, "commit": git(git_repo, "rev-parse", "HEAD").strip()}
    assert verify_commit_questions([past_fix], {"owner/name": git_repo / ".git"}) == [
        f"owner/name@{fix[:12]}: the snapshot is not an ancestor of the fix's parent"
    ]


def change(path: str, status: str = "M") -> Change:
    return Change(status, "100644", "100644", "b" * 40, path)


MESSAGE = "Stop the parser from dropping the last value of every input"


@pytest.mark.parametrize(
    ("message", "changes", "reason"),
    [
        ("docs: explain how the parser drops values in the guide", [change("src/app.py")], "chore subject"),
        ("Bump the parser dependency from 1.2 to 1.3 for everyone", [change("src/app.py")], "chore subject"),
        (MESSAGE, [change("tests/test_app.py"), change("docs/app.md")], "no source file"),
        (MESSAGE, [change("src/app.py"), change("src/new.py", "A")], "adds or deletes a source file"),
        (MESSAGE, [change(f"src/m{i}.py") for i in range(4)], "too many source files"),
        (MESSAGE, [change("src/app.py"), change("src/native.c")], "changes code of another language"),
        (
            "Fix the parser (#3)\n\nSigned-off-by: A <a@b.org>",
            [change("src/app.py")],
            "message under 8 words",
        ),
        (MESSAGE + " in app.py", [change("src/app.py")], "message names a changed file"),
    ],
)
def test_commits_outside_the_rules_are_not_asked(message: str, changes: list[Change], reason: str):
    commit = Commit("c" * 40, ("p" * 40,), "2024-01-01T00:00:00+00:00", message, tuple(changes))
    assert qualify(commit, SPEC, None) == reason


def test_a_kept_commit_names_test_changes_and_other_folders_freely():
    changes = (change("src/app.py"), change("tests/test_app.py", "A"), change("examples/demo.py", "D"))
    got = qualify(Commit("c" * 40, ("p" * 40,), "", MESSAGE, changes), SPEC, None)
    assert not isinstance(got, str)
    assert got.gold_files == ("src/app.py",)


def test_cleaning_drops_trailers_references_and_github_urls():
    message = (
        "Fix the widget (#123)\n\nSee https://github.com/o/n/issues/9 for the report, and gh-4.\n"
        "Closes #7, #8\n\nCo-authored-by: B <b@example.org>\n"
    )
    assert clean_message(message) == "Fix the widget\n\nSee for the report, and."
    long = "word " * 400
    assert len(clean_message(long)) <= 1200


def test_braces_close_a_body_and_an_expression_body_has_none():
    text = "fn parse(s: &str) -> u32 {\n    let c = '}';\n    if s.is_empty() { 0 } else { 1 }\n}\n"
    text += "fun size(): Int = items.count { it.ok }\n"
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    assert brace_end(text, starts, 1) == 4
    assert brace_end(text, starts, 5) is None


@pytest.mark.skipif(shutil.which("ctags") is None, reason="universal-ctags is not installed")
def test_a_name_defined_once_and_used_in_two_other_files_is_asked(write_tree, tmp_path: Path):
    files = {
        "src/lib.py": "def parse_header_block(s):\n    return s\n\n\ndef rarely_called_helper():\n    ...\n",
        "src/a.py": "class DuplicatedName:\n    pass\n",
        "src/b.py": "class DuplicatedName:\n    pass\n",
        "src/use1.py": "from lib import parse_header_block, rarely_called_helper\nDuplicatedName\n",
        "src/use2.py": "parse_header_block('x')\nDuplicatedName\n",
        "docs/guide.md": "Call DuplicatedName.\n",
        "tests/test_lib.py": "def parse_header_block():\n    pass\n",  # tests aside: still defined once
    }
    write_tree(tmp_path, files)
    tags = run_ctags(tmp_path, [p for p in files if p.endswith(".py") and not p.startswith("tests/")])
    got = identifier_questions(tags, tmp_path, sorted(files), SPEC, set(), 10, random.Random(1))
    assert got == [
        {
            "gold_files": ["src/lib.py"],
            "gold_ranges": [{"path": "src/lib.py", "start_line": 1, "end_line": 1}],
            "gold_functions": [
                {"path": "src/lib.py", "name": "parse_header_block", "start_line": 1, "end_line": 2}
            ],
            "source": {"kind": "function", "files_mentioning": 4},
            "name": "parse_header_block",
        }
    ]


# -- issue-shaped questions (issue 37) ---------------------------------------------

PARSER = (
    "def parse_header(text):\n"
    '    """The header\'s fields."""\n'
    "    fields = text.split(':')\n"
    "    return fields\n"
    "\n"
    "\n"
    "def render(fields):\n"
    "    return ':'.join(fields)\n"
)


def test_symptoms_drop_the_fix_verb_and_the_sentences_about_the_change():
    message = (
        "Fix crash when the header is empty (#41)\n\n"
        "Parsing an empty header raised IndexError deep in the parser. "
        "This commit checks the length first. Use a guard instead of a try block.\n\n"
        "- check the length\n- add a test\n\n"
        "for more information, see https://pre-commit.ci\n"
    )
    assert symptoms(message) == (
        "Crash when the header is empty",
        "Parsing an empty header raised IndexError deep in the parser.",
    )


@pytest.mark.skipif(shutil.which("ctags") is None, reason="universal-ctags is not installed")
def test_a_fix_with_its_regression_test_is_asked_as_the_report_before_it(
    git: Git, git_repo: Path, tmp_path: Path
):
    snap = commit_files(git, git_repo, "initial", {"src/app.py": PARSER, "tests/test_app.py": "import app\n"})
    fixed = PARSER.replace(
        "    fields = text.split(':')\n",
        "    if not text:\n        raise ValueError('empty header')\n    fields = text.split(':')\n",
    )
    test = (
        "import pytest\n"
        "from app import parse_header\n"
        "\n"
        "\n"
        "def test_empty_header_is_refused():\n"
        '    """An empty header is an error, not an empty list."""\n'
        "    with pytest.raises(ValueError, match='empty header'):\n"
        "        parse_header('')\n"
    )
    commit_files(
        git,
        git_repo,
        "Fix parse_header accepting an empty header\n\nThe parser returned [''] for an empty header. "
        "This commit raises instead.",
        {"src/app.py": fixed, "tests/test_app.py": test},
    )
    tree = checkout_of(git, git_repo, snap, tmp_path / "snapshot")
    [commit] = list(window_commits(git_repo / ".git", snap, "HEAD"))
    cand = qualify(commit, SPEC, blobs_of(git, git_repo, snap), min_words=MIN_ISSUE_WORDS)
    assert not isinstance(cand, str)
    tags = run_ctags(tree, ["src/app.py"])
    asked = issue_question(cand, git_repo / ".git", SPEC, definitions(tags), TracebackAlways())
    assert asked["title"] == "parse_header accepting an empty header"
    assert asked["query"] == (
        "parse_header accepting an empty header\n\n"
        "The parser returned [''] for an empty header.\n\n"
        "An empty header is an error, not an empty list.\n\n"
        "To reproduce:\n\n"
        "```python\n"
        "with pytest.raises(ValueError, match='empty header'):\n"
        "    parse_header('')\n"
        "```\n\n"
        "This fails with:\n\n"
        "```\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        "    parse_header('')\n"
        '  File "src/app.py", line 2, in parse_header\n'
        "ValueError: empty header\n"
        "```"
    )
    assert asked["repro"] == {
        "test": "tests/test_app.py",
        "test_name": "test_empty_header_is_refused",
        "calls": ["parse_header"],
        "error": "ValueError",
        "frames": ["src/app.py:1:parse_header"],
    }
    # gold is the source's changed lines; the test the fix adds is not in the tree asked
    assert commit_question(cand, git_repo / ".git", tree)["gold_ranges"] == [
        {"path": "src/app.py", "start_line": 2, "end_line": 3}  # the two lines around the insertion
    ]
    assert "test_empty_header_is_refused" not in (tree / "tests/test_app.py").read_text()


class TracebackAlways(random.Random):
    """Draws that always pick the first layout and always add the traceback."""

    def random(self) -> float:
        return 0.0

    def choice(self, seq):  # type: ignore[override]
        return seq[0]


def test_a_commit_that_adds_no_test_is_no_issue(git: Git, git_repo: Path):
    snap = commit_files(git, git_repo, "initial", {"src/app.py": PARSER})
    commit_files(
        git, git_repo, "Make render join the header fields with colons", {"src/app.py": PARSER + "\n"}
    )
    [commit] = list(window_commits(git_repo / ".git", snap, "HEAD"))
    cand = qualify(commit, SPEC, blobs_of(git, git_repo, snap), min_words=MIN_ISSUE_WORDS)
    assert issue_question(cand, git_repo / ".git", SPEC, {}, random.Random(1)) == "adds no test"


@pytest.mark.skipif(shutil.which("ctags") is None, reason="universal-ctags is not installed")
def test_a_traceback_follows_the_calls_from_the_test_entry_to_the_changed_function(
    write_tree, tmp_path: Path
):
    files = {
        "src/app.py": (
            "def parse_header(text):\n    return Reader().read(text)\n\n\n"
            "class Reader:\n    def read(self, text):\n        return self._split(text)\n\n"
            "    def _split(self, text):\n        return text.split(':')\n"
        ),
        "src/other.py": "def unrelated():\n    return parse_header('a')\n",
    }
    write_tree(tmp_path, files)
    defs = definitions(run_ctags(tmp_path, sorted(files)))
    changed = [{"path": "src/app.py", "name": "Reader._split", "start_line": 9, "end_line": 10}]
    frames = frames_to(defs["parse_header"][0], changed, defs, tmp_path)
    assert [(t.name, t.line) for t in frames] == [("parse_header", 1), ("read", 6), ("_split", 9)]
    unreached = [{"path": "src/other.py", "name": "unrelated", "start_line": 1, "end_line": 2}]
    assert [t.name for t in frames_to(defs["parse_header"][0], unreached, defs, tmp_path)] == ["parse_header"]
