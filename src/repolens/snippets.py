"""Bounded, path-safe reads: the follow-up every omission marker names.

``read_snippet`` only reads regular files inside the repository root. Every
path argument is checked before any file is touched: absolute paths outside
the root, ``..`` segments, percent-encoded (also double-encoded) traversal,
NUL bytes, and symlinks whose target leaves the root are all refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from repolens.errors import PathError, UsageError

MAX_LINES = 300
_BINARY_SNIFF = 8192


@dataclass(frozen=True, slots=True)
class Snippet:
    path: str
    start_line: int
    end_line: int
    total_lines: int
    lines: tuple[str, ...]
    cut: bool  # more lines were asked for than one call returns

    def render(self) -> str:
        if not self.lines:
            return f"{self.path}: empty range (file has {self.total_lines} lines)"
        head = f"{self.path}:{self.start_line}-{self.end_line} (of {self.total_lines} lines)"
        body = [f"{self.start_line + i}: {line}" for i, line in enumerate(self.lines)]
        out = [head, *body]
        if self.cut:
            out.append(
                f"... (cut at {MAX_LINES} lines; use read_snippet {self.path} {self.end_line + 1} "
                f"<end> to continue)"
            )
        return "\n".join(out)


def _decoded_forms(path: str) -> list[str]:
    forms = [path]
    for _ in range(3):
        nxt = unquote(forms[-1])
        if nxt == forms[-1]:
            break
        forms.append(nxt)
    return forms


def safe_path(root: Path, path: str) -> tuple[Path, str]:
    """Resolve ``path`` inside ``root``; return (absolute path, root-relative POSIX path).

    Raises ``PathError`` with a one-line reason for anything that could
    reach outside the root, and when the file does not exist.
    """
    if not isinstance(path, str) or not path.strip():
        raise PathError("path is empty: pass a path relative to the repository root")
    root = root.resolve()
    for form in _decoded_forms(path):
        if "\x00" in form:
            raise PathError("path contains a NUL byte: pass a plain relative path")
        if ".." in form.replace("\\", "/").split("/"):
            raise PathError(f"path {path!r} contains '..': pass a path inside the repository root")
        if form != path and (form.startswith(("/", "\\")) or (len(form) > 1 and form[1] == ":")):
            raise PathError(f"path {path!r} decodes to an absolute path: pass a relative path")
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops
        raise PathError(f"path {path!r} cannot be resolved ({exc}): pass a regular file") from exc
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        kind = (
            "resolves (through a symlink) to"
            if candidate.is_symlink() or _has_symlink(root, candidate)
            else "is"
        )
        raise PathError(f"path {path!r} {kind} outside the repository root {root}: refused") from None
    if not resolved.exists():
        raise PathError(f"no file {rel.as_posix()} in {root}: check the path (it is relative to the root)")
    if not resolved.is_file():
        raise PathError(f"{rel.as_posix()} is not a regular file: pass a file path")
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
    abs_path, rel = safe_path(root, path)
    with open(abs_path, "rb") as fh:
        data = fh.read()
    if b"\x00" in data[:_BINARY_SNIFF]:
        raise PathError(f"{rel} is a binary file: read_snippet only reads text")
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.splitlines()
    total = len(lines)
    last = min(end, total, start + max_lines - 1)
    cut = min(end, total) > last
    chosen = tuple(lines[start - 1 : last]) if start <= total else ()
    return Snippet(rel, start, last if chosen else start, total, chosen, cut)


def relative_to_root(root: Path, path: str) -> str:
    """Normalise a user path to the root-relative POSIX form used in the index."""
    return safe_path(root, path)[1]
