"""The docs name everything a user can type or set (sqlite-utils' docs test is
the model): every CLI command with each of its options, arguments and
choices, every MCP tool with its arguments and every prompt, every setting
with its ``REPOLENS_`` variable and its default, every key of the config
tables, and every other ``REPOLENS_*`` variable the code reads. The docs are
README.md and docs/*.md; a link between them must lead somewhere. (That
every ``python -m bench...`` command they name exists is tests/bench/test_bench_layout.py's.)

A command is documented by a section whose heading names ``repolens CMD``,
a tool by one whose heading names it. An option counts only in the prose
(not a usage line) of its command's section or of the section of "Options
every command shares", and a tool's argument only in its tool's section, so
a ``--limit`` said for one command does not document it for another. Everything is read from the
code (click's commands, the recorded tool list, the settings dataclass, the
config classes, the keys the config readers read and the string constants in
the source), so a new option, tool, setting, key or variable fails here until
the docs say what it does. The README's test command is the one `.ci/run` runs.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import NamedTuple

import click
import pytest

from repolens.cli.commands import cli
from repolens.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "repolens"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Linked from the docs and linking back: its links must resolve too.
LINKED = [*DOCS, ROOT / "bench" / "README.md"]

# The config tables no dataclass or constant lists: a server config's [roots]
# entries and [registry], and [store] (a repository's .repolens.toml or a server
# config). Each function that reads one, with the name it holds the table by and
# the tables it may hold; the keys are what it reads of that name
# (``table.get("url")``, ``entry["read_url"]``, ``"store" in entry``), so a key a
# reader starts to read fails here until the docs name it beside its table.
TABLE_READERS = {
    ("store/__init__.py", "_config_url", "table"): ("[store]",),
    ("store/__init__.py", "_choice", "table"): ("[store]",),
    ("branches/roots.py", "_server_store", "table"): ("[store]",),
    ("branches/roots.py", "_entry_store", "entry"): ("[store]", "[roots]"),  # the shared [store] or a root's
    ("branches/roots.py", "load_roots", "entry"): ("[roots]",),
    ("branches/roots.py", "_root_item", "raw"): ("[roots]",),
    ("branches/roots.py", "registry_path", "table"): ("[registry]",),
}
# Config sections read into a dataclass: the class, and the prefix of each
# field's environment variable (``REPOLENS_EMBED_MODEL_PATH`` sets ``model_path``).
SECTION_CLASSES = {
    "[embed]": ("EmbedConfig", "REPOLENS_EMBED_"),
    "[rerank]": ("RerankConfig", "REPOLENS_RERANK_"),
}
ENV_NAME = re.compile(r"_?REPOLENS_[A-Z0-9_]*[A-Z0-9]")
# The heading of the section that describes the options many commands take.
SHARED_OPTIONS = "Options every command shares"


class Section(NamedTuple):
    doc: Path
    heading: str
    body: str


@cache
def _text() -> str:
    return "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)


def _headings(text: str) -> list[tuple[int, int, str]]:
    """(line number, level, title) of every markdown heading outside fenced blocks."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines()):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and (match := re.match(r"(#{1,6}) (.*)", line)):
            found.append((number, len(match.group(1)), match.group(2).strip()))
    return found


@cache
def _sections() -> tuple[Section, ...]:
    """Every heading's section: its lines up to the next heading of its level or above."""
    sections = []
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        heads = _headings("\n".join(lines))
        for i, (start, level, title) in enumerate(heads):
            end = next((n for n, lv, _ in heads[i + 1 :] if lv <= level), len(lines))
            sections.append(Section(doc, title, "\n".join(lines[start:end])))
    return tuple(sections)


def _sections_naming(pattern: str) -> str:
    """The bodies of every section whose heading matches ``pattern``, joined."""
    return "\n".join(s.body for s in _sections() if re.search(pattern, s.heading))


def _prose(text: str) -> str:
    """``text`` without its fenced blocks (a usage line names an option, it does not say what it does)."""
    return re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)


def _word(name: str) -> str:
    """``name`` as a whole word (``--path`` is not in ``--paths``, ``top_k`` not in ``top_kb``)."""
    return rf"(?<![\w-]){re.escape(name)}(?![\w-])"


def _commands() -> dict[str, click.Command]:
    return {name: command for name, command in sorted(cli.commands.items()) if not command.hidden}


def _modules() -> list[ast.Module]:
    return [ast.parse(path.read_text(encoding="utf-8")) for path in sorted(SRC.rglob("*.py"))]


def _keys_read(module: str, function: str, name: str) -> set[str]:
    """The string keys ``function`` of ``module`` reads of the dict it calls ``name``."""
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    body = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function), None)
    assert body is not None, f"no function {function} in {module}: update TABLE_READERS in {__file__}"

    def holder(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == name

    def literal(node: ast.expr) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    keys = set()
    for node in ast.walk(body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            key = literal(node.args[0]) if holder(node.func.value) and node.args else None
        elif isinstance(node, ast.Subscript):
            key = literal(node.slice) if holder(node.value) else None
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In):
            key = literal(node.left) if holder(node.comparators[0]) else None
        else:
            key = None
        keys |= {key} if key else set()
    assert keys, f"{function} in {module} reads no key of {name}: update TABLE_READERS in {__file__}"
    return keys


@cache
def _class_fields(name: str) -> tuple[str, ...]:
    """The annotated fields of the class ``name`` wherever it lives in src/repolens
    (read from the source, so a class moved to another module is still found)."""
    for module in _modules():
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef) and node.name == name:
                return tuple(
                    item.target.id
                    for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                )
    raise AssertionError(f"no class {name} in src/repolens: update SECTION_CLASSES in {__file__}")


def _constant(name: str) -> object:
    """The literal value of the module-level constant ``name`` in src/repolens."""
    for module in _modules():
        for node in module.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return ast.literal_eval(node.value)  # type: ignore[attr-defined]
    raise AssertionError(f"no constant {name} in src/repolens")


def _variables_read() -> set[str]:
    """Every string constant in src/repolens that is a whole ``REPOLENS_*`` name
    (``STORE_ENV = "REPOLENS_STORE"``, ``os.environ.get("REPOLENS_DEBUG")``)."""
    return {
        node.value
        for module in _modules()
        for node in ast.walk(module)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ENV_NAME.fullmatch(node.value)
    }


def _row_with(name: str) -> list[str]:
    """The table rows (or lines) of the docs that name the variable ``name``."""
    return [line for line in _text().splitlines() if re.search(_word(name), line)]


@pytest.mark.parametrize("name", list(_commands()))
def test_every_command_has_a_section_naming_each_option_argument_and_choice(name: str) -> None:
    body = _sections_naming(_word(f"repolens {name}"))
    assert body, f"no heading names `repolens {name}` in README.md or docs/*.md"
    prose = _prose(body + "\n" + _sections_naming(re.escape(SHARED_OPTIONS)))
    command = _commands()[name]
    missing = []
    for param in command.params:
        if isinstance(param, click.Option) and param.hidden:
            continue
        if isinstance(param, click.Argument):  # its usage line names it
            missing += (
                [] if re.search(_word(param.human_readable_name), body) else [param.human_readable_name]
            )
            continue
        words = [*param.opts, *param.secondary_opts]
        if isinstance(param.type, click.Choice):
            words.extend(str(choice) for choice in param.type.choices)
        missing += [w for w in words if not re.search(_word(w), prose)]
    assert missing == [], f"`repolens {name}`'s section does not name {missing}"


def test_every_command_is_in_the_readme_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| `repolens ")]
    assert [n for n in _commands() if not any(re.search(_word(f"repolens {n}"), r) for r in rows)] == []


def test_the_options_of_repolens_itself_are_documented() -> None:
    words = [w for p in cli.params for w in (*p.opts, *p.secondary_opts)] + ["--help", "-h"]
    assert [w for w in words if not re.search(_word(w), _text())] == []


def _tools() -> list[dict]:
    recorded = json.loads((SRC / "server" / "tool_list.json").read_text(encoding="utf-8"))
    return recorded["tools"]


@pytest.mark.parametrize("tool", _tools(), ids=lambda t: t["name"])
def test_every_mcp_tool_has_a_section_naming_each_argument(tool: dict) -> None:
    body = _sections_naming(rf"`{re.escape(tool['name'])}`")
    assert body, f"no heading names the MCP tool `{tool['name']}` in README.md or docs/*.md"
    arguments = tool["inputSchema"].get("properties", {})
    missing = [a for a in arguments if not re.search(rf"`{re.escape(a)}[`=]", body)]
    assert missing == [], f"the section of `{tool['name']}` does not name its arguments {missing}"


def test_every_mcp_prompt_is_documented() -> None:
    code = "\n".join(p.read_text(encoding="utf-8") for p in SRC.rglob("*.py"))
    prompts = re.findall(r"\.prompt\(\s*name=\"([^\"]+)\"", code)
    assert prompts, "no prompt found: the pattern above no longer matches how prompts are made"
    assert [p for p in prompts if f"`{p}`" not in _text()] == []


def _default_shown(value: object) -> set[str]:
    """How the docs may show a setting's default value."""
    if isinstance(value, bool):
        return {"true" if value else "false"}
    if isinstance(value, float):
        return {f"{value:g}", repr(value)}
    return {str(value)}


@pytest.mark.parametrize("field", fields(Settings), ids=lambda f: f.name)
def test_every_setting_is_a_row_with_its_variable_and_default(field) -> None:
    variable = f"REPOLENS_{field.name.upper()}"
    rows = [r for r in _row_with(variable) if r.startswith("|") and re.search(_word(field.name), r)]
    assert rows, f"no table row names the setting {field.name} with {variable}"
    cells = [c.strip().strip("`").strip() for c in rows[0].strip("|").split("|")]
    shown, default = cells[2], field.default
    if default in ("", ()):
        assert shown.startswith(("(none", "-")), f"{field.name} has no default; the docs say {shown}"
    else:
        assert shown in _default_shown(default), f"{field.name} defaults to {default!r}; the docs say {shown}"


@pytest.mark.parametrize("section", sorted(SECTION_CLASSES))
def test_every_key_of_embed_and_rerank_is_a_row_with_its_variable(section: str) -> None:
    class_name, prefix = SECTION_CLASSES[section]
    missing = [
        key
        for key in _class_fields(class_name)
        if not any(section in row and re.search(_word(key), row) for row in _row_with(prefix + key.upper()))
    ]
    assert missing == [], f"{section}: no row names these keys with their {prefix}* variable: {missing}"


def test_every_serve_key_and_every_key_of_roots_store_and_registry_is_documented() -> None:
    """Each key on a line of the docs that names its table (one of them, for a
    reader that may hold either)."""
    serve = ("server/config.py", "SERVE_KEYS", "serve")
    readers = {(serve, ("[serve]",)): set(_constant("SERVE_KEYS"))}  # type: ignore[arg-type]
    readers |= {(reader, tables): _keys_read(*reader) for reader, tables in TABLE_READERS.items()}
    lines = _text().splitlines()
    missing = [
        f"{'/'.join(tables)} {key} (read by {reader[-2]})"
        for (reader, tables), keys in readers.items()
        for key in sorted(keys)
        if not any(re.search(_word(key), line) and any(t in line for t in tables) for line in lines)
    ]
    assert missing == []


def test_every_key_of_a_registry_entry_is_in_the_documented_example() -> None:
    examples = re.findall(r"```toml\n(.*?)```", _text(), flags=re.S)
    entry = next((e for e in examples if "[[repository]]" in e), "")
    assert entry, "no TOML example of a registry entry ([[repository]]) in the docs"
    assert [k for k in _class_fields("RegistryEntry") if not re.search(rf"^{k} = ", entry, re.M)] == []


def test_every_repolens_variable_the_code_reads_is_documented() -> None:
    variables = _variables_read()
    assert "REPOLENS_STORE" in variables, "the constants are no longer found: fix _variables_read"
    assert sorted(v for v in variables if not re.search(_word(v), _text())) == []


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@pytest.mark.parametrize("doc", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_between_the_docs_leads_to_a_file_and_heading(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (doc.parent / path).resolve() if path else doc
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md":
            anchors = {_slug(title) for _, _, title in _headings(linked.read_text(encoding="utf-8"))}
            if anchor not in anchors:
                broken.append(target)
    assert broken == [], f"{doc.relative_to(ROOT)}: links that lead nowhere: {broken}"


def test_the_readme_runs_the_tests_as_ci_does() -> None:
    """The README's second command is the one ``.ci/run`` runs on a clean checkout."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    ci = [line.strip() for line in script.splitlines() if "pytest" in line]
    assert len(ci) == 1, f".ci/run runs the tests on {len(ci)} lines: update this test"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.strip() for block in re.findall(r"```sh\n(.*?)```", readme, flags=re.S)]
    assert ci[0] in blocks, "README.md does not show .ci/run's test command"


def test_the_readme_sample_reply_is_what_the_command_prints(make_repo) -> None:
    """The README shows a reply as ``repolens search`` prints it, for a
    repository of the shape it names (the tests' SAMPLE_FILES): the scores,
    lines and markers a packet really has, byte for byte."""
    from conftest import run_repolens

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n\$ repolens search (\"[^\"\n]+\")\n(.*?)```", readme, re.S)
    assert shown is not None, "README.md shows a search in a ```text block"
    root = make_repo()
    printed = run_repolens("search", json.loads(shown.group(1)), cwd=root)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == shown.group(2)
    assert printed.stderr.startswith("indexed 5 files") and f"-> {root / '.repolens'}" in printed.stderr
