"""The click commands of ``repolens`` (run by :func:`repolens.cli.main`).

Each command imports what it uses when it runs: keep module-level imports
light (``tests/test_cli_imports.py`` checks it). ``search``, ``symbols`` and
``read`` run the functions of :mod:`repolens.cli.reads`, which also run
without click.
"""

from __future__ import annotations

import json
from typing import Any

import click

from repolens import __version__
from repolens.budget import (
    CHUNK_MAX_CHARS,
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
from repolens.cli import team
from repolens.cli.options import (
    Command,
    across_options,
    budget_help,
    index_dir_option,
    json_option,
    root_also_option,
    root_option,
)
from repolens.cli.output import emit as _emit
from repolens.cli.reads import one_root, run_index, run_read, run_search, run_symbols
from repolens.settings import Settings
from repolens.testrun.limits import DEFAULT_MAX_CHARS as TEST_MAX_CHARS
from repolens.testrun.limits import DEFAULT_TIMEOUT_S as TEST_TIMEOUT_S
from repolens.validate import MAX_TOP_K


class _Group(click.Group):
    command_class = Command


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
    """Keep the index of ROOT fresh as files change, and its vectors when it has
    them (Ctrl-C to stop)."""
    from repolens.index.watch import watch_and_embed

    shown = []

    def show(event) -> None:
        if not event.quiet or not shown:  # the first refresh says it watches; later ones what changed
            shown.append(event)
            click.echo(event.line(), err=bool(event.error))

    def say(line: str) -> None:  # the embedder's: the dense graph updated, or why embedding stopped
        click.echo(f"watch: {line}", err=True)

    watch_and_embed(one_root(root, root_option), index_dir=index_dir, on_event=show, on_line=say)


@cli.command("read")
@click.argument("path")
@click.argument("start", type=int, required=False)
@click.argument("end", type=int, required=False)
@root_option
@click.option(
    "--max-chars",
    type=int,
    default=READ_MAX_CHARS,
    show_default=True,
    help="Reply budget in characters; lines past it are left out, with the read that continues.",
)
def read_cmd(**params: Any) -> None:
    """Print lines START..END of PATH (at most 300 per call); PATH:START-END
    (a reply's citation) reads the same."""
    run_read(**params)


# The commands of servers and teams live apart (repolens.cli.team).
for _command in (
    team.serve_cmd,
    team.compare_cmd,
    team.refresh_cmd,
    team.indexes_cmd,
    team.drop_cmd,
    team.setup_cmd,
):
    cli.add_command(_command)


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
