"""Every argument check, and the bounds they check against, named once.

The core functions call these where a caller's value enters (the CLI, MCP
and HTTP adapters pass arguments through unchanged), so each bound has one
home and each refusal one wording: ``UsageError`` with a line that names
the argument, what it must be and what it got.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence, Set

from repolens.errors import ROOT_FIX, RepolensError, RootError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path  # pathlib imports urllib and ipaddress: not for every command line

# The budget of every reply, in characters (search packets and overviews,
# symbols, focus, a stored chunk, a snippet, a test run's output): below 200
# not even a header and one line fit; above a million no agent reads it.
MIN_BUDGET = 200
MAX_BUDGET = 1_000_000
# Hits in one search reply.
MAX_TOP_K = 50
# Lines of context around a hit.
MAX_CONTEXT_LINES = 50
# A query longer than this is a pasted file, not a question.
MAX_QUERY_CHARS = 100_000
# A path filter or a glob longer than this is not a path.
MAX_PATH_CHARS = 1000
MAX_GLOB_CHARS = 500
# Glob patterns in one ``include`` or ``exclude``: each is matched against
# every candidate's path, and one pattern with ``*`` or ``**`` covers many.
MAX_GLOBS = 50
# Files or folders one call names (focus, compare): each is looked up in the
# index, and a folder stands for all under it.
MAX_PATHS = 100
# Exact strings a search hit must contain (``keyword``): a few, each a line or so.
MAX_KEYWORDS = 8
MAX_KEYWORD_CHARS = 500
# The longest name of one folder or file, and of a whole path, in bytes
# (NAME_MAX and PATH_MAX on Linux and macOS): the system refuses longer ones
# with an error that says nothing of which name is too long.
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4095


def check_utf8(
    what: str, value: object, error: type[RepolensError] = UsageError, fix: str = "pass UTF-8 text"
) -> None:
    """Refuse text that cannot be written as UTF-8, in one line naming ``what``.

    Python hands bytes that are not UTF-8 (in command-line arguments and
    environment variables) over as lone surrogates, and JSON can carry lone
    surrogates too; nothing downstream (SQLite, the query log, remembered
    queries, JSON replies) can store them. The policy is to refuse, where a
    user string enters, rather than to guess a replacement. ``value`` may be
    a string or a list or dict of them (tool arguments); other values pass.
    """
    bad = _unencodable(value)
    if bad is not None:
        raise error(f"{what} is not valid UTF-8 ({_escaped(bad)}): {fix}")


def _unencodable(value: object) -> str | None:
    """The first string in ``value`` (searched through lists and dicts, with
    a stack of its own: a request may nest deeper than Python recurses) that
    is not encodable."""
    left = [value]
    while left:
        item = left.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            left.extend(reversed([*item.keys(), *item.values()]))
        elif isinstance(item, list):
            left.extend(reversed(item))
    return None


def _escaped(text: str) -> str:
    """The text around its first lone surrogate, quoted: an escaped byte shows as
    ``\\xff`` (how it was typed), any other surrogate as ``\\ud800``."""
    first = next(i for i, c in enumerate(text) if "\ud800" <= c <= "\udfff")
    part = text[max(0, first - 30) : first + 30]
    shown = "".join(
        f"\\x{ord(c) - 0xDC00:02x}"
        if "\udc80" <= c <= "\udcff"
        else f"\\u{ord(c):04x}"
        if "\ud800" <= c <= "\udfff"
        else c
        for c in part
    )
    return f"{'...' if first > 30 else ''}'{shown}'{'...' if first + 30 < len(text) else ''}"


def json_type(value: object) -> str:
    """What a decoded JSON value is, in JSON's words ("a string", "an array"):
    how a refusal names what a caller sent without repeating it."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "a number"
    if isinstance(value, float):
        return "a decimal number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def check_user_path(
    what: str,
    raw: str | os.PathLike[str],
    error: type[RepolensError] = UsageError,
    fix: str | None = None,
    base: Path | None = None,
) -> Path:
    """``raw`` as a path with ``~`` and ``~user`` expanded (a relative one
    under ``base`` when given), or one line naming ``what`` and what is wrong
    when it can name no file: a NUL byte, the home of an unknown user (or of
    none, without ``$HOME``), a name over :data:`MAX_NAME_BYTES` or a path
    over :data:`MAX_PATH_BYTES`. Raises ``error`` (with ``fix``); whether the
    file exists is the caller's to ask (:func:`check_dir` asks for a folder)."""
    from pathlib import Path

    text = os.fspath(raw)
    shown = shown_path(text)
    if "\x00" in text:
        raise error(f"{what} {shown} holds a NUL byte", fix=fix or "remove it")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # pwd knows no such user, or HOME is unset and pwd knows no home
        user = text[1:].partition("/")[0]
        whose = f"of user {user!r}, who is unknown here" if user else "of the current user ($HOME is not set)"
        raise error(
            f"{what} {shown} starts with the home folder {whose}", fix=fix or "write the path in full"
        ) from None
    if base is not None and not path.is_absolute():
        path = base / path
    longest, length = max(path.parts, key=_bytes, default=""), _bytes(str(path))
    if _bytes(longest) > MAX_NAME_BYTES or length > MAX_PATH_BYTES:
        problem = (
            f"holds a name of {_bytes(longest)} bytes; the limit is {MAX_NAME_BYTES}"
            if _bytes(longest) > MAX_NAME_BYTES
            else f"is {length} bytes long; the limit is {MAX_PATH_BYTES}"
        )
        raise error(f"{what} {shown} {problem}", fix=fix or "shorten it")
    return path


def check_dir(
    what: str,
    raw: str | os.PathLike[str],
    error: type[RepolensError],
    fix: str | None = None,
    base: Path | None = None,
) -> Path:
    """:func:`check_user_path`, resolved, when it names a folder; else one
    line saying it does not exist, is no folder, or cannot be looked into."""
    path = check_user_path(what, raw, error, fix, base)
    try:
        if path.is_dir():
            return path.resolve()
        state = "is not a directory" if path.exists() else "does not exist"
    except OSError as exc:  # a folder on the way that cannot be searched, a loop of links
        state = f"cannot be used ({exc.strerror or type(exc).__name__})"
    raise error(f"{what} {shown_path(str(path))} {state}", fix=fix)


def resolve_root(root: str | os.PathLike[str] | None) -> Path:
    """The repository root, resolved; ``RootError``, one line, when it is no
    directory or no usable path (:func:`check_dir`)."""
    return check_dir("repository root", root if root is not None else ".", RootError, ROOT_FIX)


def shown_path(text: str, limit: int = 80) -> str:
    """A path as an error line shows it: as it is when short and printable,
    else quoted, cut at ``limit`` characters."""
    if len(text) <= limit and text.isprintable():
        return text
    return repr(text[:limit]) + (f"... ({len(text)} chars)" if len(text) > limit else "")


def shown_value(value: object, limit: int = 60) -> str:
    """A value an error line names, quoted, cut at ``limit`` characters: a
    megabyte passed as a mode is one short line, not the megabyte again."""
    text = value if isinstance(value, str) else repr(value)
    return repr(text[:limit]) + (f"... ({len(text)} chars)" if len(text) > limit else "")


def _bytes(name: str) -> int:
    """The length of ``name`` on disk (an undecodable byte, held as a surrogate, counts 3: near enough)."""
    return len(name.encode("utf-8", "surrogatepass"))


def check_int(name: str, value: object, lo: int, hi: int) -> int:
    """``value`` when it is a whole number in ``[lo, hi]``; else a one-line
    ``UsageError`` naming the argument and its bounds (booleans refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{name} must be an integer between {lo} and {hi}")
    if not lo <= value <= hi:
        raise UsageError(f"{name} must be between {lo} and {hi}, got {value}")
    return value


def check_budget(max_chars: object) -> int:
    """A reply budget (``max_chars``) between :data:`MIN_BUDGET` and :data:`MAX_BUDGET`."""
    return check_int("max_chars", max_chars, MIN_BUDGET, MAX_BUDGET)


def check_query(query: object) -> None:
    """A search or focus query: non-blank text of at most :data:`MAX_QUERY_CHARS`."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError("query is empty: pass a question or an identifier to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(
            f"query is {len(query)} chars; the limit is {MAX_QUERY_CHARS}: keep the lines that matter"
        )


def check_subpath(path: object, root: str | os.PathLike[str] | None = None) -> str | None:
    """A path filter as a repository-relative folder or file, None for None
    or ``/`` (the whole repository). Written as a shell or a compiler writes
    it too: spaces and slashes around it trimmed, ``./`` and ``//`` inside
    it dropped (``./src//app`` is ``src/app``), and, when ``root`` is given,
    an absolute path inside it made relative (``/home/me/repo/src`` is
    ``src``; an absolute path elsewhere is refused, unless the repository
    holds it as written from its root: ``/src``). ``UsageError`` for
    anything that is not a plain string, holds a control character
    (``README.md\\r`` is not README.md), is empty (leave it out to mean the
    whole repository) or leaves the repository."""
    if path is None:
        return None
    if not isinstance(path, str) or "\x00" in path or len(path) > MAX_PATH_CHARS:
        raise UsageError("path must be a plain string")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise UsageError(f"path {path!r} holds a control character: pass the path alone")
    if not path.strip():
        raise UsageError(
            f"path {path!r} is empty: pass a folder or file, or leave it out for the whole repository"
        )
    given = path.strip()
    if root is not None and given.startswith("/"):
        given = _inside(given, root, path)
    parts = [part for part in given.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UsageError(f"path filter {path!r} must be a folder or file inside the repository")
    return "/".join(parts) or None


def _inside(given: str, root: str | os.PathLike[str], path: str) -> str:
    """An absolute ``given`` as a path from ``root`` when it lies inside it
    (as written, or with the root's links resolved); else as written, when
    the repository holds it from its root (``/src``); else ``UsageError``."""
    import posixpath

    wanted = posixpath.normpath(given)
    for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        if wanted == base or wanted.startswith(base.rstrip("/") + "/"):
            return wanted[len(base) :]
    if os.path.lexists(os.path.join(root, given.lstrip("/"))):
        return given
    raise UsageError(
        f"path {path!r} is outside the repository root {os.path.abspath(root)}: "
        "pass a path inside it, or relative to it"
    )


def _one_or_list(value: object) -> list[object]:
    """The items of a list argument that also takes one string alone; ``[None]``
    (no string) for any other value, which the caller's check refuses."""
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else [None]


def check_path_count(name: str, paths: Sequence[object]) -> None:
    """At most :data:`MAX_PATHS` ``paths`` (each checked where it is read)."""
    if len(paths) > MAX_PATHS:
        raise UsageError(
            f"{name}: at most {MAX_PATHS} files or folders, got {len(paths)}: a folder covers all under it"
        )


def check_globs(name: str, value: str | Sequence[str] | None) -> tuple[str, ...]:
    """Glob patterns (``include``/``exclude``): one string or a list of at
    most :data:`MAX_GLOBS`, each non-blank and at most :data:`MAX_GLOB_CHARS`
    long, stripped; () for None."""
    if value is None:
        return ()
    items = _one_or_list(value)
    if len(items) > MAX_GLOBS:
        raise UsageError(
            f"{name}: at most {MAX_GLOBS} patterns, got {len(items)}: one pattern with * or ** covers many"
        )
    if not all(
        isinstance(v, str) and v.strip() and len(v) <= MAX_GLOB_CHARS and "\x00" not in v for v in items
    ):
        raise UsageError(
            f"{name} must be glob patterns like 'src/**/*.py' (not blank, at most {MAX_GLOB_CHARS} chars)"
        )
    return tuple(v.strip() for v in items)


def check_keywords(value: object) -> tuple[str, ...]:
    """Exact strings a hit must contain (``keyword``): one string or a list
    of at most :data:`MAX_KEYWORDS`, each taken as given (case and spaces
    kept) but never blank; () for None."""
    if value is None:
        return ()
    items = _one_or_list(value)
    if not all(
        isinstance(v, str) and v.strip() and len(v) <= MAX_KEYWORD_CHARS and "\x00" not in v for v in items
    ):
        raise UsageError(
            f"keyword must be text every hit contains, such as 'raise ValueError' "
            f"(not blank, at most {MAX_KEYWORD_CHARS} chars)"
        )
    if len(items) > MAX_KEYWORDS:
        raise UsageError(f"keyword: at most {MAX_KEYWORDS} strings, got {len(items)}")
    return tuple(dict.fromkeys(items))  # type: ignore[arg-type]


def check_min_score(value: object) -> float | None:
    """The lowest score a shown hit may have (``min_score``): a number >= 0; None for None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise UsageError(f"min_score must be a number >= 0 (the score a hit shows), got {value!r}")
    return float(value)


def check_rerender(given: Mapping[str, object]) -> None:
    """A ``query_id`` re-renders a remembered search with its own question and
    filters: refuse any of those passed with it, rather than ignore them."""
    extra = [name for name, value in given.items() if value]
    if extra:
        named = ", ".join("{" + name + "}" for name in extra)
        raise UsageError(
            "a remembered search is shown with its own question and filters",
            fix=f"pass {{query_id}} alone (without {named}), or leave {{query_id}} out to search anew",
        )


def check_choice(what: str, value: object, choices: Set[str], aliases: Mapping[str, str]) -> str | None:
    """The canonical spelling of ``value`` (case and surrounding space ignored,
    an alias mapped to its name); None for None. Anything else is a
    ``UsageError`` listing the choices and the aliases: a filter that names
    nothing real must not answer "nothing found", and a blank one (``""``,
    an empty form field or a variable that expanded to nothing) must not
    quietly filter nothing either."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise UsageError(f"{what} must be a string")
    key = value.strip().lower()
    if key in choices:
        return key
    if key in aliases:
        return aliases[key]
    valid = f"use one of {', '.join(sorted(choices))} (or {', '.join(aliases)})"
    if not key:
        raise UsageError(f"{what} is empty: {valid}, or leave it out for every {what}")
    raise UsageError(f"unknown {what} {shown_value(value)}: {valid}")


def check_language(value: object) -> str | None:
    """A language filter: a name of :data:`repolens.chunking.languages.LANGUAGES` or an alias (``py``)."""
    from repolens.chunking.languages import LANGUAGE_ALIASES, LANGUAGES  # the tables: only when filtering

    return check_choice("language", value, LANGUAGES, LANGUAGE_ALIASES)


def check_kind(value: object) -> str | None:
    """A kind filter: a name of :data:`repolens.roles.KINDS` or an alias (``func``)."""
    from repolens.roles import KIND_ALIASES, KINDS

    return check_choice("kind", value, KINDS, KIND_ALIASES)


def folder_back(folder: Path) -> Path | None:
    """A configured root's folder, resolved, once it is there again (re-mounted,
    re-cloned); None while it is missing or cannot be searched (a folder on the
    way without permission, a loop of links). A stat: cheap enough to ask often."""
    try:
        return folder.resolve() if folder.is_dir() else None
    except (OSError, RuntimeError):
        return None
