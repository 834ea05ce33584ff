"""Running one argv: its own session and process group, merged output streamed, timeout, kill.

Process handling (POSIX only). The runner starts in a new session, with stdin
from /dev/null and stdout+stderr merged into one pipe that is read as it
streams. Only bounded state is kept (the matched lines inside the output
budget, the last ``tail_lines`` lines, one capped partial line), so a runner
printing 100 MB costs time, not memory. On timeout the whole process group gets
SIGTERM, then SIGKILL after a short grace, and the exit code is 124. After the
runner exits, whatever it left running in its group is killed too, so nothing
outlives the call (a process that starts its own session escapes this); a
caller that gives up (``check`` raises: a cancelled MCP call) stops it the
same way, and so does this process exiting (``atexit``; the stdio server
answers SIGTERM and SIGHUP with :func:`kill_running` too, and a SIGKILL cannot
be answered).

Environment: inherited, plus ``CI=1`` (non-interactive, no watch mode),
``NO_COLOR=1``, ``FORCE_COLOR=0``, ``PY_COLORS=0``, ``CARGO_TERM_COLOR=never``,
``TERM=dumb`` and ``PYTHONUNBUFFERED=1`` (so merged stdout/stderr keep their
order and a killed run still shows its last lines). ANSI escapes are stripped
anyway. ``PYTHONDONTWRITEBYTECODE`` is left alone: agents rerun tests often,
bytecode and pytest's rewritten-assert caches make reruns faster, and
``__pycache__`` is what the developer's own runs leave behind.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from repolens.errors import RunnerUnavailableError
from repolens.testrun.output import LineSplitter

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


# The process groups of the runs under way, killed when this process exits
# (a server stopped mid-run must not leave its runs behind: they are in
# sessions of their own, so the server's own group going does not end them).
_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()


def kill_running() -> None:
    """Kill the process group of every run under way (this process is going)."""
    with _RUNNING_LOCK:
        groups = list(_RUNNING)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)


atexit.register(kill_running)


def run_process(
    argv: tuple[str, ...],
    cwd: Path,
    splitter: LineSplitter,
    timeout_s: float,
    check: Callable[[], None] | None = None,
) -> tuple[int, bool]:
    """Run ``argv`` in its own session, stream merged output into ``splitter``; (returncode, timed_out).
    ``check`` is called between reads (a few times a second): what it raises
    (the caller's cancellation) stops the run, its process group killed."""
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
    with _RUNNING_LOCK:
        _RUNNING.add(proc.pid)
    timed_out = False
    try:
        timed_out = _pump(proc, splitter, time.monotonic() + timeout_s, check)
    finally:
        # Whatever the runner left behind in its group goes too; the group id
        # stays reserved until the runner (not yet reaped) is waited for.
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        with _RUNNING_LOCK:
            _RUNNING.discard(proc.pid)
    return proc.returncode, timed_out


def _pump(
    proc: subprocess.Popen[bytes], splitter: LineSplitter, deadline: float, check: Callable[[], None] | None
) -> bool:
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
            if check is not None:
                check()
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


def _read_available(fd: int, splitter: LineSplitter) -> bool:
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
