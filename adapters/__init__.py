"""The shells around the pure core: files, locks, the evidence log, the clock, the CLI, host hooks."""

__version__ = "0.1.0"
