"""Use cases of a search: one repository, or several in one reply (see :mod:`repolens.service`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from repolens.errors import UsageError
from repolens.store import open_store

# Each use case imports its own stack when it runs: a new process (``repolens
# read`` from a shell) must not pay for the search, reply and store modules
# another use case needs (``tests/test_cli_imports.py``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from repolens.index.report import ProgressFn
    from repolens.reply.modes import SearchReply
    from repolens.search.across import Asked
    from repolens.search.fanout import Answered, Target
    from repolens.search.filters import Filters


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
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query, check_rerender, shown_value

    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, got {shown_value(mode)}")
    if query_id is None:
        check_query(query)
        # before indexing; an absolute path is read against the root asked (the current folder by default)
        where = root if root is not None else "."
        filters = make_filters(path, language, kind, include, exclude, keyword, min_score, where)
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
        # the settings rank (the ranking, its weights, how many candidates), and so does a
        # leg that is missing (its notes say so): a question asked under others is another
        # result, and its id must not recall this one
        shaped_by = "\0".join([repr(settings), str(explain), *outcome.notes])
        query_id = remember_outcome(reader, outcome, shaped_by)
    else:
        outcome = recall_outcome(reader, query_id, settings)
    # Cited lines must hold: files changed since indexing are re-chunked now.
    freshen_outcome(store.root, reader, outcome, settings)
    reply = render_search(outcome, query_id, mode, settings, explain=explain)
    reply.indexed = indexed
    return reply


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
    from repolens.validate import MAX_TOP_K, check_budget, check_int, check_query, shown_value

    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, got {shown_value(mode)}")
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
    """:func:`repolens.search.across.ask_across`, imported on first use."""
    from repolens.search.across import ask_across as ask

    return ask(query, targets, filters, overrides, explain=explain)


def reply_across(
    query: str,
    answers: Sequence[Answered[Asked]],
    filters: Filters,
    mode: str,
    *,
    notes: Sequence[str] = (),
    explain: bool = False,
) -> SearchReply:
    """The answers of :func:`ask_across` merged
    (:func:`repolens.search.across.merge_answers`) and rendered in ``mode``,
    ``notes`` first."""
    from repolens.reply.modes import render_search
    from repolens.search.across import merge_answers

    merged, settings = merge_answers(query, answers, filters, notes)
    return render_search(merged, None, mode, settings, explain=explain)
