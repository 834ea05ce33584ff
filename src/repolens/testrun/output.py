"""What survives of a runner's output: ANSI stripped, failure-relevant lines and context, tail fallback, caps.

Streaming and bounded: ``LineSplitter`` turns bytes into cleaned, capped
lines and ``LineFilter`` holds only what can still be shown, so a runner
printing 100 MB costs time, not memory. ``filter_output`` applies the same
rules to lines already in memory.

When the kept lines do not all fit a budget, :func:`fit_lines` chooses (for
the filter's budget, and again for the whole reply's in
:func:`repolens.testrun.render`): the last line (the runner's summary),
then the failure-relevant lines, latest first, then the context lines
around them as room allows. A plain tail of the kept lines let a context
line (`` +  where 4 = add(2, 2)``) crowd out the ``FAILED`` line before it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from repolens.record import Record
from repolens.testrun.limits import (
    DEFAULT_CONTEXT,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_LINES,
    DEFAULT_TAIL_LINES,
    check_bounds,
)

# A kept line is cut to this many characters; bytes past _LINE_MAX_BYTES of a
# line are never held, so one 50 MB line without a newline stays cheap.
LINE_MAX_CHARS = 500
_LINE_MAX_BYTES = 8 * LINE_MAX_CHARS

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

# A line is failure-relevant when it starts like a failure line, names a
# file:line, or holds a failure word. Python's re tries every branch of an
# alternation at every position (~100 us for a 500-character line), so
# anchored patterns use match(), and the word patterns run only on lines that
# pass a cheap substring test: a runner printing a million lines stays fast.
_RELEVANT_START = re.compile(
    "|".join(
        (
            # pytest: explanation lines, the failing source line, the section naming the test
            r"E\s",
            r">\s{2,}",
            r"_{3,} .+ _{3,}$",
            # Python frames; rust assert_eq values; jest code frames; TAP "not ok" and summary
            r'\s*File "[^"]+", line \d+',
            r"\s*(?:left|right)\s*:",
            r"\s*>\s*\d+\s*\|",
            r"\s*\|\s*\^",
            r"\s*not ok\b",
            r"# (?:pass|fail|tests|cancelled) \d+",
            # go goroutine dumps, rustc locations, cargo's per-test output sections
            r"goroutine \d+ \[",
            r"\s*--> ",
            r"---- .+ ----$",
        )
    )
)
# file:line anywhere (pytest short tracebacks, go, jest, java, rustc); no path
# prefix in the pattern: `[\w/]+\.py` backtracks quadratically on long lines.
_FILE_LINE = re.compile(
    r"\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|kts|scala|rb|php|cs|c|cc|cpp|h|hpp|swift):\d+"
)
_FAILURE_MARKS = ("●", "✕", "✗", "×", "✖")  # jest, vitest, node
_RELEVANT_WORDS = re.compile(
    "|".join(
        (
            # failure words in most runners; \b keeps `test_error_path` out (_ is a word character)
            r"\b(?:[Ee]rrors?|ERR!?|ERRORS?|[Ff]ail(?:s|ed|ing|ures?)?|FAIL(?:ED|URES?)?)\b",
            r"\b(?:[Pp]anic(?:ked)?|[Ee]xceptions?|[Aa]ssert(?:ion)?|Traceback|Caused by)\b",
            r"(?:Error|Exception)\b",  # TypeError, RuntimeException
            # summaries: "3 failed, 10 passed", "test result:", "Tests run: 5, Failures: 1"
            r"\b\d+ (?:passed|failed|failing|passing|errors?|skipped|pending|todo|xfailed|xpassed"
            r"|deselected)\b",
            r"\btest result:|\bTests run:|\bTest Suites:|\bTests:\s",
            # expected/received pairs (jest, junit, node:assert)
            r"\b(?:[Ee]xpected|[Rr]eceived|[Aa]ctual|but was)\b",
        )
    )
)
# Every _RELEVANT_WORDS match contains one of these (lower-cased).
_WORD_HINTS = (
    "err",
    "fail",
    "panic",
    "exception",
    "assert",
    "traceback",
    "caused by",
    "pass",
    "skip",
    "pending",
    "todo",
    "deselected",
    "test result:",
    "tests run:",
    "test suites:",
    "tests:",
    "expected",
    "received",
    "actual",
    "but was",
)

# Lines that are never kept, not even as context: passing tests and runner internals.
_NOISE_START = re.compile(
    "|".join(
        (
            r"\s*(?:✓|✔|√)\s",
            r"\s*ok\b",
            r"\s*PASS\s",
            r"=== (?:RUN|PAUSE|CONT|NAME)\b",
            r"(?:collecting \.\.\. )?collected \d+ items?\b",  # pytest's header, even with "/ 1 deselected"
            r"\s*--- (?:PASS|SKIP)\b",
            # frames inside test frameworks, the JDK, node, Python's stdlib and Rust's std
            r"\s+at .*(?:node_modules|node:internal|\(internal/|java\.base/|jdk\.internal|org\.junit\."
            r"|sun\.reflect|org\.apache\.maven)",
            r'\s*File "[^"]*(?:site-packages|/lib/python3\.\d+/)',
            r"\s+at /rustc/|\s+\d+: (?:__rustc|core|std|alloc|test)::|\s+\d+: <fn\(",
        )
    )
)
_NOISE_ANYWHERE = re.compile(r"\bPASSED\b|\.\.\. ok$|\(node:[\w/]+:\d+:\d+\)$")
_NOISE_HINTS = ("PASSED", "... ok", "(node:")


def is_noise(line: str) -> bool:
    """A passing-test line or a framework-internal frame: never kept, not even as context."""
    if _NOISE_START.match(line):
        return True
    return any(h in line for h in _NOISE_HINTS) and _NOISE_ANYWHERE.search(line) is not None


def is_relevant(line: str) -> bool:
    """A line that helps explain a failure: error, assertion, frame, file:line, summary counts."""
    if _RELEVANT_START.match(line) or _FILE_LINE.search(line) or any(m in line for m in _FAILURE_MARKS):
        return True
    lowered = line.lower()
    return any(h in lowered for h in _WORD_HINTS) and _RELEVANT_WORDS.search(line) is not None


class KeptLine(Record):
    """A line of the output that is shown: its ``number`` in the output,
    ``ink`` the non-blank lines up to it (a gap of blank lines only needs no
    marker), and whether it is ``relevant`` itself (else context beside one,
    or a line of the tail shown when nothing was relevant)."""

    number: int
    ink: int
    text: str
    relevant: bool


class KeptLines:
    """``text`` and ``lines_kept`` of a class holding the ``kept`` lines (the
    filter's output, a run's), read off them so that neither can disagree."""

    kept: tuple[KeptLine, ...]

    @property
    def text(self) -> str:
        """The kept lines as text, gap markers between them."""
        return joined(self.kept)

    @property
    def lines_kept(self) -> int:
        return len(self.kept)


@dataclass(frozen=True)
class FilteredOutput(KeptLines):
    """What survives filtering: the ``kept`` lines and the counts that describe the cut.

    ``filtered`` is True when failure-relevant lines were found (else
    ``kept`` is the tail of the output). ``lines_matched`` counts relevant
    lines plus their context before the budget.
    """

    kept: tuple[KeptLine, ...]
    lines_total: int
    lines_matched: int
    filtered: bool

    @property
    def truncated(self) -> bool:
        """Whether the budget dropped lines the rule would have kept."""
        return self.lines_kept < (self.lines_matched if self.filtered else self.lines_total)


def clean_line(line: str, *, cut: bool = False) -> str:
    """One output line as kept: ANSI and control codes removed, ``\\r`` overwrites applied, capped."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\r" in line:
        # A terminal shows what follows the last carriage return (progress bars).
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    line = _CONTROL.sub("", line).rstrip()
    if cut or len(line) > LINE_MAX_CHARS:
        line = line[:LINE_MAX_CHARS] + "…"
    return line


class LineFilter:
    """Streaming filter: feed cleaned lines one by one; memory stays within
    twice the budget (the relevant lines that can still be shown, and as
    much of their context)."""

    def __init__(self, *, max_chars: int, max_lines: int, tail_lines: int, context: int) -> None:
        self.max_chars = max_chars
        self.max_lines = max_lines
        self.context = context
        self.total = 0
        self.matched = 0
        self._ink = 0  # non-blank lines so far: a gap of blank lines only needs no marker
        # the kept lines, relevant and context apart: each a tail within the budget
        self._kept: dict[bool, deque[KeptLine]] = {True: deque(), False: deque()}
        self._kept_chars = {True: 0, False: 0}
        # text None marks a blank or noise line: it holds a place but is never shown
        self._before: deque[tuple[int, int, str | None]] = deque(maxlen=context)
        self._after = 0
        self._tail: deque[tuple[int, str]] = deque(maxlen=tail_lines)

    def add(self, line: str) -> None:
        self.total += 1
        number = self.total
        self._tail.append((number, line))
        blank = not line.strip()
        self._ink += not blank
        keepable = not blank and not is_noise(line)
        if keepable and is_relevant(line):
            for before_number, before_ink, before_text in self._before:
                if before_text is not None:
                    self._keep(KeptLine(before_number, before_ink, before_text, False))
            self._before.clear()
            self._keep(KeptLine(number, self._ink, line, True))
            self._after = self.context
        elif self._after > 0:
            self._after -= 1
            if keepable:
                self._keep(KeptLine(number, self._ink, line, False))
        elif self.context:
            self._before.append((number, self._ink, line if keepable else None))

    def _keep(self, line: KeptLine) -> None:
        self.matched += 1
        kind = line.relevant
        kept = self._kept[kind]
        kept.append(line)
        self._kept_chars[kind] += len(line.text) + 1
        # fit_lines takes relevant lines latest first, then context lines latest
        # first: a line whose later ones of its kind already fill the budget is never shown.
        while len(kept) > 1 and (
            len(kept) > self.max_lines or self._kept_chars[kind] - len(kept[0].text) - 1 > self.max_chars
        ):
            self._kept_chars[kind] -= len(kept.popleft().text) + 1

    def result(self) -> FilteredOutput:
        if self.matched:
            kept = sorted([*self._kept[True], *self._kept[False]])
            return FilteredOutput(
                _within(kept, self.max_chars, self.max_lines), self.total, self.matched, True
            )
        tail = [KeptLine(number, number, text, True) for number, text in self._tail]
        return FilteredOutput(_within(tail, self.max_chars, self.max_lines), self.total, 0, False)


def fit_lines(lines: Sequence[KeptLine], fits: Callable[[int, int, int], bool]) -> list[int] | None:
    """The indexes of ``lines`` to show, in order: the last (the runner's
    summary), then the relevant lines latest first until one does not fit,
    then the context lines after that one, latest first until one does not
    fit. ``fits(chars, shown, first)``: whether ``shown`` lines of ``chars``
    characters (a newline each, the gap markers between them included) fit,
    ``first`` being the index of the earliest (the lines before it are left
    out). None when not even the last line fits."""
    chosen: list[int] = []
    chars = 0

    def add(i: int) -> bool:
        nonlocal chars
        at = bisect_left(chosen, i)
        before = chosen[at - 1] if at else None
        after = chosen[at] if at < len(chosen) else None
        cost = len(lines[i].text) + 1 + _gap_cost(lines, before, i) + _gap_cost(lines, i, after)
        cost -= _gap_cost(lines, before, after)
        if not fits(chars + cost, len(chosen) + 1, min(i, chosen[0]) if chosen else i):
            return False
        chosen.insert(at, i)
        chars += cost
        return True

    if not lines or not add(len(lines) - 1):
        return None if lines else []
    stop = -1  # the latest relevant line that did not fit: its context and all before it stay out
    for i in range(len(lines) - 2, -1, -1):
        if lines[i].relevant and not add(i):
            stop = i
            break
    for i in range(len(lines) - 2, stop, -1):
        if not lines[i].relevant and not add(i):
            break
    return chosen


def joined(lines: Sequence[KeptLine]) -> str:
    """The lines shown as text, a gap between two shown as ``[... N lines ...]``
    (a blank line when only blank lines were left out)."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if i and (marker := _gap_marker(lines[i - 1], line)) is not None:
            out.append(marker)
        out.append(line.text)
    return "\n".join(out)


def _gap_marker(before: KeptLine, after: KeptLine) -> str | None:
    skipped = after.number - before.number - 1
    if not skipped:
        return None
    return f"[... {skipped} line{'s' if skipped != 1 else ''} ...]" if after.ink - before.ink - 1 else ""


def _gap_cost(lines: Sequence[KeptLine], before: int | None, after: int | None) -> int:
    """What the marker between two shown lines costs (none before the first or after the last)."""
    if before is None or after is None:
        return 0
    marker = _gap_marker(lines[before], lines[after])
    return 0 if marker is None else len(marker) + 1


def _within(lines: Sequence[KeptLine], max_chars: int, max_lines: int) -> tuple[KeptLine, ...]:
    """The lines :func:`fit_lines` shows within the budget; a last line longer
    than the whole budget shows its start rather than nothing."""
    chosen = fit_lines(lines, lambda chars, shown, _: chars <= max_chars and shown <= max_lines)
    if chosen is None:
        last = lines[-1]
        return (last._replace(text=last.text[: max_chars - 2] + "…"),)
    return tuple(lines[i] for i in chosen)


def filter_output(
    lines: Iterable[str],
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_lines: int = DEFAULT_MAX_LINES,
    tail_lines: int = DEFAULT_TAIL_LINES,
    context: int = DEFAULT_CONTEXT,
) -> FilteredOutput:
    """Keep failure-relevant lines (with ``context`` lines around each), tail-capped to the budget.

    When nothing is relevant the last ``tail_lines`` lines are kept instead.
    ``text`` never exceeds ``max_chars`` characters or ``max_lines`` lines;
    a gap in the kept lines shows as ``[... N lines ...]``.
    """
    check_bounds(max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context)
    sink = LineFilter(max_chars=max_chars, max_lines=max_lines, tail_lines=tail_lines, context=context)
    for line in lines:
        sink.add(clean_line(line))
    return sink.result()


class LineSplitter:
    """Bytes in, cleaned lines out; holds at most one partial line of ``_LINE_MAX_BYTES``."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._buf = bytearray()
        self._cut = False

    def feed(self, data: bytes) -> None:
        pieces = data.split(b"\n")
        for piece in pieces[:-1]:
            self._append(piece)
            self._flush()
        self._append(pieces[-1])

    def close(self) -> None:
        if self._buf or self._cut:
            self._flush()

    def _append(self, piece: bytes) -> None:
        room = _LINE_MAX_BYTES - len(self._buf)
        if len(piece) > room:
            self._cut = True
            piece = piece[: max(room, 0)]
        self._buf += piece

    def _flush(self) -> None:
        self._emit(clean_line(self._buf.decode("utf-8", errors="replace"), cut=self._cut))
        self._buf.clear()
        self._cut = False
