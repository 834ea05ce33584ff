"""``repolens refresh --all``: every configured root, one JSON line each, base first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from branch_fixtures import SAME, Branches, make_branches

from repolens.store import STORE_ENV
from repolens.validate import shown_path

KEYS = {
    "repo",
    "root",
    "branch",
    "mode",
    "files_changed",
    "files_reused",
    "chunks_reused",
    "chunks_embedded",
    "vectors_reused",
    "seconds",
    "error",
}


@pytest.fixture
def branches(make_repo, git, write_tree) -> Branches:
    return make_branches(make_repo, git, write_tree)


def _refresh(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run in ``cwd``, with no configuration but ``args`` (never the developer's)."""
    unset = ("REPOLENS_INDEX_DIR", "REPOLENS_CONFIG", "REPOLENS_ROOTS", STORE_ENV)
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run(
        [sys.executable, "-m", "repolens", "refresh", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=cwd,
    )


def _store_table(url: str | None) -> str:
    """The config file's ``[store]``: every root in the database at ``url`` (None: local files)."""
    return f'\n[store]\nurl = "{url}"\n' if url else ""


def _keys_in(url: str | None) -> list[str]:
    """The repositories the database at ``url`` holds ([] for local files)."""
    if url is None:
        return []
    import psycopg

    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT key FROM repos ORDER BY key")]


def test_refresh_all_prints_one_line_per_root_and_fails_when_one_fails(
    branches, tmp_path: Path, store_url, monkeypatch
):
    # Vectors by the deterministic test model: develop embeds only what main does not hold.
    monkeypatch.setenv("REPOLENS_VECTORS", "true")
    monkeypatch.setenv("REPOLENS_EMBED_PROVIDER", "fake")
    empty = tmp_path / "empty"
    empty.mkdir()
    config = tmp_path / "repolens.toml"
    # develop first in the file: the base (main) is still refreshed first, so develop copies from it.
    config.write_text(
        f'[roots]\n"app@develop" = "{branches.develop}"\n"app@main" = "{branches.main}"\nempty = "{empty}"\n'
        + _store_table(store_url)
    )

    first = _refresh("--all", "--config", str(config), cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    lines = [json.loads(line) for line in first.stdout.splitlines()]
    assert [(r["repo"], r["branch"], r["mode"]) for r in lines] == [
        ("app@main", "main", "build"),
        ("app@develop", "develop", "build"),
        ("empty", "", ""),
    ]
    assert all(set(r) == KEYS for r in lines)
    assert lines[0]["files_changed"] == 12 and lines[0]["error"] is None
    assert (lines[1]["files_reused"], lines[1]["chunks_reused"]) == (len(SAME), len(SAME))
    # one chunk per file: billing.py's (changed) and coupons.py's (new) are embedded
    assert (lines[0]["chunks_embedded"], lines[0]["vectors_reused"]) == (12, 0)
    assert (lines[1]["chunks_embedded"], lines[1]["vectors_reused"]) == (2, len(SAME))
    assert lines[2]["error"].startswith("nothing to index in ")
    # Both branches in one database, named as the config names them; no local index.
    assert _keys_in(store_url) == ([] if store_url is None else ["app@develop", "app@main"])
    assert (branches.main / ".repolens").exists() == (store_url is None)

    config.write_text(
        f'[roots]\napp = {{ main = "{branches.main}", develop = "{branches.develop}" }}\n'
        + _store_table(store_url)
    )
    (branches.develop / "shop/coupons.py").write_text("def apply_coupon(cart, code):\n    return None\n")
    again = _refresh("--all", "--config", str(config), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    lines = [json.loads(line) for line in again.stdout.splitlines()]
    assert [(r["repo"], r["mode"], r["files_changed"], r["chunks_embedded"], r["error"]) for r in lines] == [
        ("app@main", "refresh", 0, 0, None),
        ("app@develop", "refresh", 1, 1, None),
    ]


def test_refresh_needs_all_and_a_root(branches, tmp_path: Path):
    bare = _refresh(cwd=tmp_path)
    assert bare.returncode == 2 and "pass --all" in bare.stderr
    config = tmp_path / "repolens.toml"
    config.write_text("[serve]\nwatch = false\n")
    outside = tmp_path / "outside"  # neither a configured root nor a git work tree
    outside.mkdir()
    none = _refresh("--all", "--config", str(config), cwd=outside)
    assert none.returncode == 2 and none.stderr.startswith("error: no repository to refresh")


def test_without_a_configured_root_it_refreshes_the_worktrees_as_its_help_says(branches, tmp_path: Path):
    helped = _refresh("--help", cwd=tmp_path)
    assert "else every git worktree of the current directory" in " ".join(helped.stdout.split())
    config = tmp_path / "repolens.toml"
    config.write_text("[serve]\nwatch = false\n")
    done = _refresh("--all", "--config", str(config), cwd=branches.develop)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["repo"], r["branch"], r["mode"], r["error"]) for r in lines] == [
        ("app-main@main", "main", "build", None),
        ("app-main@develop", "develop", "build", None),
    ]
    assert (branches.main / ".repolens").is_dir() and (branches.develop / ".repolens").is_dir()


def test_a_missing_folder_fails_its_line_and_the_other_roots_are_refreshed(
    branches, tmp_path: Path, store_url
):
    gone = tmp_path / "deleted-checkout"
    config = tmp_path / "repolens.toml"
    config.write_text(
        f'[roots]\napp = {{ main = "{branches.main}", develop = "{branches.develop}" }}\n'
        f'old = "{gone}"\n' + _store_table(store_url)
    )
    done = _refresh("--all", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["repo"], r["root"], r["error"]) for r in lines] == [
        (
            "old",
            str(gone),
            # a long path is quoted and cut (a test's folder can be long: pytest-xdist's workers)
            f"{config} [roots]: repository root {shown_path(str(gone))} does not exist: "
            "pass an existing directory",
        ),
        ("app@main", str(branches.main), None),
        ("app@develop", str(branches.develop), None),
    ]
    assert all(set(r) == KEYS for r in lines)
    # REPOLENS_ROOTS too: one line per root, the missing one failed.
    env_roots = f"app={branches.main},old={gone}"
    unset = ("REPOLENS_INDEX_DIR", "REPOLENS_CONFIG", STORE_ENV)
    env = {**{k: v for k, v in os.environ.items() if k not in unset}, "REPOLENS_ROOTS": env_roots}
    if store_url:
        env[STORE_ENV] = store_url
    again = subprocess.run(
        [sys.executable, "-m", "repolens", "refresh", "--all"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert again.returncode == 1, again.stderr
    lines = [json.loads(line) for line in again.stdout.splitlines()]
    assert [(r["repo"], r["mode"], r["error"] is None) for r in lines] == [
        ("old", "", False),
        ("app", "refresh" if store_url is None else "build", True),
    ]
