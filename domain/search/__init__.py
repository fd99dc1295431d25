"""Search over the memories of a workspace (docs/decisions.md#d16): word forms
(:mod:`~domain.search.tokens`), short ids (:mod:`~domain.search.shortids`), the BM25 ranking
(:mod:`~domain.search.rank`), the ``search`` and ``show`` commands (:mod:`~domain.search.commands`)
and just-in-time recall (:mod:`~domain.search.recall`)."""
