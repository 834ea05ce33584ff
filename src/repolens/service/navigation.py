"""The navigation use cases: who uses a definition, what it calls, what a change reaches.

``find_references`` and ``impact`` back ``repolens refs`` / ``repolens
impact`` and the MCP tools of the same names: each checks its arguments,
opens the index, finds the definition the caller named and asks
:mod:`repolens.search.references` (its walks:
:mod:`repolens.search.ref_walks`), then :mod:`repolens.reply.references`
writes the reply under ``max_chars``. A ``target`` is a definition's name
(``save``, ``Model.save``, ``models.Model``: the best match of
:func:`repolens.search.symbols.find_symbols`'s lookup whose qualifier is its own,
:meth:`~repolens.search.symbols.SymbolLookup.names`), or a place,
``path:line`` (the innermost definition holding that line; ``path:line:column``
as compilers print it reads the same); ``impact``
also takes ``path:start-end`` (the definitions those lines touch) and a
bare ``path`` (every definition of the file).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from repolens.budget import IMPACT_DEPTH, REFS_DEPTH, REFS_MAX_CHARS, counted
from repolens.errors import NotFoundError, UsageError
from repolens.fronts import say
from repolens.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.search.fanout import Target
    from repolens.store.base import IndexReader, SymbolRow

DIRECTIONS = ("callers", "callees")
MAX_DEPTH = 3
DEFAULT_DEPTH = REFS_DEPTH
DEFAULT_IMPACT_DEPTH = IMPACT_DEPTH
DEFAULT_MAX_CHARS = REFS_MAX_CHARS
# path:line, path:start-end, or a compiler's path:line:column, as replies and compilers name lines
# (`repolens read` reads them too; compiled at first use: a search needs none)
PLACE = r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+)|:\d+)?$"


class NavigationReply(Record):
    """What a navigation use case answers: the text, how many uses or
    definitions it found, and whether the target named a definition at all
    (one with no use is an answer: "0 references"; a place no definition
    holds is one too: "No definition at ..."). A name no definition matches
    is an error (:class:`_NoDefinition`)."""

    text: str
    found: int
    matched: bool = True

    def render(self) -> str:
        return self.text


class _NoDefinition(NotFoundError):
    """No definition matches the target's name in one index: the call's
    error, as an unknown chunk id is; over several repositories, only when
    none defines it (:func:`find_references_across`)."""


def _near_names_fix() -> str:
    """What the error of a name that matches nothing suggests."""
    return f"{say('symbols')} lists near names; pass one, or a place path:line, as {{target}}"


def _checked(
    direction: str | None, depth: int | None, max_chars: int | None, default_depth: int
) -> tuple[int, int]:
    from repolens.validate import check_budget, check_int, shown_value

    if direction is not None and direction not in DIRECTIONS:
        hint = f"; what a change reaches is {say('impact')}" if direction == "impact" else ""
        raise UsageError(
            f"direction must be callers or callees, not {shown_value(direction)} "
            f"(leave it out for every use){hint}"
        )
    depth = default_depth if depth is None else depth
    check_int("depth", depth, 1, MAX_DEPTH)
    max_chars = DEFAULT_MAX_CHARS if max_chars is None else max_chars
    check_budget(max_chars)
    return depth, max_chars


def _target(target: object) -> str:
    if not isinstance(target, str) or not target.strip():
        raise UsageError("name a definition (Store.save) or a place (path:line) as the target")
    if len(target) > 500:
        raise UsageError("the target is over 500 characters: name a definition or path:line")
    return target.strip()


def _as_indexed(reader: IndexReader, target: str, root: Path | None) -> str:
    """A place (``path:line``, or a path) with its path written as the index
    writes it: ``./`` and ``//`` dropped, an absolute path inside the
    repository from its root (compilers and test runners print them so); a
    definition's name unchanged."""
    from repolens.validate import check_subpath

    place = re.match(PLACE, target)
    path = place.group("path") if place else target
    if "/" not in path:
        return target
    try:
        clean = check_subpath(path, root if root is not None else reader.meta().get("root") or None)
    except UsageError:
        return target  # as given: the lookup says what it does not find
    if not clean or clean == path:
        return target
    return f"{clean}{target[len(path) :]}" if place else clean


class _Found:
    """The definitions a target names in one index, the files whose top
    level it names (``impact`` only), or why a place holds none (a name
    that matches none raises :class:`_NoDefinition`)."""

    def __init__(
        self,
        definitions: list[SymbolRow],
        others: list[SymbolRow],
        missing: str = "",
        modules: Sequence[str] = (),
    ) -> None:
        self.definitions = definitions
        self.others = others
        self.missing = missing
        self.modules = list(modules)


def _find(
    reader: IndexReader,
    target: str,
    *,
    ranges: bool,
    root: Path | None = None,
    label: Callable[[str], str] = str,
) -> _Found:
    from repolens.search import references as refs
    from repolens.search.ref_keys import defined

    target = _as_indexed(reader, target, root)
    place = re.match(PLACE, target)
    path = place.group("path") if place else target if ranges and reader.has_path(target) else None
    if path is not None and (record := reader.files([path]).get(path)) is not None:
        if place is None:
            rows = [s for s in reader.symbols_of_file(path) if s.kind != "section"]
            modules = [path] if refs.top_level_uses(reader, path) else []
            return _Found(rows, [], "" if rows or modules else f"No definition in {path}.", modules)
        start = int(place.group("start"))
        end = int(place.group("end") or start)
        start, end = min(start, end), max(start, end)
        if start < 1 or start > record.lines:  # a place that cannot be one: said, not "no definition"
            raise UsageError(
                f"{path} has {counted(record.lines, 'line')} as indexed: line {start} is not one of them; "
                "pass a line of the file (from 1)"
            )
        modules = []
        if ranges:
            found = refs.definitions_in(reader, path, start, end)
            modules = [path] if refs.top_level_uses(reader, path, start, end) else []
        else:
            one = refs.definition_at(reader, path, start)
            found = [one] if one is not None else []
        where = f"{path}:{place.group('start')}" + (f"-{place.group('end')}" if place.group("end") else "")
        what = "No definition or top-level use" if ranges else "No definition"
        return _Found(found, [], "" if found or modules else f"{what} at {where}.", modules)
    # a place (path:line) names a file, and so does a path given to impact (a
    # name holds no "/"): one the index does not hold is said, not looked up as a name
    named = place.group("path") if place else target if ranges and "/" in target else None
    if named is not None and (place is not None or not reader.has_path(named)):
        from repolens.search.filters import no_indexed_file

        raise no_indexed_file(reader, named, "target")
    from repolens.search.symbols import SymbolLookup

    lookup = SymbolLookup.parse(target)
    ranked, _ = lookup.ranked(reader)
    best_tiers = {"exact", "case-insensitive", "separator-insensitive", "qualified", "qualified-partial"}
    matches = [m for m, _ in ranked if m.tier in best_tiers and lookup.names(m)]
    if not matches:
        near = [
            f"{s.qualname or s.name} ({s.kind}, {label(s.path)}:{s.start_line})"
            for s in lookup.suggestions(reader)
        ]
        if not near:
            raise _NoDefinition(f"no definition matches {target!r}", fix=_near_names_fix())
        named = ", ".join(near[:-1]) + f" or {near[-1]}" if len(near) > 1 else near[0]
        raise _NoDefinition(f"no definition matches {target!r}; did you mean {named}?")
    matches = [m for m in matches if m.tier == matches[0].tier]
    rows: list[SymbolRow] = []
    for m in matches[:10]:
        rows.extend(s for s in defined(reader, m.qualname, m.path) if s.start_line == m.start_line)
    if not rows:
        raise _NoDefinition(f"no definition matches {target!r}", fix=_near_names_fix())
    return _Found(rows[:1], rows[1:])


def _stale(
    root: Path | None,
    reader: IndexReader,
    cited: Sequence[str],
    label: Callable[[str], str],
    notes: Sequence[str],
) -> list[str]:
    """``notes`` and, when some of the ``cited`` files changed since they were
    indexed, the note saying so: the lines a reply cites are the index's."""
    from repolens.search.staleness import changed_files, stale_note

    changed = changed_files(root, reader, cited) if root is not None else []
    return [*notes, stale_note(changed, label)] if changed else list(notes)


def _references_text(
    reader: IndexReader,
    target: str,
    direction: str | None,
    depth: int,
    max_chars: int,
    label: Callable[[str], str] = str,
    notes: Sequence[str] = (),
    root: Path | None = None,
    repo: str | None = None,
) -> NavigationReply:
    from repolens.reply import references as reply
    from repolens.search import ref_walks as walks
    from repolens.search import references as refs

    found = _find(reader, target, ranges=False, root=root, label=label)
    if not found.definitions:
        return NavigationReply(found.missing[:max_chars], 0, matched=False)
    d = found.definitions[0]
    text = reply.line_reader(reader)
    if direction is None:
        res = refs.references(reader, d)
        cited = [d.path, *(r.path for r in res.resolved), *(r.path for r in res.name_matches)]
        out = reply.render_references(
            d,
            res.resolved,
            res.name_matches,
            text,
            max_chars,
            others=found.others,
            label=label,
            notes=_stale(root, reader, cited, label, notes),
        )
        return NavigationReply(out, len(res.resolved) + len(res.name_matches))
    walk = walks.callers if direction == "callers" else walks.callees
    steps = walk(reader, d, depth)
    notes = _stale(root, reader, [d.path, *(s.path for s in steps)], label, notes)
    title = f"{direction} of {reply.describe(d, label)}, depth {depth}"
    rows = [(s.depth, s.path, s.definition, s.via, s.resolved) for s in steps]
    arrow = "<-" if direction == "callers" else "->"
    return NavigationReply(
        reply.render_walk(title, rows, text, max_chars, label=label, arrow=arrow, notes=notes), len(steps)
    )


def _impact_text(
    reader: IndexReader,
    target: str,
    depth: int,
    max_chars: int,
    label: Callable[[str], str] = str,
    notes: Sequence[str] = (),
    root: Path | None = None,
    repo: str | None = None,
) -> NavigationReply:
    from repolens.reply import references as reply
    from repolens.search import ref_walks as walks

    found = _find(reader, target, ranges=True, root=root, label=label)
    if not found.definitions and not found.modules:
        return NavigationReply(found.missing[:max_chars], 0, matched=False)
    result = walks.impact(reader, found.definitions, depth, found.modules)
    cited = [*found.modules, *(d.path for d in found.definitions), *(s.path for s in result.steps)]
    notes = _stale(root, reader, cited, label, notes)
    names = ["top level"] * len(found.modules) + [d.qualname for d in found.definitions]
    named = ", ".join(names[:3])
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    path = found.modules[0] if found.modules else found.definitions[0].path
    title = f"impact of {label(path)} ({named}{more}), depth {depth}"
    steps = [(s.depth, s.path, s.definition, s.via, s.uses) for s in result.steps]
    languages = {s.path: s.via.language for s in result.steps}
    text = reply.render_impact(
        title, steps, languages, result.name_matches, max_chars, label=label, notes=notes, repo=repo
    )
    return NavigationReply(text, len(result.steps))


def find_references(
    target: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    direction: str | None = None,
    depth: int | None = None,
    max_chars: int | None = None,
) -> NavigationReply:
    """The uses of the definition ``target`` names (see the module
    docstring), grouped by file, resolved ones first; with ``direction``
    ``callers`` or ``callees``, the definitions its calls reach up to
    ``depth`` (1-3) steps. ``UsageError`` for a bad argument,
    ``PathError`` for a ``path:line`` the index does not hold."""
    from repolens.index.ensure import published_reader
    from repolens.store import open_store

    target = _target(target)
    depth, max_chars = _checked(direction, depth, max_chars, DEFAULT_DEPTH)
    store = open_store(root, index_dir)
    reader, _ = published_reader(store, None, True, None)
    return _references_text(reader, target, direction, depth, max_chars, root=store.root)


def impact(
    target: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    depth: int | None = None,
    max_chars: int | None = None,
) -> NavigationReply:
    """What reaches the definitions ``target`` names (a definition,
    ``path``, ``path:line`` or ``path:start-end``) through resolved uses of
    any kind, up to ``depth`` (1-3, default 2) steps: the definitions by
    depth, then the tests apart with the ``run_tests`` call for each."""
    from repolens.index.ensure import published_reader
    from repolens.store import open_store

    target = _target(target)
    depth, max_chars = _checked(None, depth, max_chars, DEFAULT_IMPACT_DEPTH)
    store = open_store(root, index_dir)
    reader, _ = published_reader(store, None, True, None)
    return _impact_text(reader, target, depth, max_chars, root=store.root)


def find_references_across(
    target: str,
    targets: Sequence[Target],
    *,
    impact_of: bool = False,
    direction: str | None = None,
    depth: int | None = None,
    max_chars: int | None = None,
) -> NavigationReply:
    """:func:`find_references` (or :func:`impact`) in every repository of
    ``targets``: one section per repository that finds the target, each
    path named ``key:path``, the budget shared among them; a repository
    that cannot answer is named in a note. ``NotFoundError`` when no
    repository defines the name, or none can answer."""
    from repolens.search.fanout import ask_each, failed_notes, label, none_answered
    from repolens.service.stores import open_index

    target = _target(target)
    default = DEFAULT_IMPACT_DEPTH if impact_of else DEFAULT_DEPTH
    depth, max_chars = _checked(direction, depth, max_chars, default)
    if not targets:
        raise UsageError("name at least one repository")

    share = max(max_chars // len(targets), 200)
    misses: dict[str, _NoDefinition] = {}  # a repository that does not define the name: why

    def ask(t: Target) -> NavigationReply | None:
        reader, _ = open_index(t.root, t.index_dir, auto_index=False)

        def named(path: str) -> str:
            return label(t.key, path)

        try:
            if impact_of:
                return _impact_text(reader, target, depth, share, named, root=Path(t.root), repo=t.key)
            return _references_text(reader, target, direction, depth, share, named, root=Path(t.root))
        except _NoDefinition as exc:
            misses[t.key] = exc
            return None

    from repolens.budget import cut_to_budget

    answers = ask_each(targets, ask)
    found = [a.value for a in answers if a.value is not None and a.value.matched]
    failed = failed_notes(answers)
    notes = [f"note: {n}" for n in failed]
    if not found:
        empty = next((a.value.text for a in answers if a.value is not None), None)
        if empty is not None:  # a place no definition holds: an answer
            return NavigationReply(cut_to_budget("\n".join([*notes, empty]), max_chars), 0, matched=False)
        miss = next((misses[t.key] for t in targets if t.key in misses), None)
        if miss is None:
            raise none_answered(answers)
        raise _NoDefinition("; ".join([miss.problem, *failed]), fix=miss.fix)
    text = "\n\n".join([*notes, *(f.text for f in found)])
    return NavigationReply(cut_to_budget(text, max_chars), sum(f.found for f in found))
