"""The operations the adapters expose, as plain functions.

CLI, MCP server and HTTP app all call these and only these, so a tool and its
subcommand cannot drift apart. Each function validates its arguments (raising
``UsageError`` with the fix), resolves the root and index folder, and returns
a value whose ``render()``/``text`` is what the user sees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repolens.errors import NotFoundError, RepolensError, RootError, UsageError
from repolens.store import open_store
from repolens.validate import resolve_root

# Each use case imports its own stack when it runs: a new process (``repolens
# read`` from a shell) must not pay for the search, reply and store modules
# another use case needs (``tests/test_cli_imports.py``).
if TYPE_CHECKING:
    from repolens.branches.compare import Comparison
    from repolens.branches.refresh import RefreshResult
    from repolens.branches.registry import Registry
    from repolens.index.build import IndexReport, ProgressFn
    from repolens.index.status import IndexStatus
    from repolens.reply.focus import FocusResult
    from repolens.reply.history import HistoryEntry, HistoryReply
    from repolens.reply.modes import SearchReply
    from repolens.reply.snippet import Snippet
    from repolens.reply.stored import ChunkView
    from repolens.search.across import Answered, Asked, Target
    from repolens.search.filters import Filters
    from repolens.search.symbols import SymbolMatches
    from repolens.settings import Settings
    from repolens.store.base import IndexReader
    from repolens.store.inventory import Dropped, Inventory


def build_index(*args: Any, **kwargs: Any) -> IndexReport:
    """:func:`repolens.index.build.build_index`, imported on first use: the
    write path (discovery, chunkers, worker pools) costs a new process more
    than a whole search, and a search of a built index never needs it."""
    from repolens.index.build import build_index as build

    return build(*args, **kwargs)


def index_repo(
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_file_bytes: int | None = None,
    vectors: bool | None = None,
    rebuild: bool = False,
    progress: ProgressFn | None = None,
    vector_progress: ProgressFn | None = None,
    lock_wait: float = 0.0,
    siblings: Sequence[Path] = (),
) -> IndexReport:
    """Build the index of ``root``, or bring it up to date (only what changed
    is read); ``rebuild`` forces a fresh generation. ``lock_wait`` seconds
    are spent waiting for another writer (a server's watcher) to finish.
    ``siblings``: other branches' folders of the same repository, whose
    indexes identical files are copied from (the repository's other git
    worktrees are found without being named)."""
    from repolens.index.reuse import sibling_stores
    from repolens.settings import load_settings

    root_path = resolve_root(root)
    settings = load_settings(root_path, {"max_file_bytes": max_file_bytes, "vectors": vectors})
    return build_index(
        root_path,
        index_dir=index_dir,
        settings=settings,
        rebuild=rebuild,
        progress=progress,
        vector_progress=vector_progress,
        lock_wait=lock_wait,
        siblings=sibling_stores(root_path, siblings) if siblings else None,
    )


def search_code(
    query: str | None,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    top_k: int | None = None,
    max_chars: int | None = None,
    path: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    keyword: str | Sequence[str] | None = None,
    min_score: float | None = None,
    mode: str = "packet",
    query_id: str | None = None,
    explain: bool = False,
    auto_index: bool = True,
    progress: ProgressFn | None = None,
) -> SearchReply:
    """Answer ``query`` (or re-render the remembered ``query_id``) in ``mode``.

    Modes: ``packet`` (evidence packet), ``files`` (ranked file overview),
    ``json`` (hits, omitted hits and files for programs). Indexes first if
    the repository has no index and ``auto_index`` is set. ``keyword``: every
    hit contains each of these strings exactly; ``min_score``: hits scoring
    below it are dropped (a note says so when none is left).
    """
    from repolens.index.ensure import published_reader
    from repolens.reply.modes import MODES, render_search
    from repolens.search.filters import make_filters
    from repolens.search.freshness import freshen_outcome
    from repolens.search.ranking import search
    from repolens.search.remembered import recall_outcome, remember_outcome
    from repolens.settings import load_settings
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query, check_rerender

    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if query_id is None:
        check_query(query)
        filters = make_filters(path, language, kind, include, exclude, keyword, min_score)  # before indexing
    else:
        given = {"query": query, "path": path, "language": language, "kind": kind}
        more = {"keyword": keyword, "min_score": min_score is not None}
        check_rerender({**given, "include": include, "exclude": exclude, **more})
    if top_k is not None:
        check_int("top_k", top_k, 1, MAX_TOP_K)
    if max_chars is not None:
        check_budget(max_chars)
    store = open_store(root, index_dir)
    settings = load_settings(store.root, {"top_k": top_k, "max_chars": max_chars})
    reader, indexed = published_reader(store, settings, auto_index and query_id is None, progress)
    if query_id is None:
        assert query is not None
        outcome = search(reader, store.root, query, settings, filters, explain=explain)
        query_id = remember_outcome(reader, outcome)
    else:
        outcome = recall_outcome(reader, query_id, settings)
    # Cited lines must hold: files changed since indexing are re-chunked now.
    freshen_outcome(store.root, reader, outcome, settings)
    reply = render_search(outcome, query_id, mode, settings, explain=explain)
    reply.indexed = indexed
    return reply


def named_repositories(
    repos: Sequence[str],
    project: str | None = None,
    config_file: str | Path | None = None,
) -> tuple[list[Target], bool]:
    """The configured repositories the command line's ``--repo`` (repeatable;
    ``*``: all) and ``--project`` name (see :mod:`repolens.branches.several`),
    from the roots of the config file (``--config``, ``$REPOLENS_CONFIG``,
    ``./.repolens.toml``), else the git worktrees of the current directory;
    a ``--repo`` that names none may be a folder. Also whether they are
    several (a list, ``*`` or a project): one reply over them all."""
    from repolens.branches.names import resolve_key
    from repolens.branches.roots import configured_roots, name_for
    from repolens.branches.several import PROJECT, names_several, selected
    from repolens.search.across import Target

    spec = [*repos, *([f"{PROJECT}{project}"] if project is not None else [])]
    if not spec:
        raise UsageError("name a repository with --repo NAME (repeatable, '*' for all) or --project NAME")
    roots, registry, _ = configured_roots(config_file)

    def key_of(name: str) -> str | None:
        return resolve_key(name, roots, base_of=registry.base_of, indexed=_has_index)

    out: dict[Path, Target] = {}
    for entry in selected(spec if len(spec) > 1 else spec[0], roots, registry, key_of):
        root = roots[entry] if entry in roots else _folder(entry, roots)
        key = next((k for k, path in roots.items() if path == root), None) or name_for(root)
        out.setdefault(root, Target(key, root))
    return list(out.values()), len(spec) > 1 or names_several(spec[0])


def _folder(entry: str, roots: Mapping[str, Path]) -> Path:
    """A ``--repo`` that names no configured repository: a folder, or an error naming the configured ones."""
    try:
        return resolve_root(entry)
    except RootError:
        configured = ", ".join(roots) or "none (--config, $REPOLENS_CONFIG or ./.repolens.toml name them)"
        raise NotFoundError(
            f"unknown repository {entry!r}: no folder has that path, and the configured ones are {configured}"
        ) from None


def _has_index(root: Path) -> bool:
    try:
        return open_store(root).current() is not None
    except RepolensError:
        return False


def search_across(
    query: str | None,
    targets: Sequence[Target],
    *,
    top_k: int | None = None,
    max_chars: int | None = None,
    path: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    include: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] | None = None,
    keyword: str | Sequence[str] | None = None,
    min_score: float | None = None,
    mode: str = "packet",
    query_id: str | None = None,
    explain: bool = False,
) -> SearchReply:
    """``query`` asked of every repository of ``targets`` at once, answered
    in one reply ranked across them within one budget (see
    :mod:`repolens.search.across`): every hit is named ``key:path``. A
    repository that cannot answer (no index yet, one being built, a failing
    store) is named in a note and the others answer; ``NotFoundError`` when
    none can. Not remembered: such a reply has no ``query_id``."""
    from repolens.reply.modes import MODES
    from repolens.search.filters import make_filters
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query

    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if query_id is not None:
        raise UsageError(
            "query_id shows again a search of one repository; a search of several is not "
            "remembered: ask the question again, or pass repo=<one name> with query_id"
        )
    check_query(query)
    assert query is not None
    filters = make_filters(path, language, kind, include, exclude, keyword, min_score)
    if top_k is not None:
        check_int("top_k", top_k, 1, MAX_TOP_K)
    if max_chars is not None:
        check_budget(max_chars)
    if not targets:
        raise UsageError("name at least one repository to search")
    answers, notes = ask_across(
        query, targets, filters, {"top_k": top_k, "max_chars": max_chars}, explain=explain
    )
    return reply_across(query, answers, filters, mode, notes=notes, explain=explain)


def ask_across(
    query: str,
    targets: Sequence[Target],
    filters: Filters,
    overrides: Mapping[str, Any],
    *,
    explain: bool = False,
) -> tuple[list[Answered[Asked]], list[str]]:
    """The first half of :func:`search_across`: every repository searched as
    alone (its settings with ``overrides``), its cited files checked; of
    more than ``FULL_SEARCHES``, those whose index holds most of the
    question (:func:`repolens.search.across.choose`), with a note saying so."""
    from repolens.index.ensure import published_reader
    from repolens.search.across import (
        FULL_SEARCHES,
        Answered,
        Asked,
        ask_each,
        choose,
        held_each,
        history_terms,
    )
    from repolens.search.freshness import freshen_outcome
    from repolens.search.query import parse_query
    from repolens.search.ranking import search
    from repolens.settings import load_settings

    def reader_of(target: Target) -> tuple[IndexReader, Settings]:
        store = open_store(target.root, target.index_dir)
        settings = load_settings(store.root, dict(overrides))
        return published_reader(store, settings, False, None)[0], settings

    def ask(target: Target) -> Asked:
        reader, settings = reader_of(target)
        outcome = search(reader, target.root, query, settings, filters, explain=explain)
        freshen_outcome(target.root, reader, outcome, settings)
        return Asked(outcome, settings, history_terms(reader, outcome.query))

    if len(targets) <= FULL_SEARCHES:
        return ask_each(targets, ask), []
    parsed = parse_query(query)
    tokens = list(dict.fromkeys(t.token for t in parsed.terms))
    probes = held_each(targets, tokens)
    held = {a.target.key: a.value for a in probes if a.value is not None}
    chosen = set(choose(held, parsed, FULL_SEARCHES))
    failed: list[Answered[Asked]] = [Answered(a.target, error=a.error) for a in probes if a.error]
    note = (
        f"{len(targets)} repositories asked: the {len(chosen)} whose indexes hold most of the question's "
        "words were searched in full"
    )
    return failed + ask_each([t for t in targets if t.key in chosen], ask), [note]


def reply_across(
    query: str,
    answers: Sequence[Answered[Asked]],
    filters: Filters,
    mode: str,
    *,
    notes: Sequence[str] = (),
    explain: bool = False,
) -> SearchReply:
    """The second half of :func:`search_across`: the answers merged and
    rendered, ``notes`` (from :func:`ask_across`) first."""
    from repolens.reply.modes import render_search
    from repolens.search.across import failed_notes, grouped_notes, merge_hits
    from repolens.search.hits import SearchOutcome
    from repolens.search.query import parse_query

    answered = [(a.target.key, a.value) for a in answers if a.value is not None]
    if not answered:
        raise NotFoundError(
            "no repository could answer: " + "; ".join(failed_notes(answers)),
            fix="index them (repolens index, or refresh --all) and ask again",
        )
    settings = answered[0][1].settings  # the reply's budget and top_k: as the first repository's settings say
    notes = [
        *notes,
        *failed_notes(answers),
        *grouped_notes([(key, asked.outcome.notes) for key, asked in answered]),
    ]
    limit = max(settings.top_k * 4, 20)
    parsed = parse_query(query, weighted=settings.query_weights)
    history = {key: asked.history for key, asked in answered}
    hits = merge_hits([(key, asked.outcome.hits) for key, asked in answered], limit, parsed, history)
    merged = SearchOutcome(parsed, hits, notes, filters)
    return render_search(merged, None, mode, settings, explain=explain)


def open_index(
    root: str | Path | None,
    index_dir: str | Path | None = None,
    *,
    auto_index: bool = True,
    progress: ProgressFn | None = None,
) -> tuple[IndexReader, IndexReport | None]:
    """A reader of the current index of ``root`` (built first when missing and ``auto_index``)."""
    from repolens.index.ensure import published_reader

    return published_reader(open_store(root, index_dir), None, auto_index, progress)


def index_status(root: str | Path | None = None, *, index_dir: str | Path | None = None) -> IndexStatus:
    """What the index holds, and how many files changed on disk since."""
    from repolens.index.status import index_status as _status
    from repolens.store.handles import readers

    store = open_store(root, index_dir)
    return _status(store, readers.get(store))


def find_symbol(
    name: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    kind: str | None = None,
    path: str | None = None,
    language: str | None = None,
    limit: int = 20,
    max_chars: int = 4000,
) -> SymbolMatches:
    from repolens.search.symbols import find_symbols

    reader, _ = open_index(root, index_dir)
    return find_symbols(
        reader, name, kind=kind, path=path, language=language, limit=limit, max_chars=max_chars
    )


def find_symbol_across(
    name: str,
    targets: Sequence[Target],
    *,
    kind: str | None = None,
    path: str | None = None,
    language: str | None = None,
    limit: int = 20,
    max_chars: int = 4000,
) -> SymbolMatches:
    """Definitions named ``name`` in every repository of ``targets``, in one
    list ranked as one repository's is (the rank of a match depends on no
    index), each located ``key:path:lines``; a repository that cannot answer
    is named in a note line."""
    from repolens.search.across import ask_each, failed_notes, label
    from repolens.search.symbols import SymbolLookup, SymbolMatch
    from repolens.validate import check_budget, check_int

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


def focus(
    query: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    paths: Sequence[str] = (),
    max_files: int = 3,
    blocks_per_file: int = 3,
    max_blocks: int = 6,
    max_chars: int = 8000,
) -> FocusResult:
    from repolens.reply.focus import focused_context
    from repolens.validate import check_query

    check_query(query)
    reader, _ = open_index(root, index_dir)
    return focused_context(
        reader,
        query,
        paths=paths,
        max_files=max_files,
        blocks_per_file=blocks_per_file,
        max_blocks=max_blocks,
        max_chars=max_chars,
    )


def get_chunk(
    chunk_id: str,
    root: str | Path | None = None,
    *,
    index_dir: str | Path | None = None,
    max_chars: int = 8000,
) -> ChunkView:
    from repolens.reply.stored import get_chunk as _get_chunk

    reader, _ = open_index(root, index_dir, auto_index=False)
    return _get_chunk(reader, chunk_id, max_chars=max_chars)


def read_snippet(root: str | Path | None, path: str, start: int, end: int) -> Snippet:
    from repolens.reply.snippet import read_snippet as _read_snippet

    return _read_snippet(resolve_root(root), path, start, end)


def list_indexes(store: str | None = None) -> Inventory:
    """Every index of a store (``store``, else the one this process names;
    see :mod:`repolens.store.inventory`)."""
    from repolens.store.inventory import list_indexes as _list

    return _list(store)


def drop_index(key: str, store: str | None = None) -> Dropped:
    """Remove the index ``key`` from a store (see :func:`list_indexes`)."""
    from repolens.store.inventory import drop_index as _drop

    return _drop(key, store)


# -- many repositories and branches (repolens.branches) -----------------------------


def compare_branches(
    repo: str,
    roots: Mapping[str, Path],
    registry: Registry,
    *,
    base: str | None = None,
    head: str | None = None,
    paths: Sequence[str] = (),
    query: str | None = None,
    max_chars: int = 4000,
    index_dir_of: Callable[[str], Path | None] = lambda key: None,
) -> Comparison:
    """Compare two branches of ``repo`` (see :mod:`repolens.branches.compare`)
    on ``paths`` or on the files ``query`` finds in either. ``index_dir_of``
    gives a root key's index folder (None: the default)."""
    from repolens.branches.compare import COMPARE_HITS, compare_stores, pick_branches
    from repolens.validate import check_budget, check_query, check_subpath

    check_budget(max_chars)
    if not isinstance(repo, str) or not repo.strip():
        raise UsageError("pass repo: a repository name (NAME or NAME@BRANCH)")
    if bool(paths) == bool(query):
        raise UsageError(
            "pass either paths (files or folders to compare) or query (compare the files it finds)"
        )
    if query:
        check_query(query)
    clean = [check_subpath(p) or "." for p in paths]
    name, base_key, head_key = pick_branches(repo.strip(), roots, registry, base, head)
    keys = [k for k in (base_key, head_key) if k is not None]
    stores = [open_store(roots[k], index_dir_of(k)) for k in keys]
    for store in stores:
        if store.current() is None:
            raise store.missing()

    def hits(key: str) -> list[dict[str, Any]]:
        options = {"index_dir": index_dir_of(key), "top_k": COMPARE_HITS, "mode": "json", "auto_index": False}
        return search_code(query, roots[key], **options).to_json().get("hits", [])

    found = [(side, hits(key)) for side, key in zip(("base", "head"), keys, strict=False)] if query else None
    return compare_stores(name, keys, stores, clean, query or "", found, max_chars)


def refresh_all(config_file: str | Path | None = None) -> Iterator[RefreshResult]:
    """Refresh every configured root, every branch (``refresh --all``), one
    result as each is done; a configured root whose folder is missing is a
    failed result, and the others are refreshed. Without a configured root,
    the git worktrees of the current directory. Errors of the configuration
    itself are raised before any root is touched."""
    from repolens.branches.refresh import refresh_roots
    from repolens.branches.roots import configured_roots

    roots, registry, missing = configured_roots(config_file, missing_ok=True)
    if not roots and not missing:
        raise UsageError(
            "no repository to refresh: add a [roots] table to the config file (--config, "
            "$REPOLENS_CONFIG or ./.repolens.toml), set REPOLENS_ROOTS=name=/path,..., "
            "or run it inside a git work tree (its worktrees are refreshed)"
        )
    yield from refresh_roots(roots, registry, missing)


def search_history_across(
    query: str | None,
    targets: Sequence[Target],
    *,
    path: str | None = None,
    top_k: int = 10,
    max_chars: int = 6000,
) -> HistoryReply:
    """The commits most like ``query`` in every repository of ``targets``,
    best first across them (each commit named by its repository); a
    repository without history or that cannot answer is named in a note."""
    from repolens.reply.history import HistoryReply, history_entries, render_history
    from repolens.search.across import ask_each, failed_notes, grouped_notes
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query

    if path is not None:
        raise UsageError("path names a file of one repository: pass one repo with path")
    if query is None:
        raise UsageError("pass a question to search the history of several repositories")
    check_query(query)
    check_int("top_k", top_k, 1, MAX_TOP_K)
    check_budget(max_chars)

    def ask(target: Target) -> tuple[list[HistoryEntry], list[str]]:
        reader, _ = open_index(target.root, target.index_dir, auto_index=False)
        return history_entries(reader, target.root, query, top_k=top_k)

    answers = ask_each(_checked(targets), ask)
    entries = [replace(e, repo=a.target.key) for a in answers if a.value for e in a.value[0]]
    # Scores are each repository's BM25 of commit messages: like terms, like scales.
    entries.sort(key=lambda e: (-e.score, e.repo))
    notes = failed_notes(answers) + grouped_notes(
        [(a.target.key, [n for n in a.value[1] if n.startswith("no history")]) for a in answers if a.value]
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
    top_k: int = 10,
    max_chars: int = 6000,
) -> HistoryReply:
    """The commits most relevant to ``query``, to the file ``path``, or to
    both (see :mod:`repolens.reply.history`)."""
    from repolens.reply.history import history_reply
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query, check_subpath

    if query is None and path is None:
        raise UsageError("pass a question, a file path, or both to search the history")
    if query is not None:
        check_query(query)
    file = check_subpath(path)
    if path is not None and not file:
        raise UsageError(f"path {path!r} must be a file inside the repository")
    check_int("top_k", top_k, 1, MAX_TOP_K)
    check_budget(max_chars)
    reader, _ = open_index(root, index_dir)
    if file and not reader.has_path(file) and not reader.history_of_file(file):
        from repolens.search.filters import no_indexed_file

        raise no_indexed_file(reader, file)  # (a deleted file's commits are still shown)
    return history_reply(reader, resolve_root(root), query, path=file, top_k=top_k, max_chars=max_chars)
