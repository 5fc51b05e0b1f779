"""The activity producers use to reach a thread: signal-with-start, on the thread's worker.

A workflow cannot signal-with-start another workflow, so `workflows.producer`
calls this activity with `task_queue=` the thread workers' queue: the thread
worker (`worker.py`) registers it, and the producer's own worker needs nothing
extra. Retries are safe: the thread ignores an offer or post whose id it has.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from settings import Settings
from workflows.contract import (
    SIGNAL_THREAD_ACTIVITY,
    THREAD_WORKFLOW,
    AgentConfig,
    ThreadInput,
    ThreadSignal,
    natural_owner,
    thread_workflow_id,
)


def thread_input(
    settings: Settings, agent: str, thread_id: str, owner: str | None = None
) -> ThreadInput:
    """How every process starts a thread (gateway and producers alike); `owner` is who it
    belongs to (the gateway: the starting run's principal), except that `inbox:P` is P's."""
    return ThreadInput(
        owner=natural_owner(thread_id) or owner,
        thread_id=thread_id,
        agent=agent,
        config=AgentConfig(
            input_expires_in_seconds=settings.input_expires_in.total_seconds(),
            max_interrupts_per_run=settings.max_interrupts_per_run,
            max_pending_interrupts=settings.max_pending_interrupts,
        ),
        index_runs=settings.index_runs,
        history_limit=settings.thread_history_limit,
    )


class ThreadSignals:
    def __init__(self, client: Client, settings: Settings) -> None:
        self.client = client
        self.settings = settings

    @activity.defn(name=SIGNAL_THREAD_ACTIVITY)
    async def signal_thread(self, request: ThreadSignal) -> None:
        workflow_id = thread_workflow_id(request.thread_id)
        if request.start:
            await self.client.start_workflow(
                THREAD_WORKFLOW,
                thread_input(self.settings, request.agent, request.thread_id, request.thread_owner),
                id=workflow_id,
                task_queue=self.settings.task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                start_signal=request.signal,
                start_signal_args=[request.arg],
            )
            return
        handle: WorkflowHandle = self.client.get_workflow_handle(workflow_id)
        try:
            await handle.signal(request.signal, request.arg)
        except RPCError as err:
            if err.status != RPCStatusCode.NOT_FOUND:
                raise
