"""Allow-listed, filtered test runs: run a project's tests, keep the lines that explain a failure.

``run_tests(root, runner, args)`` runs one command from a fixed allow-list in
``root`` and returns a :class:`TestRun`; ``render(run)`` is the exact text the
CLI prints and the MCP tool returns::

    $ /venv/bin/python -m pytest tests/test_x.py -k foo  ->  exit 1 in 2.3s
    <failure-relevant lines>
    [kept 14 of 212 lines (failure-relevant lines and their context); 198 dropped]

Safety model. Nothing goes through a shell: the command is an argv list built
here from a runner name and arguments that match a small grammar -- test paths
relative to the root, or one test filter (``-k EXPR``, translated per runner).
Anything else is refused with ``RunArgumentError`` before a process starts.
Running tests still executes the project's own code (conftest.py,
package.json scripts, build.rs); the allow-list bounds *which command* runs,
not what a project's tests do.

Runners and the command each resolves to (tools looked up on ``PATH``):

=======  ==============================================  =============================
runner   command                                         arguments
=======  ==============================================  =============================
pytest   PY -m pytest [PATH[::name]...] [-k EXPR]        PY: see below
npm      npm test [-- PATH...]                            paths or patterns for the script
pnpm     pnpm test [PATH...]                              pnpm passes a ``--`` literally
yarn     yarn test [PATH...]                              to the script, so none is added
go       go test [-run REGEX] (PKGDIR... | ./...)         ``-k`` or ``-run``
cargo    cargo test [NAME]                                one name filter (or ``-k NAME``)
mvn      ./mvnw or mvn: -B test [-Dtest=PATTERN]          ``-k`` or ``-Dtest=``
gradle   ./gradlew or gradle: test --console=plain        ``-k`` or ``--tests PATTERN``
         [--tests PATTERN]
=======  ==============================================  =============================

pytest interpreter, first that exists: ``<root>/.venv`` or ``<root>/venv``
with pytest installed (the project's own dependencies live there); else the
current interpreter when it can import pytest; else ``pytest`` on ``PATH``.

Process handling (POSIX only). The runner starts in a new session, with stdin
from /dev/null and stdout+stderr merged into one pipe that is read as it
streams. Only bounded state is kept (the matched lines inside the output
budget, the last ``tail_lines`` lines, one capped partial line), so a runner
printing 100 MB costs time, not memory. On timeout the whole process group gets
SIGTERM, then SIGKILL after a short grace, and the exit code is 124. After the
runner exits, whatever it left running in its group is killed too, so nothing
outlives the call (a process that starts its own session escapes this).

Environment: inherited, plus ``CI=1`` (non-interactive, no watch mode),
``NO_COLOR=1``, ``FORCE_COLOR=0``, ``PY_COLORS=0``, ``CARGO_TERM_COLOR=never``,
``TERM=dumb`` and ``PYTHONUNBUFFERED=1`` (so merged stdout/stderr keep their
order and a killed run still shows its last lines). ANSI escapes are stripped
anyway. ``PYTHONDONTWRITEBYTECODE`` is left alone: agents rerun tests often,
bytecode and pytest's rewritten-assert caches make reruns faster, and
``__pycache__`` is what the developer's own runs leave behind.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from repolens.errors import RootError, RunArgumentError, RunnerUnavailableError, UsageError

RUNNER_NAMES: tuple[str, ...] = ("pytest", "npm", "pnpm", "yarn", "go", "cargo", "mvn", "gradle")

DEFAULT_TIMEOUT_S = 300.0
MIN_TIMEOUT_S = 1.0
MAX_TIMEOUT_S = 3600.0
TIMEOUT_EXIT_CODE = 124  # what coreutils `timeout` reports; agents know it

DEFAULT_MAX_CHARS = 4000
DEFAULT_MAX_LINES = 200
DEFAULT_TAIL_LINES = 40
DEFAULT_CONTEXT = 1
_BOUNDS: dict[str, tuple[float, float]] = {
    "timeout_s": (MIN_TIMEOUT_S, MAX_TIMEOUT_S),
    "max_chars": (200, 1_000_000),
    "max_lines": (1, 10_000),
    "tail_lines": (1, 1_000),
    "context": (0, 10),
}

MAX_ARGS = 32
MAX_ARG_CHARS = 200
# A kept line is cut to this many characters; bytes past _LINE_MAX_BYTES of a
# line are never held, so one 50 MB line without a newline stays cheap.
LINE_MAX_CHARS = 500
_LINE_MAX_BYTES = 8 * LINE_MAX_CHARS

# After the runner exits, read what is still in the pipe for this long; a
# leftover child holding the pipe open must not keep the call waiting.
_DRAIN_S = 0.5
# On timeout: SIGTERM to the group, this long for the runner to exit, SIGKILL.
_TERM_GRACE_S = 2.0
_READ_CHUNK = 1 << 16

_CHILD_ENV = {
    "CI": "1",
    "NO_COLOR": "1",
    "FORCE_COLOR": "0",
    "PY_COLORS": "0",
    "CARGO_TERM_COLOR": "never",
    "TERM": "dumb",
    "PYTHONUNBUFFERED": "1",
}


# --------------------------------------------------------------------------- runners


@dataclass(frozen=True)
class _Spec:
    name: str
    tool: str  # executable looked up on PATH
    subcommand: tuple[str, ...]
    markers: tuple[str, ...]  # project files at the root that suggest this runner
    paths: str  # positional arguments: "pytest" | "go" | "pattern" | "name" | "none"
    filter_flags: tuple[str, ...]  # accepted spellings of the filter flag ("-k" first)
    wrapper: str | None = None  # ./gradlew-style wrapper preferred over the tool


_SPECS: dict[str, _Spec] = {
    s.name: s
    for s in (
        _Spec(
            "pytest",
            "pytest",
            (),
            ("pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "conftest.py", "setup.py"),
            "pytest",
            ("-k",),
        ),
        _Spec("npm", "npm", ("test",), ("package.json",), "pattern", ()),
        _Spec("pnpm", "pnpm", ("test",), ("pnpm-lock.yaml", "package.json"), "pattern", ()),
        _Spec("yarn", "yarn", ("test",), ("yarn.lock", "package.json"), "pattern", ()),
        _Spec("go", "go", ("test",), ("go.mod",), "go", ("-k", "-run")),
        _Spec("cargo", "cargo", ("test",), ("Cargo.toml",), "name", ("-k",)),
        _Spec("mvn", "mvn", ("-B", "test"), ("pom.xml",), "none", ("-k", "-Dtest="), "mvnw"),
        _Spec(
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

    def describe(self) -> str:
        where = f"  ({self.marker})" if self.marker else ""
        return f"{self.name}: {shlex.join(self.command)}{where}"


def available_runners(root: str | os.PathLike[str]) -> list[Runner]:
    """The allow-listed runners whose tool is installed, in ``RUNNER_NAMES`` order.

    Looked up afresh on every call (``PATH`` and the root's wrappers and
    virtualenvs can change between calls). Raises ``RootError`` for a bad root.
    """
    root_path = _resolve_root(root)
    runners = []
    for name in RUNNER_NAMES:
        runner = _runner(_SPECS[name], root_path)
        if runner is not None:
            runners.append(runner)
    return runners


def resolve_runner(root: str | os.PathLike[str], name: str) -> Runner:
    """The runner ``name`` at ``root``, or ``RunnerUnavailableError`` naming the ones that are available."""
    root_path = _resolve_root(root)
    spec = _SPECS.get(name)
    if spec is None:
        raise RunnerUnavailableError(
            f"unknown test runner {_show(name)}: use one of {', '.join(RUNNER_NAMES)} "
            f"({_available_text(root_path)})"
        )
    runner = _runner(spec, root_path)
    if runner is None:
        wrapper = f" and no ./{spec.wrapper} at the root" if spec.wrapper else ""
        raise RunnerUnavailableError(
            f"test runner {name!r} is not installed here ({spec.tool} not found on PATH{wrapper}): "
            f"{_available_text(root_path)}"
        )
    return runner


def render_runners(runners: Sequence[Runner]) -> str:
    """One line per runner, for the CLI and the MCP tool description of what can run."""
    if not runners:
        return f"no test runner is installed (supported: {', '.join(RUNNER_NAMES)})"
    return "\n".join(r.describe() for r in runners)


def _runner(spec: _Spec, root: Path) -> Runner | None:
    command = _base_command(spec, root)
    if command is None:
        return None
    marker = next((m for m in spec.markers if (root / m).exists()), None)
    return Runner(spec.name, command, marker)


def _base_command(spec: _Spec, root: Path) -> tuple[str, ...] | None:
    if spec.name == "pytest":
        return _pytest_command(root)
    if spec.wrapper:
        wrapper = root / spec.wrapper
        if wrapper.is_file() and os.access(wrapper, os.X_OK):
            return (f"./{spec.wrapper}", *spec.subcommand)
    tool = shutil.which(spec.tool)
    return (tool, *spec.subcommand) if tool else None


def _pytest_command(root: Path) -> tuple[str, ...] | None:
    # The project's own virtualenv first: it has the project's dependencies,
    # which repolens's interpreter usually lacks.
    for venv in (".venv", "venv"):
        python = root / venv / "bin" / "python"
        if (
            python.is_file()
            and os.access(python, os.X_OK)
            and any((root / venv / "lib").glob("python3*/site-packages/pytest/__init__.py"))
        ):
            return (str(python), "-m", "pytest")
    if importlib.util.find_spec("pytest") is not None:
        return (sys.executable, "-m", "pytest")
    tool = shutil.which("pytest")
    return (tool,) if tool else None


def _available_text(root: Path) -> str:
    names = [r.name for r in available_runners(root)]
    return f"available here: {', '.join(names)}" if names else "no test runner is installed here"


# --------------------------------------------------------------------------- arguments

# Conservative characters for a path: no spaces, quotes, globs, `$`, `;`, `~`.
_PATH_CHARS = re.compile(r"[A-Za-z0-9_./-]+")
_NODE_ID = re.compile(r"[A-Za-z0-9_]+")
_FILTER_CHARS: dict[str, tuple[re.Pattern[str], str]] = {
    "pytest": (
        re.compile(r"[A-Za-z0-9_ .()\[\]-]+"),
        "letters, digits, spaces and _ . - ( ) [ ] (with and, or, not)",
    ),
    "go": (
        re.compile(r"[A-Za-z0-9_^$|.*+?()\[\]/-]+"),
        "a regular expression of letters, digits, _ ^ $ | . * + ? ( ) [ ] / -",
    ),
    "cargo": (re.compile(r"[A-Za-z0-9_:]+"), "a test name of letters, digits, _ and ::"),
    "mvn": (re.compile(r"[A-Za-z0-9_.#*,+$-]+"), "Class, Class#method, * wildcards, lists joined by ,"),
    "gradle": (re.compile(r"[A-Za-z0-9_.*$]+"), "a class or method pattern of letters, digits, _ . * $"),
}
_CONTROL_OR_NON_ASCII = re.compile(r"[^\x20-\x7e]")


def build_command(root: str | os.PathLike[str], runner: Runner, args: Sequence[str]) -> tuple[str, ...]:
    """The full argv for ``runner`` with ``args``, validated; nothing is run.

    ``args`` are test paths (relative, inside ``root``, no ``..``, no leading
    ``-``, characters ``A-Za-z0-9_./-``; pytest also ``path::name``; go
    package directories, optionally ending in ``/...``; cargo one test name)
    and at most one filter: ``-k EXPR`` for every runner with a filter, or the
    runner's own spelling (``-run``, ``-Dtest=``, ``--tests``). Raises
    ``RunArgumentError`` (a ``UsageError``) naming what is allowed.
    """
    root_path = _resolve_root(root)
    spec = _SPECS[runner.name]
    if isinstance(args, str) or not isinstance(args, Sequence):
        raise RunArgumentError(f"arguments must be a list of strings: {_allowed(spec)}")
    if len(args) > MAX_ARGS:
        raise RunArgumentError(f"too many arguments ({len(args)}, at most {MAX_ARGS}): {_allowed(spec)}")
    positionals: list[str] = []
    filter_expr: str | None = None
    i = 0
    while i < len(args):
        arg = _check_text(args[i], spec)
        flag, value, used = _split_filter_flag(spec, args, i)
        if flag is not None:
            if filter_expr is not None:
                raise RunArgumentError(
                    f"only one test filter is allowed, got a second {flag!r}: {_allowed(spec)}"
                )
            filter_expr = _check_filter(spec, _check_text(value, spec) if value is not None else None, flag)
            i += used
            continue
        if arg.startswith("-"):
            raise RunArgumentError(f"option {_show(arg)} is not allowed: {_allowed(spec)}")
        positionals.append(_check_positional(spec, arg, root_path))
        i += 1
    if spec.paths == "name" and len(positionals) + (filter_expr is not None) > 1:
        raise RunArgumentError(f"cargo takes one test name filter, got several: {_allowed(spec)}")
    return (*runner.command, *_assemble(spec, positionals, filter_expr))


def _assemble(spec: _Spec, positionals: list[str], filter_expr: str | None) -> list[str]:
    if spec.name == "pytest":
        return [*positionals, *(["-k", filter_expr] if filter_expr is not None else [])]
    if spec.name == "npm":
        return ["--", *positionals] if positionals else []
    if spec.name in ("pnpm", "yarn"):
        return positionals
    if spec.name == "go":
        run = ["-run", filter_expr] if filter_expr is not None else []
        return [*run, *(positionals or ["./..."])]
    if spec.name == "cargo":
        return [filter_expr] if filter_expr is not None else positionals
    if spec.name == "mvn":
        return [f"-Dtest={filter_expr}"] if filter_expr is not None else []
    if spec.name == "gradle":
        return ["--tests", filter_expr] if filter_expr is not None else []
    raise AssertionError(spec.name)  # every spec is handled above


def _split_filter_flag(spec: _Spec, args: Sequence[str], i: int) -> tuple[str | None, str | None, int]:
    """(flag, value, arguments consumed) when ``args[i]`` is a filter flag, else (None, None, 0)."""
    arg = args[i]
    for flag in spec.filter_flags:
        if flag.endswith("="):
            if arg.startswith(flag):
                return flag, arg[len(flag) :], 1
        elif arg == flag:
            return flag, (args[i + 1] if i + 1 < len(args) else None), 2
    return None, None, 0


def _check_text(arg: object, spec: _Spec) -> str:
    if not isinstance(arg, str):
        raise RunArgumentError(f"argument {_show(arg)} is not a string: {_allowed(spec)}")
    if not arg:
        raise RunArgumentError(f"empty argument: {_allowed(spec)}")
    if len(arg) > MAX_ARG_CHARS:
        raise RunArgumentError(
            f"argument {_show(arg)} is longer than {MAX_ARG_CHARS} characters: {_allowed(spec)}"
        )
    if _CONTROL_OR_NON_ASCII.search(arg):
        raise RunArgumentError(
            f"argument {_show(arg)} contains a control or non-ASCII character: {_allowed(spec)}"
        )
    return arg


def _check_filter(spec: _Spec, expr: str | None, flag: str) -> str:
    if expr is None:
        raise RunArgumentError(f"{flag} needs a value: {_allowed(spec)}")
    chars, what = _FILTER_CHARS[spec.name]
    if expr.startswith("-") or not chars.fullmatch(expr) or not expr.strip():
        raise RunArgumentError(f"{flag} {_show(expr)} is not allowed: {spec.name} filters are {what}")
    return expr


def _check_positional(spec: _Spec, arg: str, root: Path) -> str:
    if spec.paths == "none":
        raise RunArgumentError(f"{spec.name} takes no test paths, got {_show(arg)}: {_allowed(spec)}")
    if spec.paths == "name":
        return _check_filter(spec, arg, "test name")
    path, _, node = arg.partition("::") if spec.paths == "pytest" else (arg, "", "")
    if node and not all(_NODE_ID.fullmatch(part) for part in node.split("::")):
        raise RunArgumentError(f"test id {_show(arg)} is not allowed: {_allowed(spec)}")
    if path.startswith("/"):
        raise RunArgumentError(f"{_show(arg)} is an absolute path: pass a path relative to the root")
    if not _PATH_CHARS.fullmatch(path):
        raise RunArgumentError(f"argument {_show(arg)} is not allowed: {_allowed(spec)}")
    parts = path.split("/")
    if ".." in parts:
        raise RunArgumentError(f"{_show(arg)} leaves the root: pass a path inside it, without '..'")
    if spec.paths == "go":
        if "..." in parts[:-1]:
            raise RunArgumentError(f"{_show(arg)}: '...' may only end a package path, as in pkg/...")
        directory = "/".join(parts[:-1]) if parts[-1] == "..." else path
        _check_inside(arg, root, directory or ".", must_exist=True)
        return path if path.startswith("./") or path == "." else f"./{path}"
    _check_inside(arg, root, path, must_exist=spec.paths == "pytest")
    return arg


def _check_inside(arg: str, root: Path, path: str, *, must_exist: bool) -> None:
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise RunArgumentError(f"{_show(arg)} resolves outside the root: pass a path inside it")
    if must_exist and not target.exists():
        raise RunArgumentError(f"test path {_show(arg)} does not exist under {root}: pass an existing path")


def _allowed(spec: _Spec) -> str:
    if spec.paths == "name":
        return (
            f"{spec.name} accepts one test name filter, as NAME or -k NAME; no other options, no shell syntax"
        )
    what = {
        "pytest": "test paths inside the root (letters, digits, _ . - /, optionally ::test_name)",
        "go": "package directories inside the root (optionally ending in /...)",
        "pattern": "test paths or patterns inside the root (letters, digits, _ . - /)",
        "none": "",
    }[spec.paths]
    flags = " or ".join(f"{f}FILTER" if f.endswith("=") else f"{f} FILTER" for f in spec.filter_flags)
    parts = [p for p in (what, f"one filter {flags}" if flags else "") if p]
    accepts = " and ".join(parts) if parts else "no arguments"
    return f"{spec.name} accepts {accepts}; no other options, no shell syntax"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- output filter

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# A line is failure-relevant when it starts like a failure line, names a
# file:line, or holds a failure word. Python's re tries every branch of an
# alternation at every position (~100 us for a 500-character line), so
# anchored patterns use match(), and the word patterns run only on lines that
# pass a cheap substring test: a runner printing a million lines stays fast.
_RELEVANT_START = re.compile(
    "|".join(
        (
            # pytest: explanation lines, the failing source line, the section naming the test
            r"E\s",
            r">\s{2,}",
            r"_{3,} .+ _{3,}$",
            # Python frames; rust assert_eq values; jest code frames; TAP "not ok" and summary
            r'\s*File "[^"]+", line \d+',
            r"\s*(?:left|right)\s*:",
            r"\s*>\s*\d+\s*\|",
            r"\s*\|\s*\^",
            r"\s*not ok\b",
            r"# (?:pass|fail|tests|cancelled) \d+",
            # go goroutine dumps, rustc locations, cargo's per-test output sections
            r"goroutine \d+ \[",
            r"\s*--> ",
            r"---- .+ ----$",
        )
    )
)
# file:line anywhere (pytest short tracebacks, go, jest, java, rustc); no path
# prefix in the pattern: `[\w/]+\.py` backtracks quadratically on long lines.
_FILE_LINE = re.compile(
    r"\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|kts|scala|rb|php|cs|c|cc|cpp|h|hpp|swift):\d+"
)
_FAILURE_MARKS = ("●", "✕", "✗", "×", "✖")  # jest, vitest, node
_RELEVANT_WORDS = re.compile(
    "|".join(
        (
            # failure words in most runners; \b keeps `test_error_path` out (_ is a word character)
            r"\b(?:[Ee]rrors?|ERR!?|ERRORS?|[Ff]ail(?:s|ed|ing|ures?)?|FAIL(?:ED|URES?)?)\b",
            r"\b(?:[Pp]anic(?:ked)?|[Ee]xceptions?|[Aa]ssert(?:ion)?|Traceback|Caused by)\b",
            r"(?:Error|Exception)\b",  # TypeError, RuntimeException
            # summaries: "3 failed, 10 passed", "test result:", "Tests run: 5, Failures: 1"
            r"\b\d+ (?:passed|failed|failing|passing|errors?|skipped|pending|todo|xfailed|xpassed"
            r"|deselected)\b",
            r"\btest result:|\bTests run:|\bTest Suites:|\bTests:\s",
            # expected/received pairs (jest, junit, node:assert)
            r"\b(?:[Ee]xpected|[Rr]eceived|[Aa]ctual|but was)\b",
        )
    )
)
# Every _RELEVANT_WORDS match contains one of these (lower-cased).
_WORD_HINTS = (
    "err",
    "fail",
    "panic",
    "exception",
    "assert",
    "traceback",
    "caused by",
    "pass",
    "skip",
    "pending",
    "todo",
    "deselected",
    "test result:",
    "tests run:",
    "test suites:",
    "tests:",
    "expected",
    "received",
    "actual",
    "but was",
)

# Lines that are never kept, not even as context: passing tests and runner internals.
_NOISE_START = re.compile(
    "|".join(
        (
            r"\s*(?:✓|✔|√)\s",
            r"\s*ok\b",
            r"\s*PASS\s",
            r"=== (?:RUN|PAUSE|CONT|NAME)\b",
            r"(?:collecting \.\.\. )?collected \d+ items?\b",  # pytest's header, even with "/ 1 deselected"
            r"\s*--- (?:PASS|SKIP)\b",
            # frames inside test frameworks, the JDK, node, Python's stdlib and Rust's std
            r"\s+at .*(?:node_modules|node:internal|\(internal/|java\.base/|jdk\.internal|org\.junit\."
            r"|sun\.reflect|org\.apache\.maven)",
            r'\s*File "[^"]*(?:site-packages|/lib/python3\.\d+/)',
            r"\s+at /rustc/|\s+\d+: (?:__rustc|core|std|alloc|test)::|\s+\d+: <fn\(",
        )
    )
)
_NOISE_ANYWHERE = re.compile(r"\bPASSED\b|\.\.\. ok$|\(node:[\w/]+:\d+:\d+\)$")
_NOISE_HINTS = ("PASSED", "... ok", "(node:")


def is_noise(line: str) -> bool:
    """A passing-test line or a framework-internal frame: never kept, not even as context."""
    if _NOISE_START.match(line):
        return True
    return any(h in line for h in _NOISE_HINTS) and _NOISE_ANYWHERE.search(line) is not None


def is_relevant(line: str) -> bool:
    """A line that helps explain a failure: error, assertion, frame, file:line, summary counts."""
    if _RELEVANT_START.match(line) or _FILE_LINE.search(line) or any(m in line for m in _FAILURE_MARKS):
        return True
    lowered = line.lower()
    return any(h in lowered for h in _WORD_HINTS) and _RELEVANT_WORDS.search(line) is not None


@dataclass(frozen=True)
class FilteredOutput:
    """What survives filtering: ``text`` and the counts that describe the cut.

    ``filtered`` is True when failure-relevant lines were found (else ``text``
    is the tail of the output); ``truncated`` when the budget dropped lines
    the rule would have kept. ``lines_matched`` counts relevant lines plus
    their context before the budget.
    """

    text: str
    lines_total: int
    lines_kept: int
    lines_matched: int
    filtered: bool
    truncated: bool


def clean_line(line: str, *, cut: bool = False) -> str:
    """One output line as kept: ANSI and control codes removed, ``\\r`` overwrites applied, capped."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\r" in line:
        # A terminal shows what follows the last carriage return (progress bars).
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    line = _CONTROL.sub("", line).rstrip()
    if cut or len(line) > LINE_MAX_CHARS:
        line = line[:LINE_MAX_CHARS] + "…"
    return line


class _LineFilter:
    """Streaming filter: feed cleaned lines one by one; memory stays within the budget."""

    def __init__(self, *, max_chars: int, max_lines: int, tail_lines: int, context: int) -> None:
        self.max_chars = max_chars
        self.max_lines = max_lines
        self.context = context
        self.total = 0
        self.matched = 0
        self._ink = 0  # non-blank lines so far: a gap of blank lines only needs no marker
        self._kept: deque[tuple[int, int, str]] = deque()  # (line number, ink, text)
        self._kept_chars = 0
        # text None marks a blank or noise line: it holds a place but is never shown
        self._before: deque[tuple[int, int, str | None]] = deque(maxlen=context)
        self._after = 0
        self._tail: deque[tuple[int, str]] = deque(maxlen=tail_lines)

    def add(self, line: str) -> None:
        self.total += 1
        number = self.total
        self._tail.append((number, line))
        blank = not line.strip()
        self._ink += not blank
        keepable = not blank and not is_noise(line)
        if keepable and is_relevant(line):
            for before_number, before_ink, before_text in self._before:
                if before_text is not None:
                    self._keep(before_number, before_ink, before_text)
            self._before.clear()
            self._keep(number, self._ink, line)
            self._after = self.context
        elif self._after > 0:
            self._after -= 1
            if keepable:
                self._keep(number, self._ink, line)
        elif self.context:
            self._before.append((number, self._ink, line if keepable else None))

    def _keep(self, number: int, ink: int, line: str) -> None:
        self.matched += 1
        self._kept.append((number, ink, line))
        self._kept_chars += len(line) + 1
        # The result is a tail of the kept lines, so older ones past the budget can go now.
        while len(self._kept) > 1 and (len(self._kept) > self.max_lines or self._kept_chars > self.max_chars):
            self._kept_chars -= len(self._kept.popleft()[2]) + 1

    def result(self) -> FilteredOutput:
        if self.matched:
            window = _tail_window(_with_gap_markers(self._kept), self.max_chars, self.max_lines)
            shown = sum(1 for number, _ in window if number is not None)
            return FilteredOutput(
                "\n".join(text for _, text in window),
                self.total,
                shown,
                self.matched,
                True,
                shown < self.matched,
            )
        window = _tail_window(list(self._tail), self.max_chars, self.max_lines)
        return FilteredOutput(
            "\n".join(text for _, text in window), self.total, len(window), 0, False, len(window) < self.total
        )


def _with_gap_markers(kept: Iterable[tuple[int, int, str]]) -> list[tuple[int | None, str]]:
    """Kept lines with gaps shown: ``[... N lines ...]`` where text was skipped, a blank line for blanks."""
    out: list[tuple[int | None, str]] = []
    previous: tuple[int, int] | None = None
    for number, ink, text in kept:
        if previous is not None and number > previous[0] + 1:
            skipped = number - previous[0] - 1
            skipped_ink = ink - previous[1] - 1
            out.append(
                (None, f"[... {skipped} line{'s' if skipped != 1 else ''} ...]" if skipped_ink else "")
            )
        out.append((number, text))
        previous = (number, ink)
    return out


def _tail_window(
    items: Sequence[tuple[int | None, str]], max_chars: int, max_lines: int
) -> list[tuple[int | None, str]]:
    """The longest suffix of ``items`` within the budget, without a leading gap marker or blank."""
    chosen: list[tuple[int | None, str]] = []
    chars = lines = 0
    for number, text in reversed(items):
        cost = len(text) + 1
        if not chosen and cost > max_chars:
            # a single line longer than the whole budget: show its start rather than nothing
            text = text[: max_chars - 2] + "…"
            cost = max_chars
        if chars + cost > max_chars or (number is not None and lines >= max_lines):
            break
        chosen.append((number, text))
        chars += cost
        lines += number is not None
    while chosen and chosen[-1][0] is None:
        chosen.pop()
    chosen.reverse()
    return chosen


def filter_output(
    lines: Iterable[str],
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_lines: int = DEFAULT_MAX_LINES,
    tail_lines: int = DEFAULT_TAIL_LINES,
    context: int = DEFAULT_CONTEXT,
) -> FilteredOutput:
    """Keep failure-relevant lines (with ``context`` lines around each), tail-capped to the budget.

    When nothing is relevant the last ``tail_lines`` lines are kept instead.
    ``text`` never exceeds ``max_chars`` characters or ``max_lines`` lines;
    a gap in the kept lines shows as ``[... N lines ...]``.
    """
    _check_bounds(max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context)
    sink = _LineFilter(max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context)
    for line in lines:
        sink.add(clean_line(line))
    return sink.result()


class _LineSplitter:
    """Bytes in, cleaned lines out; holds at most one partial line of ``_LINE_MAX_BYTES``."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._buf = bytearray()
        self._cut = False

    def feed(self, data: bytes) -> None:
        pieces = data.split(b"\n")
        for piece in pieces[:-1]:
            self._append(piece)
            self._flush()
        self._append(pieces[-1])

    def close(self) -> None:
        if self._buf or self._cut:
            self._flush()

    def _append(self, piece: bytes) -> None:
        room = _LINE_MAX_BYTES - len(self._buf)
        if len(piece) > room:
            self._cut = True
            piece = piece[: max(room, 0)]
        self._buf += piece

    def _flush(self) -> None:
        self._emit(clean_line(self._buf.decode("utf-8", errors="replace"), cut=self._cut))
        self._buf.clear()
        self._cut = False


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class TestRun:
    """One finished run. ``render(run)`` is its text for people and agents.

    ``exit_code`` is the runner's own, 124 after a timeout, and 128+N when a
    signal N ended it. ``text`` holds the kept output lines (see
    ``filter_output``); ``notes`` are one-line remarks (timeout, signal).
    """

    __test__ = False  # not a pytest test class, despite the name

    runner: str
    argv: tuple[str, ...]
    exit_code: int
    duration_s: float
    timed_out: bool
    text: str
    lines_total: int
    lines_kept: int
    lines_matched: int
    filtered: bool
    truncated: bool
    notes: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    @property
    def lines_dropped(self) -> int:
        return self.lines_total - self.lines_kept


def run_tests(
    root: str | os.PathLike[str],
    runner: str,
    args: Sequence[str] = (),
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_lines: int = DEFAULT_MAX_LINES,
    tail_lines: int = DEFAULT_TAIL_LINES,
    context: int = DEFAULT_CONTEXT,
) -> TestRun:
    """Run the allow-listed ``runner`` with ``args`` in ``root`` and keep the failure-relevant output.

    Validates everything before starting a process: ``RootError`` for a bad
    root, ``RunnerUnavailableError`` for an unknown or uninstalled runner,
    ``RunArgumentError`` for arguments outside the grammar of
    ``build_command``, ``UsageError`` for budgets outside their bounds
    (timeout 1-3600 s, max_chars 200-1,000,000, max_lines 1-10,000,
    tail_lines 1-1,000, context 0-10). A failing test run is a result, not an
    error: look at ``exit_code``.
    """
    if os.name != "posix":
        raise RunnerUnavailableError(
            "test runs need a POSIX system (process groups): run repolens on Linux or macOS"
        )
    _check_bounds(
        timeout_s=timeout_s, max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context
    )
    root_path = _resolve_root(root)
    resolved = resolve_runner(root_path, runner)
    argv = build_command(root_path, resolved, args)
    sink = _LineFilter(max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context)
    splitter = _LineSplitter(sink.add)
    started = time.monotonic()
    returncode, timed_out = _run_process(argv, root_path, splitter, timeout_s)
    duration = time.monotonic() - started
    splitter.close()
    notes: list[str] = []
    if timed_out:
        exit_code = TIMEOUT_EXIT_CODE
        notes.append(
            f"timed out after {timeout_s:g}s: the process group was killed; pass a longer timeout to wait"
        )
    elif returncode < 0:
        exit_code = 128 - returncode
        notes.append(f"the runner was killed by signal {_signal_name(-returncode)}")
    else:
        exit_code = returncode
    out = sink.result()
    return TestRun(
        runner=resolved.name,
        argv=argv,
        exit_code=exit_code,
        duration_s=duration,
        timed_out=timed_out,
        text=out.text,
        lines_total=out.lines_total,
        lines_kept=out.lines_kept,
        lines_matched=out.lines_matched,
        filtered=out.filtered,
        truncated=out.truncated,
        notes=tuple(notes),
    )


def render(run: TestRun) -> str:
    """The reply: a ``$ command  ->  exit N in Ts`` line, the kept lines, a trailer, then any notes."""
    lines = [f"$ {run.command}  ->  exit {run.exit_code} in {run.duration_s:.1f}s"]
    if run.text:
        lines.append(run.text)
    lines.append(_trailer(run))
    lines.extend(f"[{note}]" for note in run.notes)
    return "\n".join(lines)


def _trailer(run: TestRun) -> str:
    if run.lines_total == 0:
        return "[no output]"
    if not run.filtered:
        if run.lines_dropped == 0:
            return f"[no failure-relevant line matched; kept all {run.lines_total} lines]"
        return (
            f"[no failure-relevant line matched; kept the last {run.lines_kept} of {run.lines_total} lines; "
            f"{run.lines_dropped} dropped]"
        )
    text = (
        f"[kept {run.lines_kept} of {run.lines_total} lines (failure-relevant lines and their context); "
        f"{run.lines_dropped} dropped"
    )
    if run.truncated:
        cut = run.lines_matched - run.lines_kept
        text += f"; the output budget cut {cut} earlier relevant line{'s' if cut != 1 else ''}"
    return text + "]"


def _run_process(
    argv: tuple[str, ...], cwd: Path, splitter: _LineSplitter, timeout_s: float
) -> tuple[int, bool]:
    """Run ``argv`` in its own session, stream merged output into ``splitter``; (returncode, timed_out)."""
    env = {**os.environ, **_CHILD_ENV}
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            shell=False,
            start_new_session=True,
        )
    except OSError as exc:
        raise RunnerUnavailableError(
            f"cannot start {argv[0]}: {exc.strerror or exc}: check that it is installed and executable"
        ) from exc
    assert proc.stdout is not None
    timed_out = False
    try:
        timed_out = _pump(proc, splitter, time.monotonic() + timeout_s)
    finally:
        # Whatever the runner left behind in its group goes too; the group id
        # stays reserved until the runner (not yet reaped) is waited for.
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    return proc.returncode, timed_out


def _pump(proc: subprocess.Popen[bytes], splitter: _LineSplitter, deadline: float) -> bool:
    """Read until the runner exits and the pipe is drained (or the drain grace ends); True on timeout."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    timed_out = False
    ended_at: float | None = None
    pipe_open = True
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if ended_at is None:
                if _has_exited(proc):
                    ended_at = now
                elif now >= deadline:
                    timed_out = True
                    _terminate_group(proc)
                    ended_at = now = time.monotonic()
            if ended_at is not None and (not pipe_open or now - ended_at >= _DRAIN_S):
                return timed_out
            wait = 0.05 if ended_at is not None else min(0.25, max(deadline - now, 0.0))
            if not pipe_open:
                time.sleep(wait)
                continue
            if selector.select(wait):
                pipe_open = _read_available(fd, splitter)
                if not pipe_open:
                    selector.unregister(fd)


def _read_available(fd: int, splitter: _LineSplitter) -> bool:
    """Read what the pipe holds now (a few chunks at most); False at end of file."""
    for _ in range(16):
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return True
        if not data:
            return False
        splitter.feed(data)
    return True


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """True once the runner has exited, without reaping it (its pid keeps naming the group)."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # pragma: no cover - platforms without waitid
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _terminate_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group, up to ``_TERM_GRACE_S`` for the runner to exit, then SIGKILL to the group."""
    _signal_group(proc.pid, signal.SIGTERM)
    give_up = time.monotonic() + _TERM_GRACE_S
    while time.monotonic() < give_up and not _has_exited(proc):
        time.sleep(0.05)
    _signal_group(proc.pid, signal.SIGKILL)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
        os.killpg(pgid, sig)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


# --------------------------------------------------------------------------- helpers


def _resolve_root(root: str | os.PathLike[str]) -> Path:
    # Same contract as store.layout.resolve_root, without importing the store (sqlite, tantivy).
    path = Path(root).expanduser()
    if not path.is_dir():
        state = "is not a directory" if path.exists() else "does not exist"
        raise RootError(f"repository root {path} {state}: pass an existing directory with --root")
    return path.resolve()


def _check_bounds(**values: float) -> None:
    for key, value in values.items():
        lo, hi = _BOUNDS[key]
        kinds = (int, float) if key == "timeout_s" else (int,)
        if isinstance(value, bool) or not isinstance(value, kinds) or not lo <= value <= hi:
            what = "a number" if key == "timeout_s" else "an integer"
            raise UsageError(f"{key} must be {what} between {lo:,.0f} and {hi:,.0f}, got {_show(value)}")
