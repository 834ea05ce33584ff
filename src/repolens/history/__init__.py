"""What the history knows: past commits of the checked-out branch.

* :mod:`.gitlog` reads commits with one ``git log`` (HEAD and its ancestors
  only, merges and very big commits left out, renames followed), and a
  commit's changed lines of a file;
* :mod:`.sync` (write path, called by the indexer) keeps the index's history
  equal to ``HEAD`` through the store's writer: incremental when it moved
  forward, read afresh after a branch switch or a rewrite.

The read path is :mod:`repolens.search.history_leg` (the ranking leg and
the commits for a question or a file); the storage is behind
:class:`repolens.store.base.IndexWriter` / ``IndexReader``.
"""
