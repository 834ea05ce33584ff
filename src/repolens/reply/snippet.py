"""Bounded, path-safe reads: the follow-up every omission marker names.

``read_snippet`` only reads regular files inside the repository root. Every
path argument is checked before any file is touched: absolute paths outside
the root, ``..`` segments, percent-encoded (also double-encoded) traversal,
NUL bytes, and symlinks whose target leaves the root are all refused.
``strict=True`` (remote callers) also refuses absolute paths, backslashes and
control characters outright.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from repolens.budget import lines_cut_marker, long_line_marker, truncated_marker
from repolens.errors import PathError, UsageError
from repolens.lines import source_lines
from repolens.validate import MAX_BUDGET, MIN_BUDGET, check_budget

MAX_LINES = 300
MAX_PATH_CHARS = 4096


@dataclass(frozen=True, slots=True)
class Snippet:
    path: str
    start_line: int
    end_line: int
    total_lines: int
    lines: tuple[str, ...]
    cut: bool  # more lines were asked for than one call returns
    asked_end: int = 0  # the last line asked for that the file has (where a cut read continues to)

    def render(self, max_chars: int | None = None) -> str:
        """``path:start-end (of N lines)`` then ``N: text`` lines.

        With ``max_chars`` (200-1,000,000, else ``UsageError``) the text never
        exceeds it: lines that do not fit are replaced by a
        ``truncated_marker`` naming the read that continues (a first line
        longer than the budget is shown cut).
        """
        if max_chars is not None:
            check_budget(max_chars)
        if not self.lines:
            return _clip(f"{self.path}: empty range (file has {self.total_lines} lines)", max_chars)
        head = f"{self.path}:{self.start_line}-{self.end_line} (of {self.total_lines} lines)"
        tail = lines_cut_marker(self.path, self.end_line + 1, self.asked_end, MAX_LINES) if self.cut else ""
        out = [head]
        size = len(head)
        for i, line in enumerate(self.lines):
            n = self.start_line + i
            entry = f"{n}: {line}"
            if max_chars is not None:
                marker = truncated_marker(self.path, n, self.end_line, max_chars)
                # room after this line: for the cut marker after the last line, else for
                # a truncation marker in case the next line does not fit
                last = i + 1 == len(self.lines)
                after = (len(tail) + 1 if tail else 0) if last else 1 + len(marker) + 5
                if size + 1 + len(entry) + after > max_chars:
                    if i == 0:  # the read the marker names is this one: say what shows the line
                        whole = size + 1 + len(entry) + (len(tail) + 1 if tail and last else 0)
                        whole = max(whole, MIN_BUDGET)  # a budget the named read takes
                        marker = long_line_marker(self.path, n, len(line), whole, MAX_BUDGET)
                    room = max_chars - size - 2 - len(marker)
                    if i == 0 and room > len(f"{n}: ") + 10:
                        out.append(entry[:room])
                    out.append(marker)
                    return _clip("\n".join(out), max_chars)
            out.append(entry)
            size += 1 + len(entry)
        if tail:
            out.append(tail)
        return _clip("\n".join(out), max_chars)


def _clip(text: str, max_chars: int | None) -> str:
    return text if max_chars is None else text[:max_chars]


def _decoded_forms(path: str) -> list[str]:
    from urllib.parse import unquote  # (and ipaddress): only for a path that reaches here

    forms = [path]
    for _ in range(3):
        nxt = unquote(forms[-1])
        if nxt == forms[-1]:
            break
        forms.append(nxt)
    return forms


def _shown(path: str) -> str:
    """``path`` for an error message: quoted, and short even when the argument is huge."""
    return repr(path) if len(path) <= 200 else repr(path[:200]) + "..."


def _short(text: str) -> str:
    return text if len(text) <= 200 else text[:200] + "..."


def _check_strict(path: str) -> None:
    """Refusals for remote callers, on the text alone (before any file is touched)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise PathError(f"path {_shown(path)} contains a control character: pass a plain relative path")
    for form in _decoded_forms(path):
        if "\\" in form:
            raise PathError(f"path {_shown(path)} contains a backslash: use '/' between folders")
        if form.startswith("/") or (len(form) > 1 and form[1] == ":") or form.startswith("~"):
            raise PathError(f"path {_shown(path)} is absolute: pass a path relative to the repository root")


def safe_path(
    root: Path, path: str, *, strict: bool = False, allow_dir: bool = False, must_exist: bool = True
) -> tuple[Path, str]:
    """Resolve ``path`` inside ``root``; return (absolute path, root-relative POSIX path).

    Raises ``PathError`` with a one-line reason for anything that could
    reach outside the root, when the file does not exist (unless not
    ``must_exist``: a path filter, looked up in the index), and for paths
    over ``MAX_PATH_CHARS``. ``strict`` adds the refusals for remote callers
    (absolute paths, backslashes, control characters); ``allow_dir``
    accepts a folder (path filters) as well as a regular file.
    """
    if not isinstance(path, str) or not path.strip():
        raise PathError("path is empty: pass a path relative to the repository root")
    if len(path) > MAX_PATH_CHARS:
        raise PathError(f"path is {len(path)} chars; the limit is {MAX_PATH_CHARS}: pass a shorter path")
    if strict:
        _check_strict(path)
    root = root.resolve()
    for form in _decoded_forms(path):
        if "\x00" in form:
            raise PathError("path contains a NUL byte: pass a plain relative path")
        if ".." in form.replace("\\", "/").split("/"):
            raise PathError(f"path {_shown(path)} contains '..': pass a path inside the repository root")
        if form != path and (form.startswith(("/", "\\")) or (len(form) > 1 and form[1] == ":")):
            raise PathError(f"path {_shown(path)} decodes to an absolute path: pass a relative path")
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise PathError(f"path {_shown(path)} cannot be resolved ({exc}): pass a regular file") from exc
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        kind = (
            "resolves (through a symlink) to"
            if candidate.is_symlink() or _has_symlink(root, candidate)
            else "is"
        )
        raise PathError(f"path {_shown(path)} {kind} outside the repository root {root}: refused") from None
    try:
        exists, is_file, is_dir = resolved.exists(), resolved.is_file(), resolved.is_dir()
    except OSError as exc:  # a name too long for the file system, a permission error
        reason = exc.strerror or type(exc).__name__
        raise PathError(f"path {_shown(path)} cannot be read ({reason}): pass a file path") from None
    if not exists and not must_exist:
        return resolved, rel.as_posix()
    if not exists:
        raise PathError(
            f"no file {_short(rel.as_posix())} in {root}: check the path (it is relative to the root)"
        )
    if not (is_file or (allow_dir and is_dir)):
        what = "a regular file or folder" if allow_dir else "a regular file"
        raise PathError(f"{_short(rel.as_posix())} is not {what}: pass a file path")
    return resolved, rel.as_posix()


def _has_symlink(root: Path, candidate: Path) -> bool:
    try:
        parts = candidate.relative_to(root).parts
    except ValueError:
        return False
    p = root
    for part in parts:
        p = p / part
        if p.is_symlink():
            return True
    return False


def read_snippet(root: Path, path: str, start: int, end: int, *, max_lines: int = MAX_LINES) -> Snippet:
    """Lines ``start``..``end`` (1-based, inclusive) of a file under ``root``.

    At most ``max_lines`` lines per call (``cut`` says so); ``end`` past the
    end of the file is clamped.
    """
    if (
        isinstance(start, bool)
        or isinstance(end, bool)
        or not isinstance(start, int)
        or not isinstance(end, int)
    ):
        raise UsageError("start and end must be integers (1-based line numbers)")
    if start < 1:
        raise UsageError(f"start must be >= 1 (lines are 1-based), got {start}")
    if end < start:
        raise UsageError(f"end ({end}) must be >= start ({start})")
    from repolens.discover.load import BINARY_SNIFF_BYTES  # discovery's package: only for a read

    abs_path, rel = safe_path(root, path)
    try:
        with open(abs_path, "rb") as fh:
            data = fh.read()
    except OSError as exc:  # (a file this user may not read, a disk that fails)
        raise PathError(
            f"{rel} cannot be read ({exc.strerror or type(exc).__name__})",
            fix="check the file's permissions, or run repolens as a user who may read it",
        ) from None
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise PathError(f"{rel} is a binary file: read_snippet only reads text")
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = source_lines(text)  # numbered as the index numbers them (not str.splitlines)
    total = len(lines)
    last = min(end, total, start + max_lines - 1)
    cut = min(end, total) > last
    chosen = tuple(lines[start - 1 : last]) if start <= total else ()
    return Snippet(rel, start, last if chosen else start, total, chosen, cut, min(end, total))
