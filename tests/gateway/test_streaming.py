"""Progressive streaming, SSE ids, re-attach, join and hydrate, against a real Temporal server.

The worker here runs a `sendEmail` that waits at a gate the test opens, so
"while the run is still going" is a state the test holds, not a race.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin
from temporalio.client import Client
from temporalio.worker import Replayer

from ag_ui_temporal.gateway import streaming as gateway_streaming
from ag_ui_temporal.settings import Settings
from ag_ui_temporal.temporal_client import DATA_CONVERTER
from ag_ui_temporal.workflows.contract import RUN_IDS
from ag_ui_temporal.workflows.thread.workflow import ThreadWorkflow
from tests.agui import Frame, frames, interrupts, parse_sse, resolve, run, run_body, texts
from tests.conftest import serve_gateway
from tests.gateway.conftest import Stack
from tests.node_clients import requires_node, run_node

EMAIL = "Send an email to ada@example.com saying hi"


async def paused_email(http: httpx.AsyncClient, thread_id: str) -> dict:
    [pending] = interrupts(await run(http, thread_id, text=EMAIL))
    return pending


async def read_until(stream: AsyncIterator[Frame], predicate) -> list[Frame]:
    seen = []
    async for frame in stream:
        seen.append(frame)
        if predicate(frame):
            return seen
    raise AssertionError(f"stream ended before the expected frame: {seen}")


def is_type(name: str):
    return lambda frame: frame.data is not None and frame.data["type"] == name


async def streams_back_to(http: httpx.AsyncClient, count: int) -> None:
    """Wait until the gateway follows `count` runs for clients (a client that left: none)."""
    while (await http.get("/healthz")).json()["streams"] != count:
        await asyncio.sleep(0.01)


async def test_events_arrive_while_the_run_goes_on(
    gated: httpx.AsyncClient, stack: Stack, thread_id: str
):
    pending = await paused_email(gated, thread_id)
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    async with gated.stream("POST", "/agents/assistant", json=body) as response:
        stream = frames(response)
        [started] = await read_until(stream, is_type("RUN_STARTED"))
        assert started.id is not None and int(started.id) >= 0
        # the tool is still waiting: this run has not ended, yet its first event is here
        assert pending["toolCallId"] not in [e["key"] for e in stack.outbox.effects()]
        stack.gate.set()
        rest = await read_until(stream, is_type("RUN_FINISHED"))
    assert rest[0].event["type"] == "TOOL_CALL_RESULT"
    ids = [int(f.id) for f in [started, *rest] if f.id is not None]
    assert ids == sorted(ids) and len(ids) == len(set(ids)) == len(rest) + 1


async def test_keepalive_comments_on_a_quiet_stream(
    gated: httpx.AsyncClient, stack: Stack, client: Client, thread_id: str
):
    pending = await paused_email(gated, thread_id)
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    pinging = stack.settings.model_copy(update={"sse_keepalive": timedelta(milliseconds=50)})
    async with (
        serve_gateway(pinging, client) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
        http.stream("POST", "/agents/assistant", json=body) as response,
    ):
        stream = frames(response)
        quiet = await read_until(stream, lambda frame: frame.comment is not None)
        assert quiet[-1].comment == "ping" and quiet[-1].data is None
        stack.gate.set()
        await read_until(stream, is_type("RUN_FINISHED"))


async def test_reattach_with_last_event_id(gated: httpx.AsyncClient, stack: Stack, thread_id: str):
    pending = await paused_email(gated, thread_id)
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    async with gated.stream("POST", "/agents/assistant", json=body) as response:
        [started] = await read_until(frames(response), is_type("RUN_STARTED"))
    assert started.id is not None
    await streams_back_to(gated, 0)  # the client left: nothing of it remains on the server

    stack.gate.set()
    headers = {"Last-Event-ID": started.id, "X-Run-Id": body["runId"]}
    async with gated.stream("POST", "/agents/assistant", json=body, headers=headers) as response:
        rest = [frame async for frame in frames(response)]
    assert [f.event["type"] for f in rest][:1] == ["TOOL_CALL_RESULT"]
    assert rest[-1].event["type"] == "RUN_FINISHED"
    assert all(f.id is not None and int(f.id) > int(started.id) for f in rest)
    assert [e["key"] for e in stack.outbox.effects()].count(pending["toolCallId"]) == 1

    # Re-attached after the end: the terminal event again, without an id, so the client finishes.
    headers["Last-Event-ID"] = rest[-1].id
    async with gated.stream("POST", "/agents/assistant", json=body, headers=headers) as response:
        tail = [frame async for frame in frames(response)]
    assert tail == [Frame(None, rest[-1].data)]


@pytest.mark.parametrize("by_run_id_alone", [False, True], ids=["with-threadId", "runId-alone"])
async def test_join_a_running_run(
    gated: httpx.AsyncClient, stack: Stack, client: Client, thread_id: str, by_run_id_alone: bool
):
    """A second client joins a run still going; TanStack joins with `?runId` only, and the
    run is then found by its id."""
    pending = await paused_email(gated, thread_id)
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    async with gated.stream("POST", "/agents/assistant", json=body) as original:
        original_stream = frames(original)
        first = await read_until(original_stream, is_type("RUN_STARTED"))
        params = {"runId": body["runId"], "offset": "-1"}
        if by_run_id_alone:
            while await gateway_streaming.find_thread(client, body["runId"]) is None:
                await asyncio.sleep(0.05)  # visibility catches up
        else:
            params["threadId"] = thread_id
        async with gated.stream("GET", "/agents/assistant", params=params) as joined:
            stream = frames(joined)
            assert await read_until(stream, is_type("RUN_STARTED")) == first
            stack.gate.set()
            joined_rest = await read_until(stream, is_type("RUN_FINISHED"))
        original_rest = [frame async for frame in original_stream]
    assert joined_rest == original_rest


async def test_only_runs_in_flight_are_indexed(
    gated: httpx.AsyncClient, stack: Stack, client: Client, thread_id: str
):
    """A run that ends in the workflow task that started it writes no search attribute:
    that visibility write was the largest server cost of a run. The inbox's runs do; an
    assistant run waits for its model activity (and an approved call for its tool)."""
    inbox_thread = f"{thread_id}-inbox"
    for _ in range(2):
        await run(gated, inbox_thread, agent="inbox", text="anything for me?")
    assert await indexings(client, inbox_thread) == 0  # both runs ended in their first task

    pending = await paused_email(gated, thread_id)  # its model ran in an activity
    assert await indexings(client, thread_id) == 1
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    async with gated.stream("POST", "/agents/assistant", json=body) as response:
        stream = frames(response)
        await read_until(stream, is_type("RUN_STARTED"))
        assert await indexings(client, thread_id) == 2  # it waits for its tool
        stack.gate.set()
        await read_until(stream, is_type("RUN_FINISHED"))

    # the same decisions on replay (a worker that lost the thread from its cache)
    replayer = Replayer(
        workflows=[ThreadWorkflow],
        data_converter=DATA_CONVERTER,
        plugins=[PydanticAIPlugin()],  # the agents are registered: this process runs a worker
    )
    for thread in (inbox_thread, thread_id):
        history = await gateway_streaming.thread_handle(client, thread).fetch_history()
        await replayer.replay_workflow(history)


async def indexings(client: Client, thread_id: str) -> int:
    """How many times the thread wrote `AguiRunIds` (patches write another attribute)."""
    history = await gateway_streaming.thread_handle(client, thread_id).fetch_history()
    return sum(
        1
        for event in history.events
        if event.HasField("upsert_workflow_search_attributes_event_attributes")
        and RUN_IDS.name
        in event.upsert_workflow_search_attributes_event_attributes.search_attributes.indexed_fields
    )


def _frame(raw: str) -> Frame:
    from tests.agui import parse_frame

    return parse_frame(raw)


HOSTILE = "Reimburse 2400 EUR for the Berlin\u2028offsite\u2029second line\x85third line"
"""An expense whose title holds the three line breaks JSON leaves unescaped."""
HOSTILE_TITLE = HOSTILE.split(" for ", 1)[1]


def split_as_lines(raw: str) -> list[dict[str, Any]]:
    """The events of an SSE body read by a client that splits lines as Python does (at
    U+0085, U+2028 and U+2029 too): every line must still be a whole field."""
    events = []
    for line in raw.splitlines():
        assert line == "" or line.startswith(("id: ", "data: ", ": ")), repr(line[:80])
        if line.startswith("data: "):
            events.append(json.loads(line.removeprefix("data: ")))
    return events


async def test_line_separators_in_a_title_stay_inside_their_data_line(
    gated: httpx.AsyncClient, thread_id: str
):
    """A run's stream, and a join of it, read line by line: the title comes back whole, as
    the same JSON value (escaped on the wire, never raw)."""
    body = run_body(thread_id, HOSTILE)
    ran = await gated.post("/agents/assistant", json=body)
    params = {"runId": body["runId"], "threadId": thread_id, "offset": "-1"}
    joined = await gated.get("/agents/assistant", params=params)
    for response in (ran, joined):
        assert response.status_code == 200, response.text
        assert not {"\u0085", "\u2028", "\u2029"} & set(response.text)
        events = split_as_lines(response.text)
        assert events == parse_sse(response.text)
        [asked] = interrupts(events)
        assert asked["message"] == f"Approve submitExpense: 2400 EUR for {HOSTILE_TITLE}?"
        [args] = [json.loads(e["delta"]) for e in events if e["type"] == "TOOL_CALL_ARGS"]
        assert args["description"] == HOSTILE_TITLE
        [snapshot] = [e for e in events if e["type"] == "MESSAGES_SNAPSHOT"]
        assert snapshot["messages"][-2]["content"] == HOSTILE
    assert split_as_lines(joined.text) == split_as_lines(ran.text)


@requires_node
async def test_tanstack_reads_the_title_as_it_was_written(stack: Stack, thread_id: str):
    """TanStack's `ChatClient` reads the escaped line breaks back as the characters sent."""
    job = {"url": f"{stack.url}/agents/assistant", "threadId": thread_id}
    result = await run_node("tanstack_chat.mjs", {**job, "steps": [{"send": HOSTILE}]})
    [snapshot] = result["snapshots"]
    assert snapshot["stepError"] is None and snapshot["error"] is None
    said = [m for m in snapshot["messages"] if m["role"] == "user"]
    assert [p["content"] for m in said for p in m["parts"] if p["type"] == "text"] == [HOSTILE]
    [item] = snapshot["interrupts"]
    assert item["message"] == f"Approve submitExpense: 2400 EUR for {HOSTILE_TITLE}?"
    [request] = [r for r in snapshot["requests"] if r.get("events")]
    [finished] = [e for e in request["events"] if e["type"] == "RUN_FINISHED"]
    assert finished["outcome"]["interrupts"][0]["message"] == item["message"]


async def test_join_unknown_run_is_404(gated: httpx.AsyncClient, thread_id: str):
    for params in ({"runId": "no-such-run", "offset": "-1"}, {"runId": "x", "threadId": thread_id}):
        response = await gated.get("/agents/assistant", params=params)
        assert response.status_code == 404
        assert "no run" in response.json()["detail"]


async def test_join_on_another_agents_url_is_404(http: httpx.AsyncClient, thread_id: str):
    """As hydrate: a run is joined on its own thread's agent URL only; elsewhere it is
    answered like an unknown run (nothing tells that it exists)."""
    run_id = (await run(http, thread_id, text="hello"))[0]["runId"]
    params = {"runId": run_id, "threadId": thread_id, "offset": "-1"}
    own = await http.get("/agents/assistant", params=params)
    assert own.status_code == 200 and "RUN_FINISHED" in own.text
    other = await http.get("/agents/inbox", params=params)
    unknown = await http.get("/agents/inbox", params={**params, "runId": "no-such-run"})
    assert (other.status_code, unknown.status_code) == (404, 404)
    assert other.json() == {"detail": f"no run {run_id!r} here"}
    assert "RUN_STARTED" not in other.text


BAD_EVENT_IDS = [b"abc", "²".encode("latin-1"), "¹".encode(), "٣".encode(), b"--5", b"1" * 5000]
"""Not offsets: `²` and `٣` pass `str.isdigit` (and `int` takes `٣`), `--5` passed a strip of
minus signs, 5000 digits are beyond what `int` parses."""


@pytest.mark.parametrize("last_event_id", BAD_EVENT_IDS, ids=lambda v: repr(v[:8]))
async def test_bad_last_event_id_is_400(
    gated: httpx.AsyncClient, thread_id: str, last_event_id: bytes
):
    headers = {b"Last-Event-ID": last_event_id}
    posted = await gated.post("/agents/assistant", json=run_body(thread_id, "hi"), headers=headers)
    params = {"runId": "r", "threadId": thread_id}
    joined = await gated.get("/agents/assistant", params=params, headers=headers)
    for response in (posted, joined):
        assert response.status_code == 400, response.text
        assert "Last-Event-ID" in response.json()["detail"]
    assert (await gated.get("/agents/assistant", params={"threadId": thread_id})).json() == {
        "messages": [], "activeRun": None, "interrupts": None, "page": {"truncated": False}
    }  # fmt: skip


async def test_good_last_event_ids_are_offsets(gated: httpx.AsyncClient, thread_id: str):
    first = await run(gated, thread_id, text="hello")
    body = {"threadId": thread_id, "runId": first[0]["runId"], "messages": []}
    for last_event_id in ("-1", "0", "999999999999999999"):
        headers = {"Last-Event-ID": last_event_id}
        response = await gated.post("/agents/assistant", json=body, headers=headers)
        assert response.status_code == 200 and "RUN_FINISHED" in response.text


UNSPLICEABLE = ['x"y', "x\x00y", "x'y", "x\\y", "a b", "r" * 100, "\U0001f600"]
"""Run ids no visibility query is made for: quotes, a backslash, a NUL (the dev server's
SQLite visibility failed on it, retried for seconds), a space, past the run id bound."""


async def test_a_join_by_an_odd_run_id_is_404_at_once(
    settings: Settings, client: Client, monkeypatch: pytest.MonkeyPatch
):
    counted = Client(client.service_client, namespace=client.namespace)
    looked_up: list[str] = []

    def list_workflows(query: str, **kwargs: Any) -> Any:
        looked_up.append(query)
        return Client.list_workflows(counted, query, **kwargs)

    monkeypatch.setattr(counted, "list_workflows", list_workflows)
    async with (
        serve_gateway(settings, counted) as url,
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        for run_id in UNSPLICEABLE:
            response = await http.get("/agents/assistant", params={"runId": run_id})
            assert response.status_code == 404, (run_id, response.text)
            assert response.json()["detail"].startswith("no run ")
        assert looked_up == []  # never spliced into a query, never retried
        response = await http.get("/agents/assistant", params={"runId": "no-such-run"})
        assert response.status_code == 404 and len(looked_up) == 1  # an id that may be a run's


async def test_hydrate_a_paused_thread(gated: httpx.AsyncClient, thread_id: str):
    first = await run(gated, thread_id, text=EMAIL)
    [pending] = interrupts(first)
    hydrated = (await gated.get("/agents/assistant", params={"threadId": thread_id})).json()
    assert hydrated["activeRun"] is None
    assert hydrated["interrupts"]["runId"] == first[0]["runId"]
    assert hydrated["interrupts"]["pending"] == [pending]  # bound exactly as first delivered
    user, assistant = hydrated["messages"]
    assert user["parts"] == [{"type": "text", "content": EMAIL}]
    [call] = assistant["parts"]
    assert (call["type"], call["name"], call["id"]) == (
        "tool-call",
        "sendEmail",
        pending["toolCallId"],
    )
    assert hydrated["page"] == {"truncated": False}


async def test_hydrate_shows_the_active_run(gated: httpx.AsyncClient, stack: Stack, thread_id: str):
    pending = await paused_email(gated, thread_id)
    body = run_body(thread_id, resume=[resolve(pending, {"approved": True})])
    async with gated.stream("POST", "/agents/assistant", json=body) as response:
        stream = frames(response)
        await read_until(stream, is_type("RUN_STARTED"))
        hydrated = (await gated.get("/agents/assistant", params={"threadId": thread_id})).json()
        assert hydrated["activeRun"] == {"runId": body["runId"]}
        assert hydrated["interrupts"] is None
        stack.gate.set()
        await read_until(stream, is_type("RUN_FINISHED"))
    after = (await gated.get("/agents/assistant", params={"threadId": thread_id})).json()
    assert after["activeRun"] is None
    tool_call = after["messages"][1]["parts"][0]
    assert tool_call["state"] == "complete" and tool_call["output"]["sent"] is True


async def test_hydrate_unknown_thread_is_empty(gated: httpx.AsyncClient):
    response = await gated.get("/agents/assistant", params={"threadId": "never-seen"})
    assert response.json() == {
        "messages": [],
        "activeRun": None,
        "interrupts": None,
        "page": {"truncated": False},
    }


async def test_hydrate_pages_back(gated: httpx.AsyncClient, thread_id: str):
    for n in range(3):
        await run(gated, thread_id, text=f"hello {n}")
    page = (await gated.get("/agents/assistant", params={"threadId": thread_id, "limit": 4})).json()
    assert len(page["messages"]) == 4 and page["page"]["truncated"] is True
    older = (
        await gated.get(
            "/agents/assistant",
            params={"threadId": thread_id, "limit": 4, "before": page["page"]["cursor"]},
        )
    ).json()
    assert [m["id"] for m in older["messages"]] + [m["id"] for m in page["messages"]] == [
        m["id"]
        for m in (await gated.get("/agents/assistant", params={"threadId": thread_id})).json()[
            "messages"
        ]
    ]
    assert older["page"] == {"truncated": False}


async def test_two_gateway_replicas(
    gated: httpx.AsyncClient, stack: Stack, client: Client, thread_id: str
):
    """No sticky sessions: a run started on one replica is joined, hydrated, resumed on another."""
    stack.gate.set()
    first = await run(gated, thread_id, text=EMAIL)
    async with (
        serve_gateway(stack.settings, client) as other_url,
        httpx.AsyncClient(base_url=other_url, timeout=30) as other,
    ):
        params = {"runId": first[0]["runId"], "offset": "-1", "threadId": thread_id}
        joined = await other.get("/agents/assistant", params=params)
        assert [_frame(raw).data for raw in joined.text.split("\n\n")[:-1]] == first
        hydrated = (await other.get("/agents/assistant", params={"threadId": thread_id})).json()
        [pending] = hydrated["interrupts"]["pending"]
        done = await run(other, thread_id, resume=[resolve(pending, {"approved": True})])
    assert "Sent the email to ada@example.com" in texts(done)


async def test_cors_allows_the_resume_headers(settings: Settings, client: Client):
    from ag_ui_temporal.gateway.main import create_app

    app = create_app(settings.model_copy(update={"cors_origins": ["http://app.test"]}), client)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        response = await http.options(
            "/agents/assistant",
            headers={
                "Origin": "http://app.test",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,last-event-id,x-run-id",
            },
        )
    assert response.status_code == 200
    allowed = response.headers["access-control-allow-headers"].lower()
    assert "last-event-id" in allowed and "x-run-id" in allowed
