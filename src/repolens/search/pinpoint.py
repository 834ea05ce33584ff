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
from collections.abc import Callable, Sequence
from functools import lru_cache

from repolens.chunking import Chunk
from repolens.record import Record
from repolens.search.shares import Shares
from repolens.store.base import normalize_symbol

TYPE_CHECKING = False
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
# A word of a commit subject, dotted names whole (``Store.save``).
_SUBJECT_WORD = re.compile(r"[\w.]+")
# Traceback-shaped frames: (path, line, function), each pattern's groups named. Compiled
# at first use: only a question holding one of a pattern's _FRAME_HINTS runs it.
_PYTHON, _GO, _RUST_PANIC = 0, 2, 4  # patterns whose innermost frame is not the first
_FRAMES = (
    r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>.]+)',  # Python
    r"\bat (?P<func>[\w$.<>]+)\((?P<path>[\w$.-]+\.(?:java|kt|scala)):(?P<line>\d+)\)",  # JVM
    r"(?m)^\s*(?P<func>[\w./*()-]+)\(.*\)\n\s+(?P<path>[\w./-]+\.go):(?P<line>\d+)",  # Go
    r"\d+: (?P<func>[\w:<>]+)\n\s+at (?P<path>[\w./-]+\.rs):(?P<line>\d+)",  # Rust backtrace
    r"panicked at '?(?P<path>[\w./-]+\.rs):(?P<line>\d+)(?P<func>)",  # Rust panic
    r"\bat (?:(?P<func>[\w$.<>]+) )?\(?(?P<path>[^\s()]+\.[cm]?[jt]sx?):(?P<line>\d+):\d+",  # JS
    r"(?P<path>[\w./-]+\.rb):(?P<line>\d+):in [`'](?P<func>[^']+)'",  # Ruby
)
# What each of _FRAMES cannot match without (one of them, verbatim): a pattern whose text
# holds none is not run. Some start at every word of the text and try it whole
# (Ruby's, the JVM's, JavaScript's: ~0.2 ms of a pasted issue with no such frame).
_JS_SUFFIXES = tuple(f".{cm}{jt}s{x}:" for cm in ("", "c", "m") for jt in "jt" for x in ("", "x"))
_FRAME_HINTS = (
    ('", line ',),
    (".java:", ".kt:", ".scala:"),
    (".go:",),
    (".rs:",),
    ("panicked at",),
    _JS_SUFFIXES,
    (".rb:",),
)


class Frame(Record):
    """One frame of a traceback in the question."""

    tail: tuple[str, ...]  # the path's last two components, lowercased
    line: int
    function: str  # normalised (``normalize_symbol``), "" when the frame names none
    innermost: bool = False  # where its traceback stopped (Python's last frame, Java's first)


class QuestionMarks(Record):
    """What a question says about functions, read once per question."""

    called: frozenset[str]  # normalised names it calls
    frames: tuple[Frame, ...]
    frame_functions: frozenset[str]
    # each called name as spelled (lowercase), by its normalised form: a chunk
    # that holds none of a question's spellings is not read again
    spelled: tuple[tuple[str, str], ...] = ()

    @property
    def innermost(self) -> tuple[Frame, ...]:
        return tuple(f for f in self.frames if f.innermost)


@lru_cache(maxsize=64)
def question_marks(text: str) -> QuestionMarks:
    """The names ``text`` calls and the frames of its tracebacks."""
    spelled = {(m.lower(), normalize_symbol(m)) for m in _CALL.findall(text)}
    spelled = {(raw, norm) for raw, norm in spelled if norm not in _COMMON_CALLS and len(norm) >= 3}
    frames = []
    for kind, (rx, hints) in enumerate(zip(_FRAMES, _FRAME_HINTS, strict=True)):
        if not any(hint in text for hint in hints):
            continue
        found = list(re.finditer(rx, text))
        for i, m in enumerate(found):
            parts = [p for p in re.split(r"[\\/]", m.group("path").lower()) if p]
            raw = (m.group("func") or "").replace("::", ".").rstrip(".").rsplit(".", 1)[-1].strip("()*")
            func = "" if raw.startswith("<") else normalize_symbol(raw)
            before = text[found[i - 1].end() : m.start()] if i else ""
            after = text[m.end() : found[i + 1].start()] if i + 1 < len(found) else ""
            innermost = _innermost(kind, i, before, after, last=i + 1 == len(found))
            frames.append(Frame(tuple(parts[-2:]), int(m.group("line")), func, innermost))
            if func:
                spelled.add((raw.lower(), func))
    lowered = text.lower()
    return QuestionMarks(
        frozenset(norm for raw, norm in spelled if (raw + "(") in lowered),
        tuple(frames),
        frozenset(f.function for f in frames if f.function),
        tuple(sorted(spelled)),
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


def _substrings(texts: Sequence[str], words: Sequence[str]) -> list[frozenset[str]]:
    """Which of ``words`` each text holds, in any case (anywhere, inside longer words too)."""
    return [frozenset(w for w in words if w in text.lower()) for text in texts]


Finder = Callable[[Sequence[str], Sequence[str]], list[frozenset[str]]]


def pinpoint_columns(
    query: ParsedQuery,
    chunks: Sequence[Chunk],
    lexical: Sequence[float],
    tuned: Sequence[float],
    held: Sequence[frozenset[str] | set[str]],
    votes: HistoryVotes | None = None,
    find: Finder = _substrings,
    in_text: Sequence[frozenset[str]] | None = None,
) -> dict[str, list[float]]:
    """Each of :data:`PINPOINT_FEATURES` for every candidate, in the order of
    ``chunks``: ``lexical`` and ``tuned`` are their scores (0 where the leg
    did not return one), ``held`` the question's terms each chunk's text
    holds, ``votes`` the history leg's (None when it is off); ``find(texts,
    words)`` says which words each text holds, as ``held`` was found (one
    pass of an automaton over each text, :func:`repolens.search.features.held_terms`);
    ``in_text``, when given, which of :func:`text_patterns` (and perhaps
    more) each chunk's text holds, found in the same pass as ``held``.
    A question's terms count in a name, signature or doc comment as they
    count in a chunk's text: anywhere, in any case."""
    held = [frozenset(h) for h in held]  # (the same object when it is one already)
    weights: dict[str, float] = {}
    code: dict[str, float] = {}
    for t in query.terms:
        weights[t.token] = weights.get(t.token, 0.0) + t.weight
        if t.code:
            code[t.token] = code.get(t.token, 0.0) + t.weight
    code = {tok: weights[tok] for tok in code}
    subject = {tok: w for tok, w in weights.items() if tok in query.subject}
    share = Shares(weights)
    code_share, subject_share = Shares(code), Shares(subject)
    tokens = list(weights)
    n = len(chunks)
    out: dict[str, list[float]] = {}
    # a chunk's name, signature and doc comment searched in one pass, each
    # distinct one once (nearly half are empty or repeated: docless chunks, a
    # class's methods sharing a signature)
    labels = [c.qualname or c.name for c in chunks] + [c.signature for c in chunks] + [c.doc for c in chunks]
    distinct = list(dict.fromkeys(labels))
    found_in = dict(zip(distinct, find(distinct, tokens), strict=True))
    for k, name in enumerate(("name_terms", "sig_terms", "doc_terms")):
        out[name] = share.each(found_in[label] for label in labels[k * n : (k + 1) * n])
    out["subject_terms"] = subject_share.each(held)
    out["code_terms"] = code_share.each(held)
    for name in ("defines_called", "calls_called", "frame_function", "frame_line", "frame_innermost"):
        out[name] = [0.0] * n
    marks = question_marks(query.text)
    if marks.spelled:
        if in_text is None:
            in_text = find([c.text for c in chunks], text_patterns(query))
        _called_columns(marks, chunks, in_text, out)
    if marks.frames:
        inner = marks.innermost
        for i, chunk in enumerate(chunks):
            out["frame_line"][i] = float(_frame_hits(chunk, marks.frames))
            out["frame_innermost"][i] = max(out["frame_innermost"][i], float(_frame_hits(chunk, inner)))
    out["history_names"] = _history_names(chunks, votes)
    chunk_terms = share.each(held)
    files: dict[str, list[int]] = {}
    for i, chunk in enumerate(chunks):
        files.setdefault(chunk.path, []).append(i)
    out["file_lexical_share"], out["file_place"], out["file_terms_gap"] = [0.0] * n, [0.0] * n, [0.0] * n
    for of in files.values():
        lex_best = max(lexical[i] for i in of)
        best_terms = max(chunk_terms[i] for i in of)
        ordered = sorted((tuned[i] for i in of), reverse=True)
        for i in of:
            out["file_lexical_share"][i] = lexical[i] / lex_best if lex_best > 0 else 0.0
            out["file_place"][i] = math.log1p(ordered.index(tuned[i]) + 1)  # a competition rank: ties share
            out["file_terms_gap"][i] = best_terms - chunk_terms[i]
    return out


# What a definition of a name is written after, in the languages indexed.
_DEFINES = ("def ", "fn ", "func ", "function ", "fun ", "class ", "struct ", "interface ", "trait ", "enum ")


def text_patterns(query: ParsedQuery) -> list[str]:
    """What :func:`pinpoint_columns` looks for in the chunks' texts: each of
    the question's names after a definition's keyword (``def parse_header``)
    and before a call's parenthesis (``parse_header(``), lowercase."""
    marks = question_marks(query.text)
    defined = [kw + raw for raw, _ in marks.spelled for kw in _DEFINES]
    return defined + [raw + "(" for raw, n in marks.spelled if n in marks.called]


def _called_columns(
    marks: QuestionMarks, chunks: Sequence[Chunk], in_text: Sequence[frozenset[str]], out: dict
) -> None:
    """``defines_called``, ``calls_called``, ``frame_function`` and the
    by-name half of ``frame_innermost``, from which of :func:`text_patterns`
    each chunk's text holds (``in_text``)."""
    spelled = frozenset(n for _, n in marks.spelled)
    defined = {kw + raw: n for raw, n in marks.spelled for kw in _DEFINES}
    calls = {raw + "(": n for raw, n in marks.spelled if n in marks.called}
    # what a chunk's text holds is met with these as sets: the smaller side is walked, in C
    defined_patterns, call_patterns = frozenset(defined), frozenset(calls)
    inner = {f.function for f in marks.innermost if f.function}
    for i, chunk in enumerate(chunks):
        names = {normalize_symbol(x) for x in (chunk.name, chunk.qualname.rsplit(".", 1)[-1]) if x}
        names &= spelled
        found = in_text[i]
        names.update(defined[f] for f in found & defined_patterns)
        if marks.called:
            out["calls_called"][i] = len({calls[f] for f in found & call_patterns}) / len(marks.called)
        out["defines_called"][i] = float(not names.isdisjoint(marks.called))
        out["frame_function"][i] = float(not names.isdisjoint(marks.frame_functions))
        out["frame_innermost"][i] = float(not names.isdisjoint(inner))


def _history_names(chunks: Sequence[Chunk], votes: HistoryVotes | None) -> list[float]:
    """The strongest vote of a past commit that names the chunk's function
    in its subject, among those the history leg found for its file."""
    out = [0.0] * len(chunks)
    if votes is None or not votes.files:
        return out
    voted: dict[str, dict[int, str]] = {}  # per voted file: its candidates' names, normalised
    for i, chunk in enumerate(chunks):
        if len(chunk.name) >= 4 and chunk.path in votes.files:
            voted.setdefault(chunk.path, {})[i] = normalize_symbol(chunk.name)
    for path, names in voted.items():
        wanted = set(names.values())
        best: dict[str, float] = {}  # a name -> its strongest commit's weight
        for c in votes.files[path].commits:
            for name in wanted.intersection(_subject_words(c.commit.subject)):
                best[name] = max(best.get(name, 0.0), c.weight)
        for i, name in names.items():
            out[i] = best.get(name, 0.0)
    return out


@lru_cache(maxsize=4096)
def _subject_words(subject: str) -> frozenset[str]:
    """A commit subject's words, normalised (dotted names whole)."""
    return frozenset(normalize_symbol(w) for w in _SUBJECT_WORD.findall(subject))
