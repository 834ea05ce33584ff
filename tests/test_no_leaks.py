"""The suite itself: a run that leaves a process behind fails, and says which."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from conftest import running_processes

pytest_plugins = ["pytester"]

LEAKY_TESTS = """
import subprocess
import sys


def test_leaves_a_child_running():
    subprocess.Popen(["sleep", "300"])


def test_leaves_an_orphan_running():
    # the middle process exits at once: its child is re-parented to init
    code = "import subprocess; subprocess.Popen(['sleep', '301'])"
    subprocess.run([sys.executable, "-c", code], check=True)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the check reads /proc")
def test_a_process_left_running_fails_the_run_and_is_killed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    pytester.makeconftest(Path(__file__).with_name("conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    monkeypatch.setenv("REPOLENS_TEST_EXIT_GRACE", "1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "2 processes started by the test suite were still running (now killed):" in out
    pids = [int(m) for m in re.findall(r"^  pid (\d+) \(ppid \d+\): sleep 30[01]$", out, re.MULTILINE)]
    assert len(pids) == 2, out
    assert not [p for p in running_processes() if p.pid in pids], "the leftovers were not killed"
