"""The real `sendEmail` activity on two workers sharing one store: the effect happens once.

Each worker has its own task queue and its own engine (its own pool), as two pods would;
a driver workflow sends the same tool call to both at once, then again, as Temporal does
when it retries an activity on another worker after a crash.
"""

from __future__ import annotations

import asyncio
import uuid
from contextlib import AsyncExitStack
from datetime import timedelta

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.store import Outbox, open_engine
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from tests.effects import EffectLog


@workflow.defn(sandboxed=False)
class SendOnEveryQueue:
    """Runs `sendEmail` with one key on every queue at once, then once more on each."""

    @workflow.run
    async def run(self, queues: list[str], key: str) -> list[ToolCallOutput]:
        call = ToolCallInput(key=key, tool="sendEmail", args={"to": "a@x.io", "subject": key})

        async def send(queue: str) -> ToolCallOutput:
            return await workflow.execute_activity(
                "sendEmail", call, task_queue=queue, result_type=ToolCallOutput,
                start_to_close_timeout=timedelta(seconds=30),
            )  # fmt: skip

        racing = await asyncio.gather(*(send(queue) for queue in queues))
        return [*racing, *[await send(queue) for queue in queues]]


async def test_two_workers_one_effect(client: Client, store_url: str):
    name = f"effects-{uuid.uuid4().hex[:8]}"
    queues = [f"{name}-a", f"{name}-b"]
    engines = [open_engine(store_url) for _ in queues]
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asyncio.gather, *(e.dispose() for e in engines))
        for queue, engine in zip(queues, engines, strict=True):
            tools = ToolActivities(Outbox(engine))
            worker = Worker(client, task_queue=queue, activities=[tools.send_email])
            await stack.enter_async_context(worker)
        driver = Worker(
            client,
            task_queue=name,
            workflows=[SendOnEveryQueue],
            workflow_runner=UnsandboxedWorkflowRunner(),
        )
        await stack.enter_async_context(driver)
        results = await client.execute_workflow(
            SendOnEveryQueue.run, args=[queues, name], id=name, task_queue=name
        )
    assert [r.first_time for r in results].count(True) == 1
    assert {r.result["subject"] for r in results} == {name}
    assert [e["key"] for e in EffectLog(store_url).effects("sendEmail")] == [name]
