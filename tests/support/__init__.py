"""Helpers the test modules share: value builders (:mod:`tests.support.builders`) and the in-process
command-line driver with its storage helpers (:mod:`tests.support.cli`). Test modules import from here,
never from one another."""
