"""Allow-listed, filtered test runs: run a project's tests, keep the lines that explain a failure.

``run_tests(root, runner, args)`` runs one command from a fixed allow-list in
``root`` and returns a :class:`TestRun`; ``render(run)`` is the exact text the
CLI prints and the MCP tool returns::

    $ /repo/.venv/bin/python -m pytest tests/test_x.py -k foo  ->  exit 1 in 2.3s
    [tests run under /repo/.venv/bin/python: the repository's .venv]
    <failure-relevant lines>
    [kept 14 of 212 lines (failure-relevant lines and their context); 198 dropped]

``render(run, remote=True)`` (a remote caller's reply) shows the folder of
the runner's executable as ``<server>`` when it is outside the root (the
server's interpreter or tool folder: a venv's whole folder), wherever it
appears; the adapter redacts the roots themselves.

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

pytest interpreter, from the repository alone (never repolens's own, so a
folder's results do not depend on how repolens was installed): the
``test_python`` setting; else ``<root>/.venv`` or ``<root>/venv``, the first
whose interpreter imports pytest (the project's own dependencies live there;
a repository environment without pytest is refused, with the fix); else
``pytest`` on ``PATH``. The reply says which, on its second line.

Process handling (process group, streaming, timeout, kill) and the runner's
environment are described in ``repolens.testrun.process``.

One module per concern, each importing only from those listed before it:
``limits`` (budget defaults and bounds, root and budget checks), ``runners``
(the allow-list, finding each tool), ``arguments`` (the safe-argument grammar,
``build_command``), ``output`` (ANSI stripping, failure-relevant lines, tail
fallback, caps), ``process`` (process group, streaming, timeout, kill). This
module ties them together: ``run_tests``, ``TestRun`` and ``render``.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from repolens.errors import RunnerUnavailableError
from repolens.testrun.arguments import MAX_ARG_CHARS, MAX_ARGS, build_command
from repolens.testrun.limits import (
    DEFAULT_CONTEXT,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_LINES,
    DEFAULT_TAIL_LINES,
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
    MIN_TIMEOUT_S,
    TIMEOUT_EXIT_CODE,
    check_bounds,
)
from repolens.testrun.output import (
    LINE_MAX_CHARS,
    FilteredOutput,
    KeptLine,
    KeptLines,
    LineFilter,
    LineSplitter,
    clean_line,
    filter_output,
    fit_lines,
    is_noise,
    is_relevant,
    joined,
)
from repolens.testrun.process import run_process
from repolens.testrun.runners import RUNNER_NAMES, Runner, available_runners, render_runners, resolve_runner
from repolens.validate import resolve_root

__all__ = [
    "DEFAULT_CONTEXT",
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_LINES",
    "DEFAULT_TAIL_LINES",
    "DEFAULT_TIMEOUT_S",
    "LINE_MAX_CHARS",
    "MAX_ARGS",
    "MAX_ARG_CHARS",
    "MAX_TIMEOUT_S",
    "MIN_TIMEOUT_S",
    "RUNNER_NAMES",
    "TIMEOUT_EXIT_CODE",
    "FilteredOutput",
    "KeptLine",
    "Runner",
    "TestRun",
    "available_runners",
    "build_command",
    "clean_line",
    "filter_output",
    "is_noise",
    "is_relevant",
    "render",
    "render_counted",
    "render_runners",
    "resolve_runner",
    "run_tests",
]


@dataclass(frozen=True)
class TestRun(KeptLines):
    """One finished run. ``render(run)`` is its text for people and agents.

    ``exit_code`` is the runner's own, 124 after a timeout, and 128+N when a
    signal N ended it. ``kept`` holds the output lines the filter kept (see
    ``filter_output``), ``text`` them as text; ``lines_kept`` counts them
    (the reply may show fewer: :func:`render_counted` counts what it shows).
    ``notes`` are one-line remarks (timeout, signal).
    ``via`` says which environment ran pytest ("" for other runners);
    ``server_folder`` is the folder of the runner's executable when it lies
    outside the root ("" when inside, or for a wrapper such as ./gradlew).
    """

    __test__ = False  # not a pytest test class, despite the name

    runner: str
    argv: tuple[str, ...]
    exit_code: int
    duration_s: float
    timed_out: bool
    kept: tuple[KeptLine, ...]
    lines_total: int
    lines_matched: int
    filtered: bool
    notes: tuple[str, ...] = ()
    via: str = ""
    server_folder: str = ""
    max_chars: int = DEFAULT_MAX_CHARS  # the whole reply's budget (render keeps to it)

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


def run_tests(
    root: str | os.PathLike[str],
    runner: str,
    args: Sequence[str] = (),
    *,
    timeout_s: float | None = None,
    max_chars: int | None = None,
    max_lines: int = DEFAULT_MAX_LINES,
    tail_lines: int = DEFAULT_TAIL_LINES,
    context: int = DEFAULT_CONTEXT,
    check: Callable[[], None] | None = None,
) -> TestRun:
    """Run the allow-listed ``runner`` with ``args`` in ``root`` and keep the failure-relevant output.
    ``check``: called while it runs; what it raises (a caller's cancellation)
    stops the run, its process group killed.

    Validates everything before starting a process: ``RootError`` for a bad
    root, ``RunnerUnavailableError`` for an unknown or uninstalled runner,
    ``RunArgumentError`` for arguments outside the grammar of
    ``build_command``, ``UsageError`` for budgets outside their bounds
    (timeout 1-3600 s, max_chars 200-1,000,000, max_lines 1-10,000,
    tail_lines 1-1,000, context 0-10); ``timeout_s`` and ``max_chars`` None:
    :data:`DEFAULT_TIMEOUT_S` and :data:`DEFAULT_MAX_CHARS` (every front
    passes None when the caller names none). A failing test run is a
    result, not an error: look at ``exit_code``.
    """
    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    max_chars = DEFAULT_MAX_CHARS if max_chars is None else max_chars
    if os.name != "posix":
        raise RunnerUnavailableError(
            "test runs need a POSIX system (process groups): run repolens on Linux or macOS"
        )
    check_bounds(
        timeout_s=timeout_s, max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context
    )
    root_path = resolve_root(root)
    resolved = resolve_runner(root_path, runner)
    argv = build_command(root_path, resolved, args)
    sink = LineFilter(max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context)
    splitter = LineSplitter(sink.add)
    started = time.monotonic()
    returncode, timed_out = run_process(argv, root_path, splitter, timeout_s, check)
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
        kept=out.kept,
        lines_total=out.lines_total,
        lines_matched=out.lines_matched,
        filtered=out.filtered,
        notes=tuple(notes),
        via=resolved.via,
        server_folder=_tool_folder(argv[0], root_path),
        max_chars=max_chars,
    )


def _tool_folder(executable: str, root: Path) -> str:
    """The folder that holds the runner's executable, when outside ``root``:
    a virtual environment's own folder (its site-packages show in tracebacks),
    else the executable's directory."""
    path = Path(executable)
    if not path.is_absolute() or path.is_relative_to(root):
        return ""
    env = path.parent.parent
    return str(env if (env / "pyvenv.cfg").is_file() else path.parent)


def render(run: TestRun, *, remote: bool = False, redact: Callable[[str], str] = str) -> str:
    """The reply (:func:`render_counted`'s text)."""
    return render_counted(run, remote=remote, redact=redact)[0]


def render_counted(
    run: TestRun, *, remote: bool = False, redact: Callable[[str], str] = str
) -> tuple[str, int]:
    """The reply and how many of the runner's lines it shows (a server's
    query log counts them: the filter's ``lines_kept`` may be more).

    The reply: a ``$ command  ->  exit N in Ts`` line, for pytest the
    environment it ran under, the kept lines, a trailer, then any notes,
    within ``run.max_chars``. ``remote``: the runner's folder outside the
    root is shown as ``<server>``; ``redact``: what else a caller hides (the
    MCP server's roots), applied before the reply is fitted to its budget.

    When it does not fit, what matters most stays: the outcome line, then the
    runner's summary (its last kept line), then the failure-relevant lines
    before it, latest first, then their context as room allows
    (:func:`repolens.testrun.output.fit_lines`); the kept lines left out
    before the first shown are counted by a marker, and the trailer counts
    the lines shown. The environment line, the marker and the trailer shrink
    (to a path, a count) or go rather than crowd out the summary, and are
    never cut; when not even the outcome and the summary fit, both are cut,
    each ending with ``…``."""
    hidden = _server_hidden(run) if remote else str

    def shown(text: str) -> str:
        return redact(hidden(text))

    command = shown(f"$ {run.command}")
    result = f"  ->  exit {run.exit_code} in {run.duration_s:.1f}s"
    lines = [line._replace(text=shown(line.text)) for line in run.kept]
    vias = ("", "")
    if run.via:
        vias = (
            shown(f"[tests run under {run.argv[0]}: {run.via}]"),
            shown(f"[tests run under {run.argv[0]}]"),
        )
    trailers: tuple[Callable[[int], str], Callable[[int], str]] = (
        lambda count: shown(_trailer(run, count)),
        lambda count: _short_trailer(run, count),
    )
    notes = [shown(f"[{note}]") for note in run.notes]
    # first the summary and the failure-relevant line before it (a FAILED line,
    # an error), else the summary alone: the decorations give way to both in turn
    failure = next((i for i in range(len(lines) - 2, -1, -1) if lines[i].relevant), None)
    needs = [[len(lines) - 1, failure]] if run.filtered and failure is not None else []
    for needed in [*needs, [len(lines) - 1] if lines else []]:
        for via, marker, trailer, with_notes in _SHRINKING:
            fitted = _fitted(
                [command + result, vias[via] if via is not None else ""],
                lines,
                trailers[trailer] if trailer is not None else lambda count: "",
                notes if with_notes else [],
                marker,
                run.max_chars,
                needed,
            )
            if fitted is not None:
                return fitted
    summary = lines[-1].text if lines else ""
    return _least(command, result, summary, run.max_chars), int(bool(summary))


# The reply's decorations, from whole to gone, tried in turn until one lets
# the runner's summary and the failure line before it show (else, in a second
# round, the summary alone): (environment line, cut marker, trailer), each
# 0 whole, 1 short, None gone; then whether the notes stay. As the packet's
# trailer does, they keep all the room they can without crowding it out.
_SHRINKING: tuple[tuple[int | None, int | None, int | None, bool], ...] = (
    (0, 0, 0, True),
    (1, 0, 0, True),
    (1, 0, 1, True),
    (None, 0, 1, True),
    (None, 1, 1, True),
    (None, 1, None, True),
    (None, None, None, True),
    (None, None, None, False),
)
# The least of the runner's summary worth showing beside a long command.
_SUMMARY_MIN = 40


def _fitted(
    head: list[str],
    lines: list[KeptLine],
    trailer: Callable[[int], str],
    notes: list[str],
    marker: int | None,
    max_chars: int,
    needed: list[int],
) -> tuple[str, int] | None:
    """``head``, the ``lines`` that fit (:func:`fit_lines`; those left out
    before the first shown counted by the marker of form ``marker``, or
    silently when None), ``trailer(lines shown)`` and ``notes``, within
    ``max_chars``, with the count of lines shown; None when the lines
    ``needed`` (indexes) do not all fit."""
    head = [part for part in head if part]

    def around(shown: int, first: int) -> tuple[list[str], list[str]]:
        cut = [_cut_marker(first, marker)] if first and marker is not None else []
        return head + cut, [part for part in (trailer(shown), *notes) if part]

    def fits(chars: int, shown: int, first: int) -> bool:
        before, after = around(shown, first)
        return len("\n".join(before + after)) + chars <= max_chars

    chosen = fit_lines(lines, fits)
    if chosen is None or not set(needed) <= set(chosen):
        return None
    if not chosen and not fits(0, 0, 0):
        return None
    before, after = around(len(chosen), chosen[0] if chosen else 0)
    body = joined([lines[i] for i in chosen])
    return "\n".join([*before, *([body] if chosen else []), *after]), len(chosen)


def _least(command: str, result: str, summary: str, max_chars: int) -> str:
    """The outcome line and the runner's summary when no other reply fits:
    the command cut so that at least :data:`_SUMMARY_MIN` characters of the
    summary show, the summary without its rules (pytest's ``=====``) and
    cut to the rest, each ending with ``…`` where cut."""
    summary = summary.strip("=-_*# ") or summary
    room = max_chars - 1 - min(len(summary), _SUMMARY_MIN) if summary else max_chars
    if len(command) + len(result) > room:
        command = command[: room - len(result) - 1] + "…"
    outcome = command + result
    if not summary:
        return outcome
    left = max_chars - len(outcome) - 1
    if len(summary) > left:
        summary = summary[: left - 1] + "…"
    return f"{outcome}\n{summary}"


def _cut_marker(n: int, form: int) -> str:
    lines = f"{n} earlier kept line{'s' if n != 1 else ''} cut"
    return f"... ({lines} to fit the reply budget)" if form == 0 else f"... ({lines})"


def _server_hidden(run: TestRun) -> Callable[[str], str]:
    """``text`` with the runner's folder outside the root shown as ``<server>``."""
    if not run.server_folder:
        return str
    # Whole path components only: /opt/env must not eat /opt/envoy or /opt/env.old.
    folder = re.compile(re.escape(run.server_folder) + r"(?![\w-]|\.\w)")
    return lambda text: folder.sub("<server>", text)


def _trailer(run: TestRun, shown: int) -> str:
    """What the reply shows of the output: ``shown`` of its lines."""
    if run.lines_total == 0:
        return "[no output]"
    dropped = run.lines_total - shown
    if not run.filtered:
        if dropped == 0:
            return f"[no failure-relevant line matched; kept all {run.lines_total} lines]"
        return (
            f"[no failure-relevant line matched; kept the last {shown} of {run.lines_total} lines; "
            f"{dropped} dropped]"
        )
    text = (
        f"[kept {shown} of {run.lines_total} lines (failure-relevant lines and their context); "
        f"{dropped} dropped"
    )
    if (cut := run.lines_matched - shown) > 0:
        text += f"; the budget left out {cut} relevant or context line{'s' if cut != 1 else ''}"
    return text + "]"


def _short_trailer(run: TestRun, shown: int) -> str:
    """The trailer as a count, for a reply too small for the whole one."""
    if run.lines_total == 0:
        return "[no output]"
    if shown == run.lines_total:
        return f"[kept all {run.lines_total} lines]"
    last = "" if run.filtered else "the last "
    return f"[kept {last}{shown} of {run.lines_total} lines]"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
