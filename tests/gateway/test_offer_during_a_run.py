"""An offer that arrives while a client's run holds the thread.

The thread delivers an offer by a run of its own only when nothing else will: while a
client's run goes on (here: `sendEmail` waits at the gate), the offer waits for that run's
lock, and the run delivers it as it ends, bound to it. No run of the thread's own follows.
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
from temporalio.client import Client

from ag_ui_temporal.workflows.contract import (
    OFFER_INTERRUPT_SIGNAL,
    InterruptStatus,
    OfferInterrupt,
    ThreadView,
    thread_workflow_id,
)
from tests.agui import frames, resolve, run_body, thread_state
from tests.gateway.conftest import Stack
from tests.gateway.test_streaming import is_type, paused_email, read_until


async def offered_while_running(client: Client, thread_id: str, interrupt_id: str) -> ThreadView:
    """The thread holds the offer, undelivered, while the run is still going."""
    while True:
        state = await thread_state(client, thread_id)
        record = next((r for r in state.interrupts if r.id == interrupt_id), None)
        if record is not None:
            assert record.status == InterruptStatus.OFFERED
            return state
        await asyncio.sleep(0.05)


async def test_an_offer_during_a_run_is_delivered_by_that_run(
    gated: httpx.AsyncClient, stack: Stack, client: Client, thread_id: str
):
    pending = await paused_email(gated, thread_id)
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    interrupt = {"id": f"int-{uuid.uuid4().hex[:12]}", "reason": "input_required"}
    offer = OfferInterrupt(
        owner_workflow_id=f"owner-{thread_id}", interrupt={**interrupt, "message": "Which?"}
    )
    async with gated.stream("POST", "/agents/assistant", json=body) as response:
        stream = frames(response)
        await read_until(stream, is_type("RUN_STARTED"))
        handle = client.get_workflow_handle(thread_workflow_id(thread_id))
        await handle.signal(OFFER_INTERRUPT_SIGNAL, offer.model_dump(mode="json"))
        during = await offered_while_running(client, thread_id, interrupt["id"])
        assert [r.finished for r in during.runs] == [True, False]  # no run of its own
        stack.gate.set()
        rest = await read_until(stream, is_type("RUN_FINISHED"))
    finished = rest[-1].data
    assert finished is not None and finished["outcome"]["type"] == "interrupt"
    [delivered] = finished["outcome"]["interrupts"]
    assert delivered["id"] == interrupt["id"]
    assert delivered["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] == body["runId"]
    after = await thread_state(client, thread_id)
    assert [r.run_id for r in after.runs][-1] == body["runId"]  # still no run of its own
    assert len(after.runs) == 2
    [record] = [r for r in after.interrupts if r.id == interrupt["id"]]
    assert (record.status, record.run_id) == (InterruptStatus.OPEN, body["runId"])
