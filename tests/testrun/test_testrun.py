"""Filtered test runs: real runners on tiny projects built in tmp dirs, no mocks."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from repolens import testrun
from repolens.errors import ConfigError, RootError, RunArgumentError, RunnerUnavailableError, UsageError
from venvs import make_venv

PYTEST_INI = "[pytest]\naddopts = -v -p no:cacheprovider\n"
CALC = "def add(a, b):\n    return a + b\n"
FAILING_TESTS = textwrap.dedent(
    """\
    from calc import add


    def test_add_ok():
        assert add(2, 2) == 4


    def test_add_wrong():
        assert add(2, 2) == 5
    """
)
# conftest.py runs whenever pytest starts in the project: its marker proves a run happened.
CONFTEST_MARKER = "from pathlib import Path\n\nPath(__file__).with_name('ran.marker').write_text('ran')\n"
CONFIGURED = "test_python (.repolens.toml or REPOLENS_TEST_PYTHON)"


@pytest.fixture(autouse=True)
def _suite_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest runs under this suite's interpreter, configured as an operator
    would (the environment-choice tests below unset it): the results do not
    depend on which pytest is on PATH."""
    monkeypatch.setenv("REPOLENS_TEST_PYTHON", sys.executable)


def write_files(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def pytest_project(root: Path, tests: str, *, ini: str = PYTEST_INI) -> Path:
    return write_files(
        root,
        {"pytest.ini": ini, "calc.py": CALC, "test_calc.py": tests, "conftest.py": CONFTEST_MARKER},
    )


def normalize(text: str) -> str:
    """Make pytest's output independent of terminal width and timing."""
    text = re.sub(r"([=_])\1{2,}", r"\1\1\1", text)
    text = re.sub(r" {2,}\[", " [", text)
    return re.sub(r"in \d+\.\d+s", "in T", text)


def alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie waiting for a reaper counts as gone."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


# --------------------------------------------------------------------------- pytest runs


def test_failing_pytest_run_keeps_assertion_lines_and_failing_test_path(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, FAILING_TESTS)

    run = testrun.run_tests(root, "pytest")

    assert run.exit_code == 1
    assert run.argv == (sys.executable, "-m", "pytest")
    assert run.filtered and run.lines_kept == run.lines_matched and not run.timed_out
    rendered = testrun.render(run)
    assert rendered.startswith(f"$ {sys.executable} -m pytest  ->  exit 1 in ")
    assert rendered.splitlines()[1] == f"[tests run under {sys.executable}: {CONFIGURED}]"
    assert normalize(rendered.split("\n", 2)[2]) == textwrap.dedent(
        """\
        test_calc.py::test_add_wrong FAILED [100%]

        === FAILURES ===
        ___ test_add_wrong ___

            def test_add_wrong():
        >       assert add(2, 2) == 5
        E       assert 4 == 5
        E        +  where 4 = add(2, 2)

        test_calc.py:9: AssertionError
        === short test summary info ===
        FAILED test_calc.py::test_add_wrong - assert 4 == 5
         +  where 4 = add(2, 2)
        === 1 failed, 1 passed in T ===
        """
    ) + f"[kept 12 of {run.lines_total} lines (failure-relevant lines and their context); " + (
        f"{run.lines_total - 12} dropped]"
    )
    # the passing test and the session header are noise
    assert "test_add_ok" not in run.text
    assert "platform" not in run.text and "rootdir" not in run.text


def test_passing_pytest_run_reports_exit_0_with_the_summary(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, "def test_ok():\n    assert True\n")

    run = testrun.run_tests(root, "pytest")

    assert run.exit_code == 0
    assert normalize(run.text) == "=== 1 passed in T ==="
    assert testrun.render(run).endswith(
        f"[kept 1 of {run.lines_total} lines (failure-relevant lines and their context); "
        f"{run.lines_total - 1} dropped]"
    )


def test_pytest_node_id_and_k_filter_reach_the_command(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, FAILING_TESTS)

    by_id = testrun.run_tests(root, "pytest", ["test_calc.py::test_add_ok"])
    by_k = testrun.run_tests(root, "pytest", ["test_calc.py", "-k", "add_ok or nothing"])

    assert by_id.argv[-1] == "test_calc.py::test_add_ok"
    assert by_k.argv[-3:] == ("test_calc.py", "-k", "add_ok or nothing")
    assert (by_id.exit_code, by_k.exit_code) == (0, 0)
    assert normalize(by_k.text) == "=== 1 passed, 1 deselected in T ==="


def test_signal_death_reports_128_plus_signal(tmp_path: Path) -> None:
    root = pytest_project(
        tmp_path, "import os, signal\n\n\ndef test_dies():\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )

    run = testrun.run_tests(root, "pytest")

    assert run.exit_code == 137
    assert run.notes == ("the runner was killed by signal SIGKILL",)
    assert testrun.render(run).endswith("\n[the runner was killed by signal SIGKILL]")


# --------------------------------------------------------------------------- process groups and bounds

HANGING_TEST = textwrap.dedent(
    """\
    import subprocess, time
    from pathlib import Path


    def test_hangs():
        child = subprocess.Popen(["sleep", "60"])
        Path("grandchild.pid").write_text(str(child.pid))
        print("waiting for the grandchild", flush=True)
        time.sleep(60)
    """
)


def test_timeout_kills_the_process_group_including_a_grandchild(tmp_path: Path) -> None:
    # -s: the grandchild inherits the output pipe, the hard case for draining
    root = pytest_project(tmp_path, HANGING_TEST, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")

    started = time.monotonic()
    run = testrun.run_tests(root, "pytest", timeout_s=4)
    elapsed = time.monotonic() - started

    assert run.timed_out and run.exit_code == testrun.TIMEOUT_EXIT_CODE == 124
    assert elapsed < 10
    grandchild = int((root / "grandchild.pid").read_text())
    assert wait_gone(grandchild), "the grandchild sleep survived the timeout"
    rendered = testrun.render(run)
    assert rendered.startswith(f"$ {sys.executable} -m pytest  ->  exit 124 in ")
    assert rendered.endswith(
        "\n[timed out after 4s: the process group was killed; pass a longer timeout to wait]"
    )


class GaveUp(Exception):
    """What a caller's ``check`` raises: a cancelled MCP call, in the server."""


def test_a_caller_that_gives_up_stops_the_run_and_its_group(tmp_path: Path) -> None:
    """``check`` raising (the server's cancelled call, its client gone) ends
    the run at once, grandchild and all, not at its timeout."""
    root = pytest_project(tmp_path, HANGING_TEST, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")
    asked_at = time.monotonic()

    def check() -> None:
        if (root / "grandchild.pid").exists() and time.monotonic() - asked_at > 1:
            raise GaveUp

    with pytest.raises(GaveUp):
        testrun.run_tests(root, "pytest", timeout_s=60, check=check)
    assert time.monotonic() - asked_at < 15
    assert wait_gone(int((root / "grandchild.pid").read_text())), "the grandchild outlived the call"


def test_a_cancelled_mcp_call_stops_its_run(tmp_path: Path) -> None:
    """The client gives up on run_tests (the SDK sends notifications/cancelled):
    the server stops the run at once, grandchild and all, not at its timeout."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    root = pytest_project(tmp_path, HANGING_TEST, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}
    args = ["-m", "repolens", "serve", "--root", str(root), "--no-watch"]

    async def session() -> None:
        async with Client(StdioServerParameters(command=sys.executable, args=args, env=env)) as client:
            with anyio.move_on_after(20):
                call = {"runner": "pytest", "timeout_s": 120}
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, "run_tests", call)
                    while not (root / "grandchild.pid").exists():
                        await anyio.sleep(0.1)
                    tg.cancel_scope.cancel()
            grandchild = int((root / "grandchild.pid").read_text())
            assert wait_gone(grandchild, 10), "the run outlived its cancelled call"

    anyio.run(session)


def test_a_process_that_exits_mid_run_takes_its_runs_with_it(tmp_path: Path) -> None:
    """A server stopped while a run is under way (its worker thread still in
    it) kills the run's group as it exits: they are in a session of their own."""
    root = pytest_project(tmp_path, HANGING_TEST, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")
    script = (
        "import sys, threading, time\n"
        "from pathlib import Path\n"
        "from repolens import testrun\n"
        f"root = Path({str(root)!r})\n"
        "run = lambda: testrun.run_tests(root, 'pytest', timeout_s=60)\n"
        "threading.Thread(target=run, daemon=True).start()\n"
        "while not (root / 'grandchild.pid').exists():\n"
        "    time.sleep(0.05)\n"
        "sys.exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert wait_gone(int((root / "grandchild.pid").read_text())), (
        "the run outlived the process that started it"
    )


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stdio_server_ended_by_a_signal_takes_its_runs_with_it(tmp_path: Path, signum: int) -> None:
    """A client stops its stdio server with SIGTERM (a closed terminal sends
    SIGHUP) while run_tests is under way: the run's group, in a session of
    its own, goes too, and the server still dies of that signal."""
    root = pytest_project(tmp_path, HANGING_TEST, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    call = {"name": "run_tests", "arguments": {"runner": "pytest", "timeout_s": 120}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    env = {k: v for k, v in os.environ.items() if k != "REPOLENS_INDEX_DIR"}
    server = subprocess.Popen(
        [sys.executable, "-m", "repolens", "serve", "--root", str(root), "--no-watch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert server.stdin is not None
    try:
        server.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        server.stdin.flush()
        give_up = time.monotonic() + 60
        while not (root / "grandchild.pid").exists():
            assert time.monotonic() < give_up and server.poll() is None, "the run did not start"
            time.sleep(0.05)
        server.send_signal(signum)
        assert server.wait(timeout=20) == -signum
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        server.stdin.close()
    assert wait_gone(int((root / "grandchild.pid").read_text()), 10), "the run outlived its server"


def test_children_left_running_are_killed_when_the_runner_exits(tmp_path: Path) -> None:
    leaves_child = textwrap.dedent(
        """\
        import subprocess
        from pathlib import Path


        def test_leaves_a_child():
            child = subprocess.Popen(["sleep", "60"])
            Path("leftover.pid").write_text(str(child.pid))
        """
    )
    root = pytest_project(tmp_path, leaves_child, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")

    run = testrun.run_tests(root, "pytest")

    assert run.exit_code == 0 and not run.timed_out
    assert run.duration_s < 8  # the leftover holds the pipe open: the drain grace ends the wait
    assert wait_gone(int((root / "leftover.pid").read_text()))


FLOOD_TEST = textwrap.dedent(
    """\
    import sys


    def test_flood():
        block = ("x" * 1023 + "\\n") * 1024  # 1 MiB of lines
        for _ in range(64):
            sys.stdout.write(block)
        sys.stdout.write("y" * (8 << 20))  # one 8 MiB line
        sys.stdout.write("\\n")
        sys.stdout.flush()
        assert False, "flooded"
    """
)


def test_huge_output_stays_bounded_in_text_and_memory(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, FLOOD_TEST, ini="[pytest]\naddopts = -s -p no:cacheprovider\n")
    # Measured in a fresh interpreter: its peak RSS is not hidden by this test session's.
    probe = textwrap.dedent(
        f"""\
        import json, resource
        from repolens.testrun import render, run_tests

        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        run = run_tests({str(root)!r}, "pytest")
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        shown = {{**run.__dict__, "text": run.text}}
        print(json.dumps({{"grew_kib": after - before, "run": shown, "rendered": render(run)}}))
        """
    )

    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )

    report = json.loads(out.stdout)
    run = report["run"]
    assert run["exit_code"] == 1
    assert run["lines_total"] > 64 * 1024
    assert len(run["text"]) <= testrun.DEFAULT_MAX_CHARS
    assert "AssertionError: flooded" in run["text"]
    assert report["grew_kib"] < 24 * 1024, f"reading 72 MiB of output grew RSS by {report['grew_kib']} KiB"


# --------------------------------------------------------------------------- argument safety

UNSAFE_ARGUMENTS = [
    ["; rm -rf /"],
    ["$(touch pwned)"],
    ["`touch pwned`"],
    ["test_calc.py; rm -rf /"],
    ["test_calc.py && id"],
    ["test_calc.py | cat"],
    ["> out.txt"],
    ["../x"],
    ["tests/../../x"],
    ["/etc/passwd"],
    ["~/x"],
    ["*.py"],
    ["--rootdir=/"],
    ["-p", "no:cacheprovider"],
    ["-kfoo"],
    ["test_calc.py\nrm -rf /"],
    ["test_calc.py\x00"],
    ["tést.py"],
    ["test_calc.py::test[1]"],
    ["no_such_file.py"],
    ["-k"],
    ["-k", "x; rm -rf /"],
    ["-k", "$(id)"],
    ["-k", "--rootdir=/"],
    ["-k", "a", "-k", "b"],
    ["x" * 201],
]


@pytest.mark.parametrize("args", UNSAFE_ARGUMENTS, ids=repr)
def test_unsafe_arguments_are_rejected_without_running_anything(tmp_path: Path, args: list[str]) -> None:
    root = pytest_project(tmp_path, FAILING_TESTS)

    with pytest.raises(RunArgumentError) as caught:
        testrun.run_tests(root, "pytest", args)

    assert isinstance(caught.value, UsageError)
    assert "\n" not in str(caught.value)
    assert not (root / "ran.marker").exists()
    assert not (root / "pwned").exists()


def test_symlink_out_of_the_root_is_rejected(tmp_path: Path) -> None:
    root = pytest_project(tmp_path / "p", FAILING_TESTS)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "test_x.py").write_text("def test_x():\n    pass\n")
    (root / "link").symlink_to(tmp_path / "outside")

    with pytest.raises(RunArgumentError, match="resolves outside the root"):
        testrun.run_tests(root, "pytest", ["link/test_x.py"])


def test_rejection_message_says_what_is_allowed(tmp_path: Path) -> None:
    root = pytest_project(tmp_path, FAILING_TESTS)

    with pytest.raises(RunArgumentError) as caught:
        testrun.run_tests(root, "pytest", ["--rootdir=/"])

    assert str(caught.value) == (
        "option '--rootdir=/' is not allowed: pytest accepts test paths inside the root "
        "(letters, digits, _ . - /, optionally ::test_name) and one filter -k FILTER; "
        "no other options, no shell syntax"
    )


def test_build_command_translates_paths_and_filters_per_runner(tmp_path: Path) -> None:
    write_files(tmp_path, {"pkg/a/a_test.go": "", "src/app.test.js": ""})

    def command(name: str, args: list[str]) -> tuple[str, ...]:
        return testrun.build_command(tmp_path, testrun.Runner(name, (name, "test"), None), args)

    assert command("go", []) == ("go", "test", "./...")
    assert command("go", ["pkg/...", "-run", "TestAdd/neg$"]) == (
        "go",
        "test",
        "-run",
        "TestAdd/neg$",
        "./pkg/...",
    )
    assert command("go", ["pkg/a", "-k", "^TestA"]) == ("go", "test", "-run", "^TestA", "./pkg/a")
    assert command("cargo", ["tests::adds"]) == ("cargo", "test", "tests::adds")
    assert command("cargo", ["-k", "adds"]) == ("cargo", "test", "adds")
    assert command("mvn", ["-Dtest=CalcTest#adds"]) == ("mvn", "test", "-Dtest=CalcTest#adds")
    assert command("mvn", ["-k", "Calc*Test"]) == ("mvn", "test", "-Dtest=Calc*Test")
    assert command("gradle", ["--tests", "com.x.CalcTest"]) == ("gradle", "test", "--tests", "com.x.CalcTest")
    assert command("npm", ["src/app.test.js"]) == ("npm", "test", "--", "src/app.test.js")
    assert command("npm", ["src/app"]) == ("npm", "test", "--", "src/app")  # a pattern need not exist
    assert command("pnpm", ["src/app"]) == ("pnpm", "test", "src/app")
    assert command("yarn", []) == ("yarn", "test")
    for name, args in [
        ("go", ["../pkg"]),
        ("go", ["pkg/.../a"]),
        ("go", ["missing"]),
        ("go", ["-run", "a b"]),
        ("cargo", ["a", "b"]),
        ("cargo", ["src/lib.rs"]),
        ("mvn", ["src/Test.java"]),
        ("mvn", ["-Dtest=A;B"]),
        ("gradle", ["--tests", "a/b"]),
        ("npm", ["-k", "x"]),
        ("npm", ["--watch"]),
        ("yarn", ["../x"]),
    ]:
        with pytest.raises(RunArgumentError):
            command(name, args)


# --------------------------------------------------------------------------- runners


def test_unavailable_runner_error_names_the_available_ones(tmp_path: Path) -> None:
    markers = ("pytest.ini", "package.json", "go.mod", "Cargo.toml", "pom.xml", "build.gradle")
    write_files(tmp_path, dict.fromkeys(markers, ""))  # every runner applies: installed ones are available
    available = [r.name for r in testrun.available_runners(tmp_path)]
    missing = [n for n in testrun.RUNNER_NAMES if n not in available]
    if not missing:
        pytest.skip("every supported runner is installed here")
    name = missing[0]

    with pytest.raises(RunnerUnavailableError) as caught:
        testrun.run_tests(tmp_path, name)

    wrapper = " and no ./gradlew at the root" if name == "gradle" else ""
    assert str(caught.value) == (
        f"test runner {name!r} is not installed here ({name} not found on PATH{wrapper}): "
        f"available here: {', '.join(available)}"
    )
    assert isinstance(caught.value, UsageError)


@pytest.mark.parametrize("name", ["npm", "go", "cargo"])
def test_an_installed_runner_without_its_project_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """npm with no package.json ran npm (which failed on its own terms); a
    runner applies where its project file is, as go's absence was refused."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / name).write_text("#!/bin/sh\necho ran\n")
    (tools / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    root = tmp_path / "repo"
    root.mkdir()
    marker = {"npm": "package.json", "go": "go.mod", "cargo": "Cargo.toml"}[name]
    with pytest.raises(RunnerUnavailableError) as caught:
        testrun.run_tests(root, name)
    assert str(caught.value) == (
        f"test runner {name!r} does not apply here (the root has no {marker}): no test runner applies here"
    )


def test_unknown_runner_is_refused_with_the_supported_list(tmp_path: Path) -> None:
    with pytest.raises(
        RunnerUnavailableError, match=r"^unknown test runner 'make': use one of pytest, npm, "
    ):
        testrun.run_tests(tmp_path, "make")


# A project test that passes only under the project's own environment.
IN_PROJECT_ENV = textwrap.dedent(
    """\
    import sys
    from pathlib import Path


    def test_runs_in_the_project_environment():
        assert Path(sys.prefix).resolve() == (Path(__file__).parent / "{env}").resolve()
    """
)


def _path_with_pytest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This suite's pytest script first on PATH; its path there."""
    folder = tmp_path / "path-bin"
    folder.mkdir()
    (folder / "pytest").symlink_to(Path(sys.executable).with_name("pytest"))
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder / "pytest"


@pytest.mark.parametrize("env", [".venv", "venv"])
def test_the_repository_environment_runs_pytest_and_the_reply_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str
) -> None:
    monkeypatch.delenv("REPOLENS_TEST_PYTHON")
    _path_with_pytest(tmp_path, monkeypatch)  # on PATH too: the repository's environment still wins
    root = pytest_project(tmp_path / "proj", IN_PROJECT_ENV.format(env=env))
    python = make_venv(root / env, with_pytest=True)  # pytest through a .pth file, not in its own folder

    run = testrun.run_tests(root, "pytest")

    assert run.argv == (str(python), "-m", "pytest")
    assert run.exit_code == 0, run.text
    assert testrun.render(run).splitlines()[1] == f"[tests run under {python}: the repository's {env}]"
    assert testrun.resolve_runner(root, "pytest") == testrun.Runner(
        "pytest", (str(python), "-m", "pytest"), "pytest.ini", f"the repository's {env}"
    )


def test_without_a_repository_environment_pytest_on_path_runs_not_repolens_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REPOLENS_TEST_PYTHON")
    on_path = _path_with_pytest(tmp_path, monkeypatch)
    root = pytest_project(tmp_path / "proj", "def test_ok():\n    assert True\n")

    run = testrun.run_tests(root, "pytest")

    assert run.argv == (str(on_path),) and run.exit_code == 0
    assert testrun.render(run).splitlines()[1] == (
        f"[tests run under {on_path}: pytest on PATH (the root has no .venv or venv, "
        "and test_python is not set)]"
    )


def test_a_repository_environment_without_pytest_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REPOLENS_TEST_PYTHON")
    _path_with_pytest(tmp_path, monkeypatch)  # its tests would run without the project's packages
    root = pytest_project(tmp_path / "proj", FAILING_TESTS)
    make_venv(root / ".venv", with_pytest=False)

    with pytest.raises(RunnerUnavailableError) as caught:
        testrun.run_tests(root, "pytest")

    assert str(caught.value) == (
        "the repository's .venv has no pytest (.venv/bin/python cannot import it): install it there "
        "(`.venv/bin/python -m pip install pytest`) or set test_python to an interpreter that has it"
    )
    assert not (root / "ran.marker").exists()
    assert testrun.available_runners(root) == []


def test_test_python_names_the_interpreter_relative_to_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REPOLENS_TEST_PYTHON")
    root = pytest_project(tmp_path / "proj", IN_PROJECT_ENV.format(env="envs/py311"))
    make_venv(root / ".venv", with_pytest=True)  # configured wins over the default
    python = make_venv(root / "envs" / "py311", with_pytest=True)
    write_files(root, {".repolens.toml": 'test_python = "envs/py311/bin/python"\n'})

    run = testrun.run_tests(root, "pytest")

    assert run.argv == (str(python), "-m", "pytest") and run.exit_code == 0, run.text
    assert testrun.render(run).splitlines()[1] == f"[tests run under {python}: {CONFIGURED}]"

    write_files(root, {".repolens.toml": 'test_python = "envs/py312/bin/python"\n'})
    with pytest.raises(ConfigError) as caught:
        testrun.run_tests(root, "pytest")
    assert str(caught.value) == (
        "test_python 'envs/py312/bin/python' is not an executable file (relative to the root) nor a "
        "command on PATH: set test_python (.repolens.toml or REPOLENS_TEST_PYTHON) to a Python interpreter"
    )


def test_a_remote_reply_shows_the_runner_folder_outside_the_root_as_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server_env = tmp_path / "opt" / "env"  # the operator's interpreter, outside the repository
    monkeypatch.setenv("REPOLENS_TEST_PYTHON", str(make_venv(server_env, with_pytest=True)))
    root = pytest_project(tmp_path / "proj", FAILING_TESTS)
    run = testrun.run_tests(root, "pytest")
    assert run.server_folder == str(server_env)

    remote = testrun.render(run, remote=True)

    assert str(server_env) not in remote
    assert remote.startswith("$ <server>/bin/python -m pytest  ->  exit 1 in ")
    assert remote.splitlines()[1] == f"[tests run under <server>/bin/python: {CONFIGURED}]"
    assert testrun.render(run).replace(str(server_env), "<server>") == remote
    line = f"{server_env}.old/a.py:1 {server_env}-2/b.py:2 {server_env}/c.py:3"
    neighbours = dataclasses.replace(run, kept=(testrun.KeptLine(1, 1, line, True),))
    assert testrun.render(neighbours, remote=True).splitlines()[2] == (
        f"{server_env}.old/a.py:1 {server_env}-2/b.py:2 <server>/c.py:3"
    )


def test_gradle_wrapper_runs_and_output_without_failures_falls_back_to_the_tail(tmp_path: Path) -> None:
    wrapper = write_files(
        tmp_path, {"gradlew": '#!/bin/sh\necho "args: $*"\nfor i in $(seq 1 100); do echo "step $i"; done\n'}
    )
    (wrapper / "gradlew").chmod(0o755)

    run = testrun.run_tests(tmp_path, "gradle", ["-k", "com.x.CalcTest"])

    assert run.argv == ("./gradlew", "test", "--console=plain", "--tests", "com.x.CalcTest")
    assert run.exit_code == 0 and not run.filtered
    assert run.text.splitlines() == [f"step {i}" for i in range(61, 101)]
    assert testrun.render(run) == (
        f"$ ./gradlew test --console=plain --tests com.x.CalcTest  ->  exit 0 in {run.duration_s:.1f}s\n"
        + run.text
        + "\n[no failure-relevant line matched; kept the last 40 of 101 lines; 61 dropped]"
    )


def test_bad_root_and_out_of_bounds_budgets_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(RootError, match="does not exist"):
        testrun.run_tests(tmp_path / "missing", "pytest")
    for bad in (
        {"timeout_s": 0},
        {"timeout_s": 7200},
        {"max_chars": 10},
        {"context": -1},
        {"max_lines": True},
    ):
        with pytest.raises(UsageError, match=r"must be an? (number|integer) between"):
            testrun.run_tests(tmp_path, "pytest", **bad)
    with pytest.raises(UsageError) as caught:
        testrun.run_tests(tmp_path, "pytest", max_chars=2.5)
    assert str(caught.value) == "max_chars must be an integer between 200 and 1,000,000, got 2.5"


# --------------------------------------------------------------------------- filter rules


def test_filter_strips_ansi_applies_carriage_returns_and_drops_passing_lines() -> None:
    out = testrun.filter_output(
        [
            "collecting ...",
            "\x1b[32mtests/test_a.py::test_ok PASSED\x1b[0m",
            "\x1b[31mtests/test_a.py::test_bad FAILED\x1b[0m",
            "tests/test_a.py::test_next PASSED",
            "progress 10%\rprogress 100%",
            "noise",
            "noise",
            "\x1b[1mE   assert 1 == 2\x1b[0m",
            "",
            "",
            "tests/test_a.py:7: AssertionError",
        ]
    )

    assert out.text == (
        "tests/test_a.py::test_bad FAILED\n"
        "[... 3 lines ...]\n"
        "noise\n"
        "E   assert 1 == 2\n"
        "\n"
        "tests/test_a.py:7: AssertionError"
    )
    assert (out.lines_total, out.lines_kept, out.filtered, out.truncated) == (11, 4, True, False)


def test_filter_keeps_the_tail_within_the_budget() -> None:
    lines = [f"FAILED test_{i}" for i in range(1000)]

    out = testrun.filter_output(lines, max_chars=200)

    assert out.text.splitlines()[-1] == "FAILED test_999"
    assert len(out.text) <= 200
    assert out.truncated and out.lines_matched == 1000
    assert (
        testrun.filter_output(lines, max_lines=3).text == "FAILED test_997\nFAILED test_998\nFAILED test_999"
    )


def test_at_a_small_budget_the_filter_keeps_the_failed_line_over_its_context() -> None:
    """The budget took a tail of the kept lines, so a context line (pytest's
    `` +  where ...`` after a ``FAILED`` line) crowded out the ``FAILED``
    line itself. Now the relevant lines are taken first, latest first, and
    their context as room allows; the counts are of the lines shown."""
    where = " +  where 1 = compute_total(order_lines, discounts, tax_rate, currency, rounding_mode)"
    summary = "=" * 24 + " 1 failed, 1 passed in 0.01s " + "=" * 25
    lines = [
        "=== FAILURES ===",
        "E       assert 1 == 2",
        "test_a.py:5: AssertionError",
        "=== short test summary info ===",
        "FAILED test_a.py::test_bad - assert 1 == 2",
        where,
        summary,
    ]

    small = testrun.filter_output(lines, max_chars=200)
    roomy = testrun.filter_output(lines, max_chars=1000)

    assert small.text.split("\n") == [
        "test_a.py:5: AssertionError",
        "[... 1 line ...]",
        "FAILED test_a.py::test_bad - assert 1 == 2",
        "[... 1 line ...]",
        summary,
    ]
    assert (small.lines_kept, small.lines_matched, small.truncated) == (3, 7, True)
    assert roomy.text.split("\n") == lines and roomy.lines_kept == 7


def test_filter_caps_long_lines_and_falls_back_to_the_tail() -> None:
    out = testrun.filter_output(["a" * 5000, "plain", "text"], tail_lines=2)

    assert out.text == "plain\ntext"
    assert not out.filtered
    assert testrun.clean_line("b" * 5000) == "b" * testrun.LINE_MAX_CHARS + "…"


# --------------------------------------------------------------------------- other ecosystems


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_failure_keeps_panic_and_assert_values(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": textwrap.dedent(
                """\
                pub fn add(a: i32, b: i32) -> i32 {
                    a + b
                }

                #[cfg(test)]
                mod tests {
                    use super::*;

                    #[test]
                    fn adds_ok() {
                        assert_eq!(add(2, 2), 4);
                    }

                    #[test]
                    fn adds_wrong() {
                        assert_eq!(add(2, 2), 5);
                    }
                }
                """
            ),
        },
    )

    run = testrun.run_tests(tmp_path, "cargo", timeout_s=120)

    assert run.exit_code == 101
    assert "panicked at src/lib.rs:16:9:" in run.text
    assert "  left: 4\n right: 5" in run.text
    assert "test result: FAILED. 1 passed; 1 failed" in run.text
    assert "adds_ok" not in run.text
    assert "Compiling" not in run.text


@pytest.mark.skipif(
    shutil.which("npm") is None or shutil.which("node") is None, reason="npm is not installed"
)
def test_npm_failure_keeps_expected_and_actual(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "package.json": '{"name": "calc", "private": true, "scripts": {"test": "node --test"}}\n',
            "calc.test.js": textwrap.dedent(
                """\
                const test = require("node:test");
                const assert = require("node:assert");

                test("adds ok", () => { assert.strictEqual(2 + 2, 4); });
                test("adds wrong", () => { assert.strictEqual(2 + 2, 5); });
                """
            ),
        },
    )

    run = testrun.run_tests(tmp_path, "npm", ["calc.test.js"])

    assert run.argv[1:] == ("test", "--", "calc.test.js")
    assert run.exit_code == 1
    assert "not ok 2 - adds wrong" in run.text
    assert "expected: 5" in run.text and "actual: 4" in run.text
    assert "calc.test.js:5:" in run.text
    assert "ok 1 - adds ok" not in run.text


def test_only_runners_the_repository_can_use_are_listed(tmp_path: Path) -> None:
    installed = [n for n in ("npm", "cargo", "mvn", "go") if shutil.which(n)]
    assert testrun.available_runners(tmp_path) == []
    assert testrun.render_runners([]).startswith("no test runner applies here (supported: pytest, npm, ")

    write_files(tmp_path, {"tests/unit/test_calc.py": "def test_ok():\n    pass\n"})
    assert [(r.name, r.marker) for r in testrun.available_runners(tmp_path)] == [
        ("pytest", "tests/unit/test_calc.py")
    ]
    if installed:
        marker = {"npm": "package.json", "cargo": "Cargo.toml", "mvn": "pom.xml", "go": "go.mod"}[
            installed[0]
        ]
        write_files(tmp_path, {marker: ""})
        names = [r.name for r in testrun.available_runners(tmp_path)]
        assert names[0] == "pytest" and installed[0] in names


MANY_FAILURES = textwrap.dedent(
    """\
    import pytest


    @pytest.mark.parametrize("i", range(60))
    def test_many(i):
        assert i < 0, f"value {i} is not negative " + "y" * 80
    """
)


def cli_reply(root: Path, max_chars: int) -> str:
    """What ``repolens test --max-chars N pytest`` prints, without its newline."""
    where = ["--root", str(root), "--max-chars", str(max_chars)]
    cli = subprocess.run(
        [sys.executable, "-m", "repolens", "test", *where, "pytest"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return cli.stdout.rstrip("\n")


@pytest.mark.parametrize("max_chars", [200, 1000, 4000])
def test_the_reply_keeps_to_its_budget_and_to_the_runners_summary(tmp_path: Path, max_chars: int) -> None:
    """The header, the trailer and the notes are part of the budget: the
    earliest kept lines go first (a marker counts them), so the runner's last
    lines (pytest's ``60 failed in``) stay; the CLI prints what the tool replies."""
    root = pytest_project(tmp_path, MANY_FAILURES)
    run = testrun.run_tests(root, "pytest", max_chars=max_chars)
    text = testrun.render(run)
    assert len(text) <= max_chars, len(text)
    assert text.startswith("$ ") and "60 failed" in text
    if max_chars > 200:  # (at 200 the marker and the trailer shrink to counts, or go)
        assert "earlier kept lines cut to fit the reply budget)" in text
        assert text.splitlines()[-1].startswith("[kept ")
        assert trailer_count(text) == len(runner_lines(text))  # what shows, not what the filter kept
    assert normalize(cli_reply(root, max_chars)) == normalize(text)


# A line of a reply that is not the runner's: one of ours, whole.
OURS_WHOLE = re.compile(r"\[[^\n]*\]|\.\.\. \(\d+ earlier kept lines? cut(?: to fit the reply budget)?\)")


def assert_fits_whole(text: str, run: testrun.TestRun, max_chars: int, summary: str) -> None:
    """Within the budget; the outcome line first, the runner's summary kept;
    every other line the runner's own or a trailer, marker or note of ours, whole."""
    assert len(text) <= max_chars, (max_chars, len(text))
    outcome, *rest = text.split("\n")
    assert re.fullmatch(r"\$ .+  ->  exit 1 in \d+\.\ds", outcome), outcome
    assert summary in text, (max_chars, text)
    runners = set(run.text.split("\n"))
    for line in rest:
        assert line in runners or OURS_WHOLE.fullmatch(line), (max_chars, line)


@pytest.mark.parametrize("max_chars", [200, 300])
def test_a_small_budget_keeps_the_summary_and_shrinks_the_trailer_instead_of_cutting_it(
    tmp_path: Path, max_chars: int
) -> None:
    """QA: at 300 the reply kept the environment line and a trailer cut
    mid-word ("[kept 4 of 46 lines (failure-relevant l") in place of pytest's
    "1 failed, 1 passed"; at 200 not even the environment line was whole.
    Now the environment line, the marker and the trailer shrink to counts or
    go, and the CLI prints what the MCP tool replies."""
    root = pytest_project(tmp_path, FAILING_TESTS)
    run = testrun.run_tests(root, "pytest", max_chars=max_chars)

    text = testrun.render(run)

    assert_fits_whole(text, run, max_chars, "1 failed, 1 passed in ")
    assert "cut to fit the reply budget" not in text.splitlines()[-1]
    assert normalize(cli_reply(root, max_chars)) == normalize(text)


def test_at_every_budget_the_reply_keeps_its_summary_and_whole_markers(tmp_path: Path) -> None:
    """One run's reply at budgets from the smallest up: each decoration
    whole, shrunk or gone, never cut; the summary always there, the failures
    before it as room allows. A redaction (the MCP server's roots) that
    lengthens the text is applied before the reply is fitted."""
    root = pytest_project(tmp_path, FAILING_TESTS)
    run = testrun.run_tests(root, "pytest")
    longer = "a-much-longer-redacted-folder-name/test_calc.py"

    for max_chars in range(200, len(testrun.render(run)) + 10, 7):
        sized = dataclasses.replace(run, max_chars=max_chars)
        assert_fits_whole(testrun.render(sized), sized, max_chars, "1 failed, 1 passed in ")
        redacted = testrun.render(sized, redact=lambda text: text.replace("test_calc.py", longer))
        assert len(redacted) <= max_chars and "1 failed, 1 passed in " in redacted
        assert all(line.startswith("[") == line.endswith("]") for line in redacted.split("\n")[1:])


def runner_lines(text: str) -> list[str]:
    """The runner's own lines of a reply: neither the outcome line nor one of
    ours (a marker, a gap, the trailer, a note), nor a blank gap."""
    return [line for line in text.split("\n")[1:] if line and not OURS_WHOLE.fullmatch(line)]


def trailer_count(text: str) -> int | None:
    """How many lines the reply's trailer says it kept (None without one)."""
    counted = re.match(r"\[kept (?:all |the last )?(\d+)", text.split("\n")[-1])
    return int(counted[1]) if counted else None


def test_at_every_budget_the_failed_line_wins_and_the_trailer_counts_what_shows(tmp_path: Path) -> None:
    """QA: the trailer counted the lines the filter kept before the reply was
    fitted (``[kept 4 of 23 lines]`` over 2 lines shown), and at 250-450
    characters the reply showed the context line `` +  where 4 = add(2, 2)``
    and pytest's summary but not the ``FAILED`` line between them. Now, from
    the smallest budget that holds both, the ``FAILED`` line shows beside the
    summary, the decorations giving way first, and the trailer counts the
    runner's lines the reply shows."""
    root = pytest_project(tmp_path, FAILING_TESTS)
    run = testrun.run_tests(root, "pytest")
    failed = "FAILED test_calc.py::test_add_wrong - assert 4 == 5"
    assert failed in run.text.split("\n")

    for max_chars in range(200, len(testrun.render(run)) + 10, 7):
        text = testrun.render(dataclasses.replace(run, max_chars=max_chars))
        shown = runner_lines(text)
        assert shown[-1].strip("= ").startswith("1 failed, 1 passed in"), (max_chars, text)
        if len(shown) > 1:
            assert failed in shown, (max_chars, text)
        if max_chars >= 250:
            assert failed in shown, (max_chars, text)
        assert trailer_count(text) in (None, len(shown)), (max_chars, text)


def test_the_query_log_counts_the_lines_the_reply_shows(tmp_path: Path) -> None:
    """QA: a run_tests call's ``hits`` in the query log were the lines the
    filter kept (``run.lines_kept``), more than the reply showed once the
    outcome line, the marker and the trailer took their room. Now they are
    the runner's lines the reply shows, as its trailer counts them."""
    import asyncio

    from mcp import Client

    from repolens.server.tools import build_server

    root = pytest_project(tmp_path / "app", MANY_FAILURES)
    log = tmp_path / "queries.jsonl"

    async def session() -> str:
        async with Client(build_server({"app": root}, query_log=log)) as client:
            reply = await client.call_tool("run_tests", {"runner": "pytest", "max_chars": 1000})
            assert not reply.is_error
            return reply.content[0].text

    text = asyncio.run(session())
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    shown = len(runner_lines(text))
    assert record["tool"] == "run_tests" and shown > 1
    assert record["hits"] == shown == trailer_count(text), (record, text)


def test_a_command_longer_than_the_budget_is_cut_before_its_exit_code(tmp_path: Path) -> None:
    """Test paths can make the command longer than the whole budget: its end
    gives way (``…``), its exit code and the runner's summary stay."""
    root = pytest_project(tmp_path, FAILING_TESTS)
    names = [f"test_{'x' * 150}_{i}.py" for i in range(3)]
    write_files(root, dict.fromkeys(names, FAILING_TESTS))

    run = testrun.run_tests(root, "pytest", names, max_chars=200)
    text = testrun.render(run)

    assert len(run.command) > 200 and len(text) <= 200
    outcome, summary = text.split("\n")
    assert outcome.startswith(f"$ {sys.executable} -m pytest test_xxx")
    assert re.search(r"…  ->  exit 1 in \d+\.\ds$", outcome), outcome
    assert re.fullmatch(r"3 failed, 3 passed in \d+\.\d+s", summary), summary
