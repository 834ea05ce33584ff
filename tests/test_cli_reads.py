"""``search``, ``symbols``, ``read`` and ``index`` without click: the quick path takes
only argument lists it reads exactly as click does, prints what click's
path prints (errors included), and leaves everything else to click."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click._utils import UNSET

from repolens.cli import reads
from repolens.cli.commands import cli

# Runs one command by the path argv[2] names ("quick" or "click"), then
# writes to the file argv[1] whether click was imported.
PROBE = """
import sys
from repolens.cli import main
code = main(sys.argv[3:], quick=sys.argv[2] == "quick")
sys.stdout.flush()
with open(sys.argv[1], "w") as out:
    out.write(str("click" in sys.modules))
sys.exit(code)
"""


def _default(param: click.Parameter) -> object:
    """The value a command gets when the parameter is not given (click 8.3+
    marks an undeclared default with a sentinel)."""
    if param.default is not UNSET:
        return param.default
    return False if getattr(param, "is_flag", False) else () if param.multiple else None


def _kind(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and param.name == "store":
        assert param.expose_value is False and param.callback is not None
        return reads.STORE
    assert param.callback is None and param.envvar is None and param.nargs == 1
    if isinstance(param, click.Option) and param.is_flag:
        if param.secondary_opts:  # an on/off pair, None when neither is given
            assert _default(param) is None
            return reads.ON
        assert _default(param) is False
        return reads.FLAG
    if param.multiple:
        assert param.type is click.STRING
        return reads.MANY
    if isinstance(param.type, click.Path):
        t = param.type
        assert (t.file_okay, t.dir_okay, t.exists, t.readable, t.writable) == (
            False,
            True,
            False,
            True,
            False,
        )
        assert not (t.executable or t.resolve_path or t.allow_dash)
        return reads.DIR
    return {click.INT: reads.INT, click.FLOAT: reads.FLOAT, click.STRING: reads.STR}[param.type]


@pytest.mark.parametrize("name", sorted(reads.COMMANDS))
def test_the_tables_declare_what_the_click_commands_declare(name: str):
    command = cli.commands[name]
    _, arguments, options = reads.COMMANDS[name]
    declared_args = [p for p in command.params if isinstance(p, click.Argument)]
    assert [(p.name, _kind(p), _default(p)) for p in declared_args] == list(arguments)
    required = {"search": [False], "index": [False], "read": [True, False, False]}  # read: or PATH:START-END
    assert [p.required for p in declared_args] == required.get(name, [True] * len(declared_args))
    declared: dict[str, reads.Param] = {}
    first: dict[str, str] = {}
    for p in command.params:
        if isinstance(p, click.Option):
            assert p.name is not None
            first[p.name] = p.opts[0]
            for spelling in p.opts:
                declared[spelling] = (p.name, _kind(p), _default(p))
            for spelling in p.secondary_opts:
                declared[spelling] = (p.name, reads.OFF, _default(p))
    assert declared == options
    assert {n: s for s, (n, _, _) in reversed(options.items())} == first  # the spelling errors use


def _run(path: str, args: list[str], marker: Path) -> tuple[int, str, str, bool]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(marker), path, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr, marker.read_text() == "True"


WHERE = ["--root", "{root}", "--index-dir", "{index}"]
QUICK = {
    "search": ["search", "where do sessions expire", *WHERE],
    "search-options": [
        "search",
        "session",
        "--json",
        "-k",
        "2",
        "--max-chars=900",
        "--lang",
        "py",
        "--kind",
        "fn",
        "--path",
        "src",
        "--include",
        "*.py",
        "--include",
        "src/*",
        "--exclude",
        "web/*",
        *WHERE,
    ],
    "search-files-explain": ["search", *WHERE, "store session", "--files", "--explain"],
    "search-keyword-min-score": [
        "search",
        "session",
        "--keyword",
        "def load",
        "--keyword=_sessions",
        "--min-score",
        "0.5",
        *WHERE,
    ],
    "search-error-min-score": ["search", "session", "--min-score", "nan", *WHERE],
    "search-error-spelled": ["search", "session", "--root", "{root}/missing"],
    "search-error-bound": ["search", "session", "--top-k", "0", *WHERE],
    "search-error-language": ["search", "session", "--lang", "klingon", *WHERE],
    "search-error-query-id": ["search", "--query-id", "0123456789", *WHERE],
    "search-error-store": ["search", "session", "--root", "{root}", "--store", "mysql://x"],
    "symbols": ["symbols", "SessionStore", "--json", "--limit", "3", *WHERE],
    "symbols-error": ["symbols", "SessionStore", "--limit", "0", *WHERE],
    "read": ["read", "src/auth/session.py", "1", "10", "--max-chars", "300", "--root", "{root}"],
    "read-error-order": ["read", "src/auth/session.py", "5", "1", "--root", "{root}"],
    "read-error-outside": ["read", "../x.py", "1", "2", "--root", "{root}"],
    "read-error-missing": ["read", "nope.py", "1", "2", "--root", "{root}"],
    "read-cited": ["read", "src/auth/session.py:2-6", "--root", "{root}"],
    "read-cited-column": ["read", "src/auth/session.py:3:9", "--root", "{root}"],
    "read-error-no-lines": ["read", "src/auth/session.py", "--root", "{root}"],
    "read-error-one-line": ["read", "src/auth/session.py", "5", "--root", "{root}"],
    "index": ["index", "{root}", "--index-dir", "{fresh}", "--no-vectors", "--rebuild"],
    "index-options": ["index", "--max-file-bytes=2000", "--index-dir", "{fresh}", "{root}", "--no-vectors"],
    "index-error-root": ["index", "{root}/missing", "--index-dir", "{fresh}"],
    "index-error-bound": ["index", "{root}", "--index-dir", "{fresh}", "--max-file-bytes", "0"],
    "index-error-store": ["index", "{root}", "--store", "mysql://x", "--vectors"],
    "index-root-option": ["index", "--root", "{root}", "--index-dir", "{fresh}", "--no-vectors"],
    "index-error-root-option": ["index", "--root", "{root}/missing", "--index-dir", "{fresh}"],
    "index-error-two-roots": ["index", "{root}", "--root", "{root}/src", "--index-dir", "{fresh}"],
}

# What differs between two runs of the same command: an index's build time.
_SECONDS = re.compile(r"in \d+\.\d+s")


@pytest.mark.parametrize("case", sorted(QUICK))
def test_the_quick_path_prints_what_click_prints(
    indexed_sample: tuple[Path, Path], tmp_path: Path, case: str
):
    root, index_dir = indexed_sample
    args = [a.format(root=root, index=index_dir, fresh=tmp_path / "index") for a in QUICK[case]]
    code, out, err, click_loaded = _run("quick", args, tmp_path / "quick")
    assert not click_loaded  # the quick path ran
    if case.startswith("index"):  # the second run refreshes the first one's index
        shutil.rmtree(tmp_path / "index", ignore_errors=True)
    click_code, click_out, click_err, _ = _run("click", args, tmp_path / "click")
    assert (code, err) == (click_code, click_err)
    assert _SECONDS.sub("in 0s", out) == _SECONDS.sub("in 0s", click_out)
    assert (code != 0) == ("error" in case)
    assert ("indexed" in out) == (case in ("index", "index-options", "index-root-option"))


CLICKS = {
    "help": ["search", "--help"],
    "short-help": ["read", "-h"],
    "no-query": ["search"],
    "no-name": ["symbols"],
    "not-a-number": ["search", "x", "--top-k", "many"],
    "not-a-float": ["search", "x", "--min-score", "high"],
    "attached-short": ["search", "x", "-k5"],
    "short-with-equals": ["search", "x", "-k=5"],
    "empty-value": ["search", "x", "--top-k="],
    "flag-with-value": ["search", "x", "--json=1"],
    "value-missing": ["search", "x", "--path"],
    "option-like-value": ["search", "x", "--path", "-y"],
    "repeated": ["search", "x", "--top-k", "1", "--top-k", "2"],
    "repeated-flag": ["search", "x", "--json", "--json"],
    "unknown": ["symbols", "x", "--bogus"],
    "abbreviated": ["symbols", "x", "--lim", "3"],
    "double-dash": ["search", "--", "x"],
    "extra-argument": ["read", "a.py", "1", "2", "3"],
    "negative": ["read", "a.py", "-1", "2"],
    "not-an-int": ["read", "a.py", "one", "2"],
    "root-is-a-file": ["search", "x", "--root", "{root}/README.md"],
    "index-dir-is-a-file": ["symbols", "x", "--index-dir", "{root}/README.md"],
    "not-one-of-these": ["status", "."],
    "both-of-a-flag-pair": ["index", ".", "--vectors", "--no-vectors"],
    "flag-pair-with-value": ["index", ".", "--no-vectors=1"],
    "extra-root": ["index", ".", "."],
    "group-option-first": ["--version"],
    "nothing": [],
}


@pytest.mark.parametrize("case", sorted(CLICKS))
def test_whatever_the_quick_path_is_unsure_of_goes_to_click(indexed_sample: tuple[Path, Path], case: str):
    root, _ = indexed_sample
    assert reads.parse([a.format(root=root) for a in CLICKS[case]]) is None


def test_shell_completion_is_clicks(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("_REPOLENS_COMPLETE", "bash_complete")
    assert reads.parse(["read", "a.py", "1", "2"]) is None


def test_a_refused_argument_list_gets_clicks_own_message(indexed_sample: tuple[Path, Path], tmp_path: Path):
    code, out, err, click_loaded = _run("quick", ["search", "x", "--top-k", "many"], tmp_path / "m")
    assert click_loaded
    assert (code, out) == (2, "")
    assert err == (
        "error: Invalid value for '--top-k' / '-k': 'many' is not a valid integer."
        " (see `repolens search --help`)\n"
    )


def test_escape_codes_in_a_reply_are_removed_as_click_removes_them(tmp_path: Path):
    """click.echo strips ANSI codes for a stream that is not a terminal: the
    quick path hands such a reply to click.echo."""
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "colour.py").write_text('RED = "\x1b[31m"\nprint(RED + "alarm\x1b[0m")\n')
    args = ["read", "colour.py", "1", "2", "--root", str(tmp_path / "repo")]
    code, out, err, _ = _run("quick", args, tmp_path / "quick")
    assert (code, out, err) == _run("click", args, tmp_path / "click")[:3]
    assert code == 0 and "\x1b" not in out and 'print(RED + "alarm")' in out
