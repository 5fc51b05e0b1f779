"""A LangGraph graph whose model node is a real LangChain provider class (`langchain-openai`'s
`ChatOpenAI`) against recorded OpenAI streams on loopback (`tests.llm.openai_replay`), in a
thread on a real worker and gateway: the openai SDK's and LangChain's own stream parsing feed
the node's callbacks (`agents.graph_nodes`), and their tokens reach the client while the
provider is still streaming; the recorded tool call is a `tool_call` interrupt bound to its
id; the approved tool runs once and the model hears its result; a provider error and a stream
cut short, each retried by Temporal, show the text once."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send
from pydantic import SecretStr
from temporalio import activity
from temporalio.client import Client

from ag_ui_temporal.agents.graph_nodes import _Tokens
from ag_ui_temporal.agents.graphs import ask_tool_call, register_graph
from ag_ui_temporal.agents.registry import registered_graph
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import thread_workflow_id
from tests.agui import Frame, finished, frames, interrupts, resolve, run, run_body, texts, types
from tests.conftest import serve_gateway
from tests.gateway.test_streaming import is_type, read_until
from tests.llm.openai_replay import (
    TEXT,
    TEXT_REPLY,
    TOOL_ARGS,
    TOOL_CALL,
    TOOL_NAME,
    Fault,
    OpenAIReplay,
    serve,
)

NAME = "langgraph-openai"
URL = f"/agents/{NAME}"
ASK = "What is the capital of the UK?"
CALL_ID = "call_ZR5UUuTt3pf61kjwAJIYdVMj"
"""The id of the recorded `get_capital` call (`tool_call.sse`)."""
MODEL_NODE = f"{NAME}.model"
"""The model node's activity (`temporalio-langgraph` names it `graph.node`)."""
RAN: Counter[tuple[str, str]] = Counter()
"""Runs of the tool by thread and call id (the node's activity runs in this process's worker;
every thread here replays the same recorded call id)."""
CHAT: dict[str, Runnable[Any, Any]] = {}
"""The node's chat model, bound to the module's loopback endpoint (its port is the fixture's)."""


@tool(TOOL_NAME)
def get_capital(country: str) -> str:
    """The capital city of a country."""
    raise NotImplementedError  # run by `capital_node`, after a person approves


async def call_model(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await CHAT["model"].ainvoke(state["messages"])]}


def each_call(state: MessagesState) -> list[Send] | str:
    calls = getattr(state["messages"][-1], "tool_calls", None) or []
    return [Send(TOOL_NAME, call) for call in calls] or END


def capital_node(call: Any) -> dict[str, Any]:
    decision = ask_tool_call(call, tool=get_capital)
    if not decision.approved:
        return {"messages": [ToolMessage(decision.why_not, tool_call_id=call["id"])]}
    RAN[activity.info().workflow_id or "", call["id"]] += 1
    capital = {"UK": "London"}.get(decision.args["country"], "unknown")
    return {"messages": [ToolMessage(capital, tool_call_id=call["id"])]}


def build() -> StateGraph[Any, Any, Any, Any]:
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    graph.add_node("model", call_model, metadata={"execute_in": "activity"})
    graph.add_node(TOOL_NAME, capital_node, metadata={"execute_in": "activity"})  # type: ignore[arg-type]
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", each_call, [TOOL_NAME, END])
    graph.add_edge(TOOL_NAME, "model")
    return graph


@dataclass
class Stack:
    http: httpx.AsyncClient
    replay: OpenAIReplay


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    replay, server = serve()
    # max_retries=0: the openai SDK does not retry a failed request itself; Temporal retries
    # the node's activity (a new attempt, streamed anew), which is what the faults below test
    model = ChatOpenAI(  # by field name (`model`, `base_url`, `api_key` are their aliases)
        model_name="gpt-4o-mini",
        openai_api_base=replay.base_url,
        openai_api_key=SecretStr("test"),
        max_retries=0,
    )
    CHAT["model"] = model.bind_tools([get_capital])
    if registered_graph(NAME) is None:
        register_graph(build(), name=NAME, description="The tests' graph on ChatOpenAI.")
    queue = f"langgraph-openai-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / queue, task_queue=queue)
    try:
        async with (
            build_worker(client, settings, executor),
            serve_gateway(settings, client) as url,
            httpx.AsyncClient(base_url=url, timeout=60) as http,
        ):
            yield Stack(http, replay)
    finally:
        server.shutdown()
        server.server_close()


def events_of(seen: list[Frame]) -> list[dict[str, Any]]:
    return [frame.event for frame in seen if frame.data is not None]


def text_reaches(length: int, shown: str) -> Callable[[Frame], bool]:
    """Whether the text read so far (`shown`, then the frames seen since) is `length` long."""
    read = [shown]

    def reached(frame: Frame) -> bool:
        if frame.data is not None and frame.data["type"] == "TEXT_MESSAGE_CONTENT":
            read.append(frame.data["delta"])
        return len("".join(read)) >= length

    return reached


def args_of(events: list[dict[str, Any]]) -> list[str]:
    return [e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS"]


async def hydrated_texts(http: httpx.AsyncClient, thread_id: str) -> list[str]:
    """The assistant's text parts as a client that opens the thread reads them."""
    hydrated = (await http.get(URL, params={"threadId": thread_id})).json()
    parts = [p for m in hydrated["messages"] if m["role"] == "assistant" for p in m["parts"]]
    return [p["content"] for p in parts if p["type"] == "text"]


async def model_attempts(client: Client, thread_id: str) -> list[int]:
    """The attempt that completed each run of the model node's activity."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    ours = {
        e.event_id
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == MODEL_NODE
    }
    return [
        e.activity_task_started_event_attributes.attempt
        for e in history.events
        if e.activity_task_started_event_attributes.scheduled_event_id in ours
    ]


async def test_chat_openai_streams_asks_and_runs_the_approved_tool_once(
    stack: Stack, client: Client, thread_id: str
):
    replay = stack.replay
    before = len(replay.requests)
    # the call's stream is held after its id and first argument pieces: they reach the
    # client while the provider has not sent the rest (streamed, not shown at the end)
    release = replay.pause(after=3)
    try:
        async with stack.http.stream("POST", URL, json=run_body(thread_id, ASK)) as response:
            asking = frames(response)
            seen = await read_until(asking, is_type("TOOL_CALL_ARGS"))
            release.set()
            rest = [frame async for frame in asking]
    finally:
        release.set()
    assert "TOOL_CALL_START" in types(events_of(seen))
    assert "RUN_FINISHED" not in types(events_of(seen))
    asked_run = events_of(seen + rest)
    [start] = [e for e in asked_run if e["type"] == "TOOL_CALL_START"]
    assert (start["toolCallId"], start["toolCallName"]) == (CALL_ID, TOOL_NAME)
    pieces = args_of(asked_run)
    assert len(pieces) >= 2 and json.loads("".join(pieces)) == TOOL_ARGS
    [asked] = interrupts(asked_run)
    assert (asked["reason"], asked["toolCallId"]) == ("tool_call", CALL_ID)
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert (binding["kind"], binding["originalArgs"]) == ("tool-approval", TOOL_ARGS)
    assert RAN[thread_workflow_id(thread_id), CALL_ID] == 0
    [first] = replay.requests[before:]
    assert [t["function"]["name"] for t in first.body["tools"]] == [TOOL_NAME]
    assert first.body["messages"] == [{"role": "user", "content": ASK}]

    # approved: the tool runs; the model's answer is held after its first words, while a
    # second client joins the run from its start
    release = replay.pause(after=3)
    body = run_body(thread_id, resume=[resolve(asked, {"approved": True})])
    try:
        async with stack.http.stream("POST", URL, json=body) as response:
            answering = frames(response)
            seen = await read_until(answering, is_type("TEXT_MESSAGE_CONTENT"))
            params = {"threadId": thread_id, "runId": body["runId"], "offset": "-1"}
            async with stack.http.stream("GET", URL, params=params) as joined:
                release.set()
                joined_run = await read_until(frames(joined), is_type("RUN_FINISHED"))
            rest = [frame async for frame in answering]
    finally:
        release.set()
    done = events_of(seen + rest)
    assert finished(done)["outcome"] == {"type": "success"}
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == (CALL_ID, "London")
    assert texts(done) == TEXT_REPLY and types(done).count("TEXT_MESSAGE_CONTENT") >= 2
    assert types(done).count("TEXT_MESSAGE_START") == 1
    assert texts(events_of(joined_run)) == TEXT_REPLY
    assert await hydrated_texts(stack.http, thread_id) == [TEXT_REPLY]
    assert RAN[thread_workflow_id(thread_id), CALL_ID] == 1
    # the model's second request (served from the recording) carries the call and its result
    assert [r.replayed for r in replay.requests[before:]] == [TOOL_CALL, TEXT]
    call, answer = replay.requests[-1].body["messages"][-2:]
    assert [(c["id"], c["function"]["name"]) for c in call["tool_calls"]] == [(CALL_ID, TOOL_NAME)]
    assert answer == {"role": "tool", "tool_call_id": CALL_ID, "content": "London"}

    again = await run(
        stack.http, thread_id, agent=NAME, resume=[resolve(asked, {"approved": True})]
    )
    assert finished(again)["outcome"] == {"type": "success"}  # a duplicated resume: answered
    assert RAN[thread_workflow_id(thread_id), CALL_ID] == 1
    assert len(replay.requests) == before + 2  # the model was not asked again
    assert await model_attempts(client, thread_id) == [1, 1]


async def test_a_provider_error_and_a_cut_stream_are_retried_and_shown_once(
    stack: Stack, client: Client, thread_id: str
):
    """An HTTP 500 fails the model node's first attempt before anything streamed; a stream
    that drops mid-answer fails it after its first words reached the client: Temporal runs
    the node again, the new attempt streams from its first token, and the client reads the
    text once (what was shown, then only what is new)."""
    replay = stack.replay
    replay.fail(Fault(status=500))
    [asked] = interrupts(await run(stack.http, thread_id, agent=NAME, text=ASK))
    assert asked["toolCallId"] == CALL_ID
    refused, called = replay.requests[-2:]
    assert (refused.replayed, called.replayed) == (None, TOOL_CALL)

    replay.fail(Fault(events=3))  # "", "The", " capital", then the connection drops
    cut_short = replay.pause(after=3)  # held until the client saw its first words
    retried = replay.pause(after=4)  # the new attempt's "The", " capital", " of", held too
    body = run_body(thread_id, resume=[resolve(asked, {"approved": True})])
    try:
        async with stack.http.stream("POST", URL, json=body) as response:
            answering = frames(response)
            seen = await read_until(answering, is_type("TEXT_MESSAGE_CONTENT"))
            shown = texts(events_of(seen))
            cut_short.set()
            # the retried attempt streams from its first token: only " of" is new
            seen += await read_until(answering, text_reaches(len("The capital of"), shown))
            retried.set()
            rest = [frame async for frame in answering]
    finally:
        cut_short.set()
        retried.set()
    assert shown and TEXT_REPLY.startswith(shown)  # the first attempt's words were shown
    assert texts(events_of(seen)) == "The capital of"
    done = events_of(seen + rest)
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == TEXT_REPLY
    assert types(done).count("TEXT_MESSAGE_START") == 1
    assert await hydrated_texts(stack.http, thread_id) == [TEXT_REPLY]
    cut, whole = replay.requests[-2:]
    assert (cut.replayed, cut.sent_all, whole.replayed, whole.sent_all) == (
        TEXT,
        False,
        TEXT,
        True,
    )
    assert await model_attempts(client, thread_id) == [2, 2]
    assert RAN[thread_workflow_id(thread_id), CALL_ID] == 1


def test_tool_calls_stream_as_the_nodes_result_numbers_them():
    """Pure: a provider's tool-call chunks may carry their content block's index, as
    `langchain-anthropic`'s do (the text before a call is block 0): the node's deltas number
    the calls 1, 2, ... in the order they began, as the node's result does, else the thread
    pairs a streamed call with no call of the result and starts it twice."""
    tokens = _Tokens(cast(Any, None), cast(Any, None))  # `_tool_delta` publishes nothing
    anthropic = [
        tool_call_chunk(name=TOOL_NAME, args="", id="toolu_a", index=1),
        tool_call_chunk(name=None, args='{"country": ', id=None, index=1),
        tool_call_chunk(name=TOOL_NAME, args="", id="toolu_b", index=3),
        tool_call_chunk(name=None, args='"UK"}', id=None, index=1),
    ]
    assert [tokens._tool_delta(chunk).part for chunk in anthropic] == [1, 1, 2, 1]
    tokens = _Tokens(cast(Any, None), cast(Any, None))
    unindexed = [tool_call_chunk(name=TOOL_NAME, args="{}", id=i, index=None) for i in "xyx"]
    assert [tokens._tool_delta(chunk).part for chunk in unindexed] == [1, 2, 1]
