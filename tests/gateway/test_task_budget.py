"""Every input at its configured maximum, through the real gateway and worker: no workflow
task of the thread fails or times out, and the longest task it took is reported (Temporal's
deadlock timeout is 2 s per task; a task near it bricks a thread on a loaded machine).

The durations are the server's clocks from a task's start to its completion, printed with
`-s`; they are not asserted (a noisy machine), failures and timeouts are.
"""

from __future__ import annotations

from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.workflows.contract import MAX_INTERRUPTS_PER_RUN, thread_workflow_id
from tests.agui import finished, interrupts, new_id, resolve, run, user

LIMITS = Settings()
"""The session gateway's limits: the defaults."""
LONGEST: dict[str, float] = {}
"""Seconds of the longest workflow task, by scenario."""


async def _tasks(client: Client, thread_id: str) -> list[float]:
    """The thread's workflow tasks, in seconds each; asserts none failed or timed out."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    started: dict[int, float] = {}
    durations: list[float] = []
    async for event in handle.fetch_history_events():
        kind, at = event.event_type, event.event_time.ToDatetime().timestamp()
        assert kind not in (
            EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
            EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
        ), event
        if kind == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            started[event.event_id] = at
        elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            attributes = event.workflow_task_completed_event_attributes
            durations.append(at - started[attributes.started_event_id])
    return durations


async def _report(client: Client, scenario: str, thread_id: str) -> None:
    durations = await _tasks(client, thread_id)
    LONGEST[scenario] = max(durations)
    print(f"\nlongest workflow task, {scenario}: {LONGEST[scenario] * 1000:.0f} ms")


async def test_the_longest_message_naming_thousands_of_addresses(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    filler = "a@b.c "
    text = "email " + filler * ((LIMITS.max_string_length - 6) // len(filler))
    events = await run(http, thread_id, text=text)
    assert finished(events)["outcome"] == {"type": "success"}
    await _report(client, "a 100,000-character message of addresses", thread_id)


async def test_the_most_calls_one_run_may_ask_about_then_one_resume_of_all(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    addresses = ", ".join(f"p{i}@example.com" for i in range(MAX_INTERRUPTS_PER_RUN))
    asked = interrupts(await run(http, thread_id, text=f"Send emails to {addresses}"))
    assert len(asked) == MAX_INTERRUPTS_PER_RUN
    answers = [resolve(interrupt, {"approved": True}) for interrupt in asked]
    done = await run(http, thread_id, resume=answers)
    assert finished(done)["outcome"] == {"type": "success"}
    assert [e["type"] for e in done].count("TOOL_CALL_RESULT") == MAX_INTERRUPTS_PER_RUN
    await _report(client, f"{MAX_INTERRUPTS_PER_RUN} calls asked, then approved", thread_id)


async def test_the_most_messages_state_and_tools_in_one_run(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    depth = LIMITS.max_json_depth - 2  # the state object and its key count as levels too
    nested: Any = "x"
    for _ in range(depth):
        nested = [nested]
    room = LIMITS.max_payload_bytes - 2_000  # the nesting and the keys
    state = {"deep": nested, "wide": {f"k{i}": "v" * 20 for i in range(room // 30)}}
    message_text = "m" * 900  # 1,000 messages of ~1 KB: under the run's message budget
    messages = [user(message_text) for _ in range(LIMITS.max_messages - 1)]
    tool = {
        "description": "a client tool",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    }
    tools = [{"name": f"tool{i}", **tool} for i in range(100)]
    body = {
        "threadId": thread_id,
        "runId": new_id(),
        "messages": [*messages, user("File the quarterly report")],
        "state": state,
        "tools": tools,
    }
    response = await http.post("/agents/assistant", json=body)
    assert response.status_code == 200, response.text
    assert '"RUN_FINISHED"' in response.text
    await _report(client, "1,000 messages, a full state, 100 client tools", thread_id)
