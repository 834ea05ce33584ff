"""The MCP server: tools that call :mod:`repolens.service`, nothing more.

stdout belongs to the protocol: logs go to stderr, and no tool prints.
Domain errors become tool results with ``isError`` and a one-line message;
so do bad arguments, unknown tools and bugs (whose traceback stays in the
server's log).

One set of tool bodies serves both transports. What differs is where a tool
looks, chosen once by :class:`Repos`: every caller names the repository
with ``repo`` (``root`` is an alias; none: the only one served). A local
(stdio) caller may pass a served repository's name or a path; a remote
(HTTP) caller a name from the allow-list, and every path it sends is checked strictly
(:func:`repolens.reply.snippet.safe_path` with ``strict=True``, plus secrets and
version-control folders by name).

Every reply fits the ``max_chars`` the call asked for (or the tool's
default), but for ``search_code`` mode=json, where ``max_chars`` budgets the
evidence (the hits' text) and not the JSON around it; error messages are one
line of at most ``ERROR_MAX_CHARS``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import Field

from repolens import __version__, service
from repolens.branches import catalog
from repolens.branches.names import branches_of, parse_ref, unknown
from repolens.branches.refresh import siblings_of
from repolens.branches.registry import load_registry
from repolens.branches.roots import name_for
from repolens.branches.several import names_several
from repolens.budget import LIST_LIMIT, READ_MAX_CHARS, SUMMARY_MAX_CHARS, counted, cut_to_budget
from repolens.errors import UsageError
from repolens.search.fanout import MISSING_FOLDER
from repolens.server.calls import (
    READ_ONLY,
    QueryLog,
    RepolensServer,
    note_budget,
    note_evidence_budget,
    note_hits,
    strict_tool,
    tool_body,
)
from repolens.server.handshake import GUIDE, INSTRUCTIONS, SERVER_NAME
from repolens.server.repos import FROM_ROOTS, Repos
from repolens.validate import check_budget

if TYPE_CHECKING:
    from repolens.index.status import IndexStatus
    from repolens.reply.modes import SearchReply

log = logging.getLogger("repolens")
# The server's own watcher may be writing when a tool asks to index: wait for it.
SERVER_LOCK_WAIT_S = 60.0


def build_server(
    roots: Mapping[str, Path] | Path | None = None,
    *,
    remote: bool = False,
    index_dir: Path | None = None,
    allow_rebuild: bool = False,
    allow_tests: bool = False,
    query_log: Path | None = None,
    registry: Path | None = None,
    missing: Mapping[str, Path] | None = None,
    description: str | None = FROM_ROOTS,
) -> RepolensServer:
    """An MCP server over ``roots`` (name -> folder; a single folder is
    served under its own name, and is the default).

    ``remote=False`` (stdio): tools take an optional ``repo``, a name or a path.
    ``remote=True`` (HTTP): tools take ``repo``, a name from ``roots``; file
    paths are checked strictly, and ``index_repo(rebuild=true)`` is refused
    unless ``allow_rebuild``. ``query_log`` appends one JSON line per call.
    ``registry`` is the registry file (:mod:`repolens.branches.registry`).
    ``missing``: configured roots whose folder is missing (name -> that
    folder), not served, named by ``list_repositories`` and to a call that
    asks for one; each served once a call naming it finds it back.
    ``description``: what the tools' ``repo`` argument says, when the caller
    has made it (the stdio front, for its own tool list): see :class:`Repos`.
    """
    # A server answers many questions: the history's BM25 takes numpy when the
    # process has it (repolens.store.history_rank), ~2 ms a question sooner,
    # and a search remembers its result with orjson (repolens.search.remembered).
    import numpy  # noqa: F401
    import orjson  # noqa: F401

    if isinstance(roots, Path):
        roots = {name_for(roots): roots}
    repos = Repos(
        roots or {},
        remote=remote,
        index_dir=index_dir,
        registry=load_registry(registry),
        missing=missing,
        description=description,
    )
    tools: list[Tool] = []

    def tool(description: str, annotations: ToolAnnotations | None = READ_ONLY):
        def register(fn: Callable[..., str]) -> Callable[..., str]:
            read_only = bool(annotations and annotations.read_only_hint)
            body = tool_body(fn, repos, read_only=read_only)
            tools.append(
                strict_tool(body, name=fn.__name__, description=description, annotations=annotations)
            )
            return fn

        return register

    @tool(
        "Update the index, reading only changed files (rebuild=true: from scratch).",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    def index_repo(
        repo: str | None = None,
        rebuild: bool = False,
        ctx: Context | None = None,
    ) -> str:
        if rebuild and remote and not allow_rebuild:
            raise UsageError(
                "a full rebuild is off for remote callers: call index_repo without rebuild to update "
                "the index, or ask the operator to start the server with --allow-rebuild"
            )
        where, idx = repos.resolve(repo)
        report = service.index_repo(
            where,
            index_dir=idx,
            siblings=_siblings(repos, where),
            rebuild=rebuild,
            progress=progress_reporter(ctx, "indexing"),
            lock_wait=SERVER_LOCK_WAIT_S,
            vector_progress=progress_reporter(ctx, "embedding"),
        )
        return cut_to_budget(repos.redact(report.summary()), SUMMARY_MAX_CHARS)

    @tool(
        "Update the index for files changed on disk (the server's watcher usually does).",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    def refresh_index(repo: str | None = None, ctx: Context | None = None) -> str:
        where, idx = repos.resolve(repo)
        report = service.index_repo(
            where,
            index_dir=idx,
            siblings=_siblings(repos, where),
            progress=progress_reporter(ctx, "refreshing"),
            lock_wait=SERVER_LOCK_WAIT_S,
        )
        return cut_to_budget(repos.redact(report.summary()), SUMMARY_MAX_CHARS)

    @tool("What the index holds, when it was updated, files changed since, settings in force.")
    def index_status(repo: str | None = None) -> str:
        where, idx = repos.resolve(repo)
        return cut_to_budget(
            repos.redact(service.index_status(where, index_dir=idx).render()), SUMMARY_MAX_CHARS
        )

    @tool("Served repositories and branches, with index and registry facts; pages with cursor.")
    def list_repositories(
        cursor: Annotated[int, Field(description="A reply's next_cursor.")] = 0,
        limit: int | None = None,
        max_chars: int | None = None,
        project: str | None = None,
    ) -> str:
        limit = LIST_LIMIT if limit is None else limit
        max_chars = SUMMARY_MAX_CHARS if max_chars is None else max_chars
        check_budget(max_chars)
        if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
            raise UsageError("cursor must be a whole number from a previous reply (0 for the first page)")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise UsageError("limit must be between 1 and 100")
        repos.look_again(list(repos.missing))  # the listing names every one
        names = catalog.groups(repos.roots, repos.registry, project)
        page = names[cursor : cursor + limit]
        unserved = sum(1 for group in names if not group.branches)
        lines = [
            f"{counted(len(names) - unserved, 'repository')} served"
            + (f", {unserved} more in the registry" if unserved else "")
            + (f", {len(repos.missing)} missing" if repos.missing else "")
            + (f"; showing {cursor + 1}-{cursor + len(page)}" if page else "")
        ]
        for group in page:
            lines += [repos.redact(line) for line in catalog.render_group(group, _status_of(repos))]
        if cursor == 0:
            lines += [f"{name}: {MISSING_FOLDER}" for name in repos.missing]
        if cursor + limit < len(names):
            lines.append(f"next_cursor {cursor + limit}")
        note_hits(len(page))
        return cut_to_budget("\n".join(lines), max_chars)

    @tool(
        "Run tests with an allow-listed runner; only failure-relevant lines come back.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    def run_tests(
        runner: Annotated[str, Field(description="pytest, npm, pnpm, yarn, go, cargo, mvn or gradle.")],
        args: Annotated[
            list[str] | None, Field(description="Test paths and one filter (-k EXPR), no shell text.")
        ] = None,
        repo: str | None = None,
        timeout_s: float | None = None,
        max_chars: int | None = None,
    ) -> str:
        if remote and not allow_tests:
            raise UsageError(
                "running tests is off for remote callers: "
                "ask the operator to start the server with --allow-tests"
            )
        from repolens import testrun

        if max_chars is not None:
            check_budget(max_chars)  # worded as every tool's, before the repository is resolved
        where, _ = repos.resolve(repo)
        # a call given up (cancelled, its client gone) stops its run at once
        check = anyio.from_thread.check_cancelled
        run = testrun.run_tests(
            where, runner, args or (), timeout_s=timeout_s, max_chars=max_chars, check=check
        )
        # redacted before it is fitted: a folder's name can be longer than the folder
        reply, shown = testrun.render_counted(run, remote=remote, redact=repos.redact)
        note_hits(shown)  # the lines the reply shows, not the filter's (the budget may fit fewer)
        return reply

    @tool(
        "Search for a question, identifier or error message: top hits with path, lines, score and "
        "the lines that matter. An omission marker names the read_snippet call that expands it. "
        "Exact strings: grep is cheaper. repo: one, a list, * or project:NAME."
    )
    def search_code(
        query: str | None = None,
        repo: str | list[str] | None = None,
        mode: Annotated[str, Field(description="packet, files (ranked files) or json.")] = "packet",
        top_k: int | None = None,
        max_chars: int | None = None,
        path: Annotated[str | None, Field(description="Only under this folder or file.")] = None,
        language: str | None = None,
        kind: str | None = None,
        include: Annotated[list[str] | None, Field(description="Path globs.")] = None,
        exclude: Annotated[list[str] | None, Field(description="Path globs.")] = None,
        keyword: Annotated[list[str] | None, Field(description="Exact texts every hit contains.")] = None,
        min_score: float | None = None,
        query_id: Annotated[str | None, Field(description="A reply's query_id: show it again.")] = None,
        explain: bool = False,
    ) -> str:
        options = {
            "top_k": top_k,
            "max_chars": max_chars,
            "language": language,
            "kind": kind,
            "include": include,
            "exclude": exclude,
            "keyword": keyword,
            "min_score": min_score,
            "mode": mode,
            "query_id": query_id,
            "explain": explain,
        }
        if names_several(repo):
            assert repo is not None
            targets = repos.targets(repo)
            path = repos.check_filter(targets[0].root, path)
            reply = service.search_across(query, targets, path=path, **options)
            _note_search(reply, mode)
            return repos.redact(reply.text)
        where, idx = repos.resolve(repo)
        reply = service.search_code(
            query, where, index_dir=idx, path=repos.check_filter(where, path), **options
        )
        _note_search(reply, mode)
        return reply.text

    @tool("Lines start..end of a file (1-based, inclusive, at most 300): what an omission marker names.")
    def read_snippet(
        path: str,
        start: int,
        end: int,
        repo: str | None = None,
        max_chars: int = READ_MAX_CHARS,
    ) -> str:
        check_budget(max_chars)
        if repo is None and isinstance(path, str) and (labelled := repos.split_label(path)):
            repo, path = labelled  # as a reply over several repositories names a file
        where, _ = repos.resolve(repo)
        snippet = service.read_snippet(where, repos.check_file(where, path), start, end)
        note_hits(len(snippet.lines))
        return snippet.render(max_chars)

    @tool(
        "Where a symbol is defined: exact, case/separator-insensitive, qualified (Store.save) "
        "or fuzzy. Cheaper than search_code for a known name; repo: one or several."
    )
    def find_symbol(
        name: str,
        repo: str | list[str] | None = None,
        kind: str | None = None,
        path: Annotated[str | None, Field(description="Only under this folder or file.")] = None,
        language: str | None = None,
        limit: int | None = None,
        max_chars: int | None = None,
    ) -> str:
        if names_several(repo):
            assert repo is not None
            targets = repos.targets(repo)
            found = service.find_symbol_across(
                name,
                targets,
                kind=kind,
                path=repos.check_filter(targets[0].root, path),
                language=language,
                limit=limit,
                max_chars=max_chars,
            )
            note_hits(len(found.matches))
            return repos.redact(found.render())
        where, idx = repos.resolve(repo)
        result = service.find_symbol(
            name,
            where,
            index_dir=idx,
            kind=kind,
            path=repos.check_filter(where, path),
            language=language,
            limit=limit,
            max_chars=max_chars,
        )
        note_hits(len(result.matches))
        return result.render()

    @tool(
        "Uses of a definition (name or path:line), grouped by file, resolved first; "
        "direction: callers or callees (depth 1-3)."
    )
    def find_references(
        target: str,
        repo: str | list[str] | None = None,
        direction: str | None = None,
        depth: int | None = None,
        max_chars: int | None = None,
    ) -> str:
        return _navigate(
            repos, target, repo, impact_of=False, direction=direction, depth=depth, max_chars=max_chars
        )

    @tool(
        "What a change reaches: the functions, files and tests using what path:start-end (or a "
        "name, a path) defines, ranked; tests apart with their run_tests call."
    )
    def impact(
        target: str,
        repo: str | list[str] | None = None,
        depth: int | None = None,
        max_chars: int | None = None,
    ) -> str:
        return _navigate(
            repos, target, repo, impact_of=True, direction=None, depth=depth, max_chars=max_chars
        )

    @tool("The whole functions or classes around a query's matches (to read or edit one after search_code).")
    def get_focused_context(
        query: str,
        repo: str | None = None,
        paths: list[str] | None = None,
        max_files: int | None = None,
        blocks_per_file: int | None = None,
        max_blocks: int | None = None,
        max_chars: int | None = None,
    ) -> str:
        where, idx = repos.resolve(repo)
        if repos.remote and paths:
            paths = [repos.check_filter(where, p) or "." for p in paths]
        result = service.focus(
            query,
            where,
            index_dir=idx,
            paths=paths or (),
            max_files=max_files,
            blocks_per_file=blocks_per_file,
            max_blocks=max_blocks,
            max_chars=max_chars,
        )
        note_hits(len(result.rendered))
        return result.render()

    @tool(
        "Which files differ between two branches (same, modified, only_head, only_base), "
        "for paths or the files a query finds."
    )
    def compare_branches(
        repo: str | None = None,
        base: str | None = None,
        head: str | None = None,
        paths: list[str] | None = None,
        query: str | None = None,
        max_chars: int | None = None,
    ) -> str:
        # paths are looked up in the indexes only (never read from disk), as a path filter is:
        # checked as one (a remote caller's relative, naming no secret), under the base branch
        result = service.compare_branches(
            _repo_name(repos, repo),
            repos.roots,
            repos.registry,
            base=base,
            head=head,
            paths=paths or (),
            query=query,
            max_chars=max_chars,
            index_dir_of=repos.index_dir_of,
            check_path=repos.check_filter,
        )
        note_hits(len(result.files))
        return repos.redact(result.render())

    @tool(
        "Commits relevant to a question or a file: hash, date, subject, paths (with path, the "
        "lines changed). repo: one or several."
    )
    def search_history(
        query: str | None = None,
        repo: str | list[str] | None = None,
        path: Annotated[str | None, Field(description="A file: its commits.")] = None,
        top_k: int | None = None,
        max_chars: int | None = None,
    ) -> str:
        if names_several(repo):
            assert repo is not None
            commits = service.search_history_across(
                query, repos.targets(repo), path=path, top_k=top_k, max_chars=max_chars
            )
            note_hits(len(commits.entries))
            return repos.redact(commits.render())
        where, idx = repos.resolve(repo)
        if path is not None:
            path = repos.check_filter(where, path)
        reply = service.search_history(
            query, where, index_dir=idx, path=path, top_k=top_k, max_chars=max_chars
        )
        note_hits(len(reply.entries))
        return reply.render()

    @tool("One indexed chunk by its id (ids are in JSON replies).")
    def get_chunk(
        chunk_id: str,
        repo: str | None = None,
        max_chars: int | None = None,
    ) -> str:
        where, idx = repos.resolve(repo)
        view = service.get_chunk(chunk_id, where, index_dir=idx, max_chars=max_chars)
        note_hits(1)
        return view.render()

    instructions = INSTRUCTIONS
    if remote:
        instructions += f" Repositories served: {repos.names} (pass repo=<name>)."
    server = RepolensServer(
        repos=repos,
        query_log=QueryLog(query_log) if query_log else None,
        name=SERVER_NAME,
        version=__version__,
        instructions=instructions,
        log_level="WARNING",
        tools=tools,
    )

    @server.prompt(name="repolens_guide", description="How to use repolens's tools well (short).")
    def repolens_guide() -> str:
        return GUIDE

    return server


def progress_reporter(ctx: Context | None, label: str) -> Callable[[int, int], None] | None:
    """A progress callback for the index, run in the tool's worker thread:
    it honours cancellation (raising there stops the index between files,
    keeping what was committed) and sends MCP progress notifications, at
    most four a second."""
    if ctx is None:
        return None
    last = [0.0]

    def report(done: int, total: int) -> None:
        anyio.from_thread.check_cancelled()
        now = time.monotonic()
        if done < total and now - last[0] < 0.25:
            return
        last[0] = now
        anyio.from_thread.run(ctx.report_progress, done, total, label)

    return report


def _status_of(repos: Repos) -> Callable[[Path], IndexStatus]:
    """A served root's index status, in its index folder."""

    def status(root: Path) -> IndexStatus:
        return service.index_status(root, index_dir=repos.index_dir if root == repos.default else None)

    return status


def _note_search(reply: SearchReply, mode: str) -> None:
    """What the call records of a search: hits shown (the query log), the
    budget the reply was made within (the settings' when the call named
    none) and the budget's sense."""
    shown = reply.files if mode == "files" else reply.packet.rendered if reply.packet else []
    note_hits(len(shown or []))
    note_budget(reply.max_chars)
    if mode == "json":
        note_evidence_budget()


def _repo_name(repos: Repos, where: str | None) -> str:
    """The repository a compare names: ``name`` or ``name@branch`` as given,
    a local caller's served folder as its name, or the only repository."""
    names = list(branches_of(repos.roots))
    if where is None or not where.strip():
        if len(names) == 1:
            return names[0]
        if not names:
            raise UsageError(
                "compare_branches compares the branches a server config names, and this server has none: "
                'serve with a config whose [roots] name each branch ("app@main" = FOLDER)'
            )
        raise UsageError(f"several repositories are served: pass `repo`, one of {', '.join(names)}")
    if parse_ref(where) is not None or repos.remote:
        return where
    root = repos.resolve(where)[0]
    key = next((k for k, path in repos.roots.items() if path == root), None)
    if key is None:
        raise unknown(where, names)
    return key.partition("@")[0]


def _navigate(
    repos: Repos,
    target: str,
    repo: str | list[str] | None,
    *,
    impact_of: bool,
    direction: str | None,
    depth: int | None,
    max_chars: int | None,
) -> str:
    """``find_references`` or ``impact``, in one repository or several."""
    from repolens import service

    repos.check_target(target)
    if names_several(repo):
        assert repo is not None
        reply = service.find_references_across(
            target,
            repos.targets(repo),
            impact_of=impact_of,
            direction=direction,
            depth=depth,
            max_chars=max_chars,
        )
        note_hits(reply.found)
        return repos.redact(reply.text)
    where, idx = repos.resolve(repo)  # type: ignore[arg-type]
    if impact_of:
        reply = service.impact(target, where, index_dir=idx, depth=depth, max_chars=max_chars)
    else:
        reply = service.find_references(
            target, where, index_dir=idx, direction=direction, depth=depth, max_chars=max_chars
        )
    note_hits(reply.found)
    return reply.text


def _siblings(repos: Repos, root: Path) -> list[Path]:
    """The other served branches of ``root``'s repository: indexes it may copy from."""
    key = next((k for k, path in repos.roots.items() if path == root), None)
    return siblings_of(key, repos.roots) if key is not None else []
