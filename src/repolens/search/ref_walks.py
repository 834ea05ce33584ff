"""Walks over references: callers, callees, and what a change reaches.

:func:`callers` and :func:`callees` walk calls up to a depth (the tools'
``depth``, at most 3); :func:`impact` walks every kind of use (calls, imports,
subclasses) from the definitions a range of lines holds, and from a
module's top level to the files importing it. Each step is one question of
:mod:`repolens.search.references` (a definition's uses, a module's
importers, what one use means), so a walk is a bounded number of store
reads, by name.
"""

from __future__ import annotations

from collections.abc import Sequence

from repolens.chunking.refs import IN_NAMESPACES, qualname_forms
from repolens.record import Record
from repolens.search.reexports import through_reexport
from repolens.search.ref_fixtures import Fixtures
from repolens.search.ref_keys import (
    ALIAS_ROUNDS,
    defined,
    family,
    other_names,
    qualname_key,
    spells,
    symbol_keys,
)
from repolens.search.ref_namespaces import namespace_targets
from repolens.search.references import FAN_OUT, importers, references
from repolens.store.base import IndexReader, RefRow, SymbolRow

CALL_KINDS = frozenset({"call", "decorator"})


def user_of(reader: IndexReader, row: RefRow) -> SymbolRow | None:
    """The definition a use sits in (None at a module's top level)."""
    if not row.scope:
        return None
    found = defined(reader, row.scope, row.path)
    return min(found, key=lambda s: abs(s.start_line - row.line), default=None)


class Step(Record):
    """One definition reached by a walk: how far, through which use, and
    whether every use on the way was resolved."""

    definition: SymbolRow | None  # None: a module's top level (``path`` holds it)
    path: str
    depth: int
    via: RefRow
    resolved: bool
    uses: int = 1  # the uses through which it reaches (impact counts them; other walks keep the first)


def callers(reader: IndexReader, definition: SymbolRow, depth: int = 1) -> list[Step]:
    """The definitions whose calls reach ``definition``, nearest first, up
    to ``depth`` calls away (resolved calls are followed; name matches are
    listed at the first step only)."""
    return _walk_up(reader, definition, depth, CALL_KINDS, with_matches=True)


def _walk_up(
    reader: IndexReader, start: SymbolRow, depth: int, kinds: frozenset[str] | None, *, with_matches: bool
) -> list[Step]:
    out: list[Step] = []
    seen = {(start.path, start.qualname)}
    frontier = [start]
    for level in range(1, depth + 1):
        nxt: list[SymbolRow] = []
        for target in frontier[:FAN_OUT]:
            found = references(reader, target)
            uses = [(r, True) for r in found.resolved]
            if with_matches and level == 1:
                uses += [(r, False) for r in found.name_matches]
            for row, sure in uses:
                if kinds is not None and row.kind not in kinds:
                    continue
                user = user_of(reader, row)
                key = (row.path, user.qualname if user is not None else "")
                if key in seen:
                    continue
                seen.add(key)
                out.append(Step(user, row.path, level, row, sure))
                if sure and user is not None:
                    nxt.append(user)
        frontier = nxt
        if not frontier:
            break
    return out


def callees(reader: IndexReader, definition: SymbolRow, depth: int = 1) -> list[Step]:
    """The definitions ``definition`` calls, in the order of its calls, up to
    ``depth`` calls away; a call whose target is not known is listed once
    per definition of its name (a name match), not followed."""
    out: list[Step] = []
    seen = {(definition.path, definition.qualname)}
    frontier = [definition]
    for level in range(1, depth + 1):
        nxt: list[SymbolRow] = []
        for caller in frontier[:FAN_OUT]:
            rows = reader.refs_of_files([caller.path]).get(caller.path, [])
            for row in rows:
                if row.kind not in CALL_KINDS or not caller.start_line <= row.line <= caller.end_line:
                    continue
                targets, sure = resolve_use(reader, row)
                for target in targets[:FAN_OUT]:
                    key = (target.path, target.qualname)
                    if key in seen:
                        continue
                    seen.add(key)
                    out.append(Step(target, target.path, level, row, sure))
                    if sure:
                        nxt.append(target)
        frontier = nxt
        if not frontier:
            break
    return out


def resolve_use(reader: IndexReader, row: RefRow, rounds: int = ALIAS_ROUNDS) -> tuple[list[SymbolRow], bool]:
    """The definitions a use means, and whether it was resolved (else: every
    definition of its name in its language's family, a name match). A use
    through a module re-exporting a definition under another name is looked
    up by the name that module binds it from (:func:`through_reexport`, at
    most ``rounds`` modules deep): no definition has the name it is called by."""
    from repolens.store.base import NameMatch, SymbolFilters, normalize_symbol

    candidates = [
        s
        for s in reader.symbols(NameMatch(names=(normalize_symbol(row.name),)), SymbolFilters(), 500)
        if s.name == row.name and s.language in family(row.language)
    ]
    if row.target.startswith("@"):  # a fixture, or a member of what one gives
        found = Fixtures(reader).resolve([row])
        if not found:
            return [], False
        row = found[0]
    t = row.target
    if not t:
        return candidates, False
    if t[0] == "=":
        want = t[1:]  # (a qualified name as keys spell it, or another its language gives it)
        found = [
            s
            for s in candidates
            if s.path == row.path
            and (
                want in qualname_forms(s.qualname, s.language)
                or any(want == qualname_key(n) for n in other_names(reader, s, own_file=True))
            )
        ]
        return (found, True) if found else ([], False)
    if t[0] == IN_NAMESPACES:  # C#'s ?Invoice.Total: Invoice of a namespace in scope
        targets = namespace_targets(reader, row)
        found = [s for s in candidates if any(spells(c, symbol_keys(reader, s)) for c in targets)]
        return (found, True) if found else (candidates, False)
    if t[0] != "^":  # (super().save(): its class's bases say which; the references do, below)
        direct = [s for s in candidates if spells(t, symbol_keys(reader, s))]
        if direct:
            return direct, True
        bound = through_reexport(reader, row) if rounds else None
        if bound is not None:
            found, sure = resolve_use(reader, bound, rounds - 1)
            if found:
                return found, sure
    # Through re-exports, or a base class: a candidate whose uses include this one.
    for s in candidates[:20]:
        if any(r.path == row.path and r.line == row.line for r in references(reader, s).resolved):
            return [s], True
    return [], False


class Impact(Record):
    """What reaches the definitions of a range of lines (see :func:`impact`)."""

    definitions: list[SymbolRow]
    steps: list[Step]
    name_matches: int


# Uses that only bind a name: a module whose top level imports a definition
# is not changed by a change to it (its uses of it are steps of their own).
_BINDING_KINDS = frozenset({"import", "export"})


def impact(
    reader: IndexReader, definitions: Sequence[SymbolRow], depth: int = 2, modules: Sequence[str] = ()
) -> Impact:
    """The definitions and files that reach ``definitions``, and the top
    level of the files ``modules`` (changed lines outside every
    definition), through resolved uses of any kind (calls, imports,
    subclasses, type uses), up to ``depth`` steps. A module's top level is
    reached by its importers (:func:`importers`), and a use at a file's top
    level that is not an import (``register(f)``) changes that file's top
    level in turn. Each definition or file is listed once, at the nearest
    depth, with the number of uses reaching it there; name matches are
    counted, not followed."""
    out: dict[tuple[str, str], Step] = {}
    start = {(d.path, d.qualname) for d in definitions} | {(m, "") for m in modules}
    changed = set(modules)  # the files whose top level is followed
    frontier: list[SymbolRow | str] = [*modules, *definitions]
    matches = 0
    for level in range(1, depth + 1):
        nxt: list[SymbolRow | str] = []
        for node in frontier[:FAN_OUT]:
            if isinstance(node, str):
                rows, of_module = importers(reader, node), True
            else:
                found = references(reader, node)
                if level == 1:
                    matches += len(found.name_matches)
                rows, of_module = found.resolved, False
            for row in rows:
                user = user_of(reader, row)
                key = (row.path, user.qualname if user is not None else "")
                if key in start:
                    continue
                step = out.get(key)
                if step is None:
                    out[key] = Step(user, row.path, level, row, True)
                    if user is not None:
                        nxt.append(user)
                elif step.depth == level:  # one more use, counted where it was first reached
                    out[key] = step._replace(uses=step.uses + 1)
                else:
                    continue
                if user is None and row.path not in changed and (of_module or row.kind not in _BINDING_KINDS):
                    changed.add(row.path)
                    nxt.append(row.path)
        frontier = nxt
        if not frontier:
            break
    return Impact(list(definitions), list(out.values()), matches)
