"""The wording every reply shares, and how replies keep to their budget.

Markers for text left out, the trailer that names what did not fit, counted
nouns: these texts are a contract (agents and tests read them; the README
quotes them), so each exists here once and every reply (packets, focus,
chunks, snippets, file overviews, symbol lookups, the MCP tools) builds its
markers from these functions. The budget helpers beside them
(:func:`fit_lines`, :func:`trailer_reserve`, :func:`cut_to_budget`) are the
ways a reply fits ``max_chars`` with those markers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

# Between the blocks of a packet or a focus reply, and before their trailer.
BLOCK_SEP = "\n\n"
# Room kept for the trailer while blocks are placed: at most this much, so
# that a long tail of refs cannot starve the first blocks.
TRAILER_RESERVE = 400
# The reply budget of a read (read_snippet, ``repolens read``) when the
# caller names none, CLI and MCP alike.
READ_MAX_CHARS = 12_000
# What every other reply shows when the caller names no bound, CLI, MCP and
# library alike: each front passes what the caller gave, or None, and the use
# case (repolens.service) takes these. A search's own top_k and max_chars are
# settings (repolens.settings.Settings: a repository's .repolens.toml may set
# them); a test run's bounds are in repolens.testrun.limits.
SYMBOLS_LIMIT = 20  # definitions a symbol lookup lists
SYMBOLS_MAX_CHARS = 4000
FOCUS_MAX_FILES = 3  # focused context: files, blocks per file, blocks in all, characters
FOCUS_BLOCKS_PER_FILE = 3
FOCUS_MAX_BLOCKS = 6
FOCUS_MAX_CHARS = 8000
CHUNK_MAX_CHARS = 8000  # one stored chunk
HISTORY_TOP_K = 10  # commits a search of the history lists
HISTORY_MAX_CHARS = 6000
COMPARE_MAX_CHARS = 4000  # a comparison of two branches
REFS_MAX_CHARS = 6000  # find_references: uses, callers and callees, impact
REFS_DEPTH = 1  # calls callers and callees follow
IMPACT_DEPTH = 2  # steps of uses impact follows
LIST_LIMIT = 20  # repositories one page of list_repositories names
SUMMARY_MAX_CHARS = 4000  # the replies of index_repo, refresh_index, index_status and list_repositories


def counted(n: int, noun: str, plural: str = "") -> str:
    """``1 hit``, ``2 hits``, ``2 entries``; ``plural`` for other nouns that do not take an ``s``."""
    if n == 1:
        return f"{n} {noun}"
    if not plural:
        plural = noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou") else noun + "s"
    return f"{n} {plural}"


def omitted_marker(a: int, b: int) -> str:
    """A stretch of a shown span that is left out."""
    return f"... (line {a} omitted)" if a == b else f"... (lines {a}-{b} omitted)"


def long_line_marker(path: str, line: int, length: int, whole: int, most: int) -> str:
    """A read whose first line alone is over its budget: the budget that
    shows it whole (``whole`` chars of reply), when a reply may be that long
    (``most``, the largest budget)."""
    if whole <= most:
        read = f"read_snippet {path} {line} {line}"
        return f"... (line {line} is {length} chars; {read} with max_chars={whole} shows it)"
    return f"... (line {line} is {length} chars, longer than any reply: only its start is shown)"


def truncated_marker(path: str, start: int, end: int, cap: int) -> str:
    """A hit cut by the per-hit cap; names the read that shows the rest."""
    return f"... (truncated at {cap} chars; use read_snippet {path} {start} {end} to expand)"


# The longest line the index holds whole (and the most characters of a line
# window): of a longer one, the first this many (repolens.chunking.text).
INDEXED_LINE_CHARS = 6000


def line_cut_marker(path: str, line: int, kept: int) -> str:
    """A line the index holds only the first ``kept`` characters of (data, a minified bundle)."""
    return (
        f"... (line {line} goes on past the {kept} chars the index holds; "
        f"use read_snippet {path} {line} {line} to read it)"
    )


def beside_its_marker(line: str, marker: str, room: int, number: int) -> str | None:
    """The numbered ``line`` the index cut, then its ``marker``, in ``room``
    chars: the line cut shorter (``...``) so that the marker stays whole;
    None when not even its number and 20 of its characters fit beside it."""
    if len(line) + 1 + len(marker) <= room:
        return f"{line}\n{marker}"
    keep = room - len(marker) - 1 - len("...")
    return f"{line[:keep]}...\n{marker}" if keep >= len(f"{number}: ") + 20 else None


def lines_cut_marker(path: str, next_line: int, end: int, max_lines: int) -> str:
    """A read cut at its most lines; names the read that continues, to ``end``
    (the last line asked for that the file has)."""
    return f"... (cut at {max_lines} lines; use read_snippet {path} {next_line} {end} to continue)"


# The last line of a tool reply cut to its budget as a whole.
REPLY_CUT = "... (cut to fit the reply budget)"


def budget_marker(path: str, start: int, end: int, dropped: int) -> str:
    """A hit cut because the reply's budget ran out."""
    return f"... (budget: {dropped} chars omitted; use read_snippet {path} {start} {end} to expand)"


def diff_marker(n: int, commit: str, path: str) -> str:
    """Changed lines of a commit left out of a history reply; names the
    command that shows them, run in a shell as written (a path with spaces
    or quotes is quoted)."""
    import shlex  # only for a history reply that cuts a diff

    return f"... ({counted(n, 'more changed line')}; git show {commit} -- {shlex.quote(path)})"


def more_did_not_fit(noun: str, n: int, why: str = "did not fit") -> str:
    """The shortest trailer: ``... 3 more hits did not fit``."""
    return f"... {counted(n, 'more ' + noun)} {why}"


def did_not_fit(
    noun: str, refs: Sequence[str], limit: int, *, why: str = "did not fit", count: str = ""
) -> str:
    """``... 3 more hits did not fit: a, b, and 1 more`` within ``limit`` chars.

    Names as many of ``refs`` (best first) as fit, then counts the rest; at
    its shortest it is ``... 3 more hits did not fit``, and empty when not
    even that fits. ``why`` says why they are not shown when it is not the
    budget (``past max_blocks=2``); ``count`` what they are when not all
    are one ``noun`` (``2 more definitions and 1 more test file``).
    """
    n = len(refs)
    if not n:
        return ""
    head = f"... {count} {why}" if count else more_did_not_fit(noun, n, why)
    for k in range(n, 0, -1):
        rest = f", and {n - k} more" if k < n else ""
        text = f"{head}: {', '.join(refs[:k])}{rest}"
        if len(text) <= limit:
            return text
    return head if len(head) <= limit else ""


def note_lines(notes: Sequence[str]) -> str:
    """A reply's notes, one ``note: ...`` line each (they come first)."""
    return "\n".join(f"note: {n}" for n in notes)


# The head of a packet's last lines: the next best files after the hits.
NEXT_FILES = "next files (read_snippet PATH START END to read one):"


def next_file_line(path: str, start: int, end: int, reason: str) -> str:
    """One pointer to a file a packet names without showing it: its best span and why."""
    return f"{path}:{start}-{end} ({reason})"


def trailer_reserve(noun: str, refs: Sequence[str], room: int) -> int:
    """Chars to keep, beside a block, for the trailer naming ``refs`` (the
    blocks after it) and its separator: the trailer as it would be within
    ``room``, capped at :data:`TRAILER_RESERVE`; 0 when there is none."""
    trailer = did_not_fit(noun, refs, min(room, TRAILER_RESERVE))
    return len(BLOCK_SEP) + len(trailer) if trailer else 0


def fit_lines(
    head: str, body: list[tuple[str, int | None]], limit: int, marker: Callable[[int], str], last_line: int
) -> tuple[str, bool]:
    """``head`` and as many ``body`` entries as fit in ``limit`` chars, then ``marker(n)``.

    ``body`` is (text, source line or None for markers); ``n`` is the first
    source line not shown (``last_line`` if only markers were left). Returns
    (text, was_cut). The text exceeds ``limit`` only when ``head`` plus the
    marker alone do not fit; then it is ``head`` cut to ``limit``.
    """
    full = "\n".join([head, *(t for t, _ in body)])
    if len(full) <= limit:
        return full, False
    kept = [head]
    size = len(head)
    for i, (text, _n) in enumerate(body):
        nxt = next((m for _, m in body[i:] if m is not None), last_line)
        tail = marker(nxt)
        if size + 1 + len(text) + 1 + len(tail) > limit:
            kept.append(tail)
            out = "\n".join(kept)
            return (out if len(out) <= limit else head[:limit]), True
        kept.append(text)
        size += 1 + len(text)
    return full, False  # pragma: no cover - the whole body fitted, handled above


def header_and_line(header: str, bare_header: str, line: str, number: int, max_chars: int) -> str:
    """A block at its smallest: ``header`` and one numbered ``line`` in
    ``max_chars``; ``bare_header`` (without the name or the matched lines)
    when both do not fit, then the line cut, keeping its number and a few
    characters (the span in the header still cites it)."""
    if len(header) + 1 + len(line) > max_chars:
        header = bare_header
    room = max_chars - len(header) - 1
    if len(line) > room:
        keep = max(room, min(len(line), len(f"{number}: ") + 20))
        line = line[: keep - 3] + "..."
        allowed = max_chars - len(line) - 1
        if len(header) > allowed:  # cut from the front: the file's name and the span it cites stay
            header = "..." + header[len(header) - allowed + 3 :] if allowed > 3 else header[:allowed]
    return f"{header}\n{line}"


def cut_to_budget(text: str, max_chars: int) -> str:
    """``text`` whole when it fits, else cut with :data:`REPLY_CUT` as its last line."""
    if len(text) <= max_chars:
        return text
    return text[: max_chars - len(REPLY_CUT) - 1] + "\n" + REPLY_CUT
