"""Recording approvers' answers in a chain's state: each seat's status and the audit trail.

Workflow code (`ApprovalChain`): the answers are the settlements the inbox threads
confirmed (`workflows.producers`); whether one counts is `workflows.chains._quorum`'s call.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import InterruptSettled
    from ag_ui_temporal.workflows.contract.chains import AuditKind

from ag_ui_temporal.workflows._common import iso
from ag_ui_temporal.workflows.chains import _quorum
from ag_ui_temporal.workflows.chains._state import AuditEntry, ChainState, Slot, StepState
from ag_ui_temporal.workflows.producers.owner import settled_box

LATE_WAIT = timedelta(minutes=5)
"""How long a closing step waits for answers its inboxes accepted a moment before."""


def audit(state: ChainState, kind: AuditKind, **fields: Any) -> None:
    """Append to the audit trail, stamped with the workflow's time."""
    state.audit.append(AuditEntry(at=iso(workflow.now()), kind=kind, **fields))


def apply_answers(
    state: ChainState, step: StepState, box: dict[str, InterruptSettled], rules: _quorum.Rules
) -> None:
    """Record each newly settled slot once, in the order the answers arrived."""
    arrived = [s for s in step.slots if s.status == "waiting" and s.interrupt_id in box]
    order = list(box)
    for slot in sorted(arrived, key=lambda s: order.index(s.interrupt_id)):
        settled = box[slot.interrupt_id]
        principal = settled.principal or slot.assignee
        if settled.status == "resolved" and _refuse(state, step, slot, settled, rules):
            continue
        slot.answered_by = principal
        common: dict[str, Any] = {
            "step": step.name,
            "principal": principal,
            "interrupt_id": slot.interrupt_id,
            "payload": settled.payload,
            "metadata": settled.metadata,
            "run_id": settled.run_id,
            "via": settled.via,
        }
        if settled.status == "expired":
            slot.status = "closed"  # the step's own deadline decides what happens
        elif settled.status == "cancelled":
            slot.status = "cancelled"
            audit(state, "cancelled", **common)
        else:
            decision = settled.payload["decision"]
            slot.status = _quorum.ANSWERED[decision]
            kind: AuditKind = "delegated" if decision == "delegate" else "decision"
            note = settled.payload.get("delegateTo") if decision == "delegate" else None
            audit(state, kind, decision=decision, note=note, **common)


def _refuse(
    state: ChainState,
    step: StepState,
    slot: Slot,
    settled: InterruptSettled,
    rules: _quorum.Rules,
) -> bool:
    """An answer that must not count: the seat closes, the audit says why."""
    principal = settled.principal or slot.assignee
    payload = settled.payload if isinstance(settled.payload, dict) else {}
    why = _quorum.refusal(step, slot, principal, payload, rules)
    if why is None:
        return False
    slot.status = "closed"
    slot.answered_by = principal
    audit(
        state, "refused", step=step.name, principal=principal, interrupt_id=slot.interrupt_id,
        note=why, via=settled.via,
    )  # fmt: skip
    return True


async def record_late(state: ChainState, step: StepState, rules: _quorum.Rules) -> None:
    """Answers accepted just before the step closed: into the audit trail (they no longer
    change the step's outcome)."""
    late = [s for s in step.slots if s.status == "waiting"]
    if not late:
        return
    box = settled_box()
    try:
        await workflow.wait_condition(
            lambda: all(s.interrupt_id in box for s in late), timeout=LATE_WAIT
        )
    except TimeoutError:
        pass
    apply_answers(state, step, box, rules)
    for slot in late:
        if slot.status == "waiting":  # a promise never kept: the thread's run failed
            slot.status = "closed"
        elif slot.status == "delegated" and step.status != "active":
            slot.status = "closed"  # the step is over: nobody to hand it to
