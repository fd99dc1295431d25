"""The markdown projection of a store (docs/decisions.md#d17): one readable file per memory in
``.workmem/memories/<type>/<id>.md``, the hash-only ``tombstones.jsonl``, and the pure steps around
them, one module each — the values a command carries (:mod:`~domain.projection.records`), who a
memory is for (:mod:`~domain.projection.scopes`), rendering and parsing a file
(:mod:`~domain.projection.document`, :mod:`~domain.projection.frontmatter`), what an export writes
(:mod:`~domain.projection.view`, :mod:`~domain.projection.tombstones`), taking edits back through the
gate (:mod:`~domain.projection.importing`, :mod:`~domain.projection.checks`) and git's field-wise
merge (:mod:`~domain.projection.merge`). The package imports none of them: a host hook that never
meets a projection never pays for one. The files and git are the shell's (``adapters/projection.py``,
``adapters/git_sync.py``)."""
