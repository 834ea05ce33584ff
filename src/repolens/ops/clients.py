"""``repolens setup``: an MCP client's configuration for this repository, and
a short guidance block for agent instruction files.

Formats (looked up November 2026; each client's own docs are the reference):

- Claude Code (code.claude.com/docs/en/mcp): project scope is ``.mcp.json``
  at the project root, ``{"mcpServers": {name: {"type": "stdio", "command",
  "args", "env"}}}``; local and user scopes live in ``~/.claude.json``, which
  ``claude mcp add [--scope local|project|user] <name> -- <command> [args]``
  manages, so for those we print that command instead of editing the file.
- Codex (developers.openai.com/codex/mcp): ``~/.codex/config.toml`` (user)
  or ``.codex/config.toml`` (a trusted project), one ``[mcp_servers.<name>]``
  table with ``command`` and ``args``; ``codex mcp add <name> -- <command>``
  writes the user file.
- Cursor (cursor.com/docs/mcp): ``.cursor/mcp.json`` (project) or
  ``~/.cursor/mcp.json`` (global), ``{"mcpServers": {name: {"command",
  "args", "env"}}}``.
- VS Code (code.visualstudio.com/docs/copilot/reference/mcp-configuration):
  ``.vscode/mcp.json`` with a top-level ``"servers"`` (not ``mcpServers``),
  ``{"type": "stdio", "command", "args"}``; the user-profile ``mcp.json``
  sits in a per-platform folder, so for user scope we print
  ``code --add-mcp '<json>'``.

Existing files are merged, never clobbered: other servers and keys are kept,
a second run changes nothing, and a file that does not parse (JSON with
comments, broken TOML) is refused with the entry to add by hand. Writes are
atomic (a temporary file renamed over the old one).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repolens.errors import ConfigError, UsageError

SERVER_NAME = "repolens"
CLIENTS = ("claude", "codex", "cursor", "vscode")
SCOPES = ("project", "user")
# Where a client's servers live when --scope is not given.
DEFAULT_SCOPE = {"claude": "project", "codex": "user", "cursor": "project", "vscode": "project"}

AGENTS_BEGIN = "<!-- repolens: code search guidance -->"
AGENTS_END = "<!-- /repolens -->"
AGENTS_BLOCK = f"""{AGENTS_BEGIN}
## Code search (repolens MCP server)
- Broad or natural-language questions, unfamiliar code: `search_code` (cited evidence packets).
- A name you know: `find_symbol`. An exact string: grep.
- Whole function or class around a match: `get_focused_context`.
- Markers such as `use read_snippet PATH A B` name the follow-up read: call `read_snippet` with exactly those.
{AGENTS_END}
"""


@dataclass(frozen=True)
class SetupResult:
    """What ``setup`` did: ``action`` is created, updated, unchanged or printed;
    ``text`` is the entry written (or the command to run)."""

    action: str
    path: Path | None
    text: str
    note: str = ""  # said after the entry (a user-scope entry that served another repository)

    def summary(self) -> str:
        if self.action == "printed":
            return self.text
        tail = f"\nnote: {self.note}" if self.note else ""
        return f"{self.path}: {self.action}\n{self.text}{tail}"


def repolens_command() -> list[str]:
    """The absolute command that starts this installation of repolens, so a
    client finds it outside the virtual environment: the console script next
    to the interpreter, else ``<python> -m repolens``."""
    python = Path(os.path.abspath(sys.executable))  # not resolved: a venv's python is a symlink
    script = python.parent / "repolens"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [str(python), "-m", "repolens"]


def server_command(root: Path) -> list[str]:
    return [*repolens_command(), "serve", "--root", str(root)]


# -- files ----------------------------------------------------------------------


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename, keeping its permissions.
    A link is written through (the file it names is replaced): a config kept
    in a dotfiles folder and linked into place stays linked."""
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    if mode is not None and _ends_lines_with_crlf(path):  # (read with universal newlines: "\n")
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _ends_lines_with_crlf(path: Path) -> bool:
    """Whether ``path`` ends its lines with CR LF (a file made on Windows): kept so."""
    try:
        with open(path, "rb") as fh:
            return b"\r\n" in fh.read(1 << 16)
    except OSError:
        return False


def merge_json(path: Path, key: str, name: str, entry: dict[str, Any]) -> str:
    """Set ``data[key][name] = entry`` in the JSON file ``path``; returns the action."""
    data: dict[str, Any] = {}
    hint = json.dumps({key: {name: entry}}, ensure_ascii=False)
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if text.strip():
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"{path} is not plain JSON ({exc.msg} at line {exc.lineno}; comments or trailing "
                    f"commas?): left unchanged; add this by hand: {hint}"
                ) from None
        if not isinstance(data, dict) or not isinstance(data.get(key, {}), dict):
            raise ConfigError(
                f"{path}: expected an object with an object {key!r}: left unchanged; add {hint}"
            )
    servers = data.setdefault(key, {})
    if servers.get(name) == entry:
        return "unchanged"
    action = "updated" if name in servers else "created"
    servers[name] = entry
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return action


def _toml_string(value: str) -> str:
    # A JSON string is a TOML basic string (same escapes; ensure_ascii=False
    # keeps astral characters out of surrogate-pair escapes, which TOML lacks).
    return json.dumps(value, ensure_ascii=False)


def toml_table(table: str, entry: dict[str, Any]) -> str:
    lines = [f"[{table}]"]
    for key, value in entry.items():
        if isinstance(value, list):
            lines.append(f"{key} = [{', '.join(_toml_string(v) for v in value)}]")
        else:
            lines.append(f"{key} = {_toml_string(value)}")
    return "\n".join(lines) + "\n"


_HEADER = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(?:repolens|\"repolens\"|'repolens')\s*\]\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")
_OWN_KEY = re.compile(r"^\s*(command|args)\s*=")


def merge_codex_toml(path: Path, entry: dict[str, Any]) -> str:
    """Set ``[mcp_servers.repolens]`` command/args in a Codex ``config.toml``,
    keeping every other table and any other key of ours (env, timeouts).

    Edits text (no TOML writer needed) and then proves the edit by parsing
    the result: anything else changed, or a table written in a form this
    does not edit (inline, dotted keys, multi-line arrays), is refused.
    """
    table = f"mcp_servers.{SERVER_NAME}"
    snippet = toml_table(table, entry)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML ({exc}): left unchanged; add by hand: {snippet!r}"
        ) from None
    current = before.get("mcp_servers", {}).get(SERVER_NAME)
    if isinstance(current, dict) and all(current.get(k) == v for k, v in entry.items()):
        return "unchanged"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if start is None:
        if current is not None:
            raise ConfigError(
                f"{path} defines {table} in a form `repolens setup` does not edit (inline or dotted keys): "
                f"left unchanged; replace it by hand with: {snippet!r}"
            )
        body = text if not text or text.endswith("\n") else text + "\n"
        new_text = body + ("\n" if body.strip() else "") + snippet
        action = "created"
    else:
        end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
        kept = [line for line in lines[start + 1 : end] if not _OWN_KEY.match(line)]
        own = snippet.splitlines(keepends=True)[1:]
        new_text = "".join([*lines[: start + 1], *own, *kept, *lines[end:]])
        action = "updated"
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    expected = {**(current or {}), **entry}
    others_before = {k: v for k, v in before.items() if k != "mcp_servers"}
    servers_before = {k: v for k, v in before.get("mcp_servers", {}).items() if k != SERVER_NAME}
    if (
        after is None
        or after.get("mcp_servers", {}).get(SERVER_NAME) != expected
        or {k: v for k, v in after.items() if k != "mcp_servers"} != others_before
        or {k: v for k, v in after.get("mcp_servers", {}).items() if k != SERVER_NAME} != servers_before
    ):
        raise ConfigError(
            f"{path}: could not update {table} safely (multi-line values?): left unchanged; "
            f"edit it by hand to: {snippet!r}"
        )
    write_atomic(path, new_text)
    return action


# -- clients --------------------------------------------------------------------


def setup_client(
    client: str,
    root: Path,
    *,
    scope: str | None = None,
    print_only: bool = False,
    home: Path | None = None,
) -> SetupResult:
    """Write (or, with ``print_only``, show) ``client``'s MCP entry for ``root``."""
    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")
    scope = scope or DEFAULT_SCOPE[client]
    if scope not in SCOPES:
        raise UsageError(f"scope must be project or user, got {scope!r}")
    home = home or Path.home()
    root = root.resolve()
    command = server_command(root)
    exe, args = command[0], command[1:]

    if client == "claude" and scope == "user":
        # ~/.claude.json belongs to Claude Code: its own command edits it
        # (default scope "local": private to you, for this project).
        return SetupResult("printed", None, shlex.join(["claude", "mcp", "add", SERVER_NAME, "--", *command]))
    if client == "vscode" and scope == "user":
        spec = json.dumps({"name": SERVER_NAME, "type": "stdio", "command": exe, "args": args})
        return SetupResult("printed", None, shlex.join(["code", "--add-mcp", spec]))

    if client == "codex":
        path = (home if scope == "user" else root) / ".codex" / "config.toml"
        entry: dict[str, Any] = {"command": exe, "args": args}
        text = toml_table(f"mcp_servers.{SERVER_NAME}", entry)
        if print_only:
            return SetupResult("printed", path, f"# {path}\n{text}")
        before = _served_root(path, ("mcp_servers", SERVER_NAME), toml=True) if scope == "user" else ""
        action = merge_codex_toml(path, entry)
        return SetupResult(action, path, text.rstrip("\n"), _moved(before, root, client))

    if client == "claude":
        path, key, entry = root / ".mcp.json", "mcpServers", {"type": "stdio", "command": exe, "args": args}
    elif client == "cursor":
        base = home if scope == "user" else root
        path, key, entry = base / ".cursor" / "mcp.json", "mcpServers", {"command": exe, "args": args}
    else:  # vscode, project
        path, key, entry = (
            root / ".vscode" / "mcp.json",
            "servers",
            {"type": "stdio", "command": exe, "args": args},
        )
    text = json.dumps({key: {SERVER_NAME: entry}}, indent=2, ensure_ascii=False)
    if print_only:
        return SetupResult("printed", path, f"// {path}\n{text}")
    before = _served_root(path, (key, SERVER_NAME), toml=False) if scope == "user" else ""
    action = merge_json(path, key, SERVER_NAME, entry)
    return SetupResult(action, path, text, _moved(before, root, client))


def _served_root(path: Path, keys: tuple[str, str], *, toml: bool) -> str:
    """The ``--root`` an existing entry of ours in ``path`` serves ("" for none, or unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = tomllib.loads(text) if toml else json.loads(text)
        args = data[keys[0]][keys[1]]["args"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if isinstance(args, list) and "--root" in args and args.index("--root") + 1 < len(args):
        return str(args[args.index("--root") + 1])
    return ""


def _moved(before: str, root: Path, client: str) -> str:
    """The note of a user-scope entry that served another repository: every
    session of the client now searches ``root``."""
    if not before or before == str(root):
        return ""
    return (
        f"this entry served {before}; every {client} session now searches {root}: "
        f"`repolens setup {client} --scope project` in each repository gives each its own"
    )


def setup_agents_md(root: Path, filename: str = "AGENTS.md", *, print_only: bool = False) -> SetupResult:
    """Append the guidance block to ``root/filename`` once (a marker comment makes it
    idempotent); with ``print_only``, show what would be appended and write nothing."""
    if "/" in filename or "\\" in filename or filename in ("", ".", ".."):
        raise UsageError(f"--file must be a file name in the repository root, got {filename!r}")
    path = root.resolve() / filename
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if AGENTS_BEGIN in text:
        return SetupResult("unchanged", path, f"guidance block already present ({len(AGENTS_BLOCK)} chars)")
    if print_only:
        return SetupResult("printed", path, f"<!-- to append to {path} -->\n{AGENTS_BLOCK.rstrip()}")
    body = text if not text or text.endswith("\n") else text + "\n"
    write_atomic(path, body + ("\n" if body.strip() else "") + AGENTS_BLOCK)
    action = "updated" if text else "created"
    return SetupResult(action, path, f"appended {len(AGENTS_BLOCK)} chars:\n{AGENTS_BLOCK.rstrip()}")
