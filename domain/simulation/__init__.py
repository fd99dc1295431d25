"""Offline simulation of a workspace's life over months (docs/simulation.md).

``rng`` is the seeded pure generator, ``scenario`` the typed scenario, ``texts`` the generated words,
``engine`` the run itself (the hosts' own operations on an in-memory workspace) and ``report`` the
measures built from a run (weekly rows, summary, comparisons)."""
