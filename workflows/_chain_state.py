"""`ApprovalChain`'s own state: steps, seats, audit trail, reminders (internal, carried on).

Private to the workflow: the `chain` query and the workflow's result are the
contract's `ChainView` (`chain_view`), so this state may change without changing
the wire. It is carried across continue-as-new in `ChainInput.carried`; a field
added here needs a default, or parked chains would not load it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from workflows.contract.chains import AuditKind, ChainStatus, ChainView, SlotStatus, StepStatus


class Slot(BaseModel):
    """One approver's seat in a step: the interrupt offered to them, and their answer."""

    assignee: str
    """Whom the step assigned (after a delegation: the delegate)."""
    interrupt_id: str
    thread_id: str
    expires_at: str | None = None
    status: SlotStatus = "waiting"
    delegated_from: str | None = None
    escalation: bool = False
    answered_by: str | None = None
    """Who answered, as the thread recorded it (a `group:G` seat: the member)."""
    failed: bool = False
    """The offer never reached the inbox (e.g. the server refused it): waits for the deadline."""


class StepState(BaseModel):
    name: str
    approvers: list[str]
    quorum: int
    any_rejection_rejects: bool = True
    status: StepStatus = "waiting"
    slots: list[Slot] = Field(default_factory=list)
    started_at: str | None = None
    deadline: str | None = None
    next_reminder: str | None = None
    escalated_to: str | None = None
    ended_at: str | None = None


class AuditEntry(BaseModel):
    at: str
    kind: AuditKind
    step: str | None = None
    principal: str | None = None
    interrupt_id: str | None = None
    decision: str | None = None
    payload: Any = None
    metadata: dict[str, Any] | None = None
    """The resume entry's metadata (what the client sent along)."""
    run_id: str | None = None
    """The inbox run that carried the answer."""
    note: str | None = None


class Reminder(BaseModel):
    at: str
    step: str
    principals: list[str]


class ChainState(BaseModel):
    chain_id: str
    title: str
    requester: str | None = None
    request: dict[str, Any] = Field(default_factory=dict)
    status: ChainStatus = "running"
    current: int = 0
    steps: list[StepState] = Field(default_factory=list)
    audit: list[AuditEntry] = Field(default_factory=list)
    reminders: list[Reminder] = Field(default_factory=list)
    runs: int = 1
    """How many workflow runs the chain took (continue-as-new)."""


def chain_view(state: ChainState) -> ChainView:
    """The state as the contract shows it (today field for field the same)."""
    return ChainView.model_validate(state.model_dump())
