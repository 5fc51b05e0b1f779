"""The AG-UI interrupt contract rules, checked before a run touches the thread.

`plan_run` is pure: the update validator calls it to refuse a bad run without
writing history, and the handler calls it again under the run lock, so two
racing resumes cannot both be applied. Rules added later (`_enforcing`) refuse
in the validator always, in the handler only in threads that took their patch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from temporalio import workflow

from ag_ui_temporal.workflows.contract import (
    OTHER_OWNER,
    ErrorCode,
    InterruptError,
    InterruptStatus,
    ResumeItem,
    RunRejection,
    RunRequest,
    may_act,
    may_answer,
    reserved_metadata_keys,
)
from ag_ui_temporal.workflows.patches import RESUME_RULES_PATCH, UNOWNED_CLOSED_PATCH, patched
from ag_ui_temporal.workflows.schema import payload_problem
from ag_ui_temporal.workflows.thread.state import InterruptRecord


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
    decided already (`admitted_as_recorded`)."""
    if not admitted:
        check_owner(owner, interrupts, request)  # first: tell a stranger nothing of the thread
    if request.agent != agent:
        _reject(ErrorCode.AGENT_MISMATCH, f"thread belongs to agent {agent!r}")
    awaiting = [record for record in interrupts if record.awaiting_answer]
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
    return _plan_resume(interrupts, awaiting, request, now)


def check_owner(owner: str | None, interrupts: list[InterruptRecord], request: RunRequest) -> None:
    """A thread runs for its owner only (also re-sent and replayed runs); one without an
    owner for an admin only (`may_act`).

    A resume gets the refusal on each item it names, so TanStack shows it there."""
    if may_act(owner, request.principal, request.groups, request.admin):
        return
    if not request.resume:
        _reject(ErrorCode.FORBIDDEN, OTHER_OWNER)
    by_id = {record.id: record for record in interrupts}
    errors = [_item(ErrorCode.FORBIDDEN, entry, OTHER_OWNER) for entry in request.resume]
    raise RunRejected(
        RunRejection(
            code=ErrorCode.FORBIDDEN,
            message=OTHER_OWNER,
            interrupt_errors=errors,
            interrupted_run_id=_interrupted_run(by_id, errors),
        )
    )


def admitted_as_recorded(
    recorded_owner: str | None, owner: str | None, request: RunRequest
) -> bool:
    """Whether the handler takes a run today's rule refuses (`owner`: the effective one) as
    the history it replays took it: before `UNOWNED_CLOSED_PATCH` the handler checked the
    recorded owner, and a thread without one was anyone's. Asked only where the two rules
    differ, which a new run never reaches (its validator, never replayed, refused it): no
    run records the marker, and histories from before replay the runs they accepted."""
    if recorded_owner is not None:
        return False  # the rules agree: the recorded owner is the effective one
    if may_act(owner, request.principal, request.groups, request.admin):
        return False  # today's rule takes it: nothing to decide
    return not patched(UNOWNED_CLOSED_PATCH)


def _plan_resume(
    interrupts: list[InterruptRecord],
    awaiting: list[InterruptRecord],
    request: RunRequest,
    now: datetime,
) -> RunPlan:
    principal = request.principal
    by_id = {record.id: record for record in interrupts}
    errors: list[InterruptError] = []
    settle: list[tuple[InterruptRecord, ResumeItem]] = []
    replays: list[InterruptRecord] = []
    for entry in request.resume:
        record = by_id.get(entry.interrupt_id)
        if record is None or (record.status == InterruptStatus.OFFERED):
            # an offered interrupt has not been delivered: no client can know its id yet
            errors.append(_item(ErrorCode.UNKNOWN_INTERRUPT_ID, entry, "no such interrupt"))
        elif not may_answer(record.allowed_resolvers, principal, request.groups):
            who = "an anonymous client" if principal is None else repr(principal)
            errors.append(_item(ErrorCode.FORBIDDEN, entry, f"{who} may not answer it"))
        elif not record.awaiting_answer and not _unacknowledged_withdrawal(record):
            if _same_answer(record.resolution, entry):
                replays.append(record)
            else:
                errors.append(
                    _item(
                        ErrorCode.INTERRUPT_ALREADY_RESOLVED,
                        entry,
                        f"interrupt was already {record.status.value} with another answer",
                    )
                )
        elif (problem := _entry_problem(record, entry, now)) is not None:
            errors.append(problem)
        else:
            settle.append((record, entry))
    if errors:
        run_id = _interrupted_run(by_id, errors)
        raise RunRejected(
            RunRejection(
                code=errors[0].code,
                message="; ".join(f"{e.interrupt_id}: {e.message}" for e in errors),
                interrupt_errors=errors,
                interrupted_run_id=run_id,
            )
        )
    if replays and not settle:
        return RunPlan(replay_of=replays[-1].resolved_by_run)
    answered = {record.id for record, _ in settle}
    missing = [record for record in awaiting if record.id not in answered]
    if missing:
        _reject_batch(
            ErrorCode.PARTIAL_RESUME, "one resume must answer every open interrupt", missing
        )
    return RunPlan(settle=settle)


def _refuse_malformed(interrupts: list[InterruptRecord], resume: list[ResumeItem]) -> None:
    """Entries no interrupt may take. Keys in the `ag-ui` namespace are the protocol's (and
    this server's): a client that sends them (past the gateway, too) is refused, so the
    audit trail cannot be forged. A cancel omits the payload (AG-UI), so one that carries
    a payload (even `null`) is refused rather than forwarded to the interrupt's owner."""
    errors = [
        _item(ErrorCode.INVALID_RESUME, entry, f"metadata key {key!r} is reserved (ag-ui)")
        for entry in resume
        for key in reserved_metadata_keys(entry.metadata)
    ]
    cancels = [entry for entry in resume if entry.status == "cancelled" and entry.has_payload]
    if cancels and _enforcing():
        errors += [
            _item(ErrorCode.INVALID_RESUME, entry, "a cancel carries no payload: omit it")
            for entry in cancels
        ]
    if errors:
        raise RunRejected(
            RunRejection(
                code=ErrorCode.INVALID_RESUME,
                message="; ".join(f"{e.interrupt_id}: {e.message}" for e in errors),
                interrupt_errors=errors,
                interrupted_run_id=_interrupted_run({r.id: r for r in interrupts}, errors),
            )
        )


def _entry_problem(
    record: InterruptRecord, entry: ResumeItem, now: datetime
) -> InterruptError | None:
    if entry.status == "cancelled":
        return None  # cancelling is always allowed, also after expiry or withdrawal
    if record.status == InterruptStatus.WITHDRAWN:
        return _item(ErrorCode.INTERRUPT_WITHDRAWN, entry, "its owner withdrew it")
    if record.status == InterruptStatus.EXPIRED or _past(record.expires_at, now):
        return _item(ErrorCode.INTERRUPT_EXPIRED, entry, f"expired at {record.expires_at}")
    schema = record.interrupt.get("responseSchema")
    if schema is None:
        problem = schemaless_problem(record.interrupt.get("reason"), entry)
        if problem is None or not _enforcing():
            return None
        return _item(ErrorCode.INVALID_PAYLOAD, entry, problem)
    if not entry.has_payload:
        return _item(ErrorCode.INVALID_PAYLOAD, entry, "a resolved interrupt needs a payload")
    problem = payload_problem(schema, entry.payload)
    return None if problem is None else _item(ErrorCode.INVALID_PAYLOAD, entry, problem)


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
    if reason == "tool_call" and not (
        isinstance(payload, dict) and isinstance(payload.get("approved"), bool)
    ):
        return 'a tool_call is answered with an approval: {"approved": true | false, ...}'
    return None


def _enforcing() -> bool:
    """Whether a rule added later refuses here (asked only once it would): always outside
    workflows and in the validator (never replayed); in the handler, only in threads that
    took `RESUME_RULES_PATCH`, so histories recorded before replay the runs they accepted."""
    if not workflow.in_workflow() or workflow.unsafe.is_read_only():
        return True
    return patched(RESUME_RULES_PATCH)


def _unacknowledged_withdrawal(record: InterruptRecord) -> bool:
    """Withdrawn by its owner and not yet cancelled by a client (a cancel acknowledges it)."""
    return record.status == InterruptStatus.WITHDRAWN and record.resolution is None


def _past(expires_at: str | None, now: datetime) -> bool:
    return expires_at is not None and now >= datetime.fromisoformat(expires_at)


def _same_answer(applied: ResumeItem | None, entry: ResumeItem) -> bool:
    return applied is not None and (applied.status, _canonical(applied.payload)) == (
        entry.status,
        _canonical(entry.payload),
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _item(code: ErrorCode, entry: ResumeItem, message: str) -> InterruptError:
    return InterruptError(scope="item", code=code, message=message, interrupt_id=entry.interrupt_id)


def _interrupted_run(by_id: dict[str, InterruptRecord], errors: list[InterruptError]) -> str | None:
    for error in errors:
        if error.interrupt_id in by_id:
            return by_id[error.interrupt_id].run_id
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
