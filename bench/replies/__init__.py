"""Replies as they should be: unchanged by a refactor, the same in JSON as in the packet, the same
on PostgreSQL as on the local store, the same after refreshes as after a fresh build."""
