"""An order workflow that pauses in a chat thread for a shipping choice.

It stands for any workflow of yours: it runs on its own task queue
(`examples`) and worker, and pauses in AG-UI thread T with
`workflows.producers.offer_in_thread` (so it can withdraw the question when the choice is
made elsewhere). `ag-ui-temporal dev` runs a worker for this queue next to the thread
worker, standing in for your own worker.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from ag_ui_temporal.workflows.contract import TASK_QUEUE, DecisionVia

from ag_ui_temporal.workflows.producers import ThreadInterrupt, offer_in_thread, post_to_thread

EXAMPLES_TASK_QUEUE = "examples"
SHIPPING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"speed": {"type": "string", "enum": ["standard", "express"]}},
    "required": ["speed"],
    "additionalProperties": False,
}


def order_workflow_id(order_id: str) -> str:
    return f"order-{order_id}"


class OrderInput(BaseModel):
    order_id: str
    thread_id: str
    thread_task_queue: str = TASK_QUEUE
    """The thread workers' task queue (where the producer activity runs)."""
    agent: str = "inbox"
    """The agent of the thread, if this order creates it."""
    thread_owner: str | None = None
    """Who the thread belongs to if this order creates it (a principal or `group:G`): only
    they may see and answer it (unset: only `THREAD_ADMINS`; `inbox:P` is always P's)."""
    allowed_resolvers: list[str] | None = None
    """Who may answer the question (principals or `group:G`; unset: whoever sees the thread)."""
    expires_in_seconds: float = 2 * 24 * 3600
    subagent_run_id: str | None = None
    """Ask on behalf of a sub-agent's run (the interrupt's `subagentRunId`)."""


class OrderResult(BaseModel):
    order_id: str
    status: str
    """`shipped`, or how the question ended: `cancelled`, `expired`."""
    speed: str | None = None
    decided: str | None = None
    """`thread` (answered in the chat) or `elsewhere` (the `decided_elsewhere` signal)."""
    decided_by: str | None = None
    """Who answered in the thread (shipped or cancelled there); None: decided elsewhere, or
    expired."""
    via: DecisionVia | None = None
    """How they answered: `chat`, `link`, `api` or `cli` (None as for `decided_by`)."""


@workflow.defn(name="OrderWorkflow")
class OrderWorkflow:
    def __init__(self) -> None:
        self.elsewhere: str | None = None

    @workflow.signal(name="decided_elsewhere")
    def decided_elsewhere(self, speed: str) -> None:
        """The shipping speed was chosen outside the chat: the order withdraws its question."""
        self.elsewhere = speed

    @workflow.run
    async def run(self, order: OrderInput) -> OrderResult:
        question: ThreadInterrupt = await offer_in_thread(
            order.thread_id,
            reason="input_required",
            message=f"How should order {order.order_id} ship?",
            response_schema=SHIPPING_SCHEMA,
            expires_in=timedelta(seconds=order.expires_in_seconds),
            metadata={"orderId": order.order_id},
            agent=order.agent,
            thread_task_queue=order.thread_task_queue,
            thread_owner=order.thread_owner,
            allowed_resolvers=order.allowed_resolvers,
            subagent_run_id=order.subagent_run_id,
        )
        waiting = asyncio.ensure_future(question.outcome())
        await workflow.wait_condition(lambda: waiting.done() or self.elsewhere is not None)
        if not waiting.done() and self.elsewhere is not None:
            waiting.cancel()
            await question.withdraw("decided elsewhere")
            return await self._ship(order, self.elsewhere, "elsewhere")
        outcome = await waiting  # who answered in the thread, and how, as its audit says
        if outcome.status != "resolved":
            return OrderResult(
                order_id=order.order_id,
                status=outcome.status,
                decided_by=outcome.principal,
                via=outcome.via,
            )
        shipped = await self._ship(order, outcome.payload["speed"], "thread")
        return shipped.model_copy(update={"decided_by": outcome.principal, "via": outcome.via})

    async def _ship(self, order: OrderInput, speed: str, decided: str) -> OrderResult:
        await post_to_thread(
            order.thread_id,
            f"Order {order.order_id} shipped ({speed}).",
            agent=order.agent,
            thread_task_queue=order.thread_task_queue,
            thread_owner=order.thread_owner,
        )
        return OrderResult(order_id=order.order_id, status="shipped", speed=speed, decided=decided)


def build_examples_worker(client: Client, task_queue: str = EXAMPLES_TASK_QUEUE) -> Worker:
    """The examples' own worker: only its workflows (the producer activity runs on the thread
    worker's queue)."""
    from ag_ui_temporal.worker_plugin import SANDBOX

    return Worker(client, task_queue=task_queue, workflows=[OrderWorkflow], workflow_runner=SANDBOX)
