"""What a cycle leaves on the shared server: history events, history bytes and the billable
actions Temporal Cloud would count for them, read back with the Temporal client."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from bench.actions import billable_actions

E = EventType


@dataclass(frozen=True)
class Mark:
    """A workflow's history at one moment."""

    run_id: str
    events: list[HistoryEvent]

    def since(self, before: Mark) -> dict[str, float] | None:
        """What was added after `before` (None: a continue-as-new came between)."""
        if self.run_id != before.run_id:
            return None
        added = self.events[len(before.events) :]
        by_type: dict[str, float] = {}
        for event in added:
            name = E.Name(event.event_type).removeprefix("EVENT_TYPE_").lower()
            by_type[name] = by_type.get(name, 0) + event.ByteSize()
        return {
            "events": len(added),
            "bytes": sum(e.ByteSize() for e in added),
            "actions": billable_actions(added),
            "activities": sum(e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED for e in added),
            "workflow_tasks": sum(
                e.event_type == E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED for e in added
            ),
        } | {f"bytes:{name}": size for name, size in by_type.items() if size >= 1000}


async def mark(client: Client, workflow_id: str, settle_s: float = 0.25) -> Mark:
    """The workflow's history once it stopped growing for `settle_s` (a run's last events,
    e.g. its update's completion, may land just after the client read `RUN_FINISHED`)."""
    handle = client.get_workflow_handle(workflow_id)
    last: list[HistoryEvent] = []
    for _ in range(20):
        history = await handle.fetch_history()
        if last and len(history.events) == len(last):
            break
        last = list(history.events)
        await asyncio.sleep(settle_s)
    description = await handle.describe()
    return Mark(description.run_id or "", last)


def mean_of(deltas: list[dict[str, float] | None]) -> dict[str, float] | None:
    """The mean of each figure over the samples that stayed in one run."""
    kept = [d for d in deltas if d is not None]
    if not kept:
        return None
    keys = {key for d in kept for key in d}
    return {key: round(sum(d.get(key, 0) for d in kept) / len(kept), 1) for key in sorted(keys)} | {
        "samples": len(kept)
    }
