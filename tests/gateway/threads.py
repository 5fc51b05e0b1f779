"""Threads started by a test itself, with a history limit small enough to continue as new."""

from __future__ import annotations

import pytest
from temporalio.client import Client, WorkflowContinuedAsNewError, WorkflowHandle

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
