"""The assistant's three scenarios through the real gateway and a real Temporal server."""

from __future__ import annotations

import httpx

from tests.agui import finished, interrupts, run, texts, types
from workflows.activities import Outbox


async def test_email_is_sent_after_approval(http: httpx.AsyncClient, thread_id: str, outbox: Outbox):
    first = await run(http, thread_id, text="Send an email to ada@example.com saying hi")
    assert types(first)[:4] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert types(first)[-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    [interrupt] = interrupts(first)
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == first[1]["toolCallId"]
    binding = interrupt["metadata"]["tanstack:interruptBinding"]
    assert binding["interruptedRunId"] == first[0]["runId"]

    second = await run(
        http,
        thread_id,
        resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}],
        parent_run_id=first[0]["runId"],
    )
    assert types(second)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert second[0]["parentRunId"] == first[0]["runId"]
    assert second[1]["toolCallId"] == interrupt["toolCallId"]
    assert "TOOL_CALL_START" not in types(second)
    assert finished(second)["outcome"] == {"type": "success"}
    assert "Sent the email to ada@example.com" in texts(second)
    assert [e["key"] for e in outbox.effects("sendEmail")].count(interrupt["toolCallId"]) == 1
