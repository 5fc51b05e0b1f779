"""What each kind of flow does, as its real client would (tests/faults/flows.py has the kinds).

- email, edit, reject: ask the assistant to send an email, answer the tool approval (approve,
  approve with edited arguments, reject); some are held at the interrupt across a kill.
- chain-approve, chain-reject: ask the assistant to reimburse an expense, approve the tool call
  (`submitExpense` starts an `ApprovalChain`); the approvers answer in their inboxes, by the
  API or by the links their notices brought (tests/faults/approvers.py); the chain's result
  is kept for the checks.
- order: the harness starts the examples' `OrderWorkflow` (a producer on its own worker),
  which offers a shipping question in the flow's `inbox` thread; the thread delivers it by a
  run of its own, the client hydrates it (sending nothing first) and answers it there.
- plain-order: the same with `PlainOrderWorkflow`, a team's producer on a worker whose client
  is a plain `Client.connect()` (no codec), in a thread it owns: the owner answers with
  `PLAIN_ANSWER_CHARS` of notes, which the producer must receive whole.
- expiry: ask for the quarterly report form (`INPUT_EXPIRES_IN` is short), answer nothing,
  wait until it expired, then acknowledge it with a cancel as the contract asks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import httpx
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from ag_ui_temporal.demo.expenses import expense_chain_id
from ag_ui_temporal.examples.orders import OrderInput, OrderResult, order_workflow_id
from ag_ui_temporal.workflows.contract import (
    THREAD_QUERY,
    InterruptStatus,
    ThreadView,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import ChainView
from tests.faults.approvers import Inboxes
from tests.faults.chaos import Chaos
from tests.faults.flows import (
    EMAIL_KINDS,
    PLAIN_ANSWER_CHARS,
    Flow,
    FlowError,
    Stats,
    heard,
    only_interrupt,
    post_run,
    said,
)
from tests.plain_producer import PlainAsk, PlainOutcome, large_answer

T = TypeVar("T")
POLL = 0.2


@dataclass
class World:
    """What the flows share: the gateway, the chaos, the Temporal client, the approvers."""

    http: httpx.AsyncClient
    chaos: Chaos
    stats: Stats
    client: Client
    inboxes: Inboxes
    task_queue: str
    examples_queue: str
    plain_queue: str


async def retried(call: Callable[[], Awaitable[T]]) -> T:
    """A Temporal client call, retried while the server is down or a worker takes over."""
    delay = 0.05
    while True:
        try:
            return await call()
        except Exception:  # down, restarting, or a query no worker answers yet
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)


async def thread_view(client: Client, thread_id: str) -> ThreadView:
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return await retried(lambda: handle.query(THREAD_QUERY, result_type=ThreadView))


async def play(flow: Flow, world: World) -> None:
    """Run the flow to its end; a failure is recorded on the flow, not raised."""
    try:
        await asyncio.sleep(flow.start_delay)  # staggered arrivals
        if flow.kind in EMAIL_KINDS:
            await _email(flow, world)
        elif flow.kind == "order":
            await _order(flow, world)
        elif flow.kind == "plain-order":
            await _plain_order(flow, world)
        elif flow.kind == "expiry":
            await _expiry(flow, world)
        else:
            await _chain(flow, world)
        flow.phase = "done"
    except FlowError as err:
        flow.error = str(err)
        if flow.hold_for_kill is not None and flow.phase == "ask":
            await world.chaos.pause(flow.hold_for_kill)  # a failed flow must not block the chaos


async def _ask_tool(flow: Flow, world: World, text: str) -> dict[str, Any]:
    flow.phase = "ask"
    events = await post_run(
        world.http, flow.body("ask", text), world.stats, principal=flow.principal
    )
    interrupt = only_interrupt(events, "tool_call")
    flow.tool_call_id = interrupt["toolCallId"]
    return interrupt


async def _answer(flow: Flow, world: World, interrupt: dict[str, Any]) -> list[dict[str, Any]]:
    flow.phase = "approve"
    resume = {"interruptId": interrupt["id"], "status": "resolved", "payload": flow.approval()}
    body = flow.body("approve", resume=[resume])
    return await post_run(world.http, body, world.stats, principal=flow.principal)


async def _email(flow: Flow, world: World) -> None:
    interrupt = await _ask_tool(flow, world, f"Send an email to {flow.address} saying hi")
    if flow.hold_for_kill is not None:
        flow.phase = f"held for kill {flow.hold_for_kill}"
        await world.chaos.pause(flow.hold_for_kill)
        flow.held_across = await world.chaos.wait_for_kill(flow.hold_for_kill)
    else:
        await asyncio.sleep(flow.think)
    events = await _answer(flow, world, interrupt)
    if flow.sent_to is None:
        rejected = str(flow.tool_call_id)  # not run, but answered with why
        said(events, f"did not carry out the email to {flow.address}: you rejected it", [rejected])
        heard(events, rejected, "you rejected it")
    else:
        said(events, f"Sent the email to {flow.sent_to}", [str(flow.tool_call_id)])


async def _chain(flow: Flow, world: World) -> None:
    text = f"Reimburse {flow.amount} EUR for offsite {flow.thread_id}"
    interrupt = await _ask_tool(flow, world, text)
    await asyncio.sleep(flow.think)
    events = await _answer(flow, world, interrupt)
    chain_id = expense_chain_id(str(flow.tool_call_id))
    said(events, f"for approval as {chain_id}", [str(flow.tool_call_id)])
    flow.phase = "chain"
    world.inboxes.expect(chain_id, flow.decisions)
    handle = world.client.get_workflow_handle(chain_id, result_type=ChainView)
    result = await retried(handle.result)
    decisions = sorted((e.step, e.principal, e.decision) for e in result.audit
                       if e.kind == "decision")  # fmt: skip
    flow.outcome = {"status": result.status, "decisions": decisions}


async def _order(flow: Flow, world: World) -> None:
    flow.phase = "order"
    assert flow.principal is not None
    order = OrderInput(
        order_id=flow.thread_id,
        thread_id=flow.thread_id,
        thread_task_queue=world.task_queue,
        thread_owner=flow.principal,
    )
    handle = await retried(
        lambda: world.client.start_workflow(
            "OrderWorkflow",
            order,
            id=order_workflow_id(flow.thread_id),
            task_queue=world.examples_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            result_type=OrderResult,
        )
    )
    await _answer_the_owner(flow, world, {"speed": flow.speed}, reason="input_required")
    flow.outcome = (await retried(handle.result)).model_dump()


async def _answer_the_owner(
    flow: Flow, world: World, payload: dict[str, Any], reason: str | None = None
) -> None:
    """A producer's question, as its thread delivers it, answered by the flow's principal."""
    flow.phase = "deliver"  # the thread delivers the offer by a run of its own
    shown = await hydrated(world.http, flow.thread_id, flow.principal)
    flow.runs.append(shown["runId"])  # the thread's run: the client's next run follows it
    [question] = shown["pending"]
    if reason is not None and question.get("reason") != reason:
        raise FlowError(f"expected an {reason} interrupt, got {question}")
    await asyncio.sleep(flow.think)
    flow.phase = "answer"
    resume = {"interruptId": question["id"], "status": "resolved", "payload": payload}
    body = flow.body("answer", resume=[resume])
    events = await post_run(world.http, body, world.stats, "inbox", flow.principal)
    said(events, "", [])  # the owner speaks in the thread later, once it acted
    flow.phase = "owner"  # the producer must hear the whole answer


def plain_answer(flow: Flow) -> dict[str, Any]:
    """What the owner of a plain producer's thread answers (`check_outcomes` compares)."""
    return large_answer(PLAIN_ANSWER_CHARS, flow.speed)


async def _plain_order(flow: Flow, world: World) -> None:
    flow.phase = "order"
    assert flow.principal is not None
    ask = PlainAsk(
        order_id=flow.thread_id,
        thread_id=flow.thread_id,
        thread_task_queue=world.task_queue,
        thread_owner=flow.principal,
    )
    handle = await retried(
        lambda: world.client.start_workflow(
            "PlainOrderWorkflow",
            ask,
            id=f"plain-order-{flow.thread_id}",
            task_queue=world.plain_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            result_type=PlainOutcome,
        )
    )
    await _answer_the_owner(flow, world, plain_answer(flow))
    flow.outcome = asdict(await retried(handle.result))


async def hydrated(
    http: httpx.AsyncClient, thread_id: str, principal: str | None = None
) -> dict[str, Any]:
    """The thread's pending interrupts as a hydrate shows them, once it shows any (no run
    is sent to fetch them); retried while the gateway is down."""
    headers = {} if principal is None else {"X-Principal": principal}
    while True:
        try:
            response = await http.get(
                "/agents/inbox", params={"threadId": thread_id}, headers=headers
            )
            if response.status_code == 200 and (shown := response.json()["interrupts"]):
                return dict(shown)
        except httpx.HTTPError:  # the gateway is down or restarting
            pass
        await asyncio.sleep(POLL)


async def _expiry(flow: Flow, world: World) -> None:
    flow.phase = "ask"
    events = await post_run(world.http, flow.body("ask", "File the quarterly report"), world.stats)
    form = only_interrupt(events, "input_required")
    if not form.get("expiresAt"):
        raise FlowError(f"the form has no deadline: {form}")
    flow.phase = "expiring"
    while (await thread_view(world.client, flow.thread_id)).interrupts[0].status != (
        InterruptStatus.EXPIRED
    ):
        await asyncio.sleep(POLL)
    flow.phase = "acknowledge"
    cancel = {"interruptId": form["id"], "status": "cancelled"}
    events = await post_run(world.http, flow.body("acknowledge", resume=[cancel]), world.stats)
    said(events, "", [])  # acknowledged: a success that runs nothing
