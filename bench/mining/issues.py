"""Issue-shaped questions: a fix commit asked as the bug report that came before it (issue 37).

An agent's most common question is a pasted bug report: symptoms in words,
a reproduction, sometimes a traceback. The commit that fixed such a report
usually adds the reproduction as a regression test. So from a commit that
qualifies as a commit question (``mine_commits``: 1-3 changed source
files, ...) *and* adds lines to a test, the question is written as its
reporter would have written it:

* **symptoms**: the subject without its fix verb ("Fix crash when the header
  is empty" -> "crash when the header is empty") and the sentences of the
  body that describe behaviour rather than the change ("This commit ...",
  "Use ... instead" are dropped);
* **the reproduction**: the test the commit adds or changes (the unit that
  holds most of its added lines: a test function, a ``[case]`` of a data
  file, or the added lines themselves), its header dropped, dedented, at
  most ``MAX_REPRO_LINES`` lines: its calls, inputs, assertions, the error
  it expects;
* where the language makes one, a **traceback-shaped excerpt** of the
  test's call chain: the reproduction's call, the definition in the
  snapshot of the first name it calls (defined once among the source's
  definitions), then, when calls lead from there to a function the fix
  changed within three links, the definitions along the way down to it,
  then the error the test names. Made, not run: a frame names a function
  and its first line, never the lines the fix changed.

Gold is the commit's, as for a commit question: the non-test source files
and the lines it deleted or replaced. The question is asked at a snapshot
that holds the gold files as the fix's parent did, whose tree does not hold
the commit's test (the snapshot is older than the fix). A question's layout
(title line, body, reproduction, traceback) varies by a seeded draw, as
reports do.
"""

from __future__ import annotations

import random
import re
import subprocess
import tempfile
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bench.mining.commits import Candidate, clean_message, git
from bench.mining.defs import Tag, brace_end, line_starts, run_ctags
from bench.mining.paths import RepoSpec, is_foreign, is_test

MAX_REPRO_LINES = 30
MAX_TEST_BYTES = 400_000
MAX_FRAMES = 3
MIN_ISSUE_WORDS = 3  # a subject of 3+ words (the reproduction carries the rest)
# a test whose added lines are all blank, comments or imports reproduces nothing
MIN_REPRO_LINES = 2

# Words a subject starts with when it names the change rather than the symptom.
_FIX_VERB = re.compile(
    r"^\s*(\[[^\]]*\]\s*|\w+(\([^)]*\))?!?:\s*)*"  # "[mypyc] ", "fix(parser): ", "Glue: "
    r"(fix(es|ed|ing)?|bug ?fix(es)?|correct(s|ed)?|resolve[sd]?|handle[sd]?|address(es|ed)?)\b"
    r"(\s+(a|an|the)\b)?(\s+(bug|issue|problem|regression|error)\b)?(\s+(where|when|with|in|for|that|of)\b)?[\s:]*",
    re.IGNORECASE,
)
# A sentence that tells what the change does, not what went wrong.
_CHANGE_SENTENCE = re.compile(
    r"^\s*(this|the)\s+(pr|commit|patch|change|fix|diff|pull request)\b"
    r"|^\s*(we|i)\s+(now|also|instead|change|add|use|make|move|remove|fix)\b|^\s*(now|instead|also)\b|^\s*(add|adds|added|use|uses|change|changes|move|moves"
    r"|remove|removes|make|makes|refactor\w*|update|updates|rename\w*|introduce\w*|implement\w*|replace\w*"
    r"|switch\w*|extract\w*|simplif\w*)\b",
    re.IGNORECASE,
)
# Lines of squashed pull requests that say nothing: bots' notes, separators, links.
_NOISE = re.compile(r"^.*(pre-commit\.ci|https?://).*$|^\s*[-=*_]{3,}\s*$", re.MULTILINE | re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")

# The error a test expects, by language idiom (first group: the error's name).
_EXPECTED_ERROR = [
    re.compile(r"raises\(\s*\(?\s*([\w.]+)"),  # pytest.raises, assertRaises, assert_raises
    re.compile(r"assertRaises\w*\(\s*([\w.]+)"),
    re.compile(r"assertThrows\(\s*([\w.]+)\.class"),
    re.compile(r"assertFailsWith<([\w.]+)>"),
    re.compile(r"expected\s*=\s*([\w.]+)\.class"),
    re.compile(r"raise_error\(\s*([\w:]+)"),
    re.compile(r"toThrow(?:Error)?\(\s*([A-Z]\w*)"),
]
_ERROR_MESSAGE = [
    re.compile(r"match\s*=\s*r?([\"'])(.+?)\1"),
    re.compile(r"assertRaisesRegexp?\(\s*[\w.]+\s*,\s*r?([\"'])(.+?)\1"),
    re.compile(r"should_panic\(\s*expected\s*=\s*([\"'])(.+?)\1"),
    re.compile(r"toThrow(?:Error)?\(\s*([\"'`])(.+?)\1"),
]
_ERROR_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Warning|Panic|Failure))\b")
# A call, with what it is called on: ``name(``, ``Qual.name(``, ``obj.method(``, ``Mod::name(``.
_CALL = re.compile(
    r"(?:(?<![\w$])([A-Za-z_]\w*)\s*(?:\.|::))?(?<![\w$])([A-Za-z_]\w*)\s*(?:<[^<>()]*>)?\s*\("
)
# Names a test calls that are not the code under test: assertions, the test frameworks, builtins.
_NOT_API = frozenset(
    (  # noqa: SIM905 (a list of words reads best as words)
        "assert assertEqual assertEquals assertTrue assertFalse assertIs assertIsNone assertIsNotNone "
        "assertIn assertNotIn assertRaises assertRaisesRegex assertThrows assertThat assertNull "
        "assertNotNull assertSame assertArrayEquals assertAlmostEqual assertNotEqual assertIsInstance "
        "assertCountEqual assertDoesNotThrow assert_eq assert_ne assert_raises assert_equal assert_nil "
        "assert_match assert_includes assertFailsWith raises warns approx fixture mark parametrize skip "
        "xfail expect describe it test toBe toEqual toThrow toStrictEqual toMatch toHaveBeenCalled "
        "toHaveBeenCalledWith toContain toMatchInlineSnapshot vi jest Errorf Fatalf Fatal Error Run "
        "Helper Parallel Equal NoError Nil NotNil True False Len Contains require print println len str "
        "int float list dict set tuple range isinstance type repr sorted open super format map filter zip "
        "enumerate getattr setattr hasattr iter next any all min max sum abs panic unwrap to_string into "
        "clone collect vec format_args Some Ok Err Box new from String Vec HashMap Arrays List Map Set of "
        "asList equals toString hashCode get put add size when verify mock spy mock_aws patch MagicMock "
        "Mock lambda if for while switch return catch function defer go make append cap copy delete "
        "string byte rune error func fn def self this "
    ).split()
)
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--)")
_IMPORT = re.compile(r"^\s*(import|from\s+\S+\s+import|use|require|package|using|#include)\b")
_TEST_START = re.compile(r"^(\s*)(it|test|describe|specify|context)\s*(\.\w+)?\s*\(", re.MULTILINE)
_CASE = re.compile(r"^\[case\s+(\w+)\]", re.MULTILINE)


@dataclass(frozen=True)
class Reproduction:
    """The test a fix added, as a reproduction to paste in a report."""

    path: str  # the test file (in the fix, not in the snapshot)
    name: str  # the test unit's name ("" for bare added lines)
    line: int  # its first line in the test file
    code: str  # its body, dedented, at most MAX_REPRO_LINES lines
    # names it calls ("name" or "Qual.name"), asserting lines first, assertions and builtins aside
    calls: tuple[str, ...]
    error: str  # the error it expects ("" when none is named)
    message: str  # the expected error's message or pattern ("" when none)
    about: str = ""  # the test's docstring, as prose ("" when none)


# -- the symptoms ------------------------------------------------------------------


def symptoms(message: str) -> tuple[str, str]:
    """(title, body) of a report from a commit message: the subject without
    its fix verb, and the body's sentences that describe behaviour."""
    text = clean_message(message)
    subject, _, rest = text.partition("\n")
    rest = _NOISE.sub("", rest)
    title = _FIX_VERB.sub("", subject).strip(" .:-")
    first = title.split(" ", 1)[0]
    if first.isalpha() and first.islower():  # a word, not a name: parse_header stays as it is
        title = title[:1].upper() + title[1:]
    title = title or subject.strip()
    kept = []
    for para in re.split(r"\n\s*\n", rest.strip()):
        if re.search(r"^\s*([-*]|\d+\.)\s", para, re.MULTILINE) or "```" in para or para.startswith("    "):
            continue  # lists of changes, code: the change, not the symptom
        sentences = [s for s in _SENTENCE_END.split(" ".join(para.split())) if s]
        good = [s for s in sentences if not _CHANGE_SENTENCE.search(s)]
        if good:
            kept.append(" ".join(good))
    return title, "\n\n".join(kept)


# -- the reproduction --------------------------------------------------------------


def test_changes(cand: Candidate) -> list[str]:
    """The test files a qualifying commit adds or modifies (any text file under
    a test folder or named as a test: data files of a test suite count)."""
    return sorted(
        ch.path
        for ch in cand.commit.changes
        if ch.status in ("A", "M") and is_test(ch.path) and not is_foreign(ch.path)
        and "160000" not in (ch.old_mode, ch.new_mode) and "120000" not in (ch.old_mode, ch.new_mode)
    )  # fmt: skip


def added_lines(gd: Path, parent: str, sha: str, paths: list[str]) -> dict[str, list[int]]:
    """Per path, the line numbers (in ``sha``'s version) that the commit added."""
    out = git(gd, "diff", "-U0", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color",
              parent, sha, "--", *paths)  # fmt: skip
    added: dict[str, list[int]] = {}
    path = None
    for line in out.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and path:
            m = re.match(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            if m:
                start, count = int(m.group(1)), int(m.group(2) or 1)
                added.setdefault(path, []).extend(range(start, start + count))
    return added


def _units(text: str, path: str, tags: list[Tag]) -> list[tuple[str, int, int]]:
    """(name, first, last line) of the test units of a test file: ctags'
    callables (test functions, methods), a ``[case]`` of a data file, a JS
    ``it(...)``/``test(...)`` call with its braces."""
    units = [
        (t.name, t.line, t.end) for t in tags if t.end and t.kind in ("function", "func", "method", "member")
    ]
    cases = list(_CASE.finditer(text))
    n_lines = text.count("\n") + 1
    for i, m in enumerate(cases):
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, cases[i + 1].start()) if i + 1 < len(cases) else n_lines
        units.append((m.group(1), first, last))
    if path.endswith((".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts")):
        starts = line_starts(text)
        for m in _TEST_START.finditer(text):
            first = text.count("\n", 0, m.start()) + 1
            end = brace_end(text, starts, first, max_lines=400)
            if end:
                title = re.match(r"\s*[\w.]+\s*\(\s*([\"'`])(.*?)\1", text[m.start() : m.start() + 300])
                units.append((title.group(2) if title else m.group(2), first, end))
    return units


def _useful(line: str) -> bool:
    return bool(line.strip()) and not _COMMENT.match(line) and not _IMPORT.match(line)


def reproduction(test_path: str, text: str, added: list[int], tags: list[Tag]) -> Reproduction | None:
    """The reproduction a test file's added lines make: the smallest test unit
    holding the most of them (its header line dropped), or the added lines
    themselves; None when they hold under ``MIN_REPRO_LINES`` useful lines."""
    lines = text.splitlines()
    added_set = set(added)
    best = None
    for name, first, last in _units(text, test_path, tags):
        n = sum(1 for i in range(first, last + 1) if i in added_set)
        if n and (best is None or (n, -(last - first)) > (best[0], -(best[3] - best[2]))):
            best = (n, name, first, last)
    if best is not None and best[3] - best[2] < 3 * MAX_REPRO_LINES:
        _, name, first, last = best
        body = lines[first:last]  # the header line (def, fn, func, [case]) dropped
        # a Python decorator or Java annotation above the header stays out too
    else:
        name, first = "", min(added)
        body = [lines[i - 1] for i in sorted(added_set) if i <= len(lines)]
    body = [line for line in body if _useful(line) or (line.strip() and "```" not in line)]
    while body and body[-1].strip() in ("}", "});", "})", "end", "};"):
        body.pop()  # the unit's closing line
    body = [line for line in body if "```" not in line][:MAX_REPRO_LINES]
    if sum(1 for line in body if _useful(line)) < MIN_REPRO_LINES:
        return None
    code = textwrap.dedent("\n".join(body)).strip("\n")
    about, code = _leading_docstring(code)
    if sum(1 for line in code.splitlines() if _useful(line)) < MIN_REPRO_LINES:
        return None
    calls = tuple(
        dict.fromkeys(
            f"{m.group(1)}.{m.group(2)}" if m.group(1) else m.group(2)
            for line in _central_first(code)
            for m in _CALL.finditer(line)
            if len(m.group(2)) >= 3 and m.group(2) not in _NOT_API
        )
    )
    error = message = ""
    for rx in _EXPECTED_ERROR:
        if m := rx.search(code):
            error = m.group(1)
            break
    if not error and (m := _ERROR_NAME.search(code)):
        error = m.group(1)
    for rx in _ERROR_MESSAGE:
        if m := rx.search(code):
            message = m.group(2)
            break
    if not error and "should_panic" in code:
        error = "panic"
    return Reproduction(test_path, name, first, code, calls, error, message, about)


def _leading_docstring(code: str) -> tuple[str, str]:
    """A Python test's docstring, as prose, and the code without it: what the
    test checks is the report's description, not its reproduction."""
    m = re.match(r'\s*[rub]?("""|\'\'\')(.*?)\1\s*\n', code, re.DOTALL)
    if not m:
        return "", code
    return " ".join(m.group(2).split()), code[m.end() :]


_CENTRAL = re.compile(r"\b(assert|raises|expect|should|Throws|panic|Error|Fatal)", re.IGNORECASE)


def _central_first(code: str) -> list[str]:
    """The code's lines, comments aside, those that assert or expect an error
    first: the calls there are what the test is about."""
    lines = [line for line in code.splitlines() if _useful(line)]
    return [line for line in lines if _CENTRAL.search(line)] + [
        line for line in lines if not _CENTRAL.search(line)
    ]


def best_reproduction(gd: Path, cand: Candidate, tests: list[str], work: Path) -> Reproduction | None:
    """The reproduction of the test file with the most added lines that makes one."""
    sha, parent = cand.commit.sha, cand.commit.parents[0]
    added = added_lines(gd, parent, sha, tests)
    for path in sorted((p for p in added if added[p]), key=lambda p: -len(added[p])):
        try:
            data = subprocess.run(
                ["git", "--git-dir", str(gd), "cat-file", "blob", f"{sha}:{path}"],
                capture_output=True,
                check=True,
            ).stdout
        except subprocess.CalledProcessError:
            continue
        if len(data) > MAX_TEST_BYTES or b"\0" in data[:8000]:
            continue
        text = data.decode("utf-8", "replace")
        local = work / PurePosixPath(path).name
        local.write_text(text, encoding="utf-8")
        tags = [Tag(t.name, path, t.line, t.end, t.kind, t.scope) for t in run_ctags(work, [local.name])]
        local.unlink()
        if repro := reproduction(path, text, added[path], tags):
            return repro
    return None


# -- the traceback -----------------------------------------------------------------


def call_chain(repro: Reproduction, defs: dict[str, list[Tag]]) -> list[Tag]:
    """The source definitions of the names the reproduction calls, in call
    order, at most ``MAX_FRAMES``: a name defined once in the snapshot's
    source (two definitions would make a frame a guess), called bare
    (``parse(``) or on what defines it (``Parser.parse(``, ``attr.field(``:
    the definition's class, or a folder or file of its path); a method called
    on a variable (``p.parse(``) could be anyone's."""
    chain = []
    for call in repro.calls:
        qual, _, name = call.rpartition(".")
        found = defs.get(name, [])
        if len(found) == 1 and (not qual or _defined_by(found[0], qual)):
            chain.append(found[0])
        if len(chain) == MAX_FRAMES:
            break
    return chain


MAX_DEPTH = 3  # calls followed from the test's entry towards the changed function
_CALLABLE = frozenset({"function", "func", "method", "member", "singletonMethod"})


def frames_to(start: Tag, targets: list[dict], defs: dict[str, list[Tag]], tree: Path) -> list[Tag]:
    """The frames of a traceback from ``start`` (the definition the test
    entered) down to a changed function (``targets``: gold_functions), when a
    chain of calls of at most :data:`MAX_DEPTH` links leads there in the
    snapshot's source (each call resolved as :func:`call_chain` resolves the
    test's, ``self.f(`` too); ``[start]`` when none does. A failing regression
    test's traceback runs so, from its call into the code down to where the
    fix went, unless the bug raised nothing."""
    wanted = {(g["path"], g["start_line"]) for g in targets}
    lines: dict[str, list[str]] = {}
    queue = [[start]]
    seen = {(start.path, start.line)}
    while queue:
        path = queue.pop(0)
        tag = path[-1]
        if (tag.path, tag.line) in wanted:
            return path
        if len(path) > MAX_DEPTH or tag.end is None:
            continue
        if tag.path not in lines:
            file = tree / tag.path
            lines[tag.path] = file.read_text("utf-8", "replace").splitlines() if file.is_file() else []
        body = "\n".join(lines[tag.path][tag.line : tag.end])
        for m in list(_CALL.finditer(body))[:40]:
            qual, name = m.group(1), m.group(2)
            found = defs.get(name, [])
            if len(found) != 1 or found[0].kind not in _CALLABLE:
                continue  # a class is no frame; its methods are
            if qual and qual not in ("self", "cls", "this") and not _defined_by(found[0], qual):
                continue
            key = (found[0].path, found[0].line)
            if key not in seen:
                seen.add(key)
                queue.append([*path, found[0]])
    return [start]


def _defined_by(tag: Tag, qual: str) -> bool:
    """Whether ``qual`` names the definition's class, module or package."""
    owners = {tag.scope.rsplit(".", 1)[-1]} if tag.scope else set()
    owners |= {PurePosixPath(part).stem.lstrip("_") for part in PurePosixPath(tag.path).parts}
    return qual.lstrip("_") in owners


def _first_line_calling(code: str, name: str) -> str:
    for line in code.splitlines():
        if re.search(rf"(?<![\w$]){re.escape(name)}\s*(<[^<>()]*>)?\s*\(", line):
            return line.strip()
    return ""


def _java_class(tag: Tag) -> str:
    path = PurePosixPath(tag.path)
    parts = list(path.with_suffix("").parts)
    for root in ("java", "kotlin"):
        if root in parts:
            parts = parts[parts.index(root) + 1 :]
            break
    return ".".join(parts)


def traceback(repro: Reproduction, frames: list[Tag], language: str) -> str:
    """A traceback-shaped excerpt: the reproduction's call, ``frames`` (the
    definition it entered, then those it called, outermost first), the
    expected error. "" for a language without one, or no frame to show."""
    if not frames:
        return ""
    error = repro.error or ("AssertionError" if language in ("python", "java", "kotlin") else "")
    message = repro.message
    if language == "python":
        lines = ["Traceback (most recent call last):", '  File "<stdin>", line 1, in <module>']
        call = _first_line_calling(repro.code, frames[0].name) or frames[0].name + "(...)"
        lines.append(f"    {call}")
        for tag in frames:
            lines.append(f'  File "{tag.path}", line {tag.line + 1}, in {tag.name}')
        lines.append(f"{error.rsplit('.', 1)[-1]}: {message}" if message else error.rsplit(".", 1)[-1])
        return "\n".join(lines)
    if language in ("java", "kotlin"):
        head = (
            error
            if "." in error
            else f"java.lang.{error}"
            if error.endswith(("Exception", "Error"))
            else error
        )
        lines = [f"{head}: {message}" if message else head]
        for tag in reversed(frames):  # innermost first
            cls = _java_class(tag)
            owner = (
                f"{cls}.{tag.scope.rsplit('.', 1)[-1]}" if tag.scope and not cls.endswith(tag.scope) else cls
            )
            lines.append(f"\tat {owner}.{tag.name}({PurePosixPath(tag.path).name}:{tag.line + 1})")
        return "\n".join(lines)
    if language == "go":
        if repro.error != "panic" and "panic" not in repro.code:
            return ""
        out = []
        for tag in reversed(frames):  # innermost first
            pkg = PurePosixPath(tag.path).parent.name or "main"
            owner = f"{pkg}.({tag.scope.rsplit('.', 1)[-1]}).{tag.name}" if tag.scope else f"{pkg}.{tag.name}"
            out.append(f"{owner}(...)\n\t{tag.path}:{tag.line + 1}")
        return f"panic: {message or 'runtime error'}\n\ngoroutine 1 [running]:\n" + "\n".join(out)
    if language == "rust" and repro.error == "panic":
        inner = frames[-1]
        return f"thread 'main' panicked at {inner.path}:{inner.line + 1}:\n{message or 'explicit panic'}"
    return ""


# -- the question ------------------------------------------------------------------

_FENCE = {"python": "python", "go": "go", "rust": "rust", "typescript": "ts", "javascript": "js",
          "java": "java", "kotlin": "kotlin", "ruby": "ruby", "cpp": "cpp"}  # fmt: skip


def issue_text(
    title: str, body: str, repro: Reproduction, trace: str, language: str, rng: random.Random
) -> str:
    """The report: title, the symptoms, the reproduction, the traceback, in
    one of a few layouts drawn with ``rng``."""
    fence = _FENCE.get(language, "") if not repro.path.endswith((".test", ".txt", ".yaml", ".yml")) else ""
    intro = rng.choice(["To reproduce:", "Steps to reproduce:", "Minimal example:", "Reproducer:", ""])
    parts = [title]
    if body and rng.random() < 0.8:
        parts.append(body)
    if repro.about:
        parts.append(repro.about)
    block = f"```{fence}\n{repro.code}\n```"
    parts.append(f"{intro}\n\n{block}" if intro else block)
    if trace:
        parts.append(
            rng.choice(["This fails with:", "Output:", "I get:", "Error:"]) + f"\n\n```\n{trace}\n```"
        )
    elif repro.error and rng.random() < 0.5:
        expected = f"`{repro.error}`" + (f" ({repro.message})" if repro.message else "")
        parts.append(f"Expected {expected}, but that is not what happens.")
    return "\n\n".join(parts)


def definitions(tags: Iterable[Tag]) -> dict[str, list[Tag]]:
    """The snapshot's callable and type definitions by name (tests aside)."""
    out: dict[str, list[Tag]] = {}
    for t in tags:
        if t.kind in ("function", "func", "method", "member", "class", "struct", "singletonMethod"):
            out.setdefault(t.name, []).append(t)
    return out


def issue_question(
    cand: Candidate,
    gd: Path,
    spec: RepoSpec,
    defs: dict[str, list[Tag]],
    rng: random.Random,
    targets: list[dict] | None = None,
    tree: Path | None = None,
) -> dict | str:
    """``{"query", "title", "repro"}`` of a qualifying commit asked as an issue,
    or why it cannot be (no test added, no reproduction in it). ``targets``
    (its gold_functions) and ``tree`` (the snapshot): a traceback's frames
    follow the calls from the test's entry to a changed function when they lead there."""
    tests = test_changes(cand)
    if not tests:
        return "adds no test"
    with tempfile.TemporaryDirectory(prefix="repro-") as tmp:
        repro = best_reproduction(gd, cand, tests, Path(tmp))
    if repro is None:
        return "its test makes no reproduction"
    title, body = symptoms(cand.commit.message)
    chain = call_chain(repro, defs)
    if chain and targets and tree is not None:
        chain = frames_to(chain[0], targets, defs, tree)
    trace = traceback(repro, chain, spec.language) if rng.random() < 0.6 else ""
    query = issue_text(title, body, repro, trace, spec.language, rng)
    return {
        "query": query,
        "title": title,
        "repro": {
            "test": repro.path,
            "test_name": repro.name,
            "calls": list(repro.calls[:10]),
            "error": repro.error,
            "frames": [f"{t.path}:{t.line}:{t.name}" for t in chain] if trace else [],
        },
    }
