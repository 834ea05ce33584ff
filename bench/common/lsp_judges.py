"""The language servers ``bench.refs_judge`` compares repolens with, installed and asked.

Each judge is installed once into a cache folder (``$REPOLENS_BENCH_DATA/
lsp``) from its registry with the ordinary client, and answers
:func:`references` for many definitions of one repository at once:

* Python: jedi (PyPI), ``Script.get_references`` in a ``jedi.Project`` of
  the repository (its own ``src/`` folder on the path when it has one), in
  an interpreter with nothing installed, with no limit on the files searched;
* TypeScript: the TypeScript compiler's language service (npm
  ``typescript@5``), ``getReferencesAtPosition`` over every ``.ts``/``.tsx``
  file of the repository, run by a small Node script written here.

A reference is a (path, line) inside the repository; the definition's own
line is left out by the caller.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

JEDI = "jedi==0.19.2"
TYPESCRIPT = "typescript@5.6.3"


class Query(NamedTuple):
    """A definition to ask about: its file, and where its name is (1-based line, 0-based column)."""

    path: str
    line: int
    column: int


def install(cache: Path) -> dict[str, Path]:
    """Install the judges into ``cache`` (once); where each is."""
    cache = cache.resolve()
    cache.mkdir(parents=True, exist_ok=True)
    py = cache / "jedi"
    if not (py / "jedi").exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(py), JEDI], check=True)
    # An interpreter with nothing installed: jedi resolves ``import flask`` to the
    # repository's own code, not to a copy in this venv's site-packages.
    bare = cache / "bare-python"
    if not (bare / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    ts = cache / "typescript"
    if not (ts / "node_modules" / "typescript").exists():
        ts.mkdir(exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(ts), TYPESCRIPT], check=True)
    return {"python": py, "typescript": ts / "node_modules" / "typescript", "bare-python": bare}


_JEDI_SCRIPT = r"""
import json, sys, time
import jedi  # from the cache folder, which PYTHONPATH names
import jedi.inference.references as searched
# jedi stops a reference search after 30 parsed files (and 2,000 opened): a
# name used in more is found in part. The judge reads them all.
searched._PARSED_FILE_LIMIT = searched._OPENED_FILE_LIMIT = 10**9
root, queries = sys.argv[2], json.load(open(sys.argv[3]))
src = root + "/src"
import os
environment = jedi.create_environment(sys.argv[4], safe=False)
project = jedi.Project(root, added_sys_path=[src] if os.path.isdir(src) else [], environment_path=sys.argv[4])
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
) -> list[tuple[set[tuple[str, int]], float, str]]:
    """What the judge of ``language`` finds for each of ``queries``, in
    order: the (path, line) set, the seconds it took, an error ("" none)."""
    with tempfile.TemporaryDirectory() as tmp:
        q = Path(tmp) / "queries.json"
        q.write_text(json.dumps([list(x) for x in queries]))
        if language == "python":
            script = Path(tmp) / "judge.py"
            script.write_text(_JEDI_SCRIPT)
            bare = judge.parent / "bare-python"
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
    return [({(p, int(n)) for p, n in r["refs"]}, float(r["seconds"]), r["error"]) for r in rows]
