"""`GET /inbox`: the caller's task list, every item of their own inbox thread at once.

Each item says what it is (reason, message, the chain's title, step, requester and
request), its deadline, who else holds a seat in its step, what the caller may delegate
to, and — once answered — the answer, when and how it came. Waiting items come first,
the most urgent first; then the answered ones, newest first.

Only ever the caller's own inbox (`inbox:<caller>`): there is no parameter naming
another. The thread is read as `gateway.hydrate` reads one (its memo, then the `thread`
query); a thread that does not exist yet is an empty list. The other seats and the title
come from each chain's memo summary: one `describe` per distinct chain, at most
`CHAINS_DESCRIBED` per answer; a chain that cannot be described shows no other seats.
Display names come from the directory file (`DIRECTORY_FILE`), for the principals the
answer names only. Ids stay data fields: no text the UI shows is built here.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from temporalio.client import Client

from ag_ui_temporal.gateway.access import Access
from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.deps import AuthenticatedRoute, ClientDep, PrincipalDep, SettingsDep
from ag_ui_temporal.gateway.people import display_names
from ag_ui_temporal.workflows.contract import (
    INBOX_AGENT,
    PENDING_STATUSES,
    InterruptStatus,
    InterruptView,
    ThreadView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import (
    APPROVAL_CHAIN_WORKFLOW,
    APPROVAL_METADATA_KEY,
    MEMO_KEY,
    ChainSummary,
    SeatSummary,
    inbox_thread,
)

router = APIRouter(tags=["inbox"], route_class=AuthenticatedRoute)
log = logging.getLogger(__name__)

MAX_ITEMS = 100
"""Items one answer lists at most: every waiting one first, then the newest answered."""
CHAINS_DESCRIBED = 25
"""Chains described per answer at most (waiting items' first): one `describe` each."""

ItemStatus = Literal["waiting", "resolved", "cancelled", "expired", "withdrawn"]
ANSWERED = (InterruptStatus.RESOLVED, InterruptStatus.CANCELLED)


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class InboxAnswer(_Camel):
    """What the caller (or whoever answered in their inbox) answered."""

    status: Literal["resolved", "cancelled"]
    payload: Any = None
    at: str | None = None
    """When the answer was applied (ISO 8601; None from threads that did not record it)."""
    via: str | None = None
    """How it came: `chat`, `link` or `api` (None: not recorded)."""


class InboxSeat(_Camel):
    """Another seat in the item's step: who holds it and where it is."""

    principal: str
    status: str
    """`waiting`, or the answer: `approved`, `rejected`, `delegated`, `cancelled`."""


class InboxApproval(_Camel):
    """The approval chain an item is a seat of."""

    chain_id: str
    title: str | None = None
    step: str | None = None
    requester: str | None = None
    request: dict[str, Any] = Field(default_factory=dict)
    delegated_from: str | None = None
    """Whose seat was handed to the caller."""
    escalation: bool = False
    """The seat came to the caller because the step expired (an escalation)."""
    seats: list[InboxSeat] = Field(default_factory=list)
    """Who else holds a seat in the item's step (closed seats left out; empty when the chain's
    summary could not be read)."""
    delegates: list[str] = Field(default_factory=list)
    """Whom the caller may hand the seat to (empty: no delegation)."""


class InboxItem(_Camel):
    """One item of the caller's inbox."""

    id: str
    reason: str
    message: str | None = None
    status: ItemStatus
    """`waiting` (offered or open, deadline not passed), or how it ended."""
    expires_at: str | None = None
    response_schema: dict[str, Any] | None = None
    ended_at: str | None = None
    """When it was answered, cancelled or expired (None: waiting, withdrawn, or from a thread
    that did not record it)."""
    answer: InboxAnswer | None = None
    approval: InboxApproval | None = None


class InboxList(_Camel):
    items: list[InboxItem]
    names: dict[str, str]
    """principal -> display name, for the principals the items name (from the directory)."""
    thread_id: str
    """The inbox thread the items are in (the `threadId` of a decision)."""


@router.get("/inbox")
async def list_inbox(
    client: ClientDep, principal: PrincipalDep, settings: SettingsDep
) -> InboxList:
    """The caller's inbox as a task list (see the module's docstring)."""
    thread_id = inbox_thread(principal.name)
    thread = await _own_thread(client, thread_id, principal)
    records = thread.interrupts if thread is not None else []
    items = _ordered(records, datetime.now(UTC))[:MAX_ITEMS]
    await _add_chains(client, items)
    named = {principal.name, *(p for item in items for p in _named(item))}
    return InboxList(items=items, names=display_names(settings, named), thread_id=thread_id)


async def _own_thread(client: Client, thread_id: str, principal: Principal) -> ThreadView | None:
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return await Access(principal, False, expected_agent=INBOX_AGENT).view(handle, thread_id)


# -- the items ---------------------------------------------------------------------


def _ordered(records: list[InterruptView], now: datetime) -> list[InboxItem]:
    """Waiting first (soonest deadline first, none last), then answered (newest first)."""
    items = [_item(record, now) for record in records]
    waiting = [i for i in items if i.status == "waiting"]
    done = [i for i in reversed(items) if i.status != "waiting"]  # newest first on ties
    waiting.sort(key=lambda i: (i.expires_at is None, _instant(i.expires_at)))
    done.sort(key=lambda i: _instant(_ended_at(i)), reverse=True)
    return waiting + done


def _item(record: InterruptView, now: datetime) -> InboxItem:
    wire = record.interrupt
    expires_at = record.expires_at or _text(wire.get("expiresAt"))
    schema = wire.get("responseSchema")
    return InboxItem(
        id=record.id,
        reason=str(wire.get("reason") or ""),
        message=_text(wire.get("message")),
        status=_status(record, expires_at, now),
        expires_at=expires_at,
        response_schema=schema if isinstance(schema, dict) else None,
        ended_at=record.resolved_at,
        answer=_answer(record),
        approval=_approval(wire, schema),
    )


def _status(record: InterruptView, expires_at: str | None, now: datetime) -> ItemStatus:
    if record.status in PENDING_STATUSES:
        # The thread's timer may not have fired yet: a deadline past is past.
        past = expires_at is not None and _instant(expires_at) <= now
        return "expired" if past else "waiting"
    if record.status in ANSWERED:
        return "cancelled" if record.status == InterruptStatus.CANCELLED else "resolved"
    return "withdrawn" if record.status == InterruptStatus.WITHDRAWN else "expired"


def _answer(record: InterruptView) -> InboxAnswer | None:
    resolution = record.resolution
    if resolution is None or record.status not in ANSWERED:
        return None  # an expired item's acknowledgement is no answer
    return InboxAnswer(
        status=resolution.status,
        payload=resolution.payload,
        at=record.resolved_at,
        via=record.resolved_via,
    )


def _approval(wire: dict[str, Any], schema: Any) -> InboxApproval | None:
    metadata = wire.get("metadata")
    approval = metadata.get(APPROVAL_METADATA_KEY) if isinstance(metadata, dict) else None
    if not isinstance(approval, dict) or not isinstance(approval.get("chainId"), str):
        return None
    request = approval.get("request")
    return InboxApproval(
        chain_id=approval["chainId"],
        title=_text(approval.get("title")),
        step=_text(approval.get("step")),
        requester=_text(approval.get("requester")),
        request=request if isinstance(request, dict) else {},
        delegated_from=_text(approval.get("delegatedFrom")),
        escalation=approval.get("escalation") is True,
        delegates=_delegates(schema),
    )


def _delegates(schema: Any) -> list[str]:
    """The `delegateTo` enum the seat's decision schema allows (none: no delegation)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    target = properties.get("delegateTo") if isinstance(properties, dict) else None
    allowed = target.get("enum") if isinstance(target, dict) else None
    return [d for d in allowed if isinstance(d, str)] if isinstance(allowed, list) else []


def _ended_at(item: InboxItem) -> str | None:
    return item.ended_at or (item.expires_at if item.status == "expired" else None)


def _instant(text: str | None) -> datetime:
    """An ISO 8601 instant (anything unreadable sorts as the earliest)."""
    try:
        moment = datetime.fromisoformat(text) if text else datetime.min
    except ValueError:
        moment = datetime.min
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# -- the chains: title and the other seats, from each chain's memo summary --------


async def _add_chains(client: Client, items: list[InboxItem]) -> None:
    chains: list[str] = []
    for item in items:  # waiting ones come first: they are described first
        if item.approval is not None and item.approval.chain_id not in chains:
            chains.append(item.approval.chain_id)
    chains = chains[:CHAINS_DESCRIBED]
    found = await asyncio.gather(*(_summary(client, chain) for chain in chains))
    summaries = dict(zip(chains, found, strict=True))
    for item in items:
        approval = item.approval
        summary = summaries.get(approval.chain_id) if approval is not None else None
        if approval is None or summary is None:
            continue
        mine = next((s for s in summary.seats if s.interrupt == item.id), None)
        if mine is None:  # the chain does not know this seat: it says nothing about it
            continue
        approval.title = approval.title or summary.title
        approval.step = approval.step or mine.step
        approval.seats = [
            InboxSeat(principal=seat.assignee, status=seat.status or "waiting")
            for seat in summary.seats
            if seat.assignee and _holds_seat(seat, mine)
        ]


def _holds_seat(seat: SeatSummary, mine: SeatSummary) -> bool:
    """Someone else seated in `mine`'s step now: a closed seat (withdrawn, expired, refused
    or handed on) holds none."""
    return seat.step == mine.step and seat.interrupt != mine.interrupt and seat.status != "closed"


async def _summary(client: Client, chain_id: str) -> ChainSummary | None:
    """The chain's memo summary; None for anything that is not a chain that has one."""
    try:
        description = await client.get_workflow_handle(chain_id).describe()
        if description.workflow_type != APPROVAL_CHAIN_WORKFLOW:
            return None
        summary = ChainSummary.model_validate((await description.memo()).get(MEMO_KEY))
    except Exception as err:  # gone, refused, undecodable: the item shows without seats
        log.info("no summary of chain %s: %s", chain_id[:200], type(err).__name__)
        return None
    return summary if summary.v == 1 else None


def _named(item: InboxItem) -> list[str]:
    approval = item.approval
    if approval is None:
        return []
    seats = [s.principal for s in approval.seats]
    return [*seats, *approval.delegates, approval.requester or "", approval.delegated_from or ""]
