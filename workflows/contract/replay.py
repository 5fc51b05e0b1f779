"""A repeated resume of an interrupt whose record left the thread: answered from the archive.

A thread keeps the interrupts of its last runs only (`workflows._log.RUNS_KEPT`). When
settled ones leave its state at continue-as-new, it writes what a repeated resume needs to
the store (`ARCHIVE_INTERRUPTS_ACTIVITY`): who could answer, how it was answered (as a
digest), and the run that applied the answer, whose events the store holds too. The thread
refuses such a resume with `UNKNOWN_INTERRUPT_ID`; the gateway then decides here, by the
rules the thread applies to a recent one (`workflows.thread._resume`), and replays that run's
events under the new run id (`readdressed`), as the thread does for a recent one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ag_ui_temporal.workflows.contract.access import may_answer
from ag_ui_temporal.workflows.contract.errors import ErrorCode, InterruptError, RunRejection
from ag_ui_temporal.workflows.contract.names import WireDict
from ag_ui_temporal.workflows.contract.runs import ResumeItem, RunRequest
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
    """`answer_digest` of the resolution the thread applied."""
    resolved_by_run: str
    """The run that applied the resolution: a repeated resume replays its events."""
    allowed_resolvers: list[str] | None = None


class ArchiveInterrupts(BaseModel):
    """Input of the interrupts' archive activity: settled interrupts of one thread."""

    thread_id: str
    interrupts: list[ArchivedInterrupt]


def answer_digest(status: str, payload: Any) -> str:
    """A resume entry's answer as the thread compares it (status and canonical payload; an
    omitted payload is `null`), hashed: the store keeps no copy of the payload."""
    canonical = json.dumps([status, payload], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def replay_verdict(
    request: RunRequest, archived: Mapping[str, ArchivedInterrupt]
) -> str | RunRejection:
    """The run whose events answer `request` (every entry repeats an archived answer), or
    the refusal the thread would give: per entry, in the thread's order, unknown, not the
    principal's to answer, or answered otherwise."""
    errors: list[InterruptError] = []
    replays: list[ArchivedInterrupt] = []
    for entry in request.resume:
        record = archived.get(entry.interrupt_id)
        if record is None:
            errors.append(_item(ErrorCode.UNKNOWN_INTERRUPT_ID, entry, "no such interrupt"))
        elif not may_answer(record.allowed_resolvers, request.principal, request.groups):
            who = "an anonymous client" if request.principal is None else repr(request.principal)
            errors.append(_item(ErrorCode.FORBIDDEN, entry, f"{who} may not answer it"))
        elif record.answer_digest != answer_digest(entry.status, entry.payload):
            message = f"interrupt was already {record.status.value} with another answer"
            errors.append(_item(ErrorCode.INTERRUPT_ALREADY_RESOLVED, entry, message))
        else:
            replays.append(record)
    if errors:
        return RunRejection(
            code=errors[0].code,
            message="; ".join(f"{e.interrupt_id}: {e.message}" for e in errors),
            interrupt_errors=errors,
            interrupted_run_id=interrupted_run(archived, errors),
        )
    return replays[-1].resolved_by_run


def interrupted_run(
    archived: Mapping[str, ArchivedInterrupt], errors: list[InterruptError]
) -> str | None:
    """The run that delivered the first erring interrupt the archive knows."""
    for error in errors:
        if (record := archived.get(error.interrupt_id or "")) is not None:
            return record.run_id
    return None


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


def _item(code: ErrorCode, entry: ResumeItem, message: str) -> InterruptError:
    return InterruptError(scope="item", code=code, message=message, interrupt_id=entry.interrupt_id)
