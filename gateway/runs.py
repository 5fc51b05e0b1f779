"""One AG-UI run through Temporal: a `RunAgentInput` in, AG-UI events out.

The run is the thread workflow's `run` update, sent with update-with-start so
the first run of a thread creates it. The update id is the run id, so a POST
sent twice is one run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ag_ui.core import RunAgentInput
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from gateway.binding import bind_interrupt
from gateway.errors import failure_events, rejection_events, wire
from settings import Settings
from workflows.contract import (
    RUN_UPDATE,
    THREAD_WORKFLOW,
    AgentConfig,
    ErrorCode,
    ResumeItem,
    RunRejection,
    RunRequest,
    RunResult,
    ThreadInput,
    WireDict,
    run_update_id,
    thread_workflow_id,
)


def to_run_request(agent: str, body: RunAgentInput) -> RunRequest:
    return RunRequest(
        thread_id=body.thread_id,
        run_id=body.run_id,
        agent=agent,
        parent_run_id=body.parent_run_id,
        messages=[wire(message) for message in body.messages],
        state=body.state,
        resume=[
            ResumeItem(
                interrupt_id=entry.interrupt_id,
                status=entry.status,
                payload=entry.payload,
                has_payload="payload" in entry.model_fields_set,
                metadata=entry.metadata,
            )
            for entry in body.resume or []
        ],
    )


async def stream_run(
    client: Client, settings: Settings, agent: str, body: RunAgentInput
) -> AsyncIterator[WireDict]:
    """The run's events, or `RUN_STARTED` + `RUN_ERROR` when it is refused or cannot run."""
    start = WithStartWorkflowOperation(
        THREAD_WORKFLOW,
        ThreadInput(
            thread_id=body.thread_id,
            agent=agent,
            config=AgentConfig(input_expires_in_seconds=settings.input_expires_in.total_seconds()),
            index_runs=settings.index_runs,
            history_limit=settings.thread_history_limit,
        ),
        id=thread_workflow_id(body.thread_id),
        task_queue=settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    try:
        result: RunResult = await asyncio.wait_for(
            client.execute_update_with_start_workflow(
                RUN_UPDATE,
                to_run_request(agent, body),
                start_workflow_operation=start,
                id=run_update_id(body.run_id),
                result_type=RunResult,
            ),
            timeout=settings.run_timeout.total_seconds(),
        )
    except WorkflowUpdateFailedError as err:
        events = rejection_events(body, _rejection(err))
    except (RPCError, WorkflowUpdateRPCTimeoutOrCancelledError, TimeoutError):
        events = failure_events(
            body, ErrorCode.UNAVAILABLE, "the run could not be served now; retry"
        )
    else:
        events = [bind_run_finished(event) for event in result.events]
    for event in events:
        yield event


def bind_run_finished(event: WireDict) -> WireDict:
    """Attach TanStack's binding to every interrupt of an interrupt outcome."""
    outcome = event.get("outcome")
    if event.get("type") != "RUN_FINISHED" or not outcome or outcome.get("type") != "interrupt":
        return event
    interrupts = [bind_interrupt(i, event["runId"]) for i in outcome["interrupts"]]
    return {**event, "outcome": {**outcome, "interrupts": interrupts}}


def _rejection(err: WorkflowUpdateFailedError) -> RunRejection:
    cause = err.cause
    if isinstance(cause, ApplicationError) and cause.details:
        return RunRejection.model_validate(cause.details[0])
    return RunRejection(code=ErrorCode.RUN_FAILED, message="the run failed")
