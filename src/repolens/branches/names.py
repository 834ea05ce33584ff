"""``name@branch``: how a repository's branches are named, and which one a caller means.

Configured roots are keyed ``app@main``, ``app@develop`` (or plain ``app``
for a repository served with one checkout). A caller names one as

* ``app@develop``: exactly that root;
* ``app``: the registry's base branch of ``app`` when it is configured,
  else the only configured branch, else the only one with an index, else an
  error listing the choices.

A branch name may hold ``/`` (``release/2.1``) but no spaces or ``@``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from repolens.errors import NotFoundError

# The repository part is a plain name (it travels in arguments and URLs);
# the branch part is what git allows in practice, minus spaces and "@".
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
BRANCH_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._/+-]{0,99}"
REF_RE = re.compile(rf"^(?P<name>{NAME_PATTERN})(?:@(?P<branch>{BRANCH_PATTERN}))?$")
# Shown in errors, so the fix names the form.
REF_FORM = "NAME or NAME@BRANCH"


@dataclass(frozen=True, slots=True)
class Ref:
    """A repository and (optionally) one of its branches."""

    name: str
    branch: str = ""

    def __str__(self) -> str:
        return f"{self.name}@{self.branch}" if self.branch else self.name


def parse_ref(text: str) -> Ref | None:
    """``app@main`` -> Ref("app", "main"); ``app`` -> Ref("app"); None when not a ref."""
    m = REF_RE.match(text.strip())
    return Ref(m["name"], m["branch"] or "") if m else None


def branches_of(keys: Iterable[str]) -> dict[str, dict[str, str]]:
    """Configured root keys grouped by repository: name -> {branch: key}
    (a plain ``app`` key is the branch ``""``), in configuration order."""
    grouped: dict[str, dict[str, str]] = {}
    for key in keys:
        ref = parse_ref(key)
        if ref is not None:
            grouped.setdefault(ref.name, {})[ref.branch] = key
    return grouped


def resolve_key(
    text: str,
    roots: Mapping[str, Path],
    *,
    base_of: Callable[[str], str | None] = lambda name: None,
    indexed: Callable[[Path], bool] = lambda root: True,
) -> str | None:
    """The key of ``roots`` that ``text`` names (see the module docstring),
    or None when ``text`` is not a repository name at all (a local caller's
    path). ``base_of(name)`` is the registry's base branch; ``indexed(root)``
    whether a root has an index. Raises ``NotFoundError`` for an unknown
    ``name@branch`` and for a name whose branch cannot be chosen."""
    if text in roots:
        return text
    ref = parse_ref(text)
    if ref is None:
        return None
    grouped = branches_of(roots)
    branches = grouped.get(ref.name)
    if branches is None:
        if ref.branch:
            raise unknown(text, roots)
        return None
    if ref.branch:
        if ref.branch in branches:
            return branches[ref.branch]
        raise NotFoundError(
            f"repository {ref.name} has no branch {ref.branch!r} configured: "
            f"its branches are {', '.join(branches.values())}"
        )
    base = base_of(ref.name)
    if base and base in branches:
        return branches[base]
    if len(branches) == 1:
        return next(iter(branches.values()))
    with_index = [key for key in branches.values() if indexed(roots[key])]
    if len(with_index) == 1:
        return with_index[0]
    raise NotFoundError(
        f"repository {ref.name} has several branches: pass one of {', '.join(branches.values())}"
    )


def unknown(text: str, roots: Iterable[str]) -> NotFoundError:
    """The error for a repository name nobody configured, listing the known ones."""
    shown = repr(text) if len(text) <= 80 else repr(text[:80]) + "..."
    known = ", ".join(roots) or "(none)"
    return NotFoundError(f"unknown repository {shown}: known repositories are {known}")
