"""Exceptions raised by the core.

Every error carries a one-line message that names the problem and the fix.
Adapters (CLI, MCP, HTTP) turn these into an exit code, an ``isError`` tool
result or an HTTP status; they never show a traceback for a ``RepolensError``.

A fix that names an argument names it as the front serving the call spells
it: the core writes ``fix="pass an existing directory as {root}"`` with the
argument's API name in braces, and :func:`repolens.fronts.spell` fills it in
when the error is made (``--root`` or ``ROOT`` on the command line, the tool
argument in backquotes for an MCP tool, the API name outside any front), as
:func:`repolens.fronts.say` words what to run.
"""

from __future__ import annotations

from repolens.fronts import say, spell


class RepolensError(Exception):
    """Base class. ``str(err)`` is the one-line message shown to the user."""

    exit_code = 1

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        """``message`` is the problem, or the whole line when there is no ``fix``;
        ``fix`` is a template whose only fields are argument names (never user
        data, which belongs in ``message``)."""
        # One line, always: a message is read by people and by agents.
        self.problem = " ".join(message.split())
        self.fix = " ".join(fix.split()) if fix else None
        spelled = self.fix.format_map(_Spelling()) if self.fix is not None else None
        super().__init__(self.problem if spelled is None else f"{self.problem}: {spelled}")


# The fix of every "repository root is not a directory" error.
ROOT_FIX = "pass an existing directory as {root}"


class _Spelling(dict[str, str]):
    """``str.format_map``'s view of the serving front's spelling."""

    def __missing__(self, key: str) -> str:
        return spell(key)


class UsageError(RepolensError):
    """Bad arguments: a value out of range, a wrong type, a missing option."""

    exit_code = 2


class RootError(RepolensError):
    """The repository root does not exist or is not a directory."""


class NothingToIndexError(RepolensError):
    """Discovery found no file to index; the message says why."""


class IndexMissingError(RepolensError):
    """There is no index for this root yet."""


class IndexVersionError(RepolensError):
    """The index was written by another schema or tokenizer version."""


class IndexCorruptError(RepolensError):
    """The index files cannot be read. ``problem`` is the message without the
    fix, for the indexer that rebuilds and says why (``repolens index``
    rebuilds an index it cannot read instead of refreshing it)."""

    def __init__(self, problem: str, *, fix: str | None = None) -> None:
        super().__init__(problem, fix=fix or f"{say('run index')} to rebuild it")


class WorkerDiedError(RepolensError):
    """A worker process preparing files ended before its work was done."""

    def __init__(self) -> None:
        super().__init__(
            "a worker process preparing files ended unexpectedly (killed, or out of memory?); "
            "indexing stopped, keeping no half-written file",
            fix="run the command again to finish the index",
        )


class IndexIdentityError(RepolensError):
    """The index a root's key or folder names holds another repository
    (:mod:`repolens.store.identity`)."""


class IndexReadOnlyError(RepolensError):
    """The index folder cannot be written (a read-only disk, another user's folder)."""


class StorageFullError(RepolensError):
    """The disk holding the index has no space left for what was being
    written (which was undone). ``folder`` is the index folder; ``need``,
    when known, an estimate of the free space a retry needs (bytes)."""

    def __init__(self, folder: str, *, need: int = 0, free: int | None = None) -> None:
        self.folder, self.need = folder, need
        self.free = _free_bytes(folder) if free is None else free
        wanted = f"; the index needs about {_megabytes(need)} free" if need else ""
        super().__init__(
            f"no space left on the disk holding the index in {folder} ({_megabytes(self.free)} free{wanted})",
            fix=say("free space"),
        )


def _free_bytes(folder: str) -> int:
    """Free bytes on the disk of ``folder`` (or of its nearest existing parent)."""
    import os.path  # only for this error (not pathlib: the read path's start is kept small)
    import shutil

    path = folder
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 0


def _megabytes(n: int) -> str:
    """A size for a message: ``0.4 MB``, ``12 MB``."""
    mb = n / 1e6
    return f"{mb:.1f} MB" if mb < 10 else f"{mb:.0f} MB"


class IndexLockedError(RepolensError):
    """Another process is writing this index; ``holder`` says which
    (`` (pid 123)``, or "" when unknown)."""

    def __init__(self, message: str, *, fix: str | None = None, holder: str = "") -> None:
        super().__init__(message, fix=fix)
        self.holder = holder


class IndexBuildingError(IndexLockedError):
    """A repository has no published index yet, and another process is building it."""


class StoreUnavailableError(RepolensError):
    """The index's database server cannot be reached or failed mid-call
    (its URL, without the password, is in the message)."""


class StorePermissionError(RepolensError):
    """The index's database refuses this role a table it needs (to read an
    index, or to write one)."""


class PathError(RepolensError):
    """A path argument is absolute, escapes the root, or does not exist."""


class NotFoundError(RepolensError):
    """A chunk id, symbol, query id or repository name is unknown."""


class EmbedderError(RepolensError):
    """The embedding model cannot be loaded or does not answer."""


class RerankerError(RepolensError):
    """The cross-encoder reranker cannot be loaded or does not answer."""


class ConfigError(RepolensError):
    """A configuration file or environment variable has a bad value."""


class ServeError(RepolensError):
    """The server cannot listen at its address (in use, not of this machine, not allowed)."""


class ServerStartError(RepolensError):
    """The MCP server cannot start: its SDK does not load, or it refused the
    handshake the stdio front had already answered (:mod:`repolens.server.stdio`)."""


class ExtraMissingError(UsageError):
    """A feature needs an optional extra of repolens (``pip install 'repolens[NAME]'``)
    that is not installed: how repolens was installed, not a bug."""


class RunArgumentError(UsageError):
    """A ``run_tests`` argument is outside the allowed shapes (test path or filter)."""


class RunnerUnavailableError(UsageError):
    """The test runner is unknown or its tool is not installed; the message names the available ones."""
