"""Deciding a chain's step: who holds a seat, whose answer counts, when the quorum is met.

Pure functions over the chain's state (`workflows.chains._state`), shared by
`ApprovalChain` and its unit tests: the requester holds no seat (unless the definition
allows self-approval), a quorum counts distinct people, and only known delegates are taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ag_ui_temporal.workflows.chains._state import Slot, StepState
from ag_ui_temporal.workflows.contract.chains import SlotStatus, StepStatus

COUNTED = ("approved", "rejected")
ANSWERED: dict[str, SlotStatus] = {
    "approve": "approved",
    "reject": "rejected",
    "delegate": "delegated",
}
"""A seat's status after each decision."""
ON_EXPIRY: dict[str, StepStatus] = {"approve": "approved", "cancel": "cancelled"}
"""An expired step's outcome for each `on_expiry` (anything else: rejected)."""


@dataclass(frozen=True)
class Rules:
    """What decides who may answer a chain's steps."""

    requester: str | None = None
    allow_self_approval: bool = False
    known: list[str] = field(default_factory=list)
    """Everyone the definition names (`ChainDefinition.known_principals`)."""

    def is_requester(self, principal: str | None) -> bool:
        """Whether `principal` is the requester and so may not decide (unless allowed)."""
        return (
            not self.allow_self_approval and principal is not None and principal == self.requester
        )


def seats(principals: list[str], quorum: int | None, rules: Rules) -> tuple[list[str], int]:
    """A step's approvers and quorum: the requester holds no seat and the quorum shrinks
    with the seats (never below 1)."""
    needed = quorum or len(principals)
    approvers = [p for p in principals if not rules.is_requester(p)]
    return approvers, max(1, min(needed, len(approvers)))


def delegates(step: StepState, principal: str, rules: Rules) -> list[str]:
    """Whom `principal`'s seat may delegate to: the principals the definition knows,
    except the requester and anyone seated in (or counted by) the step already."""
    taken = {principal, *(s.assignee for s in step.slots), *step.approvers}
    taken |= {s.answered_by for s in step.slots if s.answered_by}
    return [p for p in rules.known if p not in taken and not rules.is_requester(p)]


def refusal(
    step: StepState, slot: Slot, principal: str, payload: dict[str, Any], rules: Rules
) -> str | None:
    """Why an answer to `slot` by `principal` must not count (None: it counts)."""
    counted = {s.answered_by for s in step.slots if s.status in COUNTED}
    target = payload.get("delegateTo") if payload.get("decision") == "delegate" else None
    if rules.is_requester(principal):
        return "the requester cannot decide their own request"
    if principal in counted and payload.get("decision") in ("approve", "reject"):
        return f"{principal} already counted in this step"
    if target is not None and target not in delegates(step, slot.assignee, rules):
        return f"cannot delegate to {str(target)[:80]!r}"
    return None


def people(step: StepState, status: str, rules: Rules) -> int:
    """The distinct people who gave this answer."""
    slots = [s for s in step.slots if s.status == status]
    return len({s.answered_by or s.assignee for s in slots})


def decide(step: StepState, rules: Rules, *, expiring: bool = False) -> StepStatus:
    """The step's status after applying the quorum. While the step expires, seats the expiry
    closed do not count against it (the expiry rule decides instead: escalate, reject, ...)."""
    approvals = people(step, "approved", rules)
    rejections = people(step, "rejected", rules)
    waiting = sum(s.status == "waiting" for s in step.slots)
    if approvals >= step.quorum:
        return "approved"
    if rejections and step.any_rejection_rejects:
        return "rejected"
    if not expiring and approvals + waiting < step.quorum:
        return "rejected"  # cancelled seats: the quorum can no longer be met
    return step.status


def expiry_outcome(on_expiry: str, step: StepState, rules: Rules) -> StepStatus:
    """What an expired step becomes when it is not escalated (`on_expiry`)."""
    if on_expiry == "approve" and not step.approvers:
        return "rejected"  # nobody but the requester could have approved it
    return ON_EXPIRY.get(on_expiry, "rejected")
