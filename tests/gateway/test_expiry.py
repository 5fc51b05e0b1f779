"""`expiresAt` is a durable timer in the workflow, tested under time skipping; an expired
interrupt stops blocking the thread.

A 2-day deadline passes in seconds: the time-skipping test server jumps its
clock whenever everything waits on a timer. Once a form expires it is settled as expired:
hydrate offers nothing to resolve, new input is taken without a cancel and the agent hears
that it expired, a late resolve is `INTERRUPT_EXPIRED`, and a cancel (old clients send one)
is still accepted. A run that arrives after `expiresAt` but before the timer fired (a worker
was down) expires it first, as the timer would: that one runs on the dev server, with a
worker of its own that it stops.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from ag_ui_temporal import ThreadDeps, ask_person, register, registered, thread_capabilities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import (
    InterruptStatus,
    thread_workflow_id,
)
from tests.agui import (
    cancel,
    error,
    finished,
    interrupts,
    new_id,
    resolve,
    run,
    texts,
    thread_state,
    update_id_of,
    user,
)
from tests.conftest import SKIPPING, serve_gateway
from tests.gateway.threads import until_admitted

QUARTERLY = {"quarter": "Q2", "year": 2026, "revenue": 5}
LISTENER = "t-expiry-listener"
"""An agent whose model says which tool results it read (the expiry's among them)."""
EXPIRED = "nobody answered before it expired"


async def _listen(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    prompt = " ".join(str(getattr(part, "content", "")) for part in messages[-1].parts)
    if "survey" in prompt:
        call = DeltaToolCall(
            name="survey", json_args='{"answer": "?"}', tool_call_id=new_id("call")
        )
        yield {0: call}
        return
    read = [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    yield f"I read: {'; '.join(read)}"


def _listener() -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_listen),
        name=LISTENER,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool_plain(requires_approval=True, metadata=ask_person(fills_args=True))
    async def survey(answer: str) -> str:
        return answer

    return agent


@pytest.fixture(scope="module")
async def skipping_http(
    skipping_env: WorkflowEnvironment, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    if registered(LISTENER) is None:
        register(_listener())
    settings = Settings(data_dir=data_dir / "skipping", task_queue="time-skipping", **SKIPPING)
    async with (
        build_worker(skipping_env.client, settings, executor),
        serve_gateway(settings, skipping_env.client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        yield http


async def hydrate(http: httpx.AsyncClient, thread_id: str, agent: str = "assistant") -> Any:
    response = await http.get(f"/agents/{agent}", params={"threadId": thread_id})
    assert response.status_code == 200, response.text
    return response.json()


async def test_form_expires_after_two_days(
    skipping_env: WorkflowEnvironment, skipping_http: httpx.AsyncClient, thread_id: str
):
    [form] = interrupts(await run(skipping_http, thread_id, text="File the quarterly report"))
    assert (await hydrate(skipping_http, thread_id))["interrupts"]["pending"][0]["id"] == form["id"]
    await skipping_env.sleep(timedelta(days=2, minutes=1))

    state = await thread_state(skipping_env.client, thread_id)
    assert [(i.status, i.lapsed) for i in state.interrupts] == [(InterruptStatus.EXPIRED, True)]
    assert EXPIRED in state.messages[-1]["content"]
    # the call gets its result (the reason), for the model to read on the next run
    tool = state.messages[-2]
    assert (tool["role"], tool["toolCallId"]) == ("tool", form["toolCallId"])
    assert tool["content"] == EXPIRED
    # a reloaded page is offered nothing to resolve (TanStack would block new input on it)
    shown = await hydrate(skipping_http, thread_id)
    assert shown["interrupts"] is None
    assert EXPIRED in shown["messages"][-1]["parts"][0]["content"]

    late = error(await run(skipping_http, thread_id, resume=[resolve(form, QUARTERLY)]))
    assert late["code"] == "INTERRUPT_EXPIRED"
    [item] = late["metadata"]["tanstack"]["interruptErrors"]
    assert (item["code"], item["retryable"]) == ("expired", False)
    assert await thread_state(skipping_env.client, thread_id) == state

    # new input needs no cancel first
    after = await run(skipping_http, thread_id, text="What can you do?")
    assert finished(after)["outcome"] == {"type": "success"}
    assert "quarterly report" in texts(after)
    # old clients acknowledge it with a cancel anyway: accepted, and a resolve stays refused
    acknowledged = await run(skipping_http, thread_id, resume=[cancel(form)])
    assert finished(acknowledged)["outcome"] == {"type": "success"}
    again = error(await run(skipping_http, thread_id, resume=[resolve(form, QUARTERLY)]))
    assert again["code"] == "INTERRUPT_EXPIRED"


async def test_the_model_hears_that_it_expired(
    skipping_env: WorkflowEnvironment, skipping_http: httpx.AsyncClient, thread_id: str
):
    asked = await run(skipping_http, thread_id, agent=LISTENER, text="a survey, please")
    [form] = interrupts(asked)
    assert form["reason"] == "input_required" and "expiresAt" in form
    await skipping_env.sleep(timedelta(days=2, minutes=1))
    after = await run(skipping_http, thread_id, agent=LISTENER, text="what happened?")
    assert texts(after) == f"I read: {EXPIRED}"


async def test_answer_before_expiry_wins(
    skipping_env: WorkflowEnvironment, skipping_http: httpx.AsyncClient, thread_id: str
):
    [form] = interrupts(await run(skipping_http, thread_id, text="File the quarterly report"))
    await skipping_env.sleep(timedelta(days=1))
    done = await run(skipping_http, thread_id, resume=[resolve(form, QUARTERLY)])
    assert "Filed the Q2 2026 quarterly report" in texts(done)
    await skipping_env.sleep(timedelta(days=3))
    state = await thread_state(skipping_env.client, thread_id)
    assert [i.status for i in state.interrupts] == [InterruptStatus.RESOLVED]


# -- after expiresAt, before the timer fired ------------------------------------------------


async def _timer_fired(handle: WorkflowHandle[Any, Any]) -> None:
    """Until the server fired the thread's timer (no worker runs the thread meanwhile)."""
    fired = EventType.EVENT_TYPE_TIMER_FIRED
    while not [e async for e in handle.fetch_history_events() if e.event_type == fired]:
        await asyncio.sleep(0.05)


async def test_a_run_after_expires_at_expires_it_first(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor, thread_id: str
):
    """The worker is down when the form's deadline passes: the thread's next task holds both
    the timer and a new message. The run's validator takes the message (the form is past its
    `expiresAt`), and its handler expires the form before it plans, as the timer would: the
    agent closes the call out first, then answers the message."""
    name = f"expiry-window-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=data_dir / name, task_queue=name, input_expires_in=timedelta(seconds=1)
    )
    async with (
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        async with build_worker(client, settings, executor):
            [form] = interrupts(await run(http, thread_id, text="File the quarterly report"))
        handle = client.get_workflow_handle(thread_workflow_id(thread_id))
        await _timer_fired(handle)
        run_id, message = new_id(), user("What can you do?")
        later = asyncio.create_task(run(http, thread_id, run_id=run_id, messages=[message]))
        update_id = update_id_of({"threadId": thread_id, "runId": run_id, "messages": [message]})
        await until_admitted(client, handle, update_id)
        async with build_worker(client, settings, executor):
            after = await later
            state = await thread_state(client, thread_id)
    assert finished(after)["outcome"] == {"type": "success"}
    assert "quarterly report" in texts(after)
    assert [(i.status, i.lapsed) for i in state.interrupts] == [(InterruptStatus.EXPIRED, True)]
    said = [(m["role"], m.get("toolCallId") or m.get("content")) for m in state.messages[-4:]]
    assert said[:3] == [
        ("tool", form["toolCallId"]),
        ("assistant", f"I did not carry out the quarterly report: {EXPIRED}."),
        ("user", "What can you do?"),
    ]
