"""Helpers the test modules share: value builders (:mod:`tests.support.builders`), the in-process
command-line driver with its storage helpers (:mod:`tests.support.cli`) and the in-memory shell that
runs the core operations (:mod:`tests.support.world`). Test modules import from here, never from one
another."""
