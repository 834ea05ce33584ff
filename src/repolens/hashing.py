"""blake2b, the hash repolens names things by (chunk ids, file identities, query ids).

``import hashlib`` loads OpenSSL for the algorithms it provides (~2 ms of a
new process on a quiet machine, more than reading a file's lines). blake2b
is not one of them: ``hashlib.blake2b`` *is* CPython's own ``_blake2``
constructor, so the read path (a search remembers its result under a
blake2b id) takes it from there; same object, same digests.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # a Python built without its own blake2: hashlib's, whatever it is
    from hashlib import blake2b

__all__ = ["blake2b"]
