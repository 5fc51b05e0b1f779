"""Stopping a run (`POST /agents/{agent}/threads/{threadId}/runs/{runId}/cancel`) through the
real gateway and a real Temporal server: a recorded provider stream served slowly on
loopback is cut half-way, the run and every join of it end `RUN_CANCELLED`, the streamed
text stays in the transcript marked stopped, and the thread answers the next message. Only
whoever sent the run (or an admin) can stop it; a finished run is not changed. A stop sent
at the same moment as its run stops it: the run waits behind another one, or its update
reaches the thread after the stop."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    StartWorkflowUpdateInput,
    StartWorkflowUpdateWithStartInput,
    WorkflowUpdateHandle,
)

from ag_ui_temporal.agents import ThreadDeps, register, registered, thread_capabilities
from ag_ui_temporal.agents.models import resolve_model
from ag_ui_temporal.demo.activities import ToolActivities
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.store import Outbox, open_engine
from ag_ui_temporal.worker import build_worker
from ag_ui_temporal.workflows.contract import (
    CANCEL_RUN_UPDATE,
    RUN_EVENTS_QUERY,
    RUN_UPDATE,
    STOPPED_METADATA_KEY,
    THREAD_WORKFLOW,
    RunEventsPage,
    RunEventsQuery,
    thread_input,
    thread_memo,
    thread_workflow_id,
)
from ag_ui_temporal.workflows.thread.tool_calls import ToolCallInput, ToolCallOutput
from tests.agui import (
    STREAMS,
    Frame,
    frames,
    interrupts,
    parse_sse,
    resolve,
    run,
    run_body,
    texts,
    thread_state,
    types,
)
from tests.conftest import serve_gateway
from tests.gateway.test_streaming import is_type, read_until
from tests.gateway.threads import until_admitted
from tests.llm.openai_replay import TEXT_REPLY, OpenAIReplay, serve

OPENAI = "t-stop-openai"
SCRIPTED = "t-stop"
GATE = asyncio.Event()
STOPPED = {STOPPED_METADATA_KEY: True}
ANON, ROOT = "anonymous", "root"
"""The admins (`THREAD_ADMINS`) of this module's gateway."""


async def _scripted(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    prompt = str(getattr(messages[-1].parts[-1], "content", ""))
    if "gated" in prompt:
        yield "Half of it, "
        await GATE.wait()  # the test holds the model mid-answer
        yield "then the rest."
    else:
        yield "Done."


class SlowEmail(ToolActivities):
    """The demo's tools, `sendEmail` taking longer than anyone waits."""

    def __init__(self, outbox: Outbox) -> None:
        super().__init__(outbox)
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    @activity.defn(name="sendEmail")
    async def send_email(self, call: ToolCallInput) -> ToolCallOutput:
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()  # the activity heard the stop (a heartbeat's answer)
            raise
        return await super().send_email(call)


@dataclass
class Stack:
    http: httpx.AsyncClient
    replay: OpenAIReplay
    email: SlowEmail
    settings: Settings


@pytest.fixture(scope="module")
async def stack(
    client: Client, data_dir: Path, executor: ThreadPoolExecutor
) -> AsyncIterator[Stack]:
    replay, server = serve()
    if registered(OPENAI) is None:
        provider = Settings(llm_model="openai-chat:gpt-4o-mini", openai_base_url=replay.base_url)
        scripted = FunctionModel(stream_function=_scripted)
        for name, model in ((OPENAI, resolve_model(provider)), (SCRIPTED, scripted)):
            capabilities = thread_capabilities()
            register(Agent(model, name=name, deps_type=ThreadDeps, capabilities=capabilities))
    name = f"stop-{uuid.uuid4().hex[:8]}"
    settings = Settings(data_dir=data_dir / name, task_queue=name, thread_admins=[ANON, ROOT])
    email = SlowEmail(Outbox(open_engine(settings.store_url)))
    async with (
        build_worker(client, settings, executor, email.activities()),
        serve_gateway(settings, client) as url,
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        yield Stack(http, replay, email, settings)
    server.shutdown()
    server.server_close()


def cancel_url(agent: str, thread_id: str, run_id: str) -> str:
    return f"/agents/{agent}/threads/{thread_id}/runs/{run_id}/cancel"


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(30):
        while not condition():
            await asyncio.sleep(0.02)


async def rest(stream: AsyncIterator[Frame]) -> list[dict[str, Any]]:
    return [frame.event async for frame in stream if frame.data is not None]


async def test_a_stop_ends_the_run_and_its_join_and_the_thread_goes_on(
    stack: Stack, client: Client, thread_id: str
) -> None:
    stack.replay.event_gap = 0.6  # 12 events: ~7 s, far longer than the stop takes
    asked = len(stack.replay.requests)
    body = run_body(thread_id, "What is the capital of the UK?")
    url = f"/agents/{OPENAI}"
    try:
        async with stack.http.stream("POST", url, json=body) as response:
            stream = frames(response)
            before = await read_until(stream, is_type("TEXT_MESSAGE_CONTENT"))
            params = {"runId": body["runId"], "threadId": thread_id, "offset": "-1"}
            async with stack.http.stream("GET", url, params=params) as joined:
                joining = frames(joined)
                joined_before = await read_until(joining, is_type("TEXT_MESSAGE_CONTENT"))
                stopped = await stack.http.post(cancel_url(OPENAI, thread_id, body["runId"]))
                assert stopped.status_code == 200, stopped.text
                joined_after = await rest(joining)
            after = await rest(stream)
        [request] = stack.replay.requests[asked:]
        await until(lambda: request.sent_all is not None)  # the provider still paced
    finally:
        stack.replay.event_gap = 0.0
    assert stopped.json() == {"threadId": thread_id, "runId": body["runId"], "status": "cancelled"}
    before_events = [frame.event for frame in before if frame.data is not None]
    events = before_events + after
    join = [frame.event for frame in joined_before if frame.data is not None] + joined_after
    STREAMS.extend([events, join])
    # the run and its join end alike: the text as far as it was shown, ended and marked stopped
    for seen in (events, join):
        assert seen[-1]["type"] == "RUN_ERROR" and seen[-1]["code"] == "RUN_CANCELLED", seen[-1]
        assert types(seen).count("RUN_ERROR") == 1 and "RUN_FINISHED" not in types(seen)
        assert seen[-2] == {**seen[-2], "type": "TEXT_MESSAGE_END", "metadata": STOPPED}
    shown = texts(events)
    assert texts(join) == shown and shown and TEXT_REPLY.startswith(shown) and shown != TEXT_REPLY
    # and so does a re-attach (the same POST with `Last-Event-ID`)
    headers = {"Last-Event-ID": [frame.id for frame in before if frame.id][-1]}
    async with stack.http.stream("POST", url, json=body, headers=headers) as response:
        reattached = await rest(frames(response))
    assert reattached[-1] == events[-1] and texts(reattached) == shown[len(texts(before_events)) :]
    # the model request was cancelled: the provider's stream was closed before its end
    assert request.sent_all is False
    # the transcript keeps what was shown, marked; a hydrate shows it so
    state = await thread_state(client, thread_id)
    assert state.messages[-1] == {**state.messages[-1], "content": shown, "metadata": STOPPED}
    hydrated = (await stack.http.get(url, params={"threadId": thread_id})).json()
    assert hydrated["activeRun"] is None and hydrated["interrupts"] is None
    said = hydrated["messages"][-1]
    assert said["metadata"] == STOPPED and said["parts"] == [{"type": "text", "content": shown}]
    # stopping it again changes nothing: 409, and the thread records nothing
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    length = (await handle.describe()).raw_description.workflow_execution_info.history_length
    again = await stack.http.post(cancel_url(OPENAI, thread_id, body["runId"]))
    assert again.status_code == 409 and "has already ended" in again.json()["detail"]
    after_again = (await handle.describe()).raw_description.workflow_execution_info.history_length
    assert after_again == length
    # the thread takes the next message; the model hears what was shown of the stopped reply
    reply = await run(stack.http, thread_id, agent=OPENAI, text="And of France?")
    assert types(reply)[-1] == "RUN_FINISHED" and texts(reply) == TEXT_REPLY
    [_, next_request] = stack.replay.requests[asked:]  # no other model request was made
    assert {"role": "assistant", "content": shown} in next_request.body["messages"]


async def test_a_stop_cancels_approved_tools_and_closes_their_calls(
    stack: Stack, client: Client, thread_id: str
) -> None:
    """The demo assistant's three `sendEmail` calls, approved, stopped while they run."""
    text = "Send emails to ada@example.com, bob@example.com and cy@example.com"
    asked = interrupts(await run(stack.http, thread_id, text=text))
    body = run_body(thread_id, resume=[resolve(i, {"approved": True}) for i in asked])
    async with stack.http.stream("POST", "/agents/assistant", json=body) as response:
        stream = frames(response)
        before = await read_until(stream, is_type("RUN_STARTED"))
        await asyncio.wait_for(stack.email.started.wait(), 30)
        stopped = await stack.http.post(cancel_url("assistant", thread_id, body["runId"]))
        after = await rest(stream)
    assert stopped.status_code == 200, stopped.text
    events = [frame.event for frame in before if frame.data is not None] + after
    STREAMS.append(events)
    assert types(events) == ["RUN_STARTED", *["TOOL_CALL_RESULT"] * 3, "RUN_ERROR"]
    assert events[-1]["code"] == "RUN_CANCELLED"
    results = events[1:-1]
    assert {r["toolCallId"] for r in results} == {i["toolCallId"] for i in asked}
    assert all("RunCancelled" in r["content"] for r in results)  # none returned
    await asyncio.wait_for(stack.email.cancelled.wait(), 30)  # the activity heard the stop
    state = await thread_state(client, thread_id)
    assert [m["role"] for m in state.messages[-3:]] == ["tool"] * 3
    assert {i.status for i in state.interrupts} == {"resolved"}  # the approvals stand
    reply = await run(stack.http, thread_id, text="thanks")
    assert types(reply)[-1] == "RUN_FINISHED"


async def test_a_continuation_is_stopped_by_the_run_id_it_was_sent_under(
    stack: Stack, client: Client, thread_id: str
) -> None:
    """CopilotKit resumes under the asking run's id: a stop that names it stops the
    continuation going on (the asking run ended long ago: not `409`)."""
    stack.email.started.clear()
    asked = await run(stack.http, thread_id, text="Send an email to ada@example.com saying hi")
    [interrupt] = interrupts(asked)
    run_id = asked[0]["runId"]
    body = run_body(thread_id, runId=run_id, resume=[resolve(interrupt, {"approved": True})])
    async with stack.http.stream("POST", "/agents/assistant", json=body) as response:
        stream = frames(response)
        before = await read_until(stream, is_type("RUN_STARTED"))
        await asyncio.wait_for(stack.email.started.wait(), 30)
        stopped = await stack.http.post(cancel_url("assistant", thread_id, run_id))
        after = await rest(stream)
    assert stopped.status_code == 200, stopped.text
    assert stopped.json() == {"threadId": thread_id, "runId": run_id, "status": "cancelled"}
    events = [frame.event for frame in before if frame.data is not None] + after
    STREAMS.append(events)
    assert types(events) == ["RUN_STARTED", "TOOL_CALL_RESULT", "RUN_ERROR"]
    assert events[0]["runId"] == run_id and events[-1]["code"] == "RUN_CANCELLED"
    logged = await _run_events(client, thread_id, run_id)  # a join's: the continuation's
    assert logged[0] == events[0] and logged[-1] == events[-1]
    state = await thread_state(client, thread_id)
    assert [r.run_id for r in state.runs] == [run_id, run_id] and state.active_run is None
    again = await stack.http.post(cancel_url("assistant", thread_id, run_id))
    assert again.status_code == 409  # both runs under the id have ended


async def test_only_whoever_may_act_on_the_thread_stops_its_run(
    stack: Stack, thread_id: str
) -> None:
    GATE.clear()
    body = run_body(thread_id, "gated")
    nowhere = f"t-{uuid.uuid4().hex[:12]}"  # a thread nobody started
    stranger = {"X-Principal": "mallory"}
    async with stack.http.stream("POST", f"/agents/{SCRIPTED}", json=body) as response:
        stream = frames(response)
        before = await read_until(stream, is_type("TEXT_MESSAGE_CONTENT"))
        theirs = await stack.http.post(
            cancel_url(SCRIPTED, thread_id, body["runId"]), headers=stranger
        )
        unknown = await stack.http.post(cancel_url(SCRIPTED, nowhere, body["runId"]))
        no_run = await stack.http.post(cancel_url(SCRIPTED, thread_id, "run-nobody-sent"))
        GATE.set()
        after = await rest(stream)
    events = [frame.event for frame in before if frame.data is not None] + after
    STREAMS.append(events)
    # another's run is answered exactly as a run that is not there
    assert theirs.status_code == unknown.status_code == no_run.status_code == 404
    assert theirs.json() == unknown.json() == {"detail": f"no run {body['runId']!r} here"}
    assert no_run.json() == {"detail": "no run 'run-nobody-sent' here"}
    assert events[-1]["type"] == "RUN_FINISHED"  # the stranger's stop changed nothing


async def test_a_stop_racing_the_runs_end_ends_it_once(
    stack: Stack, client: Client, thread_id: str
) -> None:
    GATE.clear()
    body = run_body(thread_id, "gated")
    async with stack.http.stream("POST", f"/agents/{SCRIPTED}", json=body) as response:
        stream = frames(response)
        before = await read_until(stream, is_type("TEXT_MESSAGE_CONTENT"))
        GATE.set()  # the model finishes while the stop is on its way
        stopped = await stack.http.post(cancel_url(SCRIPTED, thread_id, body["runId"]))
        after = await rest(stream)
    events = [frame.event for frame in before if frame.data is not None] + after
    STREAMS.append(events)
    # whichever came first, the run ended once, as the stop's answer says
    assert stopped.status_code in (200, 409), stopped.text
    logged = await _run_events(client, thread_id, body["runId"])
    ends = [e["type"] for e in logged if e["type"] in ("RUN_FINISHED", "RUN_ERROR")]
    assert ends == [events[-1]["type"]]
    assert (events[-1].get("code") == "RUN_CANCELLED") == (stopped.status_code == 200)
    state = await thread_state(client, thread_id)
    assert sum(m["role"] == "assistant" for m in state.messages) == 1  # one reply, not two


async def _run_events(client: Client, thread_id: str, run_id: str) -> list[dict[str, Any]]:
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    page = await handle.query(
        RUN_EVENTS_QUERY, RunEventsQuery(run_id=run_id), result_type=RunEventsPage
    )
    return page.events


# -- a stop sent at the same moment as its run -------------------------------------------------


async def test_a_stop_of_a_run_waiting_behind_another_stops_it(
    stack: Stack, client: Client, thread_id: str
) -> None:
    """The second run's update is accepted while the first holds the thread, not in its log
    yet: a stop naming it is taken, and the run begins stopped. The first goes on."""
    GATE.clear()
    url = f"/agents/{SCRIPTED}"
    first, second = run_body(thread_id, "gated"), run_body(thread_id, "and then?")
    async with stack.http.stream("POST", url, json=first) as response:
        stream = frames(response)
        before = await read_until(stream, is_type("TEXT_MESSAGE_CONTENT"))
        waiting = asyncio.create_task(stack.http.post(url, json=second))
        await until_accepted(client, thread_id, RUN_UPDATE, 2)  # waits for the run lock
        stopping = asyncio.create_task(
            stack.http.post(cancel_url(SCRIPTED, thread_id, second["runId"]))
        )
        await until_accepted(client, thread_id, CANCEL_RUN_UPDATE, 1)  # taken, still waiting
        GATE.set()
        after = await rest(stream)
        stopped, ran = await stopping, await waiting
    assert stopped.status_code == 200, stopped.text
    assert stopped.json() == {
        "threadId": thread_id,
        "runId": second["runId"],
        "status": "cancelled",
    }
    events = [frame.event for frame in before if frame.data is not None] + after
    assert events[-1]["type"] == "RUN_FINISHED" and texts(events) == "Half of it, then the rest."
    stopped_run = parse_sse(ran.text)
    STREAMS.extend([events, stopped_run])
    assert types(stopped_run) == ["RUN_STARTED", "RUN_ERROR"]
    assert stopped_run[-1]["code"] == "RUN_CANCELLED"
    state = await thread_state(client, thread_id)
    said = [(m["role"], m.get("content")) for m in state.messages]
    assert said[-2:] == [("assistant", "Half of it, then the rest."), ("user", "and then?")]
    reply = await run(stack.http, thread_id, agent=SCRIPTED, text="go on")
    assert types(reply)[-1] == "RUN_FINISHED" and texts(reply) == "Done."


async def test_a_stop_that_reaches_the_thread_before_its_run_stops_it(
    stack: Stack, client: Client, data_dir: Path, executor: ThreadPoolExecutor, thread_id: str
) -> None:
    """No worker runs while the stop and then the run are sent: the thread takes the stop
    first and refuses it (no such run yet); the gateway finds the run's update admitted and
    sends the stop again, which the thread takes after the run. (`stack`: the agents.)"""
    name = f"stop-early-{uuid.uuid4().hex[:8]}"
    settings = Settings(data_dir=data_dir / name, task_queue=name)
    sent = UpdateIds()
    url = f"/agents/{SCRIPTED}"
    async with (
        serve_gateway(settings, recording(client, sent)) as gateway,
        httpx.AsyncClient(base_url=gateway, timeout=60) as http,
    ):
        async with build_worker(client, settings, executor):
            await run(http, thread_id, agent=SCRIPTED, text="hello")  # the thread exists
        GATE.clear()
        body = run_body(thread_id, "gated")
        handle = client.get_workflow_handle(thread_workflow_id(thread_id))
        stopping = asyncio.create_task(http.post(cancel_url(SCRIPTED, thread_id, body["runId"])))
        await until_admitted(client, handle, await sent.next(CANCEL_RUN_UPDATE))
        running = asyncio.create_task(http.post(url, json=body))
        await until_admitted(client, handle, await sent.next(RUN_UPDATE))
        async with build_worker(client, settings, executor):
            stopped = await stopping
            if stopped.status_code != 200:
                GATE.set()  # the run was not stopped: it goes on to its end
            events = parse_sse((await running).text)
    STREAMS.append(events)
    assert stopped.status_code == 200, stopped.text
    assert sent.names.count(CANCEL_RUN_UPDATE) == 2  # refused, then sent again
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUN_CANCELLED"


class UpdateIds(Interceptor):
    """Names the updates a client sends (each gets an id here) and tells them as sent."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.sent: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Naming(next, self)

    def named(self, name: str, update_id: str | None) -> str:
        update_id = update_id or f"{name}-{uuid.uuid4().hex}"
        self.names.append(name)
        self.sent.put_nowait((name, update_id))
        return update_id

    async def next(self, name: str) -> str:
        """The id of the next update named `name` sent (others are passed over)."""
        async with asyncio.timeout(30):
            while True:
                sent, update_id = await self.sent.get()
                if sent == name:
                    return update_id


class _Naming(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, ids: UpdateIds) -> None:
        super().__init__(next)
        self.ids = ids

    async def start_workflow_update(self, input: StartWorkflowUpdateInput) -> WorkflowUpdateHandle:
        update_id = self.ids.named(input.update, input.update_id)
        return await super().start_workflow_update(replace(input, update_id=update_id))

    async def start_update_with_start_workflow(
        self, input: StartWorkflowUpdateWithStartInput
    ) -> WorkflowUpdateHandle:
        update = input.update_workflow_input
        update.update_id = self.ids.named(update.update, update.update_id)
        return await super().start_update_with_start_workflow(input)


def recording(client: Client, ids: UpdateIds) -> Client:
    return Client(
        client.service_client,
        namespace=client.namespace,
        data_converter=client.data_converter,
        interceptors=[ids],
    )


async def until_accepted(client: Client, thread_id: str, update: str, count: int) -> None:
    """Until the thread has accepted `count` updates named `update` (its history says so)."""
    handle = client.get_workflow_handle(thread_workflow_id(thread_id))
    accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED

    async def seen() -> int:
        names = [
            event.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
            async for event in handle.fetch_history_events()
            if event.event_type == accepted
        ]
        return names.count(update)

    async with asyncio.timeout(30):
        while await seen() < count:
            await asyncio.sleep(0.05)


# -- who may stop a run in a group's thread ---------------------------------------------------


async def test_in_a_groups_thread_only_its_sender_or_an_admin_stops_a_run(
    stack: Stack, client: Client, thread_id: str
) -> None:
    """Members see each other's runs; another member's stop is a 403 (the thread and the run
    are no secret to them), a stranger's the 404 of a run that is not there."""
    team = f"team-{uuid.uuid4().hex[:6]}"
    start = thread_input(stack.settings, SCRIPTED, thread_id, f"group:{team}")
    await client.start_workflow(
        THREAD_WORKFLOW,
        start,
        id=thread_workflow_id(thread_id),
        task_queue=stack.settings.task_queue,
        memo=thread_memo(start.owner, start.agent),
    )
    alice, bob, root = ({"X-Principal": who, "X-Principal-Groups": team}
                        for who in ("alice", "bob", ROOT))  # fmt: skip
    stranger = {"X-Principal": "mallory"}
    url = f"/agents/{SCRIPTED}"
    for stopper in (root, alice):  # an admin of the group, then the sender
        GATE.clear()
        body = run_body(thread_id, "gated")
        stop = cancel_url(SCRIPTED, thread_id, body["runId"])
        async with stack.http.stream("POST", url, json=body, headers=alice) as response:
            stream = frames(response)
            before = await read_until(stream, is_type("TEXT_MESSAGE_CONTENT"))
            theirs = await stack.http.post(stop, headers=bob)
            unseen = await stack.http.post(stop, headers=stranger)
            stopped = await stack.http.post(stop, headers=stopper)
            after = await rest(stream)
        events = [frame.event for frame in before if frame.data is not None] + after
        STREAMS.append(events)
        assert theirs.status_code == 403, theirs.text
        assert theirs.json() == {
            "detail": f"run {body['runId']!r} was sent by another; only its sender or an admin "
            "may stop it"
        }
        assert unseen.status_code == 404 and unseen.json() == {
            "detail": f"no run {body['runId']!r} here"
        }
        assert stopped.status_code == 200, stopped.text
        assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "RUN_CANCELLED"
    GATE.set()
