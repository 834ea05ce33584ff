"""Which function a question is about: the learned ranking's features within a file.

A pasted bug report names its file often enough (a traceback, a module, the
words of its code); the lines to change are another matter. The legs score
chunks by the words they share with the question, so in the right file the
chunk that repeats the report's words most wins, while the function to
change is often the one the report's code *calls*, the one a traceback
*stops in*, or the one whose name the title *says*. These columns give the
model that evidence, one value per candidate, computed from what a search
already holds (the parsed question, the candidates' chunks, their lexical
and tuned scores, the history leg's votes):

* ``name_terms``, ``sig_terms``, ``doc_terms``: the share of the question's
  term weight in the chunk's qualified name, its signature, its doc comment;
* ``subject_terms``: the share of the subject line's terms the chunk holds
  (a report's title says what it is about, its body pastes output);
* ``code_terms``: the share of the question's code terms (from code spans,
  blocks, calls) the chunk holds;
* ``defines_called``: the chunk defines a name the question calls
  (``parse_header(...)`` in a reproduction), ``calls_called``: the share of
  those names the chunk calls itself;
* ``frame_function``, ``frame_line``: a traceback-shaped frame of the
  question (Python, Java and Kotlin, Go, Rust, JavaScript, Ruby) names the
  chunk's function, or its file and a line inside it; ``frame_innermost``:
  the frame where the traceback stopped does (by line, else by name);
* ``history_names``: a past commit that voted for the chunk's file (the
  history leg) names the chunk's function in its subject: the chunk's edit
  history, as far as the index keeps it;
* ``file_lexical_share``, ``file_place``, ``file_terms_gap``: the chunk
  against the other candidates of its file (its lexical score over their
  best, its place by the tuned score, how far its share of the question's
  terms falls short of theirs).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from repolens.chunking import Chunk
from repolens.store.base import normalize_symbol
from repolens.tokens import tokenize

if TYPE_CHECKING:
    from repolens.search.history_leg import HistoryVotes
    from repolens.search.query import ParsedQuery

PINPOINT_FEATURES: tuple[str, ...] = (
    "name_terms",
    "sig_terms",
    "doc_terms",
    "subject_terms",
    "code_terms",
    "defines_called",
    "calls_called",
    "frame_function",
    "frame_line",
    "frame_innermost",
    "history_names",
    "file_lexical_share",
    "file_place",
    "file_terms_gap",
)

# A call in the question's text: the name right before ``(`` (``obj.parse(`` -> ``parse``; not prose
# such as ``Traceback (most recent ...``).
_CALL = re.compile(r"(?<![\w$])([A-Za-z_][\w$]*)\(")
# Names every language calls that say nothing of the code asked about.
_COMMON_CALLS = frozenset(
    normalize_symbol(n)
    for n in (  # noqa: SIM905 (a list of words reads best as words)
        "print println printf len str int float list dict set tuple range isinstance type repr "
        "sorted open super format assert assertEqual assertEquals assertTrue assertFalse assert_eq "
        "expect it test describe raises fail if for while switch return catch function new Some Ok "
        "Err Box vec get set add put size equals toString map filter zip enumerate"
    ).split()
)
# A definition in a chunk's text: ``def f``, ``fn f``, ``func f`` / ``func (r T) f``,
# ``function f``, ``fun f``, ``class C``, ``struct S``.
_DEFINITION = re.compile(
    r"\b(?:def|fn|func(?:\s*\([^)]*\))?|function|fun|class|struct|interface|trait|enum|module|sub)\s+([A-Za-z_]\w*)"
)
# Traceback-shaped frames: (path, line, function), each pattern's groups named.
_PYTHON, _GO, _RUST_PANIC = 0, 2, 4  # patterns whose innermost frame is not the first
_FRAMES = (
    re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>.]+)'),  # Python
    re.compile(r"\bat (?P<func>[\w$.<>]+)\((?P<path>[\w$.-]+\.(?:java|kt|scala)):(?P<line>\d+)\)"),  # JVM
    re.compile(r"^\s*(?P<func>[\w./*()-]+)\(.*\)\n\s+(?P<path>[\w./-]+\.go):(?P<line>\d+)", re.M),  # Go
    re.compile(r"\d+: (?P<func>[\w:<>]+)\n\s+at (?P<path>[\w./-]+\.rs):(?P<line>\d+)"),  # Rust backtrace
    re.compile(r"panicked at '?(?P<path>[\w./-]+\.rs):(?P<line>\d+)(?P<func>)"),  # Rust panic
    re.compile(r"\bat (?:(?P<func>[\w$.<>]+) )?\(?(?P<path>[^\s()]+\.[cm]?[jt]sx?):(?P<line>\d+):\d+"),  # JS
    re.compile(r"(?P<path>[\w./-]+\.rb):(?P<line>\d+):in [`'](?P<func>[^']+)'"),  # Ruby
)


class Frame(NamedTuple):
    """One frame of a traceback in the question."""

    tail: tuple[str, ...]  # the path's last two components, lowercased
    line: int
    function: str  # normalised (``normalize_symbol``), "" when the frame names none
    innermost: bool = False  # where its traceback stopped (Python's last frame, Java's first)


class QuestionMarks(NamedTuple):
    """What a question says about functions, read once per question."""

    called: frozenset[str]  # normalised names it calls
    frames: tuple[Frame, ...]
    frame_functions: frozenset[str]

    @property
    def innermost(self) -> tuple[Frame, ...]:
        return tuple(f for f in self.frames if f.innermost)


@lru_cache(maxsize=64)
def question_marks(text: str) -> QuestionMarks:
    """The names ``text`` calls and the frames of its tracebacks."""
    called = {normalize_symbol(m) for m in _CALL.findall(text)} - _COMMON_CALLS
    frames = []
    for kind, rx in enumerate(_FRAMES):
        found = list(rx.finditer(text))
        for i, m in enumerate(found):
            parts = [p for p in re.split(r"[\\/]", m.group("path").lower()) if p]
            func = (m.group("func") or "").replace("::", ".").rstrip(".").rsplit(".", 1)[-1]
            func = "" if func.startswith("<") else normalize_symbol(func.strip("()*"))
            before = text[found[i - 1].end() : m.start()] if i else ""
            after = text[m.end() : found[i + 1].start()] if i + 1 < len(found) else ""
            innermost = _innermost(kind, i, before, after, last=i + 1 == len(found))
            frames.append(Frame(tuple(parts[-2:]), int(m.group("line")), func, innermost))
    return QuestionMarks(
        frozenset(c for c in called if len(c) >= 3),
        tuple(frames),
        frozenset(f.function for f in frames if f.function),
    )


def _innermost(kind: int, i: int, before: str, after: str, last: bool) -> bool:
    """Whether the ``i``-th frame of pattern ``kind`` is where its traceback
    stopped: a new traceback starts where a line does not begin with a
    space (the error's line); Python lists the innermost frame last, Go
    after its ``goroutine`` line, the others first."""
    if kind == _PYTHON:
        return last or bool(re.search(r"\n\S", after))
    if kind == _GO:
        return i == 0 or "goroutine" in before
    if kind == _RUST_PANIC:
        return True
    return i == 0 or bool(re.search(r"\n\S", before))


def _share(tokens: set[str] | frozenset[str], weights: Mapping[str, float], total: float) -> float:
    return sum(w for tok, w in weights.items() if tok in tokens) / total if total else 0.0


def _names(chunk: Chunk) -> set[str]:
    """The normalised names the chunk defines: its own, and those its text defines."""
    names = {normalize_symbol(n) for n in (chunk.name, chunk.qualname.rsplit(".", 1)[-1]) if n}
    names.update(normalize_symbol(n) for n in _DEFINITION.findall(chunk.text))
    return {n for n in names if n}


def _path_tail(path: str) -> tuple[str, ...]:
    return tuple(path.lower().split("/")[-2:])


def _frame_hits(chunk: Chunk, frames: Sequence[Frame]) -> bool:
    """A frame names the chunk's file (its last two components, or its name
    when the frame has one) and a line inside the chunk."""
    tail = _path_tail(chunk.path)
    for f in frames:
        same = f.tail == tail[-len(f.tail) :] if len(f.tail) == 1 else f.tail == tail
        if same and chunk.start_line <= f.line <= chunk.end_line:
            return True
    return False


def pinpoint_columns(
    query: ParsedQuery,
    chunks: Sequence[Chunk],
    lexical: Sequence[float],
    tuned: Sequence[float],
    held: Sequence[frozenset[str] | set[str]],
    votes: HistoryVotes | None = None,
) -> dict[str, list[float]]:
    """Each of :data:`PINPOINT_FEATURES` for every candidate, in the order of
    ``chunks``: ``lexical`` and ``tuned`` are their scores (0 where the leg
    did not return one), ``held`` the question's terms each chunk's text
    holds, ``votes`` the history leg's (None when it is off)."""
    weights: dict[str, float] = {}
    for t in query.terms:
        weights[t.token] = weights.get(t.token, 0.0) + t.weight
    total = sum(weights.values())
    code = {tok: w for tok, w in weights.items() if any(t.code and t.token == tok for t in query.terms)}
    code_total = sum(code.values())
    subject = {tok: w for tok, w in weights.items() if tok in query.subject}
    subject_total = sum(subject.values())
    marks = question_marks(query.text)
    n = len(chunks)
    out: dict[str, list[float]] = {name: [0.0] * n for name in PINPOINT_FEATURES}
    files: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        files.setdefault(chunk.path, []).append(i)
        label = chunk.qualname or chunk.name
        out["name_terms"][i] = _share(set(tokenize(label)), weights, total) if label else 0.0
        out["sig_terms"][i] = (
            _share(set(tokenize(chunk.signature)), weights, total) if chunk.signature else 0.0
        )
        out["doc_terms"][i] = _share(set(tokenize(chunk.doc)), weights, total) if chunk.doc else 0.0
        out["subject_terms"][i] = _share(held[i], subject, subject_total)
        out["code_terms"][i] = _share(held[i], code, code_total)
        if marks.called or marks.frame_functions:
            names = _names(chunk)
            out["defines_called"][i] = float(bool(names & marks.called))
            out["frame_function"][i] = float(bool(names & marks.frame_functions))
            inner = marks.innermost
            out["frame_innermost"][i] = float(
                _frame_hits(chunk, inner) or bool(names & {f.function for f in inner if f.function})
            )
            if marks.called:
                calls = {normalize_symbol(c) for c in _CALL.findall(chunk.text)}
                out["calls_called"][i] = len(calls & marks.called) / len(marks.called)
        if marks.frames:
            out["frame_line"][i] = float(_frame_hits(chunk, marks.frames))
        vote = votes.files.get(chunk.path) if votes is not None else None
        if vote is not None:
            names = {normalize_symbol(n) for n in (chunk.name,) if len(n) >= 4}
            if names:
                out["history_names"][i] = max(
                    (
                        c.weight
                        for c in vote.commits
                        if names & {normalize_symbol(w) for w in re.findall(r"[\w.]+", c.commit.subject)}
                    ),
                    default=0.0,
                )
    chunk_terms = [_share(h, weights, total) for h in held]
    for of in files.values():
        lex_best = max(lexical[i] for i in of)
        best_terms = max(chunk_terms[i] for i in of)
        ordered = sorted((tuned[i] for i in of), reverse=True)
        for i in of:
            out["file_lexical_share"][i] = lexical[i] / lex_best if lex_best > 0 else 0.0
            out["file_place"][i] = math.log1p(ordered.index(tuned[i]) + 1)  # a competition rank: ties share
            out["file_terms_gap"][i] = best_terms - chunk_terms[i]
    return out
