"""The approvals inbox: what waits for whom (`GET /approvals`), and one chain in full."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, Field
from temporalio.service import RPCError, RPCStatusCode

from gateway.deps import ClientDep, PrincipalDep, SettingsDep
from workflows.chains import (
    APPROVAL_CHAIN_WORKFLOW,
    CHAIN_QUERY,
    ChainState,
)
from workflows.contract import APPROVALS_PARTICIPANTS, APPROVALS_PENDING

router = APIRouter(prefix="/approvals", tags=["approvals"])

TRUSTED_MODES = ("dev", "none")
"""Modes where any caller may list anyone's approvals (the dev UI's principal menu)."""


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


PRINTABLE = r"^[^\x00-\x1f\x7f\"'\\`]+$"
"""Principals and groups hold no control characters and no quotes or backslashes: the
dev server's SQL visibility store breaks on a NUL and on escaped quotes in a query."""


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@router.get("")
async def list_approvals(
    client: ClientDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    assignee: Annotated[str, Query(min_length=1, pattern=PRINTABLE)],
    status: Literal["pending", "done"] = "pending",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: str | None = None,
) -> ApprovalPage:
    """Chains waiting for `assignee` (`pending`), or those they took part in (`done`).
    With real authentication, `assignee` is the caller or one of its `group:G`."""
    if settings.auth_mode not in TRUSTED_MODES and not principal.named_in([assignee]):
        raise HTTPException(403, "you may list only your own (or your groups') approvals")
    key = APPROVALS_PENDING if status == "pending" else APPROVALS_PARTICIPANTS
    query = f'WorkflowType = "{APPROVAL_CHAIN_WORKFLOW}" AND {key.name} = {_quoted(assignee)}'
    executions = client.list_workflows(query, page_size=limit, next_page_token=_token(cursor))
    try:
        await executions.fetch_next_page()
    except RPCError as err:  # a forged cursor, or an assignee the visibility query refuses
        if err.status != RPCStatusCode.INVALID_ARGUMENT:
            raise
        raise HTTPException(400, "invalid assignee or cursor") from None
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


def _token(cursor: str | None) -> bytes | None:
    """The page token a `next` encoded; 400 for anything this server did not send."""
    if not cursor:
        return None
    try:
        token = base64.urlsafe_b64decode(cursor.encode("ascii"))
        # Temporal's visibility page tokens are JSON objects; a forged one makes the
        # server fail (and the client retry) instead of refusing it.
        if isinstance(json.loads(token), dict):
            return token
    except (UnicodeError, binascii.Error, ValueError):
        pass
    raise HTTPException(400, "cursor must be a `next` value from this endpoint")


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
async def get_chain(client: ClientDep, principal: PrincipalDep, chain_id: str) -> ChainState:
    """One chain: its steps (seats, answers), every decision in the audit trail, reminders
    (for authenticated callers: `principal` makes the route require credentials)."""
    try:
        return await client.get_workflow_handle(chain_id).query(CHAIN_QUERY, result_type=ChainState)
    except RPCError as err:
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise HTTPException(404, f"no approval chain {chain_id!r}") from None
        raise
