"""`POST /agents/{agent}/threads/{threadId}/runs/{runId}/cancel`: stop a run that is going.

The shape LangGraph's server and OpenAI's Assistants use for the same act. A client that
only drops its connection does not stop a durable run (it can re-attach); this does. The
thread's `cancel_run` update stops the run (`workflows.thread._stop`) and answers once the
run has ended, so the answer says what happened:

- `200` `{"threadId", "runId", "status": "cancelled"}`: the run ended `RUN_ERROR`
  `RUN_CANCELLED`, in its own stream and in every join of it;
- `409`: the run had already ended (or its agent was done when the stop came): nothing
  changed. LangGraph answers a cancel of a run no longer pending or running with an error
  too; a `409` says which;
- `403`: the caller may act on the thread (a member of the group that owns it) but did not
  send the run and is no admin (`THREAD_ADMINS`): only they may stop it;
- `404`, the same body, for a run the thread does not have, a thread that does not exist,
  and a thread the caller may not act on (decided from the thread's memo before the thread
  is asked, as for a join).

A run sent at the same moment as its stop is stopped too: one waiting behind another run
of the thread is known to the thread, and one whose update reached the thread with the
stop's is known once the stop is sent again.

Ids with `/` are sent percent-encoded; a thread id holding `/runs/` cannot be named here.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from temporalio.client import (
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.access import Access, Seen, is_admin
from ag_ui_temporal.gateway.deps import (
    AgentDep,
    AuthenticatedRoute,
    ClientDep,
    PrincipalDep,
    SettingsDep,
)
from ag_ui_temporal.gateway.input_limits import id_problem
from ag_ui_temporal.gateway.streaming import thread_handle
from ag_ui_temporal.workflows.contract import (
    CANCEL_RUN_UPDATE,
    CancelRefusal,
    CancelRun,
    CancelRunResult,
)

log = logging.getLogger(__name__)
router = APIRouter(prefix="/agents", tags=["agents"], route_class=AuthenticatedRoute)


class CancelledRun(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    thread_id: str
    run_id: str
    status: Literal["cancelled"] = "cancelled"


RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {"description": "another's run: only its sender or an admin may stop it"},
    404: {"description": "no such run here (or not the caller's to see)"},
    409: {"description": "the run had already ended: nothing changed"},
}


@router.post(
    "/{agent}/threads/{thread_id:path}/runs/{run_id:path}/cancel",
    responses=RESPONSES,
    response_model_by_alias=True,
)
async def cancel_run(
    agent: AgentDep,
    thread_id: Annotated[str, Path(min_length=1)],
    run_id: Annotated[str, Path(min_length=1)],
    client: ClientDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> CancelledRun:
    """Stop run `run_id` of thread `thread_id`: its model request and tools are cancelled,
    what it streamed stays (marked stopped), and the thread takes the next message."""
    unknown = HTTPException(404, f"no run {run_id[:200]!r} here")
    if id_problem(thread_id, settings) is not None:
        raise unknown  # no thread has such an id (Temporal would refuse it)
    handle = thread_handle(client, thread_id)
    admin = is_admin(principal, settings)
    seen = await Access(principal, admin, expected_agent=agent).decide(handle, thread_id)
    if seen is Seen.NO:
        raise unknown
    request = CancelRun(
        run_id=run_id, principal=principal.name, groups=list(principal.groups), admin=admin
    )
    result = await _stop(handle, request)
    # No such run in the thread: it may be on its way, sent at the same moment, its update
    # admitted after this stop reached the thread. Temporal hands a thread its updates in the
    # order it admitted them, so the stop sent once more reaches the thread after such a run
    # (whose update id, which carries the digest of its body, the stop cannot name to ask).
    # A refused stop writes no history. (A thread from before the memo may be another's:
    # asked once, as any other caller.)
    if result is None and seen is Seen.YES:
        result = await _stop(handle, request)
    if result is None:
        raise unknown
    if result.status != "cancelled":
        raise _ended(run_id)
    log.info("run %s of thread %s stopped by %s", run_id, thread_id, principal.name)
    return CancelledRun(thread_id=thread_id, run_id=run_id)


async def _stop(handle: WorkflowHandle[Any, Any], request: CancelRun) -> CancelRunResult | None:
    """The thread's answer to the stop; None: it has no such run (or not the caller's)."""
    try:
        result: CancelRunResult = await handle.execute_update(
            CANCEL_RUN_UPDATE, request, result_type=CancelRunResult
        )
        return result
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        refusal = cause.type if isinstance(cause, ApplicationError) else None
        if refusal == CancelRefusal.RUN_ENDED:
            raise _ended(request.run_id) from None
        if refusal == CancelRefusal.NOT_SENDER:
            raise HTTPException(403, _not_sender(request.run_id)) from None
        if refusal == CancelRefusal.UNKNOWN_RUN:
            return None
        raise HTTPException(503, "Temporal did not answer; try again") from None
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:  # no such thread (or it is gone)
            return None
        raise
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise HTTPException(503, "Temporal did not answer; try again") from None


def _not_sender(run_id: str) -> str:
    return f"run {run_id[:200]!r} was sent by another; only its sender or an admin may stop it"


def _ended(run_id: str) -> HTTPException:
    return HTTPException(409, f"run {run_id[:200]!r} has already ended; nothing changed")
