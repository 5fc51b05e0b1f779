"""Approval chain definitions: pure data (pydantic), loadable from YAML or JSON.

    name: expense
    groups: {finance: [carol, dave, erin]}
    steps:
      - name: manager
        approvers: [bob]
        expires_in: 2d
        remind_every: 1d
        on_expiry: escalate
        escalate_to: dana
      - name: finance
        when: amount > 1000
        approvers: [finance]          # a group: its members
        quorum: 2                     # 2 of 3
        expires_in: 2d

Shared with the workflow sandbox (no I/O here besides `ChainDefinition.load`).
"""

from __future__ import annotations

import json
import operator
import re
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from workflows.durations import Duration

OnExpiry = Literal["escalate", "reject", "approve", "cancel"]

_CONDITION = re.compile(r"\s*([A-Za-z_][\w.]*)\s*(==|!=|>=|<=|>|<|in)\s*(.+?)\s*")


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text.strip("'")


def _compare(op: str, value: Any, other: Any) -> bool:
    if op == "in":
        return value in other
    return {
        "==": operator.eq,
        "!=": operator.ne,
        ">": operator.gt,
        ">=": operator.ge,
        "<": operator.lt,
        "<=": operator.le,
    }[op](value, other)


def condition_holds(condition: str, request: dict[str, Any]) -> bool:
    """`amount > 1000`, `currency == "EUR"`, `team in ["a", "b"]`, joined by ` and `.

    A field the request lacks makes the clause false. Deterministic, no eval()."""
    for clause in re.split(r"\s+and\s+", condition.strip()):
        match = _CONDITION.fullmatch(clause)
        if match is None:
            raise ValueError(f"cannot read condition {clause!r}")
        field, op, raw = match.groups()
        value: Any = request
        for part in field.split("."):
            if not isinstance(value, dict) or part not in value:
                return False
            value = value[part]
        other = _literal(raw)
        try:
            holds = _compare(op, value, other)
        except TypeError:
            return False
        if not holds:
            return False
    return True


class ChainStep(BaseModel):
    name: str
    approvers: list[str] = Field(min_length=1)
    """Principals, or names of the definition's `groups` (expanded to their members)."""
    quorum: int | None = Field(default=None, ge=1)
    """Approvals needed (k of n); None: every approver."""
    any_rejection_rejects: bool = True
    """One rejection rejects the step; False: only when the quorum can no longer be met."""
    expires_in: Duration | None = None
    remind_every: Duration | None = None
    """A reminder to every approver who has not answered, every this long until expiry."""
    on_expiry: OnExpiry = "reject"
    escalate_to: str | None = None
    """With `on_expiry: escalate`: who decides the step alone once it expired (one more
    `expires_in`; if that expires too, the step is rejected)."""
    when: str | None = None
    """A condition on the request (`amount > 1000`): the step exists only when it holds."""

    @model_validator(mode="before")
    @classmethod
    def _escalate_shorthand(cls, data: Any) -> Any:
        expiry = data.get("on_expiry") if isinstance(data, dict) else None
        if isinstance(expiry, str) and expiry.startswith("escalate:"):
            data = {**data, "on_expiry": "escalate", "escalate_to": expiry.split(":", 1)[1]}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ChainStep:
        if self.on_expiry == "escalate" and not self.escalate_to:
            raise ValueError(f"step {self.name!r}: on_expiry escalate needs escalate_to")
        if self.on_expiry == "escalate" and self.expires_in is None:
            raise ValueError(f"step {self.name!r}: on_expiry escalate needs expires_in")
        if self.when is not None:
            condition_holds(self.when, {})  # readable
        return self


class ChainDefinition(BaseModel):
    name: str
    groups: dict[str, list[str]] = Field(default_factory=dict)
    steps: list[ChainStep] = Field(min_length=1)
    allow_self_approval: bool = False
    """False (the default): the requester holds no seat, is never escalated or delegated to,
    and an answer of theirs (e.g. through a `group:G` seat) does not count."""
    delegates: list[str] = Field(default_factory=list)
    """Who else an approver may delegate to (principals or `group:G`), besides everyone the
    definition names (approvers, group members, escalation targets)."""

    @model_validator(mode="after")
    def _quorums_reachable(self) -> ChainDefinition:
        for step in self.steps:
            if step.quorum is not None and step.quorum > len(self.principals(step)):
                raise ValueError(f"step {step.name!r}: quorum above its number of approvers")
        return self

    def principals(self, step: ChainStep) -> list[str]:
        """The step's approvers, groups expanded, each once, in order."""
        seen: list[str] = []
        for name in step.approvers:
            for principal in self.groups.get(name, [name]):
                if principal not in seen:
                    seen.append(principal)
        return seen

    def known_principals(self) -> list[str]:
        """Everyone a step may be delegated to: the principals the definition names, in order."""
        known: list[str] = []
        for step in self.steps:
            named = [*self.principals(step), *([step.escalate_to] if step.escalate_to else [])]
            known.extend(p for p in named if p not in known)
        known.extend(p for p in self.delegates if p not in known)
        return known

    def steps_for(self, request: dict[str, Any]) -> list[ChainStep]:
        return [s for s in self.steps if s.when is None or condition_holds(s.when, request)]

    @classmethod
    def load(cls, path: str | Path) -> ChainDefinition:
        """Read a definition from a `.yaml`/`.yml` or `.json` file."""
        path = Path(path)
        text = path.read_text()
        if path.suffix in (".yaml", ".yml"):
            import yaml

            return cls.model_validate(yaml.safe_load(text))
        return cls.model_validate_json(text)


def expense_chain(step_timeout: timedelta, remind_every: timedelta | None) -> ChainDefinition:
    """The assistant's expense chain: manager bob (escalates to dana), then, above 1000,
    2 of finance's carol, dave and erin."""
    return ChainDefinition(
        name="expense",
        groups={"finance": ["carol", "dave", "erin"]},
        steps=[
            ChainStep(
                name="manager",
                approvers=["bob"],
                expires_in=step_timeout,
                remind_every=remind_every,
                on_expiry="escalate",
                escalate_to="dana",
            ),
            ChainStep(
                name="finance",
                approvers=["finance"],
                quorum=2,
                expires_in=step_timeout,
                remind_every=remind_every,
                on_expiry="reject",
                when="amount > 1000",
            ),
        ],
    )


# -- the workflow's input and state (gateway and workflow share them) ----------

APPROVAL_CHAIN_WORKFLOW = "ApprovalChain"
CHAIN_QUERY = "chain"
"""Query (ApprovalChain): the chain's `ChainState` (steps, decisions, audit trail)."""
APPROVAL_REASON = "temporal:approval"
APPROVAL_METADATA_KEY = "ag-ui-temporal:approval"
"""`Interrupt.metadata` key of a step's interrupt: chain id, step, requester, request."""

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


def inbox_thread(principal: str) -> str:
    """The thread where a principal's approvals arrive."""
    return f"inbox:{principal}"


class Slot(BaseModel):
    """One approver's seat in a step: the interrupt offered to them, and their answer."""

    assignee: str
    """Whom the step assigned (after a delegation: the delegate)."""
    interrupt_id: str
    thread_id: str
    expires_at: str | None = None
    status: Literal["waiting", "approved", "rejected", "delegated", "cancelled", "closed"] = (
        "waiting"
    )
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
    status: Literal["waiting", "active", "approved", "rejected", "cancelled"] = "waiting"
    slots: list[Slot] = Field(default_factory=list)
    started_at: str | None = None
    deadline: str | None = None
    next_reminder: str | None = None
    escalated_to: str | None = None
    ended_at: str | None = None


class AuditEntry(BaseModel):
    at: str
    kind: Literal[
        "submitted", "offered", "decision", "delegated", "cancelled", "expired", "escalated",
        "step", "completed", "refused",
    ]  # fmt: skip
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
    status: Literal["running", "approved", "rejected", "cancelled"] = "running"
    current: int = 0
    steps: list[StepState] = Field(default_factory=list)
    audit: list[AuditEntry] = Field(default_factory=list)
    reminders: list[Reminder] = Field(default_factory=list)
    runs: int = 1
    """How many workflow runs the chain took (continue-as-new)."""


MEMO_KEY = "approvals"
"""The chain's memo entry: `chain_summary`, what `GET /approvals` lists without a query."""
MEMO_SEATS = 50
"""Seats a summary keeps at most (the latest): the memo stays small however long the chain."""
MEMO_REQUEST_CHARS = 2_000
"""A request larger than this (as JSON) is left out of the summary."""


def chain_summary(state: ChainState) -> dict[str, Any]:
    """A bounded summary of the chain for its memo: who holds which seat, in what state."""
    seats = [
        {
            "step": step.name,
            "stepStatus": step.status,
            "assignee": slot.assignee[:DELEGATE_MAX_LENGTH],
            "interrupt": slot.interrupt_id,
            "thread": slot.thread_id[: DELEGATE_MAX_LENGTH + 10],
            "expiresAt": slot.expires_at,
            "status": slot.status,
        }
        for step in state.steps
        for slot in step.slots
        if not slot.failed
    ]
    request = state.request if len(json.dumps(state.request)) <= MEMO_REQUEST_CHARS else {}
    return {
        "v": 1,
        "title": state.title[:200],
        "requester": (state.requester or "")[:DELEGATE_MAX_LENGTH] or None,
        "status": state.status,
        "request": request,
        "seats": seats[-MEMO_SEATS:],
    }


class ChainInput(BaseModel):
    chain_id: str
    definition: ChainDefinition
    request: dict[str, Any] = Field(default_factory=dict)
    title: str = ""
    requester: str | None = None
    requester_thread: str | None = None
    """Where the outcome is posted (the requester's chat thread)."""
    requester_agent: str = "inbox"
    thread_task_queue: str = "ag-ui-temporal"
    index: bool = True
    """Upsert the approval search attributes (the time-skipping server cannot register them)."""
    history_limit: int = 5_000
    carried: ChainState | None = None
