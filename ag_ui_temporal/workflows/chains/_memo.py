"""What a chain shows outside its history: search attributes, memo summary, messages.

`index` gives the values of `AguiApprovalPending` / `AguiApprovalParticipants`;
`chain_summary` the bounded memo entry (`ChainSummary`) `GET /approvals` lists
without querying each chain; `Published` upserts both when they change (workflow
code); the texts are what approvers and the requester read.
"""

from __future__ import annotations

import json
from typing import Any

from temporalio import workflow

from ag_ui_temporal.workflows.chains._state import ChainState, StepState
from ag_ui_temporal.workflows.contract import APPROVALS_PARTICIPANTS, APPROVALS_PENDING
from ag_ui_temporal.workflows.contract.chains import (
    DELEGATE_MAX_LENGTH,
    MEMO_KEY,
    ChainSummary,
    SeatSummary,
    awaits_answer,
)

MEMO_SEATS = 50
"""Seats a summary keeps at most (the latest): the memo stays small however long the chain."""
MEMO_REQUEST_CHARS = 2_000
"""A request larger than this (as JSON) is left out of the summary."""


def index(state: ChainState) -> tuple[list[str], list[str]]:
    """Who an active step waits for, and everyone ever seated (failed offers left out)."""
    pending = sorted(
        {
            slot.assignee
            for step in state.steps
            for slot in step.slots
            if awaits_answer(slot.status, step.status) and not slot.failed
        }
    )
    everyone = sorted(
        {slot.assignee for step in state.steps for slot in step.slots if not slot.failed}
    )
    return pending, everyone


def chain_summary(state: ChainState) -> dict[str, Any]:
    """A bounded summary of the chain for its memo: who holds which seat, in what state."""
    seats = [
        SeatSummary(
            step=step.name,
            stepStatus=step.status,
            assignee=slot.assignee[:DELEGATE_MAX_LENGTH],
            interrupt=slot.interrupt_id,
            thread=slot.thread_id[: DELEGATE_MAX_LENGTH + 10],
            expiresAt=slot.expires_at,
            status=slot.status,
        )
        for step in state.steps
        for slot in step.slots
        if not slot.failed
    ]
    request = state.request if len(json.dumps(state.request)) <= MEMO_REQUEST_CHARS else {}
    summary = ChainSummary(
        title=state.title[:200],
        requester=(state.requester or "")[:DELEGATE_MAX_LENGTH] or None,
        status=state.status,
        request=request,
        seats=seats[-MEMO_SEATS:],
    )
    return summary.model_dump()


class Published:
    """What the chain last published (search attributes, memo): upserted only when changed."""

    def __init__(self, *, memo: bool) -> None:
        self.memo_on = memo
        """The memo summary is kept (`approval-chain-memo` patch)."""
        self.indexed: tuple[list[str], list[str]] | None = None
        self.memo: dict[str, Any] | None = None

    def update(self, state: ChainState) -> None:
        pending, everyone = index(state)
        self._upsert_memo(state)
        if self.indexed == (pending, everyone):
            return
        self.indexed = (pending, everyone)
        workflow.upsert_search_attributes(
            [APPROVALS_PENDING.value_set(pending), APPROVALS_PARTICIPANTS.value_set(everyone)]
        )

    def _upsert_memo(self, state: ChainState) -> None:
        if not self.memo_on:
            return
        summary = chain_summary(state)
        if summary == self.memo:
            return
        self.memo = summary
        workflow.upsert_memo({MEMO_KEY: summary})


def offer_text(state: ChainState, step: StepState) -> str:
    """The question an approver's inbox shows."""
    by = f" from {state.requester}" if state.requester else ""
    return f"Approve {state.title}{by}? (step: {step.name})"


def reminder_text(state: ChainState, step: StepState) -> str:
    return (
        f"Reminder: {state.title} waits for your decision "
        f"(step: {step.name}, expires {step.deadline})."
    )


def outcome_text(state: ChainState) -> str:
    """What the requester's thread is told when the chain ends."""
    last = next((e for e in reversed(state.audit) if e.kind == "decision"), None)
    if state.status == "approved":
        return f"Your request {state.title} was approved."
    who = f" by {last.principal}" if last and last.decision == "reject" else ""
    step = state.steps[state.current].name if state.current < len(state.steps) else "?"
    return f"Your request {state.title} was {state.status}{who} (step: {step})."
