"""Render what search found under a character budget: packets, file lists, JSON, focus, chunks, snippets."""
