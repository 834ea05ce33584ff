"""The ``repolens`` command: a thin adapter over :mod:`repolens.service`.

An agent may start one process per question, so a command pays only for
what it runs (``tests/test_cli_imports.py`` checks it): each command imports
its use case when it runs, and the three an agent runs per question
(``search``, ``symbols``, ``read``) do not even import click when their
arguments are plain (:mod:`repolens.cli.reads`: anything else, ``--help``
and every mistake included, goes through click, in
:mod:`repolens.cli.commands`, so it behaves exactly as click makes it).

Subcommands mirror the MCP tools and print the same text. Errors are one
line on stderr (``error: <problem>: <fix>``) with a non-zero exit code; no
traceback ever reaches the user for an error we can name.
"""

from __future__ import annotations

import _thread
import atexit
import gc
import os
import sys
import types
from collections.abc import Sequence

from repolens.cli.output import echo
from repolens.errors import RepolensError
from repolens.validate import check_utf8


def _collect_rarely() -> None:
    """Keep the cyclic garbage collector nearly out of a quick command that
    is its process's whole life (an agent's shell call; ``argv`` not given).

    Its passes over the modules a search imports, and over every object
    while the interpreter shuts down, were ~8% of a new process's search
    (docs/benchmarks.md, issue 15), for memory the process returns at once.
    So it runs only after 100,000 new container objects rather than 700,
    which a plain search never reaches, and the objects are frozen at exit,
    which the shutdown's own collections then leave out (objects are still
    freed by reference counting; nothing a quick command writes waits on a
    collection to be closed). Not switched off: a search that must first
    index a large repository still collects its cyclic garbage, now and then.
    """
    gc.set_threshold(100_000, 50, 50)
    atexit.register(gc.freeze)


# Standard-library modules that what a quick command imports imports in turn
# but never uses: ``dataclasses`` imports ``inspect`` (and with it ``ast``,
# ``dis`` and ``tokenize``) only to write a docstring for a class that has
# none, and ``urllib.parse`` (which ``pathlib`` imports) imports
# ``ipaddress`` only to check a bracketed host in a URL. Loading them was 8%
# of a new process's search (docs/benchmarks.md, issue 15).
_UNUSED_BY_QUICK_COMMANDS = ("inspect", "ipaddress")
_LOADING = _thread.RLock()


class _Deferred(types.ModuleType):
    """A module in ``sys.modules`` whose code has not run yet: it runs when
    the first name is looked up in it that it does not have, so every use
    of the module still works, only later. (``importlib.util.LazyLoader``
    runs it at the first look-up of any name, and an ``import`` statement
    looks up ``__spec__``, so it would load at once.)"""

    def __getattr__(self, name: str) -> object:
        with _LOADING:  # a thread arriving meanwhile waits for the whole module
            if type(self) is _Deferred and not self.__dict__.get("__deferred_running__"):
                self.__dict__["__deferred_running__"] = True  # a circular import sees a partial module
                try:
                    self.__spec__.loader.exec_module(self)
                finally:
                    del self.__dict__["__deferred_running__"]
                    self.__class__ = types.ModuleType
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None


def _defer_unused_modules() -> None:
    """Put the modules of ``_UNUSED_BY_QUICK_COMMANDS`` not yet imported in
    ``sys.modules`` as :class:`_Deferred` modules."""
    import importlib.util

    for name in _UNUSED_BY_QUICK_COMMANDS:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _Deferred
        sys.modules[name] = module


def main(argv: Sequence[str] | None = None, *, quick: bool = True) -> int:
    """Run one command; its exit code. ``quick=False`` sends every command
    through click (the tests compare the two paths)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        for arg in args:  # every user string of a command enters here
            check_utf8("command-line argument", arg)
        if quick:
            if argv is None:  # the process's own command line
                _defer_unused_modules()
            from repolens.cli.reads import parse

            if (run := parse(args)) is not None:
                if argv is None:  # the process's own command line
                    _collect_rarely()
                return run()
        from repolens.cli.commands import cli

        code = cli.main(args=args, prog_name="repolens", standalone_mode=False)
    except RepolensError as exc:
        echo(f"error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        echo("error: interrupted", err=True)
        return 130
    except Exception as exc:
        if "click" in sys.modules:  # else it cannot be one of click's
            from repolens.cli.commands import click_error_code

            if (handled := click_error_code(exc)) is not None:
                return handled
        if os.environ.get("REPOLENS_DEBUG"):
            raise
        echo(
            f"error: unexpected {type(exc).__name__}: {' '.join(str(exc).split())} "
            "(a bug; re-run with REPOLENS_DEBUG=1 for the traceback and report it)",
            err=True,
        )
        return 70
    return code if isinstance(code, int) else 0
