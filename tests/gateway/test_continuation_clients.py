"""AG-UI's real `HttpAgent` resuming as CopilotKit does, in both versions users run: 1.0.0 and
0.0.59 (what `@copilotkit/react-core` 1.74 pins). A resume under the run id of the run that
asked (CopilotKit's `pinRunIdOnWire`), with a tool message per `tool_call` interrupt, is a
continuation: the server applies it once, under the run id the client sent."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from tests.agui import PICK_DATE, STREAMS, thread_state
from tests.effects import EffectLog
from tests.node_clients import requires_node, run_node, streams_of

pytestmark = requires_node

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"
FORM = "File the quarterly report"
VERSIONS = ["1.0.0", "0.0.59"]


async def http_agent(
    gateway_url: str, thread_id: str, version: str, *steps: dict[str, Any]
) -> list[dict[str, Any]]:
    result = await run_node(
        "agui_agent.mjs",
        {
            "url": f"{gateway_url}/agents/assistant",
            "threadId": thread_id,
            "client": version,
            "steps": list(steps),
        },
    )
    snapshots: list[dict[str, Any]] = result["snapshots"]
    STREAMS.extend(streams_of(snapshots))
    for snapshot in snapshots:
        assert snapshot["error"] is None and snapshot["runError"] is None, snapshot
    return snapshots


def said(snapshot: dict[str, Any]) -> str:
    return " ".join(
        m.get("content") or "" for m in snapshot["messages"] if m["role"] == "assistant"
    )


def posted(snapshot: dict[str, Any]) -> dict[str, Any]:
    [request] = [r for r in snapshot["requests"] if r["method"] == "POST"]
    body: dict[str, Any] = request["body"]
    return body


def approve(index: int) -> dict[str, Any]:
    return {"index": index, "payload": {"approved": True}}


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_email_approved_under_the_asking_run_id(
    gateway_url: str, client: Client, outbox: EffectLog, thread_id: str, version: str
):
    asked, done = await http_agent(
        gateway_url, thread_id, version,
        {"send": EMAIL}, {"resolve": [approve(0)], "copilotkit": True},
    )  # fmt: skip
    [interrupt] = asked["pendingInterrupts"]
    run_id = posted(asked)["runId"]
    sent = posted(done)
    assert sent["runId"] == run_id and sent["resume"][0]["interruptId"] == interrupt["id"]
    assert [m["toolCallId"] for m in sent["messages"] if m["role"] == "tool"] == [
        interrupt["toolCallId"]
    ]  # CopilotKit's own tool message for the call
    kinds = [e["type"] for e in done["events"]]
    assert kinds[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"] and kinds[-1] == "RUN_FINISHED"
    assert done["events"][0]["runId"] == done["events"][-1]["runId"] == run_id
    assert done["outcome"]["type"] == "success" and done["pendingInterrupts"] == []
    assert "Sent the email to ada@example.com" in said(done)
    assert [e["key"] for e in outbox.effects("sendEmail")].count(interrupt["toolCallId"]) == 1
    state = await thread_state(client, thread_id)
    assert not state.awaiting and [r.run_id for r in state.runs] == [run_id, run_id]
    results = [m for m in state.messages if m["role"] == "tool"]
    assert [m["toolCallId"] for m in results] == [interrupt["toolCallId"]]  # one, the thread's


@pytest.mark.parametrize("version", VERSIONS)
async def test_three_answers_and_a_form_under_the_asking_run_ids(
    gateway_url: str, outbox: EffectLog, thread_id: str, version: str
):
    """Approve, cancel, reject in one resume; then the quarterly form (`expiresAt`)."""
    reject = {"index": 2, "payload": {"approved": False}}
    figures = {"quarter": "Q1", "year": 2027, "revenue": 3.5}
    asked, done, form, filed = await http_agent(
        gateway_url, thread_id, version,
        {"send": EMAILS},
        {"resolve": [approve(0), {"index": 1, "cancel": True}, reject], "copilotkit": True},
        {"send": FORM},
        {"resolve": [{"index": 0, "payload": figures}], "copilotkit": True},
    )  # fmt: skip
    ada, bob, cy = asked["pendingInterrupts"]
    assert posted(done)["runId"] == posted(asked)["runId"] == done["events"][-1]["runId"]
    results = {
        e["toolCallId"]: e["content"] for e in done["events"] if e["type"] == "TOOL_CALL_RESULT"
    }
    assert results == {
        ada["toolCallId"]: results[ada["toolCallId"]],
        bob["toolCallId"]: "it was cancelled",
        cy["toolCallId"]: "you rejected it",
    }
    sent = [e["key"] for e in outbox.effects("sendEmail")]
    assert sent.count(ada["toolCallId"]) == 1 and bob["toolCallId"] not in sent
    assert cy["toolCallId"] not in sent
    [question] = form["pendingInterrupts"]
    assert question["reason"] == "input_required" and question["expiresAt"]
    assert posted(filed)["runId"] == posted(form)["runId"] == filed["events"][-1]["runId"]
    assert "Filed the Q1 2027 quarterly report" in said(filed)


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_clients_own_runs_as_before(gateway_url: str, thread_id: str, version: str):
    """New run ids, as the spec's examples resume: an approval, a form refused by the server
    then fixed, a frontend tool's round trip."""
    bad = {"quarter": "Q3", "year": 1999, "revenue": 10}
    good = {"quarter": "Q3", "year": 2026, "revenue": 10}
    result = await run_node(
        "agui_agent.mjs",
        {
            "url": f"{gateway_url}/agents/assistant",
            "threadId": thread_id,
            "client": version,
            "steps": [
                {"send": EMAIL},
                {"resolve": [approve(0)]},
                {"send": FORM},
                {"resolve": [{"index": 0, "payload": bad}]},
                {"resolve": [{"index": 0, "payload": good}], "bypassClientChecks": True},
                {"send": "Pick a date for the meeting", "tools": [PICK_DATE]},
                {"toolResult": {"date": "2027-02-03"}, "tools": [PICK_DATE]},
            ],
        },
    )
    snapshots = result["snapshots"]
    STREAMS.extend(streams_of(snapshots))
    asked, approved, form, refused, filed, picking, picked = snapshots
    for snapshot in (asked, approved, form, filed, picking, picked):
        assert snapshot["error"] is None and snapshot["runError"] is None, snapshot
    assert "Sent the email to ada@example.com" in said(approved)
    assert refused["runError"]["code"] == "INVALID_PAYLOAD"
    assert "Filed the Q3 2026 quarterly report" in said(filed)
    assert picked["messages"][-1]["content"] == "You picked 2027-02-03."


LEGACY_IMAGE = {"type": "binary", "mimeType": "image/png", "data": "aGk=", "filename": "hi.png"}
"""An attachment as AG-UI 0.x clients send it (CopilotKit's `binary` part); 1.0 retired it."""


@pytest.mark.parametrize("version", VERSIONS)
async def test_an_attachment_in_the_retired_binary_shape_is_taken(
    gateway_url: str, client: Client, thread_id: str, version: str
):
    [asked] = await http_agent(
        gateway_url, thread_id, version, {"send": "What can you do?", "parts": [LEGACY_IMAGE]}
    )
    assert asked["outcome"]["type"] == "success"
    [message] = [m for m in (await thread_state(client, thread_id)).messages if m["role"] == "user"]
    assert message["content"] == [
        {"type": "text", "text": "What can you do?"},
        {
            "type": "image",
            "source": {"type": "data", "value": "aGk=", "mimeType": "image/png"},
            "metadata": {"filename": "hi.png"},
        },
    ]
