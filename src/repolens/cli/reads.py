"""``search``, ``symbols`` and ``read``, the commands an agent runs once per
question, and ``index``, which scripts and agents run before them: runnable
without click.

Importing click costs a new process about as much as the rest of a ``read``
(~45 ms on a quiet machine), and a tenth of indexing a small repository.
Each command here is a plain function (the click commands in
:mod:`repolens.cli.commands` call the same ones) and a table of its
parameters; :func:`parse` takes an argument list only when it understands
all of it the way click would (known options, values click would accept,
no ``--help``) and gives up on anything else, so click handles it with its
own messages. It never reports a mistake itself: a mistake always goes
through click. ``tests/test_cli_reads.py`` holds the tables to the click
commands and the two paths to the same output.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Sequence

from repolens.budget import READ_MAX_CHARS
from repolens.cli.output import echo, emit, progress
from repolens.errors import UsageError
from repolens.fronts import serving

TYPE_CHECKING = False
if TYPE_CHECKING:
    from repolens.search.fanout import Target


def run_search(
    query: str | None,
    root: str | None,
    index_dir: str | None,
    top_k: int | None,
    max_chars: int | None,
    path: str | None,
    language: str | None,
    kind: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    keyword: tuple[str, ...],
    min_score: float | None,
    files_mode: bool,
    as_json: bool,
    query_id: str | None,
    explain: bool,
    repos: tuple[str, ...] = (),
    project: str | None = None,
    config_file: str | None = None,
) -> None:
    """``repolens search``; the JSON is compact (``--max-chars`` budgets the hits' text, not the keys).
    ``--repo`` and ``--project`` name configured repositories, several in one reply."""
    from repolens import service

    if files_mode and as_json:
        raise UsageError("--files and --json each choose the reply's form: pass one of them")
    options = {
        "top_k": top_k,
        "max_chars": max_chars,
        "path": path,
        "language": language,
        "kind": kind,
        "include": include or None,
        "exclude": exclude or None,
        "keyword": keyword or None,
        "min_score": min_score,
        "mode": "json" if as_json else "files" if files_mode else "packet",
        "query_id": query_id,
        "explain": explain,
    }
    several = named(repos, project, config_file, root, index_dir)
    if several is not None:
        echo(service.search_across(query, several, **options).text)  # type: ignore[arg-type]
        return
    if repos:  # one configured repository, by its name
        root, index_dir = str(one_named(repos, config_file).root), None
    reply = service.search_code(query, root, index_dir=index_dir, progress=progress("indexing"), **options)  # type: ignore[arg-type]
    if reply.indexed is not None:
        echo(reply.indexed.summary(), err=True)
    echo(reply.text)


def run_symbols(
    name: str,
    root: str | None,
    index_dir: str | None,
    kind: str | None,
    path: str | None,
    language: str | None,
    limit: int | None,
    max_chars: int | None,
    as_json: bool,
    repos: tuple[str, ...] = (),
    project: str | None = None,
    config_file: str | None = None,
) -> None:
    """``repolens symbols``; ``--repo`` and ``--project`` as for ``search``."""
    from repolens import service

    several = named(repos, project, config_file, root, index_dir)
    if several is not None:
        options = {"kind": kind, "path": path, "language": language, "limit": limit, "max_chars": max_chars}
        emit(service.find_symbol_across(name, several, **options), as_json)  # type: ignore[arg-type]
        return
    if repos:
        root, index_dir = str(one_named(repos, config_file).root), None
    result = service.find_symbol(
        name,
        root,
        index_dir=index_dir,
        kind=kind,
        path=path,
        language=language,
        limit=limit,
        max_chars=max_chars,
    )
    emit(result, as_json)


def named(
    repos: Sequence[str],
    project: str | None,
    config_file: str | None,
    root: str | None,
    index_dir: str | None,
) -> list[Target] | None:
    """The repositories ``--repo``/``--project`` name when they name several
    (None: one, or none); ``--root`` and ``--index-dir`` name one folder and
    are refused beside them, and ``--config`` alone means nothing."""
    if not repos and project is None:
        if config_file is not None:
            raise UsageError("--config names where --repo and --project look: pass one of them too")
        return None
    if root is not None or index_dir is not None:
        given = "--root" if root is not None else "--index-dir"
        raise UsageError(f"{given} names one folder, --repo and --project configured repositories: pass one")
    from repolens import service

    targets, several = service.named_repositories(repos, project, config_file)
    return targets if several else None


def one_named(repos: Sequence[str], config_file: str | None) -> Target:
    from repolens import service

    return service.named_repositories(repos, None, config_file)[0][0]


def run_read(path: str, start: int | None, end: int | None, root: str | None, max_chars: int) -> None:
    """``repolens read``: PATH START END, or a citation as the replies print
    it, ``PATH:START-END`` (``PATH:LINE`` and a compiler's ``PATH:LINE:COLUMN``
    read that one line)."""
    from repolens import service

    if start is None and end is None:
        path, start, end = cited_lines(path)
    elif start is None or end is None:
        raise UsageError("pass START and END, or the lines as PATH:START-END (src/app.py:10-40)")
    echo(service.read_snippet(root, path, start, end).render(max_chars))


def cited_lines(spec: str) -> tuple[str, int, int]:
    """(path, start, end) of ``PATH:START-END``, ``PATH:LINE`` or ``PATH:LINE:COLUMN``."""
    import re

    from repolens.service.navigation import PLACE

    cited = re.match(PLACE, spec)
    if cited is None:
        raise UsageError(f"no lines in {spec!r}: pass PATH START END, or PATH:START-END (src/app.py:10-40)")
    start = int(cited.group("start"))
    return cited.group("path"), start, int(cited.group("end") or start)


def one_root(root: str | None, root_option: str | None) -> str | None:
    """The root of a command that takes it as ROOT or as ``--root`` (``index``,
    ``watch``): either, or both when they name one folder; two folders is a
    ``UsageError``."""
    if root is None or root_option is None:
        return root if root is not None else root_option
    if os.path.realpath(os.path.expanduser(root)) != os.path.realpath(os.path.expanduser(root_option)):
        raise UsageError(
            f"ROOT {root!r} and --root {root_option!r} name different folders: give the repository root once"
        )
    return root


def root_spelling(values: dict[str, object]) -> dict[str, str]:
    """How errors spell the root of a command that takes ROOT and ``--root``: as it was given."""
    return {"root": "--root"} if values.get("root") is None and values.get("root_option") is not None else {}


def run_index(
    root: str | None,
    root_option: str | None,
    index_dir: str | None,
    max_file_bytes: int | None,
    vectors: bool | None,
    rebuild: bool,
) -> int:
    """``repolens index``; 130 when computing vectors was interrupted (it resumes next time)."""
    from repolens import service

    report = service.index_repo(
        one_root(root, root_option),
        index_dir=index_dir,
        rebuild=rebuild,
        max_file_bytes=max_file_bytes,
        vectors=vectors,
        progress=progress("indexing"),
        vector_progress=progress("embedding", unit="chunks"),
    )
    echo(report.summary())
    return 130 if report.vectors is not None and report.vectors.interrupted else 0


# How click converts each kind of value (``commands.py`` declares them):
# STR as given, INT by int(), FLOAT by float(), DIR a click.Path(file_okay=False), FLAG a
# boolean flag, ON and OFF the two spellings of an on/off flag pair
# (``--vectors/--no-vectors``, None when neither is given), MANY a
# repeatable string, STORE the ``--store`` option (no value reaches the
# command: it names this process's store, repolens.store.use_store_flag).
STR, INT, FLOAT, DIR, FLAG, ON, OFF, MANY, STORE = (
    "str",
    "int",
    "float",
    "dir",
    "flag",
    "on",
    "off",
    "many",
    "store",
)
_SWITCHES = {FLAG: True, ON: True, OFF: False}

# A parameter: (name, kind, default); options are keyed by every spelling,
# the first one being the one errors use, as click's ``opts[0]``.
Param = tuple[str, str, object]

_ROOT: dict[str, Param] = {"--root": ("root", DIR, None)}
_INDEX: dict[str, Param] = {"--index-dir": ("index_dir", DIR, None), "--store": ("store", STORE, None)}
_ACROSS: dict[str, Param] = {
    "--repo": ("repos", MANY, ()),
    "--project": ("project", STR, None),
    "--config": ("config_file", STR, None),
}

COMMANDS: dict[str, tuple[Callable[..., int | None], tuple[Param, ...], dict[str, Param]]] = {
    "search": (
        run_search,
        (("query", STR, None),),
        {
            **_ROOT,
            **_INDEX,
            "--top-k": ("top_k", INT, None),
            "-k": ("top_k", INT, None),
            "--max-chars": ("max_chars", INT, None),
            "--path": ("path", STR, None),
            "--lang": ("language", STR, None),
            "--kind": ("kind", STR, None),
            "--include": ("include", MANY, ()),
            "--exclude": ("exclude", MANY, ()),
            "--keyword": ("keyword", MANY, ()),
            "--min-score": ("min_score", FLOAT, None),
            "--files": ("files_mode", FLAG, False),
            "--json": ("as_json", FLAG, False),
            "--query-id": ("query_id", STR, None),
            "--explain": ("explain", FLAG, False),
            **_ACROSS,
        },
    ),
    "symbols": (
        run_symbols,
        (("name", STR, None),),
        {
            **_ROOT,
            **_INDEX,
            "--kind": ("kind", STR, None),
            "--path": ("path", STR, None),
            "--lang": ("language", STR, None),
            "--limit": ("limit", INT, None),
            "--max-chars": ("max_chars", INT, None),
            "--json": ("as_json", FLAG, False),
            **_ACROSS,
        },
    ),
    "index": (
        run_index,
        (("root", DIR, None),),
        {
            "--root": ("root_option", DIR, None),
            **_INDEX,
            "--max-file-bytes": ("max_file_bytes", INT, None),
            "--vectors": ("vectors", ON, None),
            "--no-vectors": ("vectors", OFF, None),
            "--rebuild": ("rebuild", FLAG, False),
        },
    ),
    "read": (
        run_read,
        (("path", STR, None), ("start", INT, None), ("end", INT, None)),
        {**_ROOT, "--max-chars": ("max_chars", INT, READ_MAX_CHARS)},
    ),
}


# Commands whose arguments may be left out (``search`` has its own rule; ``read``
# takes its lines as PATH:START-END too, and says what is missing itself).
_OPTIONAL_ARGUMENTS = frozenset({"index", "read"})

# click's shell-completion switch for prog_name "repolens".
_COMPLETE = "_REPOLENS_COMPLETE"


def parse(args: Sequence[str]) -> Callable[[], int] | None:
    """The command ``args`` ask for, ready to run, or None when click must
    read them (anything this parser is not sure of, including every mistake)."""
    if not args or args[0] not in COMMANDS or _COMPLETE in os.environ:
        return None  # (with click's completion variable set, click completes instead of running)
    run, arguments, options = COMMANDS[args[0]]
    given: dict[str, object] = {}
    positional: list[str] = []
    rest = list(args[1:])
    while rest:
        word = rest.pop(0)
        if not word.startswith("-"):
            positional.append(word)
            continue
        spelling, eq, value = word.partition("=") if word.startswith("--") else (word, "", "")
        if spelling not in options:
            return None  # --help, --, an unknown option, -k5: click's to read
        name, kind, _ = options[spelling]
        if kind in _SWITCHES:
            if eq or name in given:
                return None  # (click lets the last of a flag pair win; left to it)
            given[name] = _SWITCHES[kind]
            continue
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        if kind == MANY:
            if not _plain_value(value):
                return None
            given[name] = (*given.get(name, ()), value)  # type: ignore[misc]
        elif name in given or (converted := _converted(value, kind)) is None:
            return None
        else:
            given[name] = converted
    if len(positional) > len(arguments):
        return None
    for (name, kind, _), value in zip(arguments, positional, strict=False):
        if (converted := _converted(value, kind)) is None:
            return None
        given[name] = converted
    missing = arguments[len(positional) :]
    if args[0] == "search":
        if not positional and "query_id" not in given:
            return None  # click's path says what to pass
    elif missing and args[0] not in _OPTIONAL_ARGUMENTS:
        return None
    values = {name: default for name, _, default in (*arguments, *options.values())}
    values.update(given)
    spelling = {name: s for s, (name, _, _) in reversed(options.items())}  # the first spelling wins
    spelling.update({name: name.upper() for name, _, _ in arguments})
    spelling.update(root_spelling(values))
    store = values.pop("store", None)
    return lambda: _run(run, values, store, spelling)  # type: ignore[arg-type]


def _plain_value(value: str) -> bool:
    """A value click would take as it is: not empty (to leave the edge to
    click) and not option-like (click would take it too, but read it as the
    user's mistake more often than not: click's message then)."""
    return bool(value) and not value.startswith("-")


def _converted(value: str, kind: str) -> object | None:
    """``value`` as click converts it for ``kind``, or None where click
    would refuse it (or where this parser leaves the case to click)."""
    if not _plain_value(value):
        return None
    if kind in (INT, FLOAT):
        try:
            return int(value) if kind == INT else float(value)
        except ValueError:
            return None
    if kind == DIR:  # click.Path(file_okay=False): a missing path passes, a file or unreadable one does not
        try:
            st = os.stat(value)
        except OSError:
            return value
        return None if stat.S_ISREG(st.st_mode) or not os.access(value, os.R_OK) else value
    return value


def _run(
    run: Callable[..., int | None], values: dict[str, object], store: object, spelling: dict[str, str]
) -> int:
    """Run the command as click's ``invoke`` would: ``--store`` first, a
    RepolensError's fix naming arguments as the command line spells them, an
    interruption and a closed pipe handled as click handles them."""
    if store:
        from repolens.store import use_store_flag

        use_store_flag(str(store))
    try:
        with serving("cli", lambda name: spelling.get(name, name)):
            code = run(**values)
    except (EOFError, KeyboardInterrupt):
        echo("", err=True)  # click's blank line after ^C, then its Abort: "interrupted"
        raise KeyboardInterrupt from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        from click.utils import _PacifyFlushWrapper  # click's own answer to a closed pipe

        sys.stdout = _PacifyFlushWrapper(sys.stdout)  # type: ignore[assignment]
        sys.stderr = _PacifyFlushWrapper(sys.stderr)  # type: ignore[assignment]
        sys.exit(1)
    return code or 0
