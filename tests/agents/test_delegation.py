"""`agents.delegate` with agents of your own (`FunctionModel`), through the real gateway and
Temporal: every kind of question the inner agent asks becomes an interrupt carrying its
run's `subagentRunId`; the answers, all together, resume the inner run, which may ask
again; an inner run too large to keep waiting ends the run with `RUN_ERROR`."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent, CallDeferred, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio.client import Client

from ag_ui_temporal.agents import ThreadDeps, delegate, register, registered, thread_capabilities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.thread.agents._subagents import (
    MAX_HISTORY_CHARS,
    SUBAGENT_METADATA_KEY,
)
from tests.agui import finished, interrupts, resolve, run, texts
from tests.conftest import serve_gateway

OUTER, INNER = "t-delegator", "t-desk"
PLAN: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "both": [("approveMe", {"n": 1}), ("askWarehouse", {"sku": "A"})],
    "twice": [("approveMe", {"n": 1})],
    "big": [("bigLookup", {})],
}
"""What the inner model calls first, by the word the request starts with."""


def _reply(messages: list[ModelMessage]) -> list[ToolCallPart] | str:
    """The inner model: the planned calls, then once more `approveMe` ("twice"), then a
    sentence of every result it got."""
    prompt = next(
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart)
    )
    word = str(prompt).split()[0]
    returns = [
        p for m in messages if isinstance(m, ModelRequest) for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]  # fmt: skip
    if not returns:
        return [ToolCallPart(name, args) for name, args in PLAN[word]]
    if word == "twice" and len(returns) == 1:
        return [ToolCallPart("approveMe", {"n": 2})]
    if word == "big" and len(returns) == 1:
        return [ToolCallPart("approveMe", {"n": 3})]
    return "; ".join(f"{p.tool_name}={json.dumps(p.content)}" for p in returns)


async def _inner_stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
    reply = _reply(messages)
    if isinstance(reply, str):
        yield reply
        return
    for index, call in enumerate(reply):
        yield {index: DeltaToolCall(call.tool_name, call.args_as_json_str())}


async def _outer_stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
    last = messages[-1]
    returns = (
        [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if isinstance(last, ModelRequest)
        else []
    )
    if returns:
        yield f"desk: {returns[0].content}"
        return
    prompt = next(p.content for p in last.parts if isinstance(p, UserPromptPart))
    call: DeltaToolCalls = {0: DeltaToolCall("desk", json.dumps({"request": prompt}))}
    yield call


async def _unused(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("streamed only")])


def build_agents() -> Agent[ThreadDeps, str]:
    inner = Agent(
        FunctionModel(_unused, stream_function=_inner_stream),
        name=INNER,
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(),
    )

    @inner.tool(requires_approval=True)
    async def approveMe(ctx: RunContext[ThreadDeps], n: int) -> str:
        return f"approved {n}"

    @inner.tool_plain
    async def askWarehouse(sku: str) -> str:
        raise CallDeferred(metadata={"responseSchema": {"type": "object"}})

    @inner.tool_plain
    async def bigLookup() -> str:
        return "x" * (MAX_HISTORY_CHARS + 1)

    return Agent(
        FunctionModel(_unused, stream_function=_outer_stream),
        name=OUTER,
        deps_type=ThreadDeps,
        tools=[delegate(inner, name="desk", description="Hand the request to the desk.")],
        capabilities=thread_capabilities(),
    )


@pytest.fixture(scope="module")
async def http(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    if registered(OUTER) is None:
        register(build_agents())
    name = f"delegation-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


async def test_every_kind_of_question_is_asked_for_the_inner_run(
    http: httpx.AsyncClient, thread_id: str
):
    asked = interrupts(await run(http, thread_id, agent=OUTER, text="both please"))
    assert [i["reason"] for i in asked] == ["tool_call", "input_required"]
    assert len({i["subagentRunId"] for i in asked}) == 1  # one inner run asks both
    assert [i["metadata"][SUBAGENT_METADATA_KEY]["toolName"] for i in asked] == [
        "approveMe",
        "askWarehouse",
    ]
    answers = [resolve(asked[0], {"approved": True}), resolve(asked[1], {"stock": 4})]
    done = await run(http, thread_id, agent=OUTER, resume=answers)
    assert finished(done)["outcome"] == {"type": "success"}
    assert texts(done) == 'desk: approveMe="approved 1"; askWarehouse={"stock": 4}'


async def test_a_resumed_inner_run_may_ask_again(http: httpx.AsyncClient, thread_id: str):
    [first] = interrupts(await run(http, thread_id, agent=OUTER, text="twice please"))
    again = await run(http, thread_id, agent=OUTER, resume=[resolve(first, {"approved": True})])
    [second] = interrupts(again)
    assert second["metadata"][SUBAGENT_METADATA_KEY]["arguments"] == {"n": 2}
    assert second["subagentRunId"] == first["subagentRunId"]  # the same inner conversation
    assert second["toolCallId"] == first["toolCallId"]  # still the outer call
    done = await run(http, thread_id, agent=OUTER, resume=[resolve(second, {"approved": False})])
    assert texts(done).startswith('desk: approveMe="approved 1"; approveMe=')
    assert "rejected" in texts(done)


async def test_an_inner_run_too_large_to_wait_ends_the_run(http: httpx.AsyncClient, thread_id: str):
    events = await run(http, thread_id, agent=OUTER, text="big please")
    failed = events[-1]
    assert (failed["type"], failed["code"]) == ("RUN_ERROR", "RUN_FAILED"), failed
    assert failed["message"].startswith("the agent cannot ask this: sub-agent 't-desk' asks")
    assert f"over the {MAX_HISTORY_CHARS}" in failed["message"]
