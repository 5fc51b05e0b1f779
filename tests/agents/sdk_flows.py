"""What an OpenAI Agents SDK agent and a Google ADK agent are tested for alike
(`test_openai_agents.py`, `test_adk_agents.py`): each flow drives a served agent, by name,
through the same scenario, and asserts what a client and the store saw."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from pydantic import SecretStr
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.worker_plugin import ThreadWorkerPlugin
from ag_ui_temporal.workflows.contract import thread_workflow_id
from tests.agents.worker_kill import approved_after_a_kill
from tests.agui import (
    STREAMS,
    Frame,
    finished,
    frames,
    interrupts,
    resolve,
    run,
    streamed_text,
    texts,
    types,
)
from tests.conftest import histories, serve_gateway, until_quiet
from tests.copilotkit.driver import answer, approve, run_script, send, steps
from tests.copilotkit.driver import finished as ck_finished
from tests.effects import EffectLog
from tests.gateway.test_streaming import read_until
from tests.node_clients import run_node, streams_of
from tests.test_producers import until

HISTORY_LIMIT = 60
"""Threads continue as new after this many history events: a few runs each."""
ASK = "Send an email to ada@example.com saying hi"
ADA = {"to": "ada@example.com", "subject": "Hi", "body": "hi"}


@asynccontextmanager
async def served_agents(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor, modules: list[str]
) -> AsyncIterator[httpx.AsyncClient]:
    """A worker and a gateway serving the agents `modules` register, on a queue of their own.
    No workflow stays cached: every workflow task replays the thread from its history, as a
    restarted worker does, so each answer reaches a paused run rebuilt by a replay."""
    name = f"sdk-{uuid.uuid4().hex}"
    settings = Settings(
        data_dir=data_dir / name,
        task_queue=name,
        agent_modules=modules,
        thread_history_limit=HISTORY_LIMIT,
        worker_max_cached_workflows=0,
    )
    async with (
        build_worker(client, settings, executor),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield http


def replayer_of(modules: list[str]) -> Replayer:
    """A thread worker's replayer, with the agents `modules` register."""
    settings = Settings(agent_modules=modules)
    return Replayer(
        workflows=[], data_converter=DATA_CONVERTER, plugins=[ThreadWorkerPlugin(settings)]
    )


def emails(outbox: EffectLog, call_id: str) -> list[dict[str, Any]]:
    """The emails the `sendEmail` activity recorded in the store's outbox for the call."""
    return [e["args"] for e in outbox.effects("sendEmail") if e["key"] == call_id]


async def activity_runs(client: Client, thread_id: str, activity: str) -> int:
    """How often the thread scheduled `activity` (its history, every run of the thread)."""
    return sum(
        1
        for history in await histories(client, thread_id)
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
        and event.activity_task_scheduled_event_attributes.activity_type.name == activity
    )


def tool_results(events: list[dict[str, Any]]) -> dict[str, str]:
    return {e["toolCallId"]: e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"}


async def tanstack_approves(
    served: httpx.AsyncClient,
    client: Client,
    outbox: EffectLog,
    thread_id: str,
    tmp_path: Path,
    *,
    agent: str,
) -> None:
    """TanStack's `ChatClient` with the definitions `GET /agents/{agent}/tools.ts` writes (an
    approval without edits: not the published `sendEmail`'s, whose approval takes them): the
    agent's approval is a `tool-approval` item; `resolveInterrupt(true)` sends the email, once."""
    written = tmp_path / f"{agent}.ts"
    written.write_text((await served.get(f"/agents/{agent}/tools.ts")).text)
    job = {
        "url": f"{served.base_url}/agents/{agent}",
        "threadId": thread_id,
        "tools": [f"module:{written}"],
        "steps": [{"send": ASK}, {"decide": [{"index": 0, "approve": True}]}],
    }
    asked, done = (await run_node("tool_approval_chat.mjs", job))["steps"]
    for step in (asked, done):
        STREAMS.extend(request["events"] for request in step["requests"] if request["events"])
        assert (step["stepError"], step["error"], step["interruptErrors"]) == (None, None, [])
    [item] = asked["interrupts"]
    assert (item["kind"], item["canResolve"], item["reason"]) == (
        "tool-approval",
        True,
        "tool_call",
    )
    assert (item["toolName"], item["toolCallId"]) == ("sendEmail", item["wireToolCallId"])
    assert item["originalArgs"] == ADA
    [request] = done["requests"]
    assert request["body"]["resume"] == [
        {"interruptId": item["id"], "status": "resolved", "payload": {"approved": True}}
    ]
    assert done["interrupts"] == []
    assert emails(outbox, item["toolCallId"]) == [ADA]
    [content] = tool_results(done["events"]).values()
    assert json.loads(content) == {"sent": True, "to": ADA["to"], "subject": "Hi"}
    assert "Sent the email to ada@example.com." in "".join(
        e["delta"] for e in done["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"
    )
    assert await activity_runs(client, thread_id, "sendEmail") == 1


async def http_agent_approves(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, *, agent: str
) -> None:
    """AG-UI's `HttpAgent`: the run ends with the agent's interrupt in `pendingInterrupts`;
    `runAgent({resume})` approving it sends the email, once."""
    result = await run_node(
        "agui_agent.mjs",
        {
            "url": f"{served.base_url}/agents/{agent}",
            "threadId": thread_id,
            "steps": [{"send": ASK}, {"resolve": [{"index": 0, "payload": {"approved": True}}]}],
        },
    )
    asked, done = result["snapshots"]
    STREAMS.extend(streams_of(result["snapshots"]))
    assert asked["error"] is None and asked["outcome"]["type"] == "interrupt"
    [pending] = asked["pendingInterrupts"]
    assert (pending["reason"], pending["message"]) == (
        "tool_call",
        "Send an email to ada@example.com?",
    )
    call_id = pending["toolCallId"]
    assert done["error"] is None and done["runError"] is None
    assert done["outcome"]["type"] == "success" and done["pendingInterrupts"] == []
    assert emails(outbox, call_id) == [ADA]
    assert list(tool_results(done["events"])) == [call_id]
    assert done["messages"][-1]["content"] == "Sent the email to ada@example.com."
    assert await activity_runs(client, thread_id, "sendEmail") == 1


async def copilotkit_approves(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, *, agent: str
) -> None:
    """CopilotKit's real `useInterrupt` on a self-managed `HttpAgent` (the version CopilotKit
    pins): it resumes under the run id of the run that asked, and sends the answer as the
    call's tool message too; the agent takes the answer once, and the email is sent once."""
    job = {
        "agentUrl": f"{served.base_url}/agents/{agent}",
        "agentId": agent,
        "scenarios": [
            {"name": "approve", "threadId": thread_id, "steps": [send(ASK), answer(approve(0))]}
        ],
    }
    ask, done = steps((await run_script("use_interrupt.mjs", job))["results"]["approve"])
    [interrupt] = ask.interrupts
    assert interrupt["reason"] == "tool_call" and ask.cards
    post = done.post()
    assert post["body"]["runId"] == ask.post()["body"]["runId"]  # CopilotKit pins it
    assert post["body"]["resume"] == [
        {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    ]
    assert ck_finished(post)["outcome"] == {"type": "success"}
    assert done.interrupts == [] and done.cards == []
    assert any("Sent the email to ada@example.com." in said for said in done.said())
    assert emails(outbox, interrupt["toolCallId"]) == [ADA]
    assert await activity_runs(client, thread_id, "sendEmail") == 1


async def three_calls_are_one_batch(
    served: httpx.AsyncClient, outbox: EffectLog, thread_id: str, *, agent: str
) -> None:
    """`agent` asks about three `sendEmail` calls at once: a resume that answers one is refused
    (rule 3); one answering all three sends the approved two, and the model reads each."""
    asked = interrupts(await run(served, thread_id, agent=agent, text="three"))
    assert len(asked) == 3
    partial = await run(
        served, thread_id, agent=agent, resume=[resolve(asked[0], {"approved": True})]
    )
    assert partial[-1]["code"] == "PARTIAL_RESUME"
    answers = [
        resolve(asked[0], {"approved": True}),
        resolve(asked[1], {"approved": False}),
        resolve(asked[2], {"approved": True}),
    ]
    done = await run(served, thread_id, agent=agent, resume=answers)
    assert texts(done) == "sent, you rejected it, sent"
    sent = [bool(emails(outbox, each["toolCallId"])) for each in asked]
    assert sent == [True, False, True]


async def an_expiry_rejects_the_calls_between_runs(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, *, agent: str
) -> None:
    """`agent`'s approvals expire in a moment: the run goes on between runs with the call
    rejected, and an answer that comes later is refused."""
    [asked] = interrupts(await run(served, thread_id, agent=agent, text=ASK))
    said = "I did not send the email: nobody answered before it expired."
    await until(client, thread_id, lambda view: view.messages[-1].get("content") == said)
    late = await run(served, thread_id, agent=agent, resume=[resolve(asked, {"approved": True})])
    assert late[-1]["code"] == "INTERRUPT_EXPIRED"
    assert emails(outbox, asked["toolCallId"]) == []


async def the_conversation_crosses_continue_as_new(
    served: httpx.AsyncClient, client: Client, thread_id: str, *, agent: str
) -> None:
    """`agent` counts what it was told: the count goes on across the thread's continue-as-new."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    first_run = None
    for said_before in range(1, 30):
        done = await run(served, thread_id, agent=agent, text="hello")
        assert texts(done) == f"You said {said_before} things."
        run_id = (await handle.describe()).run_id
        first_run = first_run or run_id
        if run_id != first_run:
            break
    else:
        raise AssertionError("the thread never continued as new")
    done = await run(served, thread_id, agent=agent, text="again")
    assert texts(done) == f"You said {said_before + 1} things."


async def a_paused_run_crosses_continue_as_new(
    served: httpx.AsyncClient, client: Client, outbox: EffectLog, thread_id: str, *, agent: str
) -> None:
    """Asked, then the thread continues as new before the answer (its history is long): the
    paused run's state (the SDK's `RunState`, ADK's session) is carried, and the answer
    resumes it on the new run."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    await run(served, thread_id, agent=agent, text="hello")  # the thread begins
    for _ in range(12):
        before = (await handle.describe()).run_id
        [asked] = interrupts(await run(served, thread_id, agent=agent, text=ASK))
        # once the thread is done with the run that asked (its trail, its archive): it has
        # continued as new if its history had grown past the limit
        await until_quiet(client.get_workflow_handle(handle.id))
        crossed = (await handle.describe()).run_id != before
        yes = [resolve(asked, {"approved": True})]
        done = await run(served, thread_id, agent=agent, resume=yes)
        assert texts(done) == "Sent the email to ada@example.com."
        assert emails(outbox, asked["toolCallId"]) == [ADA]
        if crossed:
            return
    raise AssertionError("the thread never continued as new while a run was paused")


async def a_model_failing_for_good_ends_the_run_not_the_thread(
    served: httpx.AsyncClient, client: Client, thread_id: str, *, agent: str
) -> None:
    """`agent`'s provider refuses every request for good: the run ends `RUN_FAILED` (never the
    thread), and the thread takes the next message."""
    failed = await run(served, thread_id, agent=agent, text="hello")
    assert types(failed) == ["RUN_STARTED", "RUN_ERROR"] and failed[-1]["code"] == "RUN_FAILED"
    again = await run(served, thread_id, agent=agent, text="hello again")
    assert again[-1]["code"] == "RUN_FAILED"
    description = await client.get_workflow_handle(thread_workflow_id(thread_id)).describe()
    assert description.status is not None and description.status.name == "RUNNING"


async def the_example_asks_to_approve_send_email_for_two_days(
    served: httpx.AsyncClient,
    client: Client,
    outbox: EffectLog,
    thread_id: str,
    *,
    agent: str,
    replayer: Replayer,
) -> WorkflowHistory:
    """The example of `make run` served as `agent`: listed, without edits; its `sendEmail` call
    streamed and asked about for two days, bound to the call; approved, the email is sent once
    (a repeated resume sends nothing) and the model's answer streams; the thread replays on a
    worker that never saw it. Returns the thread's history."""
    listed = {agent["name"]: agent for agent in (await served.get("/agents")).json()}
    assert listed[agent]["url"] == f"/agents/{agent}"
    capabilities = (await served.get(f"/agents/{agent}/capabilities")).json()
    assert capabilities["humanInTheLoop"]["approveWithEdits"] is False

    events = await run(served, thread_id, agent=agent, text=ASK)
    [asked] = interrupts(events)
    assert (asked["reason"], asked["message"]) == ("tool_call", "Send an email to ada@example.com?")
    call_id = asked["toolCallId"]
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert (start["toolCallId"], start["toolCallName"]) == (call_id, "sendEmail")
    args = "".join(e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS")
    assert json.loads(args) == ADA
    assert "TOOL_CALL_RESULT" not in types(events)  # (ADK answers it meanwhile: not shown)
    expires = datetime.fromisoformat(asked["expiresAt"])
    assert (
        timedelta(days=2) - timedelta(minutes=5) < expires - datetime.now(UTC) <= timedelta(days=2)
    )
    assert "editedArgs" not in json.dumps(asked["responseSchema"])
    binding = asked["metadata"]["tanstack:interruptBinding"]
    assert (binding["kind"], binding["originalArgs"]) == ("tool-approval", ADA)
    assert emails(outbox, call_id) == []

    answer = [resolve(asked, {"approved": True})]
    done = await run(served, thread_id, agent=agent, resume=answer)
    assert finished(done)["outcome"] == {"type": "success"}
    [result] = [e for e in done if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == call_id
    assert json.loads(result["content"]) == {"sent": True, "to": "ada@example.com", "subject": "Hi"}
    assert "TOOL_CALL_START" not in types(done)
    assert streamed_text(done) == "Sent the email to ada@example.com."
    # the model's words came while it spoke (it takes 250 ms; batches go every 100 ms)
    assert len([e for e in done if e["type"] == "TEXT_MESSAGE_CONTENT"]) >= 2
    again = await run(served, thread_id, agent=agent, resume=answer)
    assert finished(again)["outcome"] == {"type": "success"}
    assert emails(outbox, call_id) == [ADA]
    assert await activity_runs(client, thread_id, "sendEmail") == 1  # sent once, not again

    # a worker that never saw the thread (one restarted) replays it to the same decisions
    history = await client.get_workflow_handle(thread_workflow_id(thread_id)).fetch_history()
    await replayer.replay_workflow(history)
    return history


async def a_killed_worker_resumes_the_agent(
    client: Client,
    tmp_path: Path,
    own_store: SecretStr,
    thread_id: str,
    *,
    agent: str,
    module: str,
    model_activity: str,
) -> None:
    """Two `ag-ui-temporal worker` processes serving `module`'s example `agent`: it asks, on the
    one that took the thread's first task; that one is SIGKILLed; the other, which never ran a
    task of the thread, takes the resume, rebuilds the paused run from the thread's history
    and goes on from it: the call is not asked again, the model (`model_activity`) is called
    once more (after the send), and the email is sent once, by that process's `sendEmail`
    activity."""
    asked, done = await approved_after_a_kill(
        client, tmp_path, own_store, thread_id, agent=agent, module=module, ask=ASK
    )
    assert "TOOL_CALL_START" not in types(done)
    assert texts(done) == "Sent the email to ada@example.com."
    stored = EffectLog(own_store.get_secret_value()).effects()
    assert stored == [{"key": asked["toolCallId"], "tool": "sendEmail", "args": ADA}]
    assert await activity_runs(client, thread_id, "sendEmail") == 1
    assert await activity_runs(client, thread_id, model_activity) == 2


async def stopped_once(
    served: httpx.AsyncClient,
    agent: str,
    body: dict[str, Any],
    seen: Callable[[Frame], bool],
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    """The run `body` POSTed to `agent`, stopped (`POST .../runs/{runId}/cancel`) once its
    stream has shown a frame that is `seen`: the stop's answer, and every event the run
    streamed, before and after it."""
    url = f"/agents/{agent}"
    stop = f"{url}/threads/{body['threadId']}/runs/{body['runId']}/cancel"
    async with asyncio.timeout(60), served.stream("POST", url, json=body) as response:
        stream = frames(response)
        before = await read_until(stream, seen)
        stopped = await served.post(stop)
        after = [frame.event async for frame in stream if frame.data is not None]
    return stopped, [frame.event for frame in before if frame.data is not None] + after
