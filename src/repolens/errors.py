"""Exceptions raised by the core.

Every error carries a one-line message that names the problem and the fix.
Adapters (CLI, MCP, HTTP) turn these into an exit code, an ``isError`` tool
result or an HTTP status; they never show a traceback for a ``RepolensError``.
"""

from __future__ import annotations


class RepolensError(Exception):
    """Base class. ``str(err)`` is the one-line message shown to the user."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        # One line, always: a message is read by people and by agents.
        super().__init__(" ".join(message.split()))


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
    fix, for the indexer that rebuilds and says why."""

    def __init__(self, problem: str, *, fix: str = "re-run `repolens index --rebuild`") -> None:
        super().__init__(f"{problem}: {fix}")
        self.problem = " ".join(problem.split())


class IndexReadOnlyError(RepolensError):
    """The index folder cannot be written (a read-only disk, another user's folder)."""


class IndexLockedError(RepolensError):
    """Another process is writing this index."""


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


class RunArgumentError(UsageError):
    """A ``run_tests`` argument is outside the allowed shapes (test path or filter)."""


class RunnerUnavailableError(UsageError):
    """The test runner is unknown or its tool is not installed; the message names the available ones."""
