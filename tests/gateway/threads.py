"""Threads started by a test itself, with a history limit small enough to continue as new;
and an update the server holds for a thread before any worker has it (`until_admitted`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import UpdateWorkflowExecutionLifecycleStage
from temporalio.api.update.v1 import UpdateRef, WaitPolicy
from temporalio.api.workflowservice.v1 import PollWorkflowExecutionUpdateRequest
from temporalio.client import Client, WorkflowContinuedAsNewError, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import THREAD_WORKFLOW, ThreadInput, thread_workflow_id


async def start_short_thread(
    client: Client, settings: Settings, thread_id: str, history_limit: int, owner: str | None = None
) -> WorkflowHandle:
    """The thread's workflow, started before its first run, continuing as new after
    `history_limit` history events; `owner`'s (None: the admins', as the suite's `anonymous`)."""
    start = ThreadInput(
        thread_id=thread_id, agent="assistant", history_limit=history_limit, owner=owner
    )
    return await client.start_workflow(
        THREAD_WORKFLOW,
        start,
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
    )


async def wait_for_new_run(client: Client, thread_id: str, first_run: str | None) -> None:
    """Wait (on the server's word, via a long-poll) until the first run continued as new."""
    old = client.get_workflow_handle(thread_workflow_id(thread_id), run_id=first_run)
    with pytest.raises(WorkflowContinuedAsNewError):
        await old.result(follow_runs=False)


async def until_admitted(client: Client, handle: WorkflowHandle[Any, Any], update_id: str) -> None:
    """Until the server holds update `update_id` for the thread's next workflow task."""
    stage = UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED
    request = PollWorkflowExecutionUpdateRequest(
        namespace=client.namespace,
        update_ref=UpdateRef(
            workflow_execution=WorkflowExecution(workflow_id=handle.id), update_id=update_id
        ),
        wait_policy=WaitPolicy(lifecycle_stage=stage),
    )
    async with asyncio.timeout(30):
        while True:
            try:
                await client.workflow_service.poll_workflow_execution_update(request)
                return
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise
                await asyncio.sleep(0.05)  # not sent yet
