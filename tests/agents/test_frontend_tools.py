"""Frontend tools (`RunAgentInput.tools`) on the demo assistant, over plain HTTP: the run that
calls the client's tool ends with the call's events, and the result the client sends in its
next run continues the agent, also when the worker that made the call is gone."""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from temporalio.client import Client

from ag_ui_temporal.settings import Settings
from tests.agui import PICK_DATE, finished, interrupts, run, texts, thread_state, types
from tests.test_restarts import start_stack

ASK = "Pick a date for the meeting"
EMAIL = "Send an email to ada@example.com saying hi"


def tool_result(call_id: str, result: dict[str, Any]) -> dict[str, Any]:
    """The client's answer to its own tool, as a `tool` message of its next run."""
    content = json.dumps(result)
    return {
        "id": f"tool-{uuid.uuid4().hex[:8]}",
        "role": "tool",
        "toolCallId": call_id,
        "content": content,
    }


def the_call(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's one client tool call: its events in order, then a plain success."""
    kinds = types(events)
    assert kinds[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"], kinds
    start, args = events[1], events[2]
    assert start["toolCallName"] == "pickDate"
    assert json.loads(args["delta"]) == {"question": "Which date works for you?"}
    assert finished(events)["outcome"] == {"type": "success"}
    return start


async def test_a_frontend_tool_answered_across_a_worker_restart(
    client: Client,
    data_dir: Path,
    executor: ThreadPoolExecutor,
    thread_id: str,
    own_store: SecretStr,
):
    settings = Settings(
        data_dir=data_dir / "client-tools",
        task_queue=f"client-tools-{uuid.uuid4().hex}",
        database_url=own_store,
    )
    async with AsyncExitStack() as first:
        http = await start_stack(first, client, settings, executor)
        call = the_call(await run(http, thread_id, text=ASK, tools=[PICK_DATE]))

    # The worker and gateway that made the call are gone; new ones take the result.
    async with AsyncExitStack() as second:
        http = await start_stack(second, client, settings, executor)
        answer = tool_result(call["toolCallId"], {"date": "2026-12-24"})
        done = await run(http, thread_id, messages=[answer], tools=[PICK_DATE])
        hydrated = (await http.get("/agents/assistant", params={"threadId": thread_id})).json()
        state = await thread_state(client, thread_id)  # a query needs a worker

    assert texts(done) == "You picked 2026-12-24."
    assert finished(done)["outcome"] == {"type": "success"}
    assert [m["role"] for m in state.messages] == ["user", "assistant", "tool", "assistant"]
    said = [p for m in hydrated["messages"] if m["role"] == "assistant" for p in m["parts"]]
    assert [p["content"] for p in said if p["type"] == "text"] == ["You picked 2026-12-24."]


async def test_a_cancelled_pick_and_a_stray_result(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """The dialog cancelled: the agent hears it. A result sent again, or for a call nobody
    made, starts nothing and is not kept."""
    call = the_call(await run(http, thread_id, text=ASK, tools=[PICK_DATE]))
    cancelled = tool_result(call["toolCallId"], {"cancelled": True})
    done = await run(http, thread_id, messages=[cancelled], tools=[PICK_DATE])
    assert texts(done) == "You did not pick a date."
    kept = len((await thread_state(client, thread_id)).messages)

    again = await run(http, thread_id, messages=[cancelled], tools=[PICK_DATE])
    stray = tool_result("call_nobody", {"date": "2027-01-01"})
    ignored = await run(http, thread_id, messages=[stray], tools=[PICK_DATE])
    for events in (again, ignored):
        assert texts(events) == "" and finished(events)["outcome"] == {"type": "success"}
    assert len((await thread_state(client, thread_id)).messages) == kept


async def test_a_new_message_instead_of_the_answer(http: httpx.AsyncClient, thread_id: str):
    """The user writes on instead of answering the client's tool: the run ends normally, and
    the unanswered call does not wedge the thread (the next request is served)."""
    the_call(await run(http, thread_id, text=ASK, tools=[PICK_DATE]))
    instead = await run(http, thread_id, text="Never mind")
    assert finished(instead)["outcome"] == {"type": "success"} and texts(instead)
    [asked] = interrupts(await run(http, thread_id, text=EMAIL))
    assert asked["reason"] == "tool_call"
