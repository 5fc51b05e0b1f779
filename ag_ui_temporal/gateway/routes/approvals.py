"""The approvals inbox: what waits for whom (`GET /approvals`), and one chain in full, with
its history in sentences (`workflows.contract.audit_text`) and the notifications sent about it.

A chain's trail (`audit`, and `history` made of it) is read from the store's audit trail
(its `chain:<id>` records, `store.audit`), where it stays after Temporal deleted the chain;
from the chain itself only the lines it has not stored yet, or all of them for a chain the
store holds nothing of (one from before the trail).

Who may read what: a chain (`GET /approvals/{chain}`) only its requester, its
participants (seats, delegates, escalation targets) and `APPROVALS_ADMINS`;
anyone else gets the 404 of a chain that does not exist. A list only the
assignee itself (or a member of its `group:G`) and the admins. With
`AUTH_MODE=none` every caller is the same anonymous user: no check.

A page of the list costs one visibility call: chains keep a summary in their
memo (`ChainSummary`). Chains from before the summary are
queried, at most `LEGACY_QUERIES` per page; beyond that they are listed bare.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowExecution, WorkflowQueryFailedError
from temporalio.service import RPCError, RPCStatusCode

from ag_ui_temporal.gateway.access import TRUSTED_MODES
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.deps import AuthenticatedRoute, ClientDep, PrincipalDep, SettingsDep
from ag_ui_temporal.gateway.people import display_names
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store.audit import AuditLog, AuditQuery, Reader, StoredRecord
from ag_ui_temporal.store.notifications import NotificationLog
from ag_ui_temporal.workflows.contract import APPROVALS_PARTICIPANTS, APPROVALS_PENDING
from ag_ui_temporal.workflows.contract.audit import chain_scope
from ag_ui_temporal.workflows.contract.audit_text import reminder_sentence, sentences
from ag_ui_temporal.workflows.contract.chains import (
    APPROVAL_CHAIN_WORKFLOW,
    CHAIN_QUERY,
    MEMO_KEY,
    AuditEntryView,
    ChainSummary,
    ChainView,
    awaits_answer,
    chain_participants,
    inbox_thread,
    may_read_chain,
)

router = APIRouter(prefix="/approvals", tags=["approvals"], route_class=AuthenticatedRoute)
log = logging.getLogger(__name__)

LEGACY_QUERIES = 10
"""Chains without a memo summary (recorded before it) queried per page at most."""


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


class HistoryLine(BaseModel):
    """One thing that happened to the chain, as a sentence (`workflows.contract.audit_text`)."""

    at: str
    kind: str
    """The audit entry's kind, or `reminded` for a reminder."""
    step: str | None = None
    text: str


class ChainDetail(ChainView):
    """`GET /approvals/{chain}`: the chain's view as the chain answers it, plus what a person
    reads: its history in sentences, the notifications sent about it, display names."""

    history: list[HistoryLine] = Field(default_factory=list)
    """The audit trail and the reminders, in time order, each as a sentence."""
    notifications: list[dict[str, Any]] = Field(default_factory=list)
    """What each channel was told about the chain (the store's deliveries, oldest first)."""
    names: dict[str, str] = Field(default_factory=dict)
    """principal -> display name, for the chain's participants (from the directory)."""


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
    if not _trusted(settings, principal, [assignee]):
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
    budget = LEGACY_QUERIES
    for execution in executions.current_page or []:
        summary = await _summary(execution)
        if summary is not None:
            items.extend(_summary_items(execution.id, summary, assignee, status))
        elif budget > 0:
            budget -= 1
            items.extend(await _queried_items(client, execution.id, assignee, status))
        else:
            items.append(_bare_item(execution, assignee))
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


def _trusted(settings: Settings, principal: Principal, entries: list[str]) -> bool:
    return (
        settings.auth_mode in TRUSTED_MODES
        or principal.named_in(entries)
        or principal.named_in(settings.approvals_admins)
    )


async def _summary(execution: WorkflowExecution) -> ChainSummary | None:
    try:
        summary = ChainSummary.model_validate((await execution.memo()).get(MEMO_KEY))
    except Exception:  # no summary, or an undecodable one: treat as a chain without summary
        return None
    return summary if summary.v == 1 else None


def _summary_items(
    chain_id: str, summary: ChainSummary, assignee: str, status: str
) -> list[ApprovalItem]:
    items = []
    for seat in summary.seats:
        if seat.assignee != assignee:
            continue
        if awaits_answer(seat.status, seat.stepStatus) != (status == "pending"):
            continue
        items.append(
            ApprovalItem(
                chain=chain_id,
                title=summary.title or chain_id,
                step=seat.step or "",
                interrupt=seat.interrupt or "",
                requester=summary.requester,
                expiresAt=seat.expiresAt,
                thread=seat.thread or inbox_thread(assignee),
                status=seat.status or "unknown",
                chainStatus=summary.status or "unknown",
                request=summary.request,
            )
        )
    return items


async def _queried_items(
    client: Client, chain_id: str, assignee: str, status: str
) -> list[ApprovalItem]:
    try:
        state = await client.get_workflow_handle(chain_id).query(CHAIN_QUERY, result_type=ChainView)
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return []
        raise
    return _items(state, assignee, status)


def _bare_item(execution: WorkflowExecution, assignee: str) -> ApprovalItem:
    """An older chain beyond the page's query budget: listed, details at `/approvals/{id}`."""
    running = execution.status is None or execution.status.name == "RUNNING"
    return ApprovalItem(
        chain=execution.id,
        title=execution.id,
        step="",
        interrupt="",
        requester=None,
        expiresAt=None,
        thread=inbox_thread(assignee),
        status="unknown",
        chainStatus="running" if running else "unknown",
    )


def _items(state: ChainView, assignee: str, status: str) -> list[ApprovalItem]:
    items = []
    for step in state.steps:
        for slot in step.slots:
            if slot.assignee != assignee:
                continue
            if awaits_answer(slot.status, step.status) != (status == "pending"):
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
async def get_chain(
    client: ClientDep,
    principal: PrincipalDep,
    settings: SettingsDep,
    request: Request,
    chain_id: str,
) -> ChainDetail:
    """One chain: its steps (seats, answers), every decision in the audit trail, reminders,
    its history in sentences and the notifications sent about it.
    Only for its requester, its participants and the admins: 404 for anyone else, the same
    answer as for no chain at the same cost. Who may read is decided first from what the
    server keeps without a worker (`describe`: the workflow's type, the chain's memo and
    search attributes); only then is the chain itself asked (a query, which needs one)."""
    missing = HTTPException(404, f"no approval chain {chain_id[:200]!r}")
    handle = client.get_workflow_handle(chain_id)
    try:
        description = await handle.describe()
        if description.workflow_type != APPROVAL_CHAIN_WORKFLOW:  # e.g. a thread
            raise missing
        trusted = _trusted(settings, principal, [])
        if not trusted and not await _may_take_part(description, principal):
            raise missing  # existence does not leak
        state: ChainView = await handle.query(CHAIN_QUERY, result_type=ChainView)
    except (WorkflowQueryFailedError, ValidationError):  # a chain that cannot answer as one
        raise missing from None
    except RPCError as err:
        if err.status in (RPCStatusCode.NOT_FOUND, RPCStatusCode.INVALID_ARGUMENT):
            raise missing from None
        raise
    if not trusted and not may_read_chain(
        state, principal.name, principal.groups, settings.approvals_admins
    ):
        raise missing
    names = display_names(settings, set(chain_participants(state)))
    store: AsyncEngine = request.app.state.store
    sent = await NotificationLog(store).for_chain(state.chain_id)
    state = state.model_copy(update={"audit": await chain_audit(request.app.state.audit, state)})
    return ChainDetail(
        **dict(state),
        history=history(state, names),
        notifications=[delivery.view() for delivery in sent],
        names=names,
    )


ALL_RECORDS = Reader(principal="", everything=True)
"""The chain view reads its chain's records whoever calls: `get_chain` decided who may."""


async def chain_audit(audit: AuditLog, chain: ChainView) -> list[AuditEntryView]:
    """`chain`'s trail as the store keeps it (its `chain:<id>` records, in order), then the
    lines the chain has not stored yet (it sends them in the background: an answer of a
    moment ago is in its view already); all of it the chain's own for a chain the store
    holds nothing of (one from before the trail)."""
    query = AuditQuery(scope=chain_scope(chain.chain_id))
    stored = [record async for record in audit.stream(query, ALL_RECORDS)]
    if not stored:
        return chain.audit
    # The chain stores its line i as record seq i + 1, each once and in order
    # (`workflows/chains/_audit.py`), so its lines past the last seq are those not stored.
    entries = [entry for record in stored if (entry := entry_view(record)) is not None]
    return entries + chain.audit[max(record.seq for record in stored) :]


def entry_view(record: StoredRecord) -> AuditEntryView | None:
    """A chain's stored record as the line of its trail it was written from (the kind and
    who/when fields are columns, the rest of the line its `data`); None, and a warning, for
    a record this gateway cannot show (e.g. a kind newer than its code): `GET /audit`
    still serves it as it is."""
    fields = {
        **record.data,
        "at": record.at,
        "kind": record.kind,
        "principal": record.principal,
        "interrupt_id": record.interrupt_id,
        "run_id": record.run_id,
    }
    try:
        return AuditEntryView.model_validate(fields)
    except ValidationError as err:
        log.warning(
            "%s #%d (%s): not a line of a chain's trail: %s",
            record.scope,
            record.seq,
            record.kind,
            err.errors(include_url=False, include_input=False),
        )
        return None


def history(chain: ChainView, names: dict[str, str]) -> list[HistoryLine]:
    """The audit trail and the reminders in one list, in time order (ties: audit first)."""
    lines = [
        HistoryLine(at=entry.at, kind=entry.kind, step=entry.step, text=text)
        for entry, text in zip(chain.audit, sentences(chain, names), strict=True)
    ]
    lines += [
        HistoryLine(at=r.at, kind="reminded", step=r.step, text=reminder_sentence(r, names))
        for r in chain.reminders
    ]
    return sorted(lines, key=lambda line: line.at)


async def _may_take_part(chain: WorkflowExecution, principal: Principal) -> bool:
    """Whether the chain's memo and search attributes name `principal` (its requester, or a
    seat's assignee by name or `group:G`): `may_read_chain` then decides from the chain
    itself. A chain from before the memo cannot name its requester here: once it seated
    anyone, its query decides, as it did; one that never ran a task names nobody yet."""
    seated = chain.typed_search_attributes.get(APPROVALS_PARTICIPANTS) or []
    summary = await _summary(chain)
    if summary is None:
        return bool(seated)
    return principal.named_in([*seated, *([summary.requester] if summary.requester else [])])
