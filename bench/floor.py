"""The floor: a raw temporalio workflow parked on an update, in its own worker process.

`execute_update` against it is one update round trip on the same server, the
least any gateway built on Temporal updates can cost.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

TASK_QUEUE = "bench-floor"


@workflow.defn(name="BenchFloor")
class FloorWorkflow:
    """Stays open after its update, as a thread does after a resume: closing it would add
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

    @workflow.update(name="resume")
    async def resume(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.answers += 1
        return {"type": "RUN_FINISHED", "outcome": {"type": "success"}, "payload": payload}


async def main(address: str) -> None:
    client = await Client.connect(address)
    await Worker(client, task_queue=TASK_QUEUE, workflows=[FloorWorkflow]).run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
