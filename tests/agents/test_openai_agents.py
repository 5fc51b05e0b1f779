"""OpenAI Agents SDK agents in threads (docs/agents.md#openai-agents-sdk-agents), on one real
worker and gateway through Temporal's own integration (`temporalio-openai-agents`): the
example of `make run` (`examples.agents.openai_email`) asks to approve its `sendEmail` call for
two days and sends once through the worker's `sendEmail` activity; a rejection, with a note
where the registration takes one, is what the model reads; three calls are one batch; an
expiry resumes the run with the calls rejected; the conversation crosses continue-as-new; a
recorded history replays on a worker that never saw it; the real JS clients drive it."""

from __future__ import annotations

import asyncio
import importlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.workflows.contract import STOPPED_METADATA_KEY, json_size, thread_workflow_id
from tests.agents.sdk_flows import (
    ADA,
    ASK,
    a_killed_worker_resumes_the_agent,
    a_model_failing_for_good_ends_the_run_not_the_thread,
    a_paused_run_crosses_continue_as_new,
    activity_runs,
    an_expiry_rejects_the_calls_between_runs,
    copilotkit_approves,
    emails,
    http_agent_approves,
    replayer_of,
    served_agents,
    stopped_once,
    tanstack_approves,
    the_conversation_crosses_continue_as_new,
    the_example_asks_to_approve_send_email_for_two_days,
    three_calls_are_one_batch,
    tool_results,
)
from tests.agui import (
    finished,
    interrupts,
    resolve,
    run,
    run_body,
    streamed_text,
    texts,
    types,
)
from tests.conftest import until_quiet
from tests.copilotkit.driver import requires_copilotkit
from tests.effects import EffectLog
from tests.gateway.test_streaming import is_type
from tests.llm.openai_replay import (
    TEXT,
    TEXT_REPLY,
    TOOL_ARGS,
    TOOL_CALL,
    TOOL_NAME,
    OpenAIReplay,
    openai_replay_server,  # noqa: F401 (a fixture)
)
from tests.node_clients import requires_node
from tests.test_audit_trail import assert_chained, kinds

EXAMPLE = "ag_ui_temporal.examples.agents.openai_email"
OWN = "tests.agents.openai_agents"
HISTORIES = sorted((Path(__file__).parent / "histories").glob("openai_*.json"))
"""Recorded threads of OpenAI agents: `openai_email_approved_and_sent` is the thread of
`test_the_example_asks_to_approve_send_email_for_two_days` (asked, approved, the resume
repeated), fetched with `fetch_history()` and written with `WorkflowHistory.to_json()`."""


@pytest.fixture(scope="module")
async def served(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[httpx.AsyncClient]:
    async with served_agents(client, data_dir, executor, [EXAMPLE, OWN]) as http:
        yield http


def replayer() -> Replayer:
    """A thread worker's replayer, with the agents the tests serve."""
    return replayer_of([EXAMPLE, OWN])


async def test_the_example_asks_to_approve_send_email_for_two_days(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await the_example_asks_to_approve_send_email_for_two_days(
        served, client, outbox, thread_id, agent="openai", replayer=replayer()
    )


async def test_the_approval_leaves_its_whole_life_in_the_audit_trail(
    served: httpx.AsyncClient, thread_id: str
):
    """The same trail as a pydantic-ai agent's: asked (the proposal: tool and arguments),
    delivered, answered (by whom, how), and the call's result; hash-chained."""
    olivia = f"olivia-{uuid.uuid4().hex[:6]}"
    [asked] = interrupts(await run(served, thread_id, agent="openai", text=ASK, principal=olivia))
    yes = [resolve(asked, {"approved": True})]
    await run(served, thread_id, agent="openai", resume=yes, principal=olivia)

    async def trail() -> list[dict[str, Any]]:
        page = await served.get(
            "/audit", params={"threadId": thread_id}, headers={"X-Principal": olivia}
        )
        assert page.status_code == 200, page.text
        records: list[dict[str, Any]] = page.json()["records"]
        return records

    async with asyncio.timeout(60):  # the thread writes them in the background
        while "result" not in kinds(records := await trail()):
            await asyncio.sleep(0.05)
    assert kinds(records) == ["asked", "delivered", "answered", "result"]
    assert {r["interruptId"] for r in records} == {asked["id"]}
    proposal = records[0]["data"]["proposal"]
    assert (proposal["tool"], proposal["arguments"]) == ("sendEmail", ADA)
    answered = records[2]
    assert answered["principal"] == olivia and answered["data"]["payload"] == {"approved": True}
    assert records[3]["data"]["status"] == "ok" and "ada@example.com" in json.dumps(records[3])
    assert_chained(records, f"thread:{thread_id}")


async def test_a_rejection_sends_nothing_and_the_model_hears_it(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent="openai", text=ASK))
    done = await run(
        served, thread_id, agent="openai", resume=[resolve(asked, {"approved": False})]
    )
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert (result["toolCallId"], result["content"]) == (asked["toolCallId"], "you rejected it")
    assert texts(done) == "I did not send the email: you rejected it."
    assert emails(outbox, asked["toolCallId"]) == []
    assert await activity_runs(client, thread_id, "sendEmail") == 0


async def test_a_rejections_note_is_the_rejection_message(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    [asked] = interrupts(await run(served, thread_id, agent="openai-note", text=ASK))
    assert "payload" in json.dumps(asked["responseSchema"]["oneOf"][1])
    no = {"approved": False, "payload": {"reason": "not   to Ada,\nplease"}}
    done = await run(served, thread_id, agent="openai-note", resume=[resolve(asked, no)])
    assert texts(done) == "I did not send the email: you rejected it: not to Ada, please."
    assert emails(outbox, asked["toolCallId"]) == []


async def test_three_calls_are_one_batch(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    await three_calls_are_one_batch(served, outbox, thread_id, agent="openai-three")


async def test_an_expiry_rejects_the_calls_between_runs(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await an_expiry_rejects_the_calls_between_runs(
        served, client, outbox, thread_id, agent="openai-soon"
    )


async def test_the_conversation_crosses_continue_as_new(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    await the_conversation_crosses_continue_as_new(served, client, thread_id, agent="openai-count")


async def test_a_recorded_openai_stream_comes_through_the_sdks_own_model(
    served: httpx.AsyncClient,
    openai_replay_server: OpenAIReplay,  # noqa: F811 (the fixture imported above)
    thread_id: str,
):
    """The SDK's `OpenAIChatCompletionsModel` against recorded OpenAI streams on loopback: the
    model activity streams the call's arguments, then (approved) the answer's words, through
    the thread, and the thread's transcript holds what the stream said."""
    from tests.agents.openai_agents import LOOPBACK

    LOOPBACK.base_url = openai_replay_server.base_url
    openai_replay_server.event_gap = 0.05  # paced as a provider paces its tokens
    events = await run(served, thread_id, agent="openai-capitals", text="Capital of the UK?")
    [asked] = interrupts(events)
    assert asked["metadata"]["ag-ui-temporal:toolCall"] == {
        "name": TOOL_NAME,
        "arguments": TOOL_ARGS,
    }
    args = [e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS"]
    assert json.loads("".join(args)) == TOOL_ARGS
    done = await run(
        served, thread_id, agent="openai-capitals", resume=[resolve(asked, {"approved": True})]
    )
    assert tool_results(done) == {asked["toolCallId"]: "London"}
    assert streamed_text(done) == TEXT_REPLY
    assert len([e for e in done if e["type"] == "TEXT_MESSAGE_CONTENT"]) >= 2
    first, second = openai_replay_server.requests
    assert (first.replayed, second.replayed) == (TOOL_CALL, TEXT)
    assert first.body["stream"] is True and first.body["model"] == "gpt-4o-mini"
    [result] = [m for m in second.body["messages"] if m["role"] == "tool"]
    assert (result["tool_call_id"], result["content"]) == (asked["toolCallId"], "London")


async def test_a_stop_ends_the_resumed_run_and_the_thread_goes_on(
    served: httpx.AsyncClient,
    openai_replay_server: OpenAIReplay,  # noqa: F811 (the fixture imported above)
    thread_id: str,
):
    """Stopped while the model streams its answer after the approved call: the run ends
    `RUN_CANCELLED`, its text as far as it was shown, marked; the thread takes the next
    message, and the model request was cancelled (the provider's stream closed early)."""
    from tests.agents.openai_agents import LOOPBACK

    LOOPBACK.base_url = openai_replay_server.base_url
    [asked] = interrupts(await run(served, thread_id, agent="openai-capitals", text="Capital?"))
    openai_replay_server.event_gap = 0.6  # 12 events: ~7 s, far longer than the stop takes
    body = run_body(thread_id, resume=[resolve(asked, {"approved": True})])
    try:
        stopped, events = await stopped_once(
            served, "openai-capitals", body, is_type("TEXT_MESSAGE_CONTENT")
        )
    finally:
        openai_replay_server.event_gap = 0.0
    assert stopped.status_code == 200, stopped.text
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUN_CANCELLED"
    assert events[-2]["type"] == "TEXT_MESSAGE_END"
    assert events[-2]["metadata"] == {STOPPED_METADATA_KEY: True}
    shown = texts(events)
    assert shown and TEXT_REPLY.startswith(shown) and shown != TEXT_REPLY
    assert tool_results(events) == {asked["toolCallId"]: "London"}
    await until_done(lambda: openai_replay_server.requests[-1].sent_all is not None)
    assert openai_replay_server.requests[-1].sent_all is False
    reply = await run(served, thread_id, agent="openai-capitals", text="And of France?")
    assert types(reply)[-1] == "RUN_FINISHED"


async def until_done(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(30):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_model_that_fails_for_good_ends_the_run_not_the_thread(
    served: httpx.AsyncClient, client: Client, thread_id: str
):
    """The integration makes a failed activity a workflow failure (`AgentsWorkflowError`): the
    thread ends the run with `RUN_FAILED` instead."""
    await a_model_failing_for_good_ends_the_run_not_the_thread(
        served, client, thread_id, agent="openai-broken"
    )


async def test_a_handoffs_approval_is_the_served_agents(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    """Triage hands the conversation to the email assistant, whose `sendEmail` asks: one
    interrupt of the served agent, and the approved call sends once."""
    [asked] = interrupts(await run(served, thread_id, agent="openai-triage", text=ASK))
    assert (asked["reason"], asked["metadata"]["ag-ui-temporal:toolCall"]["name"]) == (
        "tool_call",
        "sendEmail",
    )
    yes = [resolve(asked, {"approved": True})]
    done = await run(served, thread_id, agent="openai-triage", resume=yes)
    assert texts(done) == "Sent the email to ada@example.com."
    assert emails(outbox, asked["toolCallId"]) == [ADA]


async def test_a_paused_run_crosses_continue_as_new(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await a_paused_run_crosses_continue_as_new(served, client, outbox, thread_id, agent="openai")


async def test_a_resume_sent_as_the_thread_continues_as_new_is_taken(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    """Runs follow each other a round trip apart while the thread (its history long) sends
    its trail and archives before it continues as new: a run that comes in meanwhile is let
    finish first, and every answer lands, once. The thread used to continue with a run's
    update going: the update was dropped, the resume that followed found no such interrupt
    (`UNKNOWN_INTERRUPT_ID`), and nothing was sent."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    await run(served, thread_id, agent="openai", text="hello")  # the thread begins
    first = (await handle.describe()).run_id
    for _ in range(8):  # its history passes the limit (60 events) in the first few
        await handle.describe()  # round trips, as a client's own calls between runs
        [asked] = interrupts(await run(served, thread_id, agent="openai", text=ASK))
        await handle.describe()
        yes = [resolve(asked, {"approved": True})]
        done = await run(served, thread_id, agent="openai", resume=yes)
        assert texts(done) == "Sent the email to ada@example.com.", done[-1]
        assert emails(outbox, asked["toolCallId"]) == [ADA]
    # runs back to back postpone it; in the pause that follows, it continues as new
    await until_quiet(client.get_workflow_handle(handle.id))
    assert (await handle.describe()).run_id != first


@pytest.mark.parametrize("path", HISTORIES, ids=[path.stem for path in HISTORIES])
async def test_a_recorded_thread_replays(path: Path):
    """Threads parked on an OpenAI agent meet new worker code: what they recorded must replay
    (record anew only for a new shape, never to make a failing replay pass)."""
    await replayer().replay_workflow(WorkflowHistory.from_json(path.stem, path.read_text()))


# --------------------------------------------------------------------------
# The real JS clients against the example, and a worker process killed while it waits.
# --------------------------------------------------------------------------


@requires_node
async def test_tanstack_chat_client_approves_the_agents_call(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, tmp_path: Path
):
    await tanstack_approves(served, client, outbox, thread_id, tmp_path, agent="openai")


@requires_node
async def test_http_agent_gets_the_agents_interrupt_and_resumes_it(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await http_agent_approves(served, client, outbox, thread_id, agent="openai")


@requires_copilotkit
async def test_copilotkits_use_interrupt_approves_the_agents_call(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str
):
    await copilotkit_approves(served, client, outbox, thread_id, agent="openai")


async def test_a_worker_killed_while_the_agent_waits_resumes_it_in_a_new_process(
    client: Client, tmp_path: Path, own_store: SecretStr, thread_id: str
):
    """The paused `RunState` is rebuilt from the thread's history by the process that never
    saw it."""
    await a_killed_worker_resumes_the_agent(
        client, tmp_path, own_store, thread_id, agent="openai", module=EXAMPLE,
        model_activity="invoke_model_activity",
    )  # fmt: skip


def test_the_carried_conversation_keeps_within_its_budget():
    """Pure: a long conversation gives up its oldest turns, from a user message on, so that a
    paused run's state (which begins with it) keeps within its own budget."""
    from ag_ui_temporal.workflows.thread.agents.openai_agent import (
        ITEMS_BYTES,
        STATE_BYTES,
        within_budget,
    )

    assert ITEMS_BYTES * 4 == STATE_BYTES
    turn = [
        {"role": "user", "content": "x" * 1000},
        {"type": "function_call", "call_id": "c", "name": "sendEmail", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "y" * 1000},
    ]
    kept = within_budget(turn * 30, budget=20_000)
    assert json_size(kept) <= 20_000 and kept[0]["role"] == "user" and len(kept) % 3 == 0
    assert within_budget(turn * 2, budget=20_000) == turn * 2
    # a last turn over it alone is not carried on (its run happened: nothing fails)
    assert within_budget([{"role": "user", "content": "x" * 30_000}], budget=20_000) == []


async def test_a_run_too_large_to_pause_says_so_and_sends_nothing(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str
):
    """A run whose paused state would be over its budget does not pause: what it did stands
    (its other tool ran), the call it would ask about does not run and gets why as its
    result, the run ends as it happened (no `RUN_FAILED`), and the conversation goes on."""
    from ag_ui_temporal.workflows.thread.agents.base import TOO_LARGE_TO_PAUSE

    events = await run(served, thread_id, agent="openai-bulk", text="go")
    assert finished(events)["outcome"] == {"type": "success"}
    starts = {e["toolCallName"]: e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_START"}
    results = tool_results(events)
    assert results[starts["bulky"]] == "x" * 300_000
    assert results[starts["sendEmail"]] == TOO_LARGE_TO_PAUSE
    assert f"I did not carry out the call to sendEmail: {TOO_LARGE_TO_PAUSE}." in texts(events)
    assert emails(outbox, starts["sendEmail"]) == []
    later = await run(served, thread_id, agent="openai-bulk", text="thanks")
    assert texts(later) == "You're welcome."


def test_the_example_is_registered_by_its_module():
    importlib.import_module(EXAMPLE)
    from ag_ui_temporal.agents.registry import registered_openai_agent

    entry = registered_openai_agent("openai")
    assert entry is not None and entry.options.approval_expires_in == timedelta(days=2)
