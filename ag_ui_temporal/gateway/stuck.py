"""A thread whose workflow task keeps failing: the runs that fail it are dropped, and the
thread goes on.

A workflow task that fails (a bug in an agent, a tool that raises in workflow code, a task
past the deadlock timeout) is retried by Temporal for ever with the same input, and from its
third attempt Temporal refuses every new update at once ("Workflow Task in failed state"):
the thread takes no run until it is cured. Temporal tells nobody that a task failed (its
describe shows the attempt), so the gateway looks, in `until_unstuck`:

- while a run's stream waits, every `STUCK_CHECK_EVERY` (a setting);
- at once when Temporal refuses a run for its thread's failing task: a thread bricked while
  no client waited (by a run whose client left, a producer's offer or post, a timer) is cured
  by the next run that arrives, which is then sent again and taken.

Once the same task has failed `FAILED_ATTEMPTS` times, the thread is reset to the point
before its runs in flight (accepted, not completed), or before the failing task if none is:
Temporal's own remedy for a stuck workflow, which keeps the history before that point and
re-applies the signals that came after it. The runs left out are dropped; with none in flight,
the run that waits (its update was admitted, never accepted: its first task is the one that
fails) is dropped. Before the reset the thread is told which (`agui_drop_runs`), and refuses
any copy of them from then on: Temporal sends an update-with-start that the reset aborted on
to the new run, where, without that record, a dropped run whose first task stopped failing
would land after its client was told it was dropped. The client of a dropped run gets
`RUN_ERROR` `RUN_FAILED` (`DROPPED_RUN`), and the thread takes the next message; a run that
waited while other runs were dropped is sent again (its update id keeps it from landing
twice).

Left alone, as a reset would not help (Temporal goes on retrying the task):
- a task that fails on replay (non-determinism after a deploy): a fixed deploy resumes it;
  the run ends `UNAVAILABLE`;
- a task that fails because the worker that took it lacks the thread's agent
  (`AgentNotServed`, a rollout in progress): the run waits, its stream kept open (SSE
  keepalives), until a worker that has the agent takes the task, and then goes on (sent
  again if Temporal had refused or lost its update meanwhile: nothing of it had run);
- a thread that failed again since a reset, without completing a task, where that reset
  dropped runs already, or where no run waits to blame: what fails it is no run (a signal or
  timer whose handling fails), so its runs end `UNAVAILABLE` until a fixed deploy.

The watch runs in the gateway, beside the one who can be told (the client of the run): a
background sweep would have to describe every thread (Temporal indexes no failing task), and
the worker that fails the task is often the one that cannot tell why (it lacks the agent, or
runs the buggy code). A thread nobody sends a run to stays stuck, and harms nobody, until one
arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from enum import Enum

from ag_ui.core import RunAgentInput, RunErrorEvent
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import (
    EventType,
    ResetReapplyExcludeType,
    UpdateWorkflowExecutionLifecycleStage,
    WorkflowTaskFailedCause,
)
from temporalio.api.failure.v1 import Failure
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.update.v1 import UpdateRef, WaitPolicy
from temporalio.api.workflowservice.v1 import (
    PollWorkflowExecutionUpdateRequest,
    ResetWorkflowExecutionRequest,
)
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.errors import rejection_events
from ag_ui_temporal.gateway.streaming import Batch, Offset
from ag_ui_temporal.workflows.contract import (
    DROP_RUNS_SIGNAL,
    DROPPED_RUN,
    RUN_UPDATE,
    AgentNotServed,
    DropRuns,
    ErrorCode,
    RunRejection,
    run_of_update,
    thread_workflow_id,
    wire,
)

log = logging.getLogger(__name__)

FAILED_ATTEMPTS = 3
"""A task in its third attempt has failed twice with the same input: it is not a blip (and
from this attempt on, Temporal refuses new updates)."""
SENDS = 3
"""How often one POST's run is sent at most: once, and again after each of two resets that
left it out without dropping it."""

UNRESET = RunRejection(
    code=ErrorCode.UNAVAILABLE,
    message="the thread's workflow task keeps failing and Temporal did not reset it; retry",
)
STUCK = RunRejection(
    code=ErrorCode.UNAVAILABLE,
    message="the thread's workflow task fails on replay; a fixed deploy resumes it",
)
UNCURED = RunRejection(
    code=ErrorCode.UNAVAILABLE,
    message="the thread's workflow task keeps failing, also since it was reset, and not "
    "because of a run; a fixed deploy resumes it",
)
STILL_FAILING = RunRejection(
    code=ErrorCode.UNAVAILABLE,
    message="the thread's workflow task keeps failing, and the thread was reset without this "
    "run; send it again",
)


class Wait(Enum):
    """A stuck thread that a reset would not help, and that cures itself."""

    FOR_AGENT = "the task fails for want of the thread's agent, until a worker with it takes it"


class TaskFailing(Exception):
    """Temporal refused a run because its thread's workflow task keeps failing (raised by
    the run's events, before any was sent, for `until_unstuck` to cure the thread)."""


def task_failing(err: Exception) -> bool:
    """Whether Temporal refused an update as it refuses one for a workflow task in its third
    attempt (`FAILED_PRECONDITION`, "Workflow Task in failed state"): the describe tells."""
    return isinstance(err, RPCError) and err.status == RPCStatusCode.FAILED_PRECONDITION


@dataclass(frozen=True)
class Cure:
    """A reset that cures the thread: to the workflow task that ended at event `point`,
    without the updates after it; `in_flight` the runs among them that were accepted."""

    point: int
    in_flight: tuple[str, ...]


@dataclass(frozen=True)
class Reset:
    """The thread was reset without the runs `dropped` (told to it first)."""

    dropped: tuple[str, ...]


@dataclass(frozen=True)
class Waiting:
    """The thread waits for a worker that has its agent, as of attempt `attempt` of the task
    of Temporal run `run`: no need to look again until Temporal tried once more."""

    run: str | None
    attempt: int


Verdict = Reset | RunRejection | None
"""A look's outcome: the thread was reset, the run ends (a reset would not help), or nothing
to do (None: the thread is not stuck)."""


async def until_unstuck(
    client: Client,
    body: RunAgentInput,
    update_id: str,
    send: Callable[[], AsyncGenerator[Batch, None]],
    check_every: float,
) -> AsyncIterator[Batch]:
    """The events of the run `send()` sends (as update `update_id`), unless its thread gets
    stuck first (looked at every `check_every` s): then the thread is cured and the run sent
    again, or its `RUN_ERROR` ends them.

    However a sending ends (the run's end, a stuck thread, the client leaving), its events
    are closed here and now: their own cleanup (they stop waiting for the run) must not wait
    for the GC.

    A reset aborts the run's update, so the run's own wait fails as the reset lands, often
    before the reset's answer reaches the watch: once a reset is under way, what the run's
    events say is dropped and the watch's word decides."""
    workflow_id = thread_workflow_id(body.thread_id)
    sent = False
    for _ in range(SENDS):
        resetting = asyncio.Event()
        watch = asyncio.create_task(
            _watch(client, workflow_id, body.run_id, resetting, check_every)
        )
        events = send()
        following: asyncio.Future[Batch] | None = None
        verdict: Verdict
        try:
            while True:
                following = asyncio.ensure_future(anext(events))
                await asyncio.wait({following, watch}, return_when=asyncio.FIRST_COMPLETED)
                if not following.done() or resetting.is_set():
                    verdict = await watch  # the run's update was dropped under it: not its end
                    break
                try:
                    batch = following.result()
                except StopAsyncIteration:
                    return
                except TaskFailing:  # refused: cure the thread, then send the run again
                    verdict = await _cure(client, workflow_id, body.run_id, update_id, check_every)
                    break
                sent = sent or bool(batch)
                yield batch
        finally:
            watch.cancel()
            if following is not None and not following.done():
                following.cancel()  # the pending read of `events`: it ends there
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await following
            await events.aclose()
        if isinstance(verdict, RunRejection):
            yield _ended(body, verdict, sent)
            return
        if isinstance(verdict, Reset) and body.run_id in verdict.dropped:
            yield _ended(body, DROPPED_RUN, sent)
            return
        if sent:  # never so (a run that sent events was in flight, and dropped): said safely
            break
        # reset without this run (or the thread got better): nothing of it ran, send it again
    yield _ended(body, STILL_FAILING, sent)


def _ended(body: RunAgentInput, rejection: RunRejection, sent: bool) -> Batch:
    """The run's end: `RUN_ERROR` alone once its `RUN_STARTED` went out."""
    events = rejection_events(body, rejection)
    if sent:
        events = [wire(RunErrorEvent(message=rejection.message, code=rejection.code))]
    return [Offset(event, None) for event in events]


async def _watch(
    client: Client, workflow_id: str, run_id: str, resetting: asyncio.Event, check_every: float
) -> Verdict:
    """Returns once the thread is stuck and reset, or stuck for good (a reset would not
    help); sets `resetting` before it touches the thread. A thread that waits for a worker
    with its agent is looked at again only once Temporal tried the task again."""
    waited: Waiting | None = None
    while True:
        await asyncio.sleep(check_every)  # nothing to await: a failed task is told to nobody
        verdict = await _look(client, workflow_id, run_id, waited, resetting)
        if isinstance(verdict, Waiting):
            waited = verdict
        elif verdict is not None:
            return verdict


async def _cure(
    client: Client, workflow_id: str, run_id: str, update_id: str, check_every: float
) -> Verdict:
    """Temporal refused the run's update because its thread's task keeps failing: look at
    once, and cure the thread. A run that arrived then was never admitted: the thread is
    reset without blaming it, and it is sent again. But the client library asks again while
    it waits for a run to be accepted, and such a run is in the thread, admitted, when its
    asking again is refused: it is blamed as a waiting run is (its first task may be the one
    that fails). A thread waiting for a worker with its agent is waited for."""
    admitted = await _admitted(client, workflow_id, update_id)
    waited: Waiting | None = None
    while True:
        verdict = await _look(client, workflow_id, run_id if admitted else None, waited)
        if not isinstance(verdict, Waiting):
            return verdict
        waited = verdict
        await asyncio.sleep(check_every)


async def _admitted(client: Client, workflow_id: str, update_id: str) -> bool:
    """Whether the thread holds update `update_id` (admitted, or further): asked without
    waiting. Not known (Temporal not answering): as not admitted, which only makes a reset
    leave it out without blaming it (no one waits for it to be sent to the new run)."""
    request = PollWorkflowExecutionUpdateRequest(
        namespace=client.namespace,
        update_ref=UpdateRef(
            workflow_execution=WorkflowExecution(workflow_id=workflow_id), update_id=update_id
        ),
        identity=client.identity,
        wait_policy=WaitPolicy(
            lifecycle_stage=UpdateWorkflowExecutionLifecycleStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_UNSPECIFIED
        ),
    )
    try:
        await client.workflow_service.poll_workflow_execution_update(request)
    except RPCError:
        return False
    return True


async def _look(
    client: Client,
    workflow_id: str,
    run_id: str | None,
    waited: Waiting | None,
    resetting: asyncio.Event | None = None,
) -> Verdict | Waiting:
    """One look at the thread, curing it if it is stuck; `resetting` is set before the
    thread is touched. `run_id`: the run that waits, its update admitted (None: a run
    Temporal refused, never admitted). A thread that waits for a worker with its agent is
    `Waiting`: its history is not read again in the same attempt of its task (`waited`)."""
    handle = client.get_workflow_handle(workflow_id)
    try:
        description = await handle.describe()
        attempt = description.raw_description.pending_workflow_task.attempt
        if attempt < FAILED_ATTEMPTS:
            return None
        if waited == Waiting(description.run_id, attempt):
            return waited
        events = [event async for event in handle.fetch_history_events()]
    except RPCError as err:  # not there (yet), or Temporal not answering: look again
        log.debug("thread %s not looked at: %s", workflow_id, err)
        return None
    cure = diagnose(events, watched=run_id is not None)
    if cure is Wait.FOR_AGENT:
        return Waiting(description.run_id, attempt)
    if not isinstance(cure, Cure):
        return cure
    dropped = cure.in_flight or ((run_id,) if run_id is not None else ())
    if resetting is not None:  # from here on, the watch's word ends the run, not its events
        resetting.set()
    try:
        if dropped:  # first: a copy of them that reaches the reset thread finds it refused
            execution = client.get_workflow_handle(workflow_id, run_id=description.run_id)
            await execution.signal(DROP_RUNS_SIGNAL, DropRuns(run_ids=list(dropped)))
        await _reset(client, workflow_id, description.run_id, cure.point)
    except RPCError as err:
        log.warning("thread %s is stuck and was not reset: %s", workflow_id, err)
        return UNRESET
    return Reset(dropped)


def diagnose(events: list[HistoryEvent], watched: bool) -> Cure | Wait | RunRejection | None:
    """What to do about a thread whose workflow task keeps failing, from its history: reset
    it (`Cure`), wait (`Wait`: it cures itself), end the run (a reset would not help: why),
    or nothing (None: no task failed
    since the last one completed, e.g. tasks that timed out as a worker was killed: no fault
    of a run's). `watched`: a run waits, its update admitted, to be blamed if none is in
    flight.

    The runs in flight are the updates accepted and not completed: the thread goes back to
    before the task that accepted the oldest, and all of them are dropped. With none, the
    failing task itself is left out: a run whose first task fails was never accepted."""
    failures = _failures_since_completed(events)
    failing = [event for event in failures if _cause(event) != _RESET]
    if not failing:
        return None
    latest = failing[-1]  # what the task failed with in its latest recorded attempt
    if _cause(latest) == _NON_DETERMINISTIC:
        return STUCK
    if _agent_missing(latest.workflow_task_failed_event_attributes.failure):
        return Wait.FOR_AGENT
    in_flight = _in_flight(events)
    if in_flight:
        tasks = [
            event.event_id
            for event in events[: in_flight[0][1]]
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
        ]
        runs = tuple(run for run, _ in in_flight if run is not None)
        return Cure(tasks[-1], runs) if tasks else None
    if _cause(failures[0]) == _RESET and (not watched or _dropped_since(events, failures[0])):
        return UNCURED  # reset already, and no task completed since: no run to blame
    return Cure(failures[0].event_id, ())


_RESET = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW
_NON_DETERMINISTIC = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR


def _cause(failed: HistoryEvent) -> WorkflowTaskFailedCause.ValueType:
    return failed.workflow_task_failed_event_attributes.cause


def _failures_since_completed(events: list[HistoryEvent]) -> list[HistoryEvent]:
    """The failed workflow tasks since the last one that completed (Temporal records a
    task's first failed attempt, not every one), a reset's among them."""
    failures: list[HistoryEvent] = []
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            failures = []
        elif event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
            failures.append(event)
    return failures


def _agent_missing(failure: Failure) -> bool:
    """The task failed for want of the thread's agent (`AgentNotServed`, or caused by it)."""
    for _ in range(8):  # a bounded walk down the failure's causes
        if failure.application_failure_info.type == AgentNotServed.__name__:
            return True
        if not failure.HasField("cause"):
            return False
        failure = failure.cause
    return False


def _in_flight(events: list[HistoryEvent]) -> list[tuple[str | None, int]]:
    """The updates accepted and not completed, oldest first: (their run, if a run's update;
    the index of the acceptance)."""
    completed = {
        event.workflow_execution_update_completed_event_attributes.meta.update_id
        for event in events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    }
    accepted = []
    for index, event in enumerate(events):
        if event.event_type != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
            continue
        request = event.workflow_execution_update_accepted_event_attributes.accepted_request
        if request.meta.update_id not in completed:
            run = (
                run_of_update(request.meta.update_id) if request.input.name == RUN_UPDATE else None
            )
            accepted.append((run, index))
    return accepted


def _dropped_since(events: list[HistoryEvent], reset: HistoryEvent) -> bool:
    """Whether the reset that failed the task `reset` dropped runs (its record of them is
    re-applied right after it)."""
    return any(
        event.event_id > reset.event_id
        and event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
        and event.workflow_execution_signaled_event_attributes.signal_name == DROP_RUNS_SIGNAL
        for event in events
    )


async def _reset(client: Client, workflow_id: str, run_id: str | None, point: int) -> None:
    """Reset once per stuck run: every gateway that notices sends the same request id."""
    request = ResetWorkflowExecutionRequest(
        namespace=client.namespace,
        workflow_execution=WorkflowExecution(workflow_id=workflow_id, run_id=run_id or ""),
        reason="ag-ui-temporal: the thread's workflow task kept failing",
        workflow_task_finish_event_id=point,
        request_id=f"agui-unstick-{run_id}-{point}",
        reset_reapply_exclude_types=[ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE],
    )
    log.warning(
        "thread %s is stuck: reset to event %d without its runs in flight", workflow_id, point
    )
    await client.workflow_service.reset_workflow_execution(request)
