"""The JSON form of a search reply (``search --json``, ``search_code`` mode=json).

It carries the same evidence the text packet shows: the same hits with the
same text each (markers included), the same omitted hits, notes and next
files, plus the ranked file overview and the question (its first
``QUERY_ECHO_CHARS`` characters and its length). ``max_chars`` budgets the
evidence only, not the keys and locations around it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repolens.reply.files import FileEntry
    from repolens.reply.packet import Packet

# A JSON reply echoes the start of the question, not a pasted issue in full.
QUERY_ECHO_CHARS = 200


def packet_json(packet: Packet) -> dict[str, Any]:
    """The rendered blocks as they are (``text`` is the block's text in
    ``packet.text``), the hits that did not fit, the notes and the next files."""
    data: dict[str, Any] = {
        "hits": [
            {
                "path": r.block.path,
                "start_line": r.block.start_line,
                "end_line": r.block.end_line,
                "score": round(r.block.score, 4),
                "kind": r.block.kind,
                "qualname": r.block.qualname,
                "chunk_ids": list(r.block.chunk_ids),
                "path_only": r.block.path_only,
                **({"explain": r.block.explain} if r.block.explain else {}),
                **({"stale": r.block.stale} if r.block.stale else {}),
                "truncated": r.truncated,
                "text": r.text,
            }
            for r in packet.rendered
        ],
        "omitted": [
            {
                "path": b.path,
                "start_line": b.start_line,
                "end_line": b.end_line,
                "score": round(b.score, 4),
            }
            for b in packet.omitted
        ],
        "notes": list(packet.notes),
    }
    if packet.pointers:
        data["next_files"] = [e.pointer_json() for e in packet.pointers]
    return data


def search_json(
    query: str,
    query_id: str,
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
        data.update(packet_json(packet))
    if files is not None:
        data["files"] = [f.to_json() for f in files]
    data["notes"] = list(notes)
    return data
