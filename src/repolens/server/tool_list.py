"""What the tool list says that depends on the server: the ``repo`` argument.

Kept apart from the tools (and from the MCP SDK) because the words depend
only on the repositories served and the transport.
"""

from __future__ import annotations

from collections.abc import Sequence

# The argument naming the repository a tool looks at (see repolens.server.calls.Repos).
LOCATION = "repo"


def location_description(names: Sequence[str], *, remote: bool) -> str | None:
    """What the tools' ``repo`` argument says, given the served repositories'
    ``names``: the choice a caller has. None when there is none to make (one
    repository, the default): every tool would repeat it for nothing."""
    if not names:
        return "A repository path (default: the current directory)."
    if len(names) == 1:
        return None
    listed = ", ".join(names)
    return f"One of: {listed}." if remote else f"One of: {listed}; or a path."
