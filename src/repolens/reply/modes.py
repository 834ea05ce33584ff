"""A search outcome rendered in the mode asked for: ``packet`` (the evidence
packet), ``files`` (the ranked file overview) or ``json`` (the packet's
evidence and the overview, for programs; see :mod:`repolens.reply.json_reply`).

Every mode ends with the search's ``query_id`` (in JSON, as a key), which
re-renders the same outcome in another mode without searching again; a
search of several repositories is not remembered, and has none.
"""

from __future__ import annotations

import functools
import json

from repolens.reply.files import POINTER_EVIDENCE_HITS, FileEntry, file_overview, ranked_files, render_files
from repolens.reply.json_reply import search_json
from repolens.reply.packet import Packet, PacketOptions, render_packet
from repolens.search.hits import SearchOutcome
from repolens.tokens import TermsIn

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from repolens.index.report import IndexReport
    from repolens.settings import Settings

MODES = ("packet", "files", "json")
# The JSON form's file overview lists at least this many files (mode=files
# lists ``top_k``, as it is asked).
MIN_OVERVIEW_FILES = 10


class SearchReply:
    """One search's answer. ``text`` is exactly what the user or agent reads,
    for every mode; ``to_json`` is the JSON form (mode=json) of the same
    packet the text form shows.

    Filled in as it is rendered; a plain class (as
    :class:`~repolens.search.hits.SearchOutcome`, and for the same reason)."""

    __slots__ = ("files", "indexed", "max_chars", "mode", "notes", "packet", "query", "query_id", "text")

    def __init__(
        self, query: str, query_id: str | None, mode: str, text: str, notes: tuple[str, ...] = ()
    ) -> None:
        self.query = query
        self.query_id = query_id
        self.mode = mode
        self.text = text
        self.packet: Packet | None = None
        self.files: list[FileEntry] | None = None
        self.indexed: IndexReport | None = None  # set when this call had to build the index first
        self.notes = notes
        self.max_chars = 0  # the budget it was rendered within (the settings')

    def to_json(self) -> dict[str, Any]:
        return search_json(self.query, self.query_id, self.packet, self.files, self.notes)


def render_search(
    outcome: SearchOutcome, query_id: str | None, mode: str, settings: Settings, *, explain: bool = False
) -> SearchReply:
    """``outcome`` in ``mode``, within ``settings.max_chars`` (the JSON
    form budgets the evidence, not its keys)."""
    query, hits, parsed = outcome.query.text, outcome.hits, outcome.query
    footer = f"query_id {query_id}" if query_id else ""
    reply = SearchReply(query=query, query_id=query_id, mode=mode, text="", notes=tuple(outcome.notes))
    reply.max_chars = settings.max_chars
    overview_size = max(settings.top_k, MIN_OVERVIEW_FILES)
    found_in = TermsIn(parsed.tokens)  # the question's terms in the hits' text: each piece split once
    if mode == "files":
        reply.files = file_overview(hits, parsed, limit=settings.top_k, found_in=found_in)
        reply.text = render_files(reply.files, settings.max_chars, footer, outcome.notes)
        return reply
    opts = PacketOptions.from_settings(
        settings,
        max_chars=settings.max_chars - (len(footer) + 2 if footer else 0),
        explain=explain,
        notes=outcome.notes,
        keywords=outcome.filters.keywords,
        files=functools.partial(
            ranked_files, hits, parsed, found_in=found_in, evidence_hits=POINTER_EVIDENCE_HITS
        ),
    )
    reply.packet = render_packet(query, hits, dict(parsed.weighted()), opts, found_in)
    if mode == "json":
        reply.files = file_overview(hits, parsed, limit=overview_size, found_in=found_in)
        reply.text = json.dumps(reply.to_json(), ensure_ascii=False)
    else:
        reply.text = f"{reply.packet.text}\n\n{footer}" if footer else reply.packet.text
    return reply
