"""The floors: a raw temporalio workflow parked on an update, in its own worker process.

`resume` is one update round trip on the same server, the least any gateway built on
Temporal updates can cost (the floor of a decline: no tool runs); `resume_tool` is the same
update whose handler runs one activity (the floor of an approval: the tool runs once);
`resume_agent` runs the tool's activity and then a second one standing in for the model
request an agent makes after a tool result (the floor of an LLM agent's approval).
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

TASK_QUEUE = "bench-floor"
WORKFLOW = "BenchFloor"
DECLINE, APPROVE, AGENT = "resume", "resume_tool", "resume_agent"
"""The floors' update names: no activity, one activity, two (the tool, then the model)."""
ACTIVITY_TIMEOUT = timedelta(seconds=30)


@activity.defn(name="bench_tool")
async def bench_tool(payload: dict[str, Any]) -> dict[str, Any]:
    """The floor's tool: does nothing, so the floor is the round trips alone."""
    return {"sent": True, **payload}


@activity.defn(name="bench_model")
async def bench_model(payload: dict[str, Any]) -> dict[str, Any]:
    """The floor's model request: bare too, the point is the orchestration of a second
    activity, not a model's work or its payload's size."""
    return {"text": "Sent.", **payload}


@workflow.defn(name=WORKFLOW)
class FloorWorkflow:
    """Stays open after its updates, as a thread does after a resume: closing it would add
    the server's close-out work (and its visibility write) to the floor."""

    def __init__(self) -> None:
        self.answers = 0

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)  # ends with the bench's server

    @workflow.query(name="ready")
    def ready(self) -> bool:
        """Answered once the first workflow task ran: the workflow is parked on its update."""
        return True

    @workflow.update(name=DECLINE)
    async def resume(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.answers += 1
        return {"type": "RUN_FINISHED", "outcome": {"type": "success"}, "payload": payload}

    @workflow.update(name=APPROVE)
    async def resume_tool(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.answers += 1
        result = await workflow.execute_activity(
            bench_tool, payload, start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        return {"type": "RUN_FINISHED", "outcome": {"type": "success"}, "result": result}

    @workflow.update(name=AGENT)
    async def resume_agent(self, payload: dict[str, Any]) -> dict[str, Any]:
        """An agent's approval: the tool runs, then the model is asked again with its result."""
        self.answers += 1
        result = await workflow.execute_activity(
            bench_tool, payload, start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        answer = await workflow.execute_activity(
            bench_model, result, start_to_close_timeout=ACTIVITY_TIMEOUT
        )
        return {"type": "RUN_FINISHED", "outcome": {"type": "success"}, "result": answer}


async def main(address: str) -> None:
    client = await Client.connect(address)
    await floor_worker(client).run()


def floor_worker(client: Client) -> Worker:
    """SDK defaults throughout (eager activity execution requested, as the project's worker)."""
    return Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[FloorWorkflow],
        activities=[bench_tool, bench_model],
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
