"""The meaning development set: a function asked by its doc comment, where the comment is gone (issue 37).

    python -m bench.meaning set [--checkouts DIR] [--data DIR] [--out DIR] [--per-repo 12] [--seed 37]

An agent often asks for code by what it does ("the part that retries a
failed upload"), in words the code itself may not hold. A function's doc
comment is such a description, written by its author: asked as a question
of a copy of the repository whose comment was removed, it can only be
found by what the code does, its name, its neighbours, its history.

For each development repository (the repositories of the development
questions in ``--data``), the newest of its history checkouts in
``--checkouts``; in it, up to ``--per-repo`` functions or methods of its
source (tests, docs, examples, vendored code aside: ``bench.mining.paths``)
whose doc comment's first paragraph has 6 to 60 words and names neither the
function nor a file; drawn with the seed. The copy
(``OUT/checkouts/<owner>__<name>@<commit12>``, its git history shared with
the original) has those comments deleted, lines and all, so the function
moves up: gold is the function's span in the copy.

Doc comments: Python docstrings (``ast``), Go's and Rust's comment lines
right above a definition (``//``, ``///``), the ``/** ... */`` block above a
Java, Kotlin, TypeScript or JavaScript definition (annotations and
decorators between them and the definition allowed).

Writes ``OUT/meaning-dev.json`` in the development set's schema (``set``
``meaning``; ``source`` holds the removed comment's lines) and prints the
counts; then score it with::

    python -m bench.devset --checkouts OUT/checkouts --data OUT --files meaning-dev.json \\
        --index-cache $REPOLENS_BENCH_DATA/meaning/index-cache --baseline none \\
        --variants default --input query
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from bench.common.devsets import DATA_FILES, checkout_name, load_queries
from bench.common.paths import SHARED, data_default
from bench.mining.paths import LANGUAGE_EXTS, REPOS, RepoSpec, is_foreign, is_test, path_kind

MIN_WORDS, MAX_WORDS = 6, 60
MAX_FILE_BYTES = 400_000
_LANGUAGE_OF_EXT = {ext: lang for lang, exts in LANGUAGE_EXTS.items() for ext in exts}
# A brace language's definition line: the name before its parameters.
_BRACE_DEF = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:(?:public|private|protected|static|final"
    r"|abstract|synchronized|async|override|open|internal|suspend|inline|const|unsafe|extern)\s+)*"
    r"(?:fn|func(?:\s*\([^)]*\))?|function|fun|def)?\s*(?:<[^>]*>\s*)?(?:[\w<>\[\],.?]+\s+)?(\w+)\s*(?:<[^>]*>)?\s*\("
)
_ANNOTATION = re.compile(r"^\s*(@\w|#\[)")
_KEYWORDS = frozenset(
    ["if", "for", "while", "switch", "return", "catch", "new", "else", "do", "try", "match", "case", "throw"]
)


class Described(NamedTuple):
    """A function with the doc comment to remove."""

    path: str
    name: str
    start: int  # the definition's first line (decorators included), 1-based, before removal
    end: int
    doc_first: int  # the comment's lines, 1-based inclusive
    doc_last: int
    question: str


def first_paragraph(doc: str) -> str:
    """The comment's first paragraph as prose: comment marks, markup and
    parameter sections dropped, spaces collapsed."""
    lines = []
    for line in doc.strip().splitlines():
        line = re.sub(r"^\s*(/\*\*|\*/|\*|///|//!|//|#)\s?", "", line).rstrip("*/ ").strip()
        if not line:
            if lines:
                break
            continue
        if re.match(r"^(@\w+|:param|:return|:raises|Args:|Returns:|Parameters|Examples?:|>>>|\.\. )", line):
            break
        lines.append(line)
    text = " ".join(" ".join(lines).split())
    text = re.sub(r"\{@\w+\s+([^}]*)\}", r"\1", text)  # {@code x}, {@link Y}
    return re.sub(r"</?\w+[^>]*>", "", text).strip()


def without_own_name(question: str, name: str) -> str:
    """Go's convention opens a comment with the name (``Dial connects to``):
    the rest is the description."""
    first, _, rest = question.partition(" ")
    return rest[:1].upper() + rest[1:] if first.strip("`.:,") == name and rest else question


def _usable(question: str, name: str, paths: list[str]) -> bool:
    words = question.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return False
    lowered = question.lower()
    if name.lower() in lowered or name.replace("_", " ").lower() in lowered:
        return False
    return not any(Path(p).name.lower() in lowered for p in paths)


def python_described(path: str, text: str) -> list[Described]:
    """Functions and methods with a docstring, and the docstring's lines."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not node.body:
            continue
        first = node.body[0]
        if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
            continue
        if not isinstance(first.value.value, str) or len(node.body) < 2:
            continue  # a function that is only its docstring would be left empty
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        question = first_paragraph(first.value.value)
        out.append(Described(path, node.name, start, node.end_lineno or node.lineno, first.lineno,
                             first.end_lineno or first.lineno, question))  # fmt: skip
    return out


def brace_described(path: str, text: str) -> list[Described]:
    """Definitions in a brace language with the comment block right above
    them (annotations between allowed); the definition's end by its braces."""
    from bench.mining.defs import brace_end, line_starts

    lines = text.splitlines()
    starts = line_starts(text)
    out = []
    for i, line in enumerate(lines):
        m = _BRACE_DEF.match(line)
        if not m or m.group(1) in _KEYWORDS or line.rstrip().endswith(";") or not _defines(line, path):
            continue
        j = i - 1
        while j >= 0 and _ANNOTATION.match(lines[j]):
            j -= 1
        if j < 0:
            continue
        last = j
        if lines[j].strip().endswith("*/"):
            while j >= 0 and "/**" not in lines[j]:
                j -= 1
            if j < 0:
                continue
        elif lines[j].lstrip().startswith(("///", "//")) and not lines[j].lstrip().startswith("//!"):
            while j - 1 >= 0 and lines[j - 1].lstrip().startswith(("///", "//")):
                j -= 1
        else:
            continue
        end = brace_end(text, starts, i + 1)
        if end is None:
            continue
        doc = "\n".join(lines[j : last + 1])
        # the definition starts after the comment (its annotations are part of it)
        out.append(Described(path, m.group(1), last + 2, end, j + 1, last + 1, first_paragraph(doc)))
    return out


# What makes a line a definition, by language (a call such as ``if f(x) {`` is none).
_DEFINES = {
    ".go": re.compile(r"^func\b"),
    ".rs": re.compile(r"\bfn\s"),
    ".java": re.compile(r"^\s*(public|protected|private|static|final|abstract|synchronized|default)\b"),
    ".kt": re.compile(r"\bfun\s"),
}
_SCRIPT_DEF = re.compile(
    r"\bfunction\b|^\s*(export\s+)?(public|private|protected|static|async|get|set)\s"
    r"|^\s+\w+\s*\([^)]*\)\s*(:\s*[^={]+)?\{\s*$"
)


def _defines(line: str, path: str) -> bool:
    first = line.split(None, 1)[0] if line.strip() else ""
    if first in _KEYWORDS:
        return False
    return bool(_DEFINES.get(Path(path).suffix, _SCRIPT_DEF).search(line))


def newest_checkouts(queries: list[dict], checkouts: Path) -> dict[str, Path]:
    """Per repository, its history checkout whose HEAD is newest."""
    best: dict[str, tuple[int, Path]] = {}
    for q in queries:
        tree = checkouts / checkout_name(q)
        if not (tree / ".checkout_ok").is_file():
            continue
        when = int(subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%ct"], capture_output=True,
                                  text=True).stdout.strip() or 0)  # fmt: skip
        if q["repo"] not in best or when > best[q["repo"]][0]:
            best[q["repo"]] = (when, tree)
    return {repo: tree for repo, (_, tree) in sorted(best.items())}


def copy_without(tree: Path, dest: Path, chosen: list[Described]) -> dict[tuple[str, int], int]:
    """``tree`` copied to ``dest`` with the chosen comments' lines deleted;
    per (path, old line) of each chosen definition's start, how far it moved up."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(tree, dest, symlinks=True)
    moved = {}
    by_path: dict[str, list[Described]] = {}
    for d in chosen:
        by_path.setdefault(d.path, []).append(d)
    for path, ds in by_path.items():
        file = dest / path
        lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
        drop = {n for d in ds for n in range(d.doc_first, d.doc_last + 1)}
        file.write_text("".join(line for n, line in enumerate(lines, 1) if n not in drop), encoding="utf-8")
        for d in ds:
            moved[d.path, d.start] = sum(1 for n in drop if n < d.start)
            moved[d.path, d.end] = sum(1 for n in drop if n < d.end)
    return moved


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.meaning set", description=__doc__.splitlines()[0])
    ap.add_argument("--checkouts", type=Path, default=data_default("checkouts-git"))
    ap.add_argument(
        "--data", type=Path, default=SHARED, help="the development questions (their repositories)"
    )
    ap.add_argument(
        "--files",
        default=",".join(DATA_FILES),
        help="the question files in --data whose repositories and checkouts are used (the mined set's: "
        "questions.json, with --checkouts its snapshots: questions to train on, never to report)",
    )
    ap.add_argument("--out", type=Path, default=data_default("meaning"))
    ap.add_argument("--per-repo", type=int, default=12)
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args(argv)
    if args.checkouts is None or args.out is None:
        sys.exit("set REPOLENS_BENCH_DATA, or pass --checkouts and --out")
    queries = load_queries(args.data, None, None, None, tuple(args.files.split(",")))
    questions = []
    for repo, tree in newest_checkouts(queries, args.checkouts).items():
        language = next(q["language"] for q in queries if q["repo"] == repo)
        mined = {s.repo: s for s in REPOS}
        spec = mined.get(repo, RepoSpec(repo, language, (language,)))
        files = subprocess.run(
            ["git", "-C", str(tree), "ls-files"], capture_output=True, text=True
        ).stdout.split()
        found: list[Described] = []
        for path in files:
            ext = Path(path).suffix
            if path_kind(path, spec) != "source" or is_test(path) or is_foreign(path):
                continue
            file = tree / path
            if not file.is_file() or file.stat().st_size > MAX_FILE_BYTES:
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
            described = python_described(path, text) if ext == ".py" else brace_described(path, text)
            described = [d._replace(question=without_own_name(d.question, d.name)) for d in described]
            found += [d for d in described if _usable(d.question, d.name, files)]
        rng = random.Random(f"{args.seed}/{repo}")
        seen: set[str] = set()
        unique = [d for d in found if not (d.question in seen or seen.add(d.question))]  # one per text
        chosen = sorted(rng.sample(unique, min(args.per_repo, len(unique))), key=lambda d: (d.path, d.start))
        dest = args.out / "checkouts" / tree.name
        moved = copy_without(tree, dest, chosen)
        commit = (tree / ".checkout_ok").read_text().split()[1]
        for d in chosen:
            start, end = d.start - moved[d.path, d.start], d.end - moved[d.path, d.end]
            span = {"path": d.path, "start_line": start, "end_line": end}
            qid = f"meaning:{repo}:{d.path}:{start}:{d.name}"
            questions.append({
                "id": qid, "set": "meaning", "repo": repo, "commit": commit,
                "language": language, "query": d.question, "title": d.question, "gold_files": [d.path],
                "gold_ranges": [span], "gold_functions": [{**span, "name": d.name}],
                "source": {"removed_lines": [d.doc_first, d.doc_last], "checkout": tree.name},
            })  # fmt: skip
        print(f"{repo}: {len(chosen)} of {len(unique)} described functions ({tree.name})", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "meaning-dev.json").write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(questions)} questions -> {args.out / 'meaning-dev.json'}")


if __name__ == "__main__":
    main()
