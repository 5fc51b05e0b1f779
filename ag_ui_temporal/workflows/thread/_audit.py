"""The thread's part of the audit trail: each interrupt's life, as records for the store
(and a standing decision's revocation, a record of the interrupt whose answer made it).

Nothing here issues a command but `flush`: each stage an interrupt reached
(`InterruptRecord.stages`, its owner in `thread.interrupts`) becomes one record, read off
the interrupt's own state (answer, who, how, when), so no transition needs to remember to
write one. Each record's stage is marked on its interrupt (`InterruptRecord.audited`) once
the store has it; an interrupt leaves the state at continue-as-new only once every stage it
reached is marked (`unaudited`), so a store that is down delays the trail and loses none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import WireDict
    from ag_ui_temporal.workflows.contract.audit import (
        AuditRecord,
        audit_key,
        bounded,
        thread_scope,
    )
    from ag_ui_temporal.workflows.contract.notices import approval_of
    from ag_ui_temporal.workflows.contract.standing import StandingDecision
    from ag_ui_temporal.workflows.contract.tools import TOOL_CALL_METADATA_KEY, approval
    from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
    from ag_ui_temporal.workflows.thread.state import ThreadState

from ag_ui_temporal.workflows import _trail
from ag_ui_temporal.workflows._common import iso

MAX_TEXT = 2_000
"""The longest message a record keeps of an interrupt."""


def pending(state: ThreadState, now: str) -> list[tuple[InterruptRecord, AuditRecord]]:
    """The records the store does not have yet, in the order things happened."""
    found = []
    for interrupt in state.interrupts:
        for stage in [*interrupt.stages(), "result"]:
            if stage in interrupt.audited:
                continue
            if (made := _make(stage, interrupt, state, now)) is not None:
                found.append((interrupt, made))
    return found


def revocations(state: ThreadState) -> list[tuple[StandingDecision, AuditRecord]]:
    """The revoked standing decisions whose revocation the store does not have yet: each a
    `revoked` record of the interrupt whose answer made it (`thread._standing`)."""
    return [
        (decision, _revoked(decision, state))
        for decision in state.standing
        if decision.revoked_at is not None
    ]


async def flush(state: ThreadState, *, local: bool = False) -> bool:
    """Send what the store does not have (`local`: in this workflow task, `_trail`); mark on
    each interrupt what it now has; a revoked standing decision leaves the thread once it is
    there. False: the store did not take all of it (send again)."""
    due = pending(state, iso(workflow.now()))
    revoked = revocations(state)
    records = [record for _, record in due] + [record for _, record in revoked]
    if not records:
        return True
    readers = [state.effective_owner] if state.effective_owner else []
    stored = await _trail.append(thread_scope(state.thread_id), readers, records, local=local)
    for interrupt, record in due[:stored]:
        interrupt.audited.append(record.kind)
    written = {decision.id for decision, _ in revoked[: max(0, stored - len(due))]}
    state.standing = [d for d in state.standing if d.id not in written]  # their last trace
    return stored == len(records)


def _revoked(decision: StandingDecision, state: ThreadState) -> AuditRecord:
    assert decision.revoked_at is not None
    return AuditRecord(
        key=audit_key(state.thread_id, decision.interrupt_id, "revoked"),
        kind="revoked",
        at=decision.revoked_at,
        thread_id=state.thread_id,
        interrupt_id=decision.interrupt_id,
        principal=decision.revoked_by,
        data={
            "standingId": decision.id,
            "tool": decision.tool,
            "args": "any" if decision.any_args else bounded(decision.args),
            "approved": decision.approved,
            "expiresAt": decision.expires_at,
        },
    )


def _make(
    stage: str, interrupt: InterruptRecord, state: ThreadState, now: str
) -> AuditRecord | None:
    data = _BUILDERS[stage](interrupt, state)
    if data is None:
        return None
    approval = approval_of(interrupt.interrupt)
    settled_at = interrupt.resolved_at if stage in ("answered", "expired") else None
    return AuditRecord(
        key=audit_key(state.thread_id, interrupt.id, stage),
        kind=stage,
        at=settled_at or now,
        thread_id=state.thread_id,
        chain_id=approval.get("chainId") if isinstance(approval.get("chainId"), str) else None,
        interrupt_id=interrupt.id,
        run_id=(run := _run_of(stage, interrupt)) and state.client_run_id(run),
        principal=_principal_of(stage, interrupt, approval),
        data=data,
    )


def _run_of(stage: str, interrupt: InterruptRecord) -> str | None:
    if stage == "answered":
        return interrupt.resolved_by_run
    return interrupt.run_id or None


def _principal_of(stage: str, interrupt: InterruptRecord, approval: dict[str, Any]) -> str | None:
    """Who acted: the answerer; for an offer, who asked for it (a chain's requester)."""
    if stage == "answered":
        return interrupt.resolved_by
    if stage == "offered":
        requester = approval.get("requester")
        return requester if isinstance(requester, str) else None
    return None


def _asked(interrupt: InterruptRecord, state: ThreadState) -> WireDict:
    """The question: reason, message, deadline, and the proposal (a tool call's name and
    arguments, or the schema of what the person fills in)."""
    wire = interrupt.interrupt
    metadata = wire.get("metadata") if isinstance(wire.get("metadata"), dict) else {}
    call = metadata.get(TOOL_CALL_METADATA_KEY) if metadata else None
    if isinstance(call, dict):
        proposal = {"tool": call.get("name"), "arguments": bounded(call.get("arguments"))}
    else:
        proposal = {"responseSchema": bounded(wire.get("responseSchema"))}
    data: WireDict = {
        "reason": wire.get("reason"),
        "message": str(wire.get("message") or "")[:MAX_TEXT],
        "expiresAt": interrupt.expires_at,
        "proposal": proposal,
    }
    if wire.get("toolCallId") is not None:
        data["toolCallId"] = wire.get("toolCallId")
    if interrupt.owner is None:  # the agent asked, in a conversation of the thread's owner
        data["agent"] = state.agent
        data["onBehalfOf"] = state.effective_owner
    else:
        data["owner"] = interrupt.owner
        data["allowedResolvers"] = interrupt.allowed_resolvers
    if approval := approval_of(wire):
        data["approval"] = bounded({k: v for k, v in approval.items() if k != "request"})
    return data


def _delivered(interrupt: InterruptRecord, state: ThreadState) -> WireDict:
    return {}


def _answered(interrupt: InterruptRecord, state: ThreadState) -> WireDict | None:
    answer = interrupt.resolution
    if answer is None:
        return None
    return {
        "status": answer.status,
        "payload": bounded(answer.payload),
        "metadata": bounded(answer.metadata),
        "via": interrupt.resolved_via,
    }


def _expired(interrupt: InterruptRecord, state: ThreadState) -> WireDict:
    return {"expiresAt": interrupt.expires_at}


def _withdrawn(interrupt: InterruptRecord, state: ThreadState) -> WireDict:
    return {}


def _result(interrupt: InterruptRecord, state: ThreadState) -> WireDict | None:
    """What an approved tool call returned, once its result is in the transcript's window."""
    answer, call_id = interrupt.resolution, interrupt.interrupt.get("toolCallId")
    if answer is None or call_id is None or answer.status != "resolved":
        return None
    if (decided := approval(answer.payload)) is not None and not decided.approved:
        return None  # declined: the tool never ran
    message = next(
        (
            m
            for m in reversed(state.messages)
            if m.get("role") == "tool" and m.get("toolCallId") == call_id
        ),
        None,
    )
    if message is None:
        return None
    status = "error" if message.get("error") else "ok"
    return {"toolCallId": call_id, "status": status, "content": bounded(message.get("content"))}


_BUILDERS: dict[str, Callable[[InterruptRecord, ThreadState], WireDict | None]] = {
    "asked": _asked,
    "offered": _asked,
    "delivered": _delivered,
    "answered": _answered,
    "expired": _expired,
    "withdrawn": _withdrawn,
    "result": _result,
}
