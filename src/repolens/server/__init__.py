"""The MCP server: tools, the per-call wrapper, repositories and path safety, stdio and HTTP."""
