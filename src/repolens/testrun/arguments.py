"""The safe-argument grammar: which arguments each runner accepts, and the argv they become.

This is the safety boundary of a test run: nothing goes through a shell, and
``build_command`` is the only way an argv is made. An argument outside the
grammar (test paths inside the root, or one filter) is refused with
``RunArgumentError`` before any process starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from repolens.errors import RunArgumentError
from repolens.testrun.limits import show
from repolens.testrun.runners import SPECS, Runner, Spec
from repolens.validate import resolve_root

MAX_ARGS = 32
MAX_ARG_CHARS = 200

# Conservative characters for a path: no spaces, quotes, globs, `$`, `;`, `~`.
_PATH_CHARS = re.compile(r"[A-Za-z0-9_./-]+")
_NODE_ID = re.compile(r"[A-Za-z0-9_]+")
_FILTER_CHARS: dict[str, tuple[re.Pattern[str], str]] = {
    "pytest": (
        re.compile(r"[A-Za-z0-9_ .()\[\]-]+"),
        "letters, digits, spaces and _ . - ( ) [ ] (with and, or, not)",
    ),
    "go": (
        re.compile(r"[A-Za-z0-9_^$|.*+?()\[\]/-]+"),
        "a regular expression of letters, digits, _ ^ $ | . * + ? ( ) [ ] / -",
    ),
    "cargo": (re.compile(r"[A-Za-z0-9_:]+"), "a test name of letters, digits, _ and ::"),
    "mvn": (re.compile(r"[A-Za-z0-9_.#*,+$-]+"), "Class, Class#method, * wildcards, lists joined by ,"),
    "gradle": (re.compile(r"[A-Za-z0-9_.*$]+"), "a class or method pattern of letters, digits, _ . * $"),
}
_CONTROL_OR_NON_ASCII = re.compile(r"[^\x20-\x7e]")


def build_command(root: str | os.PathLike[str], runner: Runner, args: Sequence[str]) -> tuple[str, ...]:
    """The full argv for ``runner`` with ``args``, validated; nothing is run.

    ``args`` are test paths (relative, inside ``root``, no ``..``, no leading
    ``-``, characters ``A-Za-z0-9_./-``; pytest also ``path::name``; go
    package directories, optionally ending in ``/...``; cargo one test name)
    and at most one filter: ``-k EXPR`` for every runner with a filter, or the
    runner's own spelling (``-run``, ``-Dtest=``, ``--tests``). Raises
    ``RunArgumentError`` (a ``UsageError``) naming what is allowed.
    """
    root_path = resolve_root(root)
    spec = SPECS[runner.name]
    if isinstance(args, str) or not isinstance(args, Sequence):
        raise RunArgumentError(f"arguments must be a list of strings: {_allowed(spec)}")
    if len(args) > MAX_ARGS:
        raise RunArgumentError(f"too many arguments ({len(args)}, at most {MAX_ARGS}): {_allowed(spec)}")
    positionals: list[str] = []
    filter_expr: str | None = None
    i = 0
    while i < len(args):
        arg = _check_text(args[i], spec)
        flag, value, used = _split_filter_flag(spec, args, i)
        if flag is not None:
            if filter_expr is not None:
                raise RunArgumentError(
                    f"only one test filter is allowed, got a second {flag!r}: {_allowed(spec)}"
                )
            filter_expr = _check_filter(spec, _check_text(value, spec) if value is not None else None, flag)
            i += used
            continue
        if arg.startswith("-"):
            raise RunArgumentError(f"option {show(arg)} is not allowed: {_allowed(spec)}")
        positionals.append(_check_positional(spec, arg, root_path))
        i += 1
    if spec.paths == "name" and len(positionals) + (filter_expr is not None) > 1:
        raise RunArgumentError(f"cargo takes one test name filter, got several: {_allowed(spec)}")
    return (*runner.command, *_assemble(spec, positionals, filter_expr))


def _assemble(spec: Spec, positionals: list[str], filter_expr: str | None) -> list[str]:
    if spec.name == "pytest":
        return [*positionals, *(["-k", filter_expr] if filter_expr is not None else [])]
    if spec.name == "npm":
        return ["--", *positionals] if positionals else []
    if spec.name in ("pnpm", "yarn"):
        return positionals
    if spec.name == "go":
        run = ["-run", filter_expr] if filter_expr is not None else []
        return [*run, *(positionals or ["./..."])]
    if spec.name == "cargo":
        return [filter_expr] if filter_expr is not None else positionals
    if spec.name == "mvn":
        return [f"-Dtest={filter_expr}"] if filter_expr is not None else []
    if spec.name == "gradle":
        return ["--tests", filter_expr] if filter_expr is not None else []
    raise AssertionError(spec.name)  # every spec is handled above


def _split_filter_flag(spec: Spec, args: Sequence[str], i: int) -> tuple[str | None, str | None, int]:
    """(flag, value, arguments consumed) when ``args[i]`` is a filter flag, else (None, None, 0)."""
    arg = args[i]
    for flag in spec.filter_flags:
        if flag.endswith("="):
            if arg.startswith(flag):
                return flag, arg[len(flag) :], 1
        elif arg == flag:
            return flag, (args[i + 1] if i + 1 < len(args) else None), 2
    return None, None, 0


def _check_text(arg: object, spec: Spec) -> str:
    if not isinstance(arg, str):
        raise RunArgumentError(f"argument {show(arg)} is not a string: {_allowed(spec)}")
    if not arg:
        raise RunArgumentError(f"empty argument: {_allowed(spec)}")
    if len(arg) > MAX_ARG_CHARS:
        raise RunArgumentError(
            f"argument {show(arg)} is longer than {MAX_ARG_CHARS} characters: {_allowed(spec)}"
        )
    if _CONTROL_OR_NON_ASCII.search(arg):
        raise RunArgumentError(
            f"argument {show(arg)} contains a control or non-ASCII character: {_allowed(spec)}"
        )
    return arg


def _check_filter(spec: Spec, expr: str | None, flag: str) -> str:
    if expr is None:
        raise RunArgumentError(f"{flag} needs a value: {_allowed(spec)}")
    chars, what = _FILTER_CHARS[spec.name]
    if expr.startswith("-") or not chars.fullmatch(expr) or not expr.strip():
        raise RunArgumentError(f"{flag} {show(expr)} is not allowed: {spec.name} filters are {what}")
    return expr


def _check_positional(spec: Spec, arg: str, root: Path) -> str:
    if spec.paths == "none":
        raise RunArgumentError(f"{spec.name} takes no test paths, got {show(arg)}: {_allowed(spec)}")
    if spec.paths == "name":
        return _check_filter(spec, arg, "test name")
    path, _, node = arg.partition("::") if spec.paths == "pytest" else (arg, "", "")
    if node and not all(_NODE_ID.fullmatch(part) for part in node.split("::")):
        raise RunArgumentError(f"test id {show(arg)} is not allowed: {_allowed(spec)}")
    if path.startswith("/"):
        raise RunArgumentError(f"{show(arg)} is an absolute path: pass a path relative to the root")
    if not _PATH_CHARS.fullmatch(path):
        raise RunArgumentError(f"argument {show(arg)} is not allowed: {_allowed(spec)}")
    parts = path.split("/")
    if ".." in parts:
        raise RunArgumentError(f"{show(arg)} leaves the root: pass a path inside it, without '..'")
    if spec.paths == "go":
        if "..." in parts[:-1]:
            raise RunArgumentError(f"{show(arg)}: '...' may only end a package path, as in pkg/...")
        directory = "/".join(parts[:-1]) if parts[-1] == "..." else path
        _check_inside(arg, root, directory or ".", must_exist=True)
        return path if path.startswith("./") or path == "." else f"./{path}"
    _check_inside(arg, root, path, must_exist=spec.paths == "pytest")
    return arg


def _check_inside(arg: str, root: Path, path: str, *, must_exist: bool) -> None:
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise RunArgumentError(f"{show(arg)} resolves outside the root: pass a path inside it")
    if must_exist and not target.exists():
        raise RunArgumentError(f"test path {show(arg)} does not exist under {root}: pass an existing path")


def _allowed(spec: Spec) -> str:
    if spec.paths == "name":
        return (
            f"{spec.name} accepts one test name filter, as NAME or -k NAME; no other options, no shell syntax"
        )
    what = {
        "pytest": "test paths inside the root (letters, digits, _ . - /, optionally ::test_name)",
        "go": "package directories inside the root (optionally ending in /...)",
        "pattern": "test paths or patterns inside the root (letters, digits, _ . - /)",
        "none": "",
    }[spec.paths]
    flags = " or ".join(f"{f}FILTER" if f.endswith("=") else f"{f} FILTER" for f in spec.filter_flags)
    parts = [p for p in (what, f"one filter {flags}" if flags else "") if p]
    accepts = " and ".join(parts) if parts else "no arguments"
    return f"{spec.name} accepts {accepts}; no other options, no shell syntax"
