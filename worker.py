"""The Temporal worker process: thread workflows and tool activities."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from settings import Settings, connect, get_settings
from workflows.activities import Outbox, ToolActivities
from workflows.thread import ThreadWorkflow

# Modules that only define data (pydantic models, tool schemas) are shared with
# the sandbox instead of re-imported for every workflow it loads: it halves the
# cost of starting or replaying a thread. Workflow logic stays sandboxed.
DATA_MODULES = ("workflows.contract", "workflows.activities", "workflows.tools")
SANDBOX = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules(*DATA_MODULES)
)


def build_worker(
    client: Client,
    settings: Settings,
    executor: ThreadPoolExecutor,
    tools: ToolActivities | None = None,
) -> Worker:
    tools = tools or ToolActivities(Outbox(settings.outbox_path))
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=[ThreadWorkflow],
        activities=[tools.send_email, tools.file_quarterly_report],
        activity_executor=executor,
        workflow_runner=SANDBOX,
    )


async def run_worker(settings: Settings | None = None) -> None:
    settings = settings or get_settings()
    client = await connect(settings)
    with ThreadPoolExecutor(max_workers=8) as executor:
        await build_worker(client, settings, executor).run()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    asyncio.run(run_worker())
