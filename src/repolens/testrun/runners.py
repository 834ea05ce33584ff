"""The allow-list of test runners: which exist, which are installed at a root, the command each resolves to.

Nothing here looks at a run's arguments (``arguments``) or starts a process
(``process``); the table of runners and the pytest interpreter order are in
the package docstring.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repolens.errors import ConfigError, RunnerUnavailableError
from repolens.testrun.limits import show
from repolens.validate import resolve_root

RUNNER_NAMES: tuple[str, ...] = ("pytest", "npm", "pnpm", "yarn", "go", "cargo", "mvn", "gradle")


@dataclass(frozen=True)
class Spec:
    """How one allow-listed runner is found and which arguments it takes (see ``arguments``)."""

    name: str
    tool: str  # executable looked up on PATH
    subcommand: tuple[str, ...]
    markers: tuple[str, ...]  # project files at the root that suggest this runner
    paths: str  # positional arguments: "pytest" | "go" | "pattern" | "name" | "none"
    filter_flags: tuple[str, ...]  # accepted spellings of the filter flag ("-k" first)
    wrapper: str | None = None  # ./gradlew-style wrapper preferred over the tool


SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec(
            "pytest",
            "pytest",
            (),
            ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py", "setup.py"),
            "pytest",
            ("-k",),
        ),
        Spec("npm", "npm", ("test",), ("package.json",), "pattern", ()),
        Spec("pnpm", "pnpm", ("test",), ("pnpm-lock.yaml", "package.json"), "pattern", ()),
        Spec("yarn", "yarn", ("test",), ("yarn.lock", "package.json"), "pattern", ()),
        Spec("go", "go", ("test",), ("go.mod",), "go", ("-k", "-run")),
        Spec("cargo", "cargo", ("test",), ("Cargo.toml",), "name", ("-k",)),
        Spec("mvn", "mvn", ("-B", "test"), ("pom.xml",), "none", ("-k", "-Dtest="), "mvnw"),
        Spec(
            "gradle",
            "gradle",
            ("test", "--console=plain"),
            ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"),
            "none",
            ("-k", "--tests"),
            "gradlew",
        ),
    )
}


@dataclass(frozen=True)
class Runner:
    """An installed test runner: its name, the command it resolves to, and the project file that suggests it.

    ``marker`` is ``None`` when the tool is installed but nothing at the root
    looks like its project (npm is installed, but there is no package.json).
    """

    name: str
    command: tuple[str, ...]
    marker: str | None
    # pytest: which environment runs the tests and why, one phrase for the reply
    # ("the repository's .venv"); "" for the other runners
    via: str = ""

    def describe(self) -> str:
        where = f"  ({self.marker})" if self.marker else ""
        return f"{self.name}: {shlex.join(self.command)}{where}"


def available_runners(root: str | os.PathLike[str]) -> list[Runner]:
    """The allow-listed runners this repository can use, in ``RUNNER_NAMES`` order:
    the tool is installed and the root has its project file (pytest: also test
    files at the root or in ``tests/`` or ``test/``). An installed npm is no
    use to a repository without a package.json.

    Looked up afresh on every call (``PATH`` and the root's wrappers and
    virtualenvs can change between calls). Raises ``RootError`` for a bad root.
    """
    root_path = resolve_root(root)
    runners = [_runner(SPECS[name], root_path) for name in RUNNER_NAMES]
    return [r for r in runners if r is not None and r.marker is not None]


def resolve_runner(root: str | os.PathLike[str], name: str) -> Runner:
    """The runner ``name`` at ``root``, or ``RunnerUnavailableError`` naming the ones that are available."""
    root_path = resolve_root(root)
    spec = SPECS.get(name)
    if spec is None:
        raise RunnerUnavailableError(
            f"unknown test runner {show(name)}: use one of {', '.join(RUNNER_NAMES)} "
            f"({_available_text(root_path)})"
        )
    if name == "pytest":
        command, via = pytest_command(root_path)  # its own errors say which environment lacks what
        return Runner(name, command, _marker(spec, root_path), via)
    runner = _runner(spec, root_path)
    if runner is None:
        wrapper = f" and no ./{spec.wrapper} at the root" if spec.wrapper else ""
        raise RunnerUnavailableError(
            f"test runner {name!r} is not installed here ({spec.tool} not found on PATH{wrapper}): "
            f"{_available_text(root_path)}"
        )
    if runner.marker is None:  # installed, but this is no project of its (npm without a package.json)
        raise RunnerUnavailableError(
            f"test runner {name!r} does not apply here (the root has no {' or '.join(spec.markers)}): "
            f"{_available_text(root_path)}"
        )
    return runner


def render_runners(runners: Sequence[Runner]) -> str:
    """One line per runner, for the CLI and the MCP tool description of what can run."""
    if not runners:
        return (
            f"no test runner applies here (supported: {', '.join(RUNNER_NAMES)}; each needs its tool "
            "installed and its project file, such as package.json or go.mod, at the root)"
        )
    return "\n".join(r.describe() for r in runners)


def _runner(spec: Spec, root: Path) -> Runner | None:
    if spec.name == "pytest":
        try:
            command, via = pytest_command(root)
        except (RunnerUnavailableError, ConfigError):
            return None
        return Runner(spec.name, command, _marker(spec, root), via)
    command = _base_command(spec, root)
    if command is None:
        return None
    return Runner(spec.name, command, _marker(spec, root))


def _marker(spec: Spec, root: Path) -> str | None:
    """The file at ``root`` that makes it a project of ``spec``'s (its own
    wrapper, ``./gradlew``, is one), None when there is none."""
    wrappers = (spec.wrapper,) if spec.wrapper else ()
    marker = next((m for m in (*spec.markers, *wrappers) if (root / m).exists()), None)
    if marker is None and spec.name == "pytest":
        marker = _python_tests(root)
    return marker


def _python_tests(root: Path) -> str | None:
    """A pytest test file at the root or under ``tests/`` or ``test/`` (a project
    may have tests and no configuration file at all). The first match ends the walk."""
    for files in (root.glob, (root / "tests").rglob, (root / "test").rglob):
        for pattern in ("test_*.py", "*_test.py"):
            found = next((p for p in files(pattern) if p.is_file()), None)
            if found is not None:
                return found.relative_to(root).as_posix()
    return None


def _base_command(spec: Spec, root: Path) -> tuple[str, ...] | None:
    if spec.wrapper:
        wrapper = root / spec.wrapper
        if wrapper.is_file() and os.access(wrapper, os.X_OK):
            return (f"./{spec.wrapper}", *spec.subcommand)
    tool = shutil.which(spec.tool)
    return (tool, *spec.subcommand) if tool else None


# The repository's own environments, in the order they are tried.
VENVS = (".venv", "venv")
_HAS_PYTEST = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"


def pytest_command(root: Path) -> tuple[tuple[str, ...], str]:
    """pytest's command at ``root`` and which environment it is, from the
    repository alone, never from how repolens was installed: the configured
    ``test_python``, else ``.venv`` or ``venv`` at the root (the first whose
    interpreter imports pytest), else ``pytest`` on ``PATH``. A repository
    environment without pytest is refused (its tests would otherwise run
    without the project's dependencies), as is a configured interpreter
    that does not exist or lacks pytest."""
    from repolens.settings import load_settings

    configured = load_settings(root).test_python
    if configured:
        python = _configured_python(root, configured)
        if not _imports_pytest(python, root):
            raise RunnerUnavailableError(
                f"test_python {configured!r} cannot import pytest: install pytest there "
                f"(`{configured} -m pip install pytest`) or set test_python to an interpreter that has it"
            )
        return (python, "-m", "pytest"), "test_python (.repolens.toml or REPOLENS_TEST_PYTHON)"
    found = [root / v / "bin" / "python" for v in VENVS]
    found = [p for p in found if p.is_file() and os.access(p, os.X_OK)]
    for python in found:
        if _imports_pytest(str(python), root):
            return (str(python), "-m", "pytest"), f"the repository's {python.parent.parent.name}"
    if found:
        rel = found[0].relative_to(root).as_posix()
        raise RunnerUnavailableError(
            f"the repository's {found[0].parent.parent.name} has no pytest ({rel} cannot import it): "
            f"install it there (`{rel} -m pip install pytest`) or set test_python to an interpreter "
            "that has it"
        )
    tool = shutil.which("pytest")
    if tool is None:
        raise RunnerUnavailableError(
            "test runner 'pytest' is not installed here: the root has no .venv or venv, test_python is "
            "not set, and there is no pytest on PATH; create the project's .venv with pytest in it, or "
            "set test_python"
        )
    return (tool,), "pytest on PATH (the root has no .venv or venv, and test_python is not set)"


def _configured_python(root: Path, value: str) -> str:
    """``test_python`` as a path: relative to the root, or a command name looked up on PATH."""
    if "/" in value:
        path = Path(value).expanduser()
        path = path if path.is_absolute() else root / path
        found = str(path) if path.is_file() and os.access(path, os.X_OK) else None
    else:
        found = shutil.which(value)
    if found is None:
        raise ConfigError(
            f"test_python {value!r} is not an executable file (relative to the root) nor a command on "
            "PATH: set test_python (.repolens.toml or REPOLENS_TEST_PYTHON) to a Python interpreter"
        )
    return found


def _imports_pytest(python: str, root: Path) -> bool:
    """Whether ``python`` can import pytest, asked of it (a venv may see pytest
    through its system site-packages or a .pth file, not only its own folder)."""
    try:
        done = subprocess.run(
            [python, "-c", _HAS_PYTEST], cwd=root, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _available_text(root: Path) -> str:
    names = [r.name for r in available_runners(root)]
    return f"available here: {', '.join(names)}" if names else "no test runner applies here"
