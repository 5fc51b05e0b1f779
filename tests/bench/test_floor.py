"""The floors the latency pairs are measured against, run on the real Temporal dev server:
an agent's approval floor runs the tool's activity and then the model's, in that order."""

from __future__ import annotations

import uuid

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from bench.floor import AGENT, APPROVE, DECLINE, TASK_QUEUE, WORKFLOW, floor_worker


async def scheduled_activities(client: Client, workflow_id: str) -> list[str]:
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]


async def test_each_floor_runs_its_activities_and_stays_open(client: Client) -> None:
    async with floor_worker(client):
        handle = await client.start_workflow(
            WORKFLOW, id=f"floor-{uuid.uuid4().hex}", task_queue=TASK_QUEUE
        )
        declined = await handle.execute_update(DECLINE, {"interruptId": "x"})
        assert declined["type"] == "RUN_FINISHED"
        assert await scheduled_activities(client, handle.id) == []

        await handle.execute_update(APPROVE, {"interruptId": "y"})
        assert await scheduled_activities(client, handle.id) == ["bench_tool"]

        answered = await handle.execute_update(AGENT, {"interruptId": "z"})
        # the model stand-in answers with what the tool returned
        assert answered["result"] == {"text": "Sent.", "sent": True, "interruptId": "z"}
        assert await scheduled_activities(client, handle.id) == [
            "bench_tool",
            "bench_tool",
            "bench_model",
        ]
        assert await handle.query("ready")  # still open, parked as a thread is
        await handle.terminate()
