"""What a reader or writer of one generation asks of the store that opened it.

:class:`~repolens.store.postgres.PgStore` opens :class:`~.reader.PgReader`
and :class:`~.writer.PgWriter`, and they call back into it (the primary, the
replica in use, the remembered results). They name it by this protocol, so
that the store's module imports them and they import nothing back.
"""

from __future__ import annotations

from typing import Protocol


class StoreHandle(Protocol):
    """The part of ``PgStore`` its readers and writers use."""

    url: str  # the primary

    @property
    def location(self) -> str:
        """The server (password removed) and the repository's key, for messages and cache keys."""
        ...

    @property
    def read_url(self) -> str:
        """Where readers read: the first replica that answers, else the primary."""
        ...

    def replica_lag(self, url: str) -> str:
        """One line when the replica at ``url`` is behind the primary's published index, else ""."""
        ...

    def generation_id(self, name: str) -> int | None:
        """The database id of the generation ``name``, None when it does not exist."""
        ...

    def remember(self, query_id: str, payload: str) -> bool:
        """Keep a search's results on the primary (best effort: False when it cannot)."""
        ...

    def recall(self, query_id: str) -> str | None:
        """The results ``remember`` kept for ``query_id``, None when there are none."""
        ...
