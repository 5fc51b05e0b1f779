"""What a run writes into the thread's history does not grow with the transcript (history
bytes per approval cycle stay flat as the conversation grows): the `run` update's
request carries the client's messages from the thread's last reply on, and its result
carries the `MESSAGES_SNAPSHOT` unfilled once the conversation is more than short (the
gateway fills it from the thread query, so the client still gets the whole transcript)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from ag_ui_temporal.payloads import CODEC
from ag_ui_temporal.workflows.contract import thread_workflow_id
from ag_ui_temporal.workflows.thread._runs import RESULT_WINDOW_MESSAGES
from tests.agui import finished, interrupts, resolve, run, texts, user

EMAIL = "Send an email to ada@example.com saying hi"


async def test_a_run_writes_no_transcript_into_the_history(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    await run(http, thread_id, text="hello")
    short = await last_update_snapshot(client, thread_id)
    assert short["messages"], "a short conversation comes filled: no query needed"
    for n in range(RESULT_WINDOW_MESSAGES // 2):  # a conversation re-sent with every run
        await run(http, thread_id, text=f"hello {n}")
    asked = await run(http, thread_id, text=EMAIL)
    [interrupt] = interrupts(asked)
    transcript = asked[-2]["messages"]  # the run's MESSAGES_SNAPSHOT, as a client holds it
    assert len(transcript) >= 10
    done = await run(
        http, thread_id, messages=transcript, resume=[resolve(interrupt, {"approved": True})]
    )
    assert finished(done)["outcome"] == {"type": "success"}
    assert "Sent the email to ada@example.com" in texts(done)
    sent = await last_update_request(client, thread_id)
    assert [m["role"] for m in sent["messages"]] == ["assistant"]  # the reply that asked
    assert sent["messages"][0]["id"] == transcript[-1]["id"]
    transcript = done[-2]["messages"]
    assert len(transcript) == len(asked[-2]["messages"]) + 2  # the call's result, the reply
    snapshot = await last_update_snapshot(client, thread_id)
    assert snapshot["messages"] == []  # no transcript in the history's copy of the result
    again = await run(http, thread_id, messages=[*transcript, user("hello again")])
    assert finished(again)["outcome"] == {"type": "success"}
    sent = await last_update_request(client, thread_id)
    assert [m["role"] for m in sent["messages"]] == ["assistant", "user"]
    assert sent["messages"][0]["id"] == transcript[-1]["id"]


async def last_update_request(client: Client, thread_id: str) -> dict[str, Any]:
    """The `run` update's request as the thread's history recorded it, last one."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    accepted = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    [payload] = await CODEC.decode(accepted[-1].input.args.payloads)
    request: dict[str, Any] = json.loads(payload.data)
    return request


async def last_update_snapshot(client: Client, thread_id: str) -> dict[str, Any]:
    """The `MESSAGES_SNAPSHOT` of the last `run` update's result, as the history holds it."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    completed = [
        e.workflow_execution_update_completed_event_attributes.outcome.success
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    ]
    [payload] = await CODEC.decode(completed[-1].payloads)
    events = json.loads(payload.data)["events"]
    [snapshot] = [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
    return dict(snapshot)
