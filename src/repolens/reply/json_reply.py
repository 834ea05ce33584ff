"""The JSON form of a search reply (``search --json``, ``search_code`` mode=json).

It carries the same evidence the text packet shows: the same hits with the
same text each (markers included), the same omitted hits, notes and next
files, plus the ranked file overview and the question (its first
``QUERY_ECHO_CHARS`` characters and its length). ``max_chars`` budgets the
evidence only, not the keys and locations around it. Each hit's keys are
made by :meth:`repolens.reply.packet.Packet.to_json`, each file's by
:meth:`repolens.reply.files.FileEntry.to_json`; this module puts them
together with the question.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from repolens.reply.files import FileEntry
    from repolens.reply.packet import Packet

# A JSON reply echoes the start of the question, not a pasted issue in full.
QUERY_ECHO_CHARS = 200


def search_json(
    query: str,
    query_id: str | None,
    packet: Packet | None,
    files: list[FileEntry] | None,
    notes: tuple[str, ...],
) -> dict[str, Any]:
    """A search reply as JSON: the question, its id, the packet's evidence,
    the file overview, the notes."""
    data: dict[str, Any] = {
        "query": query[:QUERY_ECHO_CHARS],
        "query_chars": len(query),
        "query_id": query_id,
    }
    if packet is not None:
        data.update(packet.to_json())
    if files is not None:
        data["files"] = [f.to_json() for f in files]
    data["notes"] = list(notes)
    return data
