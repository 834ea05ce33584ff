"""The commands of servers and teams: ``serve``, the branches' ``compare``,
``refresh --all`` for a timer, a store's ``indexes`` and ``drop``, and ``setup``
of an MCP client. Registered on the group by :mod:`repolens.cli.commands`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from repolens.budget import COMPARE_MAX_CHARS
from repolens.cli.options import (
    Command,
    budget_help,
    index_dir_option,
    json_option,
    root_option,
    store_option,
)
from repolens.cli.output import emit as _emit


@click.command(cls=Command, name="serve")
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
    from repolens.server.config import announce_missing, load_serve_config, missing_folders
    from repolens.validate import resolve_root

    http_only = {"--host": host, "--port": port, "--token-file": token_file, "--workers": workers}
    http_only.update({"--no-auth": no_auth or None, "--allow-rebuild": allow_rebuild or None})
    http_only["--allow-tests"] = allow_tests or None
    if not use_http and (given := [k for k, v in http_only.items() if v is not None]):
        raise click.UsageError(f"{given[0]} only applies with --http")
    if no_auth and token_file is not None:  # which one was meant? serving without the token would be a guess
        raise click.UsageError("--no-auth and --token-file contradict each other: pass one, not both")
    config = load_serve_config(
        config_file=config_file,
        root_specs=roots,
        token_file=token_file,
        query_log=query_log,
        allow_rebuild=allow_rebuild or None,
        allow_tests=allow_tests or None,
        watch=False if no_watch else None,
        read_token=use_http and not no_auth,
        # a --root typo is refused; a configured folder gone is named, and the others served
        missing_ok=not roots,
    )
    announce_missing(config)
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
    run_stdio(
        served,
        index_path,
        query_log=config.query_log,
        watch=config.watch,
        registry=config.registry,
        missing=missing_folders(config),
    )


config_option = click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Server config file with [roots] and [registry] (default: $REPOLENS_CONFIG, ./.repolens.toml; "
    "without roots: the git worktrees of the current directory).",
)


@click.command(cls=Command, name="compare")
@click.option("--repo", required=True, help="Repository name (NAME, or NAME@BRANCH for the base).")
@click.option("--base", default=None, help="Base branch (default: the registry's base, else main).")
@click.option("--head", default=None, help="Head branch (default: the registry's head, else the other one).")
@click.option("--path", "paths", multiple=True, help="A file or folder to compare (repeatable).")
@click.option("--query", default=None, help="Compare the files this search finds in either branch.")
@config_option
@store_option
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


@click.command(cls=Command, name="refresh")
@click.option("--all", "refresh_every", is_flag=True, help="Every configured root (every branch).")
@config_option
@store_option
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


@click.command(cls=Command, name="indexes")
@store_option
@json_option
def indexes_cmd(as_json: bool) -> None:
    """List the indexes of a store (--store, $REPOLENS_STORE, or the folder $REPOLENS_INDEX_DIR):
    key, generation, size and the repository each holds."""
    from repolens import service

    _emit(service.list_indexes(), as_json)


@click.command(cls=Command, name="drop")
@click.argument("key")
@store_option
@json_option
def drop_cmd(key: str, as_json: bool) -> None:
    """Remove the index KEY (as `repolens indexes` lists it) from a store: an orphan, or an
    index that holds another repository than its key's."""
    from repolens import service

    _emit(service.drop_index(key), as_json)


@click.command(cls=Command, name="setup")
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
