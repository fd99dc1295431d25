"""The vocabulary of the projection (docs/decisions.md#d17): the status a file states, and why a file
was set aside (quarantined: it cannot be read) or turned down (rejected: it reads, but the gate
refuses what it says)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class FileStatus(StrEnum):
    """The ``status`` of a projection file, in the order a merge keeps the later of two."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"


#: ``active < superseded < forgotten`` (docs/decisions.md#d17a).
STATUS_ORDER: Final = {FileStatus.ACTIVE: 0, FileStatus.SUPERSEDED: 1, FileStatus.FORGOTTEN: 2}


class FileReason(StrEnum):
    """Why a projection file is not imported (with the gate's own reasons, ``domain.safety``)."""

    #: quarantined: the file cannot be read as a memory
    CONFLICT_MARKERS = "conflict_markers"
    BAD_FRONTMATTER = "bad_frontmatter"
    UNKNOWN_TYPE = "unknown_type"
    NOT_UTF8 = "not_utf8"
    #: rejected: the file reads, but what it says may not be stored
    CREDENTIAL = "credential"
    TOO_LONG = "too_long"
    CONTROL_CHARACTERS = "control_characters"
    ARCHIVED = "archived"


#: The reasons that quarantine a file (the others reject it).
QUARANTINE_REASONS: Final = frozenset(
    {FileReason.CONFLICT_MARKERS, FileReason.BAD_FRONTMATTER, FileReason.UNKNOWN_TYPE, FileReason.NOT_UTF8}
)


#: What a person should do about a file turned down for a reason (any other reason is the gate's).
MESSAGES: Final[dict[str, str]] = {
    FileReason.CREDENTIAL: "the text holds a credential; remove it before you commit (git keeps it forever)",
    FileReason.TOO_LONG: "the text is longer than a memory may be (260 characters)",
    FileReason.CONTROL_CHARACTERS: "the text holds control characters",
    FileReason.ARCHIVED: "the memory is archived on this machine; `workmem restore ID` first",
    "prompt_injection": "the text reads as an instruction to the agent",
    "empty": "the file has no text",
}


def message_for(reasons: tuple[str, ...]) -> str:
    for reason in reasons:
        if reason in MESSAGES:
            return MESSAGES[reason]
    return "turned down by the quality gate (" + ", ".join(reasons) + ")"
