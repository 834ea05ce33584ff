"""The click commands of ``repolens`` (run by :func:`repolens.cli.main`).

Each command imports what it uses when it runs: keep module-level imports
light (``tests/test_cli_imports.py`` checks it). ``search``, ``symbols`` and
``read`` run the functions of :mod:`repolens.cli.reads`, which also run
without click.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from repolens import __version__
from repolens.budget import (
    CHUNK_MAX_CHARS,
    COMPARE_MAX_CHARS,
    FOCUS_BLOCKS_PER_FILE,
    FOCUS_MAX_BLOCKS,
    FOCUS_MAX_CHARS,
    FOCUS_MAX_FILES,
    HISTORY_MAX_CHARS,
    HISTORY_TOP_K,
    READ_MAX_CHARS,
    SYMBOLS_LIMIT,
    SYMBOLS_MAX_CHARS,
)
from repolens.cli.output import emit as _emit
from repolens.cli.reads import one_root, root_spelling, run_index, run_read, run_search, run_symbols
from repolens.errors import RepolensError
from repolens.settings import Settings
from repolens.testrun.limits import DEFAULT_MAX_CHARS as TEST_MAX_CHARS
from repolens.testrun.limits import DEFAULT_TIMEOUT_S as TEST_TIMEOUT_S
from repolens.validate import MAX_TOP_K

ROOT_HELP = "Repository root (default: the current directory)."


def budget_help(default: int) -> str:
    """The help of a ``--max-chars`` option whose default every front shares (:mod:`repolens.budget`)."""
    return f"Reply budget in characters (default {default})."


INDEX_DIR_HELP = "Index folder (default: <root>/.repolens, or $REPOLENS_INDEX_DIR/<root>)."


root_option = click.option("--root", "root", default=None, type=click.Path(file_okay=False), help=ROOT_HELP)
# For the commands whose root is the argument ROOT: --root too, as every other command takes it.
root_also_option = click.option(
    "--root", "root_option", default=None, type=click.Path(file_okay=False), help="The same as ROOT."
)
_index_dir = click.option("--index-dir", default=None, type=click.Path(file_okay=False), help=INDEX_DIR_HELP)
STORE_HELP = (
    "PostgreSQL store URL (postgresql://[user@]host[:port]/db); default $REPOLENS_STORE, "
    "else [store] url in .repolens.toml, else the local index folder. Not with --index-dir."
)


def _use_store(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``--store`` names where every index this process opens lives, over
    ``REPOLENS_STORE`` and config files (:func:`repolens.store.locate`)."""
    if value:
        from repolens.store import use_store_flag

        use_store_flag(value)


_store = click.option("--store", metavar="URL", expose_value=False, callback=_use_store, help=STORE_HELP)


def across_options(f):  # type: ignore[no-untyped-def]
    """``--repo``, ``--project``, ``--config``: configured repositories to ask, several in one reply."""
    f = click.option(
        "--config",
        "config_file",
        default=None,
        help="Config file whose [roots] and [registry] --repo and --project name "
        "(default: $REPOLENS_CONFIG, ./.repolens.toml; without roots: the git worktrees here).",
    )(f)
    f = click.option(
        "--project", default=None, help="Every configured repository of this registry project, in one reply."
    )(f)
    return click.option(
        "--repo",
        "repos",
        multiple=True,
        help="A configured repository (NAME or NAME@BRANCH; repeatable; '*': every one); "
        "several answer in one reply, each hit named NAME@BRANCH:PATH.",
    )(f)


def index_dir_option(f):  # type: ignore[no-untyped-def]
    """Where the index lives: ``--index-dir`` (a local folder) and ``--store`` (a database)."""
    return _index_dir(_store(f))


class _Command(click.Command):
    """A subcommand whose errors name arguments as this command spells them
    (``--root``, or ``ROOT`` where the root is positional; see
    :meth:`repolens.errors.RepolensError.spelled`)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except RepolensError as exc:
            names = {p.name: _spelling(p) for p in self.params if p.name} | root_spelling(ctx.params)
            exc.args = (exc.spelled(lambda name: names.get(name, name)),)
            raise


def _spelling(param: click.Parameter) -> str:
    return param.opts[0] if isinstance(param, click.Option) else param.human_readable_name


class _Group(click.Group):
    command_class = _Command


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="repolens")
def cli() -> None:
    """Local code search for coding agents: small, cited evidence packets instead of whole files."""


@cli.command("index")
@click.argument("root", required=False, type=click.Path(file_okay=False))
@root_also_option
@index_dir_option
@click.option("--max-file-bytes", type=int, default=None, help="Skip files larger than this (default 1 MiB).")
@click.option(
    "--vectors/--no-vectors",
    default=None,
    help="Compute dense vectors after the lexical index (default: the `vectors` setting).",
)
@click.option("--rebuild", is_flag=True, help="Build a fresh index instead of updating the current one.")
@click.pass_context
def index_cmd(ctx: click.Context, **params: Any) -> None:
    """Index ROOT (default: the current directory), or bring its index up to date."""
    if code := run_index(**params):
        ctx.exit(code)


@cli.command("status")
@root_option
@index_dir_option
@click.option("--json", "as_json", is_flag=True, help="JSON for programs.")
def status_cmd(root: str | None, index_dir: str | None, as_json: bool) -> None:
    """What the index holds, and how many files changed on disk since it was updated."""
    from repolens import service

    status = service.index_status(root, index_dir=index_dir)
    if as_json:
        click.echo(json.dumps(status.to_json(), indent=2))
    else:
        click.echo(status.render())


@cli.command("search")
@click.argument("query", required=False)
@root_option
@index_dir_option
@click.option(
    "--top-k",
    "-k",
    type=int,
    default=None,
    help=f"Hits (files with --files) to show (default: the top_k setting, {Settings.top_k}; "
    f"max {MAX_TOP_K}).",
)
@click.option(
    "--max-chars",
    type=int,
    default=None,
    help=f"Reply budget in characters (default: the max_chars setting, {Settings.max_chars}).",
)
@click.option("--path", default=None, help="Only search under this folder or file.")
@click.option("--lang", "language", default=None, help="Only files of this language (e.g. python, or py).")
@click.option("--kind", default=None, help="Only chunks of this kind (function or fn, class, method, ...).")
@click.option("--include", multiple=True, help="Only paths matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Skip paths matching this glob (repeatable).")
@click.option(
    "--keyword", multiple=True, help="Only hits containing this exact text (repeatable: all of them)."
)
@click.option("--min-score", type=float, default=None, help="Drop hits scoring below this.")
@click.option("--files", "files_mode", is_flag=True, help="Ranked file overview instead of the packet.")
@click.option("--json", "as_json", is_flag=True, help="JSON for programs (hits, omitted hits, files).")
@click.option(
    "--query-id", default=None, help="Re-render a previous search (its query_id) without searching."
)
@click.option(
    "--explain", is_flag=True, help="Show each hit's rank and score per leg and the priors applied."
)
@across_options
def search_cmd(**params: Any) -> None:
    """Answer QUERY with an evidence packet (indexes the repository first if needed)."""
    if params["query"] is None and params["query_id"] is None:
        raise click.UsageError("Missing argument 'QUERY': pass a question, or --query-id ID")
    run_search(**params)


json_option = click.option("--json", "as_json", is_flag=True, help="JSON for programs.")


@cli.command("symbols")
@click.argument("name")
@root_option
@index_dir_option
@click.option("--kind", default=None, help="Only this kind (function or fn, method, class, ...).")
@click.option("--path", default=None, help="Only under this folder or file.")
@click.option("--lang", "language", default=None, help="Only this language (e.g. python, or py).")
@click.option(
    "--limit", type=int, default=None, help=f"Most matches to list (1-200; default {SYMBOLS_LIMIT})."
)
@click.option("--max-chars", type=int, default=None, help=budget_help(SYMBOLS_MAX_CHARS))
@json_option
@across_options
def symbols_cmd(**params: Any) -> None:
    """Find definitions named NAME (exact, case- and separator-insensitive, qualified, fuzzy)."""
    run_symbols(**params)


@cli.command("refs")
@click.argument("target")
@root_option
@index_dir_option
@click.option(
    "--callers",
    "direction",
    flag_value="callers",
    default=None,
    help="The definitions whose calls reach TARGET.",
)
@click.option("--callees", "direction", flag_value="callees", help="The definitions TARGET calls.")
@click.option(
    "--depth", type=int, default=None, help="Calls followed with --callers/--callees (1-3, default 1)."
)
@click.option("--max-chars", type=int, default=None, help="Reply budget in characters (default 6000).")
@across_options
def refs_cmd(**params: Any) -> None:
    """Where the definition TARGET (a name, Class.method, or PATH:LINE) is used,
    grouped by file, resolved uses before name matches; or its callers or callees."""
    run_navigation(impact_of=False, **params)


@cli.command("impact")
@click.argument("target")
@root_option
@index_dir_option
@click.option("--depth", type=int, default=None, help="Steps of uses followed (1-3, default 2).")
@click.option("--max-chars", type=int, default=None, help="Reply budget in characters (default 6000).")
@across_options
def impact_cmd(**params: Any) -> None:
    """What reaches the definitions TARGET names (PATH, PATH:LINE, PATH:START-END
    or a name): callers, importers and subclasses by depth, and the tests apart."""
    run_navigation(impact_of=True, direction=None, **params)


def run_navigation(
    *,
    impact_of: bool,
    target: str,
    root: str | None,
    index_dir: str | None,
    direction: str | None,
    depth: int | None,
    max_chars: int | None,
    repos: tuple[str, ...] = (),
    project: str | None = None,
    config_file: str | None = None,
) -> None:
    from repolens import service
    from repolens.cli.reads import named, one_named

    several = named(repos, project, config_file, root, index_dir)
    if several is not None:
        reply = service.find_references_across(
            target, several, impact_of=impact_of, direction=direction, depth=depth, max_chars=max_chars
        )
    else:
        if repos:
            root, index_dir = str(one_named(repos, config_file).root), None
        if impact_of:
            reply = service.impact(target, root, index_dir=index_dir, depth=depth, max_chars=max_chars)
        else:
            reply = service.find_references(
                target, root, index_dir=index_dir, direction=direction, depth=depth, max_chars=max_chars
            )
    click.echo(reply.text)


@cli.command("focus")
@click.argument("query")
@root_option
@index_dir_option
@click.option("--path", "paths", multiple=True, help="Only matches in this file or folder (repeatable).")
@click.option(
    "--max-files", type=int, default=None, help=f"Most files to show (1-50; default {FOCUS_MAX_FILES})."
)
@click.option(
    "--blocks-per-file",
    type=int,
    default=None,
    help=f"Most blocks of one file (1-50; default {FOCUS_BLOCKS_PER_FILE}).",
)
@click.option(
    "--max-blocks", type=int, default=None, help=f"Most blocks in all (1-100; default {FOCUS_MAX_BLOCKS})."
)
@click.option("--max-chars", type=int, default=None, help=budget_help(FOCUS_MAX_CHARS))
@json_option
def focus_cmd(
    query: str,
    root: str | None,
    index_dir: str | None,
    paths: tuple[str, ...],
    max_files: int | None,
    blocks_per_file: int | None,
    max_blocks: int | None,
    max_chars: int | None,
    as_json: bool,
) -> None:
    """Whole enclosing definitions (functions, classes) of QUERY's matches."""
    from repolens import service

    result = service.focus(
        query,
        root,
        index_dir=index_dir,
        paths=paths,
        max_files=max_files,
        blocks_per_file=blocks_per_file,
        max_blocks=max_blocks,
        max_chars=max_chars,
    )
    _emit(result, as_json)


@cli.command("history")
@click.argument("query", required=False)
@root_option
@index_dir_option
@click.option("--path", default=None, help="The commits that touched this file, with its changed lines.")
@click.option(
    "--top-k",
    "-k",
    type=int,
    default=None,
    help=f"Most commits to list (1-{MAX_TOP_K}; default {HISTORY_TOP_K}).",
)
@click.option("--max-chars", type=int, default=None, help=budget_help(HISTORY_MAX_CHARS))
@json_option
@across_options
def history_cmd(
    query: str | None,
    root: str | None,
    index_dir: str | None,
    path: str | None,
    top_k: int | None,
    max_chars: int | None,
    as_json: bool,
    repos: tuple[str, ...],
    project: str | None,
    config_file: str | None,
) -> None:
    """The past commits most relevant to QUERY, to a file (--path), or both: why code is as it is.
    With several repositories (--repo, --project), the commits most like QUERY across them."""
    from repolens import service
    from repolens.cli.reads import named, one_named

    several = named(repos, project, config_file, root, index_dir)
    if several is not None:
        _emit(
            service.search_history_across(query, several, path=path, top_k=top_k, max_chars=max_chars),
            as_json,
        )
        return
    if repos:
        root, index_dir = str(one_named(repos, config_file).root), None
    result = service.search_history(
        query, root, index_dir=index_dir, path=path, top_k=top_k, max_chars=max_chars
    )
    _emit(result, as_json)


@cli.command("chunk")
@click.argument("chunk_id")
@root_option
@index_dir_option
@click.option("--max-chars", type=int, default=None, help=budget_help(CHUNK_MAX_CHARS))
@json_option
def chunk_cmd(
    chunk_id: str, root: str | None, index_dir: str | None, max_chars: int | None, as_json: bool
) -> None:
    """Print one stored chunk by its id (ids come from search --json and focus --json)."""
    from repolens import service

    _emit(service.get_chunk(chunk_id, root, index_dir=index_dir, max_chars=max_chars), as_json)


@cli.command("test", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@root_option
@click.option(
    "--timeout",
    "timeout_s",
    type=float,
    default=None,
    help=f"Seconds before kill (default {TEST_TIMEOUT_S:g}).",
)
@click.option("--max-chars", type=int, default=None, help=budget_help(TEST_MAX_CHARS))
@click.option("--list", "list_runners", is_flag=True, help="List the runners this repository can use.")
@click.argument("runner", required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def test_cmd(
    ctx: click.Context,
    root: str | None,
    timeout_s: float | None,
    max_chars: int | None,
    list_runners: bool,
    runner: str | None,
    args: tuple[str, ...],
) -> None:
    """Run RUNNER's tests (pytest, npm, go, cargo, ...) and print only the failure-relevant lines.

    ARGS may be test paths and one filter (-k EXPR for pytest); options go
    before RUNNER. Exits with the test run's exit code (124 on timeout).
    """
    from repolens import testrun

    where = root or "."
    if list_runners or runner is None:
        click.echo(testrun.render_runners(testrun.available_runners(where)))
        if runner is None and not list_runners:
            raise click.UsageError("Missing argument 'RUNNER': name one of the runners listed above")
        return
    # Everything after RUNNER goes to the runner: an option of ours there was misplaced.
    ours = {opt: param for param in ctx.command.get_params(ctx) for opt in param.opts if opt[0] == "-"}
    if misplaced := next((a.split("=", 1)[0] for a in args if a.split("=", 1)[0] in ours), None):
        option = misplaced if getattr(ours[misplaced], "is_flag", False) else f"{misplaced} ..."
        raise click.UsageError(
            f"{misplaced} belongs to repolens, not to {runner}: repolens options go before RUNNER, "
            f"as in `repolens test {option} {runner} [ARGS]`"
        )
    run = testrun.run_tests(where, runner, args, timeout_s=timeout_s, max_chars=max_chars)
    click.echo(testrun.render(run))
    ctx.exit(run.exit_code)


@cli.command("doctor")
@root_option
@index_dir_option
@click.option("--json", "as_json", is_flag=True, help="JSON for programs.")
@click.pass_context
def doctor_cmd(ctx: click.Context, root: str | None, index_dir: str | None, as_json: bool) -> None:
    """Check each leg (index, lexical, dense, reranker, history) and say what to fix."""
    from repolens.ops.doctor import diagnose

    result = diagnose(root, index_dir)
    click.echo(json.dumps(result.to_json(), indent=2) if as_json else result.render())
    if not result.ok:
        ctx.exit(1)


@cli.command("watch")
@click.argument("root", required=False, type=click.Path(file_okay=False))
@root_also_option
@index_dir_option
def watch_cmd(root: str | None, root_option: str | None, index_dir: str | None) -> None:
    """Keep the index of ROOT fresh as files change (Ctrl-C to stop)."""
    from repolens.index.watch import watch

    def show(event) -> None:
        click.echo(event.line(), err=bool(event.error))

    watch(one_root(root, root_option), index_dir=index_dir, on_event=show)


@cli.command("read")
@click.argument("path")
@click.argument("start", type=int)
@click.argument("end", type=int)
@root_option
@click.option(
    "--max-chars",
    type=int,
    default=READ_MAX_CHARS,
    show_default=True,
    help="Reply budget in characters; lines past it are left out, with the read that continues.",
)
def read_cmd(**params: Any) -> None:
    """Print lines START..END of PATH (at most 300 per call)."""
    run_read(**params)


@cli.command("serve")
@click.option(
    "--root",
    "roots",
    multiple=True,
    metavar="[NAME=]PATH",
    help="Repository to serve, as PATH (named after its folder) or NAME=PATH; repeatable. "
    "Default: $REPOLENS_ROOTS, the config file's [roots], else (stdio) the current directory.",
)
@index_dir_option
@click.option("--http", "use_http", is_flag=True, help="Serve MCP over streamable HTTP at /mcp, not stdio.")
@click.option("--host", default=None, help="HTTP: address to bind (default 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, help="HTTP: port (default 8765).")
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="HTTP: file holding the bearer token (else $REPOLENS_TOKEN, $REPOLENS_TOKEN_FILE).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=None,
    help="HTTP: worker processes answering calls (default: the number of cores).",
)
@click.option("--no-auth", is_flag=True, help="HTTP: serve without a token (loopback hosts only).")
@click.option("--allow-rebuild", is_flag=True, help="HTTP: let callers run index_repo with rebuild=true.")
@click.option("--allow-tests", is_flag=True, help="HTTP: let callers run the repository's tests (run_tests).")
@click.option("--no-watch", is_flag=True, help="Do not keep the index fresh with a file watcher.")
@click.option(
    "--query-log", type=click.Path(dir_okay=False), default=None, help="Append one JSON line per tool call."
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Server config file with [serve] and [roots] (default: ./.repolens.toml).",
)
def serve_cmd(
    roots: tuple[str, ...],
    index_dir: str | None,
    use_http: bool,
    host: str | None,
    port: int | None,
    token_file: str | None,
    workers: int | None,
    no_auth: bool,
    allow_rebuild: bool,
    allow_tests: bool,
    no_watch: bool,
    query_log: str | None,
    config_file: str | None,
) -> None:
    """Run the MCP server over stdio (for Claude Code, Codex, Cursor, ...) or, with --http,
    over streamable HTTP with a bearer token and allow-listed repositories."""
    from repolens.branches.roots import name_for
    from repolens.server.config import load_serve_config
    from repolens.validate import resolve_root

    http_only = {"--host": host, "--port": port, "--token-file": token_file, "--workers": workers}
    http_only.update({"--no-auth": no_auth or None, "--allow-rebuild": allow_rebuild or None})
    http_only["--allow-tests"] = allow_tests or None
    if not use_http and (given := [k for k, v in http_only.items() if v is not None]):
        raise click.UsageError(f"{given[0]} only applies with --http")
    config = load_serve_config(
        config_file=config_file,
        root_specs=roots,
        token_file=token_file,
        query_log=query_log,
        allow_rebuild=allow_rebuild or None,
        allow_tests=allow_tests or None,
        watch=False if no_watch else None,
        read_token=use_http and not no_auth,
    )
    index_path = Path(index_dir) if index_dir else None
    if index_path is not None:  # two places named for one index: refused now, not at the first call
        from repolens.store import locate

        locate(next(iter(config.roots.values()), resolve_root(None)), index_path)
    if use_http:
        from repolens.server.web import DEFAULT_HOST, DEFAULT_PORT, serve
        from repolens.server.workers import default_workers

        serve(
            config,
            host=host or DEFAULT_HOST,
            port=port or DEFAULT_PORT,
            no_auth=no_auth,
            index_dir=index_path,
            workers=workers or default_workers(),
        )
        return
    from repolens.server.stdio import run_stdio

    served = config.roots
    if not served:
        cwd = resolve_root(None)
        served = {name_for(cwd): cwd}
    run_stdio(served, index_path, query_log=config.query_log, watch=config.watch, registry=config.registry)


config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Server config file with [roots] and [registry] (default: $REPOLENS_CONFIG, ./.repolens.toml; "
    "without roots: the git worktrees of the current directory).",
)


@cli.command("compare")
@click.option("--repo", required=True, help="Repository name (NAME, or NAME@BRANCH for the base).")
@click.option("--base", default=None, help="Base branch (default: the registry's base, else main).")
@click.option("--head", default=None, help="Head branch (default: the registry's head, else the other one).")
@click.option("--path", "paths", multiple=True, help="A file or folder to compare (repeatable).")
@click.option("--query", default=None, help="Compare the files this search finds in either branch.")
@config_option
@_store
@click.option("--max-chars", type=int, default=None, help=budget_help(COMPARE_MAX_CHARS))
@json_option
def compare_cmd(
    repo: str,
    base: str | None,
    head: str | None,
    paths: tuple[str, ...],
    query: str | None,
    config_file: str | None,
    max_chars: int | None,
    as_json: bool,
) -> None:
    """Which files differ between two branches of a repository: same, modified, only_head,
    only_base (or single_branch when it has one), by content hash."""
    from repolens import service
    from repolens.branches.roots import configured_roots

    roots, registry, _ = configured_roots(config_file)
    result = service.compare_branches(
        repo, roots, registry, base=base, head=head, paths=paths, query=query, max_chars=max_chars
    )
    _emit(result, as_json)


@cli.command("refresh")
@click.option("--all", "refresh_every", is_flag=True, help="Every configured root (every branch).")
@config_option
@_store
@click.pass_context
def refresh_cmd(ctx: click.Context, refresh_every: bool, config_file: str | None) -> None:
    """Refresh every configured repository and branch (for cron or a systemd timer; safe while
    servers serve), else every git worktree of the current directory: one JSON line per root
    on stdout (a failed one with its error; the others are still refreshed), exit 1 if any failed."""
    if not refresh_every:
        raise click.UsageError("pass --all (to refresh one repository, run `repolens index ROOT`)")
    from repolens import service

    failed = 0
    for result in service.refresh_all(config_file):
        click.echo(json.dumps(result.to_json(), ensure_ascii=False))
        failed += result.error is not None
    if failed:
        ctx.exit(1)


@cli.command("indexes")
@_store
@json_option
def indexes_cmd(as_json: bool) -> None:
    """List the indexes of a store (--store, $REPOLENS_STORE, or the folder $REPOLENS_INDEX_DIR):
    key, generation, size and the repository each holds."""
    from repolens import service

    _emit(service.list_indexes(), as_json)


@cli.command("drop")
@click.argument("key")
@_store
@json_option
def drop_cmd(key: str, as_json: bool) -> None:
    """Remove the index KEY (as `repolens indexes` lists it) from a store: an orphan, or an
    index that holds another repository than its key's."""
    from repolens import service

    _emit(service.drop_index(key), as_json)


@cli.command("setup")
@click.argument("target", type=click.Choice(["claude", "codex", "cursor", "vscode", "agents-md"]))
@root_option
@click.option(
    "--scope",
    type=click.Choice(["project", "user"]),
    default=None,
    help="project: a file in the repository; user: your own config (default: project; codex: user).",
)
@click.option("--print", "print_only", is_flag=True, help="Show the entry instead of writing it.")
@click.option(
    "--file",
    "filename",
    default="AGENTS.md",
    show_default=True,
    help="agents-md: the instruction file (AGENTS.md, CLAUDE.md, ...).",
)
def setup_cmd(target: str, root: str | None, scope: str | None, print_only: bool, filename: str) -> None:
    """Configure an MCP client (claude, codex, cursor, vscode) to start repolens for this
    repository, or append a short search-guidance block to AGENTS.md (agents-md)."""
    from repolens.ops.clients import setup_agents_md, setup_client
    from repolens.validate import resolve_root

    repo = resolve_root(root)
    if target == "agents-md":
        if scope:
            raise click.UsageError("--scope does not apply to agents-md")
        click.echo(setup_agents_md(repo, filename, print_only=print_only).summary())
        return
    click.echo(setup_client(target, repo, scope=scope, print_only=print_only).summary())


def click_error_code(exc: Exception) -> int | None:
    """The exit code of one of click's exceptions, its message printed as
    repolens prints errors; None for any other exception."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):  # bare `repolens`: what it can do
        click.echo(exc.ctx.get_help())
        return 0
    if isinstance(exc, click.exceptions.Abort):
        click.echo("error: interrupted", err=True)
        return 130
    if isinstance(exc, click.ClickException):
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if isinstance(exc, click.UsageError) and ctx is not None:
            hint = f" (see `{ctx.command_path} --help`)"
        click.echo(f"error: {exc.format_message()}{hint}", err=True)
        return exc.exit_code
    return None
