"""LangGraph's other APIs in threads (docs/agents.md#langgraph-graphs), on one real worker and
gateway: an `@entrypoint` (the functional API), its `@task`s activities, asks about each tool
call and runs the approved ones once with their edits, asks in its own body, and remembers its
`previous` across continue-as-new; a `StateGraph` runs its tools in LangGraph's prebuilt
`ToolNode` behind an approval node (`tests/agents/langgraph_apis.py`). Every workflow task
replays the thread from its history (no cache), and each history replays on a new worker."""

from __future__ import annotations

import asyncio
import importlib
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import Client
from temporalio.worker import Replayer

from ag_ui_temporal.agents.graphs import GraphsPlugin
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.worker_plugin import SANDBOX
from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.contract.audit import AUDIT_APPEND_ACTIVITY as AUDIT
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow
from tests.agui import error, finished, interrupts, resolve, run, texts, types
from tests.conftest import histories, serve_gateway

GRAPHS = "tests.agents.langgraph_apis"
HISTORY_LIMIT = 60
"""Threads continue as new after this many history events: a few runs each."""


@pytest.fixture(scope="module")
async def apis(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    name = f"langgraph-apis-{uuid.uuid4().hex}"
    settings = Settings(
        data_dir=data_dir / name,
        task_queue=name,
        agent_modules=[GRAPHS],
        thread_history_limit=HISTORY_LIMIT,
        worker_max_cached_workflows=0,  # every workflow task replays, as a restarted worker's
    )
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


async def replay(client: Client, thread_id: str) -> None:
    """A worker that never saw the thread replays it to the same decisions."""
    importlib.import_module(GRAPHS)
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    await Replayer(
        workflows=[ThreadWorkflow],
        data_converter=DATA_CONVERTER,
        workflow_runner=SANDBOX,
        plugins=[PydanticAIPlugin(), GraphsPlugin()],
    ).replay_workflow(history)


def ran(call_id: str) -> list[str]:
    from tests.agents.langgraph_apis import RAN

    return [text for ran_id, text in RAN if ran_id == call_id]


async def activities(client: Client, thread_id: str) -> list[str]:
    """The activities the thread scheduled, in order, over every run it continued as new
    through (`HISTORY_LIMIT` events each: how many runs a conversation takes depends on how
    many workflow tasks a busy machine made it take)."""
    return [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for history in reversed(await histories(client, thread_id))  # the oldest run first
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    ]


async def audit_sends(client: Client, thread_id: str) -> tuple[int, int]:
    """The thread's audit sends: how many were scheduled, how many have completed (a local
    one, in the task that made the change, is in the history once it completed)."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    sent = {
        event.event_id
        for event in history.events
        if event.activity_task_scheduled_event_attributes.activity_type.name == AUDIT
    }
    done = [
        event
        for event in history.events
        if event.activity_task_completed_event_attributes.scheduled_event_id in sent
    ]
    local = [
        event
        for event in history.events
        if event.marker_recorded_event_attributes.marker_name == "core_local_activity"
        and AUDIT
        in event.marker_recorded_event_attributes.details["data"].payloads[0].data.decode()
    ]
    return len(sent) + len(local), len(done) + len(local)


TOOL_ACTIVITIES = {
    "notes-functional": "tests.agents.langgraph_apis.run_tool",
    "notes-toolnode": "notes-toolnode.tools",
}
"""Where each agent's tool runs: a `@task`'s activity, the `ToolNode`'s."""


def results(events: list[dict[str, Any]]) -> dict[str, str]:
    return {e["toolCallId"]: e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"}


@pytest.mark.parametrize("agent", ["notes-functional", "notes-toolnode"])
async def test_each_call_is_asked_and_only_approved_ones_run_once_with_edits(
    apis: httpx.AsyncClient, client: Client, thread_id: str, agent: str
):
    events = await run(apis, thread_id, agent=agent, text="note a b")
    started = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [e["toolCallName"] for e in started] == ["add_note", "add_note"]
    first_id, second_id = (e["toolCallId"] for e in started)
    [first] = interrupts(events)
    assert (first["reason"], first["toolCallId"], first["message"]) == (
        "tool_call",
        first_id,
        "Note a?",
    )
    binding = first["metadata"]["tanstack:interruptBinding"]
    assert (binding["kind"], binding["originalArgs"]) == ("tool-approval", {"text": "a"})

    edited = [resolve(first, {"approved": True, "editedArgs": {"text": "A!"}})]
    middle = await run(apis, thread_id, agent=agent, resume=edited)
    [second] = interrupts(middle)
    assert (second["toolCallId"], second["message"]) == (second_id, "Note b?")
    rejected = [resolve(second, {"approved": False})]
    done = await run(apis, thread_id, agent=agent, resume=rejected)
    assert finished(done)["outcome"] == {"type": "success"}
    # the entrypoint runs an approved call before it asks about the next; the graph asks first
    written = results(middle) | results(done)
    assert written == {first_id: "noted A!", second_id: "you rejected it"}
    assert "TOOL_CALL_START" not in types(done)
    assert texts(done) == "Done: noted A!; you rejected it."
    assert (ran(first_id), ran(second_id)) == (["A!"], [])

    again = await run(apis, thread_id, agent=agent, resume=rejected)  # a duplicated resume
    assert finished(again)["outcome"] == {"type": "success"}
    assert (ran(first_id), ran(second_id)) == (["A!"], [])
    assert (await activities(client, thread_id)).count(TOOL_ACTIVITIES[agent]) == 1
    await replay(client, thread_id)


async def test_an_entrypoint_asks_in_its_body_and_remembers_across_continue_as_new(
    apis: httpx.AsyncClient, client: Client, thread_id: str
):
    [asked] = interrupts(await run(apis, thread_id, agent="notes-functional", text="color"))
    assert (asked["message"], asked["responseSchema"]["enum"]) == ("Which color?", ["red", "blue"])
    wrong = await run(apis, thread_id, agent="notes-functional", resume=[resolve(asked, "green")])
    assert error(wrong)["code"] == "INVALID_PAYLOAD"
    # The run's audit send ends before the answer comes, and the answer's run completes its
    # update in one workflow task: the thread sends the next records after it (a send started
    # in that task replayed in the other order, and the thread took no further task).
    for _ in range(600):  # polls a state (30 s at most), no timing
        if await audit_sends(client, thread_id) == (1, 1):
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the run's audit send never completed")
    done = await run(apis, thread_id, agent="notes-functional", resume=[resolve(asked, "blue")])
    assert texts(done) == "You chose blue."

    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    first_run = (await handle.describe()).run_id
    for said in range(2, 20):  # `previous` holds what it saved: the conversation so far
        done = await run(apis, thread_id, agent="notes-functional", text="hello")
        assert texts(done) == f"You said {said} things."
        if (await handle.describe()).run_id != first_run:
            break
    else:
        raise AssertionError("the thread never continued as new")
    done = await run(apis, thread_id, agent="notes-functional", text="again")
    assert texts(done) == f"You said {said + 1} things."
    await replay(client, thread_id)
