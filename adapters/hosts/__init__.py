"""Host adapters: each one maps its host's events onto the five core operations
(docs/decisions.md#d12).

A host adapter parses the host's payload, picks one operation (open session, observe user message,
observe tool result, observe compaction, end session), runs it through the one transaction helper and
prints what the host expects. It never raises into the host and never exits with a status the host
would read as "block"; a failure becomes one ``hook_failed`` evidence event and one stderr line.
"""
