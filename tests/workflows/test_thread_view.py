"""The `thread` query's answer: a view of the thread's state, readable from old workers too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ag_ui_temporal.workflows.contract import InterruptStatus, ResumeItem, ThreadView
from ag_ui_temporal.workflows.thread.interrupts import InterruptRecord
from ag_ui_temporal.workflows.thread.state import RunRecord, ThreadState


def a_thread() -> ThreadState:
    return ThreadState(
        thread_id="inbox:ada",
        agent="inbox",
        messages=[{"id": "m1", "role": "user", "content": "hi"}],
        interrupts=[
            InterruptRecord(
                interrupt={"id": "int-1", "reason": "input_required", "message": "?"},
                run_id="r1",
                data={"toolCallId": "call-1"},
            ),
            InterruptRecord(
                interrupt={"id": "int-2", "reason": "input_required", "message": "?"},
                run_id="r0",
                status=InterruptStatus.RESOLVED,
                resolution=ResumeItem(interrupt_id="int-2", status="resolved", payload={}),
                resolved_by="ada",
                resolved_via="link",
                resolved_at="2026-01-01T09:30:00.000Z",
            ),
        ],
        runs=[RunRecord(run_id="r0", first_offset=0, last_offset=3, finished=True)],
        events=[{"type": "RUN_STARTED"}],
        refused={"int-9": "owner"},
    )


def test_the_view_leaves_out_what_only_the_thread_needs() -> None:
    view = a_thread().view().model_dump(mode="json")
    assert set(view) == {
        *("thread_id", "agent", "messages", "archived", "state", "interrupts", "runs", "owner"),
        "standing",  # the gateway lists them (`GET .../standing`)
    }
    assert "data" not in view["interrupts"][0]
    assert view["runs"] == [{"run_id": "r0", "parent_run_id": None, "finished": True}]


def test_an_old_worker_s_whole_state_parses_as_the_view() -> None:
    """During a rolling deploy an old worker answers the query with its whole state."""
    old = ThreadView.model_validate(a_thread().model_dump(mode="json"))
    assert old == a_thread().view()
    assert old.effective_owner == "ada"  # `inbox:P` is P's
    assert [i.id for i in old.awaiting] == ["int-1"]
    assert old.active_run is None


def test_the_view_says_how_and_when_an_interrupt_was_answered() -> None:
    [_, answered] = a_thread().view().interrupts
    assert (answered.resolved_by, answered.resolved_via, answered.resolved_at) == (
        "ada",
        "link",
        "2026-01-01T09:30:00.000Z",
    )


def test_a_parked_thread_s_state_from_before_how_and_when_still_parses() -> None:
    """State carried by continue-as-new (or answered by an old worker) without the fields."""
    carried = a_thread().model_dump(mode="json")
    for interrupt in carried["interrupts"]:
        del interrupt["resolved_via"], interrupt["resolved_at"]
    state = ThreadState.model_validate(carried)
    assert [(i.resolved_via, i.resolved_at) for i in state.view().interrupts] == [(None, None)] * 2


def test_what_a_client_may_still_answer_leaves_out_the_expired() -> None:
    """Expired by the thread (`lapsed`), or past `expiresAt` before its timer fired (`overdue`):
    neither is offered to a client; one expired but not `lapsed` (a state no thread of 0.1.0
    leaves a delivered interrupt in) still awaits a cancel."""
    state = a_thread()
    deadline = "2026-01-02T00:00:00.000Z"
    state.interrupts = [
        InterruptRecord(
            interrupt={"id": f"int-{n}", "reason": "input_required", "message": "?"},
            run_id="r1",
            expires_at=deadline,
        )
        for n in range(3)
    ]
    state.interrupts[0].status, state.interrupts[0].lapsed = InterruptStatus.EXPIRED, True
    state.interrupts[1].status = InterruptStatus.EXPIRED  # no `lapsed`
    view = state.view()
    assert [i.id for i in view.awaiting] == ["int-1", "int-2"]
    before = datetime(2026, 1, 1, 23, 59, tzinfo=UTC)
    assert [i.id for i in view.awaiting_at(before)] == ["int-1", "int-2"]
    assert [i.id for i in view.awaiting_at(before + timedelta(minutes=1))] == ["int-1"]
