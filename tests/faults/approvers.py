"""The expense approvers of the fault harness: bob, carol and dave, each answering their inbox.

Each approver reads `inbox:<principal>` (the `thread` query) and answers every open item whose
chain's flow has said what it wants of that step, one item at a time, the way the product's
own approvers answer: bob through the decision API (`POST /interrupts/{interruptId}`, as
`X-Principal`, dev auth), carol by the decision link in the email she got for the item (the
harness's SMTP server, tests/faults/notices.py), dave by the link in the webhook's payload.
Items reach an inbox whenever chains offer them: the thread delivers each as it arrives, with
the whole awaiting batch again (a run of its own), so a chat resume of everything an approver
read could be overtaken by a new item (`PARTIAL_RESUME`). A decision names its one item, and
whatever arrives meanwhile waits for the next round.
A decision is re-sent unchanged through faults (a transport error, a `503`), like every flow's
run: its run id is derived from the decision, so the product must neither take it twice nor
refuse the repeat; any other refusal (`{"code", "message"}`) is a flow error. A link is
clicked again on the same faults (and after a `429`'s `Retry-After`); a page that refuses it
(`409`, `410`) ends its use, and an item that still waits after that is answered through the
API, as the page says. Every click's answer is kept (`LinkUse`): the checks hold each
"Thank you" to a decision the chain recorded, by link (tests/faults/checks.py).
erin (finance's third seat) never answers: the quorum of two decides without her.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from temporalio.client import Client

from ag_ui_temporal.workflows.contract import (
    THREAD_QUERY,
    InterruptStatus,
    ThreadView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import inbox_thread
from ag_ui_temporal.workflows.contract.notices import approval_of
from tests.faults.flows import FIRST_BACKOFF, MAX_BACKOFF, FlowError, Stats, post_run
from tests.faults.notices import NoticeServers

APPROVERS = ("bob", "carol", "dave")
BY_LINK = {"carol": "email", "dave": "webhook"}
"""The approvers who decide by the link a notice brought them, and which channel's; the
others decide through the API."""
POLL = 0.2
CLICK_BACKOFF = 0.25
CLICK_MAX_BACKOFF = 2.0
"""A person clicking again: slower than a program re-sending, within the gateway's
`MAX_REQUESTS_PER_LINK` (10 a minute) for the first outage seconds; then its `429`s pace it."""
REFUSED = (409, 410)
"""A link's pages that end its use: used or answered already (409), no longer waiting (410).
Any other answer but a success, a `503` or a `429` is a flow error."""


@dataclass
class LinkUse:
    """One decision link an approver used, and what each click of it answered."""

    principal: str
    interrupt_id: str
    decision: str
    url: str
    answers: list[str] = field(default_factory=list)
    """Each click's answer: its HTTP status, or the transport error's name."""
    fallback: bool = False
    """The link was refused while the item still waited: answered through the API."""

    @property
    def applied(self) -> bool:
        """The link's page said the decision was taken ("... Thank you.")."""
        return "200" in self.answers

    @property
    def refused(self) -> bool:
        """Every click was answered, and each with a page refusing it: nothing may have come
        of this link."""
        return all(a in map(str, REFUSED) for a in self.answers)


@dataclass
class Inboxes:
    """The approvers' loops and the decision each chain's steps are to get."""

    http: httpx.AsyncClient
    client: Client
    stats: Stats
    notices: NoticeServers
    decisions: dict[str, dict[str, str]] = field(default_factory=dict)
    """Chain id -> step -> `approve` or `reject`, set by the chain's flow once submitted."""
    uses: dict[tuple[str, str], LinkUse] = field(default_factory=dict)
    """(principal, interrupt id) -> the link used for it."""
    runs: int = 0
    """Runs the approvers started: decisions (each a run of the inbox) and empty runs."""
    errors: list[str] = field(default_factory=list)

    def expect(self, chain_id: str, decisions: dict[str, str]) -> None:
        self.decisions[chain_id] = decisions

    async def serve(self, stop: asyncio.Event) -> None:
        """Every approver answers its inbox until `stop` is set."""
        await asyncio.gather(*(self._serve(p, stop) for p in APPROVERS))

    async def _serve(self, principal: str, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self._round(principal)
            except FlowError as err:  # reported; the approver goes on answering its inbox
                self.errors.append(f"{inbox_thread(principal)}: {err}")
            await asyncio.sleep(POLL)

    async def _round(self, principal: str) -> None:
        items = await self._items(principal)
        open_ = [i for i in items if i.status == InterruptStatus.OPEN]
        if open_:
            for item in open_:  # one decision each; a chain its flow has not seen yet waits
                approval = approval_of(item.interrupt)
                if (decision := self._decision(approval)) is None:
                    continue
                if principal in BY_LINK:
                    await self._by_link(principal, item.id, decision)
                else:
                    await self._decide(principal, item.id, {"decision": decision})
        elif any(i.status == InterruptStatus.OFFERED for i in items):
            # offered with nothing open: the thread should have delivered it on arrival
            self.errors.append(f"{inbox_thread(principal)}: an offer was left undelivered")
            await self._fetch(principal)  # a run that brings nothing delivers it

    async def _items(self, principal: str) -> list[Any]:
        handle = self.client.get_workflow_handle(thread_workflow_id(inbox_thread(principal)))
        try:
            view = await handle.query(THREAD_QUERY, result_type=ThreadView)
        except Exception:  # no inbox yet, or the server or workers are down: next round
            return []
        return [i for i in view.interrupts
                if i.status in (InterruptStatus.OPEN, InterruptStatus.OFFERED)]  # fmt: skip

    def _decision(self, approval: dict[str, Any]) -> str | None:
        """What the item's chain is to get at its step (None: its flow has not said yet)."""
        steps = self.decisions.get(str(approval.get("chainId")), {})
        return steps.get(str(approval.get("step")))

    async def _by_link(self, principal: str, interrupt_id: str, decision: str) -> None:
        """Decide the open item by the link its notice brought (once one did); if that link
        was refused and the item still waits, through the API ("answer in your inbox")."""
        use = self.uses.get((principal, interrupt_id))
        if use is None:
            url = self.notices.links(BY_LINK[principal]).get((principal, interrupt_id, decision))
            if url is None:
                return  # not told yet: the next round looks again
            use = LinkUse(principal, interrupt_id, decision, url)
            self.uses[(principal, interrupt_id)] = use
            await self._click(use)
        elif not use.fallback:  # the link's page answered, yet the item still waits
            use.fallback = True
            if use.applied:
                thanked = f"the link for {interrupt_id} answered {use.answers}, yet it waits"
                self.errors.append(f"{inbox_thread(principal)}: {thanked}")
            await self._decide(principal, interrupt_id, {"decision": decision})

    async def _click(self, use: LinkUse) -> None:
        """Click the link (its page's button: a `POST`) until a page answers it, the same
        link every time."""
        delay, started = CLICK_BACKOFF, time.monotonic()
        while (again := await self._press(use)) is not None:
            cause, retry_after = again
            self.stats.resends += 1
            self.stats.causes[cause] += 1
            await asyncio.sleep(retry_after or delay)  # backoff before the same click again
            delay = min(delay * 2, CLICK_MAX_BACKOFF)
        if time.monotonic() - started > self.stats.longest:
            self.stats.longest = time.monotonic() - started
            self.stats.slowest = f"link for {use.interrupt_id}"

    async def _press(self, use: LinkUse) -> tuple[str, float | None] | None:
        """One click; None once a page answered it (taken, or refused), else why to click
        again (and after how long, if the page said)."""
        try:
            response = await self.http.post(use.url)
        except httpx.TransportError as err:
            use.answers.append(type(err).__name__)
            return f"link-{type(err).__name__}", None
        status = response.status_code
        use.answers.append(str(status))
        if (status == 200 and "Thank you" in response.text) or status in REFUSED:
            return None
        if status == 503:
            return "link-503", None
        if status == 429:
            return "link-429", float(response.headers.get("Retry-After", CLICK_MAX_BACKOFF))
        raise FlowError(f"the link for {use.interrupt_id} answered {status}: {response.text[:300]}")

    async def _decide(self, principal: str, interrupt_id: str, payload: dict[str, Any]) -> None:
        """`POST /interrupts/{id}` until the gateway answers it; the same body every time."""
        body = {"threadId": inbox_thread(principal), "status": "resolved", "payload": payload}
        self.runs += 1
        delay, started = FIRST_BACKOFF, time.monotonic()
        while (cause := await self._attempt(principal, interrupt_id, body)) is not None:
            self.stats.resends += 1
            self.stats.causes[cause] += 1
            await asyncio.sleep(delay)  # backoff before the same decision again
            delay = min(delay * 2, MAX_BACKOFF)
        if time.monotonic() - started > self.stats.longest:
            self.stats.longest = time.monotonic() - started
            self.stats.slowest = f"decision on {interrupt_id}"

    async def _attempt(self, principal: str, interrupt_id: str, body: dict[str, Any]) -> str | None:
        """One POST of a decision; None once it was taken (now or before), else why it must
        be re-sent."""
        try:
            response = await self.http.post(
                f"/interrupts/{quote(interrupt_id, safe='')}",
                json=body,
                headers={"X-Principal": principal},
            )
        except httpx.TransportError as err:
            return type(err).__name__
        if response.status_code == 503:
            return "http-503"
        if response.status_code != 200:
            raise FlowError(f"decision on {interrupt_id}: {_refusal(response)}")
        decided = response.json()
        if (decided.get("interruptId"), decided.get("status")) != (interrupt_id, "resolved"):
            raise FlowError(f"decision on {interrupt_id} answered {decided}")
        return None

    async def _fetch(self, principal: str) -> None:
        """A chat run that brings nothing: the inbox delivers what waits (`PARTIAL_RESUME`
        never applies to it)."""
        thread = inbox_thread(principal)
        body = {"threadId": thread, "runId": f"run-{uuid.uuid4().hex[:12]}", "messages": []}
        self.runs += 1
        events = await post_run(self.http, body, self.stats, agent="inbox", principal=principal)
        outcome = events[-1].get("outcome") or {}
        if outcome.get("type") not in ("success", "interrupt"):
            raise FlowError(f"inbox run ended with {outcome}")


def _refusal(response: httpx.Response) -> str:
    """`HTTP status CODE: message` of a refused decision (or the start of another answer)."""
    try:
        refused = response.json()
    except ValueError:
        refused = None
    if isinstance(refused, dict) and "code" in refused:
        return f"HTTP {response.status_code} {refused['code']}: {refused.get('message')}"
    return f"HTTP {response.status_code}: {response.text[:300]}"
