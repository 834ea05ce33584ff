"""``repolens setup``: client configuration files merged, never clobbered."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from repolens.errors import ConfigError
from repolens.ops.clients import AGENTS_BEGIN, AGENTS_BLOCK, setup_agents_md, setup_client


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "my repo"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def test_claude_project_file_is_created_then_left_unchanged(repo: Path, home: Path):
    first = setup_client("claude", repo, home=home)
    assert first.action == "created" and first.path == repo / ".mcp.json"
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["repolens"]
    assert entry["type"] == "stdio"
    assert Path(entry["command"]).is_absolute() and Path(entry["command"]).exists()
    assert entry["args"][-3:] == ["serve", "--root", str(repo.resolve())]
    before = (repo / ".mcp.json").read_text()
    assert setup_client("claude", repo, home=home).action == "unchanged"
    assert (repo / ".mcp.json").read_text() == before


def test_the_written_command_starts_repolens_without_the_venv(repo: Path, home: Path):
    setup_client("claude", repo, home=home)
    entry = json.loads((repo / ".mcp.json").read_text())["mcpServers"]["repolens"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    out = subprocess.run(
        [entry["command"], *entry["args"][:-3], "--version"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "repolens" in out.stdout


def test_other_servers_and_keys_are_kept(repo: Path, home: Path):
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"other": {"command": "x"}, "repolens": {"command": "old"}}, "extra": 1})
    )
    assert setup_client("claude", repo, home=home).action == "updated"
    data = json.loads((repo / ".mcp.json").read_text())
    assert data["mcpServers"]["other"] == {"command": "x"} and data["extra"] == 1
    assert data["mcpServers"]["repolens"]["command"] != "old"
    assert list(data["mcpServers"]) == ["other", "repolens"]


@pytest.mark.parametrize(
    "content",
    ['{"servers": {}, // a comment\n}', '{"servers": {},}', "[1, 2]", '{"servers": []}'],
)
def test_a_malformed_json_file_is_refused_and_left_alone(repo: Path, home: Path, content: str):
    path = repo / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(ConfigError, match="left unchanged") as err:
        setup_client("vscode", repo, home=home)
    assert "\n" not in str(err.value) and '"repolens"' in str(err.value)  # names the entry to add by hand
    assert path.read_text() == content


def test_vscode_uses_servers_with_type_stdio_and_keeps_inputs(repo: Path, home: Path):
    path = repo / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"inputs": [{"id": "k", "type": "promptString"}], "servers": {}}))
    setup_client("vscode", repo, home=home)
    data = json.loads(path.read_text())
    assert data["inputs"] == [{"id": "k", "type": "promptString"}]
    assert data["servers"]["repolens"]["type"] == "stdio"


def test_cursor_project_and_user_scopes(repo: Path, home: Path):
    assert setup_client("cursor", repo, home=home).path == repo / ".cursor" / "mcp.json"
    user = setup_client("cursor", repo, scope="user", home=home)
    assert user.path == home / ".cursor" / "mcp.json"
    assert "command" in json.loads(user.path.read_text())["mcpServers"]["repolens"]


def test_a_linked_config_is_written_through_the_link(repo: Path, home: Path):
    """A config kept in a dotfiles folder and linked into place was replaced
    by a file of its own: the link gone, the dotfiles copy never updated."""
    dotfiles = home / "dotfiles" / "cursor-mcp.json"
    dotfiles.parent.mkdir(parents=True)
    dotfiles.write_text('{"mcpServers": {"other": {"command": "x"}}}\n')
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").symlink_to("../dotfiles/cursor-mcp.json")
    setup_client("cursor", repo, scope="user", home=home)
    assert (home / ".cursor" / "mcp.json").is_symlink()
    assert set(json.loads(dotfiles.read_text())["mcpServers"]) == {"other", "repolens"}


def test_user_scopes_owned_by_a_client_print_its_command(repo: Path, home: Path):
    claude = setup_client("claude", repo, scope="user", home=home)
    assert claude.action == "printed" and claude.path is None
    words = shlex.split(claude.text)
    assert words[:5] == ["claude", "mcp", "add", "repolens", "--"]
    assert words[-3:] == ["serve", "--root", str(repo.resolve())]  # the space in the path survives quoting
    vscode = shlex.split(setup_client("vscode", repo, scope="user", home=home).text)
    assert vscode[:2] == ["code", "--add-mcp"] and json.loads(vscode[2])["type"] == "stdio"
    assert list(home.iterdir()) == [] and list(repo.iterdir()) == []


def test_print_writes_nothing(repo: Path, home: Path):
    for client in ("claude", "codex", "cursor", "vscode"):
        result = setup_client(client, repo, print_only=True, home=home)
        assert result.action == "printed" and "repolens" in result.text
    assert list(home.iterdir()) == [] and list(repo.iterdir()) == []


CODEX_CONFIG = """# my settings
model = "o4"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "1"]

[mcp_servers.repolens]
command = "old"
args = ["x"]
startup_timeout_sec = 30

[mcp_servers.repolens.env]
A = "1"

[profiles.fast]
model = "small"
"""


def test_codex_toml_is_created_and_idempotent(repo: Path, home: Path):
    result = setup_client("codex", repo, home=home)
    path = home / ".codex" / "config.toml"
    assert result.action == "created" and result.path == path
    entry = tomllib.loads(path.read_text())["mcp_servers"]["repolens"]
    assert entry["args"] == ["serve", "--root", str(repo.resolve())]
    assert setup_client("codex", repo, home=home).action == "unchanged"
    assert setup_client("codex", repo, scope="project", home=home).path == repo / ".codex" / "config.toml"


@pytest.mark.parametrize("client", ["codex", "cursor"])
def test_a_user_scope_entry_moved_to_another_repository_says_so(tmp_path: Path, home: Path, client: str):
    """One user-scope entry serves one repository for every session: set up
    again from another, it says which it served and how to have one each."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    assert setup_client(client, first, scope="user", home=home).note == ""
    moved = setup_client(client, second, scope="user", home=home)
    assert moved.action == "updated"
    assert moved.note == (
        f"this entry served {first}; every {client} session now searches {second}: "
        f"`repolens setup {client} --scope project` in each repository gives each its own"
    )
    assert moved.summary().endswith(f"\nnote: {moved.note}")
    assert setup_client(client, second, scope="user", home=home).note == ""  # the same: nothing to say
    assert setup_client(client, first, scope="project", home=home).note == ""  # its own file


def test_codex_update_keeps_other_tables_keys_and_comments(repo: Path, home: Path):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(CODEX_CONFIG)
    assert setup_client("codex", repo, home=home).action == "updated"
    text = path.read_text()
    data = tomllib.loads(text)
    assert text.startswith("# my settings\n")
    assert data["model"] == "o4" and data["profiles"] == {"fast": {"model": "small"}}
    assert data["mcp_servers"]["docs"] == {"command": "docs-server", "args": ["--port", "1"]}
    ours = data["mcp_servers"]["repolens"]
    assert ours["command"] != "old" and ours["startup_timeout_sec"] == 30 and ours["env"] == {"A": "1"}
    assert setup_client("codex", repo, home=home).action == "unchanged"


def test_codex_appends_to_a_file_without_our_table(repo: Path, home: Path):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('model = "o4"')  # no trailing newline
    setup_client("codex", repo, home=home)
    data = tomllib.loads(path.read_text())
    assert data["model"] == "o4" and "repolens" in data["mcp_servers"]


@pytest.mark.parametrize(
    "content",
    [
        'mcp_servers = { repolens = { command = "x" } }\n',
        '[mcp_servers]\nrepolens.command = "x"\n',
        '[mcp_servers.repolens]\ncommand = "x"\nargs = [\n  "a",\n]\n',
        "[mcp_servers\nbroken",
    ],
)
def test_codex_forms_it_cannot_edit_safely_are_refused(repo: Path, home: Path, content: str):
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(ConfigError, match="left unchanged"):
        setup_client("codex", repo, home=home)
    assert path.read_text() == content


def test_a_file_with_crlf_line_ends_keeps_them(repo: Path):
    """The appended block made every existing CR LF a bare LF."""
    (repo / "AGENTS.md").write_bytes(b"# Rules\r\nBe nice.\r\n")
    setup_agents_md(repo)
    data = (repo / "AGENTS.md").read_bytes()
    assert data.startswith(b"# Rules\r\nBe nice.\r\n") and b"\n" not in data.replace(b"\r\n", b"")


def test_agents_md_block_is_appended_once(repo: Path):
    (repo / "AGENTS.md").write_text("# Rules\nBe nice.")
    first = setup_agents_md(repo)
    assert first.action == "updated" and f"appended {len(AGENTS_BLOCK)} chars" in first.text
    text = (repo / "AGENTS.md").read_text()
    assert text.startswith("# Rules\nBe nice.\n\n" + AGENTS_BEGIN)
    assert setup_agents_md(repo).action == "unchanged"
    assert (repo / "AGENTS.md").read_text() == text
    assert len(AGENTS_BLOCK) < 600
    for words in ("search_code", "find_symbol", "grep", "read_snippet"):
        assert words in AGENTS_BLOCK
    assert setup_agents_md(repo, "CLAUDE.md").action == "created"
    assert (repo / "CLAUDE.md").read_text() == AGENTS_BLOCK


def test_agents_md_print_previews_the_block_and_writes_nothing(repo: Path, home: Path):
    (repo / "AGENTS.md").write_text("# Rules\n")
    out = subprocess.run(
        [sys.executable, "-m", "repolens", "setup", "agents-md", "--print", "--root", str(repo)],
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    path = repo.resolve() / "AGENTS.md"
    assert out.stdout == f"<!-- to append to {path} -->\n{AGENTS_BLOCK}"
    assert path.read_text() == "# Rules\n"
    setup_agents_md(repo)
    assert setup_agents_md(repo, print_only=True).action == "unchanged"


def test_setup_command_line(repo: Path, home: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    env["HOME"] = str(home)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "repolens", "setup", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    out = run("codex", "--root", str(repo))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"{home / '.codex' / 'config.toml'}: created\n[mcp_servers.repolens]")
    again = run("codex", "--root", str(repo))
    assert again.stdout.splitlines()[0].endswith(": unchanged")
    agents = run("agents-md", "--root", str(repo), "--file", "CLAUDE.md")
    assert agents.returncode == 0 and "appended" in agents.stdout
    bad = run("agents-md", "--root", str(repo), "--file", "../x.md")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --file must be a file name")
