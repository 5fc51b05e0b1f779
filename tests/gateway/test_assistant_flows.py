"""The assistant's scenarios through the real gateway and a real Temporal server."""

from __future__ import annotations

import json
import re

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.demo.tools import SEND_EMAIL, approval_schema
from ag_ui_temporal.workflows.contract import thread_workflow_id
from tests.agui import cancel, finished, interrupts, resolve, run, streamed_text, texts, types
from tests.effects import EffectLog

EMAIL = "Send an email to ada@example.com saying hi"
EMAILS = "Send emails to ada@example.com, bob@example.com and cy@example.com"


MODEL_CALL_ID = re.compile(r"call_[0-9a-f]{32}")
"""A tool call's id as the model gave it."""


def sent_to(outbox: EffectLog, tool_call_id: str) -> list[str]:
    return [e["args"]["to"] for e in outbox.effects("sendEmail") if e["key"] == tool_call_id]


async def test_email_is_sent_after_approval(
    http: httpx.AsyncClient, thread_id: str, outbox: EffectLog
):
    first = await run(http, thread_id, text=EMAIL)
    assert types(first)[:4] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert first[0]["protocolVersion"] == "1.0"
    assert types(first)[-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    [interrupt] = interrupts(first)
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == first[1]["toolCallId"]
    assert MODEL_CALL_ID.fullmatch(interrupt["toolCallId"])
    [response] = [m for m in first[-2]["messages"] if m.get("toolCalls")]
    assert first[1]["parentMessageId"] == response["id"]  # the response that made the call
    assert [call["id"] for call in response["toolCalls"]] == [interrupt["toolCallId"]]
    assert interrupt["responseSchema"] == approval_schema(SEND_EMAIL)  # approve | reject envelope
    binding = interrupt["metadata"]["tanstack:interruptBinding"]
    assert binding["interruptedRunId"] == first[0]["runId"]
    assert (binding["kind"], binding["toolName"]) == ("tool-approval", "sendEmail")
    assert binding["toolCallId"] == interrupt["toolCallId"]
    assert binding["originalArgs"] == json.loads(first[2]["delta"])

    second = await run(
        http, thread_id, resume=[resolve(interrupt, {"approved": True})],
        parent_run_id=first[0]["runId"],
    )  # fmt: skip
    assert types(second)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert second[0]["parentRunId"] == first[0]["runId"]
    assert second[1]["toolCallId"] == interrupt["toolCallId"]
    assert "TOOL_CALL_START" not in types(second)
    assert finished(second)["outcome"] == {"type": "success"}
    assert "Sent the email to ada@example.com" in streamed_text(second)
    assert sent_to(outbox, interrupt["toolCallId"]) == ["ada@example.com"]


async def test_edited_args_replace_the_call(
    http: httpx.AsyncClient, thread_id: str, outbox: EffectLog
):
    [interrupt] = interrupts(await run(http, thread_id, text=EMAIL))
    edited = {"to": "grace@example.com", "subject": "Hello", "body": "hi from Grace's assistant"}
    done = await run(
        http, thread_id, resume=[resolve(interrupt, {"approved": True, "editedArgs": edited})]
    )
    assert "Sent the email to grace@example.com" in texts(done)
    assert sent_to(outbox, interrupt["toolCallId"]) == ["grace@example.com"]


async def test_rejected_call_is_not_executed(
    http: httpx.AsyncClient, thread_id: str, outbox: EffectLog
):
    [interrupt] = interrupts(await run(http, thread_id, text=EMAIL))
    done = await run(http, thread_id, resume=[resolve(interrupt, {"approved": False})])
    # not run, but answered: the model hears why (a provider needs a result for every call)
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == (interrupt["toolCallId"], "you rejected it")
    assert "TOOL_CALL_START" not in types(done)
    assert types(done).index("TOOL_CALL_RESULT") < types(done).index("TEXT_MESSAGE_START")
    assert "did not carry out the email to ada@example.com: you rejected it" in texts(done)
    [tool] = [m for m in done[-2]["messages"] if m["role"] == "tool"]
    assert (tool["toolCallId"], tool["content"]) == (interrupt["toolCallId"], "you rejected it")
    assert sent_to(outbox, interrupt["toolCallId"]) == []


async def test_a_refusal_costs_no_model_request(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    """The assistant ends the turn on refusals itself (`refusals_end_the_turn`); a mix of
    refused and approved calls still goes back to the model."""
    [interrupt] = interrupts(await run(http, thread_id, text=EMAIL))
    asked = await model_requests(client, thread_id)
    await run(http, thread_id, resume=[resolve(interrupt, {"approved": False})])
    assert await model_requests(client, thread_id) == asked
    first, *others = interrupts(await run(http, thread_id, text=EMAILS))
    asked = await model_requests(client, thread_id)
    approved = [resolve(other, {"approved": True}) for other in others]
    await run(http, thread_id, resume=[resolve(first, {"approved": False}), *approved])
    assert await model_requests(client, thread_id) == asked + 1


async def model_requests(client: Client, thread_id: str) -> int:
    """How many model requests the thread's workflow has scheduled so far."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    return sum(
        1
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name.endswith(
            "__model_request"
        )
    )


async def test_parallel_approvals(http: httpx.AsyncClient, thread_id: str, outbox: EffectLog):
    first = await run(http, thread_id, text=EMAILS)
    pending = interrupts(first)
    assert [i["reason"] for i in pending] == ["tool_call"] * 3
    starts = [e for e in first if e["type"] == "TOOL_CALL_START"]
    assert [e["toolCallId"] for e in starts] == [i["toolCallId"] for i in pending]
    assert len({e["parentMessageId"] for e in starts}) == 1  # one response made the three
    ada, bob, cy = pending
    done = await run(
        http, thread_id,
        resume=[resolve(ada, {"approved": True}), cancel(bob), resolve(cy, {"approved": True})],
    )  # fmt: skip
    results = [(e["toolCallId"], e["content"]) for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert [call for call, _ in results] == [ada["toolCallId"], bob["toolCallId"], cy["toolCallId"]]
    assert results[1][1] == "it was cancelled"
    assert "TOOL_CALL_START" not in types(done)
    assert sent_to(outbox, bob["toolCallId"]) == []
    assert "did not carry out the email to bob@example.com: it was cancelled" in texts(done)


async def test_quarterly_report_form(http: httpx.AsyncClient, thread_id: str, outbox: EffectLog):
    [form] = interrupts(await run(http, thread_id, text="File the quarterly report"))
    assert form["reason"] == "input_required"
    assert form["responseSchema"]["properties"]["quarter"]["enum"] == ["Q1", "Q2", "Q3", "Q4"]
    assert form["expiresAt"].endswith("Z")
    binding = form["metadata"]["tanstack:interruptBinding"]
    assert binding["expiresAt"] == form["expiresAt"]
    done = await run(
        http,
        thread_id,
        resume=[resolve(form, {"quarter": "Q3", "year": 2026, "revenue": 1250000.5})],
    )
    assert "Filed the Q3 2026 quarterly report" in texts(done)
    [effect] = [e for e in outbox.effects("fileQuarterlyReport") if e["key"] == form["toolCallId"]]
    assert effect["args"] == {"quarter": "Q3", "year": 2026, "revenue": 1250000.5}


async def test_help_for_anything_else(http: httpx.AsyncClient, thread_id: str):
    events = await run(http, thread_id, text="What can you do?")
    assert finished(events)["outcome"] == {"type": "success"}
    assert "quarterly report" in texts(events)
