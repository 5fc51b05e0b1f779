"""The real JS clients against the real gateway: TanStack's `ChatClient` and AG-UI's `HttpAgent`.

Each pause must arrive as an item the client can resolve (TanStack: `generic`,
`canResolve: true`), and resolving it through the client's own API must carry
the run to the end the assistant describes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ag_ui_temporal.demo.offline import PICK_DATE_QUESTION as PICK_QUESTION
from tests.agui import PICK_DATE, STREAMS
from tests.node_clients import requires_node, run_node, streams_of

pytestmark = requires_node

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"
FORM = "File the quarterly report"


async def chat(
    url: str, thread_id: str, *steps: dict[str, Any], tools: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """TanStack's `ChatClient` through `steps`; `tools`: client tools it registers (no
    `execute`), with `persistence` so that a reload hydrates."""
    job: dict[str, Any] = {"url": f"{url}/agents/assistant", "threadId": thread_id}
    if tools:
        job |= {"clientTools": tools, "persistence": True}
    result = await run_node("tanstack_chat.mjs", {**job, "steps": list(steps)})
    snapshots = result["snapshots"]
    STREAMS.extend(streams_of(snapshots))
    for snapshot in snapshots:
        assert snapshot["stepError"] is None, snapshot["stepError"]
    return snapshots


def said(snapshot: dict[str, Any]) -> str:
    """Everything the assistant said, as the client shows it."""
    return " ".join(
        part["content"]
        for message in snapshot["messages"]
        if message["role"] == "assistant"
        for part in message["parts"]
        if part["type"] == "text"
    )


def resolvable(snapshot: dict[str, Any], count: int, reason: str) -> list[dict[str, Any]]:
    items = snapshot["interrupts"]
    assert len(items) == count, items
    for item in items:
        assert (item["kind"], item["canResolve"], item["reason"]) == ("generic", True, reason), item
    return items


def approve(index: int, **payload: Any) -> dict[str, Any]:
    return {"index": index, "payload": {"approved": True, **payload}}


async def test_chat_client_email_approval(gateway_url: str, thread_id: str):
    asked, done = await chat(gateway_url, thread_id, {"send": EMAIL}, {"resolve": [approve(0)]})
    resolvable(asked, 1, "tool_call")
    assert done["error"] is None and done["interrupts"] == []
    assert "Sent the email to ada@example.com" in said(done)


async def test_chat_client_approve_with_edits(gateway_url: str, thread_id: str):
    edited = {"to": "grace@example.com", "subject": "Hi", "body": "hello"}
    asked, done = await chat(
        gateway_url, thread_id, {"send": EMAIL}, {"resolve": [approve(0, editedArgs=edited)]}
    )
    resolvable(asked, 1, "tool_call")
    assert "Sent the email to grace@example.com" in said(done)


async def test_chat_client_parallel_approvals(gateway_url: str, thread_id: str):
    steps = {"resolve": [approve(0), {"index": 1, "cancel": True}, approve(2)]}
    asked, done = await chat(gateway_url, thread_id, {"send": EMAILS}, steps)
    ada, bob, cy = resolvable(asked, 3, "tool_call")
    results = {
        e["toolCallId"]: e["content"] for e in done["events"] if e["type"] == "TOOL_CALL_RESULT"
    }
    # the cancelled call is not run, but answered: the model hears why
    assert sorted(results) == sorted(i["toolCallId"] for i in (ada, bob, cy))
    assert results[bob["toolCallId"]] == "it was cancelled"
    assert "TOOL_CALL_START" not in [e["type"] for e in done["events"]]
    assert "Sent the email to ada@example.com" in said(done)
    assert "Sent the email to cy@example.com" in said(done)
    assert "did not carry out the email to bob@example.com" in said(done)


async def test_chat_client_form_with_a_server_error_then_a_fix(gateway_url: str, thread_id: str):
    bad = {"quarter": "Q3", "year": 1999, "revenue": 10}
    good = {"quarter": "Q3", "year": 2026, "revenue": 10}
    asked, refused, done = await chat(
        gateway_url,
        thread_id,
        {"send": FORM},
        {"resolve": [{"index": 0, "payload": bad}]},
        {"resolve": [{"index": 0, "payload": good}]},
    )
    [form] = resolvable(asked, 1, "input_required")
    assert form["responseSchema"]["required"] == ["quarter", "year", "revenue"]
    [item] = refused["interrupts"]
    assert item["error"]["code"] == "invalid-payload", item  # shown on the item, as TanStack does
    assert done["interrupts"] == [] and "Filed the Q3 2026 quarterly report" in said(done)


@pytest.mark.parametrize(
    ("text", "payload", "expected"),
    [
        (EMAIL, {"approved": True}, "Sent the email to ada@example.com"),
        (
            FORM,
            {"quarter": "Q1", "year": 2027, "revenue": 3.5},
            "Filed the Q1 2027 quarterly report",
        ),
    ],
)
async def test_http_agent_interrupt_and_resume(
    gateway_url: str, thread_id: str, text: str, payload: dict[str, Any], expected: str
):
    result = await run_node(
        "agui_agent.mjs",
        {
            "url": f"{gateway_url}/agents/assistant",
            "threadId": thread_id,
            "steps": [{"send": text}, {"resolve": [{"index": 0, "payload": payload}]}],
        },
    )
    asked, done = result["snapshots"]
    STREAMS.extend(streams_of(result["snapshots"]))
    assert asked["error"] is None and asked["outcome"]["type"] == "interrupt"
    assert len(asked["pendingInterrupts"]) == 1
    assert done["error"] is None and done["runError"] is None
    assert done["outcome"]["type"] == "success" and done["pendingInterrupts"] == []
    assert any(
        expected in (message.get("content") or "")
        for message in done["messages"]
        if message["role"] == "assistant"
    )


DATE = "Pick a date for the meeting"


def posts(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in snapshot["requests"] if r["method"] == "POST"]


async def test_chat_client_answers_a_frontend_tool_and_continues(gateway_url: str, thread_id: str):
    """`pickDate` registered as a TanStack client tool: the run ends with its call, the UI
    answers it with `addToolResult`, and the client continues on its own with a run the
    thread accepts; a reload hydrates the answer."""
    asked, done, reloaded = await chat(
        gateway_url,
        thread_id,
        {"send": DATE},
        {"toolResult": {"date": "2026-12-24"}, "tool": "pickDate"},
        {"reload": True},
        tools=[PICK_DATE],
    )
    assert asked["error"] is None and asked["interrupts"] == []
    [call] = [p for m in asked["messages"] for p in m["parts"] if p["type"] == "tool-call"]
    assert (call["name"], call["input"]) == ("pickDate", {"question": PICK_QUESTION})
    [request] = posts(asked)
    assert [t["name"] for t in request["body"]["tools"]] == ["pickDate"]
    [continued] = posts(done)
    [answer] = [m for m in continued["body"]["messages"] if m["role"] == "tool"]
    assert answer["toolCallId"] == call["id"]
    assert json.loads(answer["content"]) == {"date": "2026-12-24"}
    assert continued["events"][-1]["outcome"] == {"type": "success"}
    assert said(done) == said(reloaded) == "You picked 2026-12-24."


async def test_chat_client_executes_a_frontend_tool(gateway_url: str, thread_id: str):
    """TanStack's `ChatClient` runs the client tool's `execute` (on the thread's `CUSTOM`
    `tool-input-available` event), then continues by itself with the tool's result."""
    result = await run_node(
        "tanstack_chat.mjs",
        {
            "url": f"{gateway_url}/agents/assistant",
            "threadId": thread_id,
            "clientTools": [{**PICK_DATE, "result": {"date": "2026-12-24"}}],
            "steps": [{"send": DATE}],
        },
    )
    [done] = result["snapshots"]
    STREAMS.extend(streams_of(result["snapshots"]))
    assert [e["name"] for e in done["toolExecutions"]] == ["pickDate"]
    assert said(done) == "You picked 2026-12-24."


async def test_http_agent_frontend_tool_round_trip(gateway_url: str, thread_id: str):
    """AG-UI's `HttpAgent` offers `pickDate` in `tools`, gets the call's events and a success,
    and sends the result as a `tool` message in its next run."""
    result = await run_node(
        "agui_agent.mjs",
        {
            "url": f"{gateway_url}/agents/assistant",
            "threadId": thread_id,
            "steps": [
                {"send": DATE, "tools": [PICK_DATE]},
                {"toolResult": {"date": "2027-02-03"}, "tools": [PICK_DATE]},
            ],
        },
    )
    asked, done = result["snapshots"]
    STREAMS.extend(streams_of(result["snapshots"]))
    kinds = [e["type"] for e in asked["events"]]
    assert kinds[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"], kinds
    assert asked["events"][1]["toolCallName"] == "pickDate"
    assert asked["error"] is None and asked["outcome"]["type"] == "success"
    [call] = [c for m in asked["messages"] if m["role"] == "assistant" for c in m["toolCalls"]]
    assert json.loads(call["function"]["arguments"]) == {"question": PICK_QUESTION}
    assert done["error"] is None and done["runError"] is None
    assert done["outcome"]["type"] == "success"
    assert done["messages"][-1]["role"] == "assistant"
    assert done["messages"][-1]["content"] == "You picked 2027-02-03."
