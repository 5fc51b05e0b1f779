"""The AG-UI interrupt contract rules, checked before a run touches the thread.

The thread's own rules (owner, agent, malformed entries, open interrupts' answers: a
resume covers every one, but a partial resume the gateway sends to the inbox) are here; what
decides each entry against the interrupt it names is the protocol's
(`workflows.contract.resume`), which the gateway applies to archived ones.

`plan_run` is pure: the update validator calls it to refuse a bad run without
writing history, and the handler calls it again under the run lock, so two
racing resumes cannot both be applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ag_ui_temporal.workflows.contract import (
    OTHER_OWNER,
    ErrorCode,
    InterruptError,
    InterruptStatus,
    ResumeItem,
    RunRejection,
    RunRequest,
    may_act,
    reserved_metadata_keys,
)
from ag_ui_temporal.workflows.contract.resume import (
    interrupted_run,
    item,
    refusal,
    sort_entries,
    takes_partial,
)
from ag_ui_temporal.workflows.contract.tools import approval
from ag_ui_temporal.workflows.schema import payload_problem
from ag_ui_temporal.workflows.thread import _standing
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord


class RunRejected(Exception):
    """A run refused by a contract rule; carries what the client is told."""

    def __init__(self, rejection: RunRejection) -> None:
        super().__init__(rejection.message)
        self.rejection = rejection


@dataclass
class RunPlan:
    """What an accepted run will do with the thread's interrupts."""

    settle: list[tuple[InterruptRecord, ResumeItem]] = field(default_factory=list)
    replay_of: str | None = None
    """Set when every entry repeats an applied resume: answer with that run's outcome."""
    partial: bool = False
    """A partial resume the thread takes (`RunRequest.partial`, an inbox): interrupts it does
    not name still await an answer after it (the run binds them to itself)."""


def plan_run(
    agent: str,
    interrupts: list[InterruptRecord],
    request: RunRequest,
    now: datetime,
    owner: str | None = None,
    admitted: bool = False,
) -> RunPlan:
    """Check `request` against the thread (its agent, its `owner`: None is unowned, and its
    interrupts); raise `RunRejected` or return a plan. `admitted`: the owner rule was
    decided already (by the run's validator, for its handler)."""
    if not admitted:
        check_owner(owner, interrupts, request)  # first: tell a stranger nothing of the thread
    if request.agent != agent:
        _reject(ErrorCode.AGENT_MISMATCH, f"thread belongs to agent {agent!r}")
    awaiting = _awaiting(interrupts, now)
    if not request.resume:
        if awaiting:
            _reject_batch(
                ErrorCode.RESUME_REQUIRED,
                "the thread has open interrupts; resume them before sending new input",
                awaiting,
            )
        return RunPlan()
    ids = [entry.interrupt_id for entry in request.resume]
    if len(set(ids)) != len(ids):
        _reject(ErrorCode.INVALID_RESUME, "resume names the same interrupt more than once")
    _refuse_malformed(interrupts, request.resume)
    partial = request.partial and takes_partial(agent)
    return _plan_resume(interrupts, awaiting, request, now, partial)


def check_owner(owner: str | None, interrupts: list[InterruptRecord], request: RunRequest) -> None:
    """A thread runs for its owner only (also re-sent and replayed runs); one without an
    owner for an admin only (`may_act`).

    A resume gets the refusal on each item it names, so TanStack shows it there."""
    if may_act(owner, request.principal, request.groups, request.admin):
        return
    if not request.resume:
        _reject(ErrorCode.FORBIDDEN, OTHER_OWNER)
    by_id = {record.id: record for record in interrupts}
    errors = [item(ErrorCode.FORBIDDEN, entry, OTHER_OWNER) for entry in request.resume]
    raise RunRejected(
        RunRejection(
            code=ErrorCode.FORBIDDEN,
            message=OTHER_OWNER,
            interrupt_errors=errors,
            interrupted_run_id=interrupted_run(by_id, errors),
        )
    )


def _plan_resume(
    interrupts: list[InterruptRecord],
    awaiting: list[InterruptRecord],
    request: RunRequest,
    now: datetime,
    partial: bool,
) -> RunPlan:
    """`partial`: the resume may leave open interrupts awaiting (each entry is still decided
    by every other rule)."""
    by_id = {record.id: record for record in interrupts}
    entries = sort_entries(request, by_id, lambda record, entry: _entry_problem(record, entry, now))
    if entries.errors:
        raise RunRejected(refusal(entries.errors, by_id))
    if entries.replayed is not None:
        return RunPlan(replay_of=entries.replayed.resolved_by_run)
    answered = {record.id for record, _ in entries.answering}
    missing = [record for record in awaiting if record.id not in answered]
    if missing and not partial:
        _reject_batch(
            ErrorCode.PARTIAL_RESUME, "one resume must answer every open interrupt", missing
        )
    return RunPlan(settle=entries.answering, partial=bool(missing))


def _awaiting(interrupts: list[InterruptRecord], now: datetime) -> list[InterruptRecord]:
    """The interrupts a resume must answer. An expired one is settled (`lapsed`) and awaits
    nothing; so is one `overdue` at `now`, which the handler expires before it plans (as its
    timer would a moment later)."""
    return [r for r in interrupts if r.awaiting_answer and not r.overdue(now)]


def _refuse_malformed(interrupts: list[InterruptRecord], resume: list[ResumeItem]) -> None:
    """Entries no interrupt may take. Keys in the `ag-ui` namespace are the protocol's (and
    this server's): a client that sends them (past the gateway, too) is refused, so the
    audit trail cannot be forged. A cancel omits the payload (AG-UI), so one that carries
    a payload (even `null`) is refused rather than forwarded to the interrupt's owner."""
    errors = [
        item(ErrorCode.INVALID_RESUME, entry, f"metadata key {key!r} is reserved (ag-ui)")
        for entry in resume
        for key in reserved_metadata_keys(entry.metadata)
    ]
    cancels = [entry for entry in resume if entry.status == "cancelled" and entry.has_payload]
    if cancels:
        errors += [
            item(ErrorCode.INVALID_RESUME, entry, "a cancel carries no payload: omit it")
            for entry in cancels
        ]
    if errors:  # every one INVALID_RESUME
        raise RunRejected(refusal(errors, {r.id: r for r in interrupts}))


def _entry_problem(
    record: InterruptRecord, entry: ResumeItem, now: datetime
) -> InterruptError | None:
    if entry.status == "cancelled":
        return None  # cancelling is always allowed, also after expiry or withdrawal
    if record.status == InterruptStatus.WITHDRAWN:
        return item(ErrorCode.INTERRUPT_WITHDRAWN, entry, "its owner withdrew it")
    if record.status == InterruptStatus.EXPIRED or record.overdue(now):
        return item(ErrorCode.INTERRUPT_EXPIRED, entry, f"expired at {record.expires_at}")
    schema = record.interrupt.get("responseSchema")
    if schema is None:
        problem = schemaless_problem(record.interrupt.get("reason"), entry)
        if problem is None:
            return None
        return item(ErrorCode.INVALID_PAYLOAD, entry, problem)
    if not entry.has_payload:
        return item(ErrorCode.INVALID_PAYLOAD, entry, "a resolved interrupt needs a payload")
    problem = payload_problem(schema, entry.payload) or _standing.problem(record, entry.payload)
    return None if problem is None else item(ErrorCode.INVALID_PAYLOAD, entry, problem)


def schemaless_problem(reason: Any, entry: ResumeItem) -> str | None:
    """Why a resolve of an interrupt without `responseSchema` cannot be taken, by its reason.

    A payload is always needed (missing payloads are errors, never ignored); `confirmation`
    takes a boolean, `tool_call` an approval; `input_required` and custom reasons take any
    JSON value (`null` included)."""
    if not entry.has_payload:
        return "a resolved interrupt needs a payload"
    payload = entry.payload
    if reason == "confirmation" and not isinstance(payload, bool):
        return "a confirmation is answered true or false"
    if reason == "tool_call" and approval(payload) is None:
        return 'a tool_call is answered with an approval: {"approved": true | false, ...}'
    return None


def _reject(code: ErrorCode, message: str) -> None:
    raise RunRejected(RunRejection(code=code, message=message))


def _reject_batch(code: ErrorCode, message: str, records: list[InterruptRecord]) -> None:
    ids = [record.id for record in records]
    raise RunRejected(
        RunRejection(
            code=code,
            message=f"{message}: {', '.join(ids)}",
            interrupt_errors=[
                InterruptError(scope="batch", code=code, message=message, interrupt_ids=ids)
            ],
            interrupted_run_id=records[0].run_id,
        )
    )
