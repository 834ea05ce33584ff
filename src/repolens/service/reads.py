"""Use cases that read one index, or several: symbols, focus, chunks,
snippets, the history (see :mod:`repolens.service`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from repolens.budget import (
    CHUNK_MAX_CHARS,
    FOCUS_BLOCKS_PER_FILE,
    FOCUS_MAX_BLOCKS,
    FOCUS_MAX_CHARS,
    FOCUS_MAX_FILES,
    HISTORY_MAX_CHARS,
    HISTORY_TOP_K,
    SYMBOLS_LIMIT,
    SYMBOLS_MAX_CHARS,
)
from repolens.errors import UsageError
from repolens.service.stores import open_index
from repolens.validate import MIN_BUDGET, resolve_root

# Each use case imports its own stack when it runs: a new process (``repolens
# read`` from a shell) must not pay for the search, reply and store modules
# another use case needs (``tests/test_cli_imports.py``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.reply.focus import FocusResult
    from repolens.reply.history import HistoryEntry, HistoryReply
    from repolens.reply.snippet import Snippet
    from repolens.reply.stored import ChunkView
    from repolens.search.fanout import Target
    from repolens.search.symbols import SymbolMatches


def find_symbol(
    name: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    kind: str | None = None,
    path: str | None = None,
    language: str | None = None,
    limit: int | None = None,
    max_chars: int | None = None,
) -> SymbolMatches:
    """Where ``name`` is defined (see :mod:`repolens.search.symbols`): at
    most ``limit`` definitions (None: :data:`~repolens.budget.SYMBOLS_LIMIT`)
    within ``max_chars`` (None: :data:`~repolens.budget.SYMBOLS_MAX_CHARS`)."""
    from repolens.index.ensure import published_reader
    from repolens.search.staleness import changed_files, stale_note
    from repolens.search.symbols import find_symbols
    from repolens.store import open_store

    store = open_store(root, index_dir)
    reader, _ = published_reader(store, None, True, None)
    limit, max_chars = _or(limit, SYMBOLS_LIMIT), _or(max_chars, SYMBOLS_MAX_CHARS)
    if path is not None and path.strip().startswith("/"):  # an absolute path inside the root: from it
        from repolens.validate import check_subpath

        path = check_subpath(path, store.root) or "/"
    found = find_symbols(
        reader, name, kind=kind, path=path, language=language, limit=limit, max_chars=max_chars
    )
    changed = changed_files(store.root, reader, [m.path for m in found.matches])
    # The lines are the index's: say which files moved since, as the budget allows.
    notes = (f"note: {stale_note(changed)}", "note: cited files changed since indexing") if changed else ()
    for note in notes:
        room = max_chars - len(note) - 1
        if len(found.text) <= room:
            return replace(found, text=f"{note}\n{found.text}")
        if room >= MIN_BUDGET:
            found = find_symbols(
                reader, name, kind=kind, path=path, language=language, limit=limit, max_chars=room
            )
            return replace(found, text=f"{note}\n{found.text}")
    return found


def find_symbol_across(
    name: str,
    targets: Sequence[Target],
    *,
    kind: str | None = None,
    path: str | None = None,
    language: str | None = None,
    limit: int | None = None,
    max_chars: int | None = None,
) -> SymbolMatches:
    """Definitions named ``name`` in every repository of ``targets``, in one
    list ranked as one repository's is (the rank of a match depends on no
    index), each located ``key:path:lines``; a repository that cannot answer
    is named in a note line. Bounds as :func:`find_symbol`'s."""
    from repolens.search.fanout import ask_each, failed_notes, label
    from repolens.search.symbols import SymbolLookup, SymbolMatch
    from repolens.validate import check_budget, check_int

    limit, max_chars = _or(limit, SYMBOLS_LIMIT), _or(max_chars, SYMBOLS_MAX_CHARS)
    lookup = SymbolLookup.parse(name, kind=kind, path=path, language=language)
    check_int("limit", limit, 1, 200)
    check_budget(max_chars)

    def ask(target: Target) -> tuple[list[tuple[SymbolMatch, int]], int, list[SymbolMatch]]:
        reader, _ = open_index(target.root, target.index_dir, auto_index=False)
        found, total = lookup.ranked(reader)
        return found, total, (lookup.suggestions(reader) if not found else [])

    answers = ask_each(_checked(targets), ask)
    found = [(m, c, a.target.key) for a in answers if a.value for m, c in a.value[0]]
    found.sort(key=lambda mck: (*lookup.rank_key(mck[0], mck[1]), mck[2]))
    total = sum(a.value[1] for a in answers if a.value)
    ranked = [m._replace(path=label(key, m.path)) for m, _, key in found[:limit]]
    suggestions = tuple(
        m._replace(path=label(a.target.key, m.path)) for a in answers if a.value for m in a.value[2]
    )
    notes = failed_notes(answers)
    result = lookup.render(ranked, total, suggestions[:5], max_chars - sum(len(n) + 7 for n in notes))
    if not notes:
        return result
    text = "\n".join([*(f"note: {n}" for n in notes), result.text])[:max_chars]
    return replace(result, text=text)


def _checked(targets: Sequence[Target]) -> Sequence[Target]:
    if not targets:
        raise UsageError("name at least one repository")
    return targets


def _or(value: int | None, default: int) -> int:
    """What the caller gave, else the bound every front shares (:mod:`repolens.budget`)."""
    return default if value is None else value


def focus(
    query: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    paths: Sequence[str] = (),
    max_files: int | None = None,
    blocks_per_file: int | None = None,
    max_blocks: int | None = None,
    max_chars: int | None = None,
) -> FocusResult:
    """The whole definitions around ``query``'s matches (see
    :mod:`repolens.reply.focus`), found by a search ranked as the
    repository's settings say; each bound None: its default in
    :mod:`repolens.budget` (``FOCUS_*``)."""
    from repolens.index.ensure import published_reader
    from repolens.reply.focus import focused_context
    from repolens.settings import load_settings
    from repolens.store import open_store
    from repolens.validate import check_query

    check_query(query)
    store = open_store(root, index_dir)
    settings = load_settings(store.root)
    reader, _ = published_reader(store, settings, True, None)
    return focused_context(
        reader,
        store.root,
        query,
        settings,
        paths=paths,
        max_files=_or(max_files, FOCUS_MAX_FILES),
        blocks_per_file=_or(blocks_per_file, FOCUS_BLOCKS_PER_FILE),
        max_blocks=_or(max_blocks, FOCUS_MAX_BLOCKS),
        max_chars=_or(max_chars, FOCUS_MAX_CHARS),
    )


def get_chunk(
    chunk_id: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_chars: int | None = None,
) -> ChunkView:
    """One stored chunk (ids are in JSON replies), within ``max_chars``
    (None: :data:`~repolens.budget.CHUNK_MAX_CHARS`)."""
    from repolens.reply.stored import get_chunk as _get_chunk

    reader, _ = open_index(root, index_dir, auto_index=False)
    return _get_chunk(reader, chunk_id, max_chars=_or(max_chars, CHUNK_MAX_CHARS))


def read_snippet(root: str | Path | None, path: str, start: int, end: int) -> Snippet:
    from repolens.reply.snippet import read_snippet as _read_snippet

    return _read_snippet(resolve_root(root), path, start, end)


def search_history_across(
    query: str | None,
    targets: Sequence[Target],
    *,
    path: str | None = None,
    top_k: int | None = None,
    max_chars: int | None = None,
) -> HistoryReply:
    """The commits most like ``query`` in every repository of ``targets``,
    best first across them (each commit named by its repository); a
    repository without history or that cannot answer is named in a note.
    Bounds as :func:`search_history`'s."""
    from repolens.reply.history import BEHIND_HEAD, HistoryReply, history_entries, once_each, render_history
    from repolens.search.fanout import ask_each, failed_notes, grouped_notes
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query

    if path is not None:
        raise UsageError("path names a file of one repository: pass one repo with path")
    if query is None:
        raise UsageError("pass a question to search the history of several repositories")
    check_query(query)
    top_k, max_chars = _or(top_k, HISTORY_TOP_K), _or(max_chars, HISTORY_MAX_CHARS)
    check_int("top_k", top_k, 1, MAX_TOP_K)
    check_budget(max_chars)

    def ask(target: Target) -> tuple[list[HistoryEntry], list[str]]:
        reader, _ = open_index(target.root, target.index_dir, auto_index=False)
        return history_entries(reader, target.root, query, top_k=top_k)

    answers = ask_each(_checked(targets), ask)
    entries = [replace(e, repo=a.target.key) for a in answers if a.value for e in a.value[0]]
    # Scores are each repository's BM25 of commit messages: like terms, like scales.
    entries = once_each(sorted(entries, key=lambda e: (-e.score, e.repo)))
    notes = failed_notes(answers) + grouped_notes(
        [
            (a.target.key, [n for n in a.value[1] if n.startswith(("no history", BEHIND_HEAD))])
            for a in answers
            if a.value
        ]
    )
    if not entries:
        notes.append("no commit in the indexed history of these repositories matches the question")
    return render_history(HistoryReply(query, None, entries[:top_k], notes=notes), max_chars)


def search_history(
    query: str | None = None,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    path: str | None = None,
    top_k: int | None = None,
    max_chars: int | None = None,
) -> HistoryReply:
    """The commits most relevant to ``query``, to the file ``path``, or to
    both (see :mod:`repolens.reply.history`): at most ``top_k`` (None:
    :data:`~repolens.budget.HISTORY_TOP_K`) within ``max_chars`` (None:
    :data:`~repolens.budget.HISTORY_MAX_CHARS`)."""
    from repolens.history.gitlog import quoted
    from repolens.reply.history import history_reply
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query, check_subpath

    if query is None and path is None:
        raise UsageError("pass a question, a file path, or both to search the history")
    if query is not None:
        check_query(query)
    file = check_subpath(path, root if root is not None else ".")
    if path is not None and not file:
        raise UsageError(f"path {path!r} must be a file inside the repository")
    top_k, max_chars = _or(top_k, HISTORY_TOP_K), _or(max_chars, HISTORY_MAX_CHARS)
    check_int("top_k", top_k, 1, MAX_TOP_K)
    check_budget(max_chars)
    reader, _ = open_index(root, index_dir)
    notes: list[str] = []
    if file and not reader.history_of_file(file) and not reader.files([file]):
        if reader.has_path(file):  # a folder holding indexed files
            held = next(p for p in sorted(reader.paths()) if p.startswith(f"{file}/"))
            raise UsageError(
                f"path {file!r} is a folder, not a file (it holds {held!r})", fix="pass one file as {path}"
            )
        newest = reader.history_newest_name(file)  # a name it had before a rename
        if not newest:
            from repolens.search.filters import no_indexed_file

            raise no_indexed_file(reader, file)  # (a deleted file's commits are still shown)
        notes.append(f"{quoted(file)} is named {quoted(newest)} since a rename: its commits under every name")
        file = newest
    return history_reply(
        reader, resolve_root(root), query, path=file, top_k=top_k, max_chars=max_chars, notes=notes
    )
