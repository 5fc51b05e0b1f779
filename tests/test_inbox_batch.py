"""An inbox shows every waiting item at once.

An offer that reaches an inbox while other items await an answer makes the thread start a
run of its own that delivers the awaiting batch again, bound to itself, with the new offer:
the latest run's `RUN_FINISHED` (and a hydrate) lists everything that waits, up to
`max_interrupts_per_run`; the rest wait for the next such run. (An agent's thread keeps
offers behind its own interrupts: tests/test_producers.py.)
"""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    OFFER_INTERRUPT_SIGNAL,
    THREAD_WORKFLOW,
    WITHDRAW_INTERRUPT_SIGNAL,
    InterruptStatus,
    ThreadView,
    WithdrawInterrupt,
    thread_input,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import inbox_thread
from tests.agui import STREAMS, finished, interrupts, parse_sse, resolve, run
from tests.test_offer_delivery import raw_offer
from tests.test_partial_resume import answer, decide, refused
from tests.test_producers import delivered, hydrate, owner_worker, start_order, until


@pytest.fixture
def owner_queue() -> str:
    return f"owners-{uuid.uuid4().hex[:8]}"


async def joined(http: httpx.AsyncClient, thread_id: str, run_id: str, principal: str) -> Any:
    """A finished run's events, read back as any client joins a run."""
    params = {"runId": run_id, "threadId": thread_id, "offset": "-1"}
    response = await http.get("/agents/inbox", params=params, headers={"X-Principal": principal})
    assert response.status_code == 200, response.text
    events = parse_sse(response.text)
    STREAMS.append(events)
    return events


def status_of(interrupt_id: str, status: InterruptStatus) -> Any:
    return lambda state: any(r.id == interrupt_id and r.status == status for r in state.interrupts)


async def test_offers_arriving_one_by_one_are_shown_together(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str
):
    """Three orders ask dana one after another, each while the earlier ones await her: each
    arrival is a run of the thread's own, and the last one shows all three."""
    dana = f"dana-{uuid.uuid4().hex[:6]}"
    inbox = inbox_thread(dana)
    tag = uuid.uuid4().hex[:4]
    async with owner_worker(client, owner_queue):
        orders = []
        for n in range(3):
            orders.append(
                await start_order(client, settings, owner_queue, inbox, order_id=f"{tag}-{n}")
            )
            state = await until(client, inbox, delivered(n + 1))
        assert [r.finished for r in state.runs] == [True] * 3  # one run per arrival
        shown = [interrupts(await joined(http, inbox, r.run_id, dana)) for r in state.runs]
        assert [len(batch) for batch in shown] == [1, 2, 3]
        latest = state.runs[-1].run_id
        items = shown[-1]
        assert [f"order {tag}-{n}" in i["message"] for n, i in enumerate(items)] == [True] * 3
        bindings = {i["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] for i in items}
        assert bindings == {latest}
        assert [r.run_id for r in state.awaiting] == [latest] * 3
        hydrated = (await hydrate(http, inbox, **{"X-Principal": dana}))["interrupts"]
        assert hydrated["runId"] == latest
        assert [i["id"] for i in hydrated["pending"]] == [i["id"] for i in items]
        # one resume answers the batch, as any AG-UI client sends it
        done = await run(
            http,
            inbox,
            agent="inbox",
            principal=dana,
            parent_run_id=latest,
            resume=[resolve(i, {"speed": "express"}) for i in items],
        )
        assert finished(done)["outcome"] == {"type": "success"}
        results = [await order.result() for order in orders]
    assert [(r.status, r.speed, r.decided) for r in results] == [
        ("shipped", "express", "thread")
    ] * 3


async def test_a_batch_holds_max_interrupts_per_run_and_the_rest_wait(
    client: Client, settings: Settings
):
    """Two per run: a third offer waits (offered, unknown to a resume) until the batch has
    room again: a withdrawal frees it (the thread's own run), and so does a decision (its run
    delivers it, with the rest of the batch)."""
    erin = f"erin-{uuid.uuid4().hex[:6]}"
    inbox = inbox_thread(erin)
    offers = [raw_offer(f"owner-{n}-{erin}", f"question {n}") for n in range(4)]
    ids = [offer["interrupt"]["id"] for offer in offers]
    two = settings.model_copy(update={"max_interrupts_per_run": 2})
    handle = await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(two, "inbox", inbox),
        id=thread_workflow_id(inbox),
        task_queue=settings.task_queue,
        start_signal=OFFER_INTERRUPT_SIGNAL,
        start_signal_args=[offers[0]],
    )
    await until(client, inbox, status_of(ids[0], InterruptStatus.OPEN))
    await handle.signal(OFFER_INTERRUPT_SIGNAL, offers[1])
    state = await until(client, inbox, status_of(ids[1], InterruptStatus.OPEN))
    assert _batch(state) == (ids[:2], state.runs[-1].run_id) and len(state.runs) == 2
    await handle.signal(OFFER_INTERRUPT_SIGNAL, offers[2])
    state = await until(client, inbox, status_of(ids[2], InterruptStatus.OFFERED))
    assert len(state.runs) == 2  # no room: no run
    assert await refused(client, inbox, erin, answer(ids[2], "?")) == "UNKNOWN_INTERRUPT_ID"
    # the first one is withdrawn: the thread's own run shows the other two
    withdrawal = WithdrawInterrupt(owner_workflow_id=f"owner-0-{erin}", interrupt_id=ids[0])
    await handle.signal(WITHDRAW_INTERRUPT_SIGNAL, withdrawal.model_dump(mode="json"))
    state = await until(client, inbox, status_of(ids[2], InterruptStatus.OPEN))
    assert len(state.runs) == 3 and _batch(state) == (ids[1:3], state.runs[-1].run_id)
    # a fourth waits; a decision on one of the batch delivers it, with the other
    await handle.signal(OFFER_INTERRUPT_SIGNAL, offers[3])
    await until(client, inbox, status_of(ids[3], InterruptStatus.OFFERED))
    decided = await decide(client, inbox, erin, answer(ids[1], cancel=True), via="link")
    done = finished(decided.events)
    assert [i["id"] for i in done["outcome"]["interrupts"]] == [ids[2], ids[3]]
    state = await until(client, inbox, status_of(ids[1], InterruptStatus.CANCELLED))
    assert _batch(state) == ([ids[2], ids[3]], done["runId"])
    [cancelled] = [r for r in state.interrupts if r.id == ids[1]]
    assert (cancelled.resolved_via, cancelled.resolved_by) == ("link", erin)


def _batch(state: ThreadView) -> tuple[list[str], str]:
    """The awaiting interrupts and the one run they are all bound to."""
    runs = {r.run_id for r in state.awaiting}
    assert len(runs) == 1, runs
    return [r.id for r in state.awaiting], runs.pop()
