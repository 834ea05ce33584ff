"""repolens doctor: every leg checked for real, with the fix when it fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repolens import api
from repolens.doctor import diagnose
from repolens.index import build_index


@pytest.fixture(autouse=True)
def _fresh_handles():
    yield
    api.handles.clear()


def _states(root: Path) -> dict[str, str]:
    return {c.name: c.state for c in diagnose(api.layout_for(root)).checks}


def test_lexical_only_index_is_healthy_with_dense_and_rerank_off(sample_repo: Path):
    build_index(sample_repo)
    assert _states(sample_repo) == {"index": "ok", "lexical": "ok", "dense": "off", "rerank": "off"}


def test_counts_read_in_the_singular_for_one(make_repo):
    root = make_repo({"app.py": "def main():\n    return run_the_app()\n"})
    build_index(root)
    (root / "tool.py").write_text("def tool():\n    pass\n")
    checks = {c.name: c.detail for c in diagnose(api.layout_for(root)).checks}
    assert checks["lexical"] == "a probe search returned 1 hit"
    assert checks["index"].endswith("; 1 file changed since: run `repolens index`")


def test_stale_index_fails_with_the_fix(sample_repo: Path):
    build_index(sample_repo)
    (sample_repo / "src/new.py").write_text("def new():\n    pass\n")
    check = diagnose(api.layout_for(sample_repo)).checks[0]
    assert (check.state, check.detail.endswith("1 file changed since: run `repolens index`")) == (
        "FAIL",
        True,
    )


def test_dense_leg_checked_with_the_configured_model(sample_repo: Path, monkeypatch):
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    monkeypatch.setenv("REPOLENS_VECTORS", "1")
    build_index(sample_repo)
    dense = next(c for c in diagnose(api.layout_for(sample_repo)).checks if c.name == "dense")
    assert dense.state == "ok" and dense.detail.startswith("fake:")
    monkeypatch.setenv("REPOLENS_EMBED_DIM", "64")
    dense = next(c for c in diagnose(api.layout_for(sample_repo)).checks if c.name == "dense")
    assert dense.state == "FAIL" and "run `repolens index --rebuild`" in dense.detail


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
