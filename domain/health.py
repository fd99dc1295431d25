"""The diagnostics' former home, kept so that ``domain.health`` stays importable: every report now
lives in :mod:`domain.diagnostics`, one module per report (docs/decisions.md#diagnostics)."""

from __future__ import annotations

from domain.diagnostics import *  # noqa: F403
from domain.diagnostics import __all__ as __all__
