"""Replies about uses: references, callers and callees, and impact, under a budget.

Every reply is plain text that never exceeds ``max_chars``. It opens with
one line naming the definition (kind, ``path:start-end``) and the counts,
then the evidence, best first, each use cited as ``path`` and
``line: text`` under the definition it sits in:

* references: files in path order, the resolved uses first, then, after
  the line ``name matches (same name, not resolved to this definition):``,
  the uses of the same name whose target is not known;
* callers and callees: one line per definition reached,
  ``depth. path:line qualname (kind)``, then the use that reaches it
  (``<- line: text``), ``(name match)`` where the step was not resolved;
* impact: the definitions reached, nearest first and then those more uses
  reach (``(3 uses)``), then the tests apart, each test file with the
  ``run_tests`` call that runs it.

What does not fit is named by the shared trailer
(:func:`repolens.budget.did_not_fit`), counted as the first line counts it
(files; definitions; definitions and test files: a heading is none of
them); a file's uses past its share end with the ``read_snippet`` call
that shows them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from repolens.budget import BLOCK_SEP, counted, cut_to_budget, did_not_fit
from repolens.roles import path_role
from repolens.search.kept import lines_of
from repolens.store.base import IndexReader, RefRow, SymbolRow

# The most of a source line a use shows.
LINE_CHARS = 160
# Uses of one file shown before the rest of it is a marker.
USES_PER_FILE = 12
NAME_MATCHES_HEAD = "name matches (same name, not resolved to this definition):"
TESTS_HEAD = "tests (run them with run_tests):"

LineText = Callable[[str, int], str]


def line_reader(reader: IndexReader) -> LineText:
    """``(path, line) -> text`` from the index's chunks (each file's lines read
    once, and kept as the rules that resolved the uses keep them)."""

    def text(path: str, line: int) -> str:
        raw = lines_of(reader, path).get(line, "").strip()
        return raw if len(raw) <= LINE_CHARS else raw[: LINE_CHARS - 3] + "..."

    return text


def describe(d: SymbolRow, label: Callable[[str], str] = str) -> str:
    """``Model.save (method, pkg/base.py:10-14)``."""
    return f"{d.qualname} ({d.kind}, {label(d.path)}:{d.start_line}-{d.end_line})"


def _file_block(path: str, rows: Sequence[RefRow], text: LineText, label: Callable[[str], str]) -> str:
    shown = rows[:USES_PER_FILE]
    lines = [label(path)]
    for r in shown:
        where = r.scope or "(module)"
        lines.append(f"  {where} {r.line}: {text(r.path, r.line)}")
    if len(rows) > len(shown):
        rest = rows[len(shown) :]
        lines.append(
            f"  ... {counted(len(rest), 'more use')}; "
            f"use read_snippet {label(path)} {rest[0].line} {rest[-1].line}"
        )
    return "\n".join(lines)


def _by_file(rows: Iterable[RefRow]) -> list[tuple[str, list[RefRow]]]:
    grouped: dict[str, list[RefRow]] = {}
    for r in rows:
        grouped.setdefault(r.path, []).append(r)
    return sorted(grouped.items(), key=lambda kv: (_role_rank(kv[0]), kv[0]))


def _role_rank(path: str) -> int:
    return 0 if path_role(path) == "source" else 1


@dataclass
class _Blocks:
    """Blocks placed while they fit ``max_chars``; the rest named by the trailer,
    counted as what each is (``noun`` unless placed as another), as the reply's
    first line counts them."""

    max_chars: int
    sep: str = BLOCK_SEP
    noun: str = "file"
    parts: list[str] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)  # (name, noun)
    full: bool = False  # a block did not fit: those after it are left out too
    used: int = 0

    def add(self, block: str) -> None:
        """A block that is always shown (a header, a note)."""
        self.used += (len(self.sep) if self.parts else 0) + len(block)
        self.parts.append(block)

    def _fits(self, block: str, reserve: int) -> bool:
        self.full = self.full or self.used + len(self.sep) + len(block) + reserve > self.max_chars
        return not self.full

    def place(self, block: str, name: str, reserve: int = 80, noun: str = "") -> bool:
        """``block`` when it fits with ``reserve`` left for the trailer; else it is named there."""
        if not self._fits(block, reserve):
            self.left.append((name, noun or self.noun))
            return False
        self.add(block)
        return True

    def place_head(self, block: str) -> None:
        """The heading of the blocks after it, when it fits: none the trailer names or counts."""
        if self._fits(block, 0):
            self.add(block)

    def text(self) -> str:
        out = self.sep.join(self.parts)
        if self.left:
            room = self.max_chars - len(out) - len(self.sep)
            nouns: dict[str, int] = {}
            for _, noun in self.left:
                nouns[noun] = nouns.get(noun, 0) + 1
            count = " and ".join(counted(n, f"more {noun}") for noun, n in nouns.items())
            trailer = did_not_fit(self.noun, [name for name, _ in self.left], room, count=count)
            if trailer:
                out += self.sep + trailer
        return cut_to_budget(out, self.max_chars)


def render_references(
    definition: SymbolRow,
    resolved: Sequence[RefRow],
    name_matches: Sequence[RefRow],
    text: LineText,
    max_chars: int,
    *,
    others: Sequence[SymbolRow] = (),
    label: Callable[[str], str] = str,
    notes: Sequence[str] = (),
) -> str:
    files = _by_file(resolved)
    match_files = _by_file(name_matches)
    found = f"{counted(len(resolved), 'reference')} in {counted(len(files), 'file')}"
    head = f"{describe(definition, label)}: {found}"
    if name_matches:
        matched = counted(len(name_matches), "name match", "name matches")
        head += f"; {matched} in {counted(len(match_files), 'file')}"
    blocks = _Blocks(max_chars)
    if others:
        named = ", ".join(f"{label(o.path)}:{o.start_line} {o.qualname}" for o in others[:3])
        more = f", and {len(others) - 3} more" if len(others) > 3 else ""
        head += f"\nalso defined: {named}{more} (name one as PATH:LINE)"
    blocks.add("\n".join([*(f"note: {n}" for n in notes), head]))
    for path, rows in files:
        blocks.place(_file_block(path, rows, text, label), label(path))
    if match_files:
        blocks.place_head(NAME_MATCHES_HEAD)
    for path, rows in match_files:
        blocks.place(_file_block(path, rows, text, label), label(path))
    return blocks.text()


def render_walk(
    title: str,
    steps: Sequence[tuple[int, str, SymbolRow | None, RefRow, bool]],
    text: LineText,
    max_chars: int,
    *,
    label: Callable[[str], str] = str,
    arrow: str = "<-",
    notes: Sequence[str] = (),
) -> str:
    """``steps`` are (depth, path, definition or None, the use, resolved)."""
    files = {path for _, path, _, _, _ in steps}
    head = f"{title}: {counted(len(steps), 'definition')} in {counted(len(files), 'file')}"
    blocks = _Blocks(max_chars, sep="\n", noun="definition")
    blocks.add("\n".join([*(f"note: {n}" for n in notes), head]))
    lines: list[str] = []
    for depth, path, d, use, sure in steps:
        where = f"{label(path)}:{d.start_line} {d.qualname} ({d.kind})" if d else f"{label(path)} (module)"
        mark = "" if sure else " (name match)"
        entry = f"{depth}. {where}{mark}\n   {arrow} {label(use.path)}:{use.line}: {text(use.path, use.line)}"
        lines.append(entry)
    for entry, (_, path, d, _, _) in zip(lines, steps, strict=True):
        blocks.place(entry, f"{label(path)}:{d.qualname if d else '(module)'}", reserve=60)
    return blocks.text()


def tests_command(path: str, language: str, repo: str | None = None) -> str:
    """The ``run_tests`` call that runs the tests of ``path`` (relative to
    its repository's root); in a reply over several repositories, ``repo``
    names the repository, as run_tests takes it (it takes no labelled path)."""
    call = _tests_call(path, language)
    return f"{call} repo={repo}" if repo is not None and call.startswith("run_tests runner=") else call


def _tests_call(path: str, language: str) -> str:
    if language == "python":
        return f'run_tests runner=pytest args=["{path}"]'
    if language == "go":
        folder = str(PurePosixPath(path).parent)
        return f'run_tests runner=go args=["./{folder}"]' if folder != "." else "run_tests runner=go"
    if language == "rust":
        return "run_tests runner=cargo"
    if language in ("java", "kotlin", "scala", "groovy"):
        return f'run_tests runner=mvn args=["-Dtest={PurePosixPath(path).stem}"]'
    if language in ("javascript", "typescript", "tsx"):
        return "run_tests runner=npm"
    return "run_tests (see its runners)"


def render_impact(
    title: str,
    steps: Sequence[tuple[int, str, SymbolRow | None, RefRow, int]],
    languages: dict[str, str],
    name_matches: int,
    max_chars: int,
    *,
    label: Callable[[str], str] = str,
    notes: Sequence[str] = (),
    repo: str | None = None,
) -> str:
    """``steps`` are (depth, path, definition or None, the first use, how
    many uses reach it). The reached definitions ranked: nearest first, then
    those more uses reach, source before other files; tests apart, each
    with its run_tests call (naming ``repo``, the repository the paths are
    labelled with, over several)."""
    code = [s for s in steps if path_role(s[1]) != "test"]
    tests = [s for s in steps if path_role(s[1]) == "test"]
    code.sort(key=lambda s: (s[0], -s[4], _role_rank(s[1]), s[1], s[3].line))
    files = {s[1] for s in code}
    test_files: dict[str, list[str]] = {}
    for _, path, d, _, _ in sorted(tests, key=lambda s: (s[1], s[3].line)):
        names = test_files.setdefault(path, [])
        name = d.qualname if d else "(module)"
        if name not in names:
            names.append(name)
    head = (
        f"{title}: {counted(len(code), 'definition')} in {counted(len(files), 'file')}, "
        f"{counted(len(test_files), 'test file')}"
    )
    if name_matches:
        head += f"; {counted(name_matches, 'name match', 'name matches')} not followed"
    blocks = _Blocks(max_chars, sep="\n", noun="definition")
    blocks.add("\n".join([*(f"note: {n}" for n in notes), head]))
    entries = []
    for path, names in test_files.items():
        shown = ", ".join(names[:6]) + (f", and {len(names) - 6} more" if len(names) > 6 else "")
        entries.append(
            (f"{label(path)}: {shown}\n  {tests_command(path, languages.get(path, ''), repo)}", path)
        )
    # The tests a change reaches are what to run next: they keep their room (up to a third of
    # the budget) however many definitions come before them.
    tests = len(TESTS_HEAD) + sum(1 + len(e) for e, _ in entries) if entries else 0
    reserve = min(tests, max_chars // 3)
    for depth, path, d, use, uses in code:
        where = f"{label(path)}:{d.start_line} {d.qualname} ({d.kind})" if d else f"{label(path)} (module)"
        more = f" ({uses} uses)" if uses > 1 else ""
        blocks.place(f"{depth}. {where} <- {use.kind} at line {use.line}{more}", where, reserve=120 + reserve)
    blocks.full = False  # (the definitions left out leave the tests their room)
    if entries:
        blocks.place_head(TESTS_HEAD)
    for entry, path in entries:
        blocks.place(entry, label(path), reserve=60, noun="test file")
    return blocks.text()
