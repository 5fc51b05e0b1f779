"""What a chain tells people outside the chat: reminders to the seats that wait, and the
outcome to its requester (the seats themselves are told when they are offered: the producers'
activity does that for every offer that names who answers). Workflow code (`ApprovalChain`):
it only builds the notices; `workflows.notices.tell` starts their deliveries."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract.chains import (
        APPROVAL_REASON,
        DECISION_SCHEMA,
        inbox_thread,
    )
    from ag_ui_temporal.workflows.contract.notices import MAX_NOTICE_TEXT, Notice, notice_key

from ag_ui_temporal.workflows.chains._memo import offer_text
from ag_ui_temporal.workflows.chains._state import ChainState, Slot, StepState


def reminder_notices(state: ChainState, step: StepState, waiting: list[Slot]) -> list[Notice]:
    """The `nth` reminder (the chain's count of reminders so far) to each seat still waiting."""
    nth = str(len(state.reminders))
    return [
        Notice(
            key=notice_key(slot.interrupt_id, slot.assignee, "reminder", nth),
            kind="reminder",
            principal=slot.assignee,
            thread_id=slot.thread_id,
            interrupt_id=slot.interrupt_id,
            reason=APPROVAL_REASON,
            message=offer_text(state, step)[:MAX_NOTICE_TEXT],
            expires_at=slot.expires_at,
            response_schema=DECISION_SCHEMA,  # what a one-click link may answer
            chain_id=state.chain_id,
            title=state.title[:MAX_NOTICE_TEXT],
            step=step.name,
            requester=state.requester,
            delegated_from=slot.delegated_from,
        )
        for slot in waiting
        if not slot.failed
    ]


def outcome_notice(state: ChainState, requester_thread: str | None) -> list[Notice]:
    """The requester hears how their request ended (a chain without one tells nobody)."""
    if state.requester is None:
        return []
    return [
        Notice(
            key=notice_key(state.chain_id, state.requester, "outcome"),
            kind="outcome",
            principal=state.requester,
            thread_id=requester_thread or inbox_thread(state.requester),
            chain_id=state.chain_id,
            title=state.title[:MAX_NOTICE_TEXT],
            requester=state.requester,
            outcome=state.status,
        )
    ]
