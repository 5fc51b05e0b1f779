"""TanStack-native tool approvals, end to end: the real `@tanstack/ai-client`
ChatClient (tests/node) against the real gateway and Temporal, registered tools showing
`tool-approval` items and unregistered ones `generic` items, and threads with tool
approvals replaying. How an interrupt is bound: test_tool_approval_bindings.py; the
TypeScript definitions: test_tool_definitions_drift.py.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import Client
from temporalio.worker import Replayer

from ag_ui_temporal.demo.tools import SEND_EMAIL, TOOLS, approval_schema
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow
from tests.agui import STREAMS, cancel, interrupts, resolve, run, thread_state
from tests.effects import EffectLog
from tests.gateway.approval_tools import ADA, EDITED, EMAIL, EMAILS, binding_of
from tests.node_clients import requires_node, run_node

# --------------------------------------------------------------------------
# The real ChatClient against the real gateway and Temporal.
# --------------------------------------------------------------------------


async def chat(
    gateway_url: str, thread_id: str, tools: list[str], *steps: dict[str, Any]
) -> list[dict[str, Any]]:
    job = {
        "url": f"{gateway_url}/agents/assistant",
        "threadId": thread_id,
        "tools": tools,
        "steps": list(steps),
    }
    result = await run_node("tool_approval_chat.mjs", job)
    for step in result["steps"]:
        STREAMS.extend(request["events"] for request in step["requests"] if request["events"])
        assert step["stepError"] is None, step["stepError"]
        assert step["error"] is None, step["error"]
        assert step["interruptErrors"] == [], step["interruptErrors"]
    return result["steps"]


def results(step: dict[str, Any]) -> list[str]:
    """toolCallIds of the TOOL_CALL_RESULTs (in resume order: TanStack sorts it by interrupt id)."""
    return [e["toolCallId"] for e in step["events"] if e["type"] == "TOOL_CALL_RESULT"]


def result_contents(step: dict[str, Any]) -> dict[str, str]:
    """Each TOOL_CALL_RESULT's content by toolCallId: a rejected call gets one too, its
    content the reason the model hears (providers need a result for every call); a resumed
    run never starts a call again."""
    assert "TOOL_CALL_START" not in [e["type"] for e in step["events"]], step["events"]
    return {
        e["toolCallId"]: e["content"] for e in step["events"] if e["type"] == "TOOL_CALL_RESULT"
    }


REJECTED = "you rejected it"


def said(step: dict[str, Any]) -> str:
    return "".join(e["delta"] for e in step["events"] if e["type"] == "TEXT_MESSAGE_CONTENT")


def resumed_with(step: dict[str, Any]) -> list[dict[str, Any]]:
    """The `resume` entries of the one continuation request the client sent."""
    [request] = step["requests"]
    return request["body"]["resume"]


def sent_to(outbox: EffectLog, tool_call_id: str) -> list[str]:
    return [e["args"]["to"] for e in outbox.effects("sendEmail") if e["key"] == tool_call_id]


def approvals(step: dict[str, Any], count: int) -> list[dict[str, Any]]:
    items = step["interrupts"]
    assert [(i["kind"], i["canResolve"], i["reason"]) for i in items] == [
        ("tool-approval", True, "tool_call")
    ] * count, items
    assert all(i["toolCallId"] == i["wireToolCallId"] for i in items), items
    return items


REGISTERED = ["published:*"]


@requires_node
async def test_registered_tool_approve(gateway_url: str, thread_id: str, outbox: EffectLog):
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": True}]},
    )
    [item] = approvals(asked, 1)
    assert item["toolName"] == "sendEmail"
    assert item["originalArgs"] == ADA
    [start] = [e for e in asked["events"] if e["type"] == "TOOL_CALL_START"]
    assert item["toolCallId"] == start["toolCallId"]
    assert resumed_with(done) == [
        {"interruptId": item["id"], "status": "resolved", "payload": {"approved": True}}
    ]
    assert results(done) == [item["toolCallId"]]
    assert done["interrupts"] == []
    assert "Sent the email to ada@example.com" in said(done)
    assert sent_to(outbox, item["toolCallId"]) == ["ada@example.com"]


@requires_node
async def test_registered_tool_reject(gateway_url: str, thread_id: str, outbox: EffectLog):
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": EMAIL},
        {"decide": [{"index": 0, "approve": False}]},
    )
    [item] = approvals(asked, 1)
    assert resumed_with(done)[0]["payload"] == {"approved": False}
    assert result_contents(done) == {item["toolCallId"]: REJECTED}
    assert "did not carry out the email to ada@example.com: you rejected it" in said(done)
    assert sent_to(outbox, item["toolCallId"]) == []


@requires_node
async def test_registered_tool_approve_with_edits(
    gateway_url: str, thread_id: str, outbox: EffectLog
):
    decision = {"index": 0, "approve": True, "editedArgs": EDITED}
    asked, done = await chat(
        gateway_url, thread_id, REGISTERED, {"send": EMAIL}, {"decide": [decision]}
    )
    [item] = approvals(asked, 1)
    assert resumed_with(done)[0]["payload"] == {"approved": True, "editedArgs": EDITED}
    assert results(done) == [item["toolCallId"]]
    assert "Sent the email to grace@example.com" in said(done)
    assert sent_to(outbox, item["toolCallId"]) == ["grace@example.com"]


@requires_node
async def test_registered_tool_invalid_edits_stay_on_the_client(
    gateway_url: str, thread_id: str, outbox: EffectLog
):
    """The registered zod schema refuses bad edits before anything is sent."""
    bad = {"index": 0, "approve": True, "editedArgs": {**EDITED, "to": "grace"}}
    job = {
        "url": f"{gateway_url}/agents/assistant",
        "threadId": thread_id,
        "tools": REGISTERED,
        "steps": [{"send": EMAIL}, {"decide": [bad]}],
    }
    asked, refused = (await run_node("tool_approval_chat.mjs", job))["steps"]
    [item] = approvals(asked, 1)
    assert refused["requests"] == []
    [still] = refused["interrupts"]
    assert (still["id"], still["status"]) == (item["id"], "error")
    assert still["error"]["code"] == "invalid-edited-args"
    assert sent_to(outbox, item["toolCallId"]) == []


@requires_node
async def test_registered_tool_three_emails_as_one_batch(
    gateway_url: str, thread_id: str, outbox: EffectLog
):
    decisions = [
        {"index": 0, "approve": True},
        {"index": 1, "approve": False},
        {"index": 2, "approve": True, "editedArgs": {**EDITED, "to": "cyril@example.com"}},
    ]
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": EMAILS},
        {"decide": decisions, "transaction": True},
    )
    ada, bob, cy = approvals(asked, 3)
    assert [i["originalArgs"]["to"] for i in (ada, bob, cy)] == [
        "ada@example.com",
        "bob@example.com",
        "cy@example.com",
    ]
    assert len({i["toolCallId"] for i in (ada, bob, cy)}) == 3
    by_id = {entry["interruptId"]: entry["payload"] for entry in resumed_with(done)}
    assert by_id == {
        ada["id"]: {"approved": True},
        bob["id"]: {"approved": False},
        cy["id"]: {"approved": True, "editedArgs": {**EDITED, "to": "cyril@example.com"}},
    }
    contents = result_contents(done)
    assert sorted(contents) == sorted(i["toolCallId"] for i in (ada, bob, cy))
    assert contents[bob["toolCallId"]] == REJECTED
    assert '"sent": true' in contents[ada["toolCallId"]]
    assert '"to": "cyril@example.com"' in contents[cy["toolCallId"]]
    assert sent_to(outbox, bob["toolCallId"]) == []
    assert sent_to(outbox, cy["toolCallId"]) == ["cyril@example.com"]
    assert "did not carry out the email to bob@example.com: you rejected it" in said(done)


@requires_node
async def test_registered_tool_approve_all(gateway_url: str, thread_id: str, outbox: EffectLog):
    """`resolveInterrupts(true)`: TanStack's bulk answer for payloadless tool approvals."""
    asked, done = await chat(gateway_url, thread_id, REGISTERED, {"send": EMAILS}, {"bulk": True})
    pending = approvals(asked, 3)
    assert sorted(results(done)) == sorted(i["toolCallId"] for i in pending)
    assert [sent_to(outbox, i["toolCallId"]) for i in pending] == [
        ["ada@example.com"],
        ["bob@example.com"],
        ["cy@example.com"],
    ]


def generic_items(step: dict[str, Any], count: int) -> list[dict[str, Any]]:
    items = step["interrupts"]
    assert [(i["kind"], i["canResolve"], i["reason"]) for i in items] == [
        ("generic", True, "tool_call")
    ] * count, items
    assert all(isinstance(i["wireToolCallId"], str) for i in items), items
    return items


@requires_node
@pytest.mark.parametrize("tools", [[], ["fixture:sendEmailDrifted"]], ids=["none", "drifted"])
async def test_unregistered_tool_gets_generic_items(
    gateway_url: str, thread_id: str, outbox: EffectLog, tools: list[str]
):
    """Without the tool (or with another schema): the same interrupts, as generic items."""
    decisions = [
        {"index": 0, "approve": True},
        {"index": 1, "approve": False},
        {"index": 2, "approve": True, "editedArgs": EDITED},
    ]
    asked, done = await chat(gateway_url, thread_id, tools, {"send": EMAILS}, {"decide": decisions})
    ada, bob, cy = generic_items(asked, 3)
    for item in (ada, bob, cy):
        assert item["binding"]["kind"] == "generic"
        assert item["toolName"] is None
    by_id = {entry["interruptId"]: entry["payload"] for entry in resumed_with(done)}
    assert by_id == {
        ada["id"]: {"approved": True},
        bob["id"]: {"approved": False},
        cy["id"]: {"approved": True, "editedArgs": EDITED},
    }
    contents = result_contents(done)
    assert sorted(contents) == sorted(i["wireToolCallId"] for i in (ada, bob, cy))
    assert contents[bob["wireToolCallId"]] == REJECTED
    assert sent_to(outbox, cy["wireToolCallId"]) == ["grace@example.com"]
    assert sent_to(outbox, bob["wireToolCallId"]) == []


@requires_node
async def test_unregistered_tool_single_approval(
    gateway_url: str, thread_id: str, outbox: EffectLog
):
    asked, done = await chat(
        gateway_url, thread_id, [], {"send": EMAIL}, {"decide": [{"index": 0, "approve": True}]}
    )
    [item] = generic_items(asked, 1)
    assert results(done) == [item["wireToolCallId"]]
    assert sent_to(outbox, item["wireToolCallId"]) == ["ada@example.com"]


@requires_node
async def test_registered_tools_leave_the_form_generic(gateway_url: str, thread_id: str):
    """fileQuarterlyReport needs no approval: its input_required form stays a generic item."""
    answer = {"index": 0, "raw": {"quarter": "Q2", "year": 2026, "revenue": 10.5}}
    asked, done = await chat(
        gateway_url,
        thread_id,
        REGISTERED,
        {"send": "File the quarterly report"},
        {"decide": [answer]},
    )
    [form] = asked["interrupts"]
    assert (form["kind"], form["canResolve"], form["reason"]) == ("generic", True, "input_required")
    assert "Filed the Q2 2026 quarterly report" in said(done)


# --------------------------------------------------------------------------
# Durability: the interrupt shape replays (tests/workflows/test_replay.py replays the
# recorded histories).
# --------------------------------------------------------------------------


async def test_threads_with_tool_approvals_replay(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    [email] = interrupts(await run(http, thread_id, text=EMAIL))
    edit = {"approved": True, "editedArgs": EDITED}
    await run(http, thread_id, resume=[resolve(email, edit)])
    ada, bob, cy = interrupts(await run(http, thread_id, text=EMAILS))
    answers = [resolve(ada, {"approved": True}), resolve(bob, {"approved": False}), cancel(cy)]
    await run(http, thread_id, resume=answers)
    [form] = interrupts(await run(http, thread_id, text="File the quarterly report"))
    await run(
        http, thread_id, resume=[resolve(form, {"quarter": "Q4", "year": 2026, "revenue": 1})]
    )

    assert binding_of(email)["kind"] == "tool-approval"
    assert form["responseSchema"] == TOOLS["fileQuarterlyReport"].parameters
    state = await thread_state(client, thread_id)
    assert [r.interrupt["responseSchema"] for r in state.interrupts[:4]] == [
        approval_schema(SEND_EMAIL)
    ] * 4
    heard = {m["toolCallId"]: m["content"] for m in state.messages if m["role"] == "tool"}
    assert (heard[bob["toolCallId"]], heard[cy["toolCallId"]]) == (REJECTED, "it was cancelled")
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    replayer = Replayer(  # the agents are registered: this process runs the worker
        workflows=[ThreadWorkflow],
        data_converter=DATA_CONVERTER,
        plugins=[PydanticAIPlugin()],
    )
    await replayer.replay_workflow(history)
