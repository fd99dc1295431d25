"""Offline simulation of a workspace's life over months (docs/simulation.md).

``rng`` is the seeded pure generator, ``scenario`` the typed scenario, ``texts`` the generated words,
``workspace`` the in-memory unit of work, ``session`` one simulated session (the hosts' own
operations), ``engine`` the run and its measures, ``report`` the weekly rows, summary and
comparisons built from a run."""
