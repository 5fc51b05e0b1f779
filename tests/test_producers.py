"""External producers: any workflow pauses in a chat thread.

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

from ag_ui_temporal.examples.orders import (
    OrderInput,
    OrderResult,
    OrderWorkflow,
    build_examples_worker,
)
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    REFUSED_METADATA_KEY,
    THREAD_WORKFLOW,
    InterruptSettled,
    InterruptStatus,
    InterruptView,
    OfferRefusal,
    ThreadView,
    offer_refusal,
    thread_input,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.thread.agents.inbox import NOTHING_WAITS
from tests.agui import (
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
    """`count` owners' interrupts wait, undelivered (an agent's own interrupts await an
    answer, or an inbox's batch is full)."""
    return lambda state: (
        len([r for r in owned(state) if r.status == InterruptStatus.OFFERED]) >= count
    )


def delivered(count: int) -> Callable[[ThreadView], bool]:
    """`count` owners' interrupts are open: a run delivered them."""
    return lambda state: len([r for r in owned(state) if r.status == InterruptStatus.OPEN]) >= count


def withdrawn(count: int) -> Callable[[ThreadView], bool]:
    """`count` owners' interrupts were taken back by their owners."""
    return lambda state: (
        len([r for r in owned(state) if r.status == InterruptStatus.WITHDRAWN]) >= count
    )


async def hydrate(
    http: httpx.AsyncClient, thread_id: str, agent: str = "inbox", **headers: str
) -> dict[str, Any]:
    """What TanStack's `ChatClient` (`persistence: true`) reads on page load."""
    response = await http.get(f"/agents/{agent}", params={"threadId": thread_id}, headers=headers)
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def test_inbox_says_plainly_that_nothing_waits(http: httpx.AsyncClient, thread_id: str):
    events = await run(http, thread_id, agent="inbox")
    assert finished(events)["outcome"] == {"type": "success"}
    assert texts(events) == NOTHING_WAITS


async def test_order_answered_in_chat_while_the_owner_worker_is_down(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id, order_id="42")
        state = await until(client, thread_id, delivered(1))
    assert state.agent == "inbox"  # the producer created the thread for the inbox
    # The thread delivered the offer by a run of its own as it arrived: a client that has
    # never seen the thread hydrates it, bound to that run, before sending anything.
    [own] = state.runs
    assert own.finished and own.parent_run_id is None
    shown = await hydrate(http, thread_id)
    assert shown["interrupts"]["runId"] == own.run_id and shown["activeRun"] is None
    [question] = shown["interrupts"]["pending"]
    assert question["reason"] == "input_required" and "order 42" in question["message"]
    assert question["responseSchema"]["required"] == ["speed"]
    assert question["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] == own.run_id
    # A run that brings nothing (a client that "fetches") gets it again, bound to itself...
    first = await run(http, thread_id, agent="inbox")
    [again] = interrupts(first)
    assert again["id"] == question["id"]
    binding = again["metadata"]["tanstack:interruptBinding"]
    assert binding["interruptedRunId"] == first[0]["runId"]
    assert (await hydrate(http, thread_id))["interrupts"]["runId"] == first[0]["runId"]
    # ...while new input is still refused until it is answered.
    busy = error(await run(http, thread_id, agent="inbox", text="anything else?"))
    assert busy["code"] == "RESUME_REQUIRED"
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
    assert (result.decided_by, result.via) == ("anonymous", "chat")  # dev auth, no X-Principal
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
        await until(client, thread_id, delivered(1))
        shown = (await hydrate(http, thread_id))["interrupts"]
        [question] = shown["pending"]  # delivered by the thread's own run: no client run
        result = await order.result()  # the owner's own timer
        assert (result.status, result.decided_by, result.via) == ("expired", None, None)
        await until(client, thread_id, lambda s: owned(s)[0].status == InterruptStatus.EXPIRED)
    assert owned(await thread_state(client, thread_id))[0].lapsed  # settled: it blocks nothing
    assert (await hydrate(http, thread_id))["interrupts"] is None
    news = await run(http, thread_id, agent="inbox", text="anything else?")  # no cancel first
    assert finished(news)["outcome"] == {"type": "success"}
    late = error(
        await run(http, thread_id, agent="inbox", resume=[resolve(question, {"speed": "standard"})])
    )
    assert late["code"] == "INTERRUPT_EXPIRED"
    [item] = late["metadata"]["tanstack"]["interruptErrors"]
    assert (item["code"], item["interruptedRunId"]) == ("expired", shown["runId"])
    acknowledged = await run(http, thread_id, agent="inbox", resume=[cancel(question)])
    assert finished(acknowledged)["outcome"] == {"type": "success"}


async def test_two_owners_and_the_agent_in_one_thread(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        # The thread belongs to the assistant; two orders pause in it while its own
        # approval awaits an answer: they wait, offered, behind it.
        await run(http, thread_id, text="hello")
        asked = await run(http, thread_id, text=EMAIL)
        [email] = interrupts(asked)
        first = await start_order(
            client, settings, owner_queue, thread_id, order_id="A", agent="assistant"
        )
        second = await start_order(
            client, settings, owner_queue, thread_id, order_id="B", agent="assistant"
        )
        await until(client, thread_id, offered(2))
        shown = (await hydrate(http, thread_id, agent="assistant"))["interrupts"]
        assert [i["id"] for i in shown["pending"]] == [email["id"]]
        assert shown["runId"] == asked[0]["runId"]
        # A run that brings nothing delivers them with the email: one batch, bound to it.
        fetched = await run(http, thread_id)
        items = interrupts(fetched)
        assert len(items) == 3
        assert {i["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] for i in items} == {
            fetched[0]["runId"]
        }
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


async def test_an_offer_next_to_an_open_one_is_one_batch_a_client_answers_whole(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    """B reaches the inbox while A awaits: the thread's own run delivers both at once, bound
    to itself (tests/test_inbox_batch.py). A client that shows only A (it hydrated before B
    came) cannot answer A alone: an AG-UI resume is never partial, so it gets
    `PARTIAL_RESUME` naming B, and nothing changes; one resume of both settles both."""
    async with owner_worker(client, owner_queue):
        first = await start_order(client, settings, owner_queue, thread_id, order_id="A")
        [own] = (await until(client, thread_id, delivered(1))).runs
        [order_a] = (await hydrate(http, thread_id))["interrupts"]["pending"]
        assert "order A" in order_a["message"]
        second = await start_order(client, settings, owner_queue, thread_id, order_id="B")
        state = await until(client, thread_id, delivered(2))
        earlier, batch = state.runs  # B's arrival: a run of the thread's own
        assert earlier.run_id == own.run_id
        assert batch.finished and batch.parent_run_id is None
        awaiting_a, awaiting_b = state.awaiting  # A moved along to the batch's run
        assert awaiting_a.id == order_a["id"]
        assert (awaiting_a.run_id, awaiting_b.run_id) == (batch.run_id, batch.run_id)
        order_b_id = awaiting_b.id
        # The client still showing A alone answers it: refused, whole batch named.
        partial = error(
            await run(
                http, thread_id, agent="inbox", resume=[resolve(order_a, {"speed": "express"})]
            )
        )
        assert partial["code"] == "PARTIAL_RESUME"
        [missing] = partial["metadata"]["tanstack"]["interruptErrors"]
        assert (missing["scope"], missing["interruptIds"]) == ("batch", [order_b_id])
        assert missing["interruptedRunId"] == batch.run_id  # the binding to resume against
        assert await thread_state(client, thread_id) == state  # A is still open, B too
        # It hydrates again (the batch, bound to the latest run) and answers both at once.
        shown = (await hydrate(http, thread_id))["interrupts"]
        assert shown["runId"] == batch.run_id
        assert [i["id"] for i in shown["pending"]] == [order_a["id"], order_b_id]
        order_b = shown["pending"][1]
        assert "order B" in order_b["message"]
        done = await run(
            http,
            thread_id,
            agent="inbox",
            parent_run_id=batch.run_id,
            resume=[
                resolve(order_a, {"speed": "express"}),
                resolve(order_b, {"speed": "standard"}),
            ],
        )
        assert finished(done)["outcome"] == {"type": "success"}
        a, b = await first.result(), await second.result()
    assert (a.speed, a.decided, b.speed, b.decided) == ("express", "thread", "standard", "thread")
    settled = (await thread_state(client, thread_id)).interrupts
    assert [(r.status, r.resolved_by_run, r.resolved_via) for r in settled] == [
        (InterruptStatus.RESOLVED, done[0]["runId"], "chat")
    ] * 2


async def test_withdrawn_interrupt_leaves_the_thread(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    async with owner_worker(client, owner_queue):
        order = await start_order(client, settings, owner_queue, thread_id)
        await until(client, thread_id, delivered(1))
        [question] = (await hydrate(http, thread_id))["interrupts"]["pending"]
        await order.signal(OrderWorkflow.decided_elsewhere, "standard")
        result = await order.result()
        assert (result.status, result.speed, result.decided) == ("shipped", "standard", "elsewhere")
        assert (result.decided_by, result.via) == (None, None)  # withdrawn: nobody answered
        await until(client, thread_id, lambda s: owned(s)[0].status == InterruptStatus.WITHDRAWN)
    assert (await hydrate(http, thread_id))["interrupts"] is None  # gone from the inbox
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


async def test_an_offer_withdrawn_from_the_batch_leaves_the_rest_to_answer_alone(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    """Order 7 is delivered next to order 6, then decided elsewhere: it leaves the batch
    without a run (nothing new to show), so order 6 alone is the whole batch: a resume of it
    is complete, and that run streams what order 7's owner posted."""
    async with owner_worker(client, owner_queue):
        first = await start_order(client, settings, owner_queue, thread_id, order_id="6")
        await until(client, thread_id, delivered(1))
        order = await start_order(client, settings, owner_queue, thread_id, order_id="7")
        state = await until(client, thread_id, delivered(2))  # with order 6, at once
        batch = state.runs[-1]
        await order.signal(OrderWorkflow.decided_elsewhere, "express")
        assert (await order.result()).decided == "elsewhere"
        state = await until(client, thread_id, withdrawn(1))
        assert state.runs[-1] == batch  # a withdrawal starts no run
        assert [(r.run_id, r.status) for r in state.interrupts] == [
            (batch.run_id, InterruptStatus.OPEN),
            (batch.run_id, InterruptStatus.WITHDRAWN),
        ]
        shown = (await hydrate(http, thread_id))["interrupts"]
        assert shown["runId"] == batch.run_id
        [order_6] = shown["pending"]  # order 7 is gone from the inbox
        assert "order 6" in order_6["message"]
        events = await run(
            http,
            thread_id,
            agent="inbox",
            parent_run_id=batch.run_id,
            resume=[resolve(order_6, {"speed": "standard"})],
        )
        result = await first.result()
    assert finished(events)["outcome"] == {"type": "success"}  # order 7 never shows again
    assert "Order 7 shipped (express)." in texts(events)
    assert (result.speed, result.decided) == ("standard", "thread")


async def test_an_offer_withdrawn_while_the_batch_is_full_never_reaches_the_client(
    http: httpx.AsyncClient, client: Client, settings: Settings, owner_queue: str, thread_id: str
):
    """An inbox delivers at most `max_interrupts_per_run` at once (here one): order 7 waits,
    offered, for room next to order 6, and is withdrawn before it gets any: no run ever
    delivers it, and the run that answers order 6 streams what its owner posted instead."""
    one = settings.model_copy(update={"max_interrupts_per_run": 1})
    await client.start_workflow(
        THREAD_WORKFLOW,
        thread_input(one, "inbox", thread_id),
        id=thread_workflow_id(thread_id),
        task_queue=settings.task_queue,
    )
    async with owner_worker(client, owner_queue):
        first = await start_order(client, settings, owner_queue, thread_id, order_id="6")
        await until(client, thread_id, delivered(1))
        order = await start_order(client, settings, owner_queue, thread_id, order_id="7")
        state = await until(client, thread_id, offered(1))  # no room next to order 6
        [own] = state.runs
        await order.signal(OrderWorkflow.decided_elsewhere, "express")
        await order.result()
        state = await until(client, thread_id, withdrawn(1))
        assert state.runs == [own]  # never delivered: no run
        [order_6] = (await hydrate(http, thread_id))["interrupts"]["pending"]
        events = await run(
            http, thread_id, agent="inbox", resume=[resolve(order_6, {"speed": "standard"})]
        )
        await first.result()
    assert finished(events)["outcome"] == {"type": "success"}  # order 7 never shows
    assert "Order 7 shipped (express)." in texts(events)


def test_an_owner_reads_a_refused_offer_under_the_servers_own_key():
    """Refusals are under `ag-ui-temporal:refused`, never AG-UI's reserved `ag-ui` key. A
    client's cancel is never taken for one, whatever it sent."""

    def cancelled(metadata: dict[str, Any] | None, **fields: Any) -> InterruptSettled:
        return InterruptSettled(
            interrupt_id="int-1", thread_id="t", status="cancelled", metadata=metadata, **fields
        )

    new = cancelled({REFUSED_METADATA_KEY: {"code": "LIMIT_EXCEEDED", "message": "full"}})
    old = cancelled({"ag-ui": {"refused": "INVALID_OFFER", "message": "no message"}})
    assert offer_refusal(new) == OfferRefusal(code="LIMIT_EXCEEDED", message="full")
    assert offer_refusal(old) is None  # the protocol's namespace: no server writes there
    # a client's cancel carries its run (and may carry keys of ours in its metadata)
    forged = cancelled(new.metadata, run_id="run-1", principal="mallory", via="chat")
    assert offer_refusal(forged) is None
    for status in ("resolved", "expired"):
        assert offer_refusal(new.model_copy(update={"status": status})) is None
    malformed: list[dict[str, Any] | None] = [
        None,
        {},
        {REFUSED_METADATA_KEY: "LIMIT_EXCEEDED"},
        {"ag-ui": {}},
    ]
    for metadata in malformed:
        assert offer_refusal(cancelled(metadata)) is None
