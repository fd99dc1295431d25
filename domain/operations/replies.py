"""The agent's reply as a host event (docs/decisions.md#d19): a memory shown to the session whose id
the reply cites was used, and is reinforced once for the session. The reply is read, never stored."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from domain.emitted import events
from domain.operations.common import touch
from domain.operations.use import reinforce_from_use, use_signals
from domain.operations.values import OpResult, Snapshot, is_sub_agent, operation, unchanged

__all__ = ["AgentReply", "observe_agent_reply"]


class AgentReply(msgspec.Struct, frozen=True, kw_only=True, tag_field="op", tag="reply"):
    """The text of the agent's last reply (Claude Code and Codex ``Stop``; OpenCode the last
    assistant message of a turn). A member of :data:`domain.commands.Command`."""

    session: str
    parent: str | None = None
    text: str


@operation
def observe_agent_reply(
    snap: Snapshot,
    session_id: str,
    text: str,
    now_ms: int,
    *,
    parent_session_id: str | None = None,
    aliases: Mapping[str, str] | None = None,
) -> OpResult:
    """Reinforce the shown memories the reply cites by id (``aliases``: short ids to memory ids)."""
    if is_sub_agent(snap.session, parent_session_id) or snap.session is None:
        return unchanged(snap)
    uses = use_signals(snap.session, text, writing=False, aliases=aliases)
    if not uses:
        return unchanged(snap)
    store, session, used = reinforce_from_use(snap.store, snap.session, uses, "reply", now_ms, snap.tuning)
    return OpResult(
        store=store,
        journal=snap.journal,
        session=touch(session, now_ms),
        emitted=events(used).with_session(session_id),
    )
