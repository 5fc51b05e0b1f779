"""One AG-UI run through Temporal: a `RunAgentInput` in, AG-UI events out.

The run is the thread workflow's `run` update, sent with update-with-start so
the first run of a thread creates it. The update id is the run id, so a POST
sent twice (or re-sent with `Last-Event-ID`) is one run.

The update is sent to be *accepted*: Temporal answers once the workflow task that
started the run is done, with the run's result if it ended in that task (most do).
Only a run still going then is followed in the thread's log: a run merely queued
behind a busy worker costs no reads. What the client receives is `gateway.streaming`'s
(`run_stream`); this module sends the update and turns refusals into AG-UI events.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ag_ui.core import Message, RunAgentInput
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.access import Access, Seen, is_admin, start_refusal
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.errors import rejection_events
from ag_ui_temporal.gateway.metrics import observed_run
from ag_ui_temporal.gateway.streaming import (
    Batch,
    ForeignRun,
    Offset,
    RunFeeds,
    Snapshots,
    archived_replay,
    archived_stream,
    run_stream,
    thread_handle,
    unobserved,
)
from ag_ui_temporal.gateway.stuck import TaskFailing, task_failing, until_unstuck
from ag_ui_temporal.observability.logs import bind as bind_log_context
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    OTHER_OWNER,
    RUN_UPDATE,
    THREAD_WORKFLOW,
    ErrorCode,
    InterruptError,
    ResumeItem,
    RunRejection,
    RunRequest,
    RunResult,
    run_digest,
    run_update_id,
    thread_input,
    thread_memo,
    thread_workflow_id,
    wire,
)

log = logging.getLogger(__name__)


def to_run_request(
    agent: str, body: RunAgentInput, principal: Principal, admin: bool = False
) -> RunRequest:
    messages = since_last_reply(body.messages)
    return RunRequest(
        principal=principal.name,
        groups=list(principal.groups),
        admin=admin,
        fill_snapshots=False,  # filled here from the thread query: not in the history
        thread_id=body.thread_id,
        run_id=body.run_id,
        agent=agent,
        parent_run_id=body.parent_run_id,
        messages=[wire(message) for message in messages],
        state=body.state,
        tools=[wire(tool) for tool in body.tools or []],
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


def since_last_reply(messages: list[Message]) -> list[Message]:
    """A run's messages from the client's last assistant message on.

    Clients re-send the whole transcript with every run; a thread takes only user and tool
    messages it has not seen, and it has seen everything up to its own last reply (the
    last assistant message a client holds came from the thread: a client cannot write the
    agent's turns). So a run carries that reply (the thread's anchor for what is new) and
    what follows it, and the update's request in the thread's history stays the same size
    however long the transcript. (User messages before an assistant message a client made
    up for a new thread are not taken; the thread never took the made-up reply either.)"""
    replies = [i for i, message in enumerate(messages) if message.role == "assistant"]
    return messages[replies[-1] :] if replies else messages


def stream_run(
    client: Client,
    feeds: RunFeeds,
    settings: Settings,
    agent: str,
    body: RunAgentInput,
    last_event_id: int | None,
    principal: Principal,
    snapshots: Snapshots,
) -> AsyncGenerator[Batch, None]:
    """The run's events as they are recorded, or `RUN_STARTED` + `RUN_ERROR` if it is refused.

    A short run ends within one update round trip and is sent from its result;
    a longer one is followed in the thread's log meanwhile. With `last_event_id`
    (a client re-attaching) the same update id finds the same run, so nothing
    is started or applied twice; only the later events are sent.
    """
    # Bound here, in the request's task, so the response's tasks inherit the log context.
    bind_log_context(
        thread_id=body.thread_id,
        run_id=body.run_id,
        interrupt_ids=[entry.interrupt_id for entry in body.resume or []],
        principal=principal.name,
    )

    admin = is_admin(principal, settings)
    access = Access(principal, admin)  # the request's one decision: the log and result reuse it
    request = to_run_request(agent, body, principal, admin)
    brings = run_digest(request)  # the same POST again is the same update: the same run
    update_id = run_update_id(body.run_id, brings)

    async def events() -> AsyncGenerator[Batch, None]:
        if (refusal := start_refusal(body.thread_id, agent, principal)) is not None:
            yield _refused(body, refusal)  # decided before any Temporal call: nothing is made
            return
        start = None
        if body.resume:  # answers an existing thread: a plain update, nothing to start
            handle = thread_handle(client, body.thread_id)
            try:  # another's thread is answered as none, before (and at the cost of) the update
                seen = await access.decide(handle, body.thread_id)
            except RPCError as err:
                yield _not_run(body, err, events_sent=False)
                return
            if seen is Seen.NO:
                yield _refused(body, _no_thread(body))
                return
            update = handle.start_update(
                RUN_UPDATE,
                request,
                id=update_id,
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=RunResult,
            )
        else:
            start = _start_thread(settings, agent, body.thread_id, principal.name)
            update = client.start_update_with_start_workflow(
                RUN_UPDATE,
                request,
                start_workflow_operation=start,
                id=update_id,
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
                result_type=RunResult,
            )
        accepted = unobserved(update)
        try:
            following = _run_events(
                client, feeds, request, body, brings, accepted, last_event_id, access, snapshots
            )
            async for batch in following:
                yield batch
        finally:
            accepted.cancel()  # the client left: stop waiting
            if start is not None:
                unobserved(start.workflow_handle())

    following = until_unstuck(  # a stuck thread is cured, or the run ends
        client, body, update_id, events, settings.stuck_check_every.total_seconds()
    )
    return observed_run(body, last_event_id is not None, following)


async def _run_events(
    client: Client,
    feeds: RunFeeds,
    request: RunRequest,
    body: RunAgentInput,
    brings: str,
    accepted: asyncio.Future[WorkflowUpdateHandle[RunResult]],
    last_event_id: int | None,
    access: Access,
    snapshots: Snapshots,
) -> AsyncIterator[Batch]:
    """The run's stream, or the refusal the client gets instead of (the rest of) it."""
    after = -1 if last_event_id is None else last_event_id
    handle = thread_handle(client, body.thread_id)
    result: asyncio.Future[RunResult] | None = None
    sent = False
    try:
        result = unobserved((await accepted).result())  # no call if it came with the answer
        stream = run_stream(
            feeds, handle, body.run_id, after, result, access.sees, snapshots, brings
        )
        async for batch in stream:
            yield batch
            sent = True
        _tell(access, handle.id, body.thread_id, result)
    except WorkflowUpdateFailedError as err:
        rejection = None if sent else _rejection(body, err)
        if rejection is None:
            yield _not_run(body, err, events_sent=sent)
        elif foreign(rejection):  # another's: its archive is not read either
            yield _refused(body, rejection)
        else:  # the archive may know what the thread let go (a repeat of an old resume)
            answer = await archived_replay(snapshots.transcript, handle, request, rejection, after)
            if isinstance(answer, RunRejection):
                yield _refused(body, answer)
            else:
                async for batch in archived_stream(answer, snapshots):
                    yield batch
    except (RPCError, WorkflowUpdateRPCTimeoutOrCancelledError) as err:
        yield _not_run(body, err, events_sent=sent)
    except ForeignRun:  # another's run id: its answer is not this principal's to see
        yield _refused(body, RunRejection(code=ErrorCode.FORBIDDEN, message=OTHER_OWNER))
    finally:
        if result is not None:
            result.cancel()  # the client left, or the log showed the end: stop waiting


def _tell(
    access: Access, workflow_id: str, thread_id: str, result: asyncio.Future[RunResult]
) -> None:
    """Tell `access` whose thread ran the run, if its result came (a stream that ended on
    the log's terminal event does not wait for it)."""
    if result.done() and not result.cancelled() and result.exception() is None:
        access.told(workflow_id, thread_id, result.result().owner)


def _no_thread(body: RunAgentInput) -> RunRejection:
    errors = [
        InterruptError(
            scope="item",
            code=ErrorCode.UNKNOWN_INTERRUPT_ID,
            message="no such interrupt",
            interrupt_id=entry.interrupt_id,
        )
        for entry in body.resume or []
    ]
    message = f"no thread {body.thread_id!r}: it has no interrupts to resume"
    return RunRejection(
        code=ErrorCode.UNKNOWN_INTERRUPT_ID, message=message, interrupt_errors=errors
    )


def _start_thread(
    settings: Settings, agent: str, thread_id: str, owner: str | None = None
) -> WithStartWorkflowOperation[Any, Any]:
    """Start the thread's workflow if this is its first run (it belongs to `owner`, the
    run's principal; its memo says so); otherwise use the running one."""
    start = thread_input(settings, agent, thread_id, owner)
    return WithStartWorkflowOperation(
        THREAD_WORKFLOW,
        start,
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
        task_timeout=settings.thread_task_timeout,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        memo=thread_memo(start.owner, start.agent),
    )


def _not_run(body: RunAgentInput, err: Exception, events_sent: bool) -> Batch:
    """What the client is told when the run's update did not come back with a result.

    A contract rule's refusal (or a resume of a thread that never was) is final. Anything
    else means Temporal did not answer (e.g. the server gave the update up while a
    worker or the server itself restarted): `UNAVAILABLE`, and the client re-sends the
    same POST, which the update id keeps from being applied twice. Once events went
    out, the stream just ends: the client re-attaches. A run refused because its thread's
    workflow task keeps failing raises `TaskFailing`: `until_unstuck` cures the thread."""
    if not events_sent and task_failing(err):
        raise TaskFailing(body.run_id) from err
    rejection = _rejection(body, err)
    if rejection is None:
        cause = err.cause if isinstance(err, WorkflowUpdateFailedError) else err
        log.warning("run %s: Temporal did not answer: %r", body.run_id, cause)
        if events_sent:
            return []
        rejection = RunRejection(code=ErrorCode.UNAVAILABLE, message="Temporal did not answer")
    return _refused(body, rejection)


def _refused(body: RunAgentInput, rejection: RunRejection) -> Batch:
    """`RUN_STARTED` + `RUN_ERROR`, outside the thread's log (no SSE ids). A resume refused
    as another's is told what a resume of a thread that does not exist is: the same code,
    message and items, so a thread's existence does not leak."""
    if body.resume and foreign(rejection):
        rejection = _no_thread(body)
    return [Offset(event, None) for event in rejection_events(body, rejection)]


def foreign(rejection: RunRejection) -> bool:
    """Refused as another principal's thread (the contract's owner rule)."""
    return rejection.code == ErrorCode.FORBIDDEN and rejection.message == OTHER_OWNER


CONTRACT_CODES = frozenset(code.value for code in ErrorCode)


def contract_rejection(err: Exception) -> RunRejection | None:
    """The contract rule that refused a `run` update (nothing was recorded), if one did."""
    if isinstance(err, WorkflowUpdateFailedError):
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type in CONTRACT_CODES and cause.details:
            return RunRejection.model_validate(cause.details[0])
    return None


def _rejection(body: RunAgentInput, err: Exception) -> RunRejection | None:
    """The contract rule that refused the run (nothing was recorded), if one did."""
    if (rejection := contract_rejection(err)) is not None:
        return rejection
    if isinstance(err, RPCError) and err.status == RPCStatusCode.NOT_FOUND:
        return _no_thread(body)  # a resume (plain update) of a thread that never was
    return None
