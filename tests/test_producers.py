"""External producers: any workflow pauses in a chat thread (issue #3).

The owner (`examples.orders.OrderWorkflow`) runs on a worker and task queue of
its own, which the tests stop and start; the thread worker is the session's.
Everything goes through the real gateway over HTTP and a real dev server.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from examples.orders import OrderInput, OrderResult, OrderWorkflow, build_examples_worker
from settings import Settings
from tests.agui import (
    STREAMS,
    cancel,
    error,
    finished,
    interrupts,
    resolve,
    run,
    texts,
    thread_state,
    types,
)
from tests.node_clients import requires_node, run_node, streams_of
from workflows.agents.inbox import NOTHING_WAITS
from workflows.contract import InterruptStatus, InterruptView, ThreadView

EMAIL = "Send an email to ada@example.com saying hi"


@pytest.fixture
def owner_queue() -> str:
    return f"owners-{uuid.uuid4().hex[:8]}"


@asynccontextmanager
async def owner_worker(client: Client, queue: str) -> AsyncIterator[Worker]:
    async with build_examples_worker(client, task_queue=queue) as worker:
        yield worker


async def start_order(
    client: Client, settings: Settings, queue: str, thread_id: str, **fields: Any
) -> WorkflowHandle[OrderWorkflow, OrderResult]:
    order = OrderInput(
        order_id=fields.pop("order_id", uuid.uuid4().hex[:6]),
        thread_id=thread_id,
        thread_task_queue=settings.task_queue,
        **fields,
    )
    return await client.start_workflow(
        OrderWorkflow.run,
        order,
        id=f"order-{uuid.uuid4().hex[:12]}",
        task_queue=queue,
    )


async def until(
    client: Client, thread_id: str, check: Callable[[ThreadView], bool], seconds: float = 30
) -> ThreadView:
    """Poll the thread's query until `check` holds (states, not timing)."""
    for _ in range(int(seconds / 0.05)):
        try:
            state = await thread_state(client, thread_id)
            if check(state):
                return state
        except Exception:  # the thread does not exist yet
            pass
        await asyncio.sleep(0.05)
    raise AssertionError(f"thread {thread_id} never reached the expected state")


def owned(state: ThreadView) -> list[InterruptView]:
    return [record for record in state.interrupts if record.owner is not None]


def offered(count: int) -> Callable[[ThreadView], bool]:
    return lambda state: (
        len([r for r in owned(state) if r.status == InterruptStatus.OFFERED]) >= count
    )


async def test_inbox_says_plainly_that_nothing_waits(http: httpx.AsyncClient, thread_id: str):
    events = await run(http, thread_id, agent="inbox")
    assert finished(events)["outcome"] == {"type": "success"}
    assert texts(events) == NOTHING_WAITS


async def test_order_answered_in_chat_while_the_owner_worker_is_down(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, order_id="42")
        state = await until(client, thread_id, offered(1))
    assert state.agent == "inbox"  # the producer created the thread for the inbox
    # A client that has never seen the thread picks up what waits for it.
    first = await run(http, thread_id, agent="inbox")
    [question] = interrupts(first)
    assert question["reason"] == "input_required" and "order 42" in question["message"]
    assert question["responseSchema"]["required"] == ["speed"]
    binding = question["metadata"]["tanstack:interruptBinding"]
    assert binding["interruptedRunId"] == first[0]["runId"]
    refused = error(await run(http, thread_id, agent="inbox", resume=[resolve(question, {})]))
    assert refused["code"] == "INVALID_PAYLOAD"
    done = await run(
        http, thread_id, agent="inbox", resume=[resolve(question, {"speed": "express"})]
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == ""  # an answering run is not "nothing waits"
    async with owner_worker(client, owner_queue):  # restarted: replays, then hears the answer
        result = await order.result()
    assert (result.status, result.speed, result.decided) == ("shipped", "express", "thread")
    # The order posted "shipped": the next run streams it, and the snapshot has it.
    news = await run(http, thread_id, agent="inbox")
    assert texts(news) == "Order 42 shipped (express)."
    [snapshot] = [e for e in news if e["type"] == "MESSAGES_SNAPSHOT"]
    assert snapshot["messages"][-1]["content"] == "Order 42 shipped (express)."
    assert texts(await run(http, thread_id, agent="inbox")) == NOTHING_WAITS


async def test_late_resolve_after_the_owners_expiry(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, expires_in_seconds=2)
        await until(client, thread_id, offered(1))
        [question] = interrupts(await run(http, thread_id, agent="inbox"))
        result = await order.result()  # the owner's own timer
        assert result.status == "expired"
        await until(client, thread_id, lambda s: owned(s)[0].status == InterruptStatus.EXPIRED)
    late = error(
        await run(http, thread_id, agent="inbox", resume=[resolve(question, {"speed": "standard"})])
    )
    assert late["code"] == "INTERRUPT_EXPIRED"
    [item] = late["metadata"]["tanstack"]["interruptErrors"]
    assert item["code"] == "expired"
    acknowledged = await run(http, thread_id, agent="inbox", resume=[cancel(question)])
    assert finished(acknowledged)["outcome"] == {"type": "success"}


async def test_two_owners_and_the_agent_in_one_thread(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        # The thread belongs to the assistant; two orders pause in it too.
        await run(http, thread_id, text="hello")
        first = await start_order(
            client, settings, owner_queue, thread_id, order_id="A", agent="assistant"
        )
        second = await start_order(
            client, settings, owner_queue, thread_id, order_id="B", agent="assistant"
        )
        await until(client, thread_id, offered(2))
        asked = await run(http, thread_id, text=EMAIL)
        items = interrupts(asked)
        assert len(items) == 3
        email = next(i for i in items if i["reason"] == "tool_call")
        order_a = next(i for i in items if "order A" in i.get("message", ""))
        order_b = next(i for i in items if "order B" in i.get("message", ""))
        partial = error(await run(http, thread_id, resume=[resolve(order_a, {"speed": "express"})]))
        assert partial["code"] == "PARTIAL_RESUME"
        done = await run(
            http,
            thread_id,
            resume=[
                resolve(email, {"approved": True}),
                resolve(order_a, {"speed": "express"}),
                resolve(order_b, {"speed": "standard"}),
            ],
        )
        assert finished(done)["outcome"] == {"type": "success"}
        assert "Sent the email to ada@example.com" in texts(done)
        a, b = await first.result(), await second.result()
    assert (a.speed, b.speed) == ("express", "standard")


async def test_withdrawn_interrupt_leaves_the_thread(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id)
        await until(client, thread_id, offered(1))
        [question] = interrupts(await run(http, thread_id, agent="inbox"))
        await order.signal(OrderWorkflow.decided_elsewhere, "standard")
        result = await order.result()
        assert (result.status, result.speed, result.decided) == ("shipped", "standard", "elsewhere")
        await until(client, thread_id, lambda s: owned(s)[0].status == InterruptStatus.WITHDRAWN)
    # Not awaited any more: new input is accepted...
    news = await run(http, thread_id, agent="inbox")
    assert finished(news)["outcome"] == {"type": "success"}
    assert "shipped (standard)" in texts(news)
    # ...a resolve naming it is refused, a cancel naming it is accepted.
    stale = error(
        await run(http, thread_id, agent="inbox", resume=[resolve(question, {"speed": "express"})])
    )
    assert stale["code"] == "INTERRUPT_WITHDRAWN"
    assert stale["metadata"]["tanstack"]["interruptErrors"][0]["code"] == "stale"
    ok = await run(http, thread_id, agent="inbox", resume=[cancel(question)])
    assert types(ok)[-1] == "RUN_FINISHED"


async def test_withdrawn_before_delivery_never_reaches_the_client(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, order_id="7")
        await until(client, thread_id, offered(1))
        await order.signal(OrderWorkflow.decided_elsewhere, "express")
        await order.result()
    events = await run(http, thread_id, agent="inbox")
    assert finished(events)["outcome"] == {"type": "success"}
    assert texts(events) == "Order 7 shipped (express)."


@requires_node
async def test_tanstack_chat_client_answers_the_example_order(
    gateway_url: str, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, order_id="42")
        await until(client, thread_id, offered(1))
        result = await run_node(
            "tanstack_chat.mjs",
            {
                "url": f"{gateway_url}/agents/inbox",
                "threadId": thread_id,
                "steps": [
                    {"send": "anything for me?"},
                    {"resolve": [{"index": 0, "payload": {"speed": "express"}}]},
                ],
            },
        )
        snapshots = result["snapshots"]
        STREAMS.extend(streams_of(snapshots))
        asked, done = snapshots
        assert asked["stepError"] is None and done["stepError"] is None
        [item] = asked["interrupts"]
        assert (item["kind"], item["canResolve"]) == ("generic", True), item
        assert item["responseSchema"]["required"] == ["speed"]
        assert done["error"] is None and done["interrupts"] == []
        outcome = await order.result()
    assert (outcome.status, outcome.speed) == ("shipped", "express")
