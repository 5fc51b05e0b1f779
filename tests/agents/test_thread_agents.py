"""Your own pydantic-ai agent in a thread, driven by `FunctionModel`, through the real gateway
and a real Temporal server: approvals are interrupts, answers continue the same agent run,
tokens stream while the model produces them, and a retried model call shows its text once."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, CallDeferred, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio import activity
from temporalio.client import Client

from ag_ui_temporal.agents import ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.payloads import CODEC
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import STREAM_PUBLISH_SIGNAL, thread_workflow_id
from tests.agui import (
    PICK_DATE,
    finished,
    frames,
    interrupts,
    resolve,
    run,
    run_body,
    texts,
    thread_state,
    types,
)
from tests.conftest import serve_gateway
from tests.gateway.test_streaming import is_type, read_until
from tests.llm.openai_replay import OpenAIReplay, serve

TRANSFERS: Counter[str] = Counter()
"""Executions of `transfer` by tool call id (the tool runs in this process's worker)."""
REPLY = ["The ", "answer ", "comes ", "in ", "several ", "pieces."]
RETRIED = "Hello there, friend."
GATED = ["First half, ", "then the second half."]
GATE = asyncio.Event()


def _last_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    if not isinstance(last, ModelRequest):
        return []
    return [part for part in last.parts if isinstance(part, ToolReturnPart)]


def _prompt(messages: list[ModelMessage]) -> str:
    last = messages[-1]
    return " ".join(str(getattr(part, "content", "")) for part in last.parts)


CALLS: dict[str, dict[str, Any]] = {
    "transfer": {"amount": 100, "to": "bob"},
    "ship": {"to": {"street": "Main St"}, "parcels": 2},
    "lookup": {"key": "k1"},
}
"""A prompt naming one of these tools gets a call of it with these arguments."""


def _call(name: str, args: dict[str, Any]) -> DeltaToolCalls:
    call_id = f"call_{uuid.uuid4().hex}"
    return {0: DeltaToolCall(name=name, json_args=json.dumps(args), tool_call_id=call_id)}


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    if returns := _last_returns(messages):
        yield "results: " + json.dumps({p.tool_name: p.content for p in returns}, default=str)
        return
    prompt = _prompt(messages)
    if called := [name for name in CALLS if name in prompt]:
        yield _call(called[0], CALLS[called[0]])
    elif "date" in prompt and any(t.name == "pickDate" for t in info.function_tools):
        yield _call("pickDate", {"question": "Which date?"})
    elif "slowly" in prompt:
        for piece in REPLY:  # the model's own pace: more than one 100 ms batch
            yield piece
            await asyncio.sleep(0.15)
    elif "gated" in prompt:
        yield GATED[0]
        await GATE.wait()  # the test holds the model mid-answer
        yield GATED[1]
    elif "flaky" in prompt:
        yield RETRIED[:6]
        yield RETRIED[6:12]
        await asyncio.sleep(0.3)  # the first pieces are flushed to the thread (each attempt)...
        if activity.info().attempt == 1:
            raise RuntimeError("the provider dropped the connection")  # ...then it fails
        yield RETRIED[12:]  # the rest arrives with the activity's result
    else:
        yield "Say transfer, lookup or slowly."


class Address(BaseModel):
    street: str


def build_agent() -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_stream),
        name="t-agent",
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool(requires_approval=True)
    async def transfer(ctx: RunContext[ThreadDeps], amount: int, to: str) -> dict[str, Any]:
        TRANSFERS[ctx.tool_call_id or ""] += 1
        return {"sent": amount, "to": to, "by": ctx.deps.principal}

    @agent.tool_plain(requires_approval=True)
    async def ship(to: Address, parcels: int) -> str:
        return f"{parcels} parcels to {to.street}"

    @agent.tool
    async def lookup(ctx: RunContext[ThreadDeps], key: str) -> dict[str, Any]:
        schema = {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        }
        raise CallDeferred(metadata={"responseSchema": schema})

    return agent


def build_openai_agent(base_url: str) -> Agent[ThreadDeps, str]:
    settings = Settings(llm_model="openai-chat:gpt-4o-mini", openai_base_url=base_url)
    agent = Agent(
        resolve_model(settings),
        name="t-openai",
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @agent.tool_plain(requires_approval=True)
    async def get_capital(country: str) -> str:
        return {"UK": "London"}.get(country, "unknown")

    return agent


@dataclass
class Stack:
    http: httpx.AsyncClient
    replay: OpenAIReplay


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    replay, server = serve()
    if registered("t-agent") is None:
        register(build_agent())
        register(build_openai_agent(replay.base_url))
    name = f"agents-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield Stack(http, replay)
    server.shutdown()
    server.server_close()


async def test_an_approved_call_runs_once_and_the_agent_goes_on(stack: Stack, thread_id: str):
    first = await run(
        stack.http, thread_id, agent="t-agent", text="please transfer", principal="ann"
    )
    [asked] = interrupts(first)
    assert asked["reason"] == "tool_call"
    assert asked["metadata"]["tanstack:interruptBinding"]["toolName"] == "transfer"
    call_id = asked["toolCallId"]
    assert types(first)[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]

    answer = [resolve(asked, {"approved": True})]
    done = await run(stack.http, thread_id, agent="t-agent", resume=answer, principal="ann")
    assert types(done)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert json.loads(done[1]["content"]) == {"sent": 100, "to": "bob", "by": "ann"}
    assert '"transfer": {"sent": 100' in texts(done)
    assert finished(done)["outcome"] == {"type": "success"}
    # a replayed resume is answered, not re-applied
    again = await run(stack.http, thread_id, agent="t-agent", resume=answer, principal="ann")
    assert finished(again)["outcome"] == {"type": "success"}
    assert TRANSFERS[call_id] == 1


async def test_edited_args_replace_the_call(stack: Stack, thread_id: str):
    [asked] = interrupts(await run(stack.http, thread_id, agent="t-agent", text="transfer it"))
    edits = {"approved": True, "editedArgs": {"amount": 7, "to": "eve"}}
    done = await run(stack.http, thread_id, agent="t-agent", resume=[resolve(asked, edits)])
    assert json.loads(done[1]["content"])["to"] == "eve"
    assert TRANSFERS[asked["toolCallId"]] == 1


async def test_a_tool_with_nested_models_takes_edits(stack: Stack, thread_id: str):
    """pydantic-ai names nested models by `$ref` into `$defs`: the approval envelope keeps
    them resolvable, so an edit is checked against the nested model."""
    [asked] = interrupts(await run(stack.http, thread_id, agent="t-agent", text="ship it"))
    wrong = {"approved": True, "editedArgs": {"to": {"road": "x"}, "parcels": 1}}
    refused = await run(stack.http, thread_id, agent="t-agent", resume=[resolve(asked, wrong)])
    assert refused[-1]["code"] == "INVALID_PAYLOAD"
    edits = {"approved": True, "editedArgs": {"to": {"street": "Elm St"}, "parcels": 1}}
    done = await run(stack.http, thread_id, agent="t-agent", resume=[resolve(asked, edits)])
    assert done[1]["content"] == "1 parcels to Elm St"


async def test_a_denial_is_what_the_model_hears(stack: Stack, thread_id: str):
    [asked] = interrupts(await run(stack.http, thread_id, agent="t-agent", text="transfer"))
    done = await run(
        stack.http, thread_id, agent="t-agent", resume=[resolve(asked, {"approved": False})]
    )
    assert '"transfer": "you rejected it"' in texts(done)
    assert TRANSFERS[asked["toolCallId"]] == 0


async def test_an_external_call_is_answered_through_input_required(stack: Stack, thread_id: str):
    [asked] = interrupts(await run(stack.http, thread_id, agent="t-agent", text="lookup k1"))
    assert asked["reason"] == "input_required"
    assert asked["responseSchema"]["required"] == ["value"]
    bad = await run(stack.http, thread_id, agent="t-agent", resume=[resolve(asked, {"v": 1})])
    assert bad[-1]["code"] == "INVALID_PAYLOAD"
    done = await run(
        stack.http, thread_id, agent="t-agent", resume=[resolve(asked, {"value": "forty-two"})]
    )
    assert '"lookup": {"value": "forty-two"}' in texts(done)


async def test_tokens_stream_in_batches_before_the_run_ends(
    stack: Stack, client: Client, thread_id: str
):
    events = await run(stack.http, thread_id, agent="t-agent", text="answer slowly")
    kinds = types(events)
    contents = [i for i, kind in enumerate(kinds) if kind == "TEXT_MESSAGE_CONTENT"]
    assert texts(events) == "".join(REPLY)
    assert len(contents) > 1  # several deltas, not one message at the end
    assert (
        kinds.index("TEXT_MESSAGE_START")
        < contents[0]
        < contents[-1]
        < kinds.index("TEXT_MESSAGE_END")
        < kinds.index("RUN_FINISHED")
    )
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    batches = [
        e
        for e in history.events
        if e.HasField("workflow_execution_signaled_event_attributes")
        and e.workflow_execution_signaled_event_attributes.signal_name == STREAM_PUBLISH_SIGNAL
    ]
    assert 1 < len(batches) < len(REPLY) + 1  # history grows per batch, not per token
    # what was streamed is what the transcript (and a hydrate) holds
    state = await thread_state(client, thread_id)
    assert state.messages[-1]["content"] == "".join(REPLY)


async def test_a_retried_model_call_shows_its_text_once(
    stack: Stack, client: Client, thread_id: str
):
    events = await run(stack.http, thread_id, agent="t-agent", text="be flaky")
    # both attempts streamed into the thread (the first one's pieces before it failed)...
    attempts = {topic.rpartition("#")[2] for topic in await _stream_topics(client, thread_id)}
    assert attempts == {"1", "2"}
    # ...and the client saw the text once
    assert texts(events) == RETRIED
    assert types(events).count("TEXT_MESSAGE_START") == 1
    state = await thread_state(client, thread_id)
    assert state.messages[-1]["content"] == RETRIED


async def _stream_topics(client: Client, thread_id: str) -> list[str]:
    """The topics (`activity#attempt`) of every delta batch the thread received."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    topics = []
    for event in history.events:
        signaled = event.workflow_execution_signaled_event_attributes
        if event.HasField("workflow_execution_signaled_event_attributes") and (
            signaled.signal_name == STREAM_PUBLISH_SIGNAL
        ):
            [payload] = await CODEC.decode(signaled.input.payloads)
            topics += [item["topic"] for item in json.loads(payload.data)["items"]]
    return topics


async def test_a_real_provider_stream_through_a_thread(
    stack: Stack, client: Client, thread_id: str
):
    """`openai-chat:` against recorded chat-completion streams on loopback: pydantic-ai's
    and openai's own parsing, a tool call that needs approval, then streamed text."""
    stack.replay.event_gap = 0.03  # paced as a provider streams: batches reach the thread
    try:
        first = await run(
            stack.http, thread_id, agent="t-openai", text="What is the capital of the UK?"
        )
        [asked] = interrupts(first)
        done = await run(
            stack.http, thread_id, agent="t-openai", resume=[resolve(asked, {"approved": True})]
        )
    finally:
        stack.replay.event_gap = 0.0
    assert asked["metadata"]["tanstack:interruptBinding"]["originalArgs"] == {"country": "UK"}
    assert (done[1]["type"], done[1]["content"]) == ("TOOL_CALL_RESULT", "London")
    assert texts(done) == "The capital of the UK is London."
    # both responses (the call, then the text) streamed out of their model activities
    assert len({topic.partition("#")[0] for topic in await _stream_topics(client, thread_id)}) == 2
    sent = stack.replay.requests[-1].body
    assert any(m.get("role") == "tool" for m in sent["messages"])


async def test_reconnect_join_and_hydrate_show_the_same_text(stack: Stack, thread_id: str):
    """While the model is held mid-answer, its first delta is already with the client; a
    re-attach (`Last-Event-ID`), a join and a hydrate all end with the same text."""
    GATE.clear()
    body = run_body(thread_id, "answer gated")
    url = "/agents/t-agent"
    async with stack.http.stream("POST", url, json=body) as response:
        seen = await read_until(frames(response), is_type("TEXT_MESSAGE_CONTENT"))
    assert seen[-1].event["delta"] == GATED[0]  # the run has not finished: the model waits
    params = {"threadId": thread_id, "runId": body["runId"], "offset": "-1"}
    async with stack.http.stream("GET", url, params=params) as joined:
        joining = frames(joined)
        await read_until(joining, is_type("TEXT_MESSAGE_CONTENT"))
        GATE.set()
        joined_rest = await read_until(joining, is_type("RUN_FINISHED"))
    assert seen[-1].id is not None
    headers = {"Last-Event-ID": seen[-1].id}
    async with stack.http.stream("POST", url, json=body, headers=headers) as response:
        rest = [frame async for frame in frames(response)]
    whole = "".join(GATED)
    assert GATED[0] + texts([f.event for f in rest]) == whole
    assert GATED[0] + texts([f.event for f in joined_rest]) == whole
    hydrated = (await stack.http.get(url, params={"threadId": thread_id})).json()
    parts = [p for m in hydrated["messages"] if m["role"] == "assistant" for p in m["parts"]]
    assert [p["content"] for p in parts if p["type"] == "text"] == [whole]


async def test_a_frontend_tool_ends_the_run_and_its_result_continues_it(
    stack: Stack, thread_id: str
):
    asked = await run(stack.http, thread_id, agent="t-agent", text="pick a date", tools=[PICK_DATE])
    assert types(asked)[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert finished(asked)["outcome"] == {"type": "success"}  # the client runs it: no interrupt
    call_id = asked[1]["toolCallId"]
    result = {"id": "tool-x", "role": "tool", "toolCallId": call_id, "content": '{"date": "d"}'}
    done = await run(stack.http, thread_id, agent="t-agent", messages=[result], tools=[PICK_DATE])
    assert texts(done) == 'results: {"pickDate": {"date": "d"}}'
    # the same result again is known: nothing runs twice
    again = await run(stack.http, thread_id, agent="t-agent", messages=[result], tools=[PICK_DATE])
    assert texts(again) == ""
