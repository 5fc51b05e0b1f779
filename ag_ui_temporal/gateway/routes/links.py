"""Signed decision links, the decision API's twin for people reading a notification.

- `GET /decisions/{token}`: a confirmation page; it reads the thread and changes nothing
  (mail scanners and link previews open links).
- `POST /decisions/{token}`: the page's button: decides once (`UsedLinks`), as the link's
  principal, through the same `gateway.decisions.decide` as the API.

Both are limited a minute per link and per client address (`LinkLimits`): past either, a
`429` page with `Retry-After`, before anything is read.

These routes take no credentials: the signed token is the credential, bound to one principal,
interrupt and decision, so they are served to anyone who holds it (off loopback too). Their
pages are plain HTML with no script, no internal ids, and headers that keep them out of
caches, referrers, frames and search engines.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.exc import SQLAlchemyError
from temporalio.client import Client

from ag_ui_temporal.gateway.auth import Principal
from ag_ui_temporal.gateway.decisions import DecisionRefused, SeenThread, decide, seen_thread
from ag_ui_temporal.gateway.deps import (
    ClientDep,
    RunIdKeyDep,
    SettingsDep,
    TranscriptDep,
    UsedLinksDep,
)
from ag_ui_temporal.gateway.limits import link_wait, retry_after
from ag_ui_temporal.gateway.people import display_names, person
from ag_ui_temporal.notify.links import (
    DecisionClaim,
    LinkExpired,
    LinkInvalid,
    one_click_payload,
    read,
)
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import UsedLinks
from ag_ui_temporal.workflows.contract import (
    ErrorCode,
    InterruptStatus,
    InterruptView,
    may_answer,
)
from ag_ui_temporal.workflows.contract.notices import approval_of

router = APIRouter(tags=["decisions"])


def link_principal(settings: Settings, principal: str) -> Principal:
    """Who a link decides as: its principal, with the groups the directory gives them (a link
    carries no credentials to name groups; a `group:G` seat takes the directory's word)."""
    return Principal(principal, tuple(person(settings, principal).groups))


PAGE_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'"  # a one-click form must not be framed (clickjacking)
    ),
    "Referrer-Policy": "no-referrer",  # the token is in the URL
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex",
    "X-Content-Type-Options": "nosniff",
}
STYLE: Final = (
    "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;"
    "color:#222}h1{font-size:1.4rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}"
    "dt{color:#666}dd{margin:0}blockquote{margin:1rem 0;padding:.5rem 1rem;background:#f4f4f4;"
    "white-space:pre-wrap}button{font-size:1rem;padding:.6rem 1.6rem;border:0;border-radius:4px;"
    "color:#fff;background:#1a7f37;cursor:pointer}button.reject{background:#b42318}"
)
MAX_SHOWN: Final = 2_000
"""Characters of a message or title a page shows at most."""
VERB: Final = {"approve": "Approve", "reject": "Reject"}
DONE: Final = {"approve": "Approved", "reject": "Rejected"}

NOT_ENABLED = "Decision links are not enabled on this server."
INVALID = "This link is not valid. Open your inbox to answer the request."
EXPIRED = "This link has expired. The request may no longer take an answer."
USED = "This link was already used. Nothing was changed."
NOT_YOURS = "This link does not let you answer this request."
GONE = "This request is no longer waiting for an answer. Nothing was changed."
ANSWERED = "This request was already answered. Nothing was changed."
NEEDS_MORE = "This request needs more than approve or reject: answer it in your inbox."
UNAVAILABLE = "The server could not reach the approval service. Please try the link again."
NOT_APPLIED = (
    "This answer could not be applied from the link. Nothing was changed: answer in the chat."
)
BUSY = "This link was opened too often. Please wait a minute and open it again."

LINK_PAGES: Final[dict[str, tuple[int, str]]] = {
    ErrorCode.UNKNOWN_INTERRUPT_ID: (410, GONE),
    ErrorCode.INTERRUPT_EXPIRED: (410, GONE),
    ErrorCode.INTERRUPT_WITHDRAWN: (410, GONE),
    ErrorCode.FORBIDDEN: (403, NOT_YOURS),
    ErrorCode.INTERRUPT_ALREADY_RESOLVED: (409, ANSWERED),
    ErrorCode.INVALID_PAYLOAD: (422, NEEDS_MORE),
    ErrorCode.UNAVAILABLE: (503, UNAVAILABLE),
    ErrorCode.RUN_ID_TAKEN: (409, NOT_APPLIED),
}
"""A refused link's page: forged 403, expired 410, used 409 (above); the request gone
(unknown, expired, withdrawn) 410, not the link principal's 403, answered already 409."""
OTHERWISE: Final = (
    409,
    "This request cannot be answered from a link right now: answer it in your inbox.",
)


def page(status: int, heading: str, body: str = "", form: str = "") -> HTMLResponse:
    """A small HTML page (every value in it already escaped)."""
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta name="robots" content="noindex"><title>{heading}</title>'
        f"<style>{STYLE}</style></head><body><h1>{heading}</h1>{body}{form}</body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def notice(status: int, text: str) -> HTMLResponse:
    heading = "Done" if status < 300 else "Nothing was changed" if status != 503 else "Try again"
    return page(status, heading, f"<p>{escape(text)}</p>")


class Link:
    """An open link: its claim, the thread as its principal sees it, the payload it sends."""

    def __init__(self, claim: DecisionClaim, thread: SeenThread, record: InterruptView) -> None:
        self.claim, self.thread, self.record = claim, thread, record
        interrupt = record.interrupt
        self.payload = one_click_payload(
            _text(interrupt.get("reason")), _schema(interrupt), claim.decision
        )


async def open_link(
    claim: DecisionClaim, client: Client, settings: Settings, now: datetime
) -> Link | HTMLResponse:
    """The link, if its interrupt still takes its answer, or the page saying why not (read
    from the thread, nothing written)."""
    principal = link_principal(settings, claim.principal)
    try:
        thread = await seen_thread(client, settings, principal, claim.thread_id)
    except DecisionRefused as refused:
        # The token names the thread and was signed here: whoever holds it knows the thread
        # exists, so a principal that may not see it is told the link is not theirs.
        if refused.code == ErrorCode.UNKNOWN_INTERRUPT_ID:
            return notice(403, NOT_YOURS)
        return _refused_page(refused)
    record = thread.interrupt(claim.interrupt_id)
    if record is None:
        return notice(410, GONE)
    if (closed := _closed(record, principal, now)) is not None:
        return closed
    link = Link(claim, thread, record)
    if link.payload is None:
        return notice(422, NEEDS_MORE)
    return link


def _over_limit(request: Request, token: str) -> HTMLResponse | None:
    """The `429` page of a request over the link's or the address's limit (`LinkLimits`),
    answered before the token is read or Temporal asked."""
    if (wait := link_wait(request, token)) is None:
        return None
    busy = notice(429, BUSY)
    busy.headers.update(retry_after(wait))
    return busy


def _claim(token: str, settings: Settings, now: datetime) -> DecisionClaim | HTMLResponse:
    if settings.decision_link_secret is None:
        return notice(404, NOT_ENABLED)
    try:
        return read(settings.decision_link_secret.get_secret_value(), token, now)
    except LinkExpired:
        return notice(410, EXPIRED)
    except LinkInvalid:
        return notice(403, INVALID)


def _closed(record: InterruptView, principal: Principal, now: datetime) -> HTMLResponse | None:
    """Why the interrupt takes no answer from `principal` now, as the thread would say it."""
    if record.resolution is not None or record.status in SETTLED:
        return notice(409, ANSWERED)
    if record.status in GONE_STATUSES or record.due(now):  # the thread's rule of expiry
        return notice(410, GONE)
    if not may_answer(record.allowed_resolvers, principal.name, principal.groups):
        return notice(403, NOT_YOURS)
    return None


SETTLED: Final = (InterruptStatus.RESOLVED, InterruptStatus.CANCELLED)
GONE_STATUSES: Final = (InterruptStatus.EXPIRED, InterruptStatus.WITHDRAWN)


@router.get("/decisions/{token}", response_class=HTMLResponse, include_in_schema=False)
async def get_decision_link(
    token: str, request: Request, client: ClientDep, settings: SettingsDep
) -> HTMLResponse:
    """The confirmation page: what is asked, for whom, and one button. Changes nothing."""
    if (busy := _over_limit(request, token)) is not None:
        return busy
    now = datetime.now(UTC)
    claim = _claim(token, settings, now)
    if isinstance(claim, HTMLResponse):
        return claim
    link = await open_link(claim, client, settings, now)
    if isinstance(link, HTMLResponse):
        return link
    decision = link.claim.decision
    interrupt = link.record.interrupt
    approval = approval_of(interrupt)
    requester = approval.get("requester")
    names = display_names(settings, {link.claim.principal, *([requester] if requester else [])})
    rows = [
        ("Request", approval.get("title")),
        ("Step", approval.get("step")),
        ("Requested by", names.get(requester, requester) if requester else None),
        ("For", names.get(link.claim.principal, link.claim.principal)),
        ("Answer by", _when(link.record.expires_at)),
    ]
    shown = "".join(
        f"<dt>{escape(name)}</dt><dd>{escape(_short(value))}</dd>"
        for name, value in rows
        if isinstance(value, str) and value
    )
    message = _text(interrupt.get("message"))
    body = (f"<blockquote>{escape(_short(message))}</blockquote>" if message else "") + (
        f"<dl>{shown}</dl>" if shown else ""
    )
    css = "reject" if decision == "reject" else "approve"
    form = (
        f'<form method="post"><button type="submit" class="{css}">{VERB[decision]}</button></form>'
    )
    return page(200, f"{VERB[decision]} this request?", body, form)


@router.post("/decisions/{token}", response_class=HTMLResponse, include_in_schema=False)
async def post_decision_link(
    token: str,
    request: Request,
    client: ClientDep,
    settings: SettingsDep,
    transcript: TranscriptDep,
    used_links: UsedLinksDep,
    run_ids: RunIdKeyDep,
) -> HTMLResponse:
    """Decide as the link says, once: a link whose decision was taken (on any replica)
    decides nothing more. The link is taken first, so two clicks at once cannot both send
    it; it is given back when its decision was not taken (a refusal changed nothing, or did
    not reach the thread), so it never ends up spent on an answer the thread does not have."""
    if (busy := _over_limit(request, token)) is not None:
        return busy
    now = datetime.now(UTC)
    claim = _claim(token, settings, now)
    if isinstance(claim, HTMLResponse):
        return claim
    try:
        if not await used_links.claim(claim.jti, claim.principal, claim.interrupt_id):
            return notice(409, USED)
    except SQLAlchemyError:
        return notice(503, UNAVAILABLE)
    link = await open_link(claim, client, settings, now)
    if isinstance(link, HTMLResponse):
        await _release(used_links, claim.jti)  # nothing was sent: the link decided nothing
        return link
    try:
        await decide(
            client,
            settings,
            link_principal(settings, claim.principal),
            claim.thread_id,
            claim.interrupt_id,
            "resolved",
            link.payload,
            True,
            None,
            "link",
            run_ids=run_ids,
            transcript=transcript,
            thread=link.thread,
        )
    except DecisionRefused as refused:
        await _release(used_links, claim.jti)  # not taken (or not yet): the link is not spent
        return _refused_page(refused)
    return notice(200, f"{DONE[claim.decision]}. Thank you.")


async def _release(used_links: UsedLinks, jti: str) -> None:
    try:
        await used_links.release(jti)
    except SQLAlchemyError:
        pass  # the link stays used: the person answers in the inbox instead


def _refused_page(refused: DecisionRefused) -> HTMLResponse:
    return notice(*LINK_PAGES.get(refused.code, OTHERWISE))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _schema(interrupt: dict[str, Any]) -> dict[str, Any] | None:
    schema = interrupt.get("responseSchema")
    return schema if isinstance(schema, dict) else None


def _short(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]}…"


def _when(expires_at: str | None) -> str | None:
    if expires_at is None:
        return None
    try:
        at = datetime.fromisoformat(expires_at).astimezone(UTC)
    except ValueError:
        return None
    return at.strftime("%d %B %Y, %H:%M UTC")
