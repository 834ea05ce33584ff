"""The options several commands share, and the command class that names
arguments in errors as the command spells them."""

from __future__ import annotations

import click

from repolens.cli.reads import root_spelling
from repolens.fronts import serving

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


store_option = click.option(
    "--store", metavar="URL", expose_value=False, callback=_use_store, help=STORE_HELP
)


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
    return _index_dir(store_option(f))


class Command(click.Command):
    """A subcommand whose errors name arguments as this command spells them
    (``--root``, or ``ROOT`` where the root is positional; see
    :func:`repolens.fronts.spell`)."""

    def invoke(self, ctx: click.Context) -> object:
        names = {p.name: _spelling(p) for p in self.params if p.name} | root_spelling(ctx.params)
        with serving("cli", lambda name: names.get(name, name)):
            return super().invoke(ctx)


def _spelling(param: click.Parameter) -> str:
    return param.opts[0] if isinstance(param, click.Option) else param.human_readable_name


json_option = click.option("--json", "as_json", is_flag=True, help="JSON for programs.")
