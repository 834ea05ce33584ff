"""The language servers ``bench.refs_judge`` compares repolens with, installed and asked.

Each judge is installed once into a cache folder (``$REPOLENS_BENCH_DATA/
lsp``) from its registry with the ordinary client, and answers
:func:`references` for many definitions of one repository at once:

* Python: jedi (PyPI), ``Script.get_references`` in a ``jedi.Project`` of
  the repository (its own ``src/`` folder first on the path when it has
  one), in an interpreter with nothing installed but pytest (a developer's
  interpreter has the test runner: jedi follows a test's parameters to
  their pytest fixtures only when it can import pytest), with no limit on
  the files searched;
* TypeScript: the TypeScript compiler's language service (npm
  ``typescript@5``), ``getReferencesAtPosition`` over every ``.ts``/``.tsx``
  file of the repository, run by a small Node script written here;
* Go: gopls, the Go team's language server (Debian's ``gopls`` with
  Debian's Go, installed with ``apt-get`` when missing: the Go module proxy
  is not reached), asked ``textDocument/references`` over stdio
  (:func:`_gopls`). It runs in GOPATH mode on a copy of the repository
  placed at its module path, the modules it imports taken from Debian's
  ``golang-*-dev`` sources (``/usr/share/gocode``): nothing is downloaded.

A reference is a (path, line) inside the repository; the definition's own
line is left out by the caller.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlparse

JEDI = "jedi==0.19.2"
PYTEST = "pytest==9.2.0"
TYPESCRIPT = "typescript@5.6.3"
# Debian's packages for the Go judge: the toolchain, the server, and the
# modules the judged repositories import (as source, for GOPATH mode).
GO_PACKAGES = (
    "golang-go",
    "gopls",
    "golang-github-spf13-pflag-dev",
    "golang-github-cpuguy83-go-md2man-v2-dev",
    "golang-gopkg-yaml.v3-dev",
    "golang-github-stretchr-testify-dev",
    "golang-github-gin-contrib-sse-dev",
    "golang-github-go-playground-validator-v10-dev",
    "golang-github-pelletier-go-toml.v2-dev",
    "golang-github-ugorji-go-codec-dev",
    "golang-github-mattn-go-isatty-dev",
    "golang-google-protobuf-dev",
    "golang-golang-x-net-dev",
)
GOCODE = "/usr/share/gocode"  # where Debian's golang-*-dev packages put their source


# What a judge answers for one query: the (path, line) set, the seconds it took, an error ("" none).
Answer = tuple[set[tuple[str, int]], float, str]


class Query(NamedTuple):
    """A definition to ask about: its file, and where its name is (1-based line, 0-based column)."""

    path: str
    line: int
    column: int


def install(cache: Path, languages: Sequence[str] = ("python", "typescript")) -> dict[str, Path]:
    """Install the judges of ``languages`` into ``cache`` (once); where each is."""
    cache = cache.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    judges: dict[str, Path] = {}
    if "go" in languages:
        judges["go"] = _install_go()
    if "python" not in languages and "typescript" not in languages:
        return judges
    py = cache / "jedi"
    if not (py / "jedi").exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(py), JEDI], check=True)
    # An interpreter with nothing installed but pytest: jedi resolves ``import flask``
    # to the repository's own code, not to a copy in this venv's site-packages.
    bare = cache / "pytest-python"
    if not (bare / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
        purelib = subprocess.run(
            [str(bare / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        pip = [sys.executable, "-m", "pip", "install", "-q", "--target", purelib, PYTEST]
        subprocess.run(pip, check=True)
    ts = cache / "typescript"
    if not (ts / "node_modules" / "typescript").exists():
        ts.mkdir(exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(ts), TYPESCRIPT], check=True)
    return {**judges, "python": py, "typescript": ts / "node_modules" / "typescript", "pytest-python": bare}


def _install_go() -> Path:
    """gopls and the Go packages of :data:`GO_PACKAGES`, from Debian's registry when missing."""
    listed = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package} ${Status}\\n", *GO_PACKAGES],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    have = {line.split()[0] for line in listed.splitlines() if line.endswith(" installed")}
    missing = [p for p in GO_PACKAGES if p not in have]
    if missing:
        command = ["apt-get", "install", "-y", "-q", *missing]
        if os.geteuid() != 0:
            raise RuntimeError("the Go judge needs Debian's packages: run " + " ".join(command) + " as root")
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    gopls = shutil.which("gopls")
    if gopls is None:
        raise RuntimeError("gopls is not on PATH after installing it")
    return Path(gopls)


_JEDI_SCRIPT = r"""
import json, sys, time
import jedi  # from the cache folder, which PYTHONPATH names
import jedi.inference.references as searched
# jedi stops a reference search after 30 parsed files (and 2,000 opened): a
# name used in more is found in part. The judge reads them all.
searched._PARSED_FILE_LIMIT = searched._OPENED_FILE_LIMIT = 10**9
# It also runs a function at most 6 times per question (200 functions in all)
# to infer what it returns: the 7th test taking flask's ``app`` fixture as a
# parameter has an ``app`` of no type. The judge runs them all (recursion
# itself stays bounded).
import jedi.inference.recursion as executions
executions.total_function_execution_limit = executions.per_function_execution_limit = 10**9
# jedi's pytest plugin memoizes the generator of the modules a test file sees
# fixtures in (its conftest.py files, pytest's own plugins) as if it were a
# value: only the first fixture looked up in a file sees them all, later ones
# what that first lookup left of the generator (tmp_path's uses in pytest's
# testing/test_tmpdir.py: 2 of 37). The judge keeps them as a list.
import jedi.plugins.pytest as fixtures
from jedi.inference.cache import inference_state_method_cache
_modules = next(
    c.cell_contents for c in fixtures._iter_pytest_modules.__closure__
    if getattr(c.cell_contents, "__name__", "") == "_iter_pytest_modules"
)
fixtures._iter_pytest_modules = inference_state_method_cache()(
    lambda context, skip_own_module=False: list(_modules(context, skip_own_module=skip_own_module))
)
root, queries = sys.argv[2], json.load(open(sys.argv[3]))
src = root + "/src"
import os
environment = jedi.create_environment(sys.argv[4], safe=False)
# src/ first: pytest's own checkout is the pytest it imports, not the one installed.
sys_path = ([src] if os.path.isdir(src) else []) + environment.get_sys_path()
project = jedi.Project(root, sys_path=sys_path, environment_path=sys.argv[4])
for path, line, column in queries:
    started = time.monotonic()
    try:
        script = jedi.Script(path=os.path.join(root, path), project=project, environment=environment)
        names = script.get_references(line, column)
        found = sorted({(os.path.relpath(str(n.module_path), root), n.line) for n in names if n.module_path})
        error = ""
    except Exception as exc:
        found, error = [], repr(exc)[:200]
    print(json.dumps({"refs": found, "seconds": time.monotonic() - started, "error": error}), flush=True)
"""

_TS_SCRIPT = r"""
const fs = require("fs"), path = require("path");
const ts = require(process.argv[2]);
const root = process.argv[3];
const files = JSON.parse(fs.readFileSync(process.argv[4], "utf8")).map(f => path.join(root, f));
const queries = JSON.parse(fs.readFileSync(process.argv[5], "utf8"));
const options = { allowJs: true, jsx: ts.JsxEmit.Preserve, target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, noEmit: true,
  allowImportingTsExtensions: true, skipLibCheck: true, types: [] };
const host = {
  getScriptFileNames: () => files, getScriptVersion: () => "1",
  getScriptSnapshot: f =>
    fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined,
  getCurrentDirectory: () => root, getCompilationSettings: () => options,
  getDefaultLibFileName: o => ts.getDefaultLibFilePath(o), fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile, readDirectory: ts.sys.readDirectory, directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
for (const [file, line, column] of queries) {
  const started = Date.now();
  let found = [], error = "";
  try {
    const abs = path.join(root, file);
    const sf = service.getProgram().getSourceFile(abs);
    const pos = ts.getPositionOfLineAndCharacter(sf, line - 1, column);
    for (const r of service.getReferencesAtPosition(abs, pos) || []) {
      const other = service.getProgram().getSourceFile(r.fileName);
      if (!other || !r.fileName.startsWith(root + "/")) continue;
      const at = ts.getLineAndCharacterOfPosition(other, r.textSpan.start);
      found.push([path.relative(root, r.fileName), at.line + 1]);
    }
  } catch (e) { error = String(e).slice(0, 200); }
  console.log(JSON.stringify({ refs: found, seconds: (Date.now() - started) / 1000, error }));
}
"""


def references(
    language: str, judge: Path, root: Path, queries: Sequence[Query], files: Sequence[str]
) -> list[Answer]:
    """What the judge of ``language`` finds for each of ``queries``, in order."""
    if language == "go":
        return _gopls(judge, root, queries)
    with tempfile.TemporaryDirectory() as tmp:
        q = Path(tmp) / "queries.json"
        q.write_text(json.dumps([list(x) for x in queries]))
        if language == "python":
            script = Path(tmp) / "judge.py"
            script.write_text(_JEDI_SCRIPT)
            bare = judge.parent / "pytest-python"
            cmd = [sys.executable, str(script), str(judge), str(root), str(q), str(bare)]
        else:
            script = Path(tmp) / "judge.js"
            script.write_text(_TS_SCRIPT)
            listed = Path(tmp) / "files.json"
            listed.write_text(json.dumps(list(files)))
            cmd = [
                "node",
                "--max-old-space-size=4096",
                str(script),
                str(judge),
                str(root),
                str(listed),
                str(q),
            ]
        started = time.monotonic()
        env = {**os.environ, "PYTHONPATH": str(judge)} if language == "python" else None
        out = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
        if out.returncode != 0 and not out.stdout:
            raise RuntimeError(f"{language} judge failed: {out.stderr[-2000:]}")
        rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        print(
            f"  {language} judge: {len(rows)} answers in {time.monotonic() - started:.0f} s", file=sys.stderr
        )
    # (jedi names a reference without a line now and then: no place to compare, left out)
    return [
        ({(p, int(n)) for p, n in r["refs"] if n is not None}, float(r["seconds"]), r["error"]) for r in rows
    ]


def _go_workspace(root: Path, tmp: str) -> tuple[Path, dict[str, str]]:
    """A copy of ``root`` at ``tmp/src/<its module path>``, and the
    environment that runs the go command and gopls on it in GOPATH mode,
    its imports found in the copy and in :data:`GOCODE`: in module mode the
    go command would want the required modules from a proxy, GOPATH mode
    needs neither a proxy nor a ``go.sum``."""
    workspace = Path(tmp) / "src" / _go_module(root)
    shutil.copytree(root, workspace, symlinks=True)
    env = {
        **os.environ,
        "GO111MODULE": "off",
        "GOPATH": f"{tmp}{os.pathsep}{GOCODE}",
        "GOPROXY": "off",
        "GOFLAGS": "",
        "GOTOOLCHAIN": "local",
    }
    return workspace, env


def judged_files(language: str, root: Path) -> set[str] | None:
    """The files of ``root`` the judge of ``language`` reads (None: all).
    For Go, those the go command builds here: not those in folders it
    ignores (``_examples``, ``testdata``) nor those of another platform
    (``command_win.go``)."""
    if language != "go":
        return None
    with tempfile.TemporaryDirectory() as tmp:
        workspace, env = _go_workspace(root, tmp)
        listed = subprocess.run(
            ["go", "list", "-e", "-f", _GO_FILES, "./..."],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    out = set()
    for line in listed.splitlines():
        folder, *names = line.split(" ")
        out |= {(Path(folder) / n).relative_to(workspace).as_posix() for n in names}
    return out


# A package's folder and its files, tests included, as ``go list -f`` prints them.
_GO_FILES = "{{.Dir}}" + "".join(
    f"{{{{range .{kind}}}}} {{{{.}}}}{{{{end}}}}"
    for kind in ("GoFiles", "CgoFiles", "TestGoFiles", "XTestGoFiles")
)


def _gopls(gopls: Path, root: Path, queries: Sequence[Query]) -> list[Answer]:
    """Ask gopls (:func:`references` for Go), in GOPATH mode on a copy of
    the repository (:func:`_go_workspace`). A query that crashes gopls (a
    panic) is an error, and the next one starts a new server."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        workspace, env = _go_workspace(root, tmp)
        log = Path(tmp) / "gopls.log"
        out: list[Answer] = []
        server = None
        crashes = 0
        try:
            for q in queries:
                asked = time.monotonic()
                server = server or _Lsp([str(gopls)], workspace, env, log)
                position = {"line": q.line - 1, "character": _utf16_column(workspace / q.path, q)}
                try:
                    answer = server.call(
                        "textDocument/references",
                        {
                            "textDocument": {"uri": (workspace / q.path).as_uri()},
                            "position": position,
                            "context": {"includeDeclaration": False},
                        },
                    )
                except RuntimeError:  # it crashed on this query (a panic): a new one for the next
                    server.close()
                    server = None
                    crashes += 1
                    panic = [line for line in log.read_text(errors="replace").splitlines() if "panic" in line]
                    answer = {"error": {"message": f"gopls crashed: {panic[-1] if panic else 'no message'}"}}
                found, error = set(), ""
                if "error" in answer:
                    error = str(answer["error"].get("message", answer["error"]))[:200]
                for loc in answer.get("result") or ():
                    path = Path(unquote(urlparse(loc["uri"]).path))
                    if path.is_relative_to(workspace):
                        found.add((path.relative_to(workspace).as_posix(), loc["range"]["start"]["line"] + 1))
                out.append((found, time.monotonic() - asked, error))
        finally:
            if server is not None:
                server.close()
    failed = f", {crashes} crashed it" if crashes else ""
    print(f"  go judge: {len(out)} answers in {time.monotonic() - started:.0f} s{failed}", file=sys.stderr)
    return out


def _go_module(root: Path) -> str:
    """The module path ``root``'s ``go.mod`` declares."""
    gomod = root / "go.mod"
    if gomod.is_file():
        for line in gomod.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("module "):
                return line.split()[1].strip('"')
    raise RuntimeError(f"{root} has no go.mod naming its module: the Go judge needs its import path")


def _utf16_column(path: Path, q: Query) -> int:
    """LSP counts a position's column in UTF-16 code units; a query's is in characters."""
    line = path.read_text(encoding="utf-8", errors="replace").split("\n")[q.line - 1]
    return len(line[: q.column].encode("utf-16-le")) // 2


class _Lsp:
    """A language server over stdio: JSON-RPC messages with ``Content-Length``
    headers. Requests from the server are answered with null (no
    configuration, no progress), its notifications (diagnostics) dropped."""

    def __init__(self, command: list[str], workspace: Path, env: dict[str, str], log: Path) -> None:
        with log.open("a") as stderr:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=workspace,
                env=env,
            )
        self.next_id = 0
        folder = {"uri": workspace.as_uri(), "name": workspace.name}
        self.call(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": folder["uri"],
                "workspaceFolders": [folder],
                "capabilities": {"textDocument": {"references": {}}},
            },
        )
        self._send({"method": "initialized", "params": {}})
        self.call("workspace/symbol", {"query": "a"})  # warm: every package loaded before a question

    def close(self) -> None:
        """Shut the server down, or kill it when it does not answer."""
        try:
            self.call("shutdown", None)
            self._send({"method": "exit"})
            self.process.wait(timeout=30)
        except (OSError, ValueError, RuntimeError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # what was left to write to a dead server
                    pipe.close()

    def call(self, method: str, params: object) -> dict:
        self.next_id += 1
        mine = self.next_id
        self._send({"id": mine, "method": method, "params": params})
        while True:
            message = self._receive()
            if "method" not in message and message.get("id") == mine:
                return message
            if "method" in message and "id" in message:  # the server's own request
                self._send({"id": message["id"], "result": None})

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _receive(self) -> dict:
        assert self.process.stdout is not None
        length = 0
        while True:
            header = self.process.stdout.readline()
            if not header:
                raise RuntimeError("the language server closed its output")
            if not header.strip():
                break
            name, _, value = header.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return json.loads(self.process.stdout.read(length))
