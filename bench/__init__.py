"""repolens's benchmarks: run each as a module from the repository root,
``python -m bench.<entry> ...`` (``bench/README.md`` lists the entries).

The entries are the modules and packages at this folder's top; ``common``
holds what several of them share, ``probes`` the one-off measurements that
decided something. Imports are absolute (``bench.common...``), so nothing
here edits the import path.
"""
