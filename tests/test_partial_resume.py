"""A decision outside the chat: a partial resume, which answers only the interrupts it names.

The gateway's decision paths (a signed link, `POST /interrupts/{id}`) send the thread's `run`
update with `partial=True` and `via`; here the tests send it with the client, as the gateway
does. Only an inbox takes it (its interrupts are independent offers); every other rule holds,
and how the answer came reaches the thread's record, the owner and a chain's audit trail.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.chains.definitions import ChainDefinition, ChainInput, ChainStep
from ag_ui_temporal.workflows.chains.workflow import ApprovalChain
from ag_ui_temporal.workflows.contract import (
    RUN_UPDATE,
    InterruptStatus,
    ResumeItem,
    RunRequest,
    RunResult,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.contract.chains import inbox_thread
from ag_ui_temporal.workflows.contract.runs import DecisionVia
from ag_ui_temporal.workflows.producers import offer_in_thread
from ag_ui_temporal.workflows.producers.owner import settled_box
from tests.agui import error, finished, interrupts, new_id, parse_sse, resolve, run, thread_state
from tests.test_producers import delivered, hydrate, until

SPEED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"speed": {"type": "string", "enum": ["standard", "express"]}},
    "required": ["speed"],
}


def answer(interrupt_id: str, payload: Any = None, *, cancel: bool = False) -> ResumeItem:
    if cancel:
        return ResumeItem(interrupt_id=interrupt_id, status="cancelled")
    return ResumeItem(
        interrupt_id=interrupt_id, status="resolved", payload=payload, has_payload=True
    )


async def decide(
    client: Client,
    thread_id: str,
    principal: str,
    *entries: ResumeItem,
    via: DecisionVia = "api",
    agent: str = "inbox",
    run_id: str | None = None,
) -> RunResult:
    """What the gateway's decision paths send: the `run` update, `partial`, as `principal`."""
    request = RunRequest(
        thread_id=thread_id,
        run_id=run_id or new_id("decision"),
        agent=agent,
        resume=list(entries),
        principal=principal,
        partial=True,
        via=via,
    )
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return await handle.execute_update(
        RUN_UPDATE, request, id=request.run_id, result_type=RunResult
    )


async def refused(client: Client, thread_id: str, principal: str, *entries: Any, **kw: Any) -> str:
    """The refusal code of a decision the thread does not take."""
    with pytest.raises(WorkflowUpdateFailedError) as failed:
        await decide(client, thread_id, principal, *entries, **kw)
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type is not None
    return cause.type


@dataclass
class Questions:
    thread_id: str
    thread_task_queue: str
    count: int


@workflow.defn(sandboxed=False)
class AsksQuestions:
    """Offers `count` questions to a thread, one after another; returns what it heard of
    each (the settlements the thread confirmed)."""

    @workflow.run
    async def run(self, ask: Questions) -> list[dict[str, Any]]:
        questions = [
            await offer_in_thread(
                ask.thread_id,
                message=f"Question {n}: how should it ship?",
                response_schema=SPEED_SCHEMA,
                thread_task_queue=ask.thread_task_queue,
            )
            for n in range(ask.count)
        ]
        await asyncio.gather(*(q.outcome() for q in questions))
        return [settled_box()[q.id].model_dump(mode="json") for q in questions]

    @workflow.query
    def heard(self) -> dict[str, Any]:
        return {key: settled.model_dump(mode="json") for key, settled in settled_box().items()}


async def test_a_partial_resume_answers_one_of_three_and_the_rest_stay_answerable(
    http: httpx.AsyncClient, client: Client, settings: Settings
):
    carol = f"carol-{uuid.uuid4().hex[:6]}"
    inbox = inbox_thread(carol)
    queue = f"asks-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[AsksQuestions]):
        owner = await client.start_workflow(
            AsksQuestions.run,
            Questions(thread_id=inbox, thread_task_queue=settings.task_queue, count=3),
            id=f"asks-{uuid.uuid4().hex[:10]}",
            task_queue=queue,
        )
        first, second, third = (await until(client, inbox, delivered(3))).awaiting
        # Another principal, and an answer the schema refuses, change nothing.
        assert await refused(client, inbox, "mallory", answer(first.id, {"speed": "x"})) == (
            "FORBIDDEN"
        )
        assert await refused(client, inbox, carol, answer(first.id, {"speed": "x"})) == (
            "INVALID_PAYLOAD"
        )
        decided = await decide(client, inbox, carol, answer(first.id, {"speed": "express"}))
        done = finished(decided.events)
        # The rest await still, delivered again by this run, bound to it.
        assert done["outcome"]["type"] == "interrupt"
        assert [i["id"] for i in done["outcome"]["interrupts"]] == [second.id, third.id]
        state = await thread_state(client, inbox)
        by_id = {r.id: r for r in state.interrupts}
        assert by_id[first.id].status == InterruptStatus.RESOLVED
        assert (by_id[first.id].resolved_by, by_id[first.id].resolved_via) == (carol, "api")
        assert by_id[first.id].resolved_at is not None
        assert by_id[first.id].run_id == first.run_id  # the run that delivered it, still
        assert [(r.id, r.run_id) for r in state.awaiting] == [
            (second.id, done["runId"]),
            (third.id, done["runId"]),
        ]
        shown = (await hydrate(http, inbox, **{"X-Principal": carol}))["interrupts"]
        assert shown["runId"] == done["runId"]
        assert [i["id"] for i in shown["pending"]] == [second.id, third.id]
        # The owner heard the answer, and how and when it came.
        heard = await _heard(owner, first.id)
        assert (heard["status"], heard["payload"], heard["principal"]) == (
            "resolved",
            {"speed": "express"},
            carol,
        )
        assert (heard["via"], heard["at"]) == ("api", by_id[first.id].resolved_at)
        # The same decision again is answered as it was (a link clicked twice); another is not.
        again = await decide(client, inbox, carol, answer(first.id, {"speed": "express"}))
        assert finished(again.events)["outcome"] == done["outcome"]
        other = answer(first.id, {"speed": "standard"})
        assert await refused(client, inbox, carol, other) == "INTERRUPT_ALREADY_RESOLVED"
        # A client's full resume of the remaining two, bound to the decision's run.
        rest = await run(
            http,
            inbox,
            agent="inbox",
            principal=carol,
            parent_run_id=done["runId"],
            resume=[resolve(i, {"speed": "standard"}) for i in shown["pending"]],
        )
        assert finished(rest)["outcome"] == {"type": "success"}
        outcomes = await owner.result()
    assert [(o["status"], o["payload"]["speed"], o["via"]) for o in outcomes] == [
        ("resolved", "express", "api"),
        ("resolved", "standard", "chat"),
        ("resolved", "standard", "chat"),
    ]


async def _heard(owner: Any, interrupt_id: str) -> dict[str, Any]:
    for _ in range(600):
        heard: dict[str, Any] = await owner.query(AsksQuestions.heard)
        if interrupt_id in heard:
            return dict(heard[interrupt_id])
        await asyncio.sleep(0.05)
    raise AssertionError(f"the owner never heard of {interrupt_id}")


async def test_a_partial_resume_of_an_agent_s_interrupts_is_refused(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """An LLM agent needs every deferred answer of a run together: `PARTIAL_RESUME`."""
    text = "Send emails to ada@example.com, bob@example.com and cy@example.com"
    asked = interrupts(await run(http, thread_id, text=text))
    entries = [answer(i["id"], {"approved": False}) for i in asked]
    code = await refused(client, thread_id, "anonymous", *entries[:2], agent="assistant")
    assert code == "PARTIAL_RESUME"
    state = await thread_state(client, thread_id)
    assert [r.status for r in state.awaiting] == [InterruptStatus.OPEN] * 3
    # all of them together are taken, also through a decision path
    every = await decide(client, thread_id, "anonymous", *entries, agent="assistant")
    assert finished(every.events)["outcome"] == {"type": "success"}


async def test_an_ag_ui_resume_is_never_partial(
    http: httpx.AsyncClient, client: Client, settings: Settings
):
    """The gateway builds a client's resume with `partial` unset, whatever it sends: in an
    inbox too, a resume naming one of two open interrupts is `PARTIAL_RESUME`."""
    erin = f"erin-{uuid.uuid4().hex[:6]}"
    inbox = inbox_thread(erin)
    queue = f"asks-{uuid.uuid4().hex[:8]}"
    async with Worker(client, task_queue=queue, workflows=[AsksQuestions]):
        owner = await client.start_workflow(
            AsksQuestions.run,
            Questions(thread_id=inbox, thread_task_queue=settings.task_queue, count=2),
            id=f"asks-{uuid.uuid4().hex[:10]}",
            task_queue=queue,
        )
        await until(client, inbox, delivered(2))
        pending = (await hydrate(http, inbox, **{"X-Principal": erin}))["interrupts"]["pending"]
        assert len(pending) == 2
        body = {
            "threadId": inbox,
            "runId": new_id(),
            "messages": [],
            "resume": [resolve(pending[0], {"speed": "express"})],
            "partial": True,  # not AG-UI: the gateway does not take it from a client
            "via": "link",
        }
        response = await http.post("/agents/inbox", json=body, headers={"X-Principal": erin})
        assert response.status_code == 200, response.text
        assert error(parse_sse(response.text))["code"] == "PARTIAL_RESUME"
        state = await thread_state(client, inbox)
        assert [r.status for r in state.awaiting] == [InterruptStatus.OPEN] * 2
        await owner.cancel()


async def test_a_chain_s_audit_says_how_each_decision_came(
    http: httpx.AsyncClient, client: Client, settings: Settings
):
    """bob decides by a link (a partial resume of his inbox), carol in the chat."""
    tag = uuid.uuid4().hex[:6]
    bob, carol = f"bob-{tag}", f"carol-{tag}"
    definition = ChainDefinition(
        name="via",
        steps=[
            ChainStep(name="manager", approvers=[bob]),
            ChainStep(name="finance", approvers=[carol]),
        ],
    )
    chain_id = f"chain-{tag}"
    chain = await client.start_workflow(
        ApprovalChain.run,
        ChainInput(
            chain_id=chain_id,
            definition=definition,
            requester=f"alice-{tag}",
            thread_task_queue=settings.task_queue,
            index=False,
        ),
        id=chain_id,
        task_queue=settings.task_queue,
    )
    [seat] = (await until(client, inbox_thread(bob), delivered(1))).awaiting
    await decide(
        client, inbox_thread(bob), bob, answer(seat.id, {"decision": "approve"}), via="link"
    )
    await until(client, inbox_thread(carol), delivered(1))
    shown = (await hydrate(http, inbox_thread(carol), **{"X-Principal": carol}))["interrupts"]
    [item] = shown["pending"]
    await run(
        http,
        inbox_thread(carol),
        agent="inbox",
        principal=carol,
        resume=[resolve(item, {"decision": "approve"})],
    )
    view = await chain.result()
    decisions = [(e.principal, e.decision, e.via) for e in view.audit if e.kind == "decision"]
    assert decisions == [(bob, "approve", "link"), (carol, "approve", "chat")]
