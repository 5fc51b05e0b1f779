"""A team's own producer worker for the fault harness: `PlainOrderWorkflow` on the task queue
given, on a plain `Client.connect()` (temporalio's default converter, no codec).

    python -m tests.faults.plain_worker QUEUE

Everything a thread sends it (settlements, claims, the results of the activities it calls on
the thread's queue) must be readable without our codec (tests/plain_producer.py).
"""

from __future__ import annotations

import asyncio
import sys

from ag_ui_temporal.settings import get_settings
from tests.plain_producer import build_plain_worker, plain_client


async def main(task_queue: str) -> None:
    settings = get_settings()
    client = await plain_client(settings.temporal_address, settings.temporal_namespace)
    await build_plain_worker(client, task_queue).run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
