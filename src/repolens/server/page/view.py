"""A tool's reply as the page shows it: the same text, line by line, with
colours and links.

Nothing is added to or dropped from the text an agent gets: each line is
cut into pieces whose texts join back to it (``tests/server/test_page_view.py``
checks), and a piece may carry a CSS class and a link. What the packet
format (:mod:`repolens.reply.packet`, :mod:`repolens.reply.budget`) already
says is what is marked:

* a hit's header (``path:start-end kind name (score S)``), the next files
  and a trailer's ``path:start-end`` are links to a read of those lines;
* ``use read_snippet PATH START END`` (a cut hit, a path-only hit) is a
  link to that very read, as is an omission marker (``... (lines A-B
  omitted)``) to the lines it names, of the hit it is in;
* ``N: text`` lines are code: the number apart, the text coloured for the
  file's language (:mod:`repolens.server.page.highlight`);
* ``explain:`` lines, notes, ``query_id`` and the JSON mode's text get
  classes of their own.

A read is at most :data:`READ_MAX_LINES` lines (``read_snippet``'s own
limit): a link to a longer span reads its first lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import escape
from urllib.parse import quote

from markupsafe import Markup

from repolens.chunking.languages import ambiguous, language_of
from repolens.record import Record
from repolens.server.page.explain import PREFIX as EXPLAIN_PREFIX
from repolens.server.page.highlight import tokens

READ_MAX_LINES = 300
READ_PATH = "/read"
SEARCH_PATH = "/search"

_CODE = re.compile(r"(?P<number>\d+): (?P<text>.*)")
# a path:start-end inside a line (a trailer's list of blocks); a path with a space or
# parenthesis is read whole only where a line starts with it (_LEAD)
_REF = re.compile(r"(?P<path>[^\s(),:]+(?::[^\s(),:]+)?):(?P<start>\d+)-(?P<end>\d+)")
# a line led by path:start-end, then a space or nothing: a hit's header, a next file; the
# path is anything (spaces, parentheses, ``<``) up to its first :start-end
_LEAD = re.compile(r"(?P<path>.+?):(?P<start>\d+)-(?P<end>\d+)(?= |$)")
_READ = re.compile(r"read_snippet (?P<path>.+?) (?P<start>\d+) (?P<end>\d+)(?![\w-])")
_OMITTED = re.compile(r"\.\.\. \(lines? (?P<start>\d+)(?:-(?P<end>\d+))? omitted\)")
_QUERY_ID = re.compile(r"query_id (?P<id>[0-9a-f]+)")
# files mode: "1. path (score 1.73, 5 hits, best 96-140): reason"
_FILE_ENTRY = re.compile(r"\d+\. (?P<path>\S+) \(score [^)]*?best (?P<start>\d+)-(?P<end>\d+)\)")
MODES = ("packet", "files", "json")


class Piece(Record):  # a tuple: a packet makes a thousand of them, a frozen dataclass costs 3x
    text: str
    kind: str = ""  # CSS class
    href: str = ""


@dataclass
class Line:
    pieces: list[Piece] = field(default_factory=list)
    kind: str = ""  # the line's CSS class: head, code, marker, explain, note, ...
    explain: str = ""  # an explain: line's text, for its chart

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)


def line_html(line: Line) -> Markup:
    """One line as the page's HTML, every text escaped: ``<div class="l KIND">``
    holding a ``<span>`` per coloured piece and an ``<a>`` per link (built
    here, not by a template macro per line: a packet has a hundred lines,
    and a macro call each was most of the page's rendering time)."""
    parts = []
    for piece in line.pieces:
        text = escape(piece.text, quote=False)  # the standard library's: a str, 3x faster than a Markup each
        if piece.href:
            parts.append(f'<a href="{escape(piece.href)}" class="{piece.kind}">{text}</a>')
        elif piece.kind:
            parts.append(f'<span class="{piece.kind}">{text}</span>')
        else:
            parts.append(text)
    body = "".join(parts) or "&#8203;"  # an empty line keeps its height (and its line in the page's text)
    return Markup(f'<div class="l {line.kind}">{body}</div>')


def read_href(path: str, start: int, end: int, repo: str | None) -> str:
    """The page's link to a read of ``path`` lines ``start``-``end`` (at most
    :data:`READ_MAX_LINES`); a path labelled with its repository (a reply
    over several) names it itself."""
    end = min(end, start + READ_MAX_LINES - 1)
    # quote, not urlencode: a packet has twenty links, and urlencode's generality was a tenth of its rendering
    where = "" if not repo or _labelled(path) else f"repo={quote(repo, safe='')}&"
    return f"{READ_PATH}?{where}path={quote(path, safe='/')}&start={start}&end={end}"


def _labelled(path: str) -> bool:
    name, sep, rest = path.partition(":")
    return bool(sep and rest and "/" not in name)


def reply_lines(text: str, mode: str, repo: str | None) -> list[Line]:
    """The lines of a ``search_code`` reply in ``mode``; ``repo``: the one
    repository searched (None: several, whose paths are labelled)."""
    if mode == "json":
        return [
            Line([Piece(t, f"t-{k}" if k else "") for k, t in tokens(line, "reply.json")], "json")
            for line in text.split("\n")
        ]
    out: list[Line] = []
    current = ""  # the path of the hit being read: its code's language, its markers' reads
    codes: list[tuple[int, str, str, str]] = []  # (where in out, number, text, path): coloured last
    for raw in text.split("\n"):
        code = _CODE.fullmatch(raw)
        if code and current:
            codes.append((len(out), code["number"], code["text"], current))
            out.append(Line([]))
            continue
        if raw.startswith(EXPLAIN_PREFIX):
            out.append(Line([Piece(raw)], "explain", explain=raw))
            continue
        if (omitted := _OMITTED.fullmatch(raw)) and current:
            start = int(omitted["start"])
            end = int(omitted["end"] or start)
            out.append(Line([Piece(raw, "", read_href(current, start, end, repo))], "marker"))
            continue
        if qid := _QUERY_ID.fullmatch(raw):
            out.append(Line([Piece("query_id "), Piece(qid["id"], "qid")], "trailer"))
            continue
        head = _LEAD.match(raw) if not raw.startswith("... ") else None  # (a trailer lists scored hits)
        if head and "(score " in raw:
            current = head["path"]
            out.append(Line(_linked(raw, repo, head=True), "head"))
            continue
        if raw.startswith("note: "):
            out.append(Line([Piece(raw)], "note"))
            continue
        if mode == "files" and (entry := _FILE_ENTRY.match(raw)):
            href = read_href(entry["path"], int(entry["start"]), int(entry["end"]), repo)
            before = raw[: entry.start("path")]
            rest = raw[entry.end("path") :]
            out.append(Line([Piece(before), Piece(entry["path"], "ref", href), Piece(rest)], "file"))
            continue
        kind = "marker" if raw.startswith("... ") else ("" if raw else "gap")
        out.append(Line(_linked(raw, repo), kind))
    languages = _languages([(path, text) for _, _, text, path in codes])
    for at, number, text, path in codes:
        out[at] = _code_line(number, text, path, languages.get(path))
    return out


def _languages(lines: list[tuple[str, str]]) -> dict[str, str]:
    """The language of each ``.h`` header among ``(path, line)`` pairs, by
    its lines shown: C or C++, as the index tells them by the whole text."""
    shown: dict[str, list[str]] = {}
    for path, line in lines:
        if ambiguous(path):
            shown.setdefault(path, []).append(line)
    return {path: language_of(_unlabelled(path), "\n".join(text)) for path, text in shown.items()}


def query_id_of(text: str) -> str | None:
    """The ``query_id`` a packet or file overview ends with, if any."""
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    found = _QUERY_ID.fullmatch(last)
    return found["id"] if found else None


def read_lines(text: str, path: str, repo: str | None = None) -> list[Line]:
    """A ``read_snippet`` reply: its header, then its numbered lines
    coloured; a cut read's marker links to the read of the lines it left out."""
    out: list[Line] = []
    language = None
    if ambiguous(path):
        codes = [code["text"] for code in map(_CODE.fullmatch, text.split("\n")) if code]
        language = _languages([(path, line) for line in codes]).get(path)
    for raw in text.split("\n"):
        code = _CODE.fullmatch(raw)
        if code:
            out.append(_code_line(code["number"], code["text"], path, language))
        else:
            out.append(Line([Piece(raw)] if not out else _linked(raw, repo), "head" if not out else "marker"))
    return out


def _code_line(number: str, text: str, path: str, language: str | None = None) -> Line:
    pieces = [Piece(f"{number}: ", "ln")]
    pieces += [Piece(t, f"t-{k}" if k else "") for k, t in tokens(text, _unlabelled(path), language)]
    return Line(pieces, "code")


def _unlabelled(path: str) -> str:
    return path.partition(":")[2] if _labelled(path) else path


def _linked(raw: str, repo: str | None, *, head: bool = False) -> list[Piece]:
    """``raw`` with every ``read_snippet P S E`` and ``path:start-end`` in it a link."""
    spans: list[tuple[int, int, str]] = []
    for m in _READ.finditer(raw):
        spans.append((m.start(), m.end(), read_href(m["path"], int(m["start"]), int(m["end"]), repo)))
    # a hit's header, a next file (``path:start-end (why)``): the path is read whole
    lead = _LEAD.match(raw) if not spans and not raw.startswith(("... ", "note: ")) else None
    if lead and (head or raw[lead.end() : lead.end() + 2] == " ("):
        spans.append((0, lead.end(), read_href(lead["path"], int(lead["start"]), int(lead["end"]), repo)))
    for m in _REF.finditer(raw):
        if not any(a <= m.start() < b for a, b, _ in spans):
            spans.append((m.start(), m.end(), read_href(m["path"], int(m["start"]), int(m["end"]), repo)))
    pieces: list[Piece] = []
    at = 0
    for start, end, href in sorted(spans):
        if start > at:
            pieces.append(Piece(raw[at:start]))
        pieces.append(Piece(raw[start:end], "ref", href))
        at = end
    if at < len(raw) or not pieces:
        pieces.append(Piece(raw[at:]))
    return pieces
