"""A command in a new process loads only what it uses.

An agent may start ``repolens`` once per question: a search of a built index
must not load the indexer, the grammars, the models, the MCP server or a
worker pool. Checked on the modules a real subprocess ends with, not on
timings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE_FILES, commit_files, run_git, write_tree_files

# Top-level packages and modules the read path never needs.
HEAVY = (
    "concurrent.futures",
    "mcp",
    "multiprocessing",
    "numpy",
    "onnxruntime",
    "pathspec",
    "pydantic",
    "repolens.chunking.dispatch",
    "repolens.index.build",
    "repolens.models.rerank",
    "repolens.server",
    "starlette",
    "tokenizers",
    "tree_sitter",
    "uvicorn",
    "watchfiles",
)

# Runs the CLI in this process (its own stdout: a real stream, as a shell
# gives it), then prints the exit code and the modules it holds, one a line,
# then the classes of repolens whose methods were compiled from source at run
# time (a dataclass's, a ``collections.namedtuple``'s).
PROBE = """
import sys
from repolens.cli import main
code = main(sys.argv[1:])
print(MARK, code)
print("\\n".join(sorted(sys.modules)))
print(CLASSES_MARK)
def from_source(f):
    return getattr(getattr(getattr(f, "__func__", f), "__code__", None), "co_filename", "") == "<string>"
for name, module in sorted(sys.modules.items()):
    if name.startswith("repolens"):
        for value in vars(module).values():
            made_here = isinstance(value, type) and value.__module__ == name
            if made_here and any(map(from_source, vars(value).values())):
                print(f"{name}.{value.__qualname__}")
"""
MARK = "--modules after the command--"
CLASSES_MARK = "--compiled classes--"

# The write path: the store's writer and lock, removing folders, the chunk packer.
_WRITES = ("repolens.store.local.writer", "fcntl", "shutil", "tempfile")
_WRITES += ("repolens.chunking.pack", "repolens.chunking.text")
# What each command an agent runs per question leaves out besides HEAVY: click
# (the quick path of repolens.cli.reads), the write path, what the others need.
# hashlib loads OpenSSL; the read path's one hash, blake2b, needs it not
# (repolens.hashing). Reading and re-chunking a file (repolens.discover) waits
# until a cited file has changed since indexing.
_LAZY = ("hashlib", "repolens.discover")
# typing: ~12M instructions to import; the modules a search or a symbol
# lookup loads import its names for type checkers only (docs/development.md).
_LAZY += ("typing",)
# The service's modules of the other commands (repolens.service imports an
# operation's module when it is first asked for).
_SERVICE = ("repolens.service.branches", "repolens.service.navigation")
NOT_FOR = {
    "search": (
        "click",
        *_WRITES,
        *_LAZY,
        *_SERVICE,
        "repolens.service.reads",
        "repolens.service.stores",
        "repolens.models.rerank_config",
        "repolens.reply.snippet",
    ),
    "symbols": (
        "click",
        *_WRITES,
        *_LAZY,
        *_SERVICE,
        "repolens.service.searches",
        "repolens.search.ranking",
        "repolens.reply.packet",
        "tantivy",  # a symbol lookup never searches the lexical index
        "repolens.discover",
        "difflib",
        "repolens.reply.snippet",
    ),
    "read": (
        "click",
        *_SERVICE,
        "repolens.service.searches",
        "repolens.search",
        "repolens.store.base",
        "repolens.store.local",
        "sqlite3",
        "tantivy",
    ),
}


def probed(*args: str) -> tuple[int, set[str], set[str]]:
    """(exit code, modules loaded, classes compiled at run time) of a CLI command run in a new process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    out = subprocess.run(
        [sys.executable, "-c", f"MARK, CLASSES_MARK = {MARK!r}, {CLASSES_MARK!r}" + PROBE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded, _, classes = out.stdout.rpartition(MARK)[2].partition(CLASSES_MARK)
    code, *modules = loaded.split()
    return int(code), set(modules), set(classes.split())


def loaded_after(*args: str) -> tuple[int, set[str]]:
    code, modules, _ = probed(*args)
    return code, modules


@pytest.mark.parametrize(
    "command",
    [
        ["search", "where do sessions expire"],
        ["search", "session", "--json"],
        ["symbols", "SessionStore"],
        ["read", "src/auth/session.py", "1", "10"],
    ],
    ids=lambda c: "-".join(c[:1] + c[2:]),
)
def test_read_commands_load_no_heavy_module(indexed_sample: tuple[Path, Path], command: list[str]):
    root, index_dir = indexed_sample
    where = ["--root", str(root)] + ([] if command[0] == "read" else ["--index-dir", str(index_dir)])
    code, modules = loaded_after(*command, *where)
    assert code == 0
    unwanted = HEAVY + NOT_FOR[command[0]]
    assert sorted(m for m in modules if any(m == u or m.startswith(u + ".") for u in unwanted)) == []


def test_a_search_with_the_history_leg_loads_no_numpy(sample_repo: Path, tmp_path: Path):
    """The history's BM25 is computed without numpy in a process that has
    not loaded it (repolens.store.history_rank): loading it would cost a
    search in a new process more than the rest of it."""
    session = SAMPLE_FILES["src/auth/session.py"] + "# sessions expire after SESSION_TTL\n"
    commit_files(run_git, sample_repo, "Expire sessions after an hour", {"src/auth/session.py": session})
    index_dir = tmp_path / "index"
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    index = [sys.executable, "-m", "repolens", "index", str(sample_repo), "--index-dir", str(index_dir)]
    subprocess.run(index, env=env, capture_output=True, check=True, timeout=120)
    where = ["--root", str(sample_repo), "--index-dir", str(index_dir)]
    probe = f"MARK, CLASSES_MARK = {MARK!r}, {CLASSES_MARK!r}" + PROBE
    out = subprocess.run(
        [sys.executable, "-c", probe, "search", "when do sessions expire", "--explain", *where],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    reply, _, loaded = out.partition(MARK)
    assert "; history: 1 similar commit" in reply  # the leg voted
    assert sorted(m for m in loaded.split() if m == "numpy" or m.startswith("numpy.")) == []


# Creating a dataclass compiles its generated methods (~4M instructions for a
# small frozen one, ~12M for Settings' 28 fields), and so does a
# ``typing.NamedTuple`` (~1M for five fields): a search's own records are
# repolens.record.Record classes (made without compiling) or plain slotted
# classes (changed as they are filled in). These are the ones left: Chunk,
# Hit and Packet by design (STYLE.md), and Settings (read as class
# attributes). ChunkedFile, what a chunker makes, waits in
# repolens.chunking.chunker until a file is re-chunked.
SEARCH_COMPILED_CLASSES = {
    "repolens.chunking.Chunk",
    "repolens.reply.packet.Packet",
    "repolens.search.hits.Hit",
    "repolens.settings.Settings",
}


@pytest.mark.parametrize("mode", [[], ["--json"], ["--files"]], ids=["packet", "json", "files"])
def test_a_search_compiles_no_class_beyond_its_values(indexed_sample: tuple[Path, Path], mode: list[str]):
    root, index_dir = indexed_sample
    code, _, classes = probed(
        "search", "where do sessions expire", *mode, "--root", str(root), "--index-dir", str(index_dir)
    )
    assert code == 0
    assert classes == SEARCH_COMPILED_CLASSES


def test_the_service_imports_an_operations_module_when_it_is_first_asked_for():
    """``repolens.service`` names every operation (``__all__``), and loads none
    of their modules until one is asked for; then that module alone."""
    out = run_python(
        """
import sys
from repolens import service
def loaded():
    return sorted(m.rpartition(".")[2] for m in sys.modules if m.startswith("repolens.service."))
print(loaded())
print(service.search_code.__module__, loaded())
from repolens.service import find_references
print(find_references.__module__, loaded())
names = [n for n in service.__all__ if getattr(service, n).__name__ != n]
print(names, loaded(), hasattr(service, "no_such_operation"))
"""
    )
    assert out.splitlines() == [
        "[]",
        "repolens.service.searches ['searches']",
        "repolens.service.navigation ['navigation', 'searches']",
        "[] ['branches', 'navigation', 'reads', 'searches', 'stores'] False",
    ]


def test_help_loads_no_use_case():
    code, modules = loaded_after("--help")
    assert code == 0
    assert not {"repolens.service", "repolens.store.local", "repolens.search"} & modules


def test_indexing_a_small_repository_starts_no_worker_process(tmp_path: Path):
    """Below ``PARALLEL_MIN_BYTES`` files are prepared in process: the pool
    machinery (which spawning workers needs) is never even imported."""
    root = tmp_path / "repo"
    write_tree_files(root, SAMPLE_FILES)
    code, modules = loaded_after("index", str(root), "--index-dir", str(tmp_path / "index"))
    assert code == 0
    assert sorted(m for m in modules if m.startswith(("multiprocessing", "concurrent.futures"))) == []


def run_python(code: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPOLENS_")}
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout


def test_a_quick_command_never_runs_the_stdlib_modules_it_does_not_use(indexed_sample: tuple[Path, Path]):
    """A command run as its process's own command line (``main()`` reads
    ``sys.argv``) leaves ``inspect`` and ``ipaddress`` in ``sys.modules``
    unexecuted; a command given its arguments (a caller's process) does not
    defer them."""
    root, index_dir = indexed_sample
    probe = (
        "import sys\nfrom repolens.cli import main\ncode = main(CALL)\n"
        "print('--', code, *(type(sys.modules[m]).__name__ for m in ('inspect', 'ipaddress')))"
    )
    where = ["--root", str(root), "--index-dir", str(index_dir)]

    def after(call: str, *command: str) -> list[str]:
        return run_python(probe.replace("CALL", call), *command, *where).rpartition("--")[2].split()

    assert after("", "search", "where do sessions expire") == ["0", "_Deferred", "_Deferred"]
    assert after("", "symbols", "SessionStore") == ["0", "_Deferred", "_Deferred"]
    assert after("sys.argv[1:]", "search", "where do sessions expire") == ["0", "module", "module"]


def test_a_deferred_module_works_at_its_first_use():
    """Whatever looks a name up in a deferred module gets it: the module's
    code runs then, once, even when several threads ask at the same time."""
    out = run_python(
        """
import sys, threading
from repolens.cli import _defer_unused_modules
_defer_unused_modules()
import inspect, ipaddress
print(type(inspect).__name__, type(ipaddress).__name__)
barrier = threading.Barrier(8)
found = []
def use():
    barrier.wait()
    found.append(inspect.isfunction(use))
threads = [threading.Thread(target=use) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(found.count(True), type(inspect).__name__, inspect.signature(lambda a, b=1: 0))
from ipaddress import ip_address
print(ip_address("::1").version)
import dataclasses
@dataclasses.dataclass
class Point:
    x: int
print(Point.__doc__)
try:
    inspect.no_such_name
except AttributeError as exc:
    print(exc)
"""
    )
    assert out.splitlines() == [
        "_Deferred _Deferred",
        "8 module (a, b=1)",
        "6",
        "Point(x: int)",
        "module 'inspect' has no attribute 'no_such_name'",
    ]


# Patterns a search never uses, compiled by re's cache when first used: a
# pattern costs ~0.5M instructions to compile (docs/benchmarks.md), the C++
# signs, with their ~80 header names, ~9M. A name may hold a tuple of them.
NOT_COMPILED_BY_A_SEARCH = (
    ("repolens.store", "KEY_RE"),
    ("repolens.chunking.languages", "_CPP_SIGNS"),
    ("repolens.chunking.languages", "_NOT_CODE"),
    ("repolens.search.pinpoint", "_FRAMES"),  # a question with a traceback's frame runs them
    ("repolens.service.navigation", "PLACE"),
    ("repolens.chunking.labels", "_MORE"),
    ("repolens.search.remembered", "_ID"),
    ("repolens.store.local.failures", "_IN_FILE"),
    ("repolens.store.local.failures", "_NOT_UTF8"),
    ("repolens.store.local.failures", "_NO_SUCH"),
    ("repolens.chunking.refs", "_COMPANION_OBJECT"),
    ("repolens.tokens", "_RUN"),  # non-ASCII text's (re.ASCII's _RUN_ASCII is compiled)
    ("repolens.tokens", "_SEPARATORS"),
    ("repolens.store.local.failures", "_INNER"),
    ("repolens.store.local.layout", "_GEN"),
    ("repolens.store.local.segments", "_SEGMENT_FILE"),
)


def test_a_search_compiles_no_pattern_it_does_not_use(indexed_sample: tuple[Path, Path]):
    root, index_dir = indexed_sample
    probe = (
        "import importlib, re, sys\nfrom repolens.cli import main\ncode = main(sys.argv[1:])\n"
        "compiled = {key[1] for key in re._cache if key[2] == 0}\n"  # used as strings: no flags
        f"for module, name in {NOT_COMPILED_BY_A_SEARCH!r}:\n"
        "    value = getattr(importlib.import_module(module), name)\n"
        "    patterns = value if isinstance(value, tuple) else (value,)\n"
        "    lazy = all(isinstance(p, str) for p in patterns)\n"
        "    print('--', module, name, lazy, any(p in compiled for p in patterns))\n"
    )
    where = ["--root", str(root), "--index-dir", str(index_dir)]
    out = run_python(probe, "search", "where do sessions expire", *where)
    found = [line.split()[1:] for line in out.splitlines() if line.startswith("-- ")]
    assert found == [[module, name, "True", "False"] for module, name in NOT_COMPILED_BY_A_SEARCH]
