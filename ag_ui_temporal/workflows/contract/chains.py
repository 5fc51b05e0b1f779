"""The approval chains' wire: names, the decision schema, the chain view and its memo summary.

What the gateway (and any client of the worker) knows about `ApprovalChain`:
its workflow and query names, the reason and metadata key of the interrupts it
offers to inboxes, what an approver may answer, the view the `chain` query
returns (and `GET /approvals/{chain}` serves as is), the summary every chain
keeps in its memo for the list, and who may read a chain. The workflow's own
state lives in `workflows.chains._state`; it can change without changing this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ag_ui_temporal.workflows.contract.access import INBOX_PREFIX, admits

APPROVAL_CHAIN_WORKFLOW = "ApprovalChain"
CHAIN_QUERY = "chain"
"""Query (ApprovalChain): the chain's `ChainView` (steps, decisions, audit trail)."""
APPROVAL_REASON = "temporal:approval"
APPROVAL_METADATA_KEY = "ag-ui-temporal:approval"
"""`Interrupt.metadata` key of a step's interrupt: chain id, step, requester, request."""
MEMO_KEY = "approvals"
"""The chain's memo entry: a `ChainSummary`, what `GET /approvals` lists without a query."""


def inbox_thread(principal: str) -> str:
    """The thread where a principal's approvals arrive."""
    return f"{INBOX_PREFIX}{principal}"


# -- what an approver answers ---------------------------------------------------------

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "reject", "delegate"]},
        "comment": {"type": "string"},
        "delegateTo": {"type": "string", "minLength": 1},
    },
    "required": ["decision"],
    "additionalProperties": False,
    "if": {"properties": {"decision": {"const": "delegate"}}},
    "then": {"required": ["decision", "delegateTo"]},
}
"""What an approver answers: `{"decision": "approve" | "reject", "comment"?}`, or
`{"decision": "delegate", "delegateTo": "P"}` to hand the step to P."""
DELEGATE_MAX_LENGTH = 200
COMMENT_MAX_LENGTH = 4_000


def decision_schema(delegates: list[str]) -> dict[str, Any]:
    """DECISION_SCHEMA for one seat: `delegateTo` only among `delegates` (none: no delegation),
    so the thread's own payload check answers `INVALID_PAYLOAD` to anyone else."""
    allowed = [d for d in delegates if 0 < len(d) <= DELEGATE_MAX_LENGTH]
    properties: dict[str, Any] = {
        "decision": {"type": "string", "enum": ["approve", "reject"]},
        "comment": {"type": "string", "maxLength": COMMENT_MAX_LENGTH},
    }
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": ["decision"],
        "additionalProperties": False,
    }
    if not allowed:
        return schema
    properties["decision"] = DECISION_SCHEMA["properties"]["decision"]
    properties["delegateTo"] = {
        "type": "string",
        "minLength": 1,
        "maxLength": DELEGATE_MAX_LENGTH,
        "enum": allowed,
    }
    return {**schema, "if": DECISION_SCHEMA["if"], "then": DECISION_SCHEMA["then"]}


# -- the chain view (the `chain` query's answer, and the workflow's result) ------------
# Field names and order are the JSON `GET /approvals/{chain}` serves (snake_case).

SlotStatus = Literal["waiting", "approved", "rejected", "delegated", "cancelled", "closed"]
StepStatus = Literal["waiting", "active", "approved", "rejected", "cancelled"]
ChainStatus = Literal["running", "approved", "rejected", "cancelled"]
AuditKind = Literal[
    "submitted", "offered", "decision", "delegated", "cancelled", "expired", "escalated",
    "step", "completed", "refused",
]  # fmt: skip


class SlotView(BaseModel):
    """One approver's seat in a step: the interrupt offered to them, and their answer."""

    assignee: str
    """Whom the step assigned (after a delegation: the delegate)."""
    interrupt_id: str
    """The interrupt offered in the assignee's inbox."""
    thread_id: str
    """The inbox thread it was offered in."""
    expires_at: str | None = None
    """When the interrupt expires (ISO 8601), if it does."""
    status: SlotStatus = "waiting"
    """`waiting`, the answer given, or `closed` (withdrawn, refused, expired)."""
    delegated_from: str | None = None
    """Whose seat was handed to the assignee."""
    escalation: bool = False
    """The seat of the escalation target of an expired step."""
    answered_by: str | None = None
    """Who answered, as the thread recorded it (a `group:G` seat: the member)."""
    failed: bool = False
    """The offer never reached the inbox (e.g. the server refused it): waits for the deadline."""


class StepView(BaseModel):
    """One step of the chain: its seats and how far it got."""

    name: str
    """The step's name in the definition."""
    approvers: list[str]
    """Who holds a seat (groups expanded)."""
    quorum: int
    """Approvals the step needs."""
    any_rejection_rejects: bool = True
    """One rejection rejects the step; False: only when the quorum can no longer be met."""
    status: StepStatus = "waiting"
    """`waiting` (not started), `active`, or its outcome."""
    slots: list[SlotView] = Field(default_factory=list)
    """Every seat offered, in order (delegations and escalations add seats)."""
    started_at: str | None = None
    """When the step started (ISO 8601)."""
    deadline: str | None = None
    """When the step expires (ISO 8601), if it does."""
    next_reminder: str | None = None
    """When the waiting approvers are reminded next."""
    escalated_to: str | None = None
    """Who the expired step was escalated to."""
    ended_at: str | None = None
    """When the step ended (ISO 8601)."""


class AuditEntryView(BaseModel):
    """One line of the audit trail."""

    at: str
    """When (ISO 8601, workflow time)."""
    kind: AuditKind
    """What happened."""
    step: str | None = None
    """The step it happened in."""
    principal: str | None = None
    """Who (answered, was offered, was escalated to, ...)."""
    interrupt_id: str | None = None
    """The seat's interrupt."""
    decision: str | None = None
    """`approve`/`reject`/`delegate`; for a step or the chain: its outcome."""
    payload: Any = None
    """The answer as the approver sent it (or the request, for `submitted`)."""
    metadata: dict[str, Any] | None = None
    """The resume entry's metadata (what the client sent along)."""
    run_id: str | None = None
    """The inbox run that carried the answer."""
    via: str | None = None
    """How the answer came: `chat`, `link` or `api` (`RunRequest.via`; None: not an answer,
    or an inbox from before it recorded how)."""
    note: str | None = None
    """Details: the delegate, why an answer was refused, ..."""


class ReminderView(BaseModel):
    """One reminder sent to the approvers of a step who had not answered."""

    at: str
    """When it was due (ISO 8601)."""
    step: str
    """The step it reminded of."""
    principals: list[str]
    """Whom it reminded."""


class ChainView(BaseModel):
    """One chain in full: steps, seats, every decision in the audit trail, reminders."""

    chain_id: str
    """The chain's workflow id."""
    title: str
    """What is being approved."""
    requester: str | None = None
    """Who asked."""
    request: dict[str, Any] = Field(default_factory=dict)
    """The request the steps' conditions read (`amount`, ...)."""
    status: ChainStatus = "running"
    """`running`, or the chain's outcome."""
    current: int = 0
    """The index of the step under way."""
    steps: list[StepView] = Field(default_factory=list)
    """The steps whose conditions held, in order."""
    audit: list[AuditEntryView] = Field(default_factory=list)
    """Everything that happened, in order."""
    reminders: list[ReminderView] = Field(default_factory=list)
    """Every reminder sent."""
    runs: int = 1
    """How many workflow runs the chain took (continue-as-new)."""


def awaits_answer(seat_status: str | None, step_status: str | None) -> bool:
    """Whether a seat's approver is asked now: the seat is unanswered and its step is the
    active one. The chain's search attributes and the gateway's inbox both decide by it."""
    return seat_status == "waiting" and step_status == "active"


def chain_participants(chain: ChainView) -> list[str]:
    """Everyone a chain names: requester, everyone seated, delegating, delegated to, escalated
    to, or named in its audit trail (entries may be `group:G`)."""
    named = [chain.requester, *(e.principal for e in chain.audit)]
    for step in chain.steps:
        named += [*step.approvers, step.escalated_to]
        for slot in step.slots:
            named += [slot.assignee, slot.delegated_from, slot.answered_by]
    named += [e.note for e in chain.audit if e.kind == "delegated"]
    return sorted({p for p in named if p})


def may_read_chain(
    chain: ChainView, principal: str, groups: Sequence[str], admins: Sequence[str]
) -> bool:
    """Who may read a chain: its participants (`chain_participants`) and the `admins`."""
    return admits([*chain_participants(chain), *admins], principal, groups)


# -- the memo summary (what `GET /approvals` lists without querying each chain) ------


class SeatSummary(BaseModel):
    """One seat as the memo keeps it (bounded: names cut, failed offers left out)."""

    step: str | None = None
    """The step's name."""
    stepStatus: str | None = None
    """The step's status (`active`: the seat may still be answered)."""
    assignee: str | None = None
    """Whom the seat is for."""
    interrupt: str | None = None
    """The interrupt offered in the assignee's inbox."""
    thread: str | None = None
    """The inbox thread."""
    expiresAt: str | None = None
    """When the interrupt expires (ISO 8601), if it does."""
    status: str | None = None
    """`waiting`, or the answer."""


class ChainSummary(BaseModel):
    """The chain's memo entry (`MEMO_KEY`): enough for a page of `GET /approvals`."""

    v: int = 1
    """The summary's version (the gateway reads version 1 only)."""
    title: str | None = None
    """What is being approved (at most 200 characters)."""
    requester: str | None = None
    """Who asked."""
    status: str | None = None
    """The chain's status."""
    request: dict[str, Any] = Field(default_factory=dict)
    """The request, unless too large for the memo (then empty)."""
    seats: list[SeatSummary] = Field(default_factory=list)
    """The latest seats, at most `workflows.chains._memo.MEMO_SEATS`."""
