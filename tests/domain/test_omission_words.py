"""The block's omissions besides its caps in words (docs/decisions.md#d22): a memory the host's
instruction files already say and one folded into a near-duplicate each have a status of their own,
words of their own in ``explain`` and a count in ``health``."""

from __future__ import annotations

from domain.commands import OpenSession
from domain.consolidation.near_duplicates import NEAR_DUPLICATE
from domain.diagnostics import DiagInput, format_health, health_json, health_report
from domain.diagnostics.status import DiagnosticStatus, LeftOut, status_from_omission, status_reasons
from domain.diagnostics.words import Explained, explain_all, explained_json
from domain.enums import MemoryType
from domain.evidence_records import build_record
from domain.host_instructions import (
    IN_HOST_INSTRUCTIONS,
    HostContext,
    HostKind,
    InstructionFile,
    instruction_lines,
)
from domain.model import EvidenceEvent
from domain.operations import OpResult
from domain.pending import empty_journal
from domain.workspace_port import InMemoryWorkspace
from tests.support.builders import KEY, NOW, NOW_ISO, ROOT, memory, store

PNPM = "Always use pnpm for package installs"
FRIDAYS = "Never deploy on Fridays"
BLUE_GREEN = "We deploy with blue-green switching, never on Fridays"
CLAUDE = HostContext(
    host=HostKind.CLAUDE_CODE,
    files=(InstructionFile(name="CLAUDE.md", lines=instruction_lines(f"- {PNPM}.\n")),),
)


def _workspace() -> InMemoryWorkspace:
    entries = (
        memory(PNPM, id="a", type=MemoryType.FEEDBACK),
        memory(FRIDAYS, id="b", type=MemoryType.FEEDBACK),
        memory(BLUE_GREEN, id="c", type=MemoryType.FEEDBACK),
    )
    return InMemoryWorkspace(store(*entries), empty_journal(ROOT, KEY, NOW))


def _logged(*results: OpResult) -> tuple[EvidenceEvent, ...]:
    """The events of ``results`` as the evidence log keeps them."""
    inputs = [e for result in results for e in result.events]
    return tuple(
        build_record(e, event_id=f"ev{i}", created_at=NOW_ISO, workspace_key=KEY, workspace_root_hash="h")
        for i, e in enumerate(inputs)
    )


def _opened(ws: InMemoryWorkspace, session: str, host: HostContext | None, at: int = NOW) -> OpResult:
    result = ws.execute(OpenSession(session=session, host=host), at)
    assert result is not None
    return result


def _explained(src: DiagInput, at: int = NOW) -> dict[str, Explained]:
    return {item.id: item for item in explain_all(src, at)}


def test_explain_words_a_memory_the_host_files_say_and_one_folded_into_a_near_duplicate() -> None:
    ws = _workspace()
    opened = _opened(ws, "S1", CLAUDE)
    assert PNPM not in opened.output and FRIDAYS not in opened.output and BLUE_GREEN in opened.output
    src = DiagInput(root=ROOT, key=KEY, store=ws.store, journal=ws.journal, events=_logged(opened))
    found = _explained(src)
    said, folded, shown = found["a"], found["b"], found["c"]
    assert (said.status, said.in_block) == (LeftOut.OMITTED_IN_HOST_INSTRUCTIONS, False)
    assert said.sentence.startswith(f"Not in the block: “{PNPM}”, because CLAUDE.md already says it")
    assert "character budget" not in said.sentence and said.actions[0].startswith("edit CLAUDE.md")
    assert (folded.status, folded.in_block) == (LeftOut.OMITTED_NEAR_DUPLICATE, False)
    assert folded.sentence.startswith(
        f"Not in the block: “{FRIDAYS}”, because it is folded into c “{BLUE_GREEN}”"
    )
    assert shown.status == DiagnosticStatus.RENDERED and shown.in_block
    # --json keeps the code
    assert [explained_json(found[i])["status"] for i in "abc"] == [
        "omitted_in_host_instructions",
        "omitted_near_duplicate",
        "rendered",
    ]


def test_health_counts_each_omission_besides_the_caps() -> None:
    ws = _workspace()
    src = DiagInput(
        root=ROOT, key=KEY, store=ws.store, journal=ws.journal, events=_logged(_opened(ws, "S1", CLAUDE))
    )
    report = health_report(src, NOW)
    assert report.rendered_in_block == 1
    assert report.left_out == (
        ("already said in the host's instruction files", 1),
        ("folded into a near-duplicate shown", 1),
    )
    text = format_health(report)
    assert "  already said in the host's instruction files: 1\n" in text
    assert "  folded into a near-duplicate shown: 1\n" in text
    data = health_json(src, NOW)
    assert data["summary"]["leftOut"] == {"omitted_in_host_instructions": 1, "omitted_near_duplicate": 1}
    assert {m["id"]: m["status"] for m in data["memories"]}["a"] == "omitted_in_host_instructions"


def test_a_later_render_that_shows_the_memory_ends_the_host_files_verdict() -> None:
    ws = _workspace()
    first = _opened(ws, "S1", CLAUDE)
    again = _opened(ws, "S2", None, NOW + 1000)  # a session start that names no host shows it
    src = DiagInput(root=ROOT, key=KEY, store=ws.store, journal=ws.journal, events=_logged(first, again))
    found = _explained(src, NOW + 1000)
    assert found["a"].status == DiagnosticStatus.RENDERED and found["a"].in_block
    assert found["b"].status == LeftOut.OMITTED_NEAR_DUPLICATE  # worked out again, not from the log


def test_each_omission_reason_has_its_own_status_and_reason_code() -> None:
    for reason, status in (
        (IN_HOST_INSTRUCTIONS, LeftOut.OMITTED_IN_HOST_INSTRUCTIONS),
        (NEAR_DUPLICATE, LeftOut.OMITTED_NEAR_DUPLICATE),
    ):
        assert status_from_omission(reason) is status
        assert status_reasons(status) == (reason,)
