"""The approvals inbox: what waits for whom (`GET /approvals`), and one chain in full."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field
from temporalio.service import RPCError, RPCStatusCode

from gateway.deps import ClientDep
from workflows.chains import (
    APPROVAL_CHAIN_WORKFLOW,
    CHAIN_QUERY,
    ChainState,
)
from workflows.contract import APPROVALS_PARTICIPANTS, APPROVALS_PENDING

router = APIRouter(prefix="/approvals", tags=["approvals"])


class ApprovalItem(BaseModel):
    chain: str
    title: str
    step: str
    interrupt: str
    requester: str | None
    expiresAt: str | None
    thread: str
    status: str
    """`waiting`, or the approver's answer: `approved`, `rejected`, `delegated`, ..."""
    chainStatus: str
    request: dict[str, Any] = Field(default_factory=dict)


class ApprovalPage(BaseModel):
    items: list[ApprovalItem]
    next: str | None = None
    """Pass as `cursor` for the next page (None: this was the last)."""


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@router.get("")
async def list_approvals(
    client: ClientDep,
    assignee: Annotated[str, Query(min_length=1)],
    status: Literal["pending", "done"] = "pending",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
) -> ApprovalPage:
    """Chains waiting for `assignee` (`pending`), or those they took part in (`done`)."""
    key = APPROVALS_PENDING if status == "pending" else APPROVALS_PARTICIPANTS
    query = f'WorkflowType = "{APPROVAL_CHAIN_WORKFLOW}" AND {key.name} = {_quoted(assignee)}'
    token = base64.urlsafe_b64decode(cursor) if cursor else None
    executions = client.list_workflows(query, page_size=limit, next_page_token=token)
    await executions.fetch_next_page()
    items: list[ApprovalItem] = []
    for execution in executions.current_page or []:
        try:
            state = await client.get_workflow_handle(execution.id).query(
                CHAIN_QUERY, result_type=ChainState
            )
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:
                continue
            raise
        items.extend(_items(state, assignee, status))
    next_token = executions.next_page_token
    return ApprovalPage(
        items=items, next=base64.urlsafe_b64encode(next_token).decode() if next_token else None
    )


def _items(state: ChainState, assignee: str, status: str) -> list[ApprovalItem]:
    items = []
    for step in state.steps:
        for slot in step.slots:
            if slot.assignee != assignee:
                continue
            waiting = slot.status == "waiting" and step.status == "active"
            if waiting != (status == "pending"):
                continue
            items.append(
                ApprovalItem(
                    chain=state.chain_id,
                    title=state.title,
                    step=step.name,
                    interrupt=slot.interrupt_id,
                    requester=state.requester,
                    expiresAt=slot.expires_at,
                    thread=slot.thread_id,
                    status=slot.status,
                    chainStatus=state.status,
                    request=state.request,
                )
            )
    return items


@router.get("/{chain_id}")
async def get_chain(client: ClientDep, chain_id: str) -> ChainState:
    """One chain: its steps (seats, answers), every decision in the audit trail, reminders."""
    try:
        return await client.get_workflow_handle(chain_id).query(CHAIN_QUERY, result_type=ChainState)
    except RPCError as err:
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise HTTPException(404, f"no approval chain {chain_id!r}") from None
        raise
