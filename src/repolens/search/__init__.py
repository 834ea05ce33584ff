"""Answer a question with ranked chunks: parse the query, run the legs, fuse them.

:func:`repolens.search.ranking.search` is the one entry the service calls
(see :mod:`repolens.search.ranking` for the steps). This package file stays
empty: importing one of its modules (``symbols`` for ``repolens symbols``,
``hits`` for a reply) must not load the ranking machinery with it.
"""
