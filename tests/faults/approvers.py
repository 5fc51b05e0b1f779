"""The expense approvers of the fault harness: bob, carol and dave, each answering their inbox.

Each approver reads `inbox:<principal>` (the `thread` query) and answers every open item whose
chain's flow has said what it wants, one item at a time, through the decision API
(`POST /interrupts/{interruptId}`, as `X-Principal`, dev auth): the way the product's own
approvers answer (the web inbox's task list, `ag-ui-temporal approvals`, decision links).
Items reach an inbox whenever chains offer them: the thread delivers each as it arrives, with
the whole awaiting batch again (a run of its own), so a chat resume of everything an approver
read could be overtaken by a new item (`PARTIAL_RESUME`). A decision names its one item, and
whatever arrives meanwhile waits for the next round.
A decision is re-sent unchanged through faults (a transport error, a `503`), like every flow's
run: its run id is derived from the decision, so the product must neither take it twice nor
refuse the repeat; any other refusal (`{"code", "message"}`) is a flow error.
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
from ag_ui_temporal.workflows.contract.chains import APPROVAL_METADATA_KEY, inbox_thread
from tests.faults.flows import FIRST_BACKOFF, MAX_BACKOFF, FlowError, Stats, post_run

APPROVERS = ("bob", "carol", "dave")
POLL = 0.2


@dataclass
class Inboxes:
    """The approvers' loops and the decision each chain is to get."""

    http: httpx.AsyncClient
    client: Client
    stats: Stats
    decisions: dict[str, str] = field(default_factory=dict)
    """Chain id -> `approve` or `reject`, set by the chain's flow once it is submitted."""
    runs: int = 0
    """Runs the approvers started: decisions (each a run of the inbox) and empty runs."""
    answered: int = 0
    errors: list[str] = field(default_factory=list)

    def expect(self, chain_id: str, decision: str) -> None:
        self.decisions[chain_id] = decision

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
                if (payload := self._answer(item.interrupt)) is not None:
                    await self._decide(principal, item.id, payload)
                    self.answered += 1
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

    def _answer(self, interrupt: dict[str, Any]) -> dict[str, Any] | None:
        """The payload the item's chain is to get (None: its flow has not said yet)."""
        metadata = interrupt.get("metadata") or {}
        chain = (metadata.get(APPROVAL_METADATA_KEY) or {}).get("chainId")
        decision = self.decisions.get(chain or "")
        return None if decision is None else {"decision": decision}

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
