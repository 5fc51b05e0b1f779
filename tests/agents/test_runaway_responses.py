"""A response that asks too much, and a run that makes its thread's workflow task fail, through
a real worker and gateway: neither bricks the thread.

- A model response with more tool calls than `max_interrupts_per_run` ends the run
  `LIMIT_EXCEEDED` before any call past the limit is shown and before any call runs; one
  past `MAX_TOOL_CALLS_PER_RESPONSE` is refused inside the model activity itself.
- The demo's sentence naming 15,000 addresses is answered with a sentence.
- A run whose workflow task keeps failing ends `RUN_FAILED`; the thread is reset to before
  it and takes the next message (more in `test_stuck_threads.py`).
"""

from __future__ import annotations

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
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.agents import IN_WORKFLOW, ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.agents.streaming import TOO_MANY_TOOL_CALLS
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import (
    MAX_INTERRUPTS_PER_RUN,
    MAX_TOOL_CALLS_PER_RESPONSE,
    thread_workflow_id,
)
from tests.agents.test_stuck_threads import quick_to_unstick
from tests.agui import finished, interrupts, run, texts, types
from tests.conftest import serve_stack

NOTED: Counter[str] = Counter()
"""Executions of `note` by tool call id: a refused response runs none."""


def _prompt(messages: list[ModelMessage]) -> str:
    """The newest user prompt (one the thread never answered may stand before it)."""
    prompts = [part for part in messages[-1].parts if isinstance(part, UserPromptPart)]
    return str(prompts[-1].content) if prompts else ""


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in last.parts):
        yield "noted"
        return
    words = _prompt(messages).split()
    if words[:1] == ["flood"]:  # "flood N": N calls of `note` in one response
        for index in range(int(words[1])):
            call_id = f"call_{uuid.uuid4().hex}"
            yield {index: DeltaToolCall("note", json.dumps({"n": index}), tool_call_id=call_id)}
    elif words[:1] == ["poison"]:
        yield {0: DeltaToolCall("poison", "{}", tool_call_id=f"call_{uuid.uuid4().hex}")}
    else:
        yield "hello"


def build_agent() -> Agent[ThreadDeps, str]:
    agent = Agent(
        FunctionModel(stream_function=_stream),
        name="t-runaway",
        deps_type=ThreadDeps,
        capabilities=thread_capabilities(model_attempts=2),
    )

    @agent.tool
    async def note(ctx: RunContext[ThreadDeps], n: int) -> str:
        NOTED[ctx.tool_call_id or ""] += 1
        return f"noted {n}"

    @agent.tool_plain(metadata=IN_WORKFLOW)
    async def poison() -> str:
        # runs in workflow code: an exception that is no Temporal failure fails the task,
        # and every retry of the task fails the same way
        raise RuntimeError("a bug in the agent's workflow code")

    return agent


def _register() -> None:
    if registered("t-runaway") is None:
        register(build_agent())


@dataclass
class Stack:
    http: httpx.AsyncClient
    client: Client


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    _register()
    name = f"runaway-{uuid.uuid4().hex[:8]}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    async with serve_stack(client, settings, executor, request_timeout=120) as http:
        yield Stack(http, client)


async def _history_kinds(client: Client, thread_id: str) -> list[EventType.ValueType]:
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    return [event.event_type async for event in handle.fetch_history_events()]


def _started_calls(events: list[dict[str, Any]]) -> int:
    return types(events).count("TOOL_CALL_START")


async def test_a_response_over_the_runs_limit_ends_it_before_any_call_runs(
    stack: Stack, thread_id: str
):
    asked = MAX_INTERRUPTS_PER_RUN + 10
    events = await run(stack.http, thread_id, agent="t-runaway", text=f"flood {asked}")
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "LIMIT_EXCEEDED"
    assert _started_calls(events) <= MAX_INTERRUPTS_PER_RUN  # none past the limit is shown
    assert "TOOL_CALL_END" not in types(events)
    assert sum(NOTED.values()) == 0
    # the thread goes on, and nothing of the refused response is in its transcript
    after = await run(stack.http, thread_id, agent="t-runaway", text="hi")
    assert finished(after)["outcome"] == {"type": "success"}
    snapshot = next(e for e in after if e["type"] == "MESSAGES_SNAPSHOT")
    assert not [m for m in snapshot["messages"] if m.get("toolCalls")]
    kinds = await _history_kinds(stack.client, thread_id)
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds


async def test_a_flood_of_calls_stops_in_the_model_activity(stack: Stack, thread_id: str):
    asked = MAX_TOOL_CALLS_PER_RESPONSE * 3
    events = await run(stack.http, thread_id, agent="t-runaway", text=f"flood {asked}")
    assert events[-1]["code"] == "LIMIT_EXCEEDED"
    assert str(MAX_TOOL_CALLS_PER_RESPONSE) in events[-1]["message"]
    assert _started_calls(events) <= MAX_INTERRUPTS_PER_RUN
    handle = stack.client.get_workflow_handle(thread_workflow_id(thread_id))
    failures = [
        event.activity_task_failed_event_attributes.failure
        async for event in handle.fetch_history_events()
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
    ]
    # one attempt (non-retryable), refused for its calls: nothing retried the flood
    assert [f.application_failure_info.type for f in failures] == [TOO_MANY_TOOL_CALLS]
    after = await run(stack.http, thread_id, agent="t-runaway", text="hi")
    assert texts(after) == "hello"


async def test_the_demo_answers_a_sentence_naming_thousands_of_addresses(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    text = "email " + "a@b.c " * 15_000  # 90 KB, under the message limits
    events = await run(http, thread_id, text=text)
    assert finished(events)["outcome"] == {"type": "success"}
    assert "TOOL_CALL_START" not in types(events)
    assert f"at most {MAX_INTERRUPTS_PER_RUN} emails" in texts(events)
    kinds = await _history_kinds(client, thread_id)
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds
    # a sentence within the limit still asks about each call
    asked = await run(http, thread_id, text="Send emails to ada@example.com and bo@example.com")
    assert len(interrupts(asked)) == 2


@pytest.fixture
async def quick(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    """A stack of its own whose threads' tasks time out soon: a failing task is tried again
    as its timeout ends, and the gateway looks often (the module's stack keeps Temporal's
    10 s for its floods, whose tasks are long)."""
    _register()
    name = f"runaway-quick-{uuid.uuid4().hex[:8]}"
    settings = quick_to_unstick(data_dir / name, name)
    async with serve_stack(client, settings, executor, request_timeout=120) as http:
        yield Stack(http, client)


async def test_a_run_that_keeps_failing_its_task_ends_and_the_thread_goes_on(
    quick: Stack, thread_id: str
):
    first = await run(quick.http, thread_id, agent="t-runaway", text="hi")
    assert texts(first) == "hello"

    stuck = await run(quick.http, thread_id, agent="t-runaway", text="poison")
    assert stuck[-1]["type"] == "RUN_ERROR"
    assert stuck[-1]["code"] == "RUN_FAILED"
    assert "next message" in stuck[-1]["message"]
    assert types(stuck).count("RUN_STARTED") == 1

    after = await run(quick.http, thread_id, agent="t-runaway", text="hi again")
    assert finished(after)["outcome"] == {"type": "success"}
    assert texts(after) == "hello"
    snapshot = next(e for e in after if e["type"] == "MESSAGES_SNAPSHOT")
    said = [m.get("content") for m in snapshot["messages"] if m["role"] == "user"]
    assert said == ["hi", "hi again"]  # the dropped run left nothing behind
