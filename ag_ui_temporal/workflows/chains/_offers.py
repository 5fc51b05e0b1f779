"""A chain's conversation with its approvers' inboxes: offer a seat, remind, withdraw.

Each seat is an interrupt offered to the approver's inbox thread (`inbox:{principal}`,
agent `inbox`) with `allowed_resolvers=[principal]`; the answers come back through
`workflows.producers`. Workflow code (runs inside `ApprovalChain`).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import (
        POST_MESSAGE_SIGNAL,
        PostMessage,
        thread_workflow_id,
    )
    from ag_ui_temporal.workflows.contract.chains import (
        APPROVAL_METADATA_KEY,
        APPROVAL_REASON,
        DECISION_SCHEMA,
        inbox_thread,
    )

from ag_ui_temporal.workflows._common import new_id
from ag_ui_temporal.workflows.chains._memo import offer_text
from ag_ui_temporal.workflows.chains._state import ChainState, Slot, StepState
from ag_ui_temporal.workflows.producers import ThreadInterrupt, offer_in_thread


async def offer_seat(
    state: ChainState,
    step: StepState,
    principal: str,
    *,
    schema: dict[str, Any] | None,
    deadline: datetime | None,
    delegated_from: str | None,
    escalation: bool,
    task_queue: str,
) -> Slot:
    """Offer `principal` a seat in `step`; raises `ActivityError` if the inbox refused it."""
    question = await offer_in_thread(
        inbox_thread(principal),
        reason=APPROVAL_REASON,
        message=offer_text(state, step),
        response_schema=schema or DECISION_SCHEMA,
        expires_at=deadline,
        metadata={
            APPROVAL_METADATA_KEY: {
                "chainId": state.chain_id,
                "title": state.title,
                "step": step.name,
                "requester": state.requester,
                "request": state.request,
                **({"delegatedFrom": delegated_from} if delegated_from else {}),
                **({"escalation": True} if escalation else {}),
            }
        },
        allowed_resolvers=[principal],
        thread_task_queue=task_queue,
    )
    return Slot(
        assignee=principal,
        interrupt_id=question.id,
        thread_id=question.thread_id,
        expires_at=question.interrupt.get("expiresAt"),
        delegated_from=delegated_from,
        escalation=escalation,
    )


def failed_seat(principal: str, delegated_from: str | None, escalation: bool) -> Slot:
    """The seat of an offer the server refused for good: it waits, unanswerable, for the
    step's deadline (expiry and escalation still happen)."""
    return Slot(
        assignee=principal,
        interrupt_id=new_id("failed"),
        thread_id=inbox_thread(principal),
        delegated_from=delegated_from,
        escalation=escalation,
        failed=True,
    )


async def remind(slots: list[Slot], text: str) -> None:
    """Post `text` to each seat's inbox, all at once; best effort."""

    async def tell(slot: Slot) -> None:
        post = PostMessage(message_id=new_id("msg"), text=text)
        try:
            await workflow.get_external_workflow_handle(thread_workflow_id(slot.thread_id)).signal(
                POST_MESSAGE_SIGNAL, post
            )
        except Exception as err:  # the inbox thread is gone: the reminder is best effort
            workflow.logger.warning("reminder to %s not sent: %s", slot.assignee, err)

    await asyncio.gather(*(tell(slot) for slot in slots))


async def withdraw(slot: Slot, step: StepState, task_queue: str) -> None:
    """Withdraw a seat's interrupt nobody needs to answer any more."""
    question = ThreadInterrupt(slot.thread_id, {"id": slot.interrupt_id}, None, task_queue)
    await question.withdraw(f"step {step.name} is {step.status}")
