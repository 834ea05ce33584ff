"""bench.common.lsp_judges's Go judge: gopls asked over stdio, on a small module made here.

Runs the real gopls and go command where they are installed (Debian's
``gopls`` and ``golang-go``, which ``bench.refs_judge`` installs); skipped
elsewhere.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.common.lsp_judges import Query, judged_files, references

pytestmark = pytest.mark.skipif(
    shutil.which("gopls") is None or shutil.which("go") is None,
    reason="gopls and go are not installed (apt-get install gopls golang-go)",
)

MODULE = {
    "go.mod": "module example.com/tool\n\ngo 1.19\n",
    "tool.go": "package tool\n\n// Sum adds.\nfunc Sum(a, b int) int { return a + b }\n",
    "use.go": "package tool\n\nfunc twice(a int) int {\n\treturn Sum(a, a)\n}\n",
    "sub/sub.go": 'package sub\n\nimport "example.com/tool"\n\nvar X = tool.Sum(1, 2)\n',
    "_examples/main.go": 'package main\n\nimport "example.com/tool"\n\nfunc main() { tool.Sum(3, 4) }\n',
}


@pytest.fixture
def module(tmp_path: Path, write_tree) -> Path:
    root = tmp_path / "tool"
    write_tree(root, MODULE)
    return root


def test_gopls_finds_the_uses_in_the_package_and_in_an_importer_not_the_declaration(module: Path):
    (found, _, error), *_ = references(
        "go", Path(shutil.which("gopls") or ""), module, [Query("tool.go", 4, 5)], []
    )
    assert error == ""
    assert found == {("use.go", 4), ("sub/sub.go", 5)}  # _examples is no package the go command builds


def test_the_files_the_go_command_builds_leave_out_underscored_folders(module: Path):
    assert judged_files("go", module) == {"tool.go", "use.go", "sub/sub.go"}
    assert judged_files("python", module) is None
