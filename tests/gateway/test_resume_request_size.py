"""A run carries the client's transcript from the thread's last reply on, so the `run`
update's request in the thread's history stays small however long the conversation
(issue 20: history bytes per approval cycle flat as the transcript grows)."""

from __future__ import annotations

import json

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from tests.agui import finished, interrupts, resolve, run, texts, user
from workflows.contract import thread_workflow_id

EMAIL = "Send an email to ada@example.com saying hi"


async def test_a_run_sends_the_thread_only_what_follows_its_last_reply(
    http: httpx.AsyncClient, client: Client, thread_id: str
):
    for n in range(4):  # a conversation the client re-sends with every run
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
    again = await run(http, thread_id, messages=[*transcript, user("hello again")])
    assert finished(again)["outcome"] == {"type": "success"}
    sent = await last_update_request(client, thread_id)
    assert [m["role"] for m in sent["messages"]] == ["assistant", "user"]
    assert sent["messages"][0]["id"] == transcript[-1]["id"]


async def last_update_request(client: Client, thread_id: str) -> dict[str, object]:
    """The `run` update's request as the thread's history recorded it, last one."""
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    accepted = [
        e.workflow_execution_update_accepted_event_attributes.accepted_request
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    ]
    [payload] = accepted[-1].input.args.payloads
    request: dict[str, object] = json.loads(payload.data)
    return request
