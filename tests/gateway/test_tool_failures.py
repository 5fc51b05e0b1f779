"""A tool that fails for good does not eat the approval.

A worker of this module's own runs a `sendEmail` that always fails for one recipient
(until the test heals it) and refuses another without retry; the threads start with
`TOOL_MAX_ATTEMPTS=2`, so a failure is final after one retry.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import Outbox, open_engine
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import InterruptStatus
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from ag_ui_temporal.workflows.thread.tool_errors import MAX_ERROR_MESSAGE
from tests.agui import finished, interrupts, resolve, run, streamed_text, thread_state, types
from tests.conftest import serve_gateway
from tests.effects import EffectLog

FAILING = "fail@example.com"
"""Always fails (a `RuntimeError`, retried) until the test heals it."""
REFUSED = "refused@example.com"
"""Fails at once: a non-retryable `ApplicationError` with a long, multi-line message."""
BATCH = f"Send emails to ada@example.com, {FAILING} and cy@example.com"


class FailingTools(ToolActivities):
    def __init__(self, store_url: str) -> None:
        super().__init__(Outbox(open_engine(store_url)))
        self.healed = threading.Event()
        self.attempts: Counter[str] = Counter()

    @activity.defn(name="sendEmail")
    async def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        self.attempts[call.key] += 1
        if call.args["to"] == FAILING and not self.healed.is_set():
            raise RuntimeError("mail server said no")
        if call.args["to"] == REFUSED:
            raise ApplicationError(
                "mailbox full\n" + "x" * 1000, type="MailboxFull", non_retryable=True
            )
        return await super().send_email(call)


@dataclass
class Stack:
    http: httpx.AsyncClient
    tools: FailingTools
    outbox: EffectLog


@pytest.fixture(scope="module")
async def failing(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    name = f"failing-{uuid.uuid4().hex}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, tool_max_attempts=2)
    tools = FailingTools(settings.store_url)
    async with (
        build_worker(client, settings, executor, tools.activities()),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield Stack(http, tools, EffectLog(settings.store_url))


def results(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's tool results by toolCallId, their content parsed."""
    return {
        e["toolCallId"]: json.loads(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"
    }


def sent(outbox: EffectLog) -> Counter[str]:
    return Counter(e["key"] for e in outbox.effects("sendEmail"))


async def test_a_failed_tool_is_its_result_and_the_batch_goes_on(
    failing: Stack, client: Client, thread_id: str
):
    failing.tools.healed.clear()
    ada, bad, cy = interrupts(await run(failing.http, thread_id, text=BATCH))
    done = await run(
        failing.http, thread_id, resume=[resolve(i, {"approved": True}) for i in (ada, bad, cy)]
    )

    assert [kind for kind in types(done) if kind != "TEXT_MESSAGE_CONTENT"] == [
        "RUN_STARTED",
        "TOOL_CALL_RESULT",
        "TOOL_CALL_RESULT",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",  # the text streams: as many deltas as the model sent
        "TEXT_MESSAGE_END",
        "STATE_SNAPSHOT",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert [e["toolCallId"] for e in done[1:4]] == [i["toolCallId"] for i in (ada, bad, cy)]
    error = {"error": {"type": "RuntimeError", "message": "mail server said no"}}
    assert results(done)[bad["toolCallId"]] == error
    assert results(done)[ada["toolCallId"]]["sent"] is True
    assert results(done)[cy["toolCallId"]]["sent"] is True
    assert finished(done)["outcome"] == {"type": "success"}
    said = streamed_text(done)
    assert "Sent the email to ada@example.com" in said
    assert (
        f"I could not carry out the email to {FAILING} (RuntimeError: mail server said no)" in said
    )
    assert "Sent the email to cy@example.com" in said

    # the transcript keeps the failure as the call's tool message, marked as an error
    [snapshot] = [e for e in done if e["type"] == "MESSAGES_SNAPSHOT"]
    [tool_message] = [m for m in snapshot["messages"] if m.get("toolCallId") == bad["toolCallId"]]
    assert (tool_message["role"], tool_message["error"]) == ("tool", "mail server said no")
    assert json.loads(tool_message["content"]) == error
    hydrated = await failing.http.get("/agents/assistant", params={"threadId": thread_id})
    parts = [part for m in hydrated.json()["messages"] for part in m["parts"]]
    [failed] = [p for p in parts if p.get("toolCallId") == bad["toolCallId"]]
    assert (failed["state"], failed["error"]) == ("error", "mail server said no")

    # the first and third sent exactly once; the middle tried TOOL_MAX_ATTEMPTS times, sent never
    effects = sent(failing.outbox)
    assert effects[ada["toolCallId"]] == effects[cy["toolCallId"]] == 1
    assert effects[bad["toolCallId"]] == 0
    assert failing.tools.attempts[bad["toolCallId"]] == 2
    view = await thread_state(client, thread_id)
    assert {i.status for i in view.interrupts} == {InterruptStatus.RESOLVED}

    # the user asks again: a new call, a new approval, sent once
    failing.tools.healed.set()
    [again] = interrupts(
        await run(failing.http, thread_id, text=f"Send an email to {FAILING} saying retry")
    )
    assert again["toolCallId"] not in {ada["toolCallId"], bad["toolCallId"], cy["toolCallId"]}
    retried = await run(failing.http, thread_id, resume=[resolve(again, {"approved": True})])
    assert types(retried)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert results(retried)[again["toolCallId"]]["sent"] is True
    assert finished(retried)["outcome"] == {"type": "success"}
    assert sent(failing.outbox)[again["toolCallId"]] == 1


async def test_a_non_retryable_error_fails_at_once_with_a_bounded_message(
    failing: Stack, thread_id: str
):
    [refused] = interrupts(
        await run(failing.http, thread_id, text=f"Send an email to {REFUSED} saying hi")
    )
    done = await run(failing.http, thread_id, resume=[resolve(refused, {"approved": True})])
    error = results(done)[refused["toolCallId"]]["error"]
    assert error["type"] == "MailboxFull"
    assert len(error["message"]) == MAX_ERROR_MESSAGE
    assert error["message"].startswith("mailbox full xxx") and "\n" not in error["message"]
    assert failing.tools.attempts[refused["toolCallId"]] == 1
    assert finished(done)["outcome"] == {"type": "success"}
    assert sent(failing.outbox)[refused["toolCallId"]] == 0
