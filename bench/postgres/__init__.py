"""The PostgreSQL store against the local one: search, size and replicas; a fresh build."""
