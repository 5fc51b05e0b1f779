"""A repeated resume of an interrupt whose record left the thread: answered from the archive.

A thread keeps the interrupts of its last runs only (`workflows.thread._log.RUNS_KEPT`). When
settled ones leave its state at continue-as-new, it writes what a repeated resume needs to
the store (`ARCHIVE_INTERRUPTS_ACTIVITY`): who could answer, how it was answered (as a
digest), and the run that applied the answer, whose events the store holds too. The thread
refuses such a resume with `UNKNOWN_INTERRUPT_ID`; the gateway then decides here, by the
rules the thread applies to a recent one (`workflows.contract.resume`), and replays that run's
events under the new run id (`readdressed`), as the thread does for a recent one.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from ag_ui_temporal.workflows.contract.errors import RunRejection
from ag_ui_temporal.workflows.contract.names import WireDict
from ag_ui_temporal.workflows.contract.resume import interrupted_run as interrupted_run
from ag_ui_temporal.workflows.contract.resume import refusal, sort_entries
from ag_ui_temporal.workflows.contract.runs import RunRequest
from ag_ui_temporal.workflows.contract.view import InterruptStatus

ARCHIVE_INTERRUPTS_ACTIVITY = "agui_archive_interrupts"
"""Writes the settled interrupts leaving a thread's state (at continue-as-new) to the store
(idempotent: by thread and interrupt id)."""

ARCHIVE_INTERRUPTS_BATCH = 500
"""Most interrupts one archive activity carries."""


class ArchivedInterrupt(BaseModel):
    """A settled interrupt as the store keeps it once it left the thread's state."""

    interrupt_id: str
    run_id: str
    """The run that delivered it (TanStack's `interruptedRunId`)."""
    status: InterruptStatus
    answer_digest: str
    """`resume.answer_digest` of the resolution the thread applied."""
    resolved_by_run: str
    """The run that applied the resolution: a repeated resume replays its events."""
    allowed_resolvers: list[str] | None = None

    @property
    def settled(self) -> bool:
        """Always: only interrupts whose answer was applied are archived."""
        return True


class ArchiveInterrupts(BaseModel):
    """Input of the interrupts' archive activity: settled interrupts of one thread."""

    thread_id: str
    interrupts: list[ArchivedInterrupt]


def replay_verdict(
    request: RunRequest, archived: Mapping[str, ArchivedInterrupt]
) -> str | RunRejection:
    """The run whose events answer `request` (every entry repeats an archived answer), or
    the refusal the thread would give (`resume.sort_entries`)."""
    entries = sort_entries(request, archived)
    if entries.replayed is None:
        return refusal(entries.errors, archived)
    return entries.replayed.resolved_by_run


def readdressed(events: list[WireDict], run_id: str, parent_run_id: str | None) -> list[WireDict]:
    """A repeated resume's answer: the events of the run that applied it, re-addressed to
    the new run (its id, its parent)."""
    result = []
    for event in events:
        if "runId" in event:
            event = {**event, "runId": run_id}
        if event.get("type") == "RUN_STARTED":
            event = {**event, "parentRunId": parent_run_id}
            event = {k: v for k, v in event.items() if v is not None}
        result.append(event)
    return result
