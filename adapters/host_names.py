"""The hosts workmem knows, by the names every door uses (``install HOST``, ``hook HOST``). A leaf
module: the thin hook client imports it too, so it imports nothing."""

from __future__ import annotations

from typing import Final

#: hosts ``workmem install`` writes settings for
INSTALL_HOSTS: Final = ("claude-code", "codex", "opencode")
#: hosts that call ``workmem hook HOST`` (OpenCode runs its own plugin and talks to ``workmem serve``)
HOOK_HOSTS: Final = ("claude-code", "codex")
