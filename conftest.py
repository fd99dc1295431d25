"""Shared pytest configuration: hypothesis profiles, and no hook server for hook calls in tests.

``ci`` (the default) keeps property runs bounded and derandomized for CI: the same examples every
run. ``random`` is CI's second, short pass over ``property_tests``: new examples each run, from a seed
printed in the header, so a failure can be replayed with ``--hypothesis-seed``. ``deep`` is for local
runs that search much harder. Select one with ``HYPOTHESIS_PROFILE=deep pytest property_tests``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))
#: the shared checks of tests/support report their failures as the tests' own asserts do
pytest.register_assert_rewrite("tests.support")

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile(
    "random",
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)
settings.register_profile(
    "deep",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """A randomized run without ``--hypothesis-seed`` draws one here, before hypothesis reads it, so
    the header can print it."""
    if PROFILE == "random" and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = int.from_bytes(os.urandom(4), "big")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the randomized pass's seed at the end of the run (shown with ``-q`` too)."""
    seed = terminalreporter.config.getoption("hypothesis_seed", None)
    if PROFILE == "random" and seed is not None:
        terminalreporter.write_line(
            f"randomized property pass, seed {seed} "
            f"(replay: HYPOTHESIS_PROFILE=random pytest property_tests --hypothesis-seed={seed})"
        )
