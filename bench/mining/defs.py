"""Definitions in a snapshot, found with universal-ctags (not repolens's chunker,
so the labels do not share the engine's blind spots): the innermost
definitions around a commit's changed lines (``gold_functions``) and the
bare-identifier questions.

ctags 5.9 gives end lines for Python, Ruby, Go, Java and C++; for the other
brace languages (Rust, TypeScript, JavaScript, Kotlin) the end is found by
matching braces from the definition's line, skipping strings and comments.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.mining.paths import RepoSpec, is_foreign, is_test, path_kind

MIN_NAME = 8
MIN_OTHER_FILES, MAX_OTHER_FILES = 2, 30
MAX_SCAN_BYTES = 1_000_000
# What an agent asks for by name: callables and types (the development set's kinds).
QUESTION_KINDS = frozenset(
    {"function", "func", "method", "member", "singletonMethod", "class", "struct", "interface", "trait",
     "enum", "alias", "typedef", "typealias", "object"}
)  # fmt: skip
# gold_functions: callables, or a type-like block under 100 lines.
CALLABLE_KINDS = frozenset({"function", "func", "method", "member", "singletonMethod"})
BLOCK_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "implementation", "object", "module"}
)
MAX_BLOCK_LINES = 100
OPEN_WITHIN = 10  # lines from a definition's first line to its body's brace
_BRACE_LANGS = frozenset(
    {".rs", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".kt", ".java"}
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WORDS = re.compile(rb"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class Tag:
    name: str
    path: str
    line: int
    end: int | None
    kind: str
    scope: str

    @property
    def qualified(self) -> str:
        return f"{self.scope.rsplit('.', 1)[-1]}.{self.name}" if self.scope else self.name


def run_ctags(tree: Path, paths: list[str]) -> list[Tag]:
    """Every tag ctags finds in ``paths`` (relative to ``tree``), ends filled where it can."""
    if not paths:
        return []
    cmd = ["ctags", "--output-format=json", "--fields=+neKZs", "--extras=-F", "-L", "-", "-f", "-"]
    proc = subprocess.run(cmd, cwd=tree, input="\n".join(paths).encode(), capture_output=True, check=True)
    tags = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        try:
            t = json.loads(line)
        except json.JSONDecodeError:
            continue  # ctags writes a pattern it cannot encode as broken JSON now and then
        if t.get("_type") == "tag" and "line" in t:
            tags.append(
                Tag(t["name"], t["path"], t["line"], t.get("end"), t.get("kind", ""), t.get("scope", ""))
            )
    by_path: dict[str, list[Tag]] = defaultdict(list)
    for tag in tags:
        by_path[tag.path].append(tag)
    out = []
    for path, file_tags in by_path.items():
        if path.endswith(tuple(_BRACE_LANGS)) and any(t.end is None for t in file_tags):
            text = (tree / path).read_text("utf-8", "replace")
            starts = line_starts(text)
            file_tags = [
                t if t.end is not None or t.kind not in CALLABLE_KINDS | BLOCK_KINDS | QUESTION_KINDS
                else Tag(t.name, t.path, t.line, brace_end(text, starts, t.line), t.kind, t.scope)
                for t in file_tags
            ]  # fmt: skip
        out += file_tags
    return out


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def brace_end(text: str, starts: list[int], line: int, max_lines: int = 3000) -> int | None:
    """The line of the brace closing the body that opens on or after ``line``.

    None when there is no braced body: a ``;`` (a declaration) or a ``=`` outside
    parentheses (a Kotlin or TypeScript expression body) comes first, no ``{``
    opens within ``OPEN_WITHIN`` lines, or nothing closes within ``max_lines``.
    """
    if line > len(starts):
        return None
    n = len(text)
    i, depth, parens = starts[line - 1], 0, 0
    last = line - 1 + max_lines
    limit = starts[last] if last < len(starts) else n
    open_by = starts[line - 1 + OPEN_WITHIN] if line - 1 + OPEN_WITHIN < len(starts) else n
    while i < limit:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif c == "/" and text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 1
        elif c in '"`':
            i = _string_end(text, i, c)
        elif c == "'" and re.match(r"'(\\.[^']*|[^'\\\n])'", text[i : i + 12]):
            i = text.index("'", i + 3 if text[i + 1] == "\\" else i + 2)
        elif c in "([":
            parens += 1
        elif c in ")]":
            parens -= 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text.count("\n", 0, i) + 1
        elif depth == 0 and (c == ";" or (c == "=" and parens == 0 and _assignment(text, i))):
            return None
        if depth == 0 and i >= open_by:
            return None
        i += 1
    return None


def _assignment(text: str, i: int) -> bool:
    """Whether the ``=`` at ``i`` assigns (not ``==``, ``=>``, ``<=``, ``!=`` ...)."""
    return text[i + 1 : i + 2] not in ("=", ">") and text[i - 1 : i] not in tuple("=!<>+-*/%&|^:")


def _string_end(text: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(text) and text[j] != quote:
        if text[j] == "\\":
            j += 1
        elif text[j] == "\n" and quote != "`":
            return j  # an unterminated string ends at the line's end
        j += 1
    return j


def gold_functions(tags: list[Tag], ranges: list[dict]) -> list[dict]:
    """Per changed range, the innermost definition enclosing it: a callable, or
    a type-like block under 100 lines. Ranges inside none give nothing."""
    by_path: dict[str, list[Tag]] = defaultdict(list)
    for t in tags:
        if t.end is None:
            continue
        if t.kind in CALLABLE_KINDS or (t.kind in BLOCK_KINDS and t.end - t.line < MAX_BLOCK_LINES):
            by_path[t.path].append(t)
    out: dict[tuple, dict] = {}
    for r in ranges:
        inside = [
            t for t in by_path.get(r["path"], ()) if t.line <= r["start_line"] and r["end_line"] <= t.end
        ]
        if inside:
            t = min(inside, key=lambda t: (t.end - t.line, -t.line))
            out[t.path, t.line, t.name] = {"path": t.path, "name": t.qualified, "start_line": t.line,
                                           "end_line": t.end}  # fmt: skip
    return sorted(out.values(), key=lambda f: (f["path"], f["start_line"]))


def words_per_file(tree: Path, files: list[str], names: set[str]) -> dict[str, set[str]]:
    """For each of ``names``, the tracked files where it occurs as a whole word (as ``grep -w``)."""
    wanted = {n.encode() for n in names}
    found: dict[str, set[str]] = defaultdict(set)
    for path in files:
        file = tree / path
        try:
            if not file.is_file() or file.is_symlink() or file.stat().st_size > MAX_SCAN_BYTES:
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8000]:
            continue  # binary
        for word in set(_WORDS.findall(data)) & wanted:
            found[word.decode()].add(path)
    return found


def identifier_candidates(tags: list[Tag], spec: RepoSpec) -> dict[str, Tag]:
    """Names of at least 8 characters defined exactly once among the files of the
    repository's languages (tests, vendored and generated code aside), that definition in a source file and of
    a kind one asks for by name."""
    defs: dict[str, list[Tag]] = defaultdict(list)
    for t in tags:
        if not is_test(t.path) and not is_foreign(t.path):
            defs[t.name].append(t)
    out = {}
    for name, found in defs.items():
        if len(found) != 1 or len(name) < MIN_NAME or not _IDENT.match(name):
            continue
        t = found[0]
        if (name.startswith("__") and name.endswith("__")) or name.startswith("__anon"):
            continue
        if t.kind in QUESTION_KINDS and path_kind(t.path, spec) == "source":
            out[name] = t
    return out


def identifier_questions(
    tags: list[Tag],
    tree: Path,
    files: list[str],
    spec: RepoSpec,
    taken: set[str],
    cap: int,
    rng: random.Random,
) -> list[dict]:
    """Up to ``cap`` bare-name questions for one snapshot: each name defined once
    (``identifier_candidates``) and found as a whole word in 2 to 30 other tracked
    files, so a plain grep returns distractors. ``taken``: names already asked in
    another snapshot of the repository (updated)."""
    cands = {n: t for n, t in identifier_candidates(tags, spec).items() if n not in taken}
    where = words_per_file(tree, files, set(cands))
    eligible = sorted(
        n
        for n, t in cands.items()
        if MIN_OTHER_FILES <= len(where.get(n, set()) - {t.path}) <= MAX_OTHER_FILES
    )
    picks = sorted(rng.sample(eligible, min(cap, len(eligible))))
    out = []
    for name in picks:
        t = cands[name]
        taken.add(name)
        functions = [] if t.end is None else [{"path": t.path, "name": t.qualified, "start_line": t.line,
                                                "end_line": t.end}]  # fmt: skip
        out.append(
            {
                "gold_files": [t.path],
                "gold_ranges": [{"path": t.path, "start_line": t.line, "end_line": t.line}],
                "gold_functions": functions,
                "source": {"kind": t.kind, "files_mentioning": len(where[name] | {t.path})},
            }
        )
        out[-1]["name"] = name
    return out
