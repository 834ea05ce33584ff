"""New processes: a fresh index of a repository, the CLI's commands, the MCP server's first reply;
source trees compared in one run (--tree NAME=PATH/src)."""
