"""Sub-agents: the assistant hands "cancel order N" to its sub-agent `orders`, whose
`cancelOrder` a person approves. The interrupt says which run asks (`subagentRunId`) and
which agent (metadata), the approved call runs once in the sub-agent's own activity, the
sub-agent's words reach the thread only through the assistant's answer, and hydrate
shows the same interrupt."""

from __future__ import annotations

from typing import Any

import httpx

from ag_ui_temporal.demo.orders import CANCELLED
from ag_ui_temporal.workflows.thread.agents._subagents import SUBAGENT_METADATA_KEY
from tests.agui import finished, interrupts, resolve, run, texts, types
from tests.node_clients import requires_node, run_node

CANCEL = "Cancel order 42"


def cancelled(order_id: str) -> list[str]:
    return [call for call, order in CANCELLED.items() if order == order_id]


async def ask(http: httpx.AsyncClient, thread_id: str, text: str) -> tuple[Any, dict[str, Any]]:
    first = await run(http, thread_id, text=text)
    [asked] = interrupts(first)
    return first, asked


async def test_the_sub_agents_approval_names_its_run_and_agent(
    http: httpx.AsyncClient, thread_id: str
):
    before = cancelled("42")  # the demo's record is the process's: other modules cancel 42 too
    first, asked = await ask(http, thread_id, "Cancel order 42")
    [call] = [e for e in first if e["type"] == "TOOL_CALL_START"]
    assert call["toolCallName"] == "orderDesk"  # the client sees the delegation, not the inner call
    assert (asked["reason"], asked["message"]) == ("tool_call", "Cancel order 42?")
    assert asked["toolCallId"] == call["toolCallId"]
    assert asked["subagentRunId"]
    subagent = asked["metadata"][SUBAGENT_METADATA_KEY]
    assert subagent == {
        "name": "orders",
        "runId": asked["subagentRunId"],
        "toolName": "cancelOrder",
        "arguments": {"order_id": "42"},
    }
    assert "ag-ui-temporal:toolCall" not in asked["metadata"]
    assert asked["metadata"]["tanstack:interruptBinding"]["kind"] == "generic"
    assert "TEXT_MESSAGE_START" not in types(first)  # the sub-agent said nothing in the thread
    assert cancelled("42") == before

    hydrated = (await http.get(f"/agents/assistant?threadId={thread_id}")).json()
    [pending] = hydrated["interrupts"]["pending"]
    assert pending["subagentRunId"] == asked["subagentRunId"]
    assert pending["metadata"][SUBAGENT_METADATA_KEY]["name"] == "orders"

    answer = [resolve(asked, {"approved": True})]
    done = await run(http, thread_id, resume=answer)
    assert finished(done)["outcome"] == {"type": "success"}
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == call["toolCallId"]
    assert texts(done) == "The order desk says: Cancelled order 42."
    again = await run(http, thread_id, resume=answer)  # a replayed resume cancels nothing more
    assert finished(again)["outcome"] == {"type": "success"}
    assert len(cancelled("42")) == len(before) + 1


async def test_a_rejection_reaches_the_sub_agent(http: httpx.AsyncClient, thread_id: str):
    _, asked = await ask(http, thread_id, "Cancel order 77")
    done = await run(http, thread_id, resume=[resolve(asked, {"approved": False})])
    assert texts(done) == ("The order desk says: I did not cancel the order: you rejected it.")
    assert cancelled("77") == []


@requires_node
async def test_tanstack_resolves_the_sub_agents_approval(gateway_url: str, thread_id: str):
    job = {
        "url": f"{gateway_url}/agents/assistant",
        "threadId": thread_id,
        "steps": [
            {"send": "Cancel order 55"},
            {"resolve": [{"index": 0, "payload": {"approved": True}}]},
        ],
    }
    asked, done = (await run_node("tanstack_chat.mjs", job))["snapshots"]
    assert asked["stepError"] is None and done["stepError"] is None
    [item] = asked["interrupts"]
    assert (item["kind"], item["canResolve"], item["reason"]) == ("generic", True, "tool_call")
    assert item["metadata"][SUBAGENT_METADATA_KEY]["name"] == "orders"  # what a UI shows
    assert item["wireSubagentRunId"] == item["metadata"][SUBAGENT_METADATA_KEY]["runId"]
    assert done["error"] is None and done["interrupts"] == []
    said = [p["content"] for m in done["messages"] for p in m["parts"] if p["type"] == "text"]
    assert said[-1] == "The order desk says: Cancelled order 55."
    assert len(cancelled("55")) == 1
