"""Offers are visible without a run.

When a producer's offer arrives and nothing else awaits an answer, the thread delivers it
by a run of its own (its own run id, ending with the interrupt outcome): a hydrate shows it
bound to that run, so a stock TanStack `ChatClient` with `persistence: true` can resolve it
on page load, without sending anything first.
"""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import (
    OFFER_INTERRUPT_SIGNAL,
    THREAD_WORKFLOW,
    InterruptStatus,
    OfferInterrupt,
    ThreadInput,
    thread_input,
    thread_workflow_id,
)
from tests.agui import STREAMS, cancel, error, finished, interrupts, parse_sse, resolve, run, types
from tests.gateway.threads import wait_for_new_run
from tests.node_clients import requires_node, run_node, streams_of
from tests.test_producers import delivered, hydrate, owner_worker, start_order, until

SPEED = {"speed": "express"}


@pytest.fixture
def owner_queue() -> str:
    return f"owners-{uuid.uuid4().hex[:8]}"


@requires_node
async def test_tanstack_chat_client_resolves_an_inbox_offer_on_page_load(
    gateway_url: str, client: Client, settings: Settings, owner_queue: str
):
    """carol opens her inbox: the hydrate alone shows the order's question, she answers it,
    and the order (the owner workflow) settles with her answer."""
    carol = f"carol-{uuid.uuid4().hex[:6]}"
    inbox = f"inbox:{carol}"
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, inbox, order_id="42")
        state = await until(client, inbox, delivered(1))
        [own] = state.runs  # the thread's own run delivered it
        result = await run_node(
            "tanstack_chat.mjs",
            {
                "url": f"{gateway_url}/agents/inbox",
                "threadId": inbox,
                "persistence": True,
                "headers": {"X-Principal": carol},
                "steps": [{"attach": True}, {"resolve": [{"index": 0, "payload": SPEED}]}],
            },
        )
        snapshots = result["snapshots"]
        STREAMS.extend(streams_of(snapshots))
        opened, answered = snapshots
        assert opened["stepError"] is None and answered["stepError"] is None
        # the page load is the hydrate alone: nothing was sent to fetch the inbox
        [(method, url)] = [(r["method"], r["url"]) for r in opened["requests"]]
        assert method == "GET" and "threadId=" in url and "runId=" not in url
        [item] = opened["interrupts"]
        assert (item["kind"], item["canResolve"], item["reason"]) == (
            "generic",
            True,
            "input_required",
        )
        assert "order 42" in item["message"] and item["responseSchema"]["required"] == ["speed"]
        assert item["binding"]["interruptedRunId"] == own.run_id
        # the answer: one run that resumes it
        [post] = [r for r in answered["requests"] if r["method"] == "POST"]
        assert post["body"]["resume"] == [
            {"interruptId": item["id"], "status": "resolved", "payload": SPEED}
        ]
        assert answered["error"] is None and answered["interrupts"] == []
        outcome = await order.result()
    assert (outcome.status, outcome.speed, outcome.decided) == ("shipped", "express", "thread")


async def test_the_threads_own_run_is_joined_like_any_other(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, order_id="9")
        [own] = (await until(client, thread_id, delivered(1))).runs
        params = {"runId": own.run_id, "threadId": thread_id, "offset": "-1"}
        response = await http.get("/agents/inbox", params=params)
        assert response.status_code == 200, response.text
        events = parse_sse(response.text)
        STREAMS.append(events)
        snapshots = ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT"]
        assert types(events) == ["RUN_STARTED", *snapshots, "RUN_FINISHED"]
        assert {e["runId"] for e in events if "runId" in e} == {own.run_id}
        [question] = interrupts(events)
        assert question["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] == own.run_id
        await run(http, thread_id, agent="inbox", resume=[resolve(question, SPEED)])
        assert (await order.result()).speed == "express"


def raw_offer(owner: str, message: str) -> dict[str, Any]:
    interrupt = {"id": f"int-{uuid.uuid4().hex[:12]}", "reason": "input_required"}
    offer = OfferInterrupt(owner_workflow_id=owner, interrupt={**interrupt, "message": message})
    return offer.model_dump(mode="json")


async def test_offers_arriving_together_are_delivered_by_one_run(
    client: Client, settings: Settings, executor: ThreadPoolExecutor, thread_id: str
):
    """Three offers reach a thread in one workflow task (its worker is not running yet when
    they are sent): one run of its own delivers them all, one batch."""
    queue = f"paused-{uuid.uuid4().hex[:8]}"
    paused = settings.model_copy(update={"task_queue": queue})
    offers = [raw_offer(f"owner-{i}-{thread_id}", f"question {i}") for i in range(3)]
    handle = await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(paused, "inbox", thread_id),
        id=thread_workflow_id(thread_id),
        task_queue=queue,
        start_signal=OFFER_INTERRUPT_SIGNAL,
        start_signal_args=[offers[0]],
    )
    for offer in offers[1:]:
        await handle.signal(OFFER_INTERRUPT_SIGNAL, offer)
    async with build_worker(client, paused, executor):
        state = await until(client, thread_id, delivered(3))
    [own] = state.runs
    assert own.finished
    assert [r.run_id for r in state.interrupts] == [own.run_id] * 3
    assert [r.id for r in state.interrupts] == [o["interrupt"]["id"] for o in offers]


async def test_a_delivered_offer_survives_continue_as_new(
    http: httpx.AsyncClient, client: Client, settings: Settings, thread_id: str
):
    """The thread continues as new right after its own run delivered the offer: the new run
    carries the interrupt and that run (its events too), so hydrate and join still work."""
    offer = raw_offer(f"owner-{thread_id}", "Still there?")
    handle = await client.start_workflow(
        THREAD_WORKFLOW,
        ThreadInput(thread_id=thread_id, agent="inbox", history_limit=3),
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
        start_signal=OFFER_INTERRUPT_SIGNAL,
        start_signal_args=[offer],
    )
    await wait_for_new_run(client, thread_id, handle.result_run_id)
    [own] = (await until(client, thread_id, delivered(1))).runs
    shown = (await hydrate(http, thread_id))["interrupts"]
    assert shown["runId"] == own.run_id
    assert [i["id"] for i in shown["pending"]] == [offer["interrupt"]["id"]]
    params = {"runId": own.run_id, "threadId": thread_id, "offset": "-1"}
    joined = parse_sse((await http.get("/agents/inbox", params=params)).text)
    STREAMS.append(joined)
    assert [i["id"] for i in interrupts(joined)] == [offer["interrupt"]["id"]]


async def test_an_offer_next_to_an_open_one_is_delivered_with_it_at_once(
    http: httpx.AsyncClient, client: Client, settings: Settings, thread_id: str
):
    """In an inbox, B arriving while A awaits does not wait for A's answer: the thread's own
    run delivers both, bound to itself. An answer that fails (A's owner is gone:
    `INTERRUPT_WITHDRAWN`) changes nothing else: B stays answerable, bound to that run."""
    first, second = (raw_offer(f"gone-{i}-{thread_id}", f"question {i}") for i in range(2))
    handle = await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(settings, "inbox", thread_id),
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
        start_signal=OFFER_INTERRUPT_SIGNAL,
        start_signal_args=[first],
    )
    [own] = (await until(client, thread_id, delivered(1))).runs
    await handle.signal(OFFER_INTERRUPT_SIGNAL, second)
    state = await until(client, thread_id, delivered(2))
    *_, batch = state.runs
    assert batch.run_id != own.run_id and batch.finished
    assert [r.run_id for r in state.interrupts] == [batch.run_id] * 2
    shown = (await hydrate(http, thread_id))["interrupts"]
    assert shown["runId"] == batch.run_id
    a, b = shown["pending"]
    failed = error(await run(http, thread_id, agent="inbox", resume=[resolve(a, "yes"), cancel(b)]))
    assert failed["code"] == "INTERRUPT_WITHDRAWN"
    state = await until(client, thread_id, lambda s: s.interrupts[0].status != "open")
    assert [r.status for r in state.interrupts] == [InterruptStatus.WITHDRAWN, InterruptStatus.OPEN]
    assert (await hydrate(http, thread_id))["interrupts"]["runId"] == batch.run_id
    acknowledged = await run(http, thread_id, agent="inbox", resume=[cancel(b)])
    assert finished(acknowledged)["outcome"] == {"type": "success"}
