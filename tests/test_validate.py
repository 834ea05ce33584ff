"""Argument checks: each bound has one home, each refusal one wording, whichever call refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from repolens import service
from repolens.errors import UsageError
from repolens.validate import (
    MAX_BUDGET,
    MAX_GLOB_CHARS,
    MAX_GLOBS,
    MIN_BUDGET,
    check_budget,
    check_dir,
    check_globs,
    check_query,
    check_subpath,
    check_user_path,
    shown_path,
)

BUDGET_REFUSED = f"max_chars must be between {MIN_BUDGET} and {MAX_BUDGET}, got {MIN_BUDGET - 1}"


def refusal(call, *args, **kwargs) -> str:
    with pytest.raises(UsageError) as caught:
        call(*args, **kwargs)
    return str(caught.value)


def test_every_reply_refuses_a_budget_out_of_bounds_alike(sample_repo: Path) -> None:
    service.index_repo(sample_repo)
    small = MIN_BUDGET - 1
    reply = service.search_code("parse_url", sample_repo)
    assert reply.packet is not None
    chunk_id = reply.packet.rendered[0].block.chunk_ids[0]
    assert refusal(check_budget, small) == BUDGET_REFUSED
    assert refusal(service.search_code, "parse_url", sample_repo, max_chars=small) == BUDGET_REFUSED
    assert refusal(service.find_symbol, "parse_url", sample_repo, max_chars=small) == BUDGET_REFUSED
    assert refusal(service.focus, "parse_url", sample_repo, max_chars=small) == BUDGET_REFUSED
    assert refusal(service.get_chunk, chunk_id, sample_repo, max_chars=small) == BUDGET_REFUSED
    snippet = service.read_snippet(sample_repo, "src/web/forms.py", 1, 3)
    assert refusal(snippet.render, small) == BUDGET_REFUSED
    assert refusal(check_budget, 2.5) == f"max_chars must be an integer between {MIN_BUDGET} and {MAX_BUDGET}"
    assert check_budget(MAX_BUDGET) == MAX_BUDGET


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "query is empty: pass a question or an identifier to search for"),
        ("  \n", "query is empty: pass a question or an identifier to search for"),
        (None, "query is empty: pass a question or an identifier to search for"),
        ("x" * 100_001, "query is 100001 chars; the limit is 100000: keep the lines that matter"),
    ],
)
def test_a_query_must_be_text_of_bounded_length(query: object, message: str) -> None:
    assert refusal(check_query, query) == message


def test_a_path_filter_stays_inside_the_repository() -> None:
    assert check_subpath(" /src/app/ ") == "src/app"
    assert check_subpath(None) is None
    assert check_subpath("/") is None
    assert refusal(check_subpath, "src/../..") == (
        "path filter 'src/../..' must be a folder or file inside the repository"
    )
    assert refusal(check_subpath, 3) == "path must be a plain string"
    assert refusal(check_subpath, " ") == (
        "path ' ' is empty: pass a folder or file, or leave it out for the whole repository"
    )
    assert refusal(check_subpath, "README.md\r") == (
        "path 'README.md\\r' holds a control character: pass the path alone"
    )


def test_a_path_filter_is_read_as_a_shell_or_a_compiler_writes_it(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert check_subpath("./src//app/./x") == "src/app/x"
    assert check_subpath("./") is None  # the whole repository
    assert check_subpath(str(tmp_path / "src" / "app"), tmp_path) == "src/app"
    assert check_subpath(str(tmp_path), tmp_path) is None
    assert check_subpath("/src", tmp_path) == "src"  # written from the root, as before
    assert refusal(check_subpath, "/elsewhere/src", tmp_path) == (
        f"path '/elsewhere/src' is outside the repository root {tmp_path}: "
        "pass a path inside it, or relative to it"
    )
    assert check_subpath("/elsewhere/src") == "elsewhere/src"  # no root: from the repository's


def test_globs_are_one_string_or_a_list_of_them() -> None:
    assert check_globs("include", " src/**/*.py ") == ("src/**/*.py",)
    assert check_globs("exclude", ["a/*", "b/*"]) == ("a/*", "b/*")
    assert check_globs("include", None) == ()
    assert refusal(check_globs, "exclude", ["ok", ""]) == (
        f"exclude must be glob patterns like 'src/**/*.py' (not blank, at most {MAX_GLOB_CHARS} chars)"
    )


def test_globs_are_bounded_in_number_and_length(sample_repo: Path) -> None:
    """Any number of patterns was taken (each matched against every
    candidate's path), and one over the length bound was refused without
    saying there is one: both bounds are named."""
    many = [f"src/{i}/**/*.py" for i in range(MAX_GLOBS + 1)]
    assert check_globs("include", many[:MAX_GLOBS]) == tuple(many[:MAX_GLOBS])
    too_many = (
        f"include: at most {MAX_GLOBS} patterns, got {MAX_GLOBS + 1}: one pattern with * or ** covers many"
    )
    assert refusal(check_globs, "include", many) == too_many
    assert refusal(service.search_code, "parse_url", sample_repo, include=many) == too_many
    too_long = f"exclude must be glob patterns like 'src/**/*.py' (not blank, at most {MAX_GLOB_CHARS} chars)"
    assert refusal(check_globs, "exclude", "x" * (MAX_GLOB_CHARS + 1)) == too_long
    assert refusal(check_globs, "exclude", 3) == too_long
    assert check_globs("exclude", "x" * MAX_GLOB_CHARS) == ("x" * MAX_GLOB_CHARS,)


def test_a_user_path_that_can_name_no_file_is_refused_naming_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert check_user_path("log", "~/q.jsonl") == tmp_path / "q.jsonl"
    assert check_user_path("log", "q.jsonl", base=tmp_path) == tmp_path / "q.jsonl"
    assert check_user_path("log", "/abs/q.jsonl", base=tmp_path) == Path("/abs/q.jsonl")
    assert refusal(check_user_path, "log", "~repolens-no-such-user/q") == (
        "log ~repolens-no-such-user/q starts with the home folder of user 'repolens-no-such-user', "
        "who is unknown here: write the path in full"
    )
    long_name = "a/" + "y" * 256
    assert refusal(check_user_path, "log", long_name) == (
        f"log {long_name[:80]!r}... (258 chars) holds a name of 256 bytes; the limit is 255: shorten it"
    )
    assert refusal(check_user_path, "log", "/a" * 2100).endswith(
        "is 4200 bytes long; the limit is 4095: shorten it"
    )
    assert refusal(check_user_path, "log", "a\x00b") == "log 'a\\x00b' holds a NUL byte: remove it"


def test_a_folder_is_checked_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    assert check_dir("root", tmp_path, UsageError) == tmp_path.resolve()
    assert (
        refusal(check_dir, "root", tmp_path / "file.txt", UsageError)
        == f"root {shown_path(f'{tmp_path}/file.txt')} is not a directory"
    )
    assert (
        refusal(check_dir, "root", tmp_path / "nope", UsageError)
        == f"root {shown_path(f'{tmp_path}/nope')} does not exist"
    )
