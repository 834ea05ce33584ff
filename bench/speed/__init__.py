"""How fast: a fresh index of a repository, the CLI's commands and the MCP server's first reply in
new processes, and a warm search per question kind, learned ranking against tuned; source trees
compared in one run (--tree NAME=PATH/src)."""
