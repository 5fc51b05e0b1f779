"""The approval chains' wire (`workflows.contract.chains`): the view the API serves is the
chain's state field for field, the memo summary stays bounded, and who may read a chain."""

from __future__ import annotations

from ag_ui_temporal.workflows.chains._memo import MEMO_SEATS, chain_summary
from ag_ui_temporal.workflows.chains._state import (
    AuditEntry,
    ChainState,
    Reminder,
    Slot,
    StepState,
    chain_view,
)
from ag_ui_temporal.workflows.contract.chains import (
    ChainSummary,
    ChainView,
    chain_participants,
    may_read_chain,
)


def chain() -> ChainState:
    seat = Slot(assignee="bob", interrupt_id="i-1", thread_id="inbox:bob", status="delegated")
    delegate = Slot(
        assignee="carol", interrupt_id="i-2", thread_id="inbox:carol", delegated_from="bob",
        expires_at="2026-01-02T00:00:00.000Z", answered_by="carol", status="approved",
    )  # fmt: skip
    return ChainState(
        chain_id="expense-1",
        title="expense 5000 EUR",
        requester="alice",
        request={"amount": 5000},
        status="approved",
        steps=[
            StepState(
                name="manager",
                approvers=["bob"],
                quorum=1,
                status="approved",
                slots=[seat, delegate],
                escalated_to="group:managers",
            )
        ],
        audit=[
            AuditEntry(at="t", kind="delegated", principal="bob", note="carol"),
            AuditEntry(at="t", kind="decision", principal="carol", payload={"decision": "approve"}),
        ],
        reminders=[Reminder(at="t", step="manager", principals=["bob"])],
    )


PRIVATE = {"audit_written"}
"""The state's own bookkeeping, which the view does not show."""


def test_the_view_serves_the_same_json_as_the_state():
    state = chain()
    assert chain_view(state).model_dump_json() == state.model_dump_json(exclude=PRIVATE)
    assert set(type(state).model_fields) - set(ChainView.model_fields) == PRIVATE


def test_participants_are_everyone_the_chain_names():
    assert chain_participants(chain_view(chain())) == ["alice", "bob", "carol", "group:managers"]


def test_a_chain_is_read_by_its_participants_and_admins_only():
    view = chain_view(chain())
    assert may_read_chain(view, "alice", (), [])
    assert may_read_chain(view, "erin", ("managers",), [])
    assert may_read_chain(view, "audit", (), ["group:auditors", "audit"])
    assert not may_read_chain(view, "mallory", ("finance",), ["group:auditors"])


def test_the_memo_summary_is_bounded_and_reads_back():
    state = chain()
    seats = [Slot(assignee=f"p{i}", interrupt_id=f"i{i}", thread_id="t") for i in range(80)]
    state.steps[0].slots = seats
    state.request = {"text": "x" * 3_000}
    summary = ChainSummary.model_validate(chain_summary(state))
    assert len(summary.seats) == MEMO_SEATS and summary.seats[-1].assignee == "p79"
    assert summary.request == {} and summary.v == 1
    assert list(chain_summary(chain())) == ["v", "title", "requester", "status", "request", "seats"]
