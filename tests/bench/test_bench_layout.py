"""bench/: a few entries at the top, run as modules from the repository root,
each documented where a reader meets it, and no machine's folders anywhere."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
PACKAGES = ("common", "mining", "probes")  # helpers and one-off probes, apart from the entries
# The entries: a module at the top, or a package at the top with a __main__ (several commands).
ENTRIES = sorted(
    [p.stem for p in BENCH.glob("*.py") if p.name != "__init__.py"]
    + [p.parent.name for p in BENCH.glob("*/__main__.py")]
)
PROBES = sorted(p.stem for p in (BENCH / "probes").glob("*.py") if p.name != "__init__.py")
# Where a reader meets a command: what names a missing one misleads.
DOCUMENTS = [ROOT / "README.md", ROOT / "pyproject.toml", *ROOT.glob("docs/*.md"),
             *BENCH.rglob("*.md"), *BENCH.rglob("*.py"), *ROOT.glob("tests/**/*.py")]  # fmt: skip
COMMAND = re.compile(r"python -m (bench(?:\.\w+)+)(?: ([a-z_]+))?")


def commands_of(entry: str) -> list[str]:
    """The commands of a package entry (its __main__'s COMMANDS); [] for a module entry."""
    main = BENCH / entry / "__main__.py"
    if not main.is_file():
        return []
    tree = ast.parse(main.read_text())
    table = next(n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "COMMANDS")
    return [k.value for k in table.keys]


def test_the_top_holds_at_most_twelve_entries() -> None:
    assert len(ENTRIES) <= 12, ENTRIES
    loose = sorted(p.name for p in BENCH.iterdir() if p.is_dir() and p.name not in (*ENTRIES, *PACKAGES))
    assert [d for d in loose if d != "__pycache__"] == []


def test_no_bench_code_edits_the_import_path() -> None:
    edit = re.compile(r"sys\.path\.(insert|append)|sys\.path\s*=")
    assert [str(p.relative_to(ROOT)) for p in BENCH.rglob("*.py") if edit.search(p.read_text())] == []


RUNS = [(e, c) for e in ENTRIES for c in (commands_of(e) or [None])] + [(f"probes.{p}", None) for p in PROBES]


@pytest.mark.parametrize("entry,command", RUNS, ids=lambda v: v or "")
def test_every_bench_command_starts_as_documented(entry: str, command: str | None) -> None:
    """``--help`` loads every import: a module that lost its way to a helper fails here."""
    argv = [sys.executable, "-m", f"bench.{entry}", *([command] if command else []), "--help"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:")


def _top(requirement: str) -> str:
    """The import name of a requirement such as ``psycopg-pool>=3.2``."""
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("-", "_")


def test_every_import_in_bench_names_a_module_that_exists() -> None:
    """Imports inside functions too (``--help`` does not run them): a module
    that moved is found by name, or named here."""
    import importlib.util
    import tomllib

    # A module from an extra that the tests do not install (``train``: lightgbm) may
    # be absent; it is named by its distribution, as pyproject.toml lists it.
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    tested = {_top(d) for d in extras["test"]}
    optional = {_top(d) for name, deps in extras.items() if name != "test" for d in deps} - tested
    missing = set()
    for path in BENCH.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                try:
                    found = importlib.util.find_spec(name) is not None
                except ModuleNotFoundError:
                    found = False
                if not found and name.split(".")[0] not in optional:
                    missing.add(f"{path.relative_to(ROOT)}: {name}")
    assert sorted(missing) == []


def test_a_package_entry_lists_its_commands_and_refuses_an_unknown_one() -> None:
    done = subprocess.run([sys.executable, "-m", "bench.replies"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert all(f"  {c} " in done.stdout for c in commands_of("replies"))
    wrong = subprocess.run(
        [sys.executable, "-m", "bench.replies", "nope"], cwd=ROOT, capture_output=True, text=True
    )
    assert wrong.returncode == 2 and "unknown command 'nope'" in wrong.stderr


def test_the_bench_readme_names_each_entry_at_the_top_and_each_probe_below() -> None:
    readme = (BENCH / "README.md").read_text()
    top, probes = readme.split("## Probes", 1)
    assert [e for e in ENTRIES if f"`bench.{e}`" not in top] == []
    assert [p for p in PROBES if f"`{p}`" not in probes] == []


def test_every_bench_command_a_document_names_exists() -> None:
    known = {f"bench.{e}": commands_of(e) for e in ENTRIES} | {f"bench.probes.{p}": [] for p in PROBES}
    known["bench.probes"] = []  # as in ``python -m bench.probes.<name>``
    wrong = set()
    for doc in DOCUMENTS:
        for module, word in COMMAND.findall(doc.read_text()):
            if module not in known or (word and known[module] and word not in known[module]):
                wrong.add(f"{doc.relative_to(ROOT)}: python -m {module} {word}".rstrip())
    old = {
        f"{doc.relative_to(ROOT)}: {m}"
        for doc in DOCUMENTS
        for m in re.findall(r"(?<![\w/.])bench/\w+\.py", doc.read_text())
    }
    assert sorted(wrong | old) == [], sorted(wrong | old)


def test_no_tracked_file_names_this_machines_folders() -> None:
    """Bench data lives where $REPOLENS_BENCH_DATA says: a path under the
    folder that holds this checkout is one machine's, not the project's. A
    checkout in the system's temporary folder (a CI clone) is looked for by its
    own path: ``/tmp/`` itself is every machine's (``--index-dir /tmp/idx``)."""
    import tempfile

    shared = {"/", "/tmp/", "/var/tmp/", str(Path(tempfile.gettempdir()).resolve()) + "/"}
    parent = str(ROOT.parent) + "/"
    folder = str(ROOT) + "/" if parent in shared else parent
    if folder == "/":
        pytest.skip("the checkout sits at the root: no parent folder to look for")
    done = subprocess.run(["git", "grep", "-l", "-F", folder, "--", ".", ":!*.lock"], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode not in (0, 1):
        pytest.skip(f"not a git checkout: {done.stderr.strip()}")
    assert done.stdout.split() == []
