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

Shared with the workflow sandbox (no I/O here besides `ChainDefinition.load`). Also
`ChainInput`, what starts an `ApprovalChain`; its wire names and the view it answers
with are the contract's (`workflows.contract.chains`).
"""

from __future__ import annotations

import json
import operator
import re
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from ag_ui_temporal.durations import Duration
from ag_ui_temporal.workflows.chains._state import ChainState

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
    return bool(
        {
            "==": operator.eq,
            "!=": operator.ne,
            ">": operator.gt,
            ">=": operator.ge,
            "<": operator.lt,
            "<=": operator.le,
        }[op](value, other)
    )


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


# -- the workflow's input ----------------------------------------------------------


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
    """The state an earlier run of the chain continued as new with."""
