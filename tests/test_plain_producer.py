"""A producer on a plain `Client.connect()` (no codec, temporalio's default converter) pauses
in a thread and gets a 100 KiB answer given through the gateway, confirmed against the
thread's record; the thread's own payloads stay compressed (`payloads.Compression`
deflates only payloads to and from threads).

The answer is over the gateway's default `MAX_PAYLOAD_BYTES` (64 KiB), so this gateway takes
up to 128 KiB; every other limit is the default (its strings are under `MAX_STRING_LENGTH`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from ag_ui_temporal.payloads import ZLIB
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    CONFIRM_SETTLED_ACTIVITY,
    INTERRUPT_SETTLED_SIGNAL,
    OFFER_INTERRUPT_SIGNAL,
    InterruptSettled,
    thread_workflow_id,
)
from tests.agui import finished, resolve, run
from tests.conftest import serve_gateway
from tests.plain_producer import (
    PlainAsk,
    PlainOrderWorkflow,
    PlainOutcome,
    build_plain_worker,
    digest,
    large_answer,
    plain_client,
)
from tests.test_producers import delivered, hydrate, until

ANSWER_BYTES = 100 << 10
GATEWAY_PAYLOAD_LIMIT = 128 << 10
HEARD_WITHIN = 120.0
"""Seconds an owner may take to hear its answer: a bound on a wait that must end (an owner
that dropped its answer would wait a day, for its expiry), not a timed assertion."""


@pytest.fixture(scope="module")
async def plain(temporal_env: Any) -> Client:
    target = temporal_env.client.service_client.config.target_host
    return await plain_client(target, temporal_env.client.namespace)


@pytest.fixture(scope="module")
def plain_queue() -> str:
    return f"plain-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
async def plain_worker(plain: Client, plain_queue: str) -> AsyncIterator[Worker]:
    async with build_plain_worker(plain, plain_queue) as worker:
        yield worker


@pytest.fixture(scope="module")
async def roomy(settings: Settings, client: Client, worker: Worker) -> AsyncIterator[str]:
    """The gateway, taking resume payloads up to 128 KiB of JSON."""
    roomy = settings.model_copy(update={"max_payload_bytes": GATEWAY_PAYLOAD_LIMIT})
    async with serve_gateway(roomy, client) as url:
        yield url


@pytest.fixture
async def http(roomy: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=roomy, timeout=60) as http:
        yield http


async def start(
    plain: Client, settings: Settings, queue: str, thread_id: str, owner: str
) -> WorkflowHandle[PlainOrderWorkflow, PlainOutcome]:
    ask = PlainAsk(
        order_id=thread_id,
        thread_id=thread_id,
        thread_task_queue=settings.task_queue,
        thread_owner=owner,
    )
    return await plain.start_workflow(
        PlainOrderWorkflow.run, ask, id=f"plain-order-{uuid.uuid4().hex[:12]}", task_queue=queue
    )


async def heard(order: WorkflowHandle[PlainOrderWorkflow, PlainOutcome]) -> PlainOutcome:
    """The owner's result, once it heard its answer."""
    try:
        async with asyncio.timeout(HEARD_WITHIN):
            return await order.result()
    except TimeoutError:
        raise AssertionError(f"{order.id} never heard its answer") from None


def encodings(payloads: list[Payload]) -> list[bytes]:
    return [p.metadata["encoding"] for p in payloads]


def signaled(events: list[HistoryEvent], name: str) -> list[Payload]:
    attributes = [
        e.workflow_execution_signaled_event_attributes
        for e in events
        if e.HasField("workflow_execution_signaled_event_attributes")
    ]
    return [p for a in attributes if a.signal_name == name for p in a.input.payloads]


def run_requests(events: list[HistoryEvent]) -> list[Payload]:
    """The inputs of the updates the thread accepted (the gateway's runs)."""
    accepted = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request
        for e in events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    return [p for request in accepted for p in request.input.args.payloads]


def activity_results(events: list[HistoryEvent], activity: str) -> list[Payload]:
    """The results of the owner's `activity` calls, in order."""
    scheduled = {
        e.event_id
        for e in events
        if e.HasField("activity_task_scheduled_event_attributes")
        and e.activity_task_scheduled_event_attributes.activity_type.name == activity
    }
    return [
        p
        for e in events
        if e.HasField("activity_task_completed_event_attributes")
        and e.activity_task_completed_event_attributes.scheduled_event_id in scheduled
        for p in e.activity_task_completed_event_attributes.result.payloads
    ]


def confirmed(events: list[HistoryEvent]) -> int:
    return len(activity_results(events, CONFIRM_SETTLED_ACTIVITY))


async def owner_history(
    plain: Client, workflow_id: str, check: Callable[[list[HistoryEvent]], bool]
) -> list[HistoryEvent]:
    """The owner's history, once `check` holds for it (polled: states, not timing)."""
    handle = plain.get_workflow_handle(workflow_id)
    for _ in range(600):
        events = [e async for e in handle.fetch_history_events()]
        if check(events):
            return events
        await asyncio.sleep(0.05)
    raise AssertionError(f"{workflow_id}'s history never reached the expected state")


async def test_a_producer_on_a_plain_client_gets_a_100_kib_answer(
    http: httpx.AsyncClient,
    client: Client,
    plain: Client,
    plain_worker: Worker,
    plain_queue: str,
    settings: Settings,
    thread_id: str,
):
    owner = f"owner-{thread_id}"
    order = await start(plain, settings, plain_queue, thread_id, owner)
    await until(client, thread_id, delivered(1))
    [question] = (await hydrate(http, thread_id, **{"X-Principal": owner}))["interrupts"]["pending"]
    answer = large_answer(ANSWER_BYTES)
    assert len(json.dumps(answer)) > Settings().max_payload_bytes  # why this gateway is roomy
    done = await run(http, thread_id, agent="inbox", principal=owner,
                     resume=[resolve(question, answer)])  # fmt: skip
    assert finished(done)["outcome"] == {"type": "success"}

    outcome = await heard(order)
    assert (outcome.status, outcome.speed) == ("resolved", "express")
    assert (outcome.notes_chars, outcome.digest) == (ANSWER_BYTES, digest(answer))
    assert (outcome.principal, outcome.via) == (owner, "chat")  # who answered, and how

    # The owner's history: what the thread sent it is plain JSON, large as it is (the
    # settlement, and the thread's record it confirmed it against).
    owner_events = await owner_history(plain, order.id, lambda events: True)
    [settled] = signaled(owner_events, INTERRUPT_SETTLED_SIGNAL)
    [record] = activity_results(owner_events, CONFIRM_SETTLED_ACTIVITY)
    assert encodings([settled, record]) == [b"json/plain", b"json/plain"]
    assert min(settled.ByteSize(), record.ByteSize()) > ANSWER_BYTES
    kept = InterruptSettled.model_validate_json(record.data)
    assert (kept.principal, kept.payload) == (owner, answer)

    # The thread's history: the offer and the run that carried the answer, deflated.
    thread = client.get_workflow_handle(thread_workflow_id(thread_id))
    thread_events = [e async for e in thread.fetch_history_events()]
    [offer] = signaled(thread_events, OFFER_INTERRUPT_SIGNAL)  # about 2 KiB of JSON
    [resume] = [p for p in run_requests(thread_events) if p.ByteSize() > 1024]
    assert encodings([offer, resume]) == [ZLIB, ZLIB]
    assert resume.ByteSize() < ANSWER_BYTES


async def test_a_forged_settlement_does_not_count_on_a_plain_client(
    http: httpx.AsyncClient,
    client: Client,
    plain: Client,
    plain_worker: Worker,
    plain_queue: str,
    settings: Settings,
    thread_id: str,
):
    owner = f"owner-{thread_id}"
    order = await start(plain, settings, plain_queue, thread_id, owner)
    await until(client, thread_id, delivered(1))
    [question] = (await hydrate(http, thread_id, **{"X-Principal": owner}))["interrupts"]["pending"]
    forged = InterruptSettled(
        interrupt_id=question["id"],
        thread_id=thread_id,
        status="resolved",
        payload={"speed": "standard", "notes": ["forged"]},
    )
    await order.signal(INTERRUPT_SETTLED_SIGNAL, forged.model_dump(mode="json"))
    await owner_history(plain, order.id, lambda events: confirmed(events) == 1)  # dropped
    answer = large_answer(8 << 10)
    done = await run(http, thread_id, agent="inbox", principal=owner,
                     resume=[resolve(question, answer)])  # fmt: skip
    assert finished(done)["outcome"] == {"type": "success"}
    outcome = await heard(order)
    assert (outcome.speed, outcome.digest) == ("express", digest(answer))  # not the forgery
    assert (outcome.principal, outcome.via) == (owner, "chat")
    owner_events = await owner_history(plain, order.id, lambda events: True)
    confirmations = activity_results(owner_events, CONFIRM_SETTLED_ACTIVITY)
    assert encodings(confirmations) == [b"binary/null", b"json/plain"]  # None, then the record
