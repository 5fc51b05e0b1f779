"""A thread whose workflow task keeps failing: the run in it ends, and the thread goes on.

A workflow task that fails (a bug in an agent, a tool that raises in workflow code, a
task past the deadlock timeout) is retried by Temporal for ever with the same input, so
a run that makes it fail bricks its thread: every later run, query and hydrate waits
behind it. While a run's stream waits, `until_unstuck` looks at the thread now and then
(Temporal tells nobody that a task failed: its describe shows the attempt); once the
same task has failed `FAILED_ATTEMPTS` times, it resets the workflow to the point before
the run that is in flight (or before the failing task, if no run is), without that run:
Temporal's own remedy for a stuck workflow, which keeps the history before that point
and re-applies the signals that came after it. The client gets `RUN_ERROR` `RUN_FAILED`,
and the thread takes the next message as if the run had not been sent.

A task that fails on replay (non-determinism after a deploy) is left alone: resetting
would not help, a fixed deploy does. Its run ends `UNAVAILABLE`, as Temporal is not
answering for that thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator

from ag_ui.core import RunAgentInput, RunErrorEvent
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType, ResetReapplyExcludeType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client
from temporalio.service import RPCError

from ag_ui_temporal.gateway.errors import rejection_events
from ag_ui_temporal.gateway.streaming import Batch, Offset
from ag_ui_temporal.workflows.contract import ErrorCode, RunRejection, thread_workflow_id, wire

log = logging.getLogger(__name__)

CHECK_EVERY = 3.0
"""Seconds between looks at a thread while a run waits (the first after as long: most runs
end before anyone looks)."""
FAILED_ATTEMPTS = 3
"""A task in its third attempt has failed twice with the same input: it is not a blip."""

DROPPED = RunRejection(
    code=ErrorCode.RUN_FAILED,
    message="the thread could not process this run (its workflow task kept failing): "
    "nothing of the run was kept, and the thread takes the next message",
)
UNRESET = RunRejection(
    code=ErrorCode.UNAVAILABLE,
    message="the thread's workflow task keeps failing and Temporal did not reset it; retry",
)
STUCK = RunRejection(
    code=ErrorCode.UNAVAILABLE,
    message="the thread's workflow task fails on replay; a fixed deploy resumes it",
)


async def until_unstuck(
    client: Client, body: RunAgentInput, events: AsyncGenerator[Batch, None]
) -> AsyncIterator[Batch]:
    """`events`, unless the run's thread gets stuck first: then its `RUN_ERROR` ends them.

    However this ends (the run's end, a stuck thread, the client leaving), `events` is closed
    here and now: its own cleanup (it stops waiting for the run) must not wait for the GC.

    A reset drops the run's update, so the run's own wait fails (`UNAVAILABLE`) as the reset
    lands, often before the reset's answer reaches the watch: once a reset is under way,
    what the run's events say is dropped and the watch's word is the run's end."""
    resetting = asyncio.Event()
    watch = asyncio.create_task(_watch(client, thread_workflow_id(body.thread_id), resetting))
    following: asyncio.Future[Batch] | None = None
    sent = False
    try:
        while True:
            following = asyncio.ensure_future(anext(events))
            await asyncio.wait({following, watch}, return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                yield _ended(body, watch.result(), sent)
                return
            if resetting.is_set():  # the run's update was dropped under it: not its end
                yield _ended(body, await watch, sent)
                return
            try:
                batch = following.result()
            except StopAsyncIteration:
                return
            sent = sent or bool(batch)
            yield batch
    finally:
        watch.cancel()
        if following is not None and not following.done():
            following.cancel()  # the pending read of `events`: it ends there
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await following
        await events.aclose()


def _ended(body: RunAgentInput, rejection: RunRejection, sent: bool) -> Batch:
    """The run's end: `RUN_ERROR` alone once its `RUN_STARTED` went out."""
    events = rejection_events(body, rejection)
    if sent:
        events = [wire(RunErrorEvent(message=rejection.message, code=rejection.code))]
    return [Offset(event, None) for event in events]


async def _watch(client: Client, workflow_id: str, resetting: asyncio.Event) -> RunRejection:
    """Returns once the thread is stuck (and has been reset, if a reset helps); sets
    `resetting` before it asks for the reset."""
    handle = client.get_workflow_handle(workflow_id)
    while True:
        await asyncio.sleep(CHECK_EVERY)  # nothing to await: a failed task is told to nobody
        try:
            description = await handle.describe()
            pending = description.raw_description.pending_workflow_task
            if pending.attempt < FAILED_ATTEMPTS:
                continue
            events = [event async for event in handle.fetch_history_events()]
            point = reset_point(events)
            if point is None:
                # a task that fails on replay stays stuck; tasks that timed out (a worker
                # killed while it ran one) were no failure of the run's: look again
                failure = _failure_since_completed(events)
                if failure is not None and _fails_on_replay(failure):
                    return STUCK
                continue
            resetting.set()  # from here on, the watch ends the run whatever the reset does
            try:
                await _reset(client, workflow_id, description.run_id, point)
            except RPCError as err:
                log.warning("thread %s is stuck and was not reset: %s", workflow_id, err)
                return UNRESET
            return DROPPED
        except RPCError as err:  # not there (yet), or Temporal not answering: look again
            log.debug("thread %s not looked at: %s", workflow_id, err)


def reset_point(events: list[HistoryEvent]) -> int | None:
    """The workflow task to reset the thread to, or None if a reset would not help.

    The run in flight is the oldest update accepted and not completed: the thread goes back
    to before the task that accepted it. With none, the failing task itself is left out (a
    run whose first task fails was never accepted)."""
    completed: set[str] = set()
    accepted: list[tuple[str, int]] = []  # (update id, index of its event)
    for index, event in enumerate(events):
        kind = event.event_type
        if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            attributes = event.workflow_execution_update_accepted_event_attributes
            accepted.append((attributes.accepted_request.meta.update_id, index))
        elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
            completed.add(event.workflow_execution_update_completed_event_attributes.meta.update_id)
    first_failure = _failure_since_completed(events)
    if first_failure is None or _fails_on_replay(first_failure):
        return None
    in_flight = [index for update_id, index in accepted if update_id not in completed]
    if not in_flight:
        return first_failure.event_id
    tasks = [
        i
        for i in range(in_flight[0])
        if events[i].event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    ]
    return events[tasks[-1]].event_id if tasks else None


def _failure_since_completed(events: list[HistoryEvent]) -> HistoryEvent | None:
    """The first failed workflow task since the last one that completed (later attempts of
    the same task are not recorded)."""
    failure = None
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            failure = None
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED and failure is None:
            failure = event
    return failure


def _fails_on_replay(failure: HistoryEvent) -> bool:
    cause = failure.workflow_task_failed_event_attributes.cause
    return cause == WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR


async def _reset(client: Client, workflow_id: str, run_id: str | None, point: int) -> None:
    """Reset once per stuck run: every gateway that notices sends the same request id."""
    request = ResetWorkflowExecutionRequest(
        namespace=client.namespace,
        workflow_execution=WorkflowExecution(workflow_id=workflow_id, run_id=run_id or ""),
        reason="ag-ui-temporal: a run made the thread's workflow task keep failing",
        workflow_task_finish_event_id=point,
        request_id=f"agui-unstick-{run_id}-{point}",
        reset_reapply_exclude_types=[ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE],
    )
    log.warning(
        "thread %s is stuck: reset to event %d without its run in flight", workflow_id, point
    )
    await client.workflow_service.reset_workflow_execution(request)
