"""Shared pytest configuration: hypothesis profiles, and no hook server for hook calls in tests.

``ci`` (the default) keeps property runs bounded for CI; ``deep`` is for local runs that search much
harder. Select one with ``HYPOTHESIS_PROFILE=deep pytest property_tests``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile(
    "deep",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Hook calls made by tests handle their events themselves: a hook server (adapters/hook_server.py)
# would outlive the test that started it. tests/test_hook_server.py turns it on where it is tested.
os.environ.setdefault("WORKMEM_HOOK_SERVER", "0")
