"""workmem for Python hosts: ``from workmem import WorkingMemory`` (see docs/hosts.md, "Python hosts").

This module only re-exports the typed API of :mod:`adapters.api` (every name in its ``__all__``); the
pure core stays in ``domain`` and the shells in ``adapters``.
"""

from adapters import __version__
from adapters.api import *  # noqa: F403
from adapters.api import __all__ as _api_names

__all__ = [*_api_names, "__version__"]
