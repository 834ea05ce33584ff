"""The ``repolens`` command, run as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from conftest import as_from_a_shell, write_tree_files
from repolens import __version__
from repolens.server.tools import build_server
from repolens.validate import shown_path


def run(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("REPOLENS_INDEX_DIR", None)
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "repolens", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def repo(sample_repo: Path) -> Path:
    return sample_repo


def test_version():
    out = run("--version")
    assert out.returncode == 0
    assert __version__ in out.stdout


def test_index_reports_files_and_skips(repo: Path):
    write_tree_files(repo, {"node_modules/x/index.js": "module.exports = 1\n", ".env": "SECRET=1\n"})
    out = run("index", str(repo))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("indexed 5 files")
    assert "skipped:" in out.stdout
    assert (repo / ".repolens" / ".gitignore").read_text() == "*\n"


def test_search_indexes_on_first_use_and_answers(repo: Path):
    out = run("search", "where do sessions expire?", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    assert "indexed 5 files" in out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("src/auth/session.py:")
    assert "expired" in out.stdout
    again = run("search", "where do sessions expire?", "--root", str(repo))
    assert again.stderr == ""
    assert again.stdout == out.stdout


def test_search_json(repo: Path):
    out = run("search", "handleSubmit", "--root", str(repo), "--json", "--top-k", "3")
    data = json.loads(out.stdout)
    paths = [h["path"] for h in data["hits"]]
    assert set(paths) >= {"src/web/forms.py", "web/app.js"}
    hit = data["hits"][0]
    assert {"path", "start_line", "end_line", "score", "text"} <= set(hit)


def test_search_respects_budget(repo: Path):
    out = run("search", "session store save load expire", "--root", str(repo), "--max-chars", "300")
    assert out.returncode == 0
    assert len(out.stdout.rstrip("\n")) <= 300


def test_read_snippet(repo: Path):
    out = run("read", "src/web/forms.py", "4", "5", "--root", str(repo))
    assert out.returncode == 0
    assert out.stdout.splitlines() == [
        "src/web/forms.py:4-5 (of 15 lines)",
        "4: def handle_submit(form, store: SessionStore):",
        '5:     """Validate a submitted form and remember it in the session."""',
    ]


def test_read_numbers_lines_as_the_index_does(tmp_path: Path):
    """A form feed, U+2028, \\x1c, \\x85 or a lone CR in a line is part of it
    (git, grep and the index split at \\n only): a symbol's lines read back
    are its lines, and the file has as many lines as the index says."""
    text = (
        'import os\n\x0c\nA = "a\u2028b"\nB = "c\x1cd\x85e"\nC = 1\rD = 2\n\n\n'
        "def after_ff():\n    return 1\n"
    )
    (tmp_path / "ff.py").write_text(text, encoding="utf-8", newline="")
    assert run("index", str(tmp_path)).returncode == 0
    where = run("symbols", "after_ff", "--root", str(tmp_path)).stdout
    assert "ff.py:8-9" in where
    out = run("read", "ff.py", "8", "9", "--root", str(tmp_path))
    assert out.stdout.splitlines() == ["ff.py:8-9 (of 9 lines)", "8: def after_ff():", "9:     return 1"]


def test_a_first_line_over_the_budget_names_the_budget_that_shows_it(tmp_path: Path):
    """Cut at the budget, a read's first line cannot be read whole by the
    same read again: the marker names the budget that shows it."""
    (tmp_path / "long.py").write_text('x = "' + "a" * 20_000 + '"\n', encoding="utf-8")
    cut = run("read", "long.py", "1", "1", "--root", str(tmp_path)).stdout
    marker = cut.rstrip("\n").splitlines()[-1]
    assert marker.startswith("... (line 1 is 20006 chars; read_snippet long.py 1 1 with max_chars=")
    budget = marker.split("max_chars=")[1].split()[0]
    whole = run("read", "long.py", "1", "1", "--max-chars", budget, "--root", str(tmp_path)).stdout
    assert whole.splitlines()[1] == "1: " + (tmp_path / "long.py").read_text().rstrip("\n")


def test_read_takes_the_lines_as_a_reply_cites_them(repo: Path):
    """``path:start-end`` as search, refs and impact print it; ``path:line`` and
    a compiler's ``path:line:column`` read that one line."""
    same = run("read", "src/web/forms.py", "4", "5", "--root", str(repo)).stdout
    assert run("read", "src/web/forms.py:4-5", "--root", str(repo)).stdout == same
    one = run("read", "src/web/forms.py:4:12", "--root", str(repo))
    assert one.stdout.splitlines() == ["src/web/forms.py:4-4 (of 15 lines)", same.splitlines()[1]]
    for args, said in (
        (["src/web/forms.py"], "no lines in 'src/web/forms.py': pass PATH START END, or PATH:START-END"),
        (["src/web/forms.py", "4"], "pass START and END, or the lines as PATH:START-END"),
    ):
        out = run("read", *args, "--root", str(repo))
        assert (out.returncode, out.stdout) == (2, "")
        assert said in out.stderr and "Traceback" not in out.stderr


def test_a_read_cut_at_its_most_lines_names_the_real_end(repo: Path):
    write_tree_files(repo, {"long.txt": "".join(f"line {n}\n" for n in range(1, 351))})
    out = run("read", "long.txt", "1", "400", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert (lines[0], lines[-2]) == ("long.txt:1-300 (of 350 lines)", "300: line 300")
    assert lines[-1] == "... (cut at 300 lines; use read_snippet long.txt 301 350 to continue)"


def _as_another_user(argv: list[str], folder: Path) -> list[str]:
    """``argv`` run by a user the permission bits hold: this one, unless it
    is root, which reads every file; then nobody, in a user namespace of its
    own (``unshare --user``), with the folders down to ``folder`` opened to it."""
    if os.geteuid() != 0:
        return argv
    probe = subprocess.run(["unshare", "--user", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("running as root, and no user namespace to read as another user")
    for parent in [folder, *folder.parents]:
        if parent.stat().st_mode & 0o005 != 0o005:
            parent.chmod(parent.stat().st_mode | 0o005)
    return ["unshare", "--user", *argv]


def test_a_file_the_user_cannot_read_is_one_line(repo: Path):
    (repo / "src/auth/session.py").chmod(0)
    argv = [sys.executable, "-m", "repolens", "read", "src/auth/session.py", "1", "5", "--root", str(repo)]
    out = subprocess.run(_as_another_user(argv, repo / "src"), capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == (
        "error: src/auth/session.py cannot be read (Permission denied): check the file's permissions, "
        "or run repolens as a user who may read it\n"
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "x", "--root", "/definitely/not/here"], "does not exist"),
        (["search", "   ", "--root", "."], "query is empty"),
        (["search", "x", "--top-k", "0", "--root", "."], "top_k must be between 1 and 50"),
        (["read", "../etc/passwd", "1", "2"], "contains '..'"),
        (["read", "/etc/passwd", "1", "2"], "outside the repository root"),
        (["read", "src/web/forms.py", "5", "1"], "end (1) must be >= start (5)"),
        (["search"], "Missing argument"),
        (
            ["search", "session", "--path", "src/aut"],
            "no indexed file is under 'src/aut'; the nearest indexed path is 'src/auth': "
            "pass a folder or file the index holds as --path",
        ),
        (["symbols", "save", "--path", "lib"], "no indexed file is under 'lib':"),
        (["focus", "save", "--path", "src/auth/sesion.py"], "nearest indexed path is 'src/auth/session.py'"),
        (["history", "--path", "gone.py"], "no indexed file is under 'gone.py'"),
        (["frobnicate"], "No such command"),
        (
            ["search", "x", "--files", "--json"],
            "--files and --json each choose the reply's form: pass one of them",
        ),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(repo: Path, args, needle):
    out = run(*args, cwd=repo)
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("error: ")
    assert needle in lines[0]
    assert "Traceback" not in out.stderr


def test_an_option_out_of_bounds_is_a_usage_error_whichever_command(repo: Path):
    """Exit 2 and the option's own words, for a setting given as an option
    too (``--max-file-bytes`` is the ``max_file_bytes`` setting)."""
    for args in (["search", "x", "--top-k", "0"], ["index", ".", "--max-file-bytes", "0"]):
        out = run(*args, cwd=repo)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.startswith("error: ") and "must be between 1 and" in out.stderr
        assert "argument:" not in out.stderr


def test_every_command_takes_a_path_as_a_shell_or_a_compiler_writes_it(repo: Path):
    """``./src``, ``src//web`` and an absolute path inside the root name the
    indexed ``src/...`` in every command that takes a path (search, symbols,
    refs and impact targets, history), as read always did; an absolute path
    elsewhere is refused, quoted as given."""
    index = run("index", str(repo))
    assert index.returncode == 0, index.stderr
    forms = ("./src/web", "src//web/", str(repo / "src" / "web"))
    for where in forms:
        search = run("search", "handle submit", "--path", where, cwd=repo)
        assert search.returncode == 0 and "src/web/forms.py:" in search.stdout, (where, search.stderr)
        symbols = run("symbols", "handle_submit", "--path", where, cwd=repo)
        assert "src/web/forms.py:4-9 function handle_submit" in symbols.stdout, (where, symbols.stderr)
        place = f"{where.rstrip('/')}/forms.py:4"
        refs = run("refs", place, cwd=repo)
        assert refs.stdout.startswith("handle_submit (function, src/web/forms.py:4-9)"), (place, refs.stderr)
        impact = run("impact", place, cwd=repo)
        assert impact.stdout.startswith("impact of src/web/forms.py (handle_submit)"), (place, impact.stderr)
        history = run("history", "--path", f"{where.rstrip('/')}/forms.py", cwd=repo)
        assert history.returncode == 0 and "src/web/forms.py" in history.stdout, (where, history.stderr)
    for command, code in (
        (("search", "x"), 2),
        (("symbols", "x"), 2),
        (("focus", "x"), 1),
    ):  # focus: a PathError
        outside = run(*command, "--path", "/definitely/elsewhere", cwd=repo)
        assert outside.returncode == code, (command, outside.stderr)
        said = f"error: path '/definitely/elsewhere' is outside the repository root {repo}"
        assert outside.stderr.startswith(said), (command, outside.stderr)
    # a path leaving the repository is a usage error to symbols as to search (it said "no indexed file")
    for command in (("search", "x"), ("symbols", "x")):
        up = run(*command, "--path", "../src", cwd=repo)
        assert (up.returncode, up.stderr) == (
            2,
            "error: path filter '../src' must be a folder or file inside the repository\n",
        )


def test_zero_files_is_an_error_with_a_reason(make_repo):
    root = make_repo({".repolensignore": "*\n", "a.py": "x = 1\n"})
    out = run("index", str(root))
    assert out.returncode != 0
    assert "error: nothing to index" in out.stderr
    assert ".repolensignore" in out.stderr


def test_status_of_a_folder_with_nothing_to_index_says_why_as_index_would(make_repo, tmp_path: Path):
    """`status` said "no index: run repolens index", and only that command
    then said the folder cannot be indexed; a folder that can still gets the
    plain "no index"."""
    ignored = make_repo({".repolensignore": "*\n", "a.py": "x = 1\n"})
    status, index = run("status", "--root", str(ignored)), run("index", str(ignored))
    assert status.returncode == index.returncode == 1
    assert status.stderr == index.stderr and status.stderr.startswith(
        f"error: nothing to index in {ignored}: "
    )
    (tmp_path / "empty").mkdir()
    empty = run("status", "--root", str(tmp_path / "empty"))
    assert (empty.returncode, empty.stderr) == (
        1,
        f"error: nothing to index in {tmp_path / 'empty'}: the directory is empty\n",
    )
    indexable = make_repo({"a.py": "x = 1\n"}, name="indexable")
    missing = run("status", "--root", str(indexable))
    assert missing.returncode == 1 and missing.stderr.startswith(f"error: no index for {indexable}: run ")


def test_index_dir_option_and_env(repo: Path, tmp_path: Path):
    elsewhere = tmp_path / "idx"
    assert run("index", str(repo), "--index-dir", str(elsewhere)).returncode == 0
    assert (elsewhere / "current").is_symlink()
    assert not (repo / ".repolens").exists()
    shared = tmp_path / "shared-indexes"
    out = run("search", "parse_url", "--root", str(repo), env={"REPOLENS_INDEX_DIR": str(shared)})
    assert out.returncode == 0, out.stderr
    assert any(shared.iterdir())


def test_a_cpp_header_named_h_is_indexed_as_cpp(make_repo):
    """A ``.h`` file was indexed as C whatever it held: a C++ header's
    methods were no symbols and ``--lang cpp`` left it out."""
    repo = make_repo(
        {
            "include/widget.h": (
                "#pragma once\nnamespace app {\nstruct Widget final {\n"
                "  void draw() { paint_widget(); }\n};\n}  // namespace app\n"
            ),
            "include/point.h": "#pragma once\nstruct point { int x; };\nint paint_point(struct point *p);\n",
            "src/point.c": '#include "point.h"\nint paint_point(struct point *p) { return p->x; }\n',
        }
    )
    assert run("index", str(repo)).returncode == 0
    found = run("symbols", "Widget.draw", "--root", str(repo))
    assert found.returncode == 0, found.stderr
    assert "include/widget.h:4-4 method app::Widget::draw [cpp, qualified]" in found.stdout

    def hits(lang: str) -> set[str]:
        out = run("search", "paint", "--root", str(repo), "--lang", lang, "--json")
        assert out.returncode == 0, out.stderr
        return {h["path"] for h in json.loads(out.stdout)["hits"]}

    assert hits("cpp") == {"include/widget.h"}
    assert hits("c") == {"include/point.h", "src/point.c"}


def test_symbols_focus_and_chunk_commands(repo: Path):
    out = run("symbols", "handle_submit", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "2 symbols match 'handle_submit':"
    assert lines[1].startswith("src/web/forms.py:4-9 function handle_submit [python, exact]")

    focus = run("focus", "email is required", "--root", str(repo))
    assert focus.returncode == 0, focus.stderr
    head = focus.stdout.splitlines()[0]
    assert head.startswith("src/web/forms.py:4-9 function handle_submit (score ")
    assert "def handle_submit(form, store: SessionStore):" in focus.stdout
    assert "return True" in focus.stdout  # the whole function, not a window

    data = json.loads(run("search", "handle_submit", "--root", str(repo), "--json").stdout)
    chunk_id = data["hits"][0]["chunk_ids"][0]
    chunk = run("chunk", chunk_id, "--root", str(repo))
    assert chunk.returncode == 0, chunk.stderr
    assert "def handle_submit" in chunk.stdout
    missing = run("chunk", "0123456789abcdef", "--root", str(repo))
    assert missing.returncode == 1 and "no chunk with id" in missing.stderr


def test_search_files_mode_and_query_id(repo: Path):
    out = run("search", "session expire", "--root", str(repo), "--files")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("1. src/auth/session.py (score ")
    query_id = out.stdout.strip().splitlines()[-1].split()[-1]
    again = run("search", "--query-id", query_id, "--root", str(repo))
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("src/auth/session.py:")


def test_test_command_runs_an_allow_listed_runner_and_keeps_failures(tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_calc.py").write_text(
        "def test_ok():\n    assert 1 + 1 == 2\n\n\ndef test_bad():\n    assert 2 * 2 == 5, 'math broke'\n"
    )
    suite_python = {"REPOLENS_TEST_PYTHON": sys.executable}  # not whichever pytest is on PATH
    out = run("test", "--root", str(project), "pytest", env=suite_python)
    assert out.returncode == 1
    assert out.stdout.startswith("$ ") and "->  exit 1 in " in out.stdout.splitlines()[0]
    assert "AssertionError: math broke" in out.stdout
    assert "test_ok" not in out.stdout
    refused = run("test", "--root", str(project), "pytest", "$(touch /tmp/pwned)")
    assert refused.returncode == 2 and refused.stderr.startswith("error: argument ")


def test_language_and_kind_filters_take_aliases_and_refuse_unknown_names(repo: Path):
    refused = run("search", "x", "--lang", "klingon", "--root", str(repo))
    assert refused.returncode == 2 and not (repo / ".repolens").exists(), "refused before indexing"
    by_alias = run("search", "handle submit", "--root", str(repo), "--lang", "py", "--json")
    assert by_alias.returncode == 0, by_alias.stderr
    paths = [h["path"] for h in json.loads(by_alias.stdout)["hits"]]
    assert paths and all(p.endswith(".py") for p in paths)
    functions = run("search", "handle submit", "--root", str(repo), "--kind", "func", "--json")
    assert functions.returncode == 0, functions.stderr
    assert json.loads(functions.stdout)["hits"], "func is function: the filter matches"
    symbols = run("symbols", "handle_submit", "--root", str(repo), "--kind", "def", "--lang", "py")
    head = symbols.stdout.splitlines()[0]
    assert head == "1 symbol match 'handle_submit' (kind=function, language=python):"
    for args, what in [
        (["search", "x", "--lang", "klingon"], "language 'klingon'"),
        (["search", "x", "--kind", "spell"], "kind 'spell'"),
        (["symbols", "x", "--lang", "klingon"], "language 'klingon'"),
    ]:
        out = run(*args, "--root", str(repo))
        assert out.returncode == 2
        line = out.stderr.strip()
        assert line.startswith(f"error: unknown {what}: use one of "), out.stderr
        assert "\n" not in line
    assert "python," in out.stderr and "(or py, " in out.stderr
    # a blank filter (a variable that expanded to nothing) filtered nothing, silently
    for args, what in [
        (["search", "x", "--lang", ""], "language"),
        (["search", "x", "--kind", "  "], "kind"),
        (["symbols", "x", "--kind="], "kind"),
        (["symbols", "x", "--lang", " "], "language"),
    ]:
        out = run(*args, "--root", str(repo))
        assert out.returncode == 2 and out.stdout == "", out.stderr
        line = out.stderr.strip()
        assert line.startswith(f"error: {what} is empty: use one of "), out.stderr
        assert line.endswith(f", or leave it out for every {what}") and "\n" not in line


def test_arguments_and_environment_that_are_not_utf8_are_refused_in_one_line(repo: Path):
    # Python hands the bytes `url_for \xff\xfe` to a program as lone surrogates; so do we here.
    out = run("search", "url_for \udcff\udcfe", "--root", str(repo))
    assert out.returncode == 2
    assert (
        out.stderr
        == "error: command-line argument is not valid UTF-8 ('url_for \\xff\\xfe'): pass UTF-8 text\n"
    )
    assert not (repo / ".repolens").exists(), "refused before anything was indexed or remembered"
    for name, value in [("REPOLENS_TOP_K", "\udcff"), ("REPOLENS_INDEX_DIR", "/tmp/idx\udce9")]:
        out = run("search", "url_for", "--root", str(repo), env={name: value})
        assert out.returncode == 1
        shown = value.replace("\udcff", "\\xff").replace("\udce9", "\\xe9")
        assert out.stderr == (
            f"error: environment variable {name} is not valid UTF-8 ('{shown}'): set {name} to UTF-8 text\n"
        )


def test_bare_repolens_prints_the_help_plainly():
    out = run()
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("Usage: repolens [OPTIONS] COMMAND [ARGS]...\n")
    assert "  search " in out.stdout


def test_test_command_says_repolens_options_go_before_the_runner(tmp_path: Path):
    out = run("test", "pytest", "--root", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == (
        "error: --root belongs to repolens, not to pytest: repolens options go before RUNNER, "
        "as in `repolens test --root ... pytest [ARGS]` (see `repolens test --help`)\n"
    )
    bare = run("test", cwd=tmp_path)
    assert bare.returncode == 2
    assert bare.stderr == (
        "error: Missing argument 'RUNNER': name one of the runners listed above "
        "(see `repolens test --help`)\n"
    )


def test_query_id_with_a_question_or_filters_is_refused(repo: Path):
    first = run("search", "session expire", "--root", str(repo))
    query_id = first.stdout.strip().splitlines()[-1].split()[-1]
    out = run("search", "other question", "--query-id", query_id, "--lang", "go", "--root", str(repo))
    assert out.returncode == 2
    assert out.stderr == (
        "error: a remembered search is shown with its own question and filters: pass --query-id alone "
        "(without QUERY, --lang), or leave --query-id out to search anew\n"
    )


def test_a_missing_root_is_named_as_the_command_spells_it(tmp_path: Path):
    missing = tmp_path / "nope"
    for args, spelled in [
        (["index", str(missing)], "ROOT"),
        (["search", "x", "--root", str(missing)], "--root"),
    ]:
        out = run(*args)
        assert out.returncode == 1
        assert (
            out.stderr == f"error: repository root {shown_path(str(missing))} does not exist: "
            f"pass an existing directory as {spelled}\n"
        )


def test_index_and_watch_take_the_root_as_root_or_as_the_option(repo: Path, tmp_path: Path):
    by_option = run("index", "--root", str(repo))
    assert by_option.returncode == 0, by_option.stderr
    assert by_option.stdout.startswith("indexed 5 files") and (repo / ".repolens").is_dir()
    same_folder = run("index", str(repo), "--root", f"{repo}/src/..")
    assert same_folder.returncode == 0 and same_folder.stdout.startswith("refreshed "), same_folder.stderr
    two = run("index", str(repo), "--root", str(tmp_path))
    assert (two.returncode, two.stdout) == (2, "")
    assert two.stderr == (
        f"error: ROOT {str(repo)!r} and --root {str(tmp_path)!r} name different folders: "
        "give the repository root once\n"
    )
    missing = run("index", "--root", str(tmp_path / "nope"))
    assert missing.stderr.endswith("pass an existing directory as --root\n")

    assert run("watch", str(repo), "--root", str(tmp_path)).stderr == two.stderr
    watcher = subprocess.Popen(
        [sys.executable, "-m", "repolens", "watch", "--root", str(repo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_shell,
    )
    try:
        first = watcher.stdout.readline()  # the refresh it makes on start
    finally:
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=60)
    assert first.startswith("watch: ") and "No such option" not in err, err


def test_test_list_names_only_runners_the_repository_can_use(tmp_path: Path):
    (tmp_path / "test_calc.py").write_text("def test_ok():\n    pass\n")
    out = run("test", "--list", "--root", str(tmp_path), env={"REPOLENS_TEST_PYTHON": sys.executable})
    assert out.returncode == 0, out.stderr
    assert [line.split(":")[0] for line in out.stdout.splitlines()] == ["pytest"]
    assert out.stdout.rstrip().endswith("(test_calc.py)")


def test_files_mode_lists_top_k_files_over_the_cli_and_mcp(repo: Path):
    async def tool_reply() -> str:
        async with Client(build_server(repo)) as client:
            args = {"query": "session", "mode": "files", "top_k": 2}
            return (await client.call_tool("search_code", args)).content[0].text

    out = run("search", "session", "--files", "-k", "2", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    listed = [line for line in out.stdout.splitlines() if line[:1].isdigit()]
    assert [line.split(". ")[0] for line in listed] == ["1", "2"]
    assert out.stdout == asyncio.run(tool_reply()) + "\n"


def test_read_takes_a_budget_and_prints_what_read_snippet_returns(repo: Path):
    async def tool_reply() -> str:
        async with Client(build_server(repo)) as client:
            args = {"path": "src/auth/session.py", "start": 1, "end": 24, "max_chars": 300}
            return (await client.call_tool("read_snippet", args)).content[0].text

    out = run("read", "src/auth/session.py", "1", "24", "--max-chars", "300", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    assert out.stdout == asyncio.run(tool_reply()) + "\n"
    assert len(out.stdout) <= 301 and "use read_snippet src/auth/session.py " in out.stdout
    small = run("read", "src/auth/session.py", "1", "24", "--max-chars", "100", "--root", str(repo))
    assert small.returncode == 2
    assert small.stderr == "error: max_chars must be between 200 and 1000000, got 100\n"


def test_the_languages_setting_narrows_the_index_and_an_unknown_name_is_one_line(repo: Path):
    bad = run("index", str(repo), env={"REPOLENS_LANGUAGES": "python,cobol"})
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith(
        "error: environment: languages: unknown language 'cobol': use one of asciidoc, "
    )
    assert bad.stderr.count("\n") == 1
    out = run("index", str(repo), env={"REPOLENS_LANGUAGES": "py"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("indexed 2 files") and "skipped: 3 not in languages" in out.stdout


NO_USER = "~repolens-no-such-user"
LONG_NAME = "x" * 300


def test_a_path_that_can_name_no_file_is_one_line_not_a_bug(repo: Path, tmp_path: Path):
    """A name over 255 bytes and an unknown user's home made the system raise
    errors that reached the user as "unexpected ... (a bug)", exit 70."""
    long_path = str(tmp_path / LONG_NAME)
    long_shown = f"{long_path[:80]!r}... ({len(long_path)} chars)"
    unknown = "starts with the home folder of user 'repolens-no-such-user', who is unknown here"
    too_long = "holds a name of 300 bytes; the limit is 255"
    cases = [
        (
            ["status", "--root", LONG_NAME],
            {},
            1,
            f"repository root {LONG_NAME[:80]!r}... (300 chars) {too_long}",
        ),
        (["status", "--root", NO_USER], {}, 1, f"repository root {NO_USER} {unknown}"),
        (
            ["search", "x", "--root", str(repo), "--index-dir", f"{NO_USER}/i"],
            {},
            2,
            f"index folder {NO_USER}/i {unknown}",
        ),
        (
            ["status", "--root", str(repo)],
            {"REPOLENS_INDEX_DIR": long_path},
            1,
            f"REPOLENS_INDEX_DIR {long_shown} {too_long}",
        ),
        (
            ["serve", "--config", f"{NO_USER}/k.toml"],
            {},
            1,
            f"--config: config file {NO_USER}/k.toml {unknown}",
        ),
        (
            ["serve", "--http", "--token-file", long_path, "--root", str(repo)],
            {},
            1,
            f"--token-file: token file {long_shown} {too_long}",
        ),
        (
            ["serve", "--query-log", f"{NO_USER}/q", "--root", str(repo)],
            {},
            1,
            f"--query-log {NO_USER}/q {unknown}",
        ),
    ]
    for args, env, code, problem in cases:
        out = run(*args, cwd=tmp_path, env=env)
        assert (out.returncode, out.stderr.count("\n")) == (code, 1), out.stderr
        assert out.stderr.startswith(f"error: {problem}"), out.stderr
        assert "unexpected" not in out.stderr
