"""repolens doctor: every leg checked for real, with the fix when it fails."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE_FILES
from repolens import service
from repolens.index.build import build_index
from repolens.ops.doctor import diagnose
from repolens.store.handles import readers


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    readers.clear()


def _states(root: Path) -> dict[str, str]:
    return {c.name: c.state for c in diagnose(root).checks}


def test_lexical_only_index_is_healthy_with_dense_and_rerank_off(sample_repo: Path):
    build_index(sample_repo)
    assert _states(sample_repo) == {
        "index": "ok",
        "lexical": "ok",
        "dense": "off",
        "rerank": "off",
        "history": "ok",
    }


def test_counts_read_in_the_singular_for_one(make_repo):
    root = make_repo({"app.py": "def main():\n    return run_the_app()\n"})
    build_index(root)
    (root / "tool.py").write_text("def tool():\n    pass\n")
    checks = {c.name: c.detail for c in diagnose(root).checks}
    assert checks["lexical"] == "a probe search returned 1 hit"
    assert checks["index"].endswith("; 1 file changed since: run `repolens index`")


def test_stale_index_fails_with_the_fix(sample_repo: Path):
    build_index(sample_repo)
    (sample_repo / "src/new.py").write_text("def new():\n    pass\n")
    check = diagnose(sample_repo).checks[0]
    assert (check.state, check.detail.endswith("1 file changed since: run `repolens index`")) == (
        "FAIL",
        True,
    )


def test_dense_leg_checked_with_the_configured_model(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    monkeypatch.setenv("REPOLENS_VECTORS", "1")
    build_index(sample_repo)
    dense = next(c for c in diagnose(sample_repo).checks if c.name == "dense")
    assert dense.state == "ok" and dense.detail.startswith("fake:")
    monkeypatch.setenv("REPOLENS_EMBED_DIM", "64")
    dense = next(c for c in diagnose(sample_repo).checks if c.name == "dense")
    assert dense.state == "FAIL" and "run `repolens index --rebuild`" in dense.detail


def test_the_dense_line_names_the_model_not_its_internal_id(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_VECTORS", "1")  # the default model
    build_index(sample_repo)
    dense = next(c for c in diagnose(sample_repo).checks if c.name == "dense")
    assert dense.state == "ok"
    assert re.fullmatch(r"all-MiniLM-L6-v2-int8: paraphrases 0\.\d\d > unrelated -?0\.\d\d", dense.detail), (
        dense.detail
    )


def test_broken_reranker_fails_and_the_cli_exits_non_zero(sample_repo: Path):
    build_index(sample_repo)
    env = {"REPOLENS_RERANK_PROVIDER": "local", "REPOLENS_RERANK_PATH": str(sample_repo / "nope"), "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-m", "repolens", "doctor", "--root", str(sample_repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("ok   index:")
    assert lines[3].startswith("FAIL rerank: ")
    assert lines[-1] == "some checks failed: fix them as said above"


@pytest.mark.parametrize(
    ("toml", "detail"),
    [
        ('vectors = "maybe"\n', "{file}: vectors must be true or false, got 'maybe'"),
        # not TOML at all: read first by the store's lookup ([store]), it ended doctor as a plain error
        ("[embed\n", "{file} is not valid TOML (Expected ']' at the end of a table declaration"),
    ],
)
def test_a_broken_settings_file_is_a_failing_check_in_json_too(sample_repo: Path, toml: str, detail: str):
    (sample_repo / ".repolens.toml").write_text(toml)
    out = subprocess.run(
        [sys.executable, "-m", "repolens", "doctor", "--root", str(sample_repo), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1 and out.stderr == ""
    reply = json.loads(out.stdout)
    (check,) = reply["checks"]
    assert reply["ok"] is False and (check["name"], check["state"]) == ("settings", "FAIL")
    assert check["detail"].startswith(detail.format(file=sample_repo / ".repolens.toml"))


BINARY = b"SIMPLE  =                    T\x00\x00\x00\x01\x02"  # a FITS header with NULs


def _changes(root: Path) -> tuple[int, int, int]:
    status = service.index_status(root)
    return status.new, status.modified, status.deleted


def test_files_kept_out_by_their_content_are_not_changes(make_repo):
    """status and doctor right after indexing a repository with binary and
    blank files: up to date (they were skipped, not missed)."""
    root = make_repo({**SAMPLE_FILES, "data/sample.fits": BINARY, "notes/blank.txt": "  \n\n"})
    report = build_index(root)
    assert (report.skipped["binary"], report.skipped["empty"]) == (1, 1)
    assert _changes(root) == (0, 0, 0)
    check = diagnose(root).checks[0]
    assert (check.state, check.detail.endswith("; up to date")) == ("ok", True)


def test_a_skipped_file_that_changes_is_a_change_until_indexed(make_repo):
    root = make_repo({**SAMPLE_FILES, "data/sample.fits": BINARY, "data/table.csv": "a,b\n1,2\n"})
    build_index(root)
    (root / "data/sample.fits").write_text("now text\n")  # binary -> text
    (root / "data/table.csv").write_bytes(BINARY)  # text -> binary
    assert _changes(root) == (1, 1, 0)
    report = build_index(root)
    assert (report.added, report.deleted, report.skipped["binary"]) == (1, 1, 1)
    assert _changes(root) == (0, 0, 0)
    (root / "data/table.csv").unlink()  # a skipped file that goes is no change either
    assert _changes(root) == (0, 0, 0)
    report = build_index(root)
    assert (report.added, report.changed, report.deleted, report.skipped["binary"]) == (0, 0, 0, 0)
