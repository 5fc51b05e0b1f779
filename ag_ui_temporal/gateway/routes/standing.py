"""A thread's standing decisions (`workflows.contract.standing`): listed and revoked.

- `GET /agents/{agent}/threads/{threadId}/standing`: `{"threadId", "standing": [...]}`, the
  decisions that still stand (each with `id`, `tool`, `args` or `anyArgs`, `approved`,
  `answer`, `by`, `interruptId`, `at`, `expiresAt`); none for a thread that does not exist
  yet, as a hydrate says of it;
- `DELETE /agents/{agent}/threads/{threadId}/standing/{id}`: `200` with the decision that no
  longer stands; the calls it covered ask a person again, from the thread's next call on.

Whoever may act on the thread may list and revoke them (its owner, a member of the group
that owns it, an admin); anyone else is told what a thread that does not exist answers: no
decisions, and `404` for a revoke (also of a decision that does not exist). A revoke the
thread did not answer gets `503`: nothing changed.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateRPCTimeoutOrCancelledError,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.access import Access, is_admin
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.deps import (
    AgentDep,
    AuthenticatedRoute,
    ClientDep,
    PrincipalDep,
    SettingsDep,
)
from ag_ui_temporal.gateway.input_limits import id_problem
from ag_ui_temporal.gateway.streaming import thread_handle
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract.standing import (
    REVOKE_STANDING_UPDATE,
    UNKNOWN_STANDING,
    RevokeStanding,
    StandingDecision,
    StandingRevoked,
)

log = logging.getLogger(__name__)
router = APIRouter(prefix="/agents", tags=["agents"], route_class=AuthenticatedRoute)


class StandingList(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    thread_id: str
    standing: list[StandingDecision]


RESPONSES: dict[int | str, dict[str, Any]] = {
    404: {"description": "no such thread or decision here (or not the caller's to see)"},
    503: {"description": "the thread did not answer; nothing changed"},
}


@router.get(
    "/{agent}/threads/{thread_id:path}/standing",
    responses=RESPONSES,
    response_model_by_alias=True,
)
async def list_standing(
    agent: AgentDep,
    thread_id: Annotated[str, Path(min_length=1)],
    client: ClientDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> StandingList:
    """The thread's standing decisions that have not expired; none for a thread that does not
    exist yet, as a hydrate answers of it (and of another's thread, the same)."""
    handle, access = await _thread(agent, thread_id, client, principal, settings)
    view = await access.view(handle, thread_id)
    now = datetime.now(UTC)
    standing = [d for d in view.standing if d.stands(now)] if view is not None else []
    return StandingList(thread_id=thread_id, standing=standing)


@router.delete(
    "/{agent}/threads/{thread_id:path}/standing/{decision_id}",
    responses=RESPONSES,
    response_model_by_alias=True,
)
async def revoke_standing(
    agent: AgentDep,
    thread_id: Annotated[str, Path(min_length=1)],
    decision_id: Annotated[str, Path(min_length=1, max_length=200)],
    client: ClientDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> StandingDecision:
    """Revoke one: it no longer answers the calls it covered."""
    handle, access = await _thread(agent, thread_id, client, principal, settings)
    if await access.view(handle, thread_id) is None:  # a thread from before the memo too
        raise _unknown_thread(thread_id)
    try:
        revoked: StandingRevoked = await handle.execute_update(
            REVOKE_STANDING_UPDATE,
            RevokeStanding(id=decision_id, principal=principal.name),
            result_type=StandingRevoked,
        )
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type == UNKNOWN_STANDING:
            raise HTTPException(404, f"no standing decision {decision_id!r} here") from None
        raise HTTPException(503, "the thread did not answer; nothing changed") from None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        raise HTTPException(503, "the thread did not answer; nothing changed") from None
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise _unknown_thread(thread_id) from None
        raise
    log.info("standing decision %s of %s revoked by %s", decision_id, thread_id, principal.name)
    return revoked.decision


async def _thread(
    agent: str, thread_id: str, client: Client, principal: Principal, settings: Settings
) -> tuple[WorkflowHandle[Any, Any], Access]:
    if id_problem(thread_id, settings) is not None:
        raise _unknown_thread(thread_id)  # no thread has such an id (Temporal would refuse it)
    access = Access(principal, is_admin(principal, settings), expected_agent=agent)
    return thread_handle(client, thread_id), access


def _unknown_thread(thread_id: str) -> HTTPException:
    return HTTPException(404, f"no thread {thread_id[:200]!r} here")
