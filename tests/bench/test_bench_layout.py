"""bench/: the checks at the top, the probes in bench/probes/, each one starting
from where it lies and named where the docs say it is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
PROBES = BENCH / "probes"
TOP = sorted(BENCH.glob("*.py"))
MOVED = sorted(PROBES.glob("*.py"))
# Scripts that take arguments; the others are modules the scripts import, or
# take no options at all (``tool_list.py`` measures as soon as it runs).
COMMANDS = [p for p in TOP + MOVED if "ArgumentParser(" in p.read_text()]
# Where a reader meets a script's path: what names a missing script misleads.
DOCUMENTS = [ROOT / "README.md", ROOT / "pyproject.toml", *ROOT.glob("docs/*.md"),
             *BENCH.rglob("*.md"), *BENCH.rglob("*.py"), *ROOT.glob("tests/**/*.py")]  # fmt: skip
SCRIPT_PATH = re.compile(r"(?<![\w/.])bench/[\w/]+\.py\b")


@pytest.mark.parametrize("script", COMMANDS, ids=lambda p: str(p.relative_to(BENCH)))
def test_every_bench_script_starts_from_where_it_lies(script: Path, tmp_path: Path) -> None:
    """``--help`` loads every import, so a probe that lost its way to ``devset``
    (one folder up) fails here; run from elsewhere, as the paths are the script's own."""
    done = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:")


def test_the_bench_readme_names_each_check_at_the_top_and_each_probe_below() -> None:
    readme = (BENCH / "README.md").read_text()
    top, probes = readme.split("## Probes", 1)
    assert [p.name for p in TOP if f"`{p.name}`" not in top] == []
    assert [p.name for p in MOVED if f"`{p.name}`" not in probes] == []
    assert [p.name for p in MOVED if f"`{p.name}`" in top] == []


def test_every_bench_script_a_document_names_exists() -> None:
    missing = {
        f"{doc.relative_to(ROOT)}: {name}"
        for doc in DOCUMENTS
        for name in SCRIPT_PATH.findall(doc.read_text())
        if not (ROOT / name).is_file()
    }
    assert sorted(missing) == []
