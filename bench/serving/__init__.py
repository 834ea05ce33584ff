"""Serving over HTTP: concurrent MCP clients against one or more worker processes,
and the search page against the same MCP call."""
