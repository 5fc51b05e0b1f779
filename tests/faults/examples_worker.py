"""The orders' owner worker for the fault harness: `OrderWorkflow` on the task queue given.

    python -m tests.faults.examples_worker QUEUE

It stands for a user's own worker, as `ag-ui-temporal dev` runs one; the settings (Temporal's
address) come from the environment like every other process of the harness.
"""

from __future__ import annotations

import asyncio
import sys

from ag_ui_temporal.examples.orders import build_examples_worker
from ag_ui_temporal.settings import get_settings
from ag_ui_temporal.temporal_client import connect


async def main(task_queue: str) -> None:
    client = await connect(get_settings())
    await build_examples_worker(client, task_queue).run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
