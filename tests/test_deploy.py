"""deploy/ stays honest: every repolens command and flag its files use
exists, every variable compose reads is in .env.example (or has a default),
and the config files use only keys repolens knows. (No Docker here: this
test is what keeps the files true.)"""

from __future__ import annotations

import configparser
import re
import shlex
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import click
import pytest
import yaml

from repolens.branches.registry import load_registry
from repolens.cli.commands import cli
from repolens.server.config import SERVE_KEYS
from repolens.store import STORE_ENV

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
SRC = Path(__file__).resolve().parents[1] / "src" / "repolens"


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _command_lines() -> list[tuple[str, str]]:
    """(where, shell text) of every command the deploy files run."""
    found = []
    for name, service in _compose()["services"].items():
        for key in ("command", "entrypoint"):
            value = service.get(key)
            if value is None:
                continue
            argv = value if isinstance(value, list) else shlex.split(value)
            text = argv[-1] if argv[:2] == ["sh", "-c"] else shlex.join(argv)
            found.append((f"compose {name}.{key}", text))
    for unit in sorted((DEPLOY / "systemd").glob("*.service")):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.read(unit)
        found.append((unit.name, parser["Service"]["ExecStart"]))
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    for cmd in re.findall(r"^CMD (\[.*\])$", dockerfile, flags=re.M):
        found.append(("Dockerfile CMD", shlex.join(yaml.safe_load(cmd))))
    return found


def _repolens_invocations(text: str) -> list[list[str]]:
    """The argument lists of every ``repolens`` run in a line of shell."""
    runs = []
    for part in re.split(r";|&&|\|\||\n", text):
        words = shlex.split(part)
        for i, word in enumerate(words):
            if word == "repolens" or word.endswith("/repolens"):
                runs.append(words[i + 1 :])
                break
    return runs


def test_every_repolens_command_and_flag_in_deploy_exists():
    invocations = [(where, args) for where, text in _command_lines() for args in _repolens_invocations(text)]
    seen = {args[0] for _, args in invocations}
    assert {"serve", "refresh"} <= seen, "the server and the scheduled indexer are both deployed"
    for where, args in invocations:
        command = cli.commands.get(args[0])
        assert isinstance(command, click.Command), f"{where}: no command `repolens {args[0]}`"
        options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        for word in args[1:]:
            if word.startswith("-"):
                assert word.split("=", 1)[0] in options, f"{where}: `repolens {args[0]}` has no option {word}"


def test_compose_reads_only_variables_from_env_example_or_with_defaults():
    env_example = (DEPLOY / ".env.example").read_text()
    defined = set(re.findall(r"^([A-Z_][A-Z0-9_]*)=", env_example, flags=re.M))
    text = (DEPLOY / "compose.yaml").read_text()
    for name, rest in re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)(:?[-?][^}]*)?\}", text):
        assert name in defined or rest.startswith((":-", "-")), (
            f"compose reads ${{{name}}}: add it to .env.example"
        )
    assert {"REPOLENS_TOKEN", "POSTGRES_PASSWORD"} <= defined
    services = _compose()["services"]
    assert services["server"]["environment"]["REPOLENS_TOKEN"].startswith("${REPOLENS_TOKEN")
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")


def test_repolens_variables_in_deploy_are_read_by_repolens():
    code = "\n".join(p.read_text() for p in SRC.rglob("*.py"))
    used = set()
    for path in [*DEPLOY.glob("*"), *DEPLOY.glob("systemd/*")]:
        if path.is_file():
            used |= set(re.findall(r"\bREPOLENS_[A-Z_]+\b", path.read_text()))
    deploy_only = {"REPOLENS_IMAGE", "REPOLENS_PORT", "REPOLENS_REFRESH_SECONDS"}  # compose's own knobs
    for name in sorted(used - deploy_only):
        assert f'"{name}"' in code, f"{name} is not read by repolens (no constant names it)"


def _unit_environment(unit: str) -> dict[str, str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read(DEPLOY / "systemd" / unit)
    name, _, value = parser["Service"]["Environment"].partition("=")
    return {name: value}


def test_repolens_processes_use_the_postgresql_store_compose_starts():
    """The server and the indexer keep every index in the database of the
    compose file's pgvector service (its user and database; the password as
    libpq's PGPASSWORD from the same variable), never in local files."""
    services = _compose()["services"]
    database = next(s for s in services.values() if s["image"].startswith("pgvector/pgvector:"))
    db_env = database["environment"]
    for name in ("server", "indexer"):
        env = services[name]["environment"]
        url = urlsplit(env[STORE_ENV])
        assert (url.scheme, url.password) == ("postgresql", None), f"{name}: {env[STORE_ENV]}"
        assert services.get(url.hostname) is database, f"{name}: {url.hostname} is not the database service"
        assert (url.username, url.path.lstrip("/")) == (db_env["POSTGRES_USER"], db_env["POSTGRES_DB"])
        assert env["PGPASSWORD"] == db_env["POSTGRES_PASSWORD"]
        assert "REPOLENS_INDEX_DIR" not in env
    unit = urlsplit(_unit_environment("repolens-refresh.service")[STORE_ENV])
    assert (unit.scheme, unit.password, unit.path) == ("postgresql", None, "/repolens")


def test_every_variable_deploy_sets_for_repolens_is_documented():
    """Each variable a repolens process gets (compose, systemd) is in the docs:
    REPOLENS_* in the configuration reference, libpq's in the PostgreSQL section."""
    docs = [SRC.parents[1] / "README.md", *(SRC.parents[1] / "docs").glob("*.md")]
    readme = "\n".join(doc.read_text() for doc in docs)
    services = _compose()["services"]
    given = {key for name in ("server", "indexer") for key in services[name]["environment"]}
    given |= set(_unit_environment("repolens-refresh.service"))
    for name in sorted(given - {"REPOLENS_REFRESH_SECONDS"}):  # the indexer loop's own knob
        assert f"`{name}`" in readme, f"{name} is set by deploy/ but not documented in README.md or docs/"


def test_config_files_use_known_keys():
    config = tomllib.loads((DEPLOY / "repolens.toml").read_text())
    assert set(config) <= {"roots", "registry", "serve"}
    assert set(config["serve"]) <= set(SERVE_KEYS)
    assert set(config["registry"]) == {"path"} and (DEPLOY / config["registry"]["path"]).is_file()
    registry = load_registry(DEPLOY / config["registry"]["path"])
    assert set(registry.entries) == {"app", "docs"}


def _readme_install_commands() -> list[list[str]]:
    """The argument lists of the docs' install block for the systemd units
    (the ``sh`` block of "Deploying a server" in docs/serving.md), split at ``&&``."""
    serving = (SRC.parents[1] / "docs" / "serving.md").read_text()
    section = serving.split("## Deploying a server", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert block is not None, "the deployment section of docs/serving.md shows no install commands"
    commands: list[list[str]] = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        while "&&" in words:
            commands.append(words[: words.index("&&")])
            words = words[words.index("&&") + 1 :]
        if words:
            commands.append(words)
    return commands


def _copied(commands: list[list[str]]) -> dict[str, str]:
    """{where a file lands: the file in this checkout} for every `cp` of the commands."""
    landed = {}
    for command in commands:
        if command[0] == "cp":
            *sources, target = command[1:]
            for source in sources:
                landed[f"{target.rstrip('/')}/{Path(source).name}"] = source
    return landed


def test_the_readme_installs_the_program_user_and_files_the_systemd_unit_uses():
    """What `repolens-refresh.service` needs exists after the docs' steps:
    the program of ExecStart (in the virtual environment the docs make, with
    the postgres extra, since the unit's store is PostgreSQL), its User and
    Group (one `useradd` makes both, with the home ~/.pgpass lives in), the
    config file and the registry it names, and both units."""
    commands = _readme_install_commands()
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read(DEPLOY / "systemd" / "repolens-refresh.service")
    service = parser["Service"]
    run = shlex.split(service["ExecStart"])

    venvs = [c[3] for c in commands if c[:3] == ["python3", "-m", "venv"]]
    assert run[0] in [f"{v}/bin/repolens" for v in venvs], f"nothing installs {run[0]}"
    venv = run[0].removesuffix("/bin/repolens")
    pip = next(c for c in commands if c[0] == f"{venv}/bin/pip")
    assert pip[1] == "install" and [a for a in pip[2:] if a.endswith("[postgres]")], pip
    assert urlsplit(_unit_environment("repolens-refresh.service")[STORE_ENV]).scheme == "postgresql"

    useradd = next(c for c in commands if c[0] == "useradd")
    assert useradd[-1] == service["User"] == service["Group"]
    assert {"--system", "--user-group", "--create-home", "--home-dir"} <= set(useradd)
    assert {c[c.index("-u") + 1] for c in commands if c[0] == "sudo"} == {service["User"]}

    landed = _copied(commands)
    config = run[run.index("--config") + 1]
    assert landed.get(config) == "deploy/repolens.toml"
    registry = tomllib.loads((DEPLOY / "repolens.toml").read_text())["registry"]["path"]
    assert landed.get(str(Path(config).parent / registry)) == f"deploy/{registry}"
    for unit in ("repolens-refresh.service", "repolens-refresh.timer"):
        assert landed.get(f"/etc/systemd/system/{unit}") == f"deploy/systemd/{unit}"
    assert ["systemctl", "enable", "--now", "repolens-refresh.timer"] in commands


@pytest.mark.parametrize("unit", ["repolens-refresh.service", "repolens-refresh.timer"])
def test_systemd_units_parse(unit: str):
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.read(DEPLOY / "systemd" / unit)
    assert parser.sections()[0] == "Unit"
    if unit.endswith(".timer"):
        assert parser["Timer"]["OnUnitActiveSec"] and parser["Install"]["WantedBy"] == "timers.target"
    else:
        assert parser["Service"]["Type"] == "oneshot"
