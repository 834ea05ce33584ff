"""Shared fixtures: real git repositories and file trees in tmp dirs (no mocks)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

# A small application in two languages plus docs: the default repository of
# the end-to-end tests (CLI, MCP).
SAMPLE_FILES: dict[str, str] = {
    "src/auth/session.py": '''"""Session storage for logged-in users."""

import time

SESSION_TTL = 3600


class SessionStore:
    """Keeps sessions in memory and expires them after SESSION_TTL seconds."""

    def __init__(self):
        self._sessions = {}

    def save(self, session_id, data):
        self._sessions[session_id] = (time.time(), data)

    def load(self, session_id):
        created, data = self._sessions[session_id]
        if time.time() - created > SESSION_TTL:
            del self._sessions[session_id]
            raise KeyError("session expired")
        return data
''',
    "src/web/forms.py": '''from src.auth.session import SessionStore


def handle_submit(form, store: SessionStore):
    """Validate a submitted form and remember it in the session."""
    if not form.get("email"):
        raise ValueError("email is required")
    store.save(form["session_id"], form)
    return True


def parse_url(url):
    scheme, _, rest = url.partition("://")
    host, _, path = rest.partition("/")
    return scheme, host, "/" + path
''',
    "web/app.js": """import { parseURL } from "./url.js";

export function HandleSubmit(event) {
  event.preventDefault();
  const target = parseURL(event.target.action);
  return fetch(target.href, { method: "POST" });
}
""",
    "docs/guide.md": """# Guide

Sessions expire after one hour. See the session store for details.

## Forms

Forms are validated before they are stored.
""",
    "README.md": "# Sample\n\nA sample application used by the repolens tests.\n",
}


GIT_IDENTITY = ("-c", "user.email=tests@repolens.invalid", "-c", "user.name=repolens tests")

WriteTree = Callable[[Path, Mapping[str, str | bytes]], None]
Git = Callable[..., str]


def write_tree_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create ``files`` (relative POSIX path -> text or bytes) under ``root``, making folders."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_git(root: Path, *args: str) -> str:
    """Run git in ``root`` with a fixed identity; returns stdout, raises on failure."""
    proc = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=root, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


@pytest.fixture
def isolated_git_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's global and system git config (global excludes, hooks) out of tests."""
    empty = tmp_path_factory.mktemp("gitconfig") / "config"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def write_tree() -> WriteTree:
    return write_tree_files


@pytest.fixture
def git(isolated_git_config: None) -> Git:
    """``git(root, *args)``: run git in a repository made by ``git_repo``."""
    return run_git


@pytest.fixture
def git_repo(tmp_path: Path, isolated_git_config: None) -> Path:
    """An empty git work tree at ``tmp_path / "repo"`` (no commits yet)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    return repo


@pytest.fixture
def plain_dir(tmp_path: Path) -> Path:
    """An empty directory outside any git work tree (``tmp_path`` is not inside one)."""
    path = tmp_path / "plain"
    path.mkdir()
    return path


MakeRepo = Callable[..., Path]


@pytest.fixture
def make_repo(tmp_path: Path, isolated_git_config: None) -> MakeRepo:
    """``make_repo(files=SAMPLE_FILES, name="repo", commit=True)``: a git work tree with ``files``."""

    def make(files: Mapping[str, str | bytes] | None = None, name: str = "repo", commit: bool = True) -> Path:
        root = tmp_path / name
        root.mkdir()
        run_git(root, "init", "-q", "-b", "main")
        write_tree_files(root, SAMPLE_FILES if files is None else files)
        if commit:
            run_git(root, "add", "-A")
            run_git(root, "commit", "-q", "-m", "initial")
        return root

    return make


@pytest.fixture
def sample_repo(make_repo: MakeRepo) -> Path:
    """``SAMPLE_FILES`` committed in a fresh git repository."""
    return make_repo()
