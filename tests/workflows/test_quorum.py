"""Deciding a chain's step (`workflows.chains._quorum`): who holds a seat, whose answer counts,
when the quorum is met. Pure functions: no server."""

from __future__ import annotations

from ag_ui_temporal.workflows.chains._quorum import (
    Rules,
    decide,
    delegates,
    expiry_outcome,
    people,
    refusal,
    seats,
)
from ag_ui_temporal.workflows.chains._state import Slot, StepState
from ag_ui_temporal.workflows.contract.chains import SlotStatus

ON = Rules(requester="alice", known=["bob", "carol", "dave", "alice"])


def slot(assignee: str, status: SlotStatus = "waiting", answered_by: str | None = None) -> Slot:
    return Slot(
        assignee=assignee,
        interrupt_id=f"i-{assignee}-{status}",
        thread_id=f"inbox:{assignee}",
        status=status,
        answered_by=answered_by,
    )


def step(quorum: int, *slots: Slot, any_rejection_rejects: bool = True) -> StepState:
    return StepState(
        name="finance",
        approvers=[s.assignee for s in slots],
        quorum=quorum,
        any_rejection_rejects=any_rejection_rejects,
        status="active",
        slots=list(slots),
    )


def test_the_requester_holds_no_seat_and_the_quorum_shrinks_with_the_seats():
    assert seats(["alice", "bob", "carol"], None, ON) == (["bob", "carol"], 2)
    assert seats(["alice", "bob"], 2, ON) == (["bob"], 1)
    assert seats(["alice"], None, ON) == ([], 1)


def test_self_approval_when_the_definition_allows_it():
    allowed = Rules(requester="alice", allow_self_approval=True)
    assert seats(["alice", "bob"], None, allowed) == (["alice", "bob"], 2)
    assert not allowed.is_requester("alice")


def test_a_quorum_counts_distinct_people():
    # a group seat answered twice by the same member counts once
    same = [slot("group:finance", "approved", "bob"), slot("carol", "approved", "bob")]
    two = step(2, *same, slot("dave"))
    assert people(two, "approved", ON) == 1
    assert decide(two, ON) == "active"


def test_one_rejection_rejects_unless_the_step_says_otherwise():
    mixed = [slot("bob", "approved", "bob"), slot("carol", "rejected", "carol"), slot("dave")]
    assert decide(step(2, *mixed), ON) == "rejected"
    assert decide(step(2, *mixed, any_rejection_rejects=False), ON) == "active"


def test_a_step_that_can_no_longer_meet_its_quorum_is_rejected_but_not_while_expiring():
    cancelled = step(2, slot("bob", "approved", "bob"), slot("carol", "cancelled"))
    assert decide(cancelled, ON) == "rejected"
    assert decide(cancelled, ON, expiring=True) == "active"


def test_delegates_are_the_known_principals_not_seated_and_not_the_requester():
    seated = step(1, slot("bob"), slot("carol", "approved", "carol"))
    assert delegates(seated, "bob", ON) == ["dave"]


def test_answers_that_do_not_count():
    counted = step(2, slot("bob", "approved", "bob"), slot("carol"))
    answer = counted.slots[1]
    assert refusal(counted, answer, "alice", {"decision": "approve"}, ON) == (
        "the requester cannot decide their own request"
    )
    assert refusal(counted, answer, "bob", {"decision": "reject"}, ON) == (
        "bob already counted in this step"
    )
    assert refusal(counted, answer, "carol", {"decision": "delegate", "delegateTo": "bob"}, ON)
    assert (
        refusal(counted, answer, "carol", {"decision": "delegate", "delegateTo": "dave"}, ON)
        is None
    )
    assert refusal(counted, answer, "carol", {"decision": "approve"}, ON) is None


def test_what_an_expired_step_becomes():
    nobody = StepState(name="s", approvers=[], quorum=1, status="active")
    someone = StepState(name="s", approvers=["bob"], quorum=1, status="active")
    assert expiry_outcome("approve", nobody, ON) == "rejected"  # only the requester was named
    assert expiry_outcome("approve", someone, ON) == "approved"
    assert expiry_outcome("cancel", someone, ON) == "cancelled"
    assert expiry_outcome("reject", someone, ON) == "rejected"
    assert expiry_outcome("escalate", someone, ON) == "rejected"  # escalated once already
