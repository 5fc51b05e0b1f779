"""Start an order that pauses in chat thread T for a shipping choice.

    python -m ag_ui_temporal.examples.order_approval \
        --thread-id T --order-id 42 --owner ada [--wait]

Needs the running stack (`make run`): its worker serves the thread and, standing
in for your own worker, the `examples` task queue. Answer in the chat on
`POST /agents/inbox` with thread T as its owner (`{"speed": "standard" | "express"}`).
A thread started without `--owner` is seen by `THREAD_ADMINS` only (`inbox:P` is P's).
With `--wait` the order's result is printed as one JSON line once it completes.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from temporalio.common import WorkflowIDConflictPolicy

from ag_ui_temporal.examples.orders import (
    EXAMPLES_TASK_QUEUE,
    OrderInput,
    OrderResult,
    order_workflow_id,
)
from ag_ui_temporal.settings import get_settings
from ag_ui_temporal.temporal_client import connect


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ag_ui_temporal.examples.order_approval", description=__doc__
    )
    parser.add_argument("--thread-id", required=True)
    parser.add_argument("--order-id", required=True)
    parser.add_argument("--wait", action="store_true", help="print the order's result and exit")
    parser.add_argument("--task-queue", default=EXAMPLES_TASK_QUEUE)
    parser.add_argument(
        "--owner", help="who the thread belongs to (a principal or group:G) if the order starts it"
    )
    parser.add_argument(
        "--resolver",
        action="append",
        help="who may answer (a principal or group:G; repeatable; unset: who sees the thread)",
    )
    args = parser.parse_args(argv)
    settings = get_settings()
    client = await connect(settings)
    handle = await client.start_workflow(
        "OrderWorkflow",
        OrderInput(
            order_id=args.order_id,
            thread_id=args.thread_id,
            thread_task_queue=settings.task_queue,
            thread_owner=args.owner,
            allowed_resolvers=args.resolver,
        ),
        id=order_workflow_id(args.order_id),
        task_queue=args.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        result_type=OrderResult,
    )
    if not args.wait:
        print(json.dumps({"workflowId": handle.id, "threadId": args.thread_id}))
        return 0
    result = await handle.result()
    print(json.dumps(result.model_dump(mode="json")))
    return 0


if __name__ == "__main__":
    from ag_ui_temporal.temporal_client import exit_stopped

    exit_stopped(asyncio.run(main()))  # never the interpreter's teardown (Temporal's threads)
