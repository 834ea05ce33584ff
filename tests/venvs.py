"""Real Python virtual environments for the test-run tests, made in about 60 ms.

``python -m venv --without-pip`` makes the environment; "with pytest" adds a
``.pth`` file naming the folder this suite's pytest is installed in, so the
environment's own interpreter imports pytest as it would after a ``pip
install pytest`` there (no download, no copy)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def make_venv(folder: Path, *, with_pytest: bool) -> Path:
    """A virtual environment at ``folder``; its interpreter's path."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    if with_pytest:
        import pytest

        site = next(folder.glob("lib/python3*/site-packages"))
        (site / "suite-pytest.pth").write_text(f"{Path(pytest.__file__).parent.parent}\n")
    return folder / "bin" / "python"
