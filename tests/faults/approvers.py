"""The expense approvers of the fault harness: bob, carol and dave, each answering their inbox.

Each approver is a client of the gateway (`X-Principal`, dev auth) on `inbox:<principal>`:
the thread delivers a chain's item as it arrives (a run of its own), or with the run that
answers the items before it; one resume answers every open item (the contract asks for all
of them at once) with the decision its chain's flow wants.
Posts are re-sent unchanged through faults, like every flow's. erin (finance's third seat)
never answers: the quorum of two decides without her.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from temporalio.client import Client

from ag_ui_temporal.workflows.contract import (
    THREAD_QUERY,
    InterruptStatus,
    ThreadView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import APPROVAL_METADATA_KEY, inbox_thread
from tests.faults.flows import FlowError, Stats, post_run

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
            answers = [a for i in open_ if (a := self._answer(i.interrupt)) is not None]
            if len(answers) == len(open_):  # else: a chain its flow has not seen yet
                await self._post(principal, resume=answers)
                self.answered += len(answers)
        elif any(i.status == InterruptStatus.OFFERED for i in items):
            # offered with nothing open: the thread should have delivered it on arrival
            self.errors.append(f"{inbox_thread(principal)}: an offer was left undelivered")
            await self._post(principal)  # a run that brings nothing delivers it

    async def _items(self, principal: str) -> list[Any]:
        handle = self.client.get_workflow_handle(thread_workflow_id(inbox_thread(principal)))
        try:
            view = await handle.query(THREAD_QUERY, result_type=ThreadView)
        except Exception:  # no inbox yet, or the server or workers are down: next round
            return []
        return [i for i in view.interrupts
                if i.status in (InterruptStatus.OPEN, InterruptStatus.OFFERED)]  # fmt: skip

    def _answer(self, interrupt: dict[str, Any]) -> dict[str, Any] | None:
        metadata = interrupt.get("metadata") or {}
        chain = (metadata.get(APPROVAL_METADATA_KEY) or {}).get("chainId")
        decision = self.decisions.get(chain or "")
        if decision is None:
            return None
        payload = {"decision": decision}
        return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}

    async def _post(self, principal: str, resume: list[dict[str, Any]] | None = None) -> None:
        thread = inbox_thread(principal)
        body: dict[str, Any] = {"threadId": thread, "runId": f"run-{uuid.uuid4().hex[:12]}"}
        body["messages"] = []
        if resume is not None:
            body["resume"] = resume
        self.runs += 1
        events = await post_run(self.http, body, self.stats, agent="inbox", principal=principal)
        outcome = events[-1].get("outcome") or {}
        if outcome.get("type") not in ("success", "interrupt"):
            raise FlowError(f"inbox run ended with {outcome}")
