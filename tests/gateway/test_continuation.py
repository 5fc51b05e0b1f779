"""A resume sent under the run id of the run that asked (CopilotKit's `useInterrupt` pins it on
the wire): a continuation, applied once as a run of its own that the client sees under the id
it sent. Any other body under a known run id is refused (`RUN_ID_REUSED`), never answered with
the earlier run's events. Through the real gateway and a real Temporal server.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.gateway import streaming as gateway_streaming
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import InterruptStatus, thread_workflow_id
from tests.agui import (
    STREAMS,
    cancel,
    copilotkit_resume,
    error,
    finished,
    frames,
    interrupts,
    resolve,
    run,
    texts,
    thread_state,
    types,
    user,
)
from tests.effects import EffectLog
from tests.gateway.conftest import Stack
from tests.gateway.test_streaming import is_type, read_until, streams_back_to
from tests.gateway.threads import start_short_thread, wait_for_new_run
from tests.node_clients import requires_node, run_node, streams_of
from tests.test_producers import offered, owner_worker, start_order, until

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"
SPEED = {"speed": "express"}


def keys(outbox: EffectLog, tool: str = "sendEmail") -> list[str]:
    return [effect["key"] for effect in outbox.effects(tool)]


async def continued(
    http: httpx.AsyncClient,
    thread_id: str,
    asked: list[dict[str, Any]],
    resume: list[dict[str, Any]],
    **fields: Any,
) -> list[dict[str, Any]]:
    """CopilotKit's resume of the interrupts `asked` (a run's events) ended with."""
    return await run(http, thread_id, **copilotkit_resume(asked, resume), **fields)


async def accepted_updates(client: Client, thread_id: str) -> list[str]:
    """The ids of the updates the thread's history accepted, in order."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return [
        event.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id
        async for event in handle.fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]


async def test_a_resume_under_the_asking_run_id_is_a_continuation(
    http: httpx.AsyncClient, client: Client, thread_id: str, outbox: EffectLog
):
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    run_id = asked[0]["runId"]
    done = await continued(http, thread_id, asked, [resolve(interrupt, {"approved": True})])
    assert types(done)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert done[0]["runId"] == finished(done)["runId"] == run_id  # the id the client sent
    assert finished(done)["outcome"] == {"type": "success"}
    assert "Sent the email to ada@example.com" in texts(done)
    assert keys(outbox).count(interrupt["toolCallId"]) == 1
    # the thread applied it: nothing pending, a hydrate offers nothing, one result in the
    # transcript (CopilotKit's own tool message is no second one)
    state = await thread_state(client, thread_id)
    [record] = state.interrupts
    assert (record.status, record.resolved_by_run) == (InterruptStatus.RESOLVED, run_id)
    assert [r.run_id for r in state.runs] == [run_id, run_id] and state.active_run is None
    results = [m for m in state.messages if m["role"] == "tool"]
    assert [m["toolCallId"] for m in results] == [interrupt["toolCallId"]]
    assert results[0]["id"] != done[0]["runId"]
    hydrated = (await http.get("/agents/assistant", params={"threadId": thread_id})).json()
    assert hydrated["interrupts"] is None and hydrated["activeRun"] is None
    # the next turn goes on as usual, CopilotKit's tool message re-sent with the transcript
    [snapshot] = [e for e in done if e["type"] == "MESSAGES_SNAPSHOT"]
    later = await run(http, thread_id, messages=[*snapshot["messages"], user("thanks")])
    assert finished(later)["outcome"] == {"type": "success"}
    state = await thread_state(client, thread_id)
    assert [m["toolCallId"] for m in state.messages if m["role"] == "tool"] == [
        interrupt["toolCallId"]
    ]
    assert keys(outbox).count(interrupt["toolCallId"]) == 1


async def test_the_same_continuation_sent_twice_is_one_run(
    http: httpx.AsyncClient, client: Client, thread_id: str, outbox: EffectLog
):
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    resume = copilotkit_resume(asked, [resolve(interrupt, {"approved": True})])
    first = await run(http, thread_id, **resume)
    again = await run(http, thread_id, **resume)
    assert again == first and "TOOL_CALL_RESULT" in types(first)
    assert keys(outbox).count(interrupt["toolCallId"]) == 1
    assert len((await thread_state(client, thread_id)).runs) == 2


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda i: resolve(i, {"approved": False}), id="rejected"),
        pytest.param(cancel, id="cancelled"),
    ],
)
async def test_a_rejection_or_a_cancel_under_the_asking_run_id(
    http: httpx.AsyncClient, thread_id: str, outbox: EffectLog, answer: Any
):
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    done = await continued(http, thread_id, asked, [answer(interrupt)])
    assert done[0]["runId"] == finished(done)["runId"] == asked[0]["runId"]
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == interrupt["toolCallId"]
    assert result["content"] in ("you rejected it", "it was cancelled")
    assert "did not carry out the email to ada@example.com" in texts(done)
    assert interrupt["toolCallId"] not in keys(outbox)


async def test_three_approvals_under_the_asking_run_id(
    http: httpx.AsyncClient, client: Client, thread_id: str, outbox: EffectLog
):
    asked = await run(http, thread_id, text=EMAILS)
    ada, bob, cy = interrupts(asked)
    resume = [resolve(ada, {"approved": True}), cancel(bob), resolve(cy, {"approved": True})]
    done = await continued(http, thread_id, asked, resume)
    results = [(e["toolCallId"], e["content"]) for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert [call for call, _ in results] == [ada["toolCallId"], bob["toolCallId"], cy["toolCallId"]]
    assert results[1][1] == "it was cancelled"
    assert sorted(keys(outbox)).count(ada["toolCallId"]) == 1
    assert cy["toolCallId"] in keys(outbox) and bob["toolCallId"] not in keys(outbox)
    state = await thread_state(client, thread_id)
    tools = [m["toolCallId"] for m in state.messages if m["role"] == "tool"]
    assert sorted(tools) == sorted(i["toolCallId"] for i in (ada, bob, cy))  # one each


async def test_the_quarterly_form_under_the_asking_run_id(
    http: httpx.AsyncClient, thread_id: str, outbox: EffectLog
):
    asked = await run(http, thread_id, text="File the quarterly report")
    [form] = interrupts(asked)
    assert form["reason"] == "input_required" and form["expiresAt"]
    figures = {"quarter": "Q3", "year": 2026, "revenue": 1250000.5}
    done = await continued(http, thread_id, asked, [resolve(form, figures)])
    assert done[0]["runId"] == finished(done)["runId"] == asked[0]["runId"]
    assert "Filed the Q3 2026 quarterly report" in texts(done)
    [effect] = [e for e in outbox.effects("fileQuarterlyReport") if e["key"] == form["toolCallId"]]
    assert effect["args"] == figures


async def test_a_reused_run_id_with_another_body_is_refused(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    question = user("What can you do?")
    helped = await run(http, thread_id, messages=[question])
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    before = await thread_state(client, thread_id)
    # a resume under the id of a run that did not ask it; new input under a finished run's id
    attempts = [
        {"run_id": helped[0]["runId"], "resume": [resolve(interrupt, {"approved": True})]},
        {"run_id": helped[0]["runId"], "text": "Send an email to bob@example.com saying hi"},
        {"run_id": asked[0]["runId"], "text": "What can you do?"},
    ]
    for attempt in attempts:
        refused = error(await run(http, thread_id, **attempt))
        assert refused["code"] == "RUN_ID_REUSED", refused
    assert await thread_state(client, thread_id) == before
    assert len(await accepted_updates(client, thread_id)) == 2  # the validator refused them
    # the same POST again is still the run it was
    again = await run(http, thread_id, run_id=helped[0]["runId"], messages=[question])
    assert again == helped


async def test_a_continuation_sent_again_after_continue_as_new_is_the_same_run(
    http: httpx.AsyncClient, client: Client, outbox: EffectLog, settings: Settings, thread_id: str
):
    """Temporal no longer knows the update ids then: the thread tells the same body (the run
    again) from another (refused) by what the runs it carried brought."""
    handle = await start_short_thread(client, settings, thread_id, history_limit=12)
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    resume = [resolve(interrupt, {"approved": True})]
    done = await continued(http, thread_id, asked, resume)
    await wait_for_new_run(client, thread_id, handle.result_run_id)
    again = await continued(http, thread_id, asked, resume)
    assert again == done and "TOOL_CALL_RESULT" in types(done)
    assert keys(outbox).count(interrupt["toolCallId"]) == 1
    before = await thread_state(client, thread_id)
    refused = error(await run(http, thread_id, run_id=asked[0]["runId"], text="hello"))
    assert refused["code"] == "RUN_ID_REUSED"
    assert await thread_state(client, thread_id) == before


async def test_a_continuation_is_re_attached_and_joined_by_its_run_id(
    gated: httpx.AsyncClient, stack: Stack, client: Client, thread_id: str
):
    asked = await run(gated, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    run_id = asked[0]["runId"]
    sent = copilotkit_resume(asked, [resolve(interrupt, {"approved": True})])
    body = {"threadId": thread_id, "runId": run_id, **{k: sent[k] for k in ("resume", "messages")}}
    async with gated.stream("POST", "/agents/assistant", json=body) as response:
        [started] = await read_until(frames(response), is_type("RUN_STARTED"))
    assert started.event["runId"] == run_id and started.id is not None
    assert started.event != asked[0]  # the continuation's own start, not the asking run's
    await streams_back_to(gated, 0)  # the client left; the run goes on (the tool waits)
    while await gateway_streaming.find_thread(client, run_id) is None:
        await asyncio.sleep(0.05)  # visibility catches up: the run id alone finds the thread
    params = {"runId": run_id, "offset": "-1"}
    headers = {"Last-Event-ID": started.id}
    async with (
        gated.stream("GET", "/agents/assistant", params=params) as joined,
        gated.stream("POST", "/agents/assistant", json=body, headers=headers) as reattached,
    ):
        joining, reattaching = frames(joined), frames(reattached)
        assert await read_until(joining, is_type("RUN_STARTED")) == [started]
        stack.gate.set()
        joined_rest = await read_until(joining, is_type("RUN_FINISHED"))
        reattached_rest = [frame async for frame in reattaching]
    assert reattached_rest == joined_rest
    events = [frame.event for frame in joined_rest]
    STREAMS.append([started.event, *events])
    assert types(events)[0] == "TOOL_CALL_RESULT" and events[-1]["runId"] == run_id
    assert all(int(f.id or -1) > int(started.id) for f in joined_rest)
    assert keys(stack.outbox).count(interrupt["toolCallId"]) == 1


@pytest.mark.parametrize(
    "answered_by", [pytest.param("tanstack", marks=requires_node), "continuation"]
)
async def test_an_interrupt_asked_in_a_continuation_is_resumable_by_the_id_sent(
    http: httpx.AsyncClient,
    gateway_url: str,
    client: Client,
    settings: Settings,
    thread_id: str,
    answered_by: str,
):
    """A producer's question arrives while the email waits: the continuation that answers the
    email delivers it, bound to the run id the client sent. TanStack's `ChatClient` resolves it
    after a page load (its binding's `interruptedRunId`), CopilotKit by a continuation again."""
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    run_id = asked[0]["runId"]
    queue = f"owners-{uuid.uuid4().hex[:8]}"
    async with owner_worker(client, queue):
        order = await start_order(client, settings, queue, thread_id, order_id="7")
        await until(client, thread_id, offered(1))
        done = await continued(http, thread_id, asked, [resolve(interrupt, {"approved": True})])
        assert "Sent the email to ada@example.com" in texts(done)
        [question] = interrupts(done)
        assert "order 7" in question["message"]
        assert done[0]["runId"] == finished(done)["runId"] == run_id
        assert question["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] == run_id
        shown = (await http.get("/agents/assistant", params={"threadId": thread_id})).json()
        assert shown["interrupts"]["runId"] == run_id
        [pending] = shown["interrupts"]["pending"]
        assert pending["metadata"]["tanstack:interruptBinding"]["interruptedRunId"] == run_id
        if answered_by == "continuation":
            refused = error(await continued(http, thread_id, done, [resolve(question, {})]))
            [item] = refused["metadata"]["tanstack"]["interruptErrors"]
            assert (refused["code"], item["interruptedRunId"]) == ("INVALID_PAYLOAD", run_id)
            again = await continued(http, thread_id, done, [resolve(question, SPEED)])
            assert again[0]["runId"] == finished(again)["runId"] == run_id
            assert finished(again)["outcome"] == {"type": "success"}
        else:
            await resolved_by_tanstack(gateway_url, thread_id, run_id)
        outcome = await order.result()
    assert (outcome.status, outcome.speed, outcome.decided) == ("shipped", "express", "thread")
    state = await thread_state(client, thread_id)
    assert not state.awaiting and state.active_run is None
    assert [r.run_id for r in state.runs][:2] == [run_id, run_id]


async def resolved_by_tanstack(gateway_url: str, thread_id: str, run_id: str) -> None:
    """TanStack's real `ChatClient` loads the thread (hydrate) and resolves its question."""
    job = {
        "url": f"{gateway_url}/agents/assistant",
        "threadId": thread_id,
        "persistence": True,
        "steps": [{"attach": True}, {"resolve": [{"index": 0, "payload": SPEED}]}],
    }
    opened, answered = (await run_node("tanstack_chat.mjs", job))["snapshots"]
    STREAMS.extend(streams_of([opened, answered]))
    assert opened["stepError"] is None and answered["stepError"] is None
    [item] = opened["interrupts"]
    assert item["canResolve"] and item["binding"]["interruptedRunId"] == run_id
    [post] = [r for r in answered["requests"] if r["method"] == "POST"]
    assert post["body"]["parentRunId"] == run_id and post["body"]["runId"] != run_id
    assert answered["error"] is None and answered["interrupts"] == []


async def test_a_continuation_of_an_answer_another_tab_applied_is_its_repeat(
    http: httpx.AsyncClient, client: Client, thread_id: str, outbox: EffectLog
):
    """TanStack's tab answered under a run id of its own; CopilotKit's tab then sends the same
    answer under the asking run's id: rule 5's repeat (that run's outcome, under the id this
    client sent), not a second email; another answer is `INTERRUPT_ALREADY_RESOLVED`."""
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    approve = [resolve(interrupt, {"approved": True})]
    done = await run(http, thread_id, resume=approve, parent_run_id=asked[0]["runId"])
    repeat = await continued(http, thread_id, asked, approve)
    assert repeat[0]["runId"] == finished(repeat)["runId"] == asked[0]["runId"]
    assert texts(repeat) == texts(done) and "Sent the email to ada@example.com" in texts(done)
    assert keys(outbox).count(interrupt["toolCallId"]) == 1
    before = await thread_state(client, thread_id)
    other = error(
        await continued(http, thread_id, asked, [resolve(interrupt, {"approved": False})])
    )
    assert other["code"] == "INTERRUPT_ALREADY_RESOLVED"
    assert await thread_state(client, thread_id) == before
